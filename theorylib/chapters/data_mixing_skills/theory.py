"""The theory of chapter 'data-mixing-skills': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. The model: K domains share m0 "fundamental" skills (coordinates
with variance f0 in every domain) and each has M_k "specialized" skills of its own; a learner fits
y = <theta*, x> + eps by least squares on n_k = w_k D samples of domain k (Dai & Zheng, *Explaining
Data Mixing Scaling Laws*, ICML 2026, for the shared-head / disjoint-tail assumption).
"""

from __future__ import annotations

import numpy as np

from theorylib.core.validation import check_array, check_int, check_positive


def _check_counts(n, M, m0: int, sigma):
    n = check_array("n", n, ndim=1)
    M = check_array("M", M, ndim=1, shape=(n.size,))
    sigma = check_array("sigma", sigma, ndim=1, shape=(n.size,))
    m0 = check_int("m0", m0, low=0)
    if np.any(sigma < 0):
        raise ValueError("sigma must be >= 0")
    if np.any(n <= M + 1):
        raise ValueError("every n_k must exceed M_k + 1 (finite inverse-Wishart mean)")
    if np.sum(n - M) <= m0 + 1:
        raise ValueError("N_eff = sum_k (n_k - M_k) must exceed m0 + 1")
    return n, M, m0, sigma


def exact_excess(n, M, m0: int, sigma) -> np.ndarray:
    """E[L_k] - sigma_k^2 of full least squares at allocation n (exact, Gaussian design).

    E[L_k] - sigma_k^2 = Delta_0 + (sigma_k^2 + Delta_0) M_k / (n_k - M_k - 1), with
    Delta_0 = m0 omega / (N_eff - m0 - 1), N_eff = sum_j (n_j - M_j) and
    omega = sum_j (n_j - M_j) sigma_j^2 / N_eff (the chapter's exact finite-sample theorem).
    """
    n, M, m0, sigma = _check_counts(n, M, m0, sigma)
    s2 = sigma**2
    n_eff = np.sum(n - M)
    omega = np.sum((n - M) * s2) / n_eff
    delta0 = m0 * omega / (n_eff - m0 - 1)
    return delta0 + (s2 + delta0) * M / (n - M - 1)


def grid_optimum(D: int, grid, M, m0: int, sigma, pi) -> int:
    """The allocation n_1 in ``grid`` (n_2 = D - n_1) minimizing sum_k pi_k E[L_k] (exact law).

    The minimizer by enumeration of the exact law (noise-reduction corollary); ties are broken
    towards the smaller n_1.
    """
    grid = check_array("grid", grid, ndim=1, dtype=int)
    pi = check_array("pi", pi, ndim=1)
    values = [float(pi @ exact_excess([g, D - g], M, m0, sigma)) for g in grid]
    return int(grid[int(np.argmin(values))])


def zipf_allocation(N: int, m0: int, w, alpha: float) -> np.ndarray:
    """Specialized capacity N_k(w) = (N - m0) w_k^gamma / sum_j w_j^gamma, gamma = 1 / (1 + alpha).

    The continuum solution of the capacity-competition theorem for Zipf skills
    p(r) = c r^{-(1+alpha)} (all fundamental skills kept first).
    """
    w = check_array("w", w, ndim=1)
    alpha = check_positive("alpha", alpha)
    if N <= m0:
        raise ValueError(f"capacity N = {N} must exceed the m0 = {m0} fundamental skills")
    if np.any(w <= 0) or abs(w.sum() - 1) > 1e-12:
        raise ValueError("w must lie in the open simplex")
    gamma = 1 / (1 + alpha)
    return (N - m0) * w**gamma / np.sum(w**gamma)


def population_selection(var, w, N: int) -> tuple[np.ndarray, np.ndarray]:
    """Infinite-data learner of capacity N: keep the top N skills by q_s(w) = sum_k w_k Var_k(x_s).

    var: (K, P) per-domain variances of the P skills. Returns (counts, tails): counts[k] the number
    of kept skills that only domain k uses (Var_j = 0 for j != k), and tails[k] =
    L_k^inf - sigma_k^2 = sum_{s not kept} Var_k(x_s) (|theta*_s| = 1).
    """
    var = check_array("var", var, ndim=2)
    w = check_array("w", w, ndim=1, shape=(var.shape[0],))
    q = w @ var
    order = np.argsort(-q, kind="stable")
    kept = np.zeros(q.size, dtype=bool)
    kept[order[:N]] = True
    own = (var > 0) & (np.sum(var > 0, axis=0) == 1)
    counts = np.sum(own & kept, axis=1)
    tails = np.sum(var * ~kept, axis=1)
    return counts, tails


def noise_term(w, D: int, counts, tails, sigma, m0: int) -> np.ndarray:
    """Leading-order estimation excess of least squares on the kept skills at D samples.

    D E[L_k - L_k^inf] ~ m0 sum_j w_j s_j + N_k s_k / w_k, s_j = sigma_j^2 + A_j, where the
    unlearned skills act as extra noise A_j = tails[j] (sandwich formula, independent features).
    """
    w = check_array("w", w, ndim=1)
    s = check_array("sigma", sigma, ndim=1) ** 2 + check_array("tails", tails, ndim=1)
    return (m0 * np.sum(w * s) + counts * s / w) / D


def continuum_tail(N_k, c: float, alpha: float, M_spec: int) -> np.ndarray:
    """Continuum tail (c / alpha) (N_k^{-alpha} - M_spec^{-alpha}) = c int_{N_k}^{M_spec} t^{-(1+alpha)} dt.

    The loss from the skills r > N_k of a Zipf block p(r) = c r^{-(1+alpha)}, r <= M_spec
    (capacity-split theorem; remainder below 2 c (N_k - 1)^{-(1+alpha)}).
    """
    N_k = np.asarray(N_k, dtype=float)
    return c / alpha * (N_k**-alpha - M_spec**-alpha)


def mixing_law(w, N: int, D: int, c: float, alpha: float, s2, m0: int, M_spec: int) -> np.ndarray:
    """The chapter's data-mixing law L_k(w, N, D) in the paper's parametric shape.

    L_k = s2_k + A_k + [m0 sum_j w_j (s2_j + A_j) + N_k (s2_k + A_k) / w_k] / D, with
    N_k = (N - m0) w_k^gamma / sum_j w_j^gamma, gamma = 1 / (1 + alpha), and
    A_k = (c / alpha) (N_k^{-alpha} - M_spec^{-alpha}); s2_k is the irreducible loss sigma_k^2.
    """
    return _law_at_split(zipf_allocation(N, m0, w, alpha), w, D, c, alpha, s2, m0, M_spec)


def _law_at_split(N_k, w, D: int, c: float, alpha: float, s2, m0: int, M_spec: int) -> np.ndarray:
    """s2_k + A_k + noise term at the specialized capacities N_k (A_k the continuum tail)."""
    s2 = check_array("s2", s2, ndim=1)
    A = continuum_tail(N_k, c, alpha, M_spec)
    return s2 + A + noise_term(w, D, N_k, A, np.sqrt(s2), m0)


# ---------------------------------------------------------------- wrong theories
def wrong_exact_excess_alone(n, M, m0: int, sigma) -> np.ndarray:
    """Wrong: each domain fitted alone on its own m0 + M_k skills, sigma_k^2 p / (n_k - p - 1)."""
    n, M, m0, sigma = _check_counts(n, M, m0, sigma)
    p = m0 + M
    return sigma**2 * p / np.maximum(n - p - 1, 1)


def wrong_exact_excess_no_inflation(n, M, m0: int, sigma) -> np.ndarray:
    """Wrong: the specialized skills do not inherit the shared error, Delta_0 + sigma_k^2 M_k / (n_k - M_k - 1)."""
    n, M, m0, sigma = _check_counts(n, M, m0, sigma)
    n_eff = np.sum(n - M)
    delta0 = m0 * np.sum((n - M) * sigma**2) / n_eff / (n_eff - m0 - 1)
    return delta0 + sigma**2 * M / (n - M - 1)


def wrong_exact_excess_sqrt(n, M, m0: int, sigma) -> np.ndarray:
    """Wrong: a Chinchilla-like excess decaying as D^{-1/2}, sigma_k^2 (m0 + M_k) / sqrt(D)."""
    n, M, m0, sigma = _check_counts(n, M, m0, sigma)
    return sigma**2 * (m0 + M) / np.sqrt(np.sum(n))


def wrong_noise_term_specialized_only(w, D: int, counts, tails, sigma, m0: int) -> np.ndarray:
    """Wrong: the noise term without its shared part (fundamental skills estimated for free)."""
    s = check_array("sigma", sigma, ndim=1) ** 2 + check_array("tails", tails, ndim=1)
    return counts * s / check_array("w", w, ndim=1) / D


def wrong_zipf_allocation(N: int, m0: int, w, alpha: float) -> np.ndarray:
    """Wrong: capacity split in proportion to the weights, N_k = (N - m0) w_k (gamma = 1)."""
    w = check_array("w", w, ndim=1)
    return (N - m0) * w / np.sum(w)


def wrong_population_selection(var, w, N: int) -> tuple[np.ndarray, np.ndarray]:
    """Wrong: independent per-domain laws, each domain keeping its own top (N - m0)/K skills
    whatever the mixture (its loss then depends on its own data only)."""
    var = check_array("var", var, ndim=2)
    K = var.shape[0]
    return population_selection(var, np.full(K, 1 / K), N)


def wrong_grid_optimum_pi(D: int, grid, M, m0: int, sigma, pi) -> int:
    """Wrong: the optimal mixture is the evaluation mixture (n_1 = pi_1 D, nearest grid point)."""
    grid = check_array("grid", grid, ndim=1, dtype=int)
    return int(grid[int(np.argmin(np.abs(grid - pi[0] * D)))])


def wrong_grid_optimum_easier(D: int, grid, M, m0: int, sigma, pi) -> int:
    """Wrong: the weight shifts toward the easier domain (the mirror image of the optimum)."""
    grid = check_array("grid", grid, ndim=1, dtype=int)
    best = grid_optimum(D, grid, M, m0, sigma, pi)
    return int(grid[int(np.argmin(np.abs(grid - (D - best))))])


def wrong_mixing_law_proportional(w, N: int, D: int, c: float, alpha: float, s2, m0: int,
                                  M_spec: int) -> np.ndarray:
    """Wrong: the same law with capacity in proportion to the weights, N_k = (N - m0) w_k (gamma = 1)."""
    return _law_at_split(wrong_zipf_allocation(N, m0, w, alpha), w, D, c, alpha, s2, m0, M_spec)
