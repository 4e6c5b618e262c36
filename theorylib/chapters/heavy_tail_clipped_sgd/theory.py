"""The theory of chapter 'heavy-tail-clipped-sgd': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. The model is f(w; z) = (lam/2)||w||^2 - <w, z> on R^d with
z = mu + xi, E xi = 0; SGD with replacement from w_0 = 0 with steps eta_t (0 < eta_t lam <= 2), clipped
at tau or not. Every claim reads its prediction from this module; a wrong theory ``wrong_...`` has the
signature of the function it replaces.
"""

from __future__ import annotations

import math

import numpy as np

from theorylib.core.validation import check_positive, check_real


def _etas(etas: np.ndarray, lam: float | None = None) -> np.ndarray:
    e = np.asarray(etas, dtype=float)
    if e.ndim != 1 or e.size == 0 or np.any(e <= 0):
        raise ValueError("etas must be a non-empty 1-D array of positive steps")
    if lam is not None and np.any(e * lam > 2.0):
        raise ValueError("every step must satisfy eta_t lam <= 2 (nonexpansive clipped steps)")
    return e


# ---------------------------------------------------------------- unclipped SGD (exact)


def unclipped_weights(lam: float, etas: np.ndarray) -> np.ndarray:
    """c_t = eta_t prod_{s=t+1}^{T-1} (1 - eta_s lam): w_T = sum_t c_t z_{i_t} for unclipped SGD from 0."""
    lam = check_positive("lam", lam)
    e = _etas(etas, lam)
    tail = np.cumprod((1.0 - e * lam)[::-1])[::-1]  # tail[t] = prod_{s >= t} (1 - eta_s lam)
    after = np.append(tail[1:], 1.0)  # prod_{s > t}
    return e * after


def unclipped_gap_exact(tr_sigma: float, n: int, lam: float, etas: np.ndarray) -> float:
    """gen = E<w_T, xibar> = (tr Sigma / n) sum_t c_t (exact, any T, any steps with eta_t lam <= 2)."""
    tr_sigma = check_positive("tr_sigma", tr_sigma)
    n = check_positive("n", n)
    return float(tr_sigma / n * unclipped_weights(lam, etas).sum())


def wrong_unclipped_gap_no_contraction(tr_sigma: float, n: int, lam: float, etas: np.ndarray) -> float:
    """Wrong: gen = tr Sigma (sum_t eta_t) / n (each step's noise kept at full weight, no contraction)."""
    return float(tr_sigma * _etas(etas).sum() / n)


def wrong_unclipped_gap_factor_two(tr_sigma: float, n: int, lam: float, etas: np.ndarray) -> float:
    """Wrong: twice the exact gap (the factor 2 of a replace-one stability bound taken as the value)."""
    return 2.0 * unclipped_gap_exact(tr_sigma, n, lam, etas)


def wrong_unclipped_gap_one_pass(tr_sigma: float, n: int, lam: float, etas: np.ndarray) -> float:
    """Wrong: 'one pass over the data does not overfit', gen = 0."""
    return 0.0


# ---------------------------------------------------------------- clipped SGD: stability and the gap


def stability_bound(tau: float, used_steps: np.ndarray) -> np.ndarray:
    """||w_T - w_T^(i)|| <= 2 tau sum_{t: i_t = i} eta_t, pathwise (eta_t lam <= 2, isotropic Hessian)."""
    tau = check_positive("tau", tau)
    return 2.0 * tau * np.asarray(used_steps, dtype=float)


def wrong_stability_bound_const_one(tau: float, used_steps: np.ndarray) -> np.ndarray:
    """Wrong: tau sum eta_t (one clipped gradient's length per differing step instead of two)."""
    return tau * np.asarray(used_steps, dtype=float)


def wrong_stability_bound_loose(tau: float, used_steps: np.ndarray) -> np.ndarray:
    """Wrong (not sharp): 4 tau sum eta_t, twice the bound that the worst case attains."""
    return 4.0 * tau * np.asarray(used_steps, dtype=float)


def clipped_gap_bound(tau: float, n: int, etas: np.ndarray, mean_abs: float) -> float:
    """|gen| <= (2 tau / n) (sum_t eta_t) E||xi|| for clipped SGD with replacement."""
    tau, n = check_positive("tau", tau), check_positive("n", n)
    return float(2.0 * tau * _etas(etas).sum() * check_positive("mean_abs", mean_abs) / n)


def wrong_clipped_gap_bound_one_step(tau: float, n: int, etas: np.ndarray, mean_abs: float) -> float:
    """Wrong: 'each sample is used about once', so one step of length 2 eta_0 tau: 2 tau eta_0 E||xi|| / n."""
    return float(2.0 * tau * _etas(etas)[0] * mean_abs / n)


def small_tau_gap(tau: float, n: int, etas: np.ndarray, mean_abs: float) -> float:
    """gen = (tau/n) (sum_t eta_t) E||xi|| + O(tau^2) as tau -> 0 (mu = 0, w_0 = 0): to first order in
    tau, exactly half of the first-moment bound ``clipped_gap_bound``."""
    return 0.5 * clipped_gap_bound(tau, n, etas, mean_abs)


def wrong_small_tau_gap_tight(tau: float, n: int, etas: np.ndarray, mean_abs: float) -> float:
    """Wrong: the first-moment bound is tight, gen = 2 (tau/n) (sum eta_t) E||xi|| to first order."""
    return clipped_gap_bound(tau, n, etas, mean_abs)


def wrong_small_tau_gap_quadratic(tau: float, n: int, etas: np.ndarray, mean_abs: float) -> float:
    """Wrong: a variance-type gap gen = O(tau^2), no first-order term."""
    return 0.0


# ---------------------------------------------------------------- least squares: stability in gradients


def grad_stability_bound(tau: float, d: int, used_steps: np.ndarray) -> np.ndarray:
    """sup_z ||grad f(w_T; z) - grad f(w_T^(i); z)|| <= d * 2 tau sum_{t: i_t = i} eta_t for clipped SGD on
    f(w; x, y) = (1/2)(<w, x> - y)^2 with ||x||^2 = d and eta_t d <= 2: the parameter bound (each clipped
    step is nonexpansive, since its Jacobian is I - eta kappa x x^T with 0 <= eta kappa ||x||^2 <= 2)
    times the smoothness ||x||^2 = d of a test point."""
    return float(check_positive("d", d)) * stability_bound(tau, used_steps)


def wrong_grad_stability_bound_no_smoothness(tau: float, d: int, used_steps: np.ndarray) -> np.ndarray:
    """Wrong: the parameter bound 2 tau sum eta_t taken as the stability in gradients (smoothness d dropped)."""
    return stability_bound(tau, used_steps)


# ---------------------------------------------------------------- noise moments


def student_t_abs_mean(nu: float) -> float:
    """E|t_nu| = 2 sqrt(nu) Gamma((nu+1)/2) / (sqrt(pi) (nu-1) Gamma(nu/2)), nu > 1; nu = inf: sqrt(2/pi)."""
    nu = float(nu)
    if not nu > 1:
        raise ValueError(f"nu = {nu!r} must be > 1 for a finite first moment")
    if math.isinf(nu):
        return math.sqrt(2.0 / math.pi)
    log = math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)
    return 2.0 * math.sqrt(nu) * math.exp(log) / (math.sqrt(math.pi) * (nu - 1))


def student_t_var(nu: float) -> float:
    """Var t_nu = nu/(nu - 2), nu > 2; nu = inf: 1."""
    nu = float(nu)
    if not nu > 2:
        raise ValueError(f"nu = {nu!r} must be > 2 for a finite variance")
    return 1.0 if math.isinf(nu) else nu / (nu - 2)


# ---------------------------------------------------------------- truncation


def pareto_truncated_moments(tau: np.ndarray, nu: float) -> tuple[np.ndarray, ...]:
    """For X ~ Pareto(1, nu) (P(X > x) = x^(-nu), x >= 1), 1 < nu < 2, tau >= 1:

    b(tau)   = E (X - tau)_+        = tau^(1-nu) / (nu - 1),
    m_1(tau) = E min(X, tau)        = nu/(nu - 1) - b(tau),
    m_2(tau) = E min(X, tau)^2      = (2 tau^(2-nu) - nu) / (2 - nu).
    """
    nu = check_real("nu", nu, low=1.0, high=2.0, open_low=True, open_high=True)
    t = np.asarray(tau, dtype=float)
    if np.any(t < 1.0):
        raise ValueError("tau must be >= 1 (the scale x_m = 1 of the Pareto law)")
    b = t ** (1 - nu) / (nu - 1)
    m1 = nu / (nu - 1) - b
    m2 = (2 * t ** (2 - nu) - nu) / (2 - nu)
    return m1, m2, b


def wrong_pareto_truncated_moments(tau: np.ndarray, nu: float) -> tuple[np.ndarray, ...]:
    """Wrong: the moments of X 1{X <= tau} (the tail discarded) in place of min(X, tau) (the tail clipped)."""
    t = np.asarray(tau, dtype=float)
    m1 = nu * (1.0 - t ** (1 - nu)) / (nu - 1)
    m2 = nu * (t ** (2 - nu) - 1.0) / (2 - nu)
    return m1, m2, nu / (nu - 1) - m1


def pareto_bias_exponent(nu: float) -> float:
    """b(tau) = E(X - tau)_+ is proportional to tau^(1 - nu): the exponent 1 - nu (tail index nu)."""
    return 1.0 - float(nu)


def wrong_pareto_bias_exponent(nu: float) -> float:
    """Wrong (finite-variance intuition, Chebyshev): the bias decays as tau^(-1)."""
    return -1.0


# ---------------------------------------------------------------- the gradient gap's sampling term


def sampling_exponent(nu: float, q: float) -> float:
    """E|xibar_n|^q ~ C n^(q (1/nu - 1)) for symmetric noise with tail index nu in (1, 2), 0 < q < nu."""
    nu = check_real("nu", nu, low=1.0, high=2.0, open_low=True, open_high=True)
    return float(q) * (1.0 / nu - 1.0)


def wrong_sampling_exponent(nu: float, q: float) -> float:
    """Wrong (variance-type CLT scaling): E|xibar_n|^q ~ n^(-q/2)."""
    return -float(q) / 2.0

