"""The theory of chapter 'alpha-divergence-rff-critic': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. Every claim reads its prediction from this
module; a wrong theory ``wrong_...`` has the signature of the function it replaces
and is passed to a claim as ``theory=variant(theory, f=theory.wrong_f)``.
"""

from __future__ import annotations

import numpy as np


def alpha_div_gaussian(alpha: float, mP: np.ndarray, SP: np.ndarray, mQ: np.ndarray, SQ: np.ndarray) -> float:
    """D_alpha(P||Q) = (1 - int p^alpha q^{1-alpha})/(alpha(1-alpha)) for P = N(mP, SP), Q = N(mQ, SQ).

    int p^alpha q^{1-alpha} = exp(-alpha(1-alpha)/2 dm^T S_a^{-1} dm) det(S_a)^{-1/2} det(SP)^{(1-alpha)/2}
    det(SQ)^{alpha/2}, with S_a = (1-alpha) SP + alpha SQ and dm = mP - mQ (Gaussian completion of squares).
    """
    mP, mQ = np.asarray(mP, float), np.asarray(mQ, float)
    SP, SQ = np.asarray(SP, float), np.asarray(SQ, float)
    Sa = (1 - alpha) * SP + alpha * SQ
    dm = mP - mQ
    log_aff = (-alpha * (1 - alpha) / 2 * dm @ np.linalg.solve(Sa, dm) - np.linalg.slogdet(Sa)[1] / 2 +
               (1 - alpha) / 2 * np.linalg.slogdet(SP)[1] + alpha / 2 * np.linalg.slogdet(SQ)[1])
    return float(-np.expm1(log_aff) / (alpha * (1 - alpha)))


def wrong_alpha_div_gaussian(alpha: float, mP: np.ndarray, SP: np.ndarray, mQ: np.ndarray,
                             SQ: np.ndarray) -> float:
    """A wrong theory: the index convention mixed up, alpha <-> 1 - alpha (that is D_alpha(Q||P))."""
    return alpha_div_gaussian(1 - alpha, mP, SP, mQ, SQ)


def fconj(u: np.ndarray, alpha: float) -> np.ndarray:
    """f*(u) = ((1 + (alpha-1) u)^{alpha/(alpha-1)} - 1)/alpha for u < 1/(1-alpha) (+inf beyond)."""
    z = 1.0 - (1.0 - alpha) * np.asarray(u, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = (np.exp(alpha / (alpha - 1) * np.log(z)) - 1.0) / alpha
    return np.where(z > 0, val, np.inf)


def fprime_log(log_r: np.ndarray, alpha: float) -> np.ndarray:
    """f'(r) = (r^{alpha-1} - 1)/(alpha-1), from log r: the optimal critic g* = f'(p/q) of the variational form."""
    return np.expm1((alpha - 1) * np.asarray(log_r, float)) / (alpha - 1)


def wrong_fconj(u: np.ndarray, alpha: float) -> np.ndarray:
    """A wrong theory: the conjugate without its constant -1/alpha."""
    z = 1.0 - (1.0 - alpha) * np.asarray(u, float)
    return np.exp(alpha / (alpha - 1) * np.log(z)) / alpha


def fconj_d2(u: np.ndarray, alpha: float) -> np.ndarray:
    """f*''(u) = (1 + (alpha-1) u)^{(2-alpha)/(alpha-1)} > 0 on the domain."""
    z = 1.0 - (1.0 - alpha) * np.asarray(u, float)
    return np.exp((2 - alpha) / (alpha - 1) * np.log(z))


def asymptotic_variance(theta: np.ndarray, FP: np.ndarray, FQ: np.ndarray, alpha: float) -> float:
    """sigma_inf^2 = Var_P(theta^T phi) + Var_Q(f*(theta^T phi)) (the sharp law, n_P = n_Q = n).

    Evaluated as sample variances over a population sample (FP, FQ) at the population maximizer theta.
    """
    return float(np.var(FP @ theta) + np.var(fconj(FQ @ theta, alpha)))


def wrong_asymptotic_variance(theta: np.ndarray, FP: np.ndarray, FQ: np.ndarray, alpha: float) -> float:
    """A wrong theory: only the P-term, as if the critic's Q-side fluctuation did not count."""
    return float(np.var(FP @ theta))


def wrong_asymptotic_variance_radius_free(theta: np.ndarray, FP: np.ndarray, FQ: np.ndarray, alpha: float) -> float:
    """A wrong theory: a statistical error that does not shrink with the radius.

    The sharp law evaluated at the unit critic theta/||theta||, as if the scale of the critic were set by the
    data rather than by R.
    """
    return asymptotic_variance(theta / np.linalg.norm(theta), FP, FQ, alpha)


def small_radius_variance(FP: np.ndarray, FQ: np.ndarray) -> float:
    """s_0^2 = Var_P(u_0^T phi) + Var_Q(u_0^T phi), u_0 = m/||m||, m = E_P phi - E_Q phi.

    The limit of sigma_inf^2(R)/R^2 as R -> 0 (small-radius corollary): the maximizer turns towards the mean
    difference of the features and f* is the identity to first order (f*(0) = 0, f*'(0) = 1).
    """
    m = FP.mean(axis=0) - FQ.mean(axis=0)
    u = m / np.linalg.norm(m)
    return float(np.var(FP @ u) + np.var(FQ @ u))


def statistical_exponent() -> float:
    """The statistical error sd(D_hat_n) scales as n^{-1/2} (sharp law)."""
    return -0.5


def wrong_statistical_exponent() -> float:
    """A wrong theory: a parametric 'fast' rate n^{-1} for the standard deviation."""
    return -1.0


def rff_exponent() -> float:
    """The feature error V_D - V_H has RMS of order D^{-1/2} (a mean of D iid Gram perturbations)."""
    return -0.5


def wrong_rff_exponent() -> float:
    """A wrong theory: a pure bias reading, RMS of order D^{-1}."""
    return -1.0


def linearized_map(theta_star: np.ndarray, FP: np.ndarray, FQ: np.ndarray, R: float, alpha: float,
                   eta: float) -> np.ndarray:
    """The Jacobian at theta* of projected gradient ascent theta <- Proj_{||.||<=R}(theta + eta grad J).

    Active constraint (grad J(theta*) = lam theta*, lam > 0): P_T (I + eta H) / (1 + eta lam), P_T the
    projector on the tangent space of the sphere, H = -mean_Q f*''(theta*^T phi) phi phi^T.
    Interior maximizer: I + eta H.
    """
    theta_star = np.asarray(theta_star, float)
    p = theta_star.size
    H = -(FQ * fconj_d2(FQ @ theta_star, alpha)[:, None]).T @ FQ / FQ.shape[0]
    M = np.eye(p) + eta * H
    if np.linalg.norm(theta_star) < R * (1 - 1e-9):
        return M
    g = FP.mean(axis=0) - FQ.T @ _fconj_d1(FQ @ theta_star, alpha) / FQ.shape[0]
    lam = float(theta_star @ g) / R**2
    PT = np.eye(p) - np.outer(theta_star, theta_star) / R**2
    return PT @ M / (1 + eta * lam)


def _fconj_d1(u: np.ndarray, alpha: float) -> np.ndarray:
    """f*'(u) = (1 + (alpha-1) u)^{1/(alpha-1)}: the density ratio at the optimum."""
    z = 1.0 - (1.0 - alpha) * np.asarray(u, float)
    return np.exp(np.log(z) / (alpha - 1))


def wrong_linearized_map(theta_star: np.ndarray, FP: np.ndarray, FQ: np.ndarray, R: float, alpha: float,
                         eta: float) -> np.ndarray:
    """A wrong theory: the unconstrained gradient-ascent Jacobian I + eta H, rate 1 - eta mu."""
    H = -(FQ * fconj_d2(FQ @ theta_star, alpha)[:, None]).T @ FQ / FQ.shape[0]
    return np.eye(theta_star.size) + eta * H


def window_contraction(J: np.ndarray, e0: np.ndarray, steps: int) -> float:
    """The geometric-mean contraction (||J^k e0|| / ||e0||)^{1/k} of the linearized error over k = steps."""
    e = np.asarray(e0, float)
    n0 = np.linalg.norm(e)
    for _ in range(steps):
        e = J @ e
    return float((np.linalg.norm(e) / n0) ** (1.0 / steps))


def wrong_linearized_map_chi2(theta_star: np.ndarray, FP: np.ndarray, FQ: np.ndarray, R: float, alpha: float,
                              eta: float) -> np.ndarray:
    """A wrong theory: the interior map I + eta H with the curvature of a quadratic conjugate, f*'' = 1."""
    return np.eye(theta_star.size) - eta * FQ.T @ FQ / FQ.shape[0]
