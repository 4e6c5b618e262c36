"""Rate fitting on log-log sweeps: y = C x^a, with a confidence interval for a.

The slope ``a`` is the ordinary least-squares slope of log y on log x. Its
uncertainty comes from the replicates that produced each y (a bootstrap over
replicates) when they are given, and otherwise from the OLS residuals
(Student t interval). Rate claims then compare ``a`` with the predicted
exponent, e.g. ``|a - a_pred| <= z SE_boot`` or ``a_pred in CI``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .claims import DEFAULT_ALPHA, z_critical


@dataclass(frozen=True)
class LogLogFit:
    """slope a and log-intercept log C of y = C x^a, with the slope's SE and (1-alpha) CI."""

    slope: float
    intercept: float
    slope_se: float
    ci_low: float
    ci_high: float
    alpha: float
    method: str

    def predict(self, x: np.ndarray) -> np.ndarray:
        """C x^a at the points x."""
        return np.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope


def ols_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line y = intercept + slope x.

    ``y`` may carry leading batch axes (shape (..., n)); the fit is along the last.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    xc = x - x.mean()
    slope = (y - y.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)
    intercept = y.mean(axis=-1) - slope * x.mean()
    return slope, intercept


def _validate(x: np.ndarray, y: np.ndarray) -> None:
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"x must be 1-D with at least 2 points, got shape {x.shape}")
    if np.any(x <= 0) or not np.all(np.isfinite(x)):
        raise ValueError("x must be finite and > 0 for a log-log fit")
    if np.unique(x).size < 2:
        raise ValueError("x must take at least two distinct values")
    if np.any(~np.isfinite(y)) or np.any(y <= 0):
        raise ValueError("y must be finite and > 0 for a log-log fit")


def fit_loglog(
    x: np.ndarray,
    y: np.ndarray | None = None,
    *,
    replicates: np.ndarray | None = None,
    paired: bool = False,
    n_boot: int = 2000,
    alpha: float = DEFAULT_ALPHA,
    rng: np.random.Generator | None = None,
) -> LogLogFit:
    """Fit y = C x^a on a log-log scale.

    Parameters
    ----------
    x : (n,) positive sweep values.
    y : (n,) positive measured values; omit when ``replicates`` is given.
    replicates : (R, n) per-replicate measurements; y is their mean over R.
        The slope's SE is the bootstrap standard deviation over replicates,
        and the CI the percentile interval at level 1 - alpha.
    paired : whether row r of ``replicates`` is one replicate across all x
        (resample whole rows) or the columns are independent (resample each).
    n_boot : bootstrap resamples (ignored without replicates).
    alpha : the CI's false-alarm level (default 1e-3, a 99.9% interval).
    rng : the bootstrap's generator (required with replicates).

    Without replicates, the interval is the Student-t interval of the OLS
    slope with n - 2 degrees of freedom (needs n >= 3).
    """
    x = np.asarray(x, dtype=float)
    if replicates is not None:
        reps = np.asarray(replicates, dtype=float)
        if reps.ndim != 2 or reps.shape[1] != x.size or reps.shape[0] < 2:
            raise ValueError(f"replicates must have shape (R >= 2, {x.size}), got {reps.shape}")
        if rng is None:
            raise ValueError("a bootstrap over replicates needs an explicit rng")
        if n_boot < 100:
            raise ValueError(f"n_boot = {n_boot} is too small for a bootstrap interval (>= 100)")
        y = reps.mean(axis=0)
        _validate(x, y)
        R, n = reps.shape
        if paired:
            idx = rng.integers(0, R, size=(n_boot, R))
            means = reps[idx].mean(axis=1)
        else:
            idx = rng.integers(0, R, size=(n_boot, R, n))
            means = reps[idx, np.arange(n)].mean(axis=1)
        if np.any(means <= 0):
            raise ValueError("a bootstrap mean is <= 0: the log-log fit is undefined")
        boot, _ = ols_slope(np.log(x), np.log(means))
        slope, intercept = ols_slope(np.log(x), np.log(y))
        lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
        return LogLogFit(float(slope), float(intercept), float(boot.std(ddof=1)), float(lo), float(hi),
                         alpha, f"bootstrap over {R} replicates ({n_boot} resamples)")
    if y is None:
        raise ValueError("give y or replicates")
    y = np.asarray(y, dtype=float)
    if y.shape != x.shape:
        raise ValueError(f"x and y must have the same shape, got {x.shape} and {y.shape}")
    _validate(x, y)
    if x.size < 3:
        raise ValueError("an OLS interval for the slope needs at least 3 points")
    lx, ly = np.log(x), np.log(y)
    slope, intercept = ols_slope(lx, ly)
    resid = ly - (intercept + slope * lx)
    dof = x.size - 2
    se = float(np.sqrt(resid @ resid / dof / np.sum((lx - lx.mean()) ** 2)))
    t = float(stats.t.isf(alpha / 2, dof))
    return LogLogFit(float(slope), float(intercept), se, float(slope - t * se), float(slope + t * se),
                     alpha, f"OLS, Student t with {dof} dof")


def slope_tolerance(fit: LogLogFit, alpha: float = DEFAULT_ALPHA) -> float:
    """Half-width z_{1-alpha/2} * SE of the fitted slope (normal approximation)."""
    return z_critical(alpha) * fit.slope_se
