"""The claims of chapter 'alpha-divergence-rff-critic': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the
name first, then the measured data, then the wrong-theory hook ``theory=``.
Tolerances and error budgets live here, not in the theory.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
from scipy import stats

from theorylib.core.claims import DEFAULT_ALPHA, Claim, check_absolute, check_chi2, check_interval
from theorylib.core.rates import fit_loglog

from . import theory as _theory

Theory = ModuleType | SimpleNamespace

# Relative accuracy of the quadratures: quad runs at epsrel 1e-13 per factor and dblquad at 1e-12; the
# budget allows two orders of magnitude for the error estimate's own error.
QUAD_RTOL = 1e-9
# C4: the linearization error over a window of errors in [1e-12, 1e-8] is O(1e-8) per step, and the
# error floor (round-off in theta*, a few 1e-15) moves the endpoint error by at most a few 1e-3
# relative, i.e. a few 1e-4 in a geometric mean over >= 10 steps; 1e-3 covers both (a power of ten, so the
# table's decade display of this fp-style claim shows the tolerance itself).
RATE_TOL = 1e-3


def claim_closed_form(name: str, cases: Sequence[dict[str, Any]], *, theory: Theory = _theory) -> Claim:
    """The Gaussian closed form of D_alpha against adaptive quadrature, worst relative error <= QUAD_RTOL.

    ``cases``: dicts with keys alpha, mP, SP, mQ, SQ and ``quad`` (the quadrature value).
    """
    rel = [abs(c["quad"] / theory.alpha_div_gaussian(c["alpha"], c["mP"], c["SP"], c["mQ"], c["SQ"]) - 1)
           for c in cases]
    worst = float(np.max(rel)) if np.all(np.isfinite(rel)) else float("inf")
    return check_absolute(name, worst, 0.0, QUAD_RTOL, fp=True,
                          why="quadrature at epsrel <= 1e-12; the closed form is exact up to rounding"
                          ).with_details(rel=rel)


def claim_oracle(name: str, log_ratios: Sequence[tuple[np.ndarray, np.ndarray]],
                 cases: Sequence[dict[str, Any]], *, theory: Theory = _theory) -> Claim:
    """The variational form at the oracle critic, mean_P g* - mean_Q f*(g*) with g* = f'(p/q), against the
    closed form D_alpha, jointly over the cases.

    ``log_ratios[i]`` = (log p/q on the P-sample, log p/q on the Q-sample) for ``cases[i]``; z_i uses the
    CLT standard error of the difference of two independent means; the chi^2 rule at level 1e-3.
    """
    z, est, se = [], [], []
    for (lrP, lrQ), c in zip(log_ratios, cases, strict=True):
        a = c["alpha"]
        gP = theory.fprime_log(lrP, a)
        fQ = theory.fconj(theory.fprime_log(lrQ, a), a)
        e = float(gP.mean() - fQ.mean())
        s = float(np.sqrt(gP.var(ddof=1) / gP.size + fQ.var(ddof=1) / fQ.size))
        pred = theory.alpha_div_gaussian(a, c["mP"], c["SP"], c["mQ"], c["SQ"])
        z.append((e - pred) / s if np.isfinite(e) and s > 0 else np.inf)
        est.append(e)
        se.append(s)
    return check_chi2(name, z, why="CLT for two independent sample means, one residual per alpha"
                      ).with_details(est=est, se=se, z=z)


def chi2_variance_interval(s2: float, reps: int, alpha: float = DEFAULT_ALPHA) -> tuple[float, float]:
    """The (1 - alpha) interval for a normal variance from a sample variance s2 over ``reps`` draws."""
    k = reps - 1
    return k * s2 / stats.chi2.isf(alpha / 2, k), k * s2 / stats.chi2.ppf(alpha / 2, k)


def claim_sharp_variance(name: str, estimates: np.ndarray, n: int, theta_pop: np.ndarray, FP_pop: np.ndarray,
                         FQ_pop: np.ndarray, alpha: float, *, theory: Theory = _theory) -> Claim:
    """n Var(D_hat_n) over replicates against sigma_inf^2 from an independent population sample.

    The interval is the 99.9% chi^2 interval of a normal variance with R - 1 degrees of freedom.
    """
    est = np.asarray(estimates, float)
    s2 = float(n * est.var(ddof=1))
    lo, hi = chi2_variance_interval(s2, est.size)
    pred = theory.asymptotic_variance(theta_pop, FP_pop, FQ_pop, alpha)
    return check_interval(name, s2, pred, lo, hi,
                          why=f"chi^2_{est.size - 1} interval of a sample variance (CLT for D_hat_n)")


def claim_sharp_variance_radii(name: str, estimates: np.ndarray, n: int, thetas: Sequence[np.ndarray],
                               FP_pop: np.ndarray, FQ_pop: np.ndarray, alpha: float, *,
                               theory: Theory = _theory) -> Claim:
    """n Var(D_hat_n) / sigma_inf^2(R) = 1 at every radius of a list, each radius with its own maximizer.

    ``estimates``: (reps, K), column k the replicates at the radius of ``thetas[k]`` (independent streams).
    Each ratio's interval is the chi^2_{reps-1} interval at level 1 - alpha/K (Bonferroni over the K radii,
    family false-alarm level alpha); the claim shows the radius whose ratio lies farthest from 1 in units of its
    interval and fails if any interval misses 1.
    """
    est = np.asarray(estimates, float)
    reps, K = est.shape
    level = DEFAULT_ALPHA / K
    rows = []
    for k in range(K):
        pred = theory.asymptotic_variance(thetas[k], FP_pop, FQ_pop, alpha)
        ratio = float(n * est[:, k].var(ddof=1) / pred) if np.isfinite(pred) and pred > 0 else np.inf
        if not np.isfinite(ratio):
            rows.append((np.inf, ratio, 0.0, 0.0))
            continue
        lo, hi = chi2_variance_interval(ratio, reps, alpha=level)
        # the distance of 1 from the ratio, in units of the interval's half on that side
        dist = (ratio - 1) / (ratio - lo) if ratio >= 1 else (1 - ratio) / (hi - ratio)
        rows.append((dist, ratio, lo, hi))
    dist, ratio, lo, hi = max(rows, key=lambda r: r[0])
    if not np.isfinite(ratio):
        return check_interval(name, ratio, 1.0, 0.0, 0.0, why="non-finite prediction", alpha=level)
    return check_interval(name, ratio, 1.0, lo, hi, alpha=level,
                          why=f"chi^2_{reps - 1} intervals of the variance ratios, Bonferroni over {K} radii"
                          ).with_details(ratios=[r[1] for r in rows])


def _rate_claim(name: str, x: Sequence[float], sq: np.ndarray, paired: bool, predicted: float, n_boot: int,
                rng: np.random.Generator, why: str) -> Claim:
    fit = fit_loglog(np.asarray(x, float), replicates=sq, paired=paired, n_boot=n_boot, rng=rng)
    return check_interval(name, fit.slope / 2, predicted, fit.ci_low / 2, fit.ci_high / 2, why=why
                          ).with_details(fit=fit)


def claim_statistical_rate(name: str, n_list: Sequence[int], estimates: np.ndarray, n_boot: int,
                           rng: np.random.Generator, *, theory: Theory = _theory) -> Claim:
    """The exponent of sd(D_hat_n) in n against the sharp law's -1/2.

    ``estimates``: (reps, len(n_list)), independent columns. Half the log-log slope of the squared
    deviations from each column's mean, with its 99.9% bootstrap interval.
    """
    est = np.asarray(estimates, float)
    sq = (est - est.mean(axis=0)) ** 2
    return _rate_claim(name, n_list, sq, False, theory.statistical_exponent(), n_boot, rng,
                       why="99.9% bootstrap interval over replicates, columns resampled independently")


def claim_rff_rate(name: str, D_list: Sequence[int], errors: np.ndarray, n_boot: int, rng: np.random.Generator,
                   *, theory: Theory = _theory) -> Claim:
    """The exponent of the RMS of V_D - V_H in D against -1/2.

    ``errors``: (draws, len(D_list)), one row per nested frequency draw (rows resampled whole).
    """
    sq = np.asarray(errors, float) ** 2
    return _rate_claim(name, D_list, sq, True, theory.rff_exponent(), n_boot, rng,
                       why="99.9% bootstrap interval over frequency draws (paired rows)")


# A solver's maximizer on the sphere has norm R to about 1e-15 relative; 1e-9 separates it from an interior one.
ON_SPHERE_RTOL = 1e-9


def claim_local_contraction(name: str, path: np.ndarray, theta_star: np.ndarray, window: tuple[int, int] | None,
                            FP: np.ndarray, FQ: np.ndarray, R: float, alpha: float, eta: float, *,
                            interior: bool = False, theory: Theory = _theory) -> Claim:
    """The measured geometric-mean contraction of ||theta_t - theta*|| over the window against the
    linearized map applied to the measured error at the window's start, within RATE_TOL.

    ``interior=True`` makes a maximizer strictly inside the ball a premise: on the sphere the claim fails,
    since it would then test the active-constraint map instead of the curvature of J_n.
    """
    err = np.linalg.norm(np.asarray(path) - theta_star, axis=1)
    nan = float("nan")
    if interior and not np.linalg.norm(theta_star) < R * (1 - ON_SPHERE_RTOL):
        return check_absolute(name, nan, 0.0, RATE_TOL, fp=True, why="premise failed: the maximizer is on the "
                              "sphere, not inside the ball").with_details(rho=nan, err=err, rate=nan,
                                                                           rate_predicted=nan)
    if window is None:  # the iterates never entered the window: no linear rate was observed
        return check_absolute(name, nan, 0.0, RATE_TOL, fp=True, why="no contraction window reached"
                              ).with_details(rho=nan, err=err, rate=nan, rate_predicted=nan)
    t0, t1 = window
    measured = float((err[t1] / err[t0]) ** (1.0 / (t1 - t0)))
    J = theory.linearized_map(theta_star, FP, FQ, R, alpha, eta)
    pred = theory.window_contraction(J, path[t0] - theta_star, t1 - t0)
    # The table shows the deviation as the bound it met: the rates' fourth digits depend on the last bits of
    # theta* (a round-off floor near 1e-15), so they are kept in the details, not shown.
    return check_absolute(name, abs(measured - pred), 0.0, RATE_TOL, fp=True,
                          why="linearization error O(1e-8) plus the round-off floor over >= 10 steps"
                          ).with_details(rho=float(np.max(np.abs(np.linalg.eigvals(J)))), err=err,
                                         rate=measured, rate_predicted=pred)
