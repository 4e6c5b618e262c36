"""The theory of chapter 'self-improvement-filtered-mle': derived formulas, predictions and named wrong theories.

Linear-Gaussian policy N(theta^T x, sigma^2), prompts x ~ N(0, I_d), soft verifier
exp(-(y - theta*^T x)^2 / (2 tau^2)); delta = theta - theta*, e = |delta|^2, s^2 = sigma^2 + tau^2,
kappa = tau^2 / s^2. Pure functions, no random numbers. Every claim reads its predictions from this
module; a wrong theory ``wrong_...`` has the signature of the function it replaces.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy import optimize, stats

from theorylib.core.validation import check_int, check_positive, check_positive_int, check_real


def constants(sigma: float, tau: float) -> tuple[float, float]:
    """(kappa, s^2) with s^2 = sigma^2 + tau^2 and kappa = tau^2 / s^2 (the theorem on the filtered law)."""
    sigma, tau = check_positive("sigma", sigma), check_positive("tau", tau)
    s2 = sigma**2 + tau**2
    return tau**2 / s2, s2


def acceptance_rate(e: float | np.ndarray, sigma: float, tau: float, k: int = 1) -> np.ndarray:
    """J(e)^k with J(e) = E_x P(accept | x) = sqrt(kappa) (1 + e / s^2)^(-1/2): a k-task is accepted
    iff its k independent answers are."""
    e = np.asarray(e, dtype=float)
    if np.any(~np.isfinite(e)) or np.any(e < 0):
        raise ValueError(f"e = {e!r} must be finite and >= 0")
    k = check_positive_int("k", k)
    kappa, s2 = constants(sigma, tau)
    return (np.sqrt(kappa) / np.sqrt(1.0 + e / s2)) ** k


def wrong_acceptance_rate_plugin(e: float | np.ndarray, sigma: float, tau: float, k: int = 1) -> np.ndarray:
    """Wrong: the acceptance at a typical prompt, sqrt(kappa) exp(-e / (2 s^2)), with no average over x."""
    kappa, s2 = constants(sigma, tau)
    return (np.sqrt(kappa) * np.exp(-np.asarray(e, dtype=float) / (2 * s2))) ** k


def wrong_acceptance_rate_no_temperature(e: float | np.ndarray, sigma: float, tau: float,
                                         k: int = 1) -> np.ndarray:
    """Wrong: the sqrt(kappa) factor of the sampling temperature dropped, (1 + e / s^2)^(-k/2)."""
    _, s2 = constants(sigma, tau)
    return (1.0 + np.asarray(e, dtype=float) / s2) ** (-k / 2)


def shrinkage(sigma: float, tau: float) -> float:
    """The population MLE on the filtered law maps delta to kappa delta (whatever the difficulty)."""
    return constants(sigma, tau)[0]


def noise_energy(e: float, d: int, sigma: float, tau: float) -> float:
    """(N - d - 1) E[|eta|^2 | N] = kappa sigma^2 (d + e / s^2), eta = delta' - kappa delta the least-squares
    noise (inverse-Wishart mean with tr Sigma_acc^{-1} = d + e / s^2)."""
    kappa, s2 = constants(sigma, tau)
    return kappa * sigma**2 * (d + e / s2)


def conditional_noise(e: float, N: np.ndarray, d: int, sigma: float, tau: float) -> np.ndarray:
    """E[|eta|^2 | N] = kappa sigma^2 (d + e / s^2) / (N - d - 1) for N >= d + 2 accepted pairs."""
    N = np.asarray(N, dtype=float)
    return noise_energy(e, d, sigma, tau) / (N - d - 1.0)


def wrong_conditional_noise_no_tilt(e: float, N: np.ndarray, d: int, sigma: float, tau: float) -> np.ndarray:
    """Wrong: accepted prompts treated as N(0, I), kappa sigma^2 d / (N - d - 1) (no tilt term)."""
    kappa, _ = constants(sigma, tau)
    return kappa * sigma**2 * d / (np.asarray(N, dtype=float) - d - 1.0)


def wrong_conditional_noise_unfiltered_variance(e: float, N: np.ndarray, d: int, sigma: float,
                                                tau: float) -> np.ndarray:
    """Wrong: the filtered answers keep the policy's variance sigma^2 instead of kappa sigma^2."""
    _, s2 = constants(sigma, tau)
    return sigma**2 * (d + e / s2) / (np.asarray(N, dtype=float) - d - 1.0)


def wrong_conditional_noise_plain_n(e: float, N: np.ndarray, d: int, sigma: float, tau: float) -> np.ndarray:
    """Wrong: the classical large-N factor 1/N instead of the inverse-Wishart 1/(N - d - 1)."""
    return noise_energy(e, d, sigma, tau) / np.asarray(N, dtype=float)


def _check_counts(counts: Mapping[int, int]) -> dict[int, int]:
    if not isinstance(counts, Mapping) or not counts:
        raise ValueError(f"counts = {counts!r} must be a non-empty mapping {{k: n_k}}")
    out = {check_positive_int("k", k): check_int(f"n_{k}", v, low=0) for k, v in sorted(counts.items())}
    if sum(out.values()) < 1:
        raise ValueError(f"counts = {counts!r} must hold at least one task")
    return out


def pairs_pmf(e: float, counts: Mapping[int, int], sigma: float, tau: float) -> np.ndarray:
    """The exact law of N = sum_k k M_k, M_k ~ Bin(n_k, J(e)^k) independent: pmf on 0..sum_k k n_k."""
    counts = _check_counts(counts)
    e = check_real("e", e, low=0.0)
    pmf = np.ones(1)
    for k, nk in counts.items():
        p = float(acceptance_rate(e, sigma, tau, k))
        part = np.zeros(k * nk + 1)
        part[::k] = stats.binom.pmf(np.arange(nk + 1), nk, p)
        pmf = np.convolve(pmf, part)
    return pmf


def one_step_mean(e: float, counts: Mapping[int, int], d: int, sigma: float, tau: float, n_min: int) -> float:
    """E[e_{t+1} | e_t = e] = sum_{N >= n_min} P(N) [kappa^2 e + kappa sigma^2 (d + e/s^2) / (N - d - 1)]
    + P(N < n_min) e (skip rule)."""
    d = check_positive_int("d", d)
    n_min = check_int("n_min", n_min, low=d + 2)
    kappa, _ = constants(sigma, tau)
    pmf = pairs_pmf(e, counts, sigma, tau)
    N = np.arange(pmf.size)
    upd = N >= n_min
    pi = pmf[upd].sum()
    return float(pi * kappa**2 * e + (1.0 - pi) * e + np.sum(pmf[upd] * conditional_noise(e, N[upd], d, sigma, tau)))


def wrong_one_step_mean_no_filter_loss(e: float, counts: Mapping[int, int], d: int, sigma: float, tau: float,
                                       n_min: int) -> float:
    """Wrong: every one of the sum_k k n_k sampled pairs is used (no data lost to the filter)."""
    counts = _check_counts(counts)
    kappa, _ = constants(sigma, tau)
    N = sum(k * nk for k, nk in counts.items())
    return float(kappa**2 * e + noise_energy(e, d, sigma, tau) / (N - d - 1.0))


def mean_field_fixed_point(n: int, k: int, d: int, sigma: float, tau: float, n_min: int) -> float:
    """The fixed point e*_n of the mean map F_n(e) = one_step_mean(e, {k: n}), by brentq on [0, 2 d tau^2].

    The bracket: for N >= d + 2, kappa^2 e + kappa sigma^2 (d + e/s^2)/(N - d - 1) - e
    <= -(1 - kappa) e + kappa sigma^2 d < 0 once e > tau^2 d, so F_n(e) < e there whenever an update is
    possible; nan if none is (F_n = identity)."""
    n, k = check_positive_int("n", n), check_positive_int("k", k)
    hi = 2.0 * d * tau**2

    def gap(e: float) -> float:
        return one_step_mean(e, {k: n}, d, sigma, tau, n_min) - e

    if not gap(hi) < 0:
        return float("nan")
    return float(optimize.brentq(gap, 0.0, hi))


def wrong_mean_field_fixed_point(n: int, k: int, d: int, sigma: float, tau: float, n_min: int) -> float:
    """Wrong: a square-root (TV/Hellinger-type) plateau, kappa sigma^2 d / ((1 - kappa^2) sqrt(n))."""
    kappa, _ = constants(sigma, tau)
    return kappa * sigma**2 * d / ((1 - kappa**2) * np.sqrt(n))


def data_optimal_difficulty(J: float, ks: tuple[int, ...]) -> int:
    """argmax_k k J^k over ks, ties to the smaller k: the difficulty that maximizes E N per task."""
    J = check_real("J", J, low=0.0, high=1.0)
    ks = tuple(sorted(check_positive_int("k", k) for k in ks))
    if not ks:
        raise ValueError("ks must not be empty")
    score = [k * J**k for k in ks]
    return ks[int(np.argmax(score))]


def stall_probability(e0: float, n: int, K: int, d: int, sigma: float, tau: float, T: int, n_min: int) -> float:
    """P(no update in T rounds) under pure difficulty K = q^T, q = P(K Bin(n, J(e0)^K) < n_min): while no
    update occurs theta stays at theta_0, so the rounds are independent with the same q."""
    T = check_positive_int("T", T)
    pmf = pairs_pmf(e0, {K: n}, sigma, tau)
    q = float(pmf[:n_min].sum())
    return q**T


def wrong_stall_probability(e0: float, n: int, K: int, d: int, sigma: float, tau: float, T: int,
                            n_min: int) -> float:
    """Wrong: 'hard-only trains fine' (population theory: delta -> kappa delta every round, never a stall)."""
    return 0.0


def mean_field_path(e0: float, schedule: str | Mapping[int, int], T: int, n: int, ks: tuple[int, ...],
                    d: int, sigma: float, tau: float, n_min: int) -> np.ndarray:
    """The mean-field learning curve e_{t+1} = F(e_t) (the exact one-step mean map iterated), e_0..e_T.

    ``schedule`` is a fixed design {k: n_k} used every round, or 'greedy': n tasks of difficulty min ks in
    round 0, then of the data-optimal difficulty k*(J(e_t)) (first-order one-step optimal)."""
    T = check_positive_int("T", T)
    if schedule != "greedy" and not isinstance(schedule, Mapping):
        raise ValueError(f"schedule = {schedule!r} must be 'greedy' or a mapping {{k: n_k}}")
    path = [check_real("e0", e0, low=0.0)]
    k = min(ks)
    for _ in range(T):
        counts = {k: n} if schedule == "greedy" else schedule
        path.append(one_step_mean(path[-1], counts, d, sigma, tau, n_min))
        k = data_optimal_difficulty(float(acceptance_rate(path[-1], sigma, tau)), ks)
    return np.asarray(path)


def wrong_mean_field_path_population(e0: float, schedule: str | Mapping[int, int], T: int, n: int,
                                     ks: tuple[int, ...], d: int, sigma: float, tau: float,
                                     n_min: int) -> np.ndarray:
    """Wrong: 'difficulty is irrelevant': the population map delta -> kappa delta, e_t = kappa^(2t) e0."""
    kappa, _ = constants(sigma, tau)
    return e0 * kappa ** (2.0 * np.arange(T + 1))
