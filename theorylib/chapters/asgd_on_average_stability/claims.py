"""The claims of chapter 'asgd-on-average-stability': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then the
measured data, then the wrong-theory hook ``theory=``. Tolerances are the error analysis: Monte-Carlo
standard errors at the false-alarm level 1e-3 (3.29 SE, chi-square at 1e-3, 99.9% bootstrap intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np

from theorylib.core.claims import (
    DEFAULT_ALPHA,
    Claim,
    check_chi2,
    check_interval,
    check_upper,
    check_zscore,
    z_critical,
)
from theorylib.core.rates import fit_loglog, ols_slope

from . import theory as _theory

Theory = ModuleType | SimpleNamespace


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def claim_stability(name: str, stab: np.ndarray, eta: float, delays: np.ndarray, q: np.ndarray, d: int,
                    sigma: float, *, theory: Theory = _theory) -> Claim:
    """Mean over replicates of sum_k q_k ||w_T - w_T^(k)||^2 (coupled runs) vs the exact stability."""
    mean, se = _mean_se(stab)
    pred = theory.stability(eta, delays, q, d, sigma)
    return check_zscore(name, mean, pred, se,
                        why="CLT over iid replicates: the mean has SE sd/sqrt(R)").with_details(se=se)


def claim_gap(name: str, gaps: Sequence[np.ndarray], qs: Sequence[np.ndarray], eta: float, delays: np.ndarray,
              d: int, sigma: float, *, theory: Theory = _theory) -> Claim:
    """Per cell (workers, participation): the mean gap (with its control variate) vs d sigma^2 Q (1 - phi_T),
    jointly as a chi-square of the standardized residuals."""
    z, means, preds, ses = [], [], [], []
    for g, q in zip(gaps, qs, strict=True):
        mean, se = _mean_se(g)
        pred = theory.gap(eta, delays, q, d, sigma)
        z.append((mean - pred) / se)
        means.append(mean)
        preds.append(pred)
        ses.append(se)
    zz = np.nan_to_num(np.asarray(z, dtype=float), nan=1e6)
    return check_chi2(name, zz, why="independent cells, each mean has SE sd/sqrt(R)").with_details(
        z=zz, measured=np.array(means), predicted=np.array(preds), se=np.array(ses))


def _predicted_slope(x: Sequence[float], y: Sequence[float]) -> float:
    yy = np.asarray(y, dtype=float)
    if np.any(~np.isfinite(yy)) or np.any(yy <= 0):
        return math.nan
    return float(ols_slope(np.log(np.asarray(x, dtype=float)), np.log(yy))[0])


def claim_rate(name: str, reps: np.ndarray, N_grid: Sequence[int], eta: float, delays: np.ndarray, d: int,
               sigma: float, rng: np.random.Generator, *, theory: Theory = _theory) -> Claim:
    """The fitted log-log slope of the measured stability in N (independent replicates per N, bootstrap 99.9%
    CI) vs the OLS slope of the exact stability on the same grid (balanced participation)."""
    fit = fit_loglog(np.asarray(N_grid, dtype=float), replicates=reps, paired=False, rng=rng)
    pred = _predicted_slope(N_grid, [theory.stability(eta, delays, np.full(N, 1.0 / N), d, sigma)
                                     for N in N_grid])
    return check_interval(name, fit.slope, pred, fit.ci_low, fit.ci_high,
                          why="bootstrap over replicates, independent per N").with_details(fit=fit)


def bound_ratios(stabs: Sequence[np.ndarray], sum_f: Sequence[np.ndarray], N_grid: Sequence[int], T: int,
                 eta: float, tau: int, *, theory: Theory = _theory) -> dict[str, np.ndarray]:
    """r(N) = bound(N) / measured stability(N), the bound evaluated at the measured sum_t E F_S, with the
    relative standard errors of the stability and of the risk sum."""
    st = np.array([_mean_se(s) for s in stabs])
    fs = np.array([_mean_se(f) for f in sum_f])
    bound = np.array([theory.stability_bound(eta, 1.0, tau, 1.0 / N, T, f) for N, f in zip(N_grid, fs[:, 0],
                                                                                          strict=True)])
    return {"bound": bound, "stability": st[:, 0], "r": bound / st[:, 0], "se_stab": st[:, 1] / st[:, 0],
            "se_f": fs[:, 1] / fs[:, 0], "fbar": fs[:, 0] / T}


def claim_bound_holds(name: str, stabs: Sequence[np.ndarray], sum_f: Sequence[np.ndarray],
                      N_grid: Sequence[int], T: int, eta: float, tau: int, *,
                      theory: Theory = _theory) -> Claim:
    """max_N (measured stability / bound) <= 1, within 3.29 SE of the ratio at the maximum."""
    b = bound_ratios(stabs, sum_f, N_grid, T, eta, tau, theory=theory)
    inv = 1.0 / b["r"]
    if not (np.all(np.isfinite(inv)) and np.all(inv > 0)):  # a bound <= 0 or undefined: fails
        inv = np.full(inv.shape, math.inf)
    i = int(np.argmax(inv))
    tol = z_critical(DEFAULT_ALPHA) * inv[i] * (b["se_stab"][i] + b["se_f"][i])
    tol = float(tol) if math.isfinite(tol) else 0.0
    return check_upper(name, float(inv[i]), 1.0, tol=tol,
                       why="3.29 SE of the ratio (stability and risk-sum SEs added)").with_details(**b)


def claim_bound_sandwich(name: str, stabs: Sequence[np.ndarray], sum_f: Sequence[np.ndarray],
                         N_grid: Sequence[int], T: int, eta: float, tau: int, d: int, sigma: float, *,
                         theory: Theory = _theory) -> Claim:
    """For every N the ratio r(N) = bound / measured stability lies in the proposition's sandwich
    [lo(N), hi(N)]; measured = the largest log-distance outside it, in standard errors of log r
    (negative inside), against 3.29."""
    b = bound_ratios(stabs, sum_f, N_grid, T, eta, tau, theory=theory)
    _, psi = theory.impulse_response(eta, np.minimum(np.arange(T), tau))
    lo, hi = np.array([theory.ratio_range(tau, T, N, psi, f, d, sigma)
                       for N, f in zip(N_grid, b["fbar"], strict=True)]).T
    se = b["se_stab"]  # the measured risk sum enters r and the sandwich alike and cancels in r / lo, r / hi
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.maximum(np.log(lo / b["r"]), np.log(b["r"] / hi)) / se
    worst = float(np.max(out)) if np.all(np.isfinite(out)) else math.inf
    return check_upper(name, worst, z_critical(DEFAULT_ALPHA),
                       why="3.29 SE of log r (the risk sum cancels; the stability's SE)").with_details(
        lo=lo, hi=hi, spread=float(b["r"].max() / b["r"].min()), allowed=float(hi.max() / lo.min()), **b)


def claim_excess_level(name: str, reps: np.ndarray, N_grid: Sequence[int], delays: Sequence[np.ndarray],
                       c0: float, d: int, sigma: float, r0sq: float, average: bool, *,
                       theory: Theory = _theory) -> Claim:
    """Under eta = c0/sqrt(N), T = N: the mean excess risk at every N vs the exact value, a chi-square of the
    standardized residuals (independent replicates per N)."""
    reps = np.asarray(reps, dtype=float)
    mean = reps.mean(axis=0)
    se = reps.std(axis=0, ddof=1) / math.sqrt(reps.shape[0])
    pred = np.array([theory.excess(c0 / math.sqrt(N), dl, np.full(N, 1.0 / N), d, sigma, r0sq, average)
                     for N, dl in zip(N_grid, delays, strict=True)])
    z = np.nan_to_num((mean - pred) / se, nan=1e6)
    return check_chi2(name, z, why="independent samples per N, each mean has SE sd/sqrt(R)").with_details(
        z=z, predicted=pred)


def claim_excess_slope(name: str, reps: np.ndarray, N_grid: Sequence[int], delays: Sequence[np.ndarray],
                       c0: float, d: int, sigma: float, r0sq: float, average: bool,
                       rng: np.random.Generator, *, theory: Theory = _theory) -> Claim:
    """Under eta = c0/sqrt(N), T = N: fitted slope of the excess risk (last iterate or average) vs the OLS
    slope of the exact excess risk on the same grid; 99.9% bootstrap CI over replicates."""
    fit = fit_loglog(np.asarray(N_grid, dtype=float), replicates=reps, paired=False, rng=rng)
    pred = _predicted_slope(N_grid, [theory.excess(c0 / math.sqrt(N), dl, np.full(N, 1.0 / N), d, sigma, r0sq,
                                                   average) for N, dl in zip(N_grid, delays, strict=True)])
    return check_interval(name, fit.slope, pred, fit.ci_low, fit.ci_high,
                          why="bootstrap over replicates, independent per N").with_details(fit=fit)
