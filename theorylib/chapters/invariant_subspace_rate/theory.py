"""The theory of chapter 'invariant-subspace-rate': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. Every claim reads its prediction from this
module; a wrong theory ``wrong_...`` has the signature of the function it
replaces and is passed to a claim as ``theory=variant(theory, f=theory.wrong_f)``.

Notation: d ambient dimension, k = dim V (invariant), r = d - k = dim U
(spurious), m = |E| environments, n samples per environment, gamma the
separation (the nonzero spectrum of C = (1/m) sum_e Delta_e Delta_e^T is
gamma^2 in the balanced design), x = n m gamma^2.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def dof(d: int, k: int) -> int:
    """k (d - k): the dimension of the Grassmannian of k-planes in R^d, the chi-square's degrees of freedom."""
    return k * (d - k)


def n_star(d: int, k: int, m: int, gamma: float) -> float:
    """The transition scale n* = k (d - k) / (m gamma^2)."""
    return dof(d, k) / (m * gamma**2)


def risk_first_order(d: int, k: int, m: int, n, gamma: float):
    """E dist^2 to first order: k (d - k) / (n m gamma^2) = n* / n."""
    return n_star(d, k, m, gamma) / np.asarray(n, dtype=float)


def second_order_coefficient(d: int, k: int, m: int) -> float:
    """b in E dist^2 = (n*/n) (1 + b / (n gamma^2) + ...): b = (m - d) / m."""
    return (m - d) / m


def risk_second_order(d: int, k: int, m: int, n, gamma: float):
    """E dist^2 = (n*/n) (1 + (m - d) / (n m gamma^2)) + O(x^-3)."""
    t = 1.0 / (np.asarray(n, dtype=float) * gamma**2)
    return risk_first_order(d, k, m, n, gamma) * (1 + second_order_coefficient(d, k, m) * t)


def transition_cdf(eps: float, n, d: int, k: int, m: int, gamma: float):
    """P(dist^2 <= eps) ~ F_{chi2_K}(K eps / E dist^2), K = k (d - k): the scaled chi-square law."""
    K = dof(d, k)
    return stats.chi2.cdf(K * eps / risk_second_order(d, k, m, n, gamma), K)


def statistic_sd(n: int, w: np.ndarray) -> float:
    """The sd of each coordinate of S_e = (1/n) sum_i Y_i X_i: 1/sqrt(n), since Y_i^2 = 1."""
    return 1.0 / np.sqrt(n)


def risk_first_order_spectrum(k: int, m: int, n, c_eigs) -> float:
    """General design, first order: (k/n) tr (A A^T)^+ = (k / (n m)) sum_i 1/c_i, c_i the nonzero spectrum of C."""
    c = np.asarray(c_eigs, dtype=float)
    return k / (np.asarray(n, dtype=float) * m) * np.sum(1.0 / c)


# ---------------------------------------------------------------------------------------------- wrong theories


def wrong_risk_first_order_centred(d: int, k: int, m: int, n, gamma: float):
    """Counts the m - 1 degrees of freedom left by centring: k (d - k) / (n (m - 1) gamma^2)."""
    return dof(d, k) / (np.asarray(n, dtype=float) * (m - 1) * gamma**2)


def wrong_risk_first_order_kd(d: int, k: int, m: int, n, gamma: float):
    """k d in place of k (d - k): the dimension of the frame, not of the Grassmannian."""
    return k * d / (np.asarray(n, dtype=float) * m * gamma**2)


def wrong_risk_second_order_naive(d: int, k: int, m: int, n, gamma: float):
    """A naive second-order coefficient (m - 1) / m, counting only the m - 1 degrees of freedom of the noise."""
    t = 1.0 / (np.asarray(n, dtype=float) * gamma**2)
    return risk_first_order(d, k, m, n, gamma) * (1 + (m - 1) / m * t)


def wrong_risk_second_order_spurious(d: int, k: int, m: int, n, gamma: float):
    """Coefficient (m - r)/m = (m - d + k)/m: r = dim U in place of d, as if only the spurious directions counted."""
    t = 1.0 / (np.asarray(n, dtype=float) * gamma**2)
    return risk_first_order(d, k, m, n, gamma) * (1 + (m - d + k) / m * t)


def wrong_risk_second_order_plus_two(d: int, k: int, m: int, n, gamma: float):
    """Coefficient (m - d + 2)/m: the -2 of term (c), -2(k + 1 + r), miscounted as -2(k + r)."""
    t = 1.0 / (np.asarray(n, dtype=float) * gamma**2)
    return risk_first_order(d, k, m, n, gamma) * (1 + (m - d + 2) / m * t)


def wrong_risk_second_order_term_a(d: int, k: int, m: int, n, gamma: float):
    """Term (a) only: coefficient (2r + 3 - m)/m, the expansion of E tr (B B^T)^{-1} without (b), (c), (d)."""
    t = 1.0 / (np.asarray(n, dtype=float) * gamma**2)
    return risk_first_order(d, k, m, n, gamma) * (1 + (2 * (d - k) + 3 - m) / m * t)


def wrong_risk_first_order_spectrum_mean(k: int, m: int, n, c_eigs) -> float:
    """The balanced formula with gamma^2 the mean eigenvalue of C: k r^2 / (n m sum_i c_i)."""
    c = np.asarray(c_eigs, dtype=float)
    return k * c.size**2 / (np.asarray(n, dtype=float) * m * np.sum(c))


def wrong_risk_sqrt_n(d: int, k: int, m: int, n, gamma: float):
    """A 1/sqrt(n) rate."""
    return dof(d, k) / (np.sqrt(np.asarray(n, dtype=float)) * m * gamma**2)


def wrong_risk_no_environment_gain(d: int, k: int, m: int, n, gamma: float):
    """No gain from environments: k (d - k) / (n gamma^2)."""
    return dof(d, k) / (np.asarray(n, dtype=float) * gamma**2)


def wrong_risk_davis_kahan(d: int, k: int, m: int, n, gamma: float):
    """The Davis-Kahan folklore with a squared gap: k (d - k) / (n m gamma^4)."""
    return dof(d, k) / (np.asarray(n, dtype=float) * m * gamma**4)


def wrong_transition_cdf_wide(eps: float, n, d: int, k: int, m: int, gamma: float):
    """A transition twice as wide: the chi-square replaced by a normal with twice its variance."""
    K = dof(d, k)
    return stats.norm.cdf((K * eps / risk_second_order(d, k, m, n, gamma) - K) / (2 * np.sqrt(K)))


def wrong_transition_cdf_pooled(eps: float, n, d: int, k: int, m: int, gamma: float):
    """The threshold of one pooled environment: x = n gamma^2 in place of n m gamma^2."""
    K = dof(d, k)
    return stats.chi2.cdf(eps * np.asarray(n, dtype=float) * gamma**2, K)


def wrong_statistic_sd(n: int, w: np.ndarray) -> float:
    """Forgets Y^2 = 1 (treats Y X as X with a random sign on the noise only): sqrt((1 + |w|^2) / n)."""
    return float(np.sqrt((1 + np.sum(np.asarray(w) ** 2)) / n))
