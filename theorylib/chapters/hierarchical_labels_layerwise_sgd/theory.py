"""The theory of chapter 'hierarchical-labels-layerwise-sgd': derived formulas, predictions, wrong theories.

The binary parity tree on ``x ~ Unif{±1}^d``, ``d = 2^r``; a quadratic block reads the ``m`` slots of one
level through its ``p = 1 + m + m(m-1)/2`` degree-<=2 monomials.

* **Theorem A** (exact SGD second-moment law): ``E||e_{t+1}||^2 = rho E||e_t||^2`` with
  ``rho = 1 - 2 eta + eta^2 (1 + (p-1)/B)`` (:func:`sgd_contraction`); the best step
  :func:`optimal_step`, the first-passage time :func:`steps_to_mse` and its real version
  :func:`crossing_time`; the C2 prediction :func:`rate_slope`.
* **Theorem B** (composition with rounding): the per-block budget :func:`stack_steps`.
* **Theorem C** (no signal without hints): :func:`top_feature_correlation` (0) and
  :func:`no_hint_mse` (``2 - (1 - 1/p)^t``, Parseval and the no-hint recursion).
* **Theorem D** (the layerwise closure, chain versus tree): :func:`chain_labels_known` (one label per
  block: depth d - 1) and :func:`tree_labels_known` (one level per block: depth log2 d).
* **Lemma (colliding characters) and C5c, C5d**: the same counts at depth 15, where the model computes each
  block's fit through Walsh characters instead of enumerating the cube.
* **Proposition (SGD with colliding features)**: :func:`chain_block_characters` (the monomials of the
  chain's whole-stream block as characters) and :func:`collision_sgd_mse` (the exact first- and
  second-moment recursion of batch-1 SGD, hence the mean test error, C7).
* **C4, C6** (the residual network and the random-feature learner, not proved here):
  :func:`layerwise_top_accuracy` (the hierarchy is learned) and :func:`baseline_top_accuracy` (chance
  without hints).

The model never imports this module, and no measurement reads it: the C1 checkpoints come from pilot runs,
the C2 runs are simulated until they have crossed, and the C3 stack's budget, the algorithm of Thm B
(:func:`stack_steps` here), is fixed in the model and checked against this module by the tests.

Each named wrong theory ``wrong_...`` has the signature of the function it replaces.
Pure functions, no random numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from theorylib.core.rates import ols_slope
from theorylib.core.validation import check_int, check_positive, check_positive_int, check_real

# ---------------------------------------------------------------------------------------------
# Theorem A: the exact SGD second-moment law
# ---------------------------------------------------------------------------------------------


def n_features(m: int) -> int:
    """p = 1 + m + m(m-1)/2: the number of degree-<=2 monomials of m slots (the p of Thm A)."""
    m = check_positive_int("m", m)
    return 1 + m + m * (m - 1) // 2


def _check_sgd(eta: float, B: int, p: int) -> tuple[float, int, int]:
    return (check_positive("step size eta", eta), check_positive_int("batch size B", B),
            check_positive_int("feature count p", p))


def sgd_second_moment(B: int, p: int) -> float:
    """c = 1 + (p - 1)/B, with E[C_hat^2] = c I for C_hat = (1/B) sum_b phi_b phi_b^T."""
    _, B, p = _check_sgd(1.0, B, p)
    return 1.0 + (p - 1) / B


def sgd_contraction(eta: float, B: int, p: int) -> float:
    """rho(eta, B, p) = 1 - 2 eta + eta^2 (1 + (p-1)/B): E||e_{t+1}||^2 = rho E||e_t||^2 (Thm A)."""
    eta, B, p = _check_sgd(eta, B, p)
    return 1.0 - 2.0 * eta + eta**2 * sgd_second_moment(B, p)


def optimal_step(B: int, p: int) -> float:
    """eta* = 1/c = B/(B + p - 1), the minimiser of rho, with rho* = (p-1)/(B+p-1)."""
    return 1.0 / sgd_second_moment(B, p)


def steps_to_mse(eps: float, eta: float, B: int, p: int, e0: float = 1.0) -> int:
    """T(eps) = min{t >= 0 : e0 rho^t <= eps} = ceil(log(e0/eps) / log(1/rho)) (0 if e0 <= eps)."""
    rho = sgd_contraction(eta, B, p)
    eps, e0 = check_positive("target eps", eps), check_positive("initial error e0", e0)
    if rho >= 1:
        raise ValueError(f"eta = {eta!r} is unstable at B={B}, p={p} (rho = {rho:.4g} >= 1; need eta < 2/c)")
    if e0 <= eps:
        return 0
    if rho <= 0:  # exact projection (p = 1, B = 1, eta = 1): one step
        return 1
    t = int(np.ceil(np.log(e0 / eps) / np.log(1.0 / rho)))
    # guard the ceil against rounding: the smallest t with e0 rho^t <= eps
    while t > 0 and e0 * rho ** (t - 1) <= eps:
        t -= 1
    while e0 * rho**t > eps:
        t += 1
    return t


def crossing_time(eps: float, eta: float, B: int, p: int, e0: float = 1.0) -> float:
    """The real t with e0 rho^t = eps, log(e0/eps)/log(1/rho) (T(eps) before the ceiling)."""
    rho = sgd_contraction(eta, B, p)
    if not 0 < rho < 1:
        raise ValueError(f"need 0 < rho < 1 for a crossing time, got rho = {rho:.4g}")
    if not (0 < eps < e0):
        raise ValueError(f"need 0 < eps < e0, got eps = {eps!r}, e0 = {e0!r}")
    return float(np.log(e0 / eps) / np.log(1.0 / rho))


def wrong_gd_law(eta: float, B: int, p: int) -> float:
    """Wrong theory: the deterministic full-gradient law ||e_t||^2 = (1 - eta)^{2t} (noise ignored)."""
    return (1.0 - eta) ** 2


def wrong_batch_one_law(eta: float, B: int, p: int) -> float:
    """Wrong theory: the B = 1 law used at every B (the 1/B in c = 1 + (p-1)/B forgotten)."""
    return sgd_contraction(eta, 1, p)


# ---- C2: the slope of log T(eps) on log p ------------------------------------------------------------


def crossing_times(m_list: Sequence[int], eps: float) -> np.ndarray:
    """The exact crossing times log(1/eps)/log(1/rho) at B = 1, eta = 1/p, for each m of m_list."""
    return np.array([crossing_time(eps, 1.0 / p, 1, p) for p in (n_features(m) for m in m_list)])


def wrong_crossing_times_continuous(m_list: Sequence[int], eps: float) -> np.ndarray:
    """Wrong theory: the continuous-time count p log(1/eps), i.e. log(1/rho) = -log(1 - 1/p) replaced by its
    first-order term 1/p (too many steps by about log(1/eps)/2)."""
    return np.array([n_features(m) * np.log(1.0 / check_positive("eps", eps)) for m in m_list])


def rate_slope(m_list: Sequence[int], eps: float) -> float:
    """The C2 prediction: the OLS slope of log T(eps) on log p for the exact crossing times (not exactly
    1: T lies between (p-1) log(1/eps) and p log(1/eps))."""
    p = np.array([n_features(m) for m in m_list], dtype=float)
    return float(ols_slope(np.log(p), np.log(crossing_times(m_list, eps)))[0])


def wrong_rate_slope_quadratic(m_list: Sequence[int], eps: float) -> float:
    """Wrong theory: the cost of one level is quadratic in p (slope 2)."""
    return 2.0


def wrong_rate_slope_sqrt(m_list: Sequence[int], eps: float) -> float:
    """Wrong theory: the cost of one level grows as sqrt(p) (slope 1/2)."""
    return 0.5


# ---------------------------------------------------------------------------------------------
# Theorem B: composition with rounding
# ---------------------------------------------------------------------------------------------


def _depth(d: int) -> int:
    d = check_int("d", d, low=2)
    if d & (d - 1):
        raise ValueError(f"d = {d!r} must be a power of 2 and >= 2 (the parity tree pairs coordinates)")
    return d.bit_length() - 1


def stack_steps(d: int, delta: float, B: int = 1) -> list[int]:
    """Per-block budgets T_i(delta/(d-1)) at eta_i* (Thm B), block i reading m_i = d/2^(i-1) slots:
    then E_W P(top wrong) <= delta."""
    r = _depth(d)
    delta = check_real("delta", delta, 0.0, 1.0, open_low=True, open_high=True)
    ps = [n_features(d >> (i - 1)) for i in range(1, r + 1)]
    return [steps_to_mse(delta / (d - 1), optimal_step(B, p), B, p) for p in ps]


def wrong_stack_steps_no_constant(d: int, delta: float, B: int = 1) -> list[int]:
    """Wrong theory: the budget computed with p - 1 features, the constant monomial of the block forgotten
    (a contraction 1 - 1/(p-1) per projection step: about log((d-1)/delta) steps too few in every block)."""
    r = _depth(d)
    delta = check_real("delta", delta, 0.0, 1.0, open_low=True, open_high=True)
    ps = [n_features(d >> (i - 1)) - 1 for i in range(1, r + 1)]
    return [steps_to_mse(delta / (d - 1), optimal_step(B, p), B, p) for p in ps]


# ---------------------------------------------------------------------------------------------
# Theorem C: no signal for degree-<=2 learners without hints
# ---------------------------------------------------------------------------------------------


def top_feature_correlation(d: int) -> int:
    """max_A |sum_x chi_[d](x) phi_A(x)| over the degree-<=2 features: 0 for d >= 4 (Thm C)."""
    if _depth(d) < 2:
        raise ValueError(f"d = {d} must be >= 4: the top label of d = 2 is itself a quadratic feature")
    return 0


def wrong_top_correlation_degree2(d: int) -> int:
    """Wrong theory: the top label has a degree-2 part, as a level-1 label does (correlation 2^d)."""
    _depth(d)
    return 2**d


def no_hint_mse(d: int, steps: int) -> float:
    """Thm C with the no-hint recursion: online SGD of the quadratic readout of x on the top label from w = 0,
    B = 1, eta = 1/p, has E||w_t||^2 = 1 - (1 - 1/p)^t, so its expected exact MSE (Parseval) is
    E MSE_t = 1 + E||w_t||^2 = 2 - (1 - 1/p)^t."""
    p = n_features(d)
    return 2.0 - (1.0 - 1.0 / p) ** check_int("steps", steps, low=0)


def wrong_no_hint_mse_learned(d: int, steps: int) -> float:
    """Wrong theory: a quadratic block learns the top label directly at the rate of Thm A (B = 1, eta = 1/p),
    error rho^steps."""
    p = n_features(d)
    return sgd_contraction(1.0 / p, 1, p) ** check_int("steps", steps, low=0)


def wrong_no_hint_mse_linear(d: int, steps: int) -> float:
    """Wrong theory: the noise SGD picks up without signal accumulates without bound, E||w_t||^2 = t/p
    (the recursion without its contraction term -||w_t||^2/p)."""
    return 1.0 + check_int("steps", steps, low=0) / n_features(d)


# ---------------------------------------------------------------------------------------------
# Theorem D: the layerwise closure of a parity hierarchy (chain versus tree)
# ---------------------------------------------------------------------------------------------


def chain_labels_known(d: int, k: int) -> int:
    """Thm D for the chain l_j = l_{j-1} x_{pi(j+1)} on d hidden leaves (d - 1 labels): after k blocks of
    the whole-stream quadratic learner exactly the labels 1..min(k, d-1) are known, the others read 0."""
    d = check_int("d", d, low=2)
    return min(check_int("k", k, low=0), d - 1)


def wrong_chain_labels_doubling(d: int, k: int) -> int:
    """Wrong theory: the chain is learned in logarithmic depth, like the tree, each block doubling what is
    known (2^k - 1 labels after k blocks, as if products of two learned labels gave new ones)."""
    d = check_int("d", d, low=2)
    return min(2 ** check_int("k", k, low=0) - 1, d - 1)


def tree_labels_known(d: int, k: int) -> int:
    """Thm D for the binary parity tree on d = 2^r hidden leaves (d - 1 labels, level 1 first): after k
    blocks exactly the labels of levels 1..min(k, r) are known, d - d/2^min(k, r) of them."""
    r = _depth(d)
    return d - (d >> min(check_int("k", k, low=0), r))


def wrong_tree_one_label_per_block(d: int, k: int) -> int:
    """Wrong theory: the tree is learned one label per block, as the chain is (depth d - 1 for the top)."""
    return chain_labels_known(d, k)


# ---------------------------------------------------------------------------------------------
# Proposition: batch-1 SGD on a whole-stream block with colliding characters (C7)
# ---------------------------------------------------------------------------------------------


def chain_block_characters(leaves: Sequence[int], n_in: int, level: int) -> tuple[np.ndarray, int]:
    """The chain's block at ``level`` k reads the stream (x_1..x_N, l_1..l_{k-1}): its monomials 1, h_a,
    h_a h_b (a < b) are the characters chi_A with the bitmasks A returned (A = 0: the constant), and its
    target l_k is chi_T with T = S_k = {pi(1), ..., pi(k+1)}."""
    lv = [int(a) for a in leaves]
    S, m = [], 1 << lv[0]
    for a in lv[1:]:
        m |= 1 << a
        S.append(m)
    k = check_int("level", level, low=1, high=len(S))
    ent = [1 << a for a in range(check_positive_int("n_in", n_in))] + S[: k - 1]
    masks = [0, *ent] + [ent[a] ^ ent[b] for a, b in combinations(range(len(ent)), 2)]
    return np.array(masks, dtype=np.int64), S[k - 1]


def collision_sgd_mse(masks: Sequence[int], target: int, eta: float, checkpoints: Sequence[int]) -> np.ndarray:
    """The proposition's exact law: E MSE_t = tr(G S_t) - 2 g^T M_t + 1 at each checkpoint t, for batch-1 SGD
    from w = 0 on the features chi_{A_a} (masks, repetitions allowed) with target chi_T, where
    M_{t+1} = M_t - eta (G M_t - g) and
    S_{t+1} = S_t - eta (G S_t + S_t G) + eta^2 (F(S_t) + G) + eta (J_t + J_t^T), J_t = M_t g^T - eta K(M_t),
    G_ab = 1[A_a = A_b], g_a = 1[A_a = T], F(S)_ab = sum over A_c ^ A_d = A_a ^ A_b of S_cd,
    K(M)_ab = sum over A_c = T ^ A_a ^ A_b of M_c."""
    A = np.asarray(masks, dtype=np.int64)
    eta = check_positive("step size eta", eta)
    ts = [check_int("checkpoint", t, low=0) for t in checkpoints]
    p = A.size
    G = (A[:, None] == A[None, :]).astype(float)
    g = (A == target).astype(float)
    D = A[:, None] ^ A[None, :]
    dcls = np.unique(D, return_inverse=True)[1].reshape(p, p)
    chars, cls = np.unique(A, return_inverse=True)
    TD = target ^ D
    pos = np.minimum(np.searchsorted(chars, TD), chars.size - 1)
    hit = chars[pos] == TD
    M, S = np.zeros(p), np.zeros((p, p))
    out = {}
    for t in range(max(ts) + 1):
        out[t] = float(np.sum(G * S) - 2.0 * g @ M + 1.0)
        FS = np.bincount(dcls.ravel(), weights=S.ravel())[dcls]
        KM = np.where(hit, np.bincount(cls, weights=M, minlength=chars.size)[pos], 0.0)
        J = np.outer(M, g) - eta * KM
        S = S - eta * (G @ S + S @ G) + eta**2 * (FS + G) + eta * (J + J.T)
        M = M - eta * (G @ M - g)
    return np.array([out[t] for t in ts])


def wrong_collision_sgd_mse_orthonormal(masks: Sequence[int], target: int, eta: float,
                                        checkpoints: Sequence[int]) -> np.ndarray:
    """Wrong theory: Thm A at B = 1 applied as if the p monomials were distinct characters with the target
    among them, E MSE_t = rho^t, rho = 1 - 2 eta + eta^2 p (the collisions ignored)."""
    rho = sgd_contraction(eta, 1, len(masks))
    return np.array([rho ** check_int("checkpoint", t, low=0) for t in checkpoints])


def wrong_collision_sgd_mse_wick(masks: Sequence[int], target: int, eta: float,
                                 checkpoints: Sequence[int]) -> np.ndarray:
    """Wrong theory: the proposition's recursion with the Gaussian (Wick/Isserlis) fourth moments
    E[phi_a phi_b phi_c phi_d] = G_ab G_cd + G_ac G_bd + G_ad G_bc in place of 1[A_a ^ A_b ^ A_c ^ A_d = 0]
    (also with the target as the fourth factor): F(S) = G tr(G S) + 2 G S G, K(M) = G (g^T M) + (G M) g^T
    + g (G M)^T, and E[phi phi^T y^2] = G + 2 g g^T."""
    A = np.asarray(masks, dtype=np.int64)
    G = (A[:, None] == A[None, :]).astype(float)
    g = (A == target).astype(float)
    ts = [check_int("checkpoint", t, low=0) for t in checkpoints]
    M, S = np.zeros(A.size), np.zeros((A.size, A.size))
    out = {}
    for t in range(max(ts) + 1):
        out[t] = float(np.sum(G * S) - 2.0 * g @ M + 1.0)
        GM = G @ M
        FS = G * np.sum(G * S) + 2.0 * G @ S @ G
        J = np.outer(M, g) - eta * (G * (g @ M) + np.outer(GM, g) + np.outer(g, GM))
        S = S - eta * (G @ S + S @ G) + eta**2 * (FS + G + 2.0 * np.outer(g, g)) + eta * (J + J.T)
        M = M - eta * (G @ M - g)
    return np.array([out[t] for t in ts])


# ---------------------------------------------------------------------------------------------
# C4: the residual network (an observation: nothing is proved here for the ReLU net)
# ---------------------------------------------------------------------------------------------


def layerwise_top_accuracy() -> float:
    """The paper's guarantee, taken as the prediction: layerwise SGD with hints learns the hierarchy, so the
    top-label accuracy tends to 1 (for this ReLU net an observation, not a theorem of the chapter)."""
    return 1.0


def wrong_layerwise_chance() -> float:
    """Wrong theory: deep hierarchies are not learnable layerwise (the top label stays at chance, 1/2)."""
    return 0.5


def baseline_top_accuracy() -> float:
    """Without hints the top label is uncorrelated with what the network can find: accuracy 1/2 (chance)."""
    return 0.5


def wrong_baseline_discovers_hierarchy() -> float:
    """Wrong theory: end-to-end SGD discovers the hierarchy from the top label alone (accuracy 1, as layerwise)."""
    return layerwise_top_accuracy()

