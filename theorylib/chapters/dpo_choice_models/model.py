"""The model of chapter 'dpo-choice-models': designs, simulated annotators, DPO losses and their minimizers.

Never imports ``theory``: a mutation of the theory cannot move a measurement. Random functions take an
explicit ``rng``. A tabular policy pi on K responses is parametrized by its implicit reward
h = beta log(pi / pi_ref), defined up to an additive constant (always stored centered).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from theorylib.core.validation import (
    check_array,
    check_int,
    check_positive,
    check_positive_int,
    check_real,
)

from .model_links import data_cdf, get_link, score_terms

# ------------------------------------------------------------------------------------------------
# the setting: rewards, reference policy, designs


def true_reward(rng: np.random.Generator, K: int, scale: float, max_gap: float) -> np.ndarray:
    """r* ~ scale N(0, I_K), centered, shrunk (if needed) so that max_ij |r_i - r_j| <= max_gap."""
    K = check_int("K", K, low=2)
    r = check_positive("scale", scale) * rng.standard_normal(K)
    r -= r.mean()
    gap = r.max() - r.min()
    return r * min(1.0, check_positive("max_gap", max_gap) / gap)


def reference_policy(rng: np.random.Generator, K: int) -> np.ndarray:
    """pi_ref ~ Dirichlet(2, ..., 2)."""
    return rng.dirichlet(np.full(check_int("K", K, low=2), 2.0))


def check_policy(name: str, pi: np.ndarray) -> np.ndarray:
    """A probability vector with positive entries."""
    pi = check_array(name, pi, ndim=1)
    if np.any(pi <= 0) or abs(pi.sum() - 1) > 1e-12:
        raise ValueError(f"{name} must have positive entries summing to 1; got {pi}")
    return pi


def pair_design(K: int, kind: str = "complete") -> np.ndarray:
    """The pairs (i, j), i < j, of the complete graph or of the path 0-1-...-(K-1): shape (P, 2)."""
    K = check_int("K", K, low=2)
    if kind == "complete":
        return np.array([(i, j) for i in range(K) for j in range(i + 1, K)])
    if kind == "path":
        return np.array([(i, i + 1) for i in range(K - 1)])
    raise ValueError(f"unknown design kind {kind!r}; known: 'complete', 'path'")


def check_design(pairs: np.ndarray, K: int) -> np.ndarray:
    """Pairs of distinct items in range whose graph is connected (else h is not identified)."""
    pairs = check_array("pairs", pairs, shape=(None, 2), dtype=int)
    if pairs.size == 0 or np.any(pairs < 0) or np.any(pairs >= K) or np.any(pairs[:, 0] == pairs[:, 1]):
        raise ValueError(f"pairs must be pairs of distinct items in 0..{K - 1}")
    graph = csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(K, K))
    if connected_components(graph, directed=False)[0] != 1:
        raise ValueError("the design graph is disconnected: rewards are not identified across components")
    return pairs


def choice_probs(r: np.ndarray, pairs: np.ndarray, data: str, lengths: np.ndarray | None = None,
                 alpha: float = 0.0) -> np.ndarray:
    """P(i beats j) = F(r_i - r_j + alpha (l_i - l_j)) for each pair, under the choice model ``data``."""
    r = check_array("r", r, ndim=1)
    d = r[pairs[:, 0]] - r[pairs[:, 1]]
    if lengths is not None:
        lengths = check_array("lengths", lengths, shape=(r.size,))
        d = d + check_real("alpha", alpha) * (lengths[pairs[:, 0]] - lengths[pairs[:, 1]])
    return data_cdf(data, d)


def population_counts(probs: np.ndarray, q: np.ndarray | None = None) -> np.ndarray:
    """Exact expected 'counts' of one comparison: q_ij (p_ij, 1 - p_ij), shape (1, P, 2)."""
    probs = np.asarray(probs, dtype=float)
    q = np.full(probs.size, 1 / probs.size) if q is None else np.asarray(q, dtype=float)
    return np.stack([q * probs, q * (1 - probs)], axis=-1)[None]


def sample_counts(rng: np.random.Generator, probs: np.ndarray, N: int, R: int = 1) -> np.ndarray:
    """R replicates of N comparisons: pairs uniform over the design, outcomes Bernoulli(p): (R, P, 2)."""
    N, R = check_positive_int("N", N), check_positive_int("R", R)
    probs = np.asarray(probs, dtype=float)
    P = probs.size
    n_pair = rng.multinomial(N, np.full(P, 1 / P), size=R)
    wins = rng.binomial(n_pair, probs)
    return np.stack([wins, n_pair - wins], axis=-1).astype(float)


def mle_exists(pairs: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per replicate: is the win digraph (i -> j when i beat j at least once) strongly connected?

    Otherwise some set of items never loses to its complement and the empirical loss has no minimizer
    (h -> +-infinity along that cut: perfect separation).
    """
    counts = np.asarray(counts, dtype=float)
    K = int(pairs.max()) + 1
    out = np.empty(counts.shape[0], dtype=bool)
    for k, c in enumerate(counts):
        src = np.concatenate([pairs[c[:, 0] > 0, 0], pairs[c[:, 1] > 0, 1]])
        dst = np.concatenate([pairs[c[:, 0] > 0, 1], pairs[c[:, 1] > 0, 0]])
        g = csr_matrix((np.ones(src.size), (src, dst)), shape=(K, K))
        out[k] = connected_components(g, directed=True, connection="strong")[0] == 1
    return out


# ------------------------------------------------------------------------------------------------
# the DPO losses


@dataclass(frozen=True)
class Loss:
    """A DPO variant: score S, loss link G, margin gamma, length coefficient alpha on ``lengths``."""

    score: str = "log"
    link: str = "logistic"
    margin: float = 0.0
    alpha: float = 0.0
    lengths: tuple[float, ...] | None = None

    def offsets(self, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Offsets added to h_w - h_l when i wins and when j wins: -gamma + alpha (l_w - l_l)."""
        dl = np.zeros(len(pairs))
        if self.lengths is not None and self.alpha != 0:
            ln = np.asarray(self.lengths, dtype=float)
            dl = self.alpha * (ln[pairs[:, 0]] - ln[pairs[:, 1]])
        return -self.margin + dl, -self.margin - dl


def _incidence(pairs: np.ndarray, K: int) -> np.ndarray:
    B = np.zeros((len(pairs), K))
    B[np.arange(len(pairs)), pairs[:, 0]] = 1.0
    B[np.arange(len(pairs)), pairs[:, 1]] = -1.0
    return B


def _loss_terms(h: np.ndarray, pairs: np.ndarray, counts: np.ndarray, loss: Loss, order: int):
    link = get_link(loss.link)
    c1, c2 = loss.offsets(pairs)
    d = h[:, pairs[:, 0]] - h[:, pairs[:, 1]]
    t1 = score_terms(loss.score, link, d + c1)
    t2 = score_terms(loss.score, link, -d + c2)
    w, lo = counts[..., 0], counts[..., 1]
    total = counts.sum(axis=(1, 2))
    val = (w * t1[0] + lo * t2[0]).sum(axis=1) / total
    if order == 0:
        return val, None, None
    gd = (w * t1[1] - lo * t2[1]) / total[:, None]
    hd = (w * t1[2] + lo * t2[2]) / total[:, None]
    return val, gd, hd


def dpo_loss(h: np.ndarray, pairs: np.ndarray, counts: np.ndarray, loss: Loss
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per replicate: the mean loss over comparisons, its gradient (R, K) and Hessian (R, K, K) in h."""
    h = np.atleast_2d(np.asarray(h, dtype=float))
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 3 or counts.shape[1:] != (len(pairs), 2) or counts.shape[0] != h.shape[0]:
        raise ValueError(f"counts must have shape ({h.shape[0]}, {len(pairs)}, 2); got {counts.shape}")
    val, gd, hd = _loss_terms(h, pairs, counts, loss, 2)
    B = _incidence(pairs, h.shape[1])
    return val, gd @ B, (B.T[None] * hd[:, None, :]) @ B


def _subspace_basis(K: int) -> np.ndarray:
    """An orthonormal basis (K, K-1) of the sum-zero subspace."""
    q, _ = np.linalg.qr(np.eye(K)[:, :-1] - 1.0 / K)
    return q


@dataclass(frozen=True)
class Fit:
    """Minimizers of the loss (centered, (R, K)), with the quantities of their first-order error bound."""

    h: np.ndarray
    grad_norm: np.ndarray
    mu_min: np.ndarray
    value: np.ndarray

    @property
    def error_bound(self) -> np.ndarray:
        """2 ||grad|| / mu_min + 1e-12: the first-order bound on the distance to the exact minimizer."""
        return 2 * self.grad_norm / np.maximum(self.mu_min, 1e-300) + 1e-12


GRAD_TOL = 1e-14  # a replicate stops when its gradient norm is below (rounding level of a mean of O(1) terms)


def minimize(pairs: np.ndarray, counts: np.ndarray, loss: Loss, h0: np.ndarray | None = None,
             max_iter: int = 300, max_step: float = 2.0) -> Fit:
    """Minimize the DPO loss for every replicate at once: saddle-free Newton with backtracking.

    The step is -|H|^{-1} grad on the sum-zero subspace (|H| has the absolute eigenvalues of the Hessian,
    floored at 1e-12), capped at ``max_step`` in norm, then halved until the loss decreases (Armijo).
    Works for non-convex losses: at a point of negative curvature the step is still a descent direction.
    A replicate stops when its gradient norm is below ``GRAD_TOL`` or no step decreases its loss.
    """
    counts = np.asarray(counts, dtype=float)
    R, K = counts.shape[0], int(pairs.max()) + 1
    h = np.zeros((R, K)) if h0 is None else np.array(np.broadcast_to(h0, (R, K)), dtype=float)
    h -= h.mean(axis=1, keepdims=True)
    Q = _subspace_basis(K)
    B = _incidence(pairs, K)
    BQ = B @ Q
    act = np.arange(R)
    for _ in range(max_iter):
        c, ha = counts[act], h[act]
        val, gd, hd = _loss_terms(ha, pairs, c, loss, 2)
        gq = gd @ BQ
        keep = np.linalg.norm(gq, axis=1) >= GRAD_TOL
        act, c, ha, val, gq, hd = act[keep], c[keep], ha[keep], val[keep], gq[keep], hd[keep]
        if act.size == 0:
            break
        lam, V = np.linalg.eigh((BQ.T[None] * hd[:, None, :]) @ BQ)
        coef = np.einsum("rkj,rk->rj", V, gq) / np.maximum(np.abs(lam), 1e-12)
        step = -np.einsum("rkj,rj->rk", V, coef)
        norm = np.linalg.norm(step, axis=1, keepdims=True)
        step *= np.minimum(1.0, max_step / np.maximum(norm, 1e-300))
        slope = np.einsum("rk,rk->r", gq, step)
        step = step @ Q.T
        t = np.ones(act.size)
        new_h = ha.copy()
        # Near a strict minimum the predicted decrease falls below the rounding of the loss value, where
        # no line search can see it: take the full Newton step (quadratic convergence) without one.
        sure = (-slope < 1e-10 * (1 + np.abs(val))) & (lam[:, 0] > 0)
        new_h[sure] = ha[sure] + step[sure]
        pending = ~sure
        for _ in range(60):
            if not pending.any():
                break
            idx = np.flatnonzero(pending)
            trial = ha[idx] + t[idx, None] * step[idx]
            v_try = _loss_terms(trial, pairs, c[idx], loss, 0)[0]
            ok = v_try <= val[idx] + 1e-4 * t[idx] * slope[idx]
            new_h[idx[ok]] = trial[ok]
            pending[idx[ok]] = False
            t[pending] *= 0.5
        h[act] = new_h - new_h.mean(axis=1, keepdims=True)
        act = act[~pending]  # no decrease at any step length: converged to rounding
    val, grad, hess = dpo_loss(h, pairs, counts, loss)
    lam = np.linalg.eigvalsh(Q.T @ hess @ Q)
    return Fit(h, np.linalg.norm(grad, axis=1), lam[:, 0], val)


def policy_from_reward(pi_ref: np.ndarray, h: np.ndarray, beta: float) -> np.ndarray:
    """The tabular policy of implicit reward h: pi proportional to pi_ref e^{h / beta}."""
    beta = check_positive("beta", beta)
    logits = np.log(check_policy("pi_ref", pi_ref)) + np.asarray(h, dtype=float) / beta
    logits -= logits.max(axis=-1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=-1, keepdims=True)


def implied_reward(pi: np.ndarray, pi_ref: np.ndarray, beta: float) -> np.ndarray:
    """h = beta log(pi / pi_ref), centered."""
    h = check_positive("beta", beta) * (np.log(np.asarray(pi, dtype=float)) - np.log(pi_ref))
    return h - h.mean(axis=-1, keepdims=True)


def fit_dpo(pairs: np.ndarray, counts: np.ndarray, loss: Loss, pi_ref: np.ndarray, beta: float,
            h0: np.ndarray | None = None) -> tuple[np.ndarray, Fit]:
    """Train the tabular policy on comparison counts (R, P, 2): its policies (R, K) and the fit.

    Refuses replicates whose minimizer does not exist (win digraph not strongly connected).
    """
    pi_ref = check_policy("pi_ref", pi_ref)
    pairs = check_design(pairs, pi_ref.size)
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 3 or counts.shape[1:] != (len(pairs), 2) or np.any(counts < 0):
        raise ValueError(f"counts must be non-negative with shape (R, {len(pairs)}, 2); got {counts.shape}")
    if not mle_exists(pairs, counts).all():
        raise ValueError("perfect separation: some set of responses never loses to the others, the "
                         "DPO loss has no minimizer (its infimum is approached as h -> infinity)")
    fit = minimize(pairs, counts, loss, h0)
    return policy_from_reward(pi_ref, fit.h, beta), fit


def population_minimizer(r: np.ndarray, pairs: np.ndarray, data: str, loss: Loss,
                         h0: np.ndarray | None = None, lengths: np.ndarray | None = None,
                         alpha: float = 0.0) -> Fit:
    """The minimizer of the population loss (exact choice probabilities, uniform design weights)."""
    probs = choice_probs(r, pairs, data, lengths, alpha)
    counts = population_counts(probs)
    if h0 is not None:
        h0 = np.atleast_2d(h0)
        counts = np.repeat(counts, h0.shape[0], axis=0)
    return minimize(pairs, counts, loss, h0)


# ------------------------------------------------------------------------------------------------
# the experiments


@dataclass(frozen=True)
class Identification:
    """C1: population minimizers from random starts for every (choice model, DPO variant) combination."""

    data_keys: tuple[str, ...]
    losses: tuple[Loss, ...]
    err: np.ndarray  # (n_data, n_loss, n_inits): max_i |h_i - r*_i| (centered), per start
    bound: np.ndarray  # same shape: the first-order error bound of each fit
    policies: np.ndarray  # (n_data, n_loss, n_inits, K): the policies reached


def identification(r: np.ndarray, pi_ref: np.ndarray, beta: float, data_keys: tuple[str, ...],
                   losses: tuple[Loss, ...], n_inits: int, rng: np.random.Generator) -> Identification:
    """Population minimizers on the complete design from ``n_inits`` starts uniform in [-3, 3]^K."""
    K = r.size
    pairs = pair_design(K)
    starts = rng.uniform(-3, 3, size=(check_positive_int("n_inits", n_inits), K))
    target = r - r.mean()
    shape = (len(data_keys), len(losses), n_inits)
    err, bound = np.empty(shape), np.empty(shape)
    policies = np.empty((*shape, K))
    for a, key in enumerate(data_keys):
        for b, loss in enumerate(losses):
            fit = population_minimizer(r, pairs, key, loss, h0=starts)
            err[a, b] = np.abs(fit.h - target).max(axis=1)
            bound[a, b] = fit.error_bound
            policies[a, b] = policy_from_reward(pi_ref, fit.h, beta)
    return Identification(tuple(data_keys), tuple(losses), err, bound, policies)


@dataclass(frozen=True)
class Curvature:
    """C1c: the smallest Hessian eigenvalue (sum-zero subspace) of a population loss at a point h, measured
    by second differences of the loss values alone (no derivative formula): the Richardson combination
    ``lam`` of the estimates ``lam_eps`` and ``lam_2eps`` at steps eps and 2 eps, and the loss value."""

    h: np.ndarray
    lam: float
    lam_eps: float
    lam_2eps: float
    value: float
    eps: float


def fd_hessian(f, h: np.ndarray, basis: np.ndarray, eps: float) -> np.ndarray:
    """Central second differences of the scalar function f at h along the columns of ``basis``:
    [f(h + e a + e b) - f(h + e a - e b) - f(h - e a + e b) + f(h - e a - e b)] / (4 e^2)."""
    k = basis.shape[1]
    H = np.empty((k, k))
    for a in range(k):
        for b in range(a, k):
            pa, pb = eps * basis[:, a], eps * basis[:, b]
            H[a, b] = H[b, a] = (f(h + pa + pb) - f(h + pa - pb) - f(h - pa + pb) + f(h - pa - pb)) / (
                4 * eps * eps)
    return H


def witness_curvature(r: np.ndarray, data: str, loss: Loss, push: float = 3.0, eps: float = 1e-3
                      ) -> Curvature:
    """The population loss on the complete design at h = r* - push sign(r*_0 - r*_1)(e_0 - e_1) (the pair
    (0, 1) pushed against its true order): its smallest curvature on the sum-zero subspace, by Richardson
    second differences of the loss values."""
    K = r.size
    pairs = pair_design(K)
    h = r - r.mean()
    e = np.zeros(K)
    e[0], e[1] = 1.0, -1.0
    h = h - check_positive("push", push) * np.sign(r[0] - r[1]) * e
    counts = population_counts(choice_probs(r, pairs, data))

    def value(x: np.ndarray) -> float:
        return float(_loss_terms(x[None], pairs, counts, loss, 0)[0][0])

    Q = _subspace_basis(K)
    eps = check_positive("eps", eps)
    H1, H2 = fd_hessian(value, h, Q, eps), fd_hessian(value, h, Q, 2 * eps)
    lam1, lam2 = np.linalg.eigvalsh(H1)[0], np.linalg.eigvalsh(H2)[0]
    lam = np.linalg.eigvalsh((4 * H1 - H2) / 3)[0]
    return Curvature(h, float(lam), float(lam1), float(lam2), value(h), eps)


def path_gaps(r: np.ndarray, data: str, loss: Loss) -> tuple[np.ndarray, np.ndarray, Fit]:
    """C2a: the edge gaps r*_e - r*_{e+1} and h_e - h_{e+1} of the population minimizer on the path."""
    pairs = pair_design(r.size, "path")
    fit = population_minimizer(r, pairs, data, loss)
    dr = r[pairs[:, 0]] - r[pairs[:, 1]]
    dh = fit.h[0, pairs[:, 0]] - fit.h[0, pairs[:, 1]]
    return dr, dh, fit


def margin_gaps(p_grid: tuple[float, ...], gamma_grid: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """C2b: K = 2, P(0 beats 1) = p exactly, margin-gamma logistic DPO: learned gaps (n_p, n_gamma)."""
    pairs = pair_design(2)
    gaps = np.empty((len(p_grid), len(gamma_grid)))
    bounds = np.empty_like(gaps)
    for a, p in enumerate(p_grid):
        counts = population_counts(np.array([p]))
        for b, g in enumerate(gamma_grid):
            fit = minimize(pairs, counts, Loss("log", "logistic", margin=float(g)))
            gaps[a, b] = fit.h[0, 0] - fit.h[0, 1]
            bounds[a, b] = fit.error_bound[0]
    return gaps, bounds


@dataclass(frozen=True)
class LengthRun:
    """C2c: length-biased annotator, length-corrected and plain DPO population minimizers."""

    lengths: np.ndarray
    h_corrected: np.ndarray
    h_plain: np.ndarray
    bound: float


def length_run(r: np.ndarray, alpha: float, rng: np.random.Generator) -> LengthRun:
    """Lengths uniform on {1, ..., 10}; the annotator prefers i with prob sigma(r_i - r_j + a(l_i - l_j))."""
    lengths = rng.integers(1, 11, size=r.size).astype(float)
    pairs = pair_design(r.size)
    fits = [population_minimizer(r, pairs, "logistic", loss, lengths=lengths, alpha=alpha)
            for loss in (Loss(alpha=alpha, lengths=tuple(lengths)), Loss())]
    return LengthRun(lengths, fits[0].h[0], fits[1].h[0], float(max(f.error_bound[0] for f in fits)))


@dataclass(frozen=True)
class TwoItemRun:
    """C2d: K = 2, finite N, Thurstone annotator, logistic DPO: learned gaps and win fractions."""

    dr: np.ndarray
    gaps: np.ndarray
    p_hat: np.ndarray
    N: int


def two_item_run(dr_grid: tuple[float, ...], N: int, pi_ref: np.ndarray, beta: float, seed: int,
                 rng_for) -> TwoItemRun:
    """N comparisons of two responses per reward gap (stream ``(seed, "C2d", m)``), fitted by DPO."""
    pairs = pair_design(2)
    gaps, p_hat = [], []
    ref2 = pi_ref[:2] / pi_ref[:2].sum()
    for m, d in enumerate(dr_grid):
        p = choice_probs(np.array([d / 2, -d / 2]), pairs, "probit")
        counts = sample_counts(rng_for(seed, "C2d", str(m)), p, N)
        pol, _ = fit_dpo(pairs, counts, Loss(), ref2, beta)
        h = implied_reward(pol, ref2, beta)
        gaps.append(h[0, 0] - h[0, 1])
        p_hat.append(counts[0, 0, 0] / N)
    return TwoItemRun(np.asarray(dr_grid, dtype=float), np.array(gaps), np.array(p_hat), int(N))


@dataclass(frozen=True)
class RateRun:
    """C3: R replicate fits at each N of one (choice model, loss) setting on the complete design."""

    name: str
    data: str
    loss: Loss
    N_grid: tuple[int, ...]
    h_hat: np.ndarray  # (n_N, R, K), centered; NaN rows for dropped replicates
    dropped: np.ndarray  # (n_N,) replicates without a minimizer
    h_pop: np.ndarray  # (K,) population minimizer


def rate_run(name: str, r: np.ndarray, data: str, loss: Loss, N_grid: tuple[int, ...], R: int, seed: int,
             rng_for) -> RateRun:
    """Sample, check existence, fit (Cauchy-type losses start from the logistic fit of the same data)."""
    pairs = pair_design(r.size)
    probs = choice_probs(r, pairs, data)
    h_pop = population_minimizer(r, pairs, data, loss).h[0]
    out = np.full((len(N_grid), R, r.size), np.nan)
    dropped = np.zeros(len(N_grid), dtype=int)
    for m, N in enumerate(N_grid):
        counts = sample_counts(rng_for(seed, "C3", name, str(m)), probs, int(N), R)
        ok = mle_exists(pairs, counts)
        dropped[m] = int((~ok).sum())
        c = counts[ok]
        h0 = None
        if loss.link != "logistic" or loss.score != "log":
            h0 = minimize(pairs, c, Loss()).h
        out[m, ok] = minimize(pairs, c, loss, h0).h
    return RateRun(name, data, loss, tuple(int(n) for n in N_grid), out, dropped, h_pop)


def combinations(gamma_grid) -> tuple[tuple[str, ...], tuple[Loss, ...]]:
    """C1's grid: the choice models (three links and F_gamma for every gamma > 0) and the DPO variants
    (log score with each link, margin-gamma logistic, Brier, Matsushita and quartic scores with sigma)."""
    gammas = tuple(float(g) for g in gamma_grid if g > 0)
    data = ("logistic", "probit", "cauchy") + tuple(f"margin:{g}" for g in gammas)
    losses = ((Loss(), Loss(link="probit"), Loss(link="cauchy")) + tuple(Loss(margin=g) for g in gammas)
              + (Loss("brier"), Loss("matsushita"), Loss("quartic")))
    return data, losses


TRANSFER_PAIRS = (("probit", "logistic"), ("logistic", "probit"), ("cauchy", "logistic"),
                  ("logistic", "cauchy"))


def path_runs(r: np.ndarray) -> list[tuple[str, str, np.ndarray, np.ndarray, float]]:
    """C2a: (F, G, reward gaps, learned gaps, error bound) on the path for every pair of TRANSFER_PAIRS."""
    out = []
    for f, g in TRANSFER_PAIRS:
        dr, dh, fit = path_gaps(r, f, Loss(link=g))
        out.append((f, g, dr, dh, float(fit.error_bound[0])))
    return out


def loss_label(loss: Loss) -> str:
    """A short name of a DPO variant for tables."""
    if loss.margin > 0:
        return f"margin {loss.margin:g}"
    return f"{loss.score}-{loss.link}"
