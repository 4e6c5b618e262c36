"""The theory of chapter 'lowrank-residual-coresets': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. Every claim reads its prediction from this module; a wrong theory
``wrong_...`` has the signature of the function it replaces and is passed to a claim as
``theory=variant(theory, f=theory.wrong_f)``.
"""

from __future__ import annotations

import math

import numpy as np

from theorylib.core.validation import check_array, check_int, check_positive_int, check_real


def _nonnegative(name: str, x: np.ndarray) -> np.ndarray:
    x = check_array(name, x, ndim=1)
    if np.any(x < 0):
        raise ValueError(f"{name} must have non-negative entries")
    return x


# --------------------------------------------------------------------------------------------------
# volume sampling


def elementary_symmetric(x: np.ndarray, j: int) -> float:
    """e_j(x) = sum over j-subsets S of prod_{i in S} x_i, by the recursion e_j <- e_j + x_i e_{j-1}."""
    x = check_array("x", x, ndim=1)
    j = check_int("j", j, low=0)
    e = np.zeros(j + 1)
    e[0] = 1.0
    for xi in x:
        e[1:] = e[1:] + xi * e[:-1]
    return float(e[j])


def volume_sampling_expectation(sig2: np.ndarray, k: int) -> float:
    """E |A - pi_T(A)|_F^2 under volume sampling of k rows: (k + 1) e_{k+1}(sigma^2) / e_k(sigma^2)."""
    return (k + 1) * elementary_symmetric(sig2, k + 1) / elementary_symmetric(sig2, k)


def volume_sampling_bound(sig2: np.ndarray, k: int) -> float:
    """The bound (k + 1) Phi_k, Phi_k = sum_{i > k} sigma_i^2 (sigma^2 sorted decreasingly)."""
    s = np.sort(_nonnegative("sig2", sig2))[::-1]
    return (k + 1) * float(s[k:].sum())


def wrong_volume_sampling_expectation(sig2: np.ndarray, k: int) -> float:
    """A wrong theory: the bound is attained, E = (k + 1) Phi_k."""
    s = np.sort(np.asarray(sig2, dtype=float))[::-1]
    return (k + 1) * float(s[k:].sum())


def wrong_elementary_symmetric(x: np.ndarray, j: int) -> float:
    """A wrong theory of the Gram sum: (sum x)^j / j! (all j-fold products, repeated indices included)."""
    return float(np.sum(x)) ** j / math.factorial(j)


def wrong_volume_sampling_bound(sig2: np.ndarray, k: int) -> float:
    """A wrong theory: volume sampling is as good as the best rank-k approximation, E <= Phi_k."""
    s = np.sort(np.asarray(sig2, dtype=float))[::-1]
    return float(s[k:].sum())


# --------------------------------------------------------------------------------------------------
# the residual-sampling estimator


def estimator_mean(interp_mean: float, residual_mean: float) -> float:
    """E mu_hat = (1/n) sum (C l_T)_i + (1/n) sum e_i = mu."""
    return interp_mean + residual_mean


def wrong_estimator_mean(interp_mean: float, residual_mean: float) -> float:
    """A wrong theory: the residual correction averages out, E mu_hat = (1/n) sum (C l_T)_i."""
    return interp_mean


def estimator_variance(e: np.ndarray, p: np.ndarray, m: int) -> float:
    """Var of (1/m) sum_t e_{i_t} / (n p_{i_t}): (1/m) [sum_i e_i^2 / (n^2 p_i) - (sum_i e_i / n)^2].

    Points with p_i = 0 are never drawn (and have e_i = 0).
    """
    e, p = check_array("e", e, ndim=1), _nonnegative("p", p)
    m = check_positive_int("m", m)
    n = e.size
    pos = p > 0
    second = float(np.sum(e[pos] ** 2 / p[pos])) / n**2
    first = float(np.sum(e[pos])) / n
    return (second - first**2) / m


def wrong_estimator_variance(e: np.ndarray, p: np.ndarray, m: int) -> float:
    """A wrong theory: the uncentred second moment, (1/m) sum_i e_i^2 / (n^2 p_i)."""
    e, p = np.asarray(e, dtype=float), np.asarray(p, dtype=float)
    pos = p > 0
    return float(np.sum(e[pos] ** 2 / p[pos])) / e.size**2 / m


def residual_rmse(ell: np.ndarray, e: np.ndarray, p: np.ndarray, m: int) -> float:
    """RMSE of the unbiased residual-sampling estimate: sqrt(Var mu_hat)."""
    return math.sqrt(estimator_variance(e, p, m))


def wrong_residual_rmse(ell: np.ndarray, e: np.ndarray, p: np.ndarray, m: int) -> float:
    """A wrong theory: residual sampling errs like uniform sampling of the losses, sd(l) / sqrt(m)."""
    return float(np.std(ell)) / math.sqrt(m)


def rmse_exponent_in_m() -> float:
    """RMSE = sqrt(V_1 / m): the exponent of m is -1/2 (coreset size 1/eps^2)."""
    return -0.5


def wrong_rmse_exponent_in_m() -> float:
    """A wrong theory: the error falls like 1/m (coreset size 1/eps)."""
    return -1.0


def summand_bound(lam: float, q: np.ndarray) -> float:
    """R = lam sum q / n: every summand e_I / (n p_I) of the residual estimate lies in [-R, R]."""
    lam = check_real("lam", lam, low=0.0)
    return lam * float(np.mean(_nonnegative("q", q)))


def wrong_summand_bound(lam: float, q: np.ndarray) -> float:
    """A wrong theory that forgets the importance weight 1/p_i: |e_I| / n <= lam max q / n."""
    return lam * float(np.max(q)) / np.size(q)


def sensitivity_range_bound(mu: float, lam: float, q: np.ndarray) -> float:
    """G / n <= mu + 2 lam sum q / n: every summand l_I / (n p_I) of sensitivity sampling lies in [0, G/n]."""
    return mu + 2 * summand_bound(lam, q)


def wrong_sensitivity_range_bound(mu: float, lam: float, q: np.ndarray) -> float:
    """A wrong theory: a purely relative range, G / n <= mu."""
    return mu
