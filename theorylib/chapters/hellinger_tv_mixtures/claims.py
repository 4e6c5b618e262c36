"""The claims of chapter 'hellinger-tv-mixtures': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then the measured
data (the sweep's :class:`~.model.FDMeasurement` list, or the test bed's TV and H), then the wrong-theory hook
``theory=``, from which every prediction is read. The measured data come from ``model``; a fit of measured data
alone (the increments of C2) is ``model_fits``'s. A fit of the residual of measured data against the theory's
expansion (C2b, C3) is part of the decision and lives here (:func:`remainder_intercept`), as does the refit
estimate of a fit's truncation error (:func:`refit_sensitivity`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import ModuleType, SimpleNamespace

import mpmath
import numpy as np

from theorylib.core.claims import Claim, check_absolute, check_upper, strict_max
from theorylib.core.validation import check_positive

from . import theory as _theory
from .model import FDMeasurement
from .model_chebyshev import ChebyshevMeasurement
from .model_fits import fit_increments, increment_slope
from .model_product import ProductMeasurement

Theory = ModuleType | SimpleNamespace

C1_TOL = 1e-9  # relative agreement of measured and closed-form TV, H (quadrature + rounding budget)
# C7a: the 2-D rule's panel-doubling estimate is ~1e-14 and the 1-D closed forms' quad estimates ~1e-13 at the
# allowed M, so 1e-12 is ten times the budget, and still 1/15 of the product law's second-order term at the
# smallest pair at M = 1 (-(kappa_1 + kappa_2)/8 = -1.5e-11), which the claim must resolve
C7_TOL = 1e-12
# C8a: TV of the Chebyshev pair integrates |f_pi - f_eta|, whose sign changes (near 0, where the Hermite tail
# r_n outweighs q_n ~ x^n) limit Gauss-Legendre: panel doubling moves TV by <= 2.4e-5 relative at the allowed M
C8_TV_QUAD = 1e-3
INEQUALITY_SLACK = 1e-9  # a proved inequality, checked with room for quadrature/rounding error (~1e-13 relative)


def rate_tolerance(M: float) -> float:
    """1e-3 (1 + M^4): the envelope for the neglected O(n^-4) terms in the fits of C2 and C3."""
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
# C1: the closed forms of the tilted pair


def claim_c1_identity(name: str, meas: Sequence[FDMeasurement], *, theory: Theory = _theory) -> Claim:
    """C1a: f_P - f_Q from the atoms equals ``theory.tilted_difference_mp`` at every node, to rounding.

    measured = max over L and nodes of log10(|difference| / (f_P + f_Q)) + dps (digits lost);
    bound = log10(16 (n_max + 2)): ~n roundings of relative size 10^-dps in each positive Horner sum.
    A floating-point-error quantity by nature (fp=True): the table shows the bound it met.
    """
    _sweep_data(meas)
    digits = []
    for m in meas:
        closed = theory.tilted_difference_mp(m.x, m.L, m.M, m.dps)
        with mpmath.workdps(m.dps):
            vals = [abs(h - c) / t for h, c, t in zip(m.diff, closed, m.total, strict=True)]
            # Python's max drops a NaN that does not come first: a NaN anywhere must fail the claim
            worst = mpmath.inf if any(mpmath.isnan(v) for v in vals) else max(vals)
            digits.append(float(mpmath.log10(worst)) + m.dps if worst > 0 else -math.inf)
    bound = max(identity_rounding_digits(m.n) for m in meas)
    return check_upper(name, max(digits), bound, fp=True,
                       why="mp sums of n+1 positive terms carry <= ~n ulps; bound log10(16(n+2)) digits"
                       ).with_details(digits=np.array(digits))


def _claim_c1_distance(name: str, measured: np.ndarray, predicted: list[tuple[float, float]],
                        tol: float) -> Claim:
    dev = max_rel_dev(measured, [p[0] for p in predicted])
    return check_absolute(name, dev, 0.0, tol, fp=True,
                          why="Gauss-Legendre and quad errors (panel doubling, quad estimate) are <~1e-12"
                          ).with_details(predicted=np.array([p[0] for p in predicted]),
                                         rel_err=strict_max([p[1] for p in predicted]))


def claim_c1_tv(name: str, meas: Sequence[FDMeasurement], tol: float = C1_TOL, *,
                 theory: Theory = _theory) -> Claim:
    """C1b: max over L of |TV measured / ``theory.log_tv_closed`` - 1| <= tol (details: predicted, rel_err)."""
    _sweep_data(meas)
    return _claim_c1_distance(name, np.array([m.log_tv for m in meas]),
                               [theory.log_tv_closed(m.L, m.M) for m in meas], tol)


def claim_c1_h(name: str, meas: Sequence[FDMeasurement], tol: float = C1_TOL, *,
                theory: Theory = _theory) -> Claim:
    """C1c: max over L of |H measured / ``theory.log_h_closed`` - 1| <= tol (details: predicted, rel_err)."""
    _sweep_data(meas)
    return _claim_c1_distance(name, np.array([m.log_h for m in meas]),
                               [theory.log_h_closed(m.L, m.M) for m in meas], tol)


# --------------------------------------------------------------------------------------------------
# C2, C2b, C3: the asymptotic constants

L_FIT_MIN = 10  # the asymptotic fits use L >= 10


def remainder_intercept(L: np.ndarray, y: np.ndarray, L_fit_min: int = L_FIT_MIN,
                        powers: Sequence[int] = (1, 2)) -> float:
    """Intercept of y_L regressed on [1, n^-k for k in powers] (n = L + 1) over L >= L_fit_min.

    y_L is a residual of measured values against a theory's expansion (so this fit is part of the decision).
    """
    L = np.asarray(L)
    y = np.asarray(y, dtype=float)
    if y.shape != L.shape:
        raise ValueError(f"L and y must have the same length; got {L.shape}, {y.shape}")
    sel = L >= L_fit_min
    if sel.sum() < len(powers) + 2:
        raise ValueError(f"need at least {len(powers) + 2} values L >= {L_fit_min} for this fit")
    n = L[sel] + 1.0
    design = np.column_stack([np.ones_like(n)] + [n ** (-float(k)) for k in powers])
    return float(np.linalg.lstsq(design, y[sel], rcond=None)[0][0])


def refit_sensitivity(fit: Callable[..., float], L: np.ndarray, y: np.ndarray, powers: Sequence[int],
                      extra_power: int) -> float:
    """Truncation-error estimate of an asymptotic fit ``fit(L, y, L_fit_min=..., powers=...)``: the largest change
    of the fitted constant when (i) the next power n^-extra_power is added, or (ii) the smallest L >= 10 is
    dropped from the fit (each only where enough points remain). nan if neither variant is feasible."""
    L = np.asarray(L)
    base = fit(L, y, powers=tuple(powers))
    first = int(L[L >= L_FIT_MIN].min())
    changes = []
    for variant in ({"powers": (*powers, extra_power)}, {"powers": tuple(powers), "L_fit_min": first + 1}):
        try:
            changes.append(abs(fit(L, y, **variant) - base))
        except ValueError:
            continue
    return max(changes) if changes else float("nan")


def claim_c2(name: str, meas: Sequence[FDMeasurement], *, theory: Theory = _theory) -> Claim:
    """C2: the fitted asymptotic increment b of log(H/TV) per unit L equals ``theory.ratio_slope(M)``.

    details: ``sens``, the fit's own truncation estimate (largest refit change of b).
    """
    L, M = _sweep_data(meas)
    r = np.array([m.log_h - m.log_tv for m in meas])
    b = fit_increments(L, r)[0]
    sens = refit_sensitivity(increment_slope, L, r, (2, 3), 4)
    return check_absolute(name, b, theory.ratio_slope(M), rate_tolerance(M),
                          why="fit b + c/n^2 + e/n^3 exact to O(n^-4); envelope 1e-3(1+M^4) >> refit change"
                          ).with_details(sens=sens)


def claim_c2b(name: str, meas: Sequence[FDMeasurement], *, theory: Theory = _theory) -> Claim:
    """C2b: log(H_L/TV_L) minus ``theory.log_ratio_asymptotic`` tends to 0 (no constant is left).

    Both forms of the expansion (Gamma functions and Stirling) are checked: for each, the residual
    d_L = log H_L - log TV_L - (expansion) is regressed on [1, 1/n, 1/n^2] over L >= 10 and its intercept
    (the residual at n = infinity) must vanish; measured = the intercept of larger size.
    details: ``intercepts`` (Gamma, Stirling), ``sens`` (largest refit change of either intercept).
    """
    L, M = _sweep_data(meas)
    r = np.array([m.log_h - m.log_tv for m in meas])
    icpts, sens = [], []
    for stirling in (False, True):
        d = r - np.array([theory.log_ratio_asymptotic(int(v), M, stirling=stirling) for v in L])
        icpts.append(remainder_intercept(L, d))
        sens.append(refit_sensitivity(remainder_intercept, L, d, (1, 2), 3))
    worst = icpts[int(np.argmax(np.abs(icpts)))]
    return check_absolute(name, worst, 0.0, rate_tolerance(M),
                          why="fit a + b/n + c/n^2 exact to O(n^-3); envelope 1e-3(1+M^4) >> refit change"
                          ).with_details(intercepts=np.array(icpts), sens=max(sens))


def claim_c3(name: str, meas: Sequence[FDMeasurement], *, theory: Theory = _theory) -> Claim:
    """C3: the 1/n coefficient of log TV_L - ``theory.tv_leading`` equals ``theory.c1(M)``.

    Measured: the intercept of y_L = n (log TV_L - tv_leading) regressed on [1, 1/n, 1/n^2] over L >= 10.
    details: ``sens``, the fit's own truncation estimate (largest refit change of the coefficient).
    """
    L, M = _sweep_data(meas)
    log_tv = np.array([m.log_tv for m in meas])
    y = (L + 1.0) * (log_tv - np.array([theory.tv_leading(int(v), M) for v in L]))
    c_hat = remainder_intercept(L, y)
    sens = refit_sensitivity(remainder_intercept, L, y, (1, 2), 3)
    return check_absolute(name, c_hat, theory.c1(M), rate_tolerance(M),
                          why="fit c1 + d/n + e/n^2 exact to O(n^-3); envelope 1e-3(1+M^4) >> refit change"
                          ).with_details(sens=sens)


# --------------------------------------------------------------------------------------------------
# C4: the inequalities on the test bed


def _ratio_claim(name: str, ratio: np.ndarray) -> Claim:
    return check_upper(name, float(np.max(ratio)), 1.0, tol=INEQUALITY_SLACK,
                       why="a proved inequality; slack 1e-9 >> quadrature/rounding error (~1e-13 relative)")


def claim_c4_lecam_lower(name: str, tv: np.ndarray, h: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """C4a: max over the test bed of H^2 / ``theory.h2_bound_lecam(TV)`` <= 1 (+ 1e-9 rounding slack)."""
    tv, h = np.asarray(tv, dtype=float), np.asarray(h, dtype=float)
    return _ratio_claim(name, h**2 / theory.h2_bound_lecam(tv))


def claim_c4_lecam_upper(name: str, tv: np.ndarray, h: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """C4b: max over the test bed of TV / ``theory.tv_bound_lecam(H)`` <= 1 (+ 1e-9 rounding slack)."""
    tv, h = np.asarray(tv, dtype=float), np.asarray(h, dtype=float)
    return _ratio_claim(name, tv / theory.tv_bound_lecam(h))


def claim_c4_thm71(name: str, tv: np.ndarray, h: np.ndarray, M: float, *, theory: Theory = _theory) -> Claim:
    """C4c: max over the test bed of H^2 / ``theory.h2_bound_thm71(TV, M)`` <= 1 (+ 1e-9 rounding slack)."""
    tv, h = np.asarray(tv, dtype=float), np.asarray(h, dtype=float)
    return _ratio_claim(name, h**2 / theory.h2_bound_thm71(tv, M))


THM71_T_STEP = 0.05  # the T grid of B_M, passed to ``theory.thm71_bound``; its half-step bounds C4e


def claim_c4_thm71_minimum(name: str, tv: np.ndarray, M: float, log_b_direct: np.ndarray, x_star: np.ndarray,
                            curvature: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """C4e: B_M of ``theory.thm71_bound`` (grid in T, step 0.05) against the closed-form minimum over T.

    Measured: log B_direct, the minimum over every L' and over T in [M, M + 30] with T solved exactly
    (model_float.thm71_minimum_direct, from the series tail moments of C4d). The grid is a subset of the range,
    so d = log B_grid - log B_direct >= 0; the grid has a point within h = 0.025 of T*, and (log B)'(T*) = 0
    inside the range, so d <= delta = (h^2/2) G, G >= (log B)'' on that cell (``curvature``). measured = the
    largest excess of d over [0, delta] (0 when every d lies inside, rounding otherwise: fp=True),
    <= 1e-9 (rounding slack).
    details: the largest d / delta and the largest delta.
    """
    tv = np.asarray(tv, dtype=float)
    b_grid = np.asarray(theory.thm71_bound(tv, M, T_step=THM71_T_STEP)[0], dtype=float)
    d = np.log(b_grid) - np.asarray(log_b_direct, dtype=float)
    delta = 0.5 * (THM71_T_STEP / 2) ** 2 * np.asarray(curvature, dtype=float)
    excess = float(np.max(np.maximum(np.maximum(-d, d - delta), 0.0))) if np.all(np.isfinite(d)) else math.inf
    return check_upper(name, excess, 0.0, tol=INEQUALITY_SLACK, fp=True,
                       why="grid min >= true min (a subset), <= it + (h^2/2) max (log B)'' (Taylor at T*)"
                       ).with_details(d_over_delta=float(np.max(d / delta)) if np.all(np.isfinite(d)) else math.inf,
                                      delta_max=float(np.max(delta)))


def claim_c4_tail_moments(name: str, log_eta: np.ndarray, log_zeta: np.ndarray, M: float, tol: float = C1_TOL, *,
                           theory: Theory = _theory) -> Claim:
    """C4d: eta_L, zeta_L (L = 0..L_top) from their moment series equal ``theory.eta_zeta(M, L_top)``.

    measured = max over L of |series / theory - 1| for eta_L and zeta_L; the series are exact to rounding of
    logs of size <~ 1100 (~1e-13 relative), the theory's composite Gauss-Legendre rule on a smooth integrand
    to ~1e-13: tolerance 1e-9, a floating-point-error quantity (fp=True).
    """
    le, lz = np.asarray(log_eta, dtype=float), np.asarray(log_zeta, dtype=float)
    if le.shape != lz.shape or le.ndim != 1 or le.size < 2:
        raise ValueError("log_eta and log_zeta must be equally long 1-D arrays (L = 0..L_top)")
    pe, pz = theory.eta_zeta(M, le.size - 1)
    dev = strict_max([max_rel_dev(le, pe), max_rel_dev(lz, pz)])
    return check_absolute(name, dev, 0.0, tol, fp=True,
                          why="series exact to rounding (~1e-13); Gauss-Legendre on a smooth integrand ~1e-13"
                          ).with_details(dev_eta=max_rel_dev(le, pe), dev_zeta=max_rel_dev(lz, pz))


# --------------------------------------------------------------------------------------------------
# C5: the hypercontractive loss of the monomial


def claim_c5_monomial(name: str, degrees: Sequence[int], ratios: Sequence[float], tol: float = C1_TOL, *,
                       theory: Theory = _theory) -> Claim:
    """C5: the measured ||Z^L||_2 / ||Z^L||_1 equals exp(``theory.log_monomial_l2_l1(L)``) for every degree.

    measured = max over the degrees of the relative deviation; the L^2 norm is an exact moment sum and the L^1
    norm a Gauss-Legendre quadrature split at 0 (~1e-13 relative): tolerance 1e-9 (fp=True).
    """
    Ls = [int(v) for v in degrees]
    r = np.asarray(ratios, dtype=float)
    if r.shape != (len(Ls),) or not Ls or np.any(r <= 0):
        raise ValueError("degrees and ratios must be equally long and non-empty, the ratios > 0")
    dev = max_rel_dev(np.log(r), [theory.log_monomial_l2_l1(v) for v in Ls])
    return check_absolute(name, dev, 0.0, tol, fp=True,
                          why="exact moment sum over Gauss-Legendre L^1 norm (~1e-13 relative)")


# --------------------------------------------------------------------------------------------------
# C6: the diluted pair


def _dilution_rows(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=float)
    if rows.ndim != 2 or rows.shape[1] != 5 or rows.shape[0] == 0:
        raise ValueError(f"rows must be (alpha, H^2, TV, A, C) rows; got shape {rows.shape}")
    return rows


def dilution_width(alpha: float, A: float, C: float) -> float:
    """w = a (1 + C/A) / (1 - a (1 + C/A)): every bound of the sandwich is within the relative distance w of H^2.

    With H^2 in [l, u], l = a^2 A/8 (1 - a C/(2A)), u = a^2 A/(8 (1 - a)): u/l - 1 <= w, 1 - l/u <= w,
    1 - l'/u <= a (1 + C/A) for l' = a^2 A/8 (1 - a C/A), and H^2 / (a^2 A/8) - 1 in [-a C/(2A), a/(1 - a)].
    """
    x = alpha * (1 + C / A)
    if not x < 1:
        raise ValueError(f"alpha (1 + C/A) = {x} must be < 1")
    return x / (1 - x)


def claim_c6_sandwich(name: str, rows: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """C6a: lower_weak <= H^2, lower_tight <= H^2 <= upper (``theory.dilution_sandwich``) for every diluted
    pair, each bound against the measured H^2.

    measured = the largest of lower_weak/H^2, lower_tight/H^2, H^2/upper; <= 1 + 1e-9 (rounding slack).
    """
    ratios = []
    for a, h2, _tv, A, C in _dilution_rows(rows):
        d = theory.dilution_sandwich(A, C, a)
        ratios += [d["lower_weak"] / h2, d["lower_tight"] / h2, h2 / d["upper"]]
    return _ratio_claim(name, np.array(ratios))


def claim_c6_tight(name: str, rows: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """C6b: every bound of ``theory.dilution_sandwich`` and the limit ratio_limit / (E|F|)^2 of H^2/TV^2 are
    within the relative distance w = :func:`dilution_width` of the measured H^2 (resp. H^2/TV^2).

    measured = max over pairs and the four quantities of |quantity / measured - 1| / w; predicted <= 1.
    E|F| = 2 TV(P, Q) = 2 TV_a / a (TV of the diluted pair is exactly a TV(P, Q)).
    """
    devs = []
    for a, h2, tv, A, C in _dilution_rows(rows):
        d = theory.dilution_sandwich(A, C, a)
        w = dilution_width(a, A, C)
        limit = d["ratio_limit"] / (2 * tv / a) ** 2  # predicted lim H^2/TV^2
        devs += [abs(d[k] / h2 - 1) / w for k in ("upper", "lower_tight", "lower_weak")]
        devs.append(abs(limit / (h2 / tv**2) - 1) / w)
    return check_upper(name, float(np.max(devs)), 1.0, tol=0.0,
                       why="the sandwich pins H^2 to relative O(a): w = a(1+C/A)/(1-a(1+C/A)) >> rounding (1e-9)"
                       ).with_details(devs=np.array(devs))


# --------------------------------------------------------------------------------------------------
# C7: the product pair in R^2 and Theorem 'upper' in R^d


def claim_c7_product_ratio(name: str, meas: Sequence[ProductMeasurement], tol: float = C7_TOL, *,
                           theory: Theory = _theory) -> Claim:
    """C7a: log(H/TV) of each product pair (2-D quadrature from the atoms) against ``theory.product_log_ratio``.

    The prediction carries the second-order term of the product law (``theory.product_second_order``);
    measured = max over the pairs of |measured - predicted| less the allowance (0 when every deviation lies
    inside it). The allowance is the proposition's third-order remainder bound, capped at a tenth of the larger
    of the second-order term and the tolerance: a remainder as large as the effect would leave nothing to
    decide, so a theory cannot pass by stating a large remainder (the true bound lies far below the cap at the
    chapter's settings). Tolerance ``C7_TOL`` = 1e-12, ten times the quadrature budget (2-D Gauss-Legendre,
    panel-doubling estimate ~1e-14; the 1-D closed forms ~1e-13) and a fifteenth of the second-order term at the
    smallest pair, so that term is resolved: a floating-point-error quantity (fp=True).
    details: the deviations, the remainder bounds, the allowances and the predictions.
    """
    if not meas:
        raise ValueError("need at least one product pair")
    preds = [theory.product_log_ratio(*m.L, *m.M) for m in meas]
    terms = np.array([theory.product_second_order(*m.L, *m.M)[0] for m in meas])
    devs = np.array([m.log_ratio - p[0] for m, p in zip(meas, preds, strict=True)])
    rems = np.array([p[1] for p in preds])
    allowances = np.minimum(rems, 0.1 * np.maximum(np.abs(terms), tol))
    excess = strict_max(np.maximum(np.abs(devs) - allowances, 0.0))
    return check_upper(name, excess, 0.0, tol=tol, fp=True,
                       why="2-D Gauss-Legendre (doubling ~1e-14) and 1-D quad (~1e-13); third-order remainder "
                           "bound included, capped at a tenth of the second-order term"
                       ).with_details(devs=devs, remainders=rems, allowances=allowances,
                                      predicted=np.array([p[0] for p in preds]))


def claim_c7_rd_bound(name: str, tv: np.ndarray, h: np.ndarray, M: float, d: int, *,
                      theory: Theory = _theory) -> Claim:
    """C7b: max over the product pairs of log10(H^2 / ``theory.h2_bound_rd(TV, M, d)``) <= 0 (+ 1e-9 relative slack).

    The bound lies tens of decades above H^2, so the ratio is shown as its decimal logarithm (a ratio of
    1e-28 would show digits of a tiny number; its logarithm shows how far below the bound H^2 lies). A
    non-positive or NaN ratio (a wrong bound) gives NaN, and the claim fails.
    """
    tv, h = np.asarray(tv, dtype=float), np.asarray(h, dtype=float)
    worst = strict_max(h**2 / theory.h2_bound_rd(tv, M, d))
    log10_worst = math.log10(worst) if worst > 0 else math.nan
    return check_upper(name, log10_worst, 0.0, tol=math.log10(1 + INEQUALITY_SLACK),
                       why="a proved inequality; slack 1e-9 relative >> quadrature/rounding error (~1e-13)")


def chebyshev_tv_allowance(m: ChebyshevMeasurement) -> float:
    """The proved bound on |log TV_n - log((lambda/8) ||q_n||_1)|, from measured quantities only.

    TV_n = (lambda/8) ||g_n||_1 and | ||g_n||_1 - ||q_n||_1 | <= ||r_n||_1 <= ||r_n||_2 (Cauchy-Schwarz under phi),
    so ||q_n||_1 lies in ||g_n||_1 (1 -+ rho), rho = ||r_n||_2 / ||g_n||_1, and the logs differ by at most
    -log(1 - rho). A rho >= 1 leaves no bound: NaN, and the claim fails.
    """
    rho = math.exp(m.log_r_l2 - (math.log(8.0) + m.log_tv - m.log_lambda))
    return -math.log1p(-rho) if rho < 1 else math.nan


def chebyshev_h_interval(m: ChebyshevMeasurement) -> tuple[float, float]:
    """The proved interval of log H_n - log(lambda ||q_n||_2 / (8 sqrt 2)), from measured quantities only.

    H^2 = int Psi(1 + u/4) f_eta1 with Psi(1 + s) = (s^2/8) beta(s), beta(s) = 4/(1 + sqrt(1 + s))^2 decreasing and
    |u| <= omega; int u^2 f_eta1 = lambda^2 int g^2 phi^2 / f_eta1, and e^{-a^2/2} <= f_eta0/phi <= cosh(a x) gives
    ||g||^2 (1 - lambda E[g^2 cosh aZ]/||g||^2) <= that integral / lambda^2 <= ||g||^2 / (1 - lambda (1 - e^{-a^2/2}));
    ||g||^2 = ||q||^2 + ||r||^2 (orthogonal Hermite parts).
    """
    beta = lambda s: 4.0 / (1.0 + math.sqrt(1.0 + s)) ** 2  # noqa: E731
    lam, a = math.exp(m.log_lambda), min(1.0, m.M)
    r2g2 = math.exp(2 * (m.log_r_l2 - m.log_g_l2))  # ||r||^2 / ||g||^2 < 1
    lo = 0.5 * math.log(beta(m.spread / 4)) + 0.5 * math.log1p(-lam * m.cosh_ratio)
    hi = (0.5 * math.log(beta(-m.spread / 4)) - 0.5 * math.log1p(-lam * (1 - math.exp(-a * a / 2)))
          - 0.5 * math.log1p(-r2g2))
    return lo, hi


def _chebyshev_claim(name: str, devs: np.ndarray, lo: np.ndarray, hi: np.ndarray, tol: float, why: str) -> Claim:
    """measured = the largest excess of a deviation beyond its proved interval (0 when all lie inside)."""
    excess = strict_max(np.maximum(np.maximum(lo - devs, devs - hi), 0.0))
    return check_upper(name, excess, 0.0, tol=tol, fp=True, why=why
                       ).with_details(devs=devs, lo=lo, hi=hi)


def claim_c8_chebyshev_tv(name: str, meas: Sequence[ChebyshevMeasurement], *, theory: Theory = _theory) -> Claim:
    """C8a: log TV_n of the paper's pair (quadrature from the atoms) against log((lambda/8) ||q_n||_1) (theory).

    The allowance is :func:`chebyshev_tv_allowance` (the Hermite tail, computed from the atoms' moments);
    tolerance ``C8_TV_QUAD`` for the quadrature of |f_pi - f_eta| (panel doubling <= 2.4e-5 relative).
    """
    if not meas:
        raise ValueError("need at least one Chebyshev pair")
    devs = np.array([m.log_tv - theory.chebyshev_log_tv(m.n, m.M) for m in meas])
    tol = np.array([chebyshev_tv_allowance(m) for m in meas])
    return _chebyshev_claim(name, devs, -tol, tol, C8_TV_QUAD,
                            "proved: |log TV - log((lambda/8)||q||_1)| <= -log(1 - ||r||_2/||g||_1); "
                            "+ 1e-3 quadrature (panel doubling <= 2.4e-5)")


def claim_c8_chebyshev_h(name: str, meas: Sequence[ChebyshevMeasurement], *, theory: Theory = _theory) -> Claim:
    """C8b: log H_n of the paper's pair (quadrature from the atoms) against log(lambda ||q_n||_2 / (8 sqrt 2)).

    The interval is :func:`chebyshev_h_interval`; tolerance ``INEQUALITY_SLACK`` for quadrature and rounding.
    """
    if not meas:
        raise ValueError("need at least one Chebyshev pair")
    devs = np.array([m.log_h - theory.chebyshev_log_h(m.n, m.M) for m in meas])
    bounds = np.array([chebyshev_h_interval(m) for m in meas])
    return _chebyshev_claim(name, devs, bounds[:, 0], bounds[:, 1], INEQUALITY_SLACK,
                            "proved interval from |u| <= omega, f_eta0/phi in [e^{-a^2/2}, cosh ax], "
                            "||g||^2 = ||q||^2 + ||r||^2; + 1e-9 quadrature")
