"""The claims of chapter 'adversarial-vit-benign-overfitting': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the
name first, then the measured data, then the wrong-theory hook ``theory=``.
Tolerances and error budgets live here, not in the theory.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np
from scipy import stats

from theorylib.core.claims import (
    Claim,
    check_absolute,
    check_chi2,
    check_exact,
    check_lower,
    check_upper,
    check_zscore,
)

from . import theory as _theory

Theory = ModuleType | SimpleNamespace

#: robust test error counted as "near zero" (benign) and "no better than chance" (harmful)
BENIGN_ERROR = 0.02
HARMFUL_ERROR = 0.45


def claim_exact_attack(name: str, pgd_margins: Sequence[np.ndarray], instances: Sequence[tuple],
                       eps: float, *, theory: Theory = _theory) -> Claim:
    """The smallest margin PGD finds equals the closed form y f(X) - eps ||v|| ||a|| (Lemma, exact inner
    minimization), to rounding: |m_pgd - m| <= 64 u (1 + |y f(X)| + eps ||v||) per sample."""
    worst, budget = 0.0, np.inf
    for m_pgd, (X, y, v, s) in zip(pgd_margins, instances, strict=True):
        pred = theory.robust_margin(X, y, v, s, eps)
        scale = 1.0 + np.abs(np.asarray(m_pgd)) + eps * np.linalg.norm(v)
        tol = 64 * np.finfo(float).eps * scale
        worst = max(worst, float(np.max(np.abs(m_pgd - pred) / tol)))
        budget = min(budget, float(np.min(tol)))
    return check_upper(name, worst, 1.0, "PGD on a linear function over a ball converges geometrically to the "
                       "exact minimizer; the residual is rounding (measured: largest |m_pgd - m| in units of "
                       "its rounding budget 64 u (1 + |m| + eps ||v||))", fp=True).with_details(budget=budget)


def claim_mc_risk(name: str, err: float, se: float, v: np.ndarray, s: np.ndarray, mu_norm: float,
                  sigma: float, eps: float, *, theory: Theory = _theory) -> Claim:
    """Monte-Carlo robust test error under the worst-case attack against the exact robust risk (Lemma),
    within 3.29 binomial standard errors."""
    pred = theory.robust_test_error(v, s, mu_norm, sigma, eps)
    return check_zscore(name, err, pred, se, "M independent attacked test points: binomial SE "
                        "sqrt(p(1-p)/M); 3.29 SE is the two-sided 1e-3 level").with_details(se=se)


def claim_one_step(name: str, errors: Sequence[np.ndarray], cells: Sequence[tuple[float, float]], N: int,
                   d: int, P: int, sigma: float, eps: float, *, theory: Theory = _theory) -> Claim:
    """Per cell (rho, ||mu||): the mean over R training sets of the attacked test error after one actual
    adversarial-GD step against the exact one-step law (Theorem); the k standardized residuals are combined
    in a chi-square test at level 1e-3."""
    z = []
    for e, (rho, mu) in zip(errors, cells, strict=True):
        e = np.asarray(e, dtype=float)
        se = max(float(e.std(ddof=1)), 1.0 / e.size) / np.sqrt(e.size)
        z.append((e.mean() - theory.one_step_robust_error(mu, N, d, P, sigma, eps, rho)) / se)
    return check_chi2(name, z, "each cell averages R independent training sets (K fresh test points each): "
                      "CLT SE = sd / sqrt(R); sum of z^2 against chi2_k at 1e-3").with_details(z=[float(t) for t in z])


def _wls_line(x: np.ndarray, y: np.ndarray, se: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A = np.column_stack([np.ones_like(x), x])
    w = 1.0 / se**2
    cov = np.linalg.inv(A.T @ (w[:, None] * A))
    return cov @ (A.T @ (w * y)), cov


def claim_attention_threshold(name: str, mu_grid: np.ndarray, increments: Sequence[np.ndarray], N: int,
                              d: int, sigma: float, rho: float, *, theory: Theory = _theory) -> Claim:
    """The zero crossing sqrt(-b0/b1) of the weighted least-squares line of the mean step-2 attention
    increment on ||mu||^2 against the attention threshold (Theorem), within 3.29 delta-method SE."""
    x = np.asarray(mu_grid, dtype=float) ** 2
    means = np.array([np.mean(t) for t in increments])
    ses = np.array([np.std(t, ddof=1) / np.sqrt(len(t)) for t in increments])
    (b0, b1), cov = _wls_line(x, means, ses)
    pred = theory.attention_threshold(N, d, sigma, rho)
    if not (b1 > 0 and b0 < 0):          # no crossing at positive ||mu||^2: the claim fails, the run goes on
        return check_absolute(name, float("nan"), pred, 0.0, "the fitted line has no positive crossing")
    root = float(np.sqrt(-b0 / b1))
    grad = np.array([-1.0 / b1, b0 / b1**2]) / (2 * root)
    se = float(np.sqrt(grad @ cov @ grad))
    return check_zscore(name, root, pred, se, "the mean increment is exactly linear in ||mu||^2; WLS with "
                        "weights 1/SE^2 and the delta method give the SE of the crossing").with_details(se=se)


def claim_increment_law(name: str, mu_grid: np.ndarray, increments: Sequence[np.ndarray], N: int, d: int,
                        P: int, sigma: float, rho: float, *, theory: Theory = _theory) -> Claim:
    """The mean step-2 increment at every grid point against its expectation (Theorem), chi-square test of
    the standardized residuals at level 1e-3."""
    z = []
    for mu, t in zip(mu_grid, increments, strict=True):
        t = np.asarray(t, dtype=float)
        z.append((t.mean() - theory.expected_increment(mu, N, d, P, sigma, rho)) / (t.std(ddof=1) / np.sqrt(t.size)))
    return check_chi2(name, z, "R independent training sets per grid point: CLT SE = sd / sqrt(R); the "
                      "first-order error at eta_v = 1e-6 is ~1e-5 relative, far below the SE")


def claim_robust_interpolation(name: str, train_errors: Sequence[float], rho: float, *,
                               theory: Theory = _theory) -> Claim:
    """The largest robust training error (fraction of samples, flipped ones included, whose margin under the
    worst-case attack against the observed label is <= 0) over all runs equals the predicted limit."""
    return check_exact(name, float(np.max(train_errors)), theory.robust_train_error_limit(rho),
                       "a fraction of N samples: exact, no tolerance")


def claim_regime(name: str, test_errors: Sequence[float], mu_norm: float, N: int, d: int, sigma: float,
                 rho: float, *, theory: Theory = _theory) -> Claim:
    """Above the attention threshold every run's robust test error is near zero (<= 0.02); below it no run
    does better than 0.45."""
    e = np.asarray(test_errors, dtype=float)
    if theory.benign(mu_norm, N, d, sigma, rho):
        return check_upper(name, float(e.max()), BENIGN_ERROR, "benign: the worst run's Monte-Carlo robust "
                           "test error (SE <= 0.0025) below the near-zero level 0.02")
    return check_lower(name, float(e.min()), HARMFUL_ERROR, "harmful: the best run's Monte-Carlo robust test "
                       "error (SE <= 0.008) above 0.45, near chance")


def claim_increment_terms(name: str, cells: Sequence[tuple[int, float, float]], increments: Sequence[np.ndarray],
                          d: int, P: int, rho: float, *, theory: Theory = _theory) -> Claim:
    """Per cell (N, ||mu||, sigma): the mean step-2 increment over many small training sets against its
    expectation (Theorem), chi-square test of the standardized residuals at level 1e-3. The cells resolve
    the two terms apart: ||mu|| = 0 isolates the memorization term sigma^2 (d - 1), small N makes the
    flip-count spread 4 N rho (1 - rho) a large part of E[A^2]."""
    z = []
    for (N, mu, sigma), t in zip(cells, increments, strict=True):
        t = np.asarray(t, dtype=float)
        z.append((t.mean() - theory.expected_increment(mu, N, d, P, sigma, rho)) / (t.std(ddof=1) / np.sqrt(t.size)))
    return check_chi2(name, z, "R independent training sets per cell: CLT SE = sd / sqrt(R); the "
                      "first-order remainder at eta_v = 1e-8 is below 1e-6 relative").with_details(
                          z=[float(t) for t in z])


def boundary_slopes(log_N: np.ndarray, log_cross: np.ndarray) -> tuple[np.ndarray, float]:
    """The OLS slope of log ||mu||* on log N for every seed (rows of log_cross), and sum_k |w_k|, the
    largest change of a slope when every crossing moves by at most 1 (w the OLS weights)."""
    x = np.asarray(log_N, dtype=float)
    w = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
    return np.asarray(log_cross, dtype=float) @ w, float(np.sum(np.abs(w)))


def claim_boundary_exponent(name: str, log_N: np.ndarray, log_cross: np.ndarray, cell: float, attention: str,
                            *, theory: Theory = _theory, alpha: float = 1e-3) -> Claim:
    """The mean over S independent seeds of the fitted boundary exponent against the predicted one: the
    tolerance is the (1 - alpha) Student-t half-width with S - 1 degrees of freedom plus the quantization
    bound sum_k |w_k| h (each crossing lies in a grid cell of width h in log ||mu||, the interpolated one
    too, so it is off by at most h)."""
    slopes, wsum = boundary_slopes(log_N, log_cross)
    S = slopes.size
    se = float(slopes.std(ddof=1) / np.sqrt(S))
    t = float(stats.t.isf(alpha / 2, S - 1))
    quant = wsum * cell
    return check_absolute(name, float(slopes.mean()), theory.boundary_exponent(attention), t * se + quant,
                          f"S = {S} seeds: t_{{S-1}} half-width {t * se:.3g} (99.9%) plus quantization "
                          f"{quant:.3g}").with_details(se=se, t=t, quant=quant,
                                                       slopes=[float(v) for v in slopes])
