"""The claims of chapter 'self-improvement-filtered-mle': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the
name first, then the measured data, then the wrong-theory hook ``theory=``. The tolerances (error
analysis) live here, the predictions in ``theory``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType, SimpleNamespace

import numpy as np
from scipy import stats

from theorylib.core.claims import DEFAULT_ALPHA, Claim, check_chi2, check_interval, check_lower, check_zscore
from theorylib.core.rates import fit_loglog, ols_slope

from . import theory as _theory

Theory = ModuleType | SimpleNamespace


def _z(measured: float, predicted: float, se: float) -> float:
    """A standardized residual; a non-finite prediction (a wrong theory out of its domain) gives inf."""
    if not se > 0:
        raise ValueError(f"standard error {se!r} must be > 0 (a cell without spread has no CLT mean)")
    z = (measured - float(predicted)) / se
    return z if np.isfinite(z) else float("inf")


def claim_acceptance(name: str, accepted: Mapping[tuple[float, int], np.ndarray], n_tasks: int, sigma: float,
                     tau: float, *, theory: Theory = _theory) -> Claim:
    """The accepted fraction of difficulty-k tasks at error e against J(e)^k, cell by cell, jointly.

    ``accepted[(e, k)]`` holds the accepted counts of R replicates of ``n_tasks`` tasks each. Each cell's
    fraction is a binomial mean of R n_tasks independent tasks (SE from the measured fraction); the cells
    are independent, so sum z^2 is chi^2 with one degree of freedom per cell under the theorem.
    """
    z, rows = [], []
    for (e, k), counts in accepted.items():
        c = np.asarray(counts, dtype=float)
        m = c.size * n_tasks
        p = float(c.sum() / m)
        p_bar = (c.sum() + 0.5) / (m + 1.0)  # shrunk: the SE stays > 0 in a cell with no or all acceptances
        se = float(np.sqrt(p_bar * (1 - p_bar) / m))
        pred = float(theory.acceptance_rate(e, sigma, tau, k))
        z.append(_z(p, pred, se))
        rows.append((e, k, p, pred, se))
    return check_chi2(name, z, "independent binomial cells; chi^2 with one dof per cell, alpha = 1e-3"
                      ).with_details(z=np.asarray(z), rows=rows)


def claim_noise_energy(name: str, runs: Sequence[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
                       d: int, sigma: float, tau: float, n_min: int, *, theory: Theory = _theory) -> Claim:
    """The noise |eta|^2 = |delta' - kappa delta|^2 of the updated replicates against its conditional mean
    E[|eta|^2 | N] = kappa sigma^2 (d + e/s^2) / (N - d - 1), averaged over the observed N.

    ``runs`` holds (e, theta0, theta1, theta_star, N) per cell. The differences |eta_r|^2 - E[|eta|^2 | N_r]
    are iid over replicates with mean 0 and finite variance (N >= n_min >= d + 4), so each cell's mean
    difference has CLT SE sd / sqrt(#updated); a cell with fewer than 30 updates is left out (a data-driven
    rule); independent cells, sum z^2 ~ chi^2.
    """
    shrink = float(theory.shrinkage(sigma, tau))
    z, rows = [], []
    for e, theta0, theta1, theta_star, N in runs:
        upd = np.asarray(N) >= n_min
        if upd.sum() < 30:
            continue
        eta2 = np.sum((theta1 - theta_star - shrink * (theta0 - theta_star)) ** 2, axis=1)[upd]
        pred = np.asarray(theory.conditional_noise(e, np.asarray(N)[upd], d, sigma, tau), dtype=float)
        diff = eta2 - pred
        se = float(diff.std(ddof=1) / np.sqrt(diff.size))
        ok = np.isfinite(se) and se > 0
        z.append(float(diff.mean() / se) if ok else float("inf"))
        rows.append((e, float(eta2.mean()), float(pred.mean()), se, int(upd.sum())))
    if not z:  # no cell can be tested at this setting: the claim fails rather than holding vacuously
        z = [float("inf")]
    return check_chi2(name, z, "CLT mean of iid differences per cell (finite variance for N >= d+4); "
                      "chi^2, alpha = 1e-3").with_details(z=np.asarray(z), rows=rows)


def claim_one_step_mean(name: str, runs: Sequence[tuple[float, Mapping[int, int], np.ndarray, np.ndarray,
                                                      np.ndarray, np.ndarray]],
                        d: int, sigma: float, tau: float, n_min: int, *, theory: Theory = _theory) -> Claim:
    """The mean of e_{t+1} over all replicates against the exact one-step mean (pmf of N, skip rule).

    ``runs`` holds (e, counts, theta0, theta1, theta_star, N) per cell; SE sd / sqrt(R) (e_{t+1} has finite
    variance since n_min >= d + 4); independent cells, sum z^2 ~ chi^2.
    """
    z, rows = [], []
    for e, counts, _, theta1, theta_star, _ in runs:
        e1 = np.sum((theta1 - theta_star) ** 2, axis=1)
        m = float(e1.mean())
        se = float(e1.std(ddof=1) / np.sqrt(e1.size))
        pred = float(theory.one_step_mean(e, counts, d, sigma, tau, n_min))
        z.append(_z(m, pred, se))
        rows.append((e, dict(counts), m, pred, se))
    return check_chi2(name, z, "CLT mean of R iid e_{t+1} per cell; chi^2, alpha = 1e-3"
                      ).with_details(z=np.asarray(z), rows=rows)


def claim_plateau_slope(name: str, n_sweep: Sequence[int], errors: np.ndarray, d: int, sigma: float, tau: float,
                        n_min: int, n_boot: int, rng: np.random.Generator, *, theory: Theory = _theory) -> Claim:
    """The log-log slope of the stationary mean error ebar(n) (per-replicate averages ``errors`` (R, len n))
    against the slope of the mean-field fixed points e*_n over the same n: the 99.9% bootstrap interval
    over replicates (independent per n) must contain the predicted slope."""
    ns = np.asarray(n_sweep, dtype=float)
    fit = fit_loglog(ns, replicates=errors, paired=False, n_boot=n_boot, alpha=DEFAULT_ALPHA, rng=rng)
    fixed = np.array([theory.mean_field_fixed_point(int(n), 1, d, sigma, tau, n_min) for n in n_sweep])
    if np.all(np.isfinite(fixed)) and np.all(fixed > 0):
        pred, _ = ols_slope(np.log(ns), np.log(fixed))
    else:
        pred = float("nan")
    return check_interval(name, fit.slope, float(pred), fit.ci_low, fit.ci_high,
                          "99.9% percentile bootstrap over independent replicates"
                          ).with_details(fit=fit, fixed=fixed)


def claim_stall(name: str, updates: np.ndarray, e0: float, n: int, K: int, d: int, sigma: float, tau: float,
                T: int, n_min: int, *, theory: Theory = _theory) -> Claim:
    """The fraction of hard-only replicates with no update in all T rounds against q^T (exact).

    A binomial mean of R independent replicates; its SE uses the shrunk fraction (x + 1/2)/(R + 1), which
    stays > 0 when no or every replicate stalls (a wrong theory must fail the claim, never crash it)."""
    u = np.asarray(updates)
    R = u.size
    stalled = int(np.sum(u == 0))
    p_bar = (stalled + 0.5) / (R + 1.0)
    se = float(np.sqrt(p_bar * (1 - p_bar) / R))
    pred = float(theory.stall_probability(e0, n, K, d, sigma, tau, T, n_min))
    return check_zscore(name, stalled / R, pred, se, "binomial mean of R replicates, 3.29 SE"
                        ).with_details(se=se, stalled=stalled)


def claim_curriculum(name: str, reward_a: np.ndarray, reward_b: np.ndarray, schedule_a: str | Mapping[int, int],
                     schedule_b: str | Mapping[int, int], e0: float, T: int, n: int, ks: tuple[int, ...],
                     d: int, sigma: float, tau: float, n_min: int, *, theory: Theory = _theory) -> Claim:
    """Schedule a against schedule b on the measured hard-task reward after T rounds (Welch z of the
    difference of two independent means over replicates), in the direction the theory predicts.

    The prediction is the sign of the mean-field gap J(e_T^a)^K - J(e_T^b)^K (K = max ks). A predicted
    gain must show as z >= z_{1 - alpha} (one-sided, alpha = 1e-3); a predicted gap of zero (below 1e-3)
    as |z| <= 3.29; a predicted loss as z <= -z_{1 - alpha}.
    """
    a, b = np.asarray(reward_a, dtype=float), np.asarray(reward_b, dtype=float)
    se = float(np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))
    if not se > 0:
        raise ValueError("the two schedules' rewards have zero variance: no z statistic")
    z = float((a.mean() - b.mean()) / se)
    K = max(ks)
    ea = theory.mean_field_path(e0, schedule_a, T, n, ks, d, sigma, tau, n_min)[-1]
    eb = theory.mean_field_path(e0, schedule_b, T, n, ks, d, sigma, tau, n_min)[-1]
    gap = float(theory.acceptance_rate(ea, sigma, tau, K) - theory.acceptance_rate(eb, sigma, tau, K))
    zc = float(stats.norm.isf(DEFAULT_ALPHA))
    why = f"Welch z of two independent means; one-sided alpha = 1e-3 (z >= {zc:.2f})"
    if not np.isfinite(gap):
        c = check_lower(name, z, float("inf"), why)
    elif gap > 1e-3:
        c = check_lower(name, z, zc, why)
    elif gap < -1e-3:
        c = check_lower(name, -z, zc, why)
    else:
        c = check_zscore(name, z, 0.0, 1.0, "no gap predicted: |z| <= 3.29")
    return c.with_details(z=z, gap=gap, diff=float(a.mean() - b.mean()), se=se)
