"""The model of chapter 'hierarchical-labels-layerwise-sgd': the parity tree, quadratic features, the stack.

The instance is the binary parity tree on ``x ~ Unif{±1}^d``, ``d = 2^r``: level 0 holds the inputs and
level ``i`` holds the ``n_i = d / 2^i`` labels ``l^(i)_j = l^(i-1)_{2j} l^(i-1)_{2j+1}`` (0-based), so the
single level-``r`` label is the full parity ``chi_[d](x)``.

* **Cube and features.** :func:`enumerate_cube`, :func:`parity_tree_labels`, :func:`quad_features`
  (the degree-<=2 monomials ``(1, z_a, z_a z_b)`` of a ±1 vector).
* **The stack and the no-hint learner** (C3): a teacher-forced stack of quadratic readouts
  (:func:`train_hinted_stack`) trained for Thm B's budget (:func:`stack_budget`), its rounded prediction
  on the whole cube (:func:`predict_stack`), and the no-hint quadratic learner
  (:func:`train_no_hint_quadratic`), all evaluated exactly; :func:`separation_experiment`.

SGD on one level (C1, C2) is in :mod:`.model_sgd`, the residual network of C4 in :mod:`.model_net`.
Never imports ``theory``. Everything random takes an explicit ``rng: np.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from theorylib.core.validation import check_int, check_positive, check_positive_int, check_power_of_two, check_real

MAX_ENUM_DIM = 20

# ---------------------------------------------------------------------------------------------
# The cube, the parity tree, quadratic features
# ---------------------------------------------------------------------------------------------


def tree_depth(d: int, name: str = "d") -> int:
    """log2(d) for a power of two d >= 2 (the parity tree pairs coordinates), else ValueError."""
    try:
        return check_power_of_two(name, d, low=2).bit_length() - 1
    except ValueError:
        raise ValueError(f"{name} = {d!r} must be a power of 2 and >= 2 (the parity tree pairs coordinates)") from None


def check_pm1(Z: np.ndarray, name: str = "Z") -> np.ndarray:
    """A 2-D array (samples x coordinates) with entries in {-1, +1}."""
    Z = np.asarray(Z)
    if Z.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (samples x coordinates), got shape {Z.shape}")
    if Z.size and not np.all((Z == 1) | (Z == -1)):
        raise ValueError(f"{name} must have entries in {{-1, +1}}")
    return Z


def enumerate_cube(d: int) -> np.ndarray:
    """All 2^d points of {±1}^d as an int8 array of shape (2^d, d) (guard: 1 <= d <= 20)."""
    try:
        d = check_int("d", d, low=1, high=MAX_ENUM_DIM)
    except ValueError:
        raise ValueError(f"d = {d!r} must be an integer in [1, {MAX_ENUM_DIM}] to enumerate the cube") from None
    codes = np.arange(2**d, dtype=np.int64)[:, None]
    bits = (codes >> np.arange(d, dtype=np.int64)) & 1
    return (1 - 2 * bits).astype(np.int8)


def random_signs(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Uniform ±1 entries (float64)."""
    return 2.0 * rng.integers(0, 2, size=shape) - 1.0


def parity_tree_labels(X: np.ndarray, r: int | None = None) -> list[np.ndarray]:
    """Levels 0..r of the binary parity tree: ``[X, l^(1), ..., l^(r)]``.

    Level i has d / 2^i columns, ``l^(i)_j = l^(i-1)_{2j} l^(i-1)_{2j+1}``; the last level is the
    single column ``chi_[d](x) = prod_a x_a``. ``r`` (optional) must equal log2(d).
    """
    X = check_pm1(X, "X")
    rr = tree_depth(X.shape[1], "d (the number of columns of X)")
    if r is not None and r != rr:
        raise ValueError(f"r = {r!r} does not match d = {X.shape[1]} = 2^{rr}")
    levels = [X]
    cur = X
    for _ in range(rr):
        cur = cur[:, 0::2] * cur[:, 1::2]
        levels.append(cur)
    return levels


def label_levels(d: int) -> np.ndarray:
    """The level (1..r) of each of the d - 1 label slots, ordered level 1 first."""
    r = tree_depth(d)
    return np.concatenate([np.full(d >> i, i) for i in range(1, r + 1)])


def all_labels(X: np.ndarray) -> np.ndarray:
    """The d - 1 labels of levels 1..r side by side (level 1 first), shape (n, d - 1)."""
    return np.concatenate(parity_tree_labels(X)[1:], axis=1)


def n_quad_features(m: int) -> int:
    """The number of columns of :func:`quad_features` of m variables, 1 + m + m(m-1)/2."""
    m = check_positive_int("m", m)
    return 1 + m + m * (m - 1) // 2


def pair_index(m: int, a: int, b: int) -> int:
    """Column of ``z_a z_b`` (a < b) in :func:`quad_features` of m variables."""
    if not 0 <= a < b < m:
        raise ValueError(f"need 0 <= a < b < m, got a={a}, b={b}, m={m}")
    return 1 + m + a * m - a * (a + 1) // 2 + (b - a - 1)


def quad_features(Z: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """phi(z) = (1, z_a, z_a z_b (a < b, lexicographic)) for each row z in {±1}^m; shape (n, p)."""
    Z = check_pm1(Z)
    n, m = Z.shape
    if m < 1:
        raise ValueError("Z needs at least one column")
    a, b = np.triu_indices(m, k=1)
    Zf = Z.astype(dtype, copy=False)
    out = np.empty((n, n_quad_features(m)), dtype=dtype)
    out[:, 0] = 1
    out[:, 1 : m + 1] = Zf
    out[:, m + 1 :] = Zf[:, a] * Zf[:, b]
    return out


def round_pm1(v: np.ndarray) -> np.ndarray:
    """sign with ties mapped to +1 (np.sign(0) = 0 would count as neither label)."""
    return np.where(np.asarray(v) >= 0, 1, -1).astype(np.int8)


def check_sgd(eta: float, B: int) -> tuple[float, int]:
    """A step size > 0 and a batch size >= 1."""
    return check_positive("step size eta", eta), check_positive_int("batch size B", B)


def projection_step(p: int) -> float:
    """1/||phi||^2 = 1/p: the normalised step at B = 1, which makes each SGD step a projection."""
    return 1.0 / check_positive_int("p", p)


# ---------------------------------------------------------------------------------------------
# The teacher-forced quadratic stack and the no-hint learner (C3)
# ---------------------------------------------------------------------------------------------


def stack_shapes(r: int) -> list[tuple[int, int, int]]:
    """(m_i, p_i, n_i) for blocks i = 1..r of the parity tree on d = 2^r inputs."""
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
        raise ValueError(f"depth r = {r!r} must be an integer >= 1")
    d = 2**r
    return [(d >> (i - 1), n_quad_features(d >> (i - 1)), d >> i) for i in range(1, r + 1)]


def stack_targets(m: int) -> np.ndarray:
    """Feature columns of the m/2 targets z_{2j} z_{2j+1} of a block reading m slots."""
    return np.array([pair_index(m, 2 * j, 2 * j + 1) for j in range(m // 2)])


def stack_budget(d: int, delta: float) -> list[int]:
    """The per-block step counts of the C3 stack: T_i = the first t with (1 - 1/p_i)^t <= delta/(d-1).

    This is the budget T_i(delta/(d-1)) that Thm B prescribes at B = 1, eta_i = 1/p_i, where one projection
    step shrinks E||e||^2 by the factor 1 - 1/p_i. It is the algorithm whose output C3 examines, fixed in
    advance (C3d tests the theory's budget against measured first passages, and the tests check this one
    against the theory's ``stack_steps``)."""
    r = tree_depth(d)
    delta = check_real("delta", delta, 0.0, 1.0, open_low=True, open_high=True)
    target = delta / (d - 1)
    out = []
    for _, p, _ in stack_shapes(r):
        shrink = 1.0 - 1.0 / p
        t = 0 if shrink <= 0 else int(np.ceil(np.log(target) / np.log(shrink)))
        while t > 0 and shrink ** (t - 1) <= target:  # the smallest such t, whatever the rounding of the logs
            t -= 1
        while shrink**t > target:
            t += 1
        out.append(t)
    return out


def train_hinted_stack(r: int, steps: Sequence[int], etas: Sequence[float], B: int,
                       rng: np.random.Generator) -> list[np.ndarray]:
    """Teacher-forced SGD for each block of the stack: block i reads the true level-(i-1) labels
    (iid uniform ±1, so drawn directly) and fits its n_i children by online SGD on the squared loss,
    ``steps[i]`` steps at rate ``etas[i]``. Returns the readouts W_i of shape (p_i, n_i), from W = 0."""
    shapes = stack_shapes(r)
    steps_l = [check_int("steps", s, low=0) for s in steps]
    etas_l = [check_positive("eta", e) for e in etas]
    B = check_positive_int("batch size B", B)
    if len(steps_l) != r or len(etas_l) != r:
        raise ValueError(f"need r = {r} step counts and step sizes, got {len(steps_l)} and {len(etas_l)}")
    Ws = []
    for (m, p, n), T, e in zip(shapes, steps_l, etas_l, strict=True):
        cols = stack_targets(m)
        W = np.zeros((p, n))
        for _ in range(T):
            Phi = quad_features(random_signs((B, m), rng))
            W -= (e / B) * Phi.T @ (Phi @ W - Phi[:, cols])
        Ws.append(W)
    return Ws


def stack_mse(Ws: Sequence[np.ndarray]) -> np.ndarray:
    """Exact clean-input test MSE of every readout: ||W_i[:, j] - e_target||^2 (the features of one level
    are orthonormal, a fact the tests check by enumeration)."""
    out = []
    for W in Ws:
        p, n = W.shape
        m = int(round((np.sqrt(8 * p - 7) - 1) / 2))
        E = W.copy()
        E[stack_targets(m), np.arange(n)] -= 1.0
        out.append(np.einsum("pn,pn->n", E, E))
    return np.concatenate(out)


def predict_stack(X: np.ndarray, Ws: Sequence[np.ndarray], rounding: bool = True,
                  chunk: int = 16384) -> list[np.ndarray]:
    """Run the stack on inputs X: block i reads the (rounded) level-(i-1) stream. Returns the r levels.
    With ``rounding=False`` the raw readout values of the clean (teacher-forced) inputs are returned."""
    X = check_pm1(X, "X")
    r = tree_depth(X.shape[1], "d")
    if len(Ws) != r:
        raise ValueError(f"need {r} readouts for d = {X.shape[1]}, got {len(Ws)}")
    outs: list[list[np.ndarray]] = [[] for _ in range(r)]
    for s in range(0, X.shape[0], chunk):
        Xc = X[s : s + chunk]
        clean = parity_tree_labels(Xc)
        z = Xc
        for i, W in enumerate(Ws):
            v = quad_features(z if rounding else clean[i]) @ W
            z = round_pm1(v)
            outs[i].append(z if rounding else v)
    return [np.concatenate(o) for o in outs]


def exact_top_error(Ws: Sequence[np.ndarray], d: int) -> float:
    """P_x(rounded stack's top label != chi_[d](x)), exactly, by enumerating {±1}^d."""
    X = enumerate_cube(d)
    top = predict_stack(X, Ws)[-1][:, 0]
    return float(np.mean(top != parity_tree_labels(X)[-1][:, 0]))


def exact_sign_errors(Ws: Sequence[np.ndarray], d: int) -> np.ndarray:
    """beta_ij: each readout's sign-error rate on clean inputs, exactly over {±1}^d (levels concatenated)."""
    X = enumerate_cube(d)
    levels = parity_tree_labels(X)
    raw = predict_stack(X, Ws, rounding=False)
    return np.concatenate([np.mean(round_pm1(v) != levels[i + 1], axis=0) for i, v in enumerate(raw)])


def max_top_correlation(d: int, level: int | None = None) -> int:
    """max_j |sum_x l(x) phi_j(x)| over the quadratic features of x (integers, exact), for the label of
    the given level (default: the top, chi_[d])."""
    X = enumerate_cube(d)
    levels = parity_tree_labels(X)
    lv = len(levels) - 1 if level is None else level
    if not 0 <= lv < len(levels):
        raise ValueError(f"level = {level!r} must lie in [0, {len(levels) - 1}]")
    Phi = quad_features(X, dtype=np.int64)
    return int(np.max(np.abs(levels[lv][:, 0].astype(np.int64) @ Phi)))


def train_no_hint_quadratic(d: int, steps: int, eta: float, B: int, rng: np.random.Generator) -> np.ndarray:
    """Online SGD of a quadratic readout of x on the top label chi_[d](x) (no hints), from w = 0."""
    tree_depth(d)
    p = n_quad_features(d)
    eta, B = check_sgd(eta, B)
    w = np.zeros(p)
    for _ in range(check_int("steps", steps, low=0)):
        X = random_signs((B, d), rng)
        Phi = quad_features(X)
        w -= (eta / B) * Phi.T @ (Phi @ w - np.prod(X, axis=1))
    return w


def exact_no_hint_mse(w: np.ndarray, d: int) -> float:
    """E_x (w^T phi(x) - chi_[d](x))^2, exactly, by enumerating {±1}^d."""
    X = enumerate_cube(d)
    Phi = quad_features(X)
    w = np.asarray(w, dtype=float)
    if w.shape != (Phi.shape[1],):
        raise ValueError(f"w must have shape ({Phi.shape[1]},), got {w.shape}")
    return float(np.mean((Phi @ w - parity_tree_labels(X)[-1][:, 0]) ** 2))


def no_hint_checkpoints(total_steps: int) -> tuple[int, ...]:
    """The C3b checkpoints: total/64, total/16, total/4 and total steps (at least 1, distinct), fractions of
    the hinted stack's total budget, so they are fixed before the no-hint learner runs."""
    total = check_positive_int("total_steps", total_steps)
    return tuple(sorted({max(1, total // k) for k in (64, 16, 4, 1)}))


@dataclass(frozen=True)
class NoHintStudy:
    """C3b data: R independent no-hint runs, the exact test MSE of each at each checkpoint."""

    d: int
    checkpoints: tuple[int, ...]
    mse: np.ndarray  # (R, len(checkpoints))

    @property
    def mean(self) -> np.ndarray:
        return self.mse.mean(axis=0)

    @property
    def se(self) -> np.ndarray:
        return self.mse.std(axis=0, ddof=1) / np.sqrt(self.mse.shape[0])


def no_hint_study(d: int, checkpoints: Sequence[int], R: int, rng: np.random.Generator) -> NoHintStudy:
    """R independent runs of :func:`train_no_hint_quadratic` (B = 1, eta = 1/p, from w = 0), batched; the exact
    MSE of run r at step t is 1 + ||w_t||^2 because the features are orthonormal under the uniform law and
    orthogonal to the top label (checked against :func:`exact_no_hint_mse` by enumeration in the tests)."""
    tree_depth(d)
    R = check_positive_int("R", R)
    cps = [check_int("checkpoint", t, low=1) for t in checkpoints]
    if cps != sorted(set(cps)):
        raise ValueError(f"checkpoints = {checkpoints!r} must be strictly increasing")
    eta = projection_step(n_quad_features(d))
    W = np.zeros((R, n_quad_features(d)))
    out = np.empty((R, len(cps)))
    k = 0
    for t in range(1, cps[-1] + 1):
        X = random_signs((R, d), rng)
        Phi = quad_features(X)
        W -= (eta * (np.einsum("rp,rp->r", Phi, W) - np.prod(X, axis=1)))[:, None] * Phi
        if t == cps[k]:
            out[:, k] = 1.0 + np.einsum("rp,rp->r", W, W)
            k += 1
    return NoHintStudy(d, tuple(cps), out)


@dataclass(frozen=True)
class SeparationResult:
    """C3 data, all exact over {±1}^d: the top label's correlations and the hinted stack at its budget."""

    d: int
    steps: tuple[int, ...]
    max_corr_top: int
    mse: np.ndarray
    top_error: float


MAX_SEPARATION_DIM = 16


def separation_experiment(d: int, delta: float, rng: np.random.Generator) -> SeparationResult:
    """Train the hinted stack for the budget :func:`stack_budget` (B = 1, the projection step 1/p_i) and
    evaluate it exactly on the cube."""
    r = tree_depth(d, "d")
    if d > MAX_SEPARATION_DIM:
        raise ValueError(f"d = {d} is too large for the exact C3 enumeration (<= {MAX_SEPARATION_DIM})")
    steps = stack_budget(d, delta)
    etas = [projection_step(p) for _, p, _ in stack_shapes(r)]
    Ws = train_hinted_stack(r, steps, etas, 1, rng)
    return SeparationResult(d, tuple(steps), max_top_correlation(d), stack_mse(Ws), exact_top_error(Ws, d))
