"""The claims of chapter 'invariant-subspace-rate': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the
name first, then the measured data (a :class:`~.model.Sweep`, a
:class:`~.model.Transition`, a :class:`~.model.RawCheck`), then the
wrong-theory hook ``theory=``, from which every prediction is read. The fits of
measured data against a prediction (the normalised risk of C1, the slopes of
C2) are part of the decision and live here, with their error analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np
from scipy import stats

from theorylib.core.claims import Claim, check_chi2, check_lower, check_zscore
from theorylib.core.rates import ols_slope

from . import theory as _theory
from .model import RawCheck, Sweep, Transition

Theory = ModuleType | SimpleNamespace

ALPHA = 1e-3  # the book's false-alarm level per claim


def wls(t: np.ndarray, y: np.ndarray, se: np.ndarray, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares y = sum_j c_j t^j (j <= degree), weights 1/se^2: (coefficients, their SEs)."""
    t, y, se = (np.asarray(a, dtype=float) for a in (t, y, se))
    if not (t.shape == y.shape == se.shape) or t.size < degree + 2:
        raise ValueError("wls needs equally long t, y, se with more points than coefficients")
    if not (np.all(np.isfinite(se)) and np.all(np.isfinite(y))) or np.any(se == 0):
        nan = np.full(degree + 1, np.nan)
        return nan, nan  # a prediction that is not a finite nonzero number: the claim fails
    X = np.column_stack([t**j for j in range(degree + 1)])
    w = 1 / se**2
    A = X.T @ (w[:, None] * X)
    cov = np.linalg.inv(A)
    coef = cov @ (X.T @ (w * y))
    return coef, np.sqrt(np.diag(cov))


def _zscore(name: str, measured: float, predicted: float, se: float, why: str) -> Claim:
    """check_zscore at the book's alpha; a fit that broke down (SE not finite) fails instead of raising."""
    if not (np.isfinite(se) and se > 0):
        return check_zscore(name, float("nan"), predicted, 1.0, alpha=ALPHA, why=why)
    return check_zscore(name, measured, predicted, se, alpha=ALPHA, why=why)


def first_order_scale(sw: Sweep, d: int, k: int) -> np.ndarray:
    """K / x = k (d - k) / (n m gamma^2) at every point of the sweep, from its design alone (no theory)."""
    return k * (d - k) / (sw.n * sw.m * sw.gamma**2)


def normalised_risk(sw: Sweep, d: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """rho = (x / K) * measured mean of dist^2 at each point, with its Monte-Carlo SE."""
    scale = first_order_scale(sw, d, k)
    return sw.mean / scale, sw.se / scale


def fit_exact(sw: Sweep, d: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Quadratic WLS fit rho = a + b t + c t^2, t = 1/(n gamma^2): coefficients (a, b, c) and their SEs."""
    rho, se = normalised_risk(sw, d, k)
    t = 1.0 / (sw.n * sw.gamma**2)
    return wls(t, rho, se, 2)


def predicted_constant(sw: Sweep, d: int, k: int, *, theory: Theory = _theory) -> float:
    """The first-order prediction in units of K / x: ``theory.risk_first_order`` / (K / x) at the largest n."""
    i = int(np.argmax(sw.n))
    m, n, g = int(sw.m[i]), float(sw.n[i]), float(sw.gamma[i])
    return float(theory.risk_first_order(d, k, m, n, g) / first_order_scale(sw, d, k)[i])


def claim_constant(name: str, sw: Sweep, d: int, k: int, *, theory: Theory = _theory) -> Claim:
    """C1a: the intercept a of rho = a + b t + c t^2 equals the first-order prediction in units of K/x (1)."""
    coef, se = fit_exact(sw, d, k)
    return _zscore(name, coef[0], predicted_constant(sw, d, k, theory=theory), se[0],
                   why="WLS intercept, SE from the replicate sd at each point; the t^2 term absorbs the "
                   "third order").with_details(coef=coef, se=se)


def predicted_second_order(sw: Sweep, d: int, k: int, *, theory: Theory = _theory) -> float:
    """The coefficient of t = 1/(n gamma^2) in ``theory.risk_second_order`` / ``theory.risk_first_order``.

    Read off at the smallest n of the sweep: (ratio - 1) / t, exact for a prediction linear in t.
    """
    i = int(np.argmin(sw.n))
    m, n, g = int(sw.m[i]), float(sw.n[i]), float(sw.gamma[i])
    ratio = theory.risk_second_order(d, k, m, n, g) / theory.risk_first_order(d, k, m, n, g)
    return float((ratio - 1) * n * g**2)


def second_order_z(sw: Sweep, d: int, k: int, *, theory: Theory = _theory) -> tuple[float, float, float, float]:
    """(fitted b, its SE, predicted b, z) for one sweep; z is inf when the fit or the prediction broke down."""
    coef, se = fit_exact(sw, d, k)
    pred = predicted_second_order(sw, d, k, theory=theory)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (coef[1] - pred) / se[1]
    return float(coef[1]), float(se[1]), pred, float(z) if np.isfinite(z) else float("inf")


def claim_second_order(name: str, sweeps: Sequence[Sweep], d: int, k: int, *,
                       theory: Theory = _theory) -> Claim:
    """C1b: on each sweep (one number of environments each) the slope b of rho = a + b t + c t^2 equals the
    second-order coefficient of the theory, (m - d)/m; jointly, sum of z^2 against chi2 with one degree of
    freedom per sweep. details: per sweep the fitted b, its SE, the predicted b and z."""
    rows = [second_order_z(sw, d, k, theory=theory) for sw in sweeps]
    b, se, pred, z = (np.array(col) for col in zip(*rows, strict=True))
    return check_chi2(name, z, alpha=ALPHA,
                      why="WLS slope per sweep, SE from the replicate sd at each point; the t^2 term removes "
                      "the third-order bias; independent sweeps, chi-square over them"
                      ).with_details(b=b, se=se, predicted=pred, z=z)


def claim_general_design(name: str, sw: Sweep, k: int, c_eigs: np.ndarray, *,
                         theory: Theory = _theory) -> Claim:
    """C5: an unbalanced design; rho = measured risk / (K / (n m gamma^2)), gamma^2 the smallest eigenvalue of
    C (the design's scale, no theory), is fitted as a + b t + c t^2, t = 1/(n gamma^2); the intercept a equals
    ``theory.risk_first_order_spectrum`` in the same units."""
    c = np.asarray(c_eigs, dtype=float)
    g2 = float(np.min(c))
    scale = k * c.size / (sw.n * sw.m * g2)
    rho, se_rho = sw.mean / scale, sw.se / scale
    coef, se = wls(1.0 / (sw.n * g2), rho, se_rho, 2)
    i = int(np.argmax(sw.n))
    pred = float(theory.risk_first_order_spectrum(k, int(sw.m[i]), float(sw.n[i]), c) / scale[i])
    return _zscore(name, coef[0], pred, se[0],
                   why="WLS intercept, SE from the replicate sd; the second order of an unbalanced "
                   "design is not derived, so b and c are fitted").with_details(coef=coef, se=se, rho=rho,
                                                                             rho_se=se_rho)


def slope_se(x: np.ndarray, mean: np.ndarray, se: np.ndarray) -> float:
    """Delta-method SE of the OLS slope of log mean on log x: sqrt(sum c_i^2 (se_i / mean_i)^2)."""
    lx = np.log(np.asarray(x, dtype=float))
    c = (lx - lx.mean()) / np.sum((lx - lx.mean()) ** 2)
    return float(np.sqrt(np.sum(c**2 * (np.asarray(se) / np.asarray(mean)) ** 2)))


def predicted_risks(sw: Sweep, d: int, k: int, *, theory: Theory = _theory) -> np.ndarray:
    """``theory.risk_second_order`` at every point of the sweep."""
    return np.array([theory.risk_second_order(d, k, int(m), n, g)
                     for m, n, g in zip(sw.m, sw.n, sw.gamma, strict=True)], dtype=float)


def claim_slope(name: str, sw: Sweep, d: int, k: int, *, theory: Theory = _theory) -> Claim:
    """C2: the OLS slope of log(measured risk) on log(sweep value) against the slope of the predicted risks.

    The predicted slope is the OLS slope of ``theory.risk_second_order`` on the same design (so curvature of
    the prediction is compared, not assumed away); the SE is the delta-method SE from the replicate sds.
    details: the fitted and predicted intercepts and the predicted risks.
    """
    lx = np.log(sw.values)
    pred = predicted_risks(sw, d, k, theory=theory)
    slope, icpt = ols_slope(lx, np.log(sw.mean))
    p_slope, p_icpt = ols_slope(lx, np.log(pred))
    se = slope_se(sw.values, sw.mean, sw.se)
    return _zscore(name, float(slope), float(p_slope), se,
                   why="OLS slope of log means; delta-method SE from the replicate sd of each point"
                        ).with_details(intercept=float(icpt), predicted_intercept=float(p_icpt),
                                       predicted=pred, se=se)


def transition_z(tr: Transition, d: int, k: int, m: int, gamma: float, *,
                 theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """Predicted success probabilities and the standardised residuals (p_hat - p) / sqrt(p (1 - p) / R)."""
    R = tr.success.shape[0]
    p = np.array([theory.transition_cdf(tr.eps, int(n), d, k, m, gamma) for n in tr.n], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (tr.p - p) / np.sqrt(p * (1 - p) / R)
    z = np.where(np.isfinite(z), z, np.inf)
    return p, z


def claim_transition(name: str, tr: Transition, d: int, k: int, m: int, gamma: float, *,
                     theory: Theory = _theory) -> Claim:
    """C3: the success frequencies at every sample size against ``theory.transition_cdf``, jointly (chi-square).

    Under the prediction the success count at each point is Binomial(R, p) exactly, so z is standardised
    with the binomial SE at p, and sum z^2 ~ chi2 with one degree of freedom per point.
    details: the predicted probabilities and the z.
    """
    p, z = transition_z(tr, d, k, m, gamma, theory=theory)
    return check_chi2(name, z, alpha=ALPHA,
                      why="binomial counts at each sample size, independent streams; chi-square over the points"
                      ).with_details(predicted=p, z=z)


def sufficiency_pvalues(rc: RawCheck, *, theory: Theory = _theory) -> np.ndarray:
    """KS p-values of (S_e - w_e) / ``theory.statistic_sd`` against N(0, 1), one per coordinate (d, m)."""
    reps, d, m = rc.S.shape
    pv = np.empty((d, m))
    for e in range(m):
        sd = theory.statistic_sd(rc.n, rc.W[:, e])
        zs = (rc.S[:, :, e] - rc.W[:, e]) / sd
        for j in range(d):
            pv[j, e] = stats.kstest(zs[:, j], "norm").pvalue
    return pv


def claim_sufficiency(name: str, rc: RawCheck, *, theory: Theory = _theory) -> Claim:
    """C4: the Bonferroni-adjusted smallest KS p-value of the standardised statistics is >= alpha."""
    pv = sufficiency_pvalues(rc, theory=theory)
    adjusted = float(min(1.0, pv.min() * pv.size))
    return check_lower(name, adjusted, ALPHA,
                       why=f"KS test per coordinate, Bonferroni over {pv.size}: level 1e-3 for the claim"
                       ).with_details(pvalues=pv)
