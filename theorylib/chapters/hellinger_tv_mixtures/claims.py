"""The claims of chapter 'hellinger-tv-mixtures': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then the measured
data (the sweep's :class:`~.model.FDMeasurement` list, or the test bed's TV and H), then the wrong-theory hook
``theory=``, from which every prediction is read. The measured data come from ``model``; a fit that turns them
into the measured constant is ``model_fits``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import mpmath
import numpy as np

from theorylib.core.claims import Claim, check_absolute, check_upper
from theorylib.core.validation import check_positive

from . import theory as _theory
from .model import FDMeasurement
from .model_fits import fit_increments, fit_sensitivity, fit_tv_remainder, increment_slope

Theory = ModuleType | SimpleNamespace

C71_TOL = 1e-9  # relative agreement of measured and closed-form TV, H (quadrature + rounding budget)
INEQUALITY_SLACK = 1e-9  # a proved inequality, checked with room for quadrature/rounding error (~1e-13 relative)


def rate_tolerance(M: float) -> float:
    """1e-3 (1 + M^4): the envelope for the neglected O(n^-4) terms in the fits of C7.2 and C7.3."""
    return 1e-3 * (1 + check_positive("M", M) ** 4)


def identity_rounding_digits(n: int) -> float:
    """log10(16 (n + 2)): the digits an mp difference of two sums of <= n + 1 positive terms may lose."""
    return math.log10(16 * (int(n) + 2))


def max_rel_dev(measured_logs: Sequence[float], predicted_logs: Sequence[float]) -> float:
    """max over the sweep of |measured/predicted - 1|, from logs: max |exp(m - p) - 1|."""
    m = np.asarray(measured_logs, dtype=float)
    p = np.asarray(predicted_logs, dtype=float)
    if m.shape != p.shape or m.size == 0:
        raise ValueError(f"measured and predicted must be equally long and non-empty; got {m.shape}, {p.shape}")
    return float(np.max(np.abs(np.expm1(m - p))))


def _sweep_data(meas: Sequence[FDMeasurement]) -> tuple[np.ndarray, float]:
    if not meas:
        raise ValueError("need at least one measurement")
    Ms = {m.M for m in meas}
    if len(Ms) != 1:
        raise ValueError(f"the measurements mix several M: {sorted(Ms)}")
    return np.array([m.L for m in meas]), Ms.pop()


# --------------------------------------------------------------------------------------------------
# C7.1: the closed forms of the tilted pair


def claim_c71_identity(name: str, meas: Sequence[FDMeasurement], *, theory: Theory = _theory) -> Claim:
    """C7.1a: f_P - f_Q from the atoms equals ``theory.tilted_difference_mp`` at every node, to rounding.

    measured = max over L and nodes of log10(|difference| / (f_P + f_Q)) + dps (digits lost);
    bound = log10(16 (n_max + 2)): ~n roundings of relative size 10^-dps in each positive Horner sum.
    A floating-point-error quantity by nature (fp=True): the table shows the bound it met.
    """
    _sweep_data(meas)
    digits = []
    for m in meas:
        closed = theory.tilted_difference_mp(m.x, m.L, m.M, m.dps)
        with mpmath.workdps(m.dps):
            worst = max(abs(h - c) / t for h, c, t in zip(m.diff, closed, m.total, strict=True))
            digits.append(float(mpmath.log10(worst)) + m.dps if worst > 0 else -math.inf)
    bound = max(identity_rounding_digits(m.n) for m in meas)
    return check_upper(name, max(digits), bound, fp=True,
                       why="mp sums of n+1 positive terms carry <= ~n ulps; bound log10(16(n+2)) digits"
                       ).with_details(digits=np.array(digits))


def _claim_c71_distance(name: str, measured: np.ndarray, predicted: list[tuple[float, float]],
                        tol: float) -> Claim:
    dev = max_rel_dev(measured, [p[0] for p in predicted])
    return check_absolute(name, dev, 0.0, tol, fp=True,
                          why="Gauss-Legendre and quad errors (panel doubling, quad estimate) are <~1e-12"
                          ).with_details(predicted=np.array([p[0] for p in predicted]),
                                         rel_err=max(p[1] for p in predicted))


def claim_c71_tv(name: str, meas: Sequence[FDMeasurement], tol: float = C71_TOL, *,
                 theory: Theory = _theory) -> Claim:
    """C7.1b: max over L of |TV measured / ``theory.log_tv_closed`` - 1| <= tol (details: predicted, rel_err)."""
    _sweep_data(meas)
    return _claim_c71_distance(name, np.array([m.log_tv for m in meas]),
                               [theory.log_tv_closed(m.L, m.M) for m in meas], tol)


def claim_c71_h(name: str, meas: Sequence[FDMeasurement], tol: float = C71_TOL, *,
                theory: Theory = _theory) -> Claim:
    """C7.1c: max over L of |H measured / ``theory.log_h_closed`` - 1| <= tol (details: predicted, rel_err)."""
    _sweep_data(meas)
    return _claim_c71_distance(name, np.array([m.log_h for m in meas]),
                               [theory.log_h_closed(m.L, m.M) for m in meas], tol)


# --------------------------------------------------------------------------------------------------
# C7.2, C7.3: the asymptotic constants


def claim_c72(name: str, meas: Sequence[FDMeasurement], *, theory: Theory = _theory) -> Claim:
    """C7.2: the fitted asymptotic increment b of log(H/TV) per unit L equals ``theory.ratio_slope(M)``.

    details: ``sens``, the fit's own truncation estimate (largest refit change of b).
    """
    L, M = _sweep_data(meas)
    r = np.array([m.log_h - m.log_tv for m in meas])
    b = fit_increments(L, r)[0]
    sens = fit_sensitivity(increment_slope, L, r, (2, 3), 4)
    return check_absolute(name, b, theory.ratio_slope(M), rate_tolerance(M),
                          why="fit b + c/n^2 + e/n^3 exact to O(n^-4); envelope 1e-3(1+M^4) >> refit change"
                          ).with_details(sens=sens)


def claim_c73(name: str, meas: Sequence[FDMeasurement], *, theory: Theory = _theory) -> Claim:
    """C7.3: the 1/n coefficient of log TV_L - ``theory.tv_leading`` equals ``theory.c1(M)``.

    details: ``sens``, the fit's own truncation estimate (largest refit change of the coefficient).
    """
    L, M = _sweep_data(meas)
    log_tv = np.array([m.log_tv for m in meas])
    base = np.array([theory.tv_leading(int(v), M) for v in L])
    c_hat = fit_tv_remainder(L, log_tv, base)
    sens = fit_sensitivity(fit_tv_remainder, L, log_tv, (1, 2), 3, base=base)
    return check_absolute(name, c_hat, theory.c1(M), rate_tolerance(M),
                          why="fit c1 + d/n + e/n^2 exact to O(n^-3); envelope 1e-3(1+M^4) >> refit change"
                          ).with_details(sens=sens)


# --------------------------------------------------------------------------------------------------
# C7.4: the inequalities on the test bed


def _ratio_claim(name: str, ratio: np.ndarray) -> Claim:
    return check_upper(name, float(np.max(ratio)), 1.0, tol=INEQUALITY_SLACK,
                       why="a proved inequality; slack 1e-9 >> quadrature/rounding error (~1e-13 relative)")


def claim_c74_lecam_lower(name: str, tv: np.ndarray, h: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """C7.4a: max over the test bed of H^2 / ``theory.h2_bound_lecam(TV)`` <= 1 (+ 1e-9 rounding slack)."""
    tv, h = np.asarray(tv, dtype=float), np.asarray(h, dtype=float)
    return _ratio_claim(name, h**2 / theory.h2_bound_lecam(tv))


def claim_c74_lecam_upper(name: str, tv: np.ndarray, h: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """C7.4b: max over the test bed of TV / ``theory.tv_bound_lecam(H)`` <= 1 (+ 1e-9 rounding slack)."""
    tv, h = np.asarray(tv, dtype=float), np.asarray(h, dtype=float)
    return _ratio_claim(name, tv / theory.tv_bound_lecam(h))


def claim_c74_thm71(name: str, tv: np.ndarray, h: np.ndarray, M: float, *, theory: Theory = _theory) -> Claim:
    """C7.4c: max over the test bed of H^2 / ``theory.h2_bound_thm71(TV, M)`` <= 1 (+ 1e-9 rounding slack)."""
    tv, h = np.asarray(tv, dtype=float), np.asarray(h, dtype=float)
    return _ratio_claim(name, h**2 / theory.h2_bound_thm71(tv, M))
