"""The theory of chapter 'voting-margin-bounds': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. Every claim reads its prediction from this module; a wrong theory
``wrong_...`` has the signature of the function it replaces and is passed to a claim as
``theory=variant(theory, f=theory.wrong_f)``.

Notation: H a finite class of {-1, +1}-valued hypotheses closed under negation, |H| = 2 N0;
gamma = y f(x) the margin of a voting classifier f in conv(H); k the size of a sparsification.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def sparsified_margin_pmf(gamma: float, k: int) -> np.ndarray:
    """Law of B = k (y g(x) + 1)/2 for the k-average g of hypotheses drawn iid from alpha.

    B ~ Bin(k, (1 + gamma)/2) exactly, gamma = sum_h alpha_h y h(x) (the sparsification lemma).
    """
    return stats.binom.pmf(np.arange(k + 1), k, (1 + gamma) / 2)


def hoeffding_tail(gap: float, k: int) -> float:
    """Hoeffding for the mean of k iid [-1, 1] variables: P(mean - E <= -gap) <= exp(-k gap^2 / 2)."""
    return np.exp(-k * gap**2 / 2)


def chernoff_deviation(p: float, n: int, log_term: float) -> float:
    """Multiplicative Chernoff: P(p_hat <= p - t) <= exp(-n t^2 / (2 p)); t = sqrt(2 p L / n) for L = ln 1/delta."""
    return np.sqrt(2 * p * log_term / n)


def relative_deviation_bound(phat: float, n: int, log_term: float) -> float:
    """The inverted Chernoff bound: p <= p_hat + sqrt(2 p_hat L / n) + 2 L / n (on p_hat > p - sqrt(2pL/n))."""
    return phat + np.sqrt(2 * phat * log_term / n) + 2 * log_term / n


def zero_count_loss() -> float:
    """The factor by which the inverted bound exceeds the exact upper limit at p_hat = 0: 2.

    At p_hat = 0 the bound is 2 L / n (Chernoff at full deviation t = p gives exp(-n p / 2)), while the
    largest p with (1 - p)^n >= delta is 1 - exp(-L / n) = L/n (1 - O(L/n)): the exponent np/2 is half the
    exact -n ln(1 - p) >= n p.
    """
    return 2.0


def union_log_term(k: int, H: int, delta: float) -> float:
    """Lambda_k = k ln|H| + ln(k (k + 1)^2 / delta): the log of the union over C_k, margin levels and k."""
    return k * np.log(H) + np.log(k * (k + 1) ** 2 / delta)


def thm_bound_at_k(tau: float, theta: float, n: int, H: int, delta: float, k: int) -> float:
    """The explicit relative margin bound at sparsification size k (an int or an array of them).

    L_D(f) <= tau + 2 eta_k + sqrt(2 (tau + eta_k) Lambda_k / n) + 2 Lambda_k / n, eta_k = exp(-k theta^2/8).
    """
    eta = hoeffding_tail(theta / 2, k)
    return eta + relative_deviation_bound(tau + eta, n, union_log_term(k, H, delta))


def thm_bound(tau: float, theta: float, n: int, H: int, delta: float, k_max: int = 10_000) -> float:
    """The bound minimized over k = 1..k_max (the guarantee holds for all k at once)."""
    return float(np.min(thm_bound_at_k(tau, theta, n, H, delta, np.arange(1, k_max + 1))))


def margin_scale(n: int, N0: int) -> float:
    """The attainable-margin scale sqrt(ln(N0/n) / n) of the random-label class (theta* is of this order)."""
    return float(np.sqrt(np.log(N0 / n) / n))


# ------------------------------------------------------------------------------------------------
# named wrong theories


def wrong_sparsified_margin_pmf(gamma: float, k: int) -> np.ndarray:
    """Wrong: B ~ Bin(k, |gamma|) (the margin read as a success probability)."""
    return stats.binom.pmf(np.arange(k + 1), k, min(abs(gamma), 1.0))


def wrong_hoeffding_tail(gap: float, k: int) -> float:
    """Wrong: exp(-2 k gap^2), Hoeffding's constant for [0, 1] variables applied to [-1, 1] ones."""
    return np.exp(-2 * k * gap**2)


def wrong_chernoff_deviation(p: float, n: int, log_term: float) -> float:
    """Wrong: sqrt(p L / (2 n)), the additive (Hoeffding) constant moved into the relative deviation."""
    return np.sqrt(p * log_term / (2 * n))


def wrong_relative_deviation_bound(phat: float, n: int, log_term: float) -> float:
    """Wrong: p_hat + sqrt(2 p_hat L / n), the deviation evaluated at p_hat without solving for p."""
    return phat + np.sqrt(2 * phat * log_term / n)


def wrong_relative_deviation_additive(phat: float, n: int, log_term: float) -> float:
    """Wrong (valid but loose): p_hat + sqrt(L / (2 n)), the additive Hoeffding inversion, blind to p_hat."""
    return phat + np.sqrt(log_term / (2 * n))


def wrong_union_log_term(k: int, H: int, delta: float) -> float:
    """Wrong: k ln|H| + ln(1/delta), the union over sizes k and margin levels forgotten."""
    return k * np.log(H) + np.log(1 / delta)


def wrong_thm_bound_at_k(tau: float, theta: float, n: int, H: int, delta: float, k: int) -> float:
    """Wrong: eta_k = exp(-k theta^2 / 2), the sparsification tail taken at the full margin theta."""
    eta = np.exp(-k * theta**2 / 2)
    return eta + relative_deviation_bound(tau + eta, n, union_log_term(k, H, delta))


def wrong_thm_bound(tau: float, theta: float, n: int, H: int, delta: float, k_max: int = 10_000) -> float:
    """Wrong: tau + ln|H| / (theta n), a capacity ln|H|/theta instead of ln|H|/theta^2."""
    return float(tau + np.log(H) / (theta * n))


def wrong_thm_bound_sqrtlog(tau: float, theta: float, n: int, H: int, delta: float, k_max: int = 10_000) -> float:
    """Wrong: tau + sqrt(ln|H|) / (theta^2 n), a capacity too small by a factor sqrt(ln|H|)."""
    return float(tau + np.sqrt(np.log(H)) / (theta**2 * n))


def wrong_margin_scale(n: int, N0: int) -> float:
    """Wrong: no logarithm, theta* of order n^(-1/2)."""
    return float(1 / np.sqrt(n))
