"""The claims of chapter 'rational-activations-separation': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then the
measured data, then the wrong-theory hook ``theory=``. The tolerances are the error analysis of the
chapter and live here, not in the theory.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np

from theorylib.core.claims import Claim, check_absolute, check_exact, check_lower, check_upper

from . import theory as _theory

Theory = ModuleType | SimpleNamespace

UNIT_ROUNDOFF = 2.0**-53


def sign_tolerance(k: int) -> float:
    """Rounding budget of 1 - s_k(x) evaluated by k neurons: (4k + 1) u.

    Each map t -> (t^2 + ell_j)/((1 + ell_j) t) costs at most 4 roundings (relative u each), its relative
    condition number |y F'(y)/F(y)| = |y - ell_j/y|/(y + ell_j/y) is below 1 on [ell_j, 1], so relative
    errors add up without growth: |s_k^fl - s_k| <= 4k u s_k, plus u for the subtraction 1 - s_k.
    """
    return (4 * k + 1) * UNIT_ROUNDOFF


def claim_sign_error(name: str, ell: float, ks: Sequence[int], measured: Sequence[float], *,
                     theory: Theory = _theory) -> Claim:
    """Measured sup_{[ell,1]} (1 - s_k) of the sign network equals 1 - ell_k for every k, to rounding."""
    ks = [int(k) for k in ks]
    m = np.asarray(measured, dtype=float)
    p = np.array([theory.sign_error(ell, k) for k in ks])
    dev = np.abs(m - p)
    tol = sign_tolerance(max(ks))
    worst = float(np.max(dev)) if np.all(np.isfinite(dev)) else float("inf")
    return check_absolute(
        name, worst, 0.0, tol,
        "max over k of |measured - (1 - ell_k)|; rounding of k neurons, (4k + 1) u at the largest k",
        fp=True).with_details(predicted=p, deviation=dev)


def claim_sign_depth(name: str, ell: float, eps: Sequence[float], measured: Sequence[float], *,
                     theory: Theory = _theory) -> Claim:
    """First depth k whose measured sign error is <= eps equals K(ell, eps) for every eps (depths beyond the
    measured ones are read as len(measured) + 1)."""
    m = np.asarray(measured, dtype=float)
    cap = m.size + 1
    k_meas = np.array([int(np.argmax(m <= e)) + 1 if np.any(m <= e) else cap for e in eps])
    k_pred = np.array([min(theory.depth_needed(float(e), ell), cap) for e in eps])
    wrong = int(np.count_nonzero(k_meas != k_pred))
    return check_exact(name, wrong, 0, "measured first depth with error <= eps vs K(ell, eps); number of eps "
                       "that differ").with_details(k_meas=k_meas)


def claim_depth(name: str, eps: Sequence[float], k_measured: Sequence[int], *,
                theory: Theory = _theory) -> Claim:
    """Measured depth K_meas(eps) lies in {K(eps,eps) - 1, K(eps,eps)} for every eps (proved sandwich)."""
    k_pred = np.array([theory.depth_needed(float(e)) for e in eps])
    km = np.asarray(k_measured, dtype=int)
    outside = int(np.count_nonzero((km > k_pred) | (km < k_pred - 1)))
    return check_exact(name, outside, 0,
                       "K - 1 <= K_meas <= K is proved; counts the eps outside it").with_details(
        k_pred=k_pred)


def claim_depth_log(name: str, eps: Sequence[float], k_measured: Sequence[int], *,
                    theory: Theory = _theory) -> Claim:
    """The log-domain depth law (the one extended to eps = 10^-100000) brackets the measured depth too."""
    k_log = np.array([theory.log_depth_needed(float(np.log10(e))) for e in eps])
    km = np.asarray(k_measured, dtype=int)
    outside = int(np.count_nonzero((km > k_log) | (km < k_log - 1)))
    return check_exact(name, outside, 0, "K - 1 <= K_meas <= K with K from the recursion in logarithms; "
                       "counts the eps outside it")


def claim_depth_bound(name: str, eps: Sequence[float], k_measured: Sequence[int], *,
                      theory: Theory = _theory) -> Claim:
    """The measured depth never exceeds the closed-form bound of the depth theorem (part c)."""
    bound = np.array([theory.depth_bound(float(e), float(e)) for e in eps])
    excess = int(np.max(np.asarray(k_measured, dtype=int) - bound))
    return check_upper(name, excess, 0, "max over eps of K_meas - bound(c); the bound is proved").with_details(
        bound=bound)


def lp_tolerance(M: int) -> tuple[float, float]:
    """(lower, upper) slack of E_k 8k^2 around 1: the grid (M points per piece) under-estimates the sup of a
    C^2 error by at most max|f''| delta^2/8 = 2/M^2 relative (delta = h/M); HiGHS's feasibility tolerance
    1e-10 on data of size <= 8k^2 gives 1e-8 either way."""
    return 2.0 / M**2 + 1e-8, 1e-8


def claim_pl_square(name: str, ks: Sequence[int], errors: Sequence[float], M: int, *,
                    theory: Theory = _theory) -> Claim:
    """The LP optimum for x^2 with k equispaced pieces is 1/(8 k^2) for every k (Theorem 4b is sharp).

    With f'' = 2 the lower and the upper bound of ``pl_error_bounds`` meet, and the measured E_k must equal
    each of them, to the grid's slack below and the LP tolerance above (a theory whose bounds do not meet
    predicts no value and fails).
    """
    bounds = np.array([theory.pl_error_bounds(int(k), 2.0, 2.0) for k in ks])
    E = np.asarray(errors, dtype=float)
    lo, hi = lp_tolerance(M)
    dev = (E[:, None] / bounds - 1.0).ravel()
    excess = np.maximum(-dev - lo, dev - hi)
    worst = float(dev[int(np.argmax(excess))])
    return check_absolute(name, 1.0 + worst, 1.0, lo if worst < 0 else hi,
                          "worst E_k 8k^2; grid under-estimates by <= 2/M^2, LP tolerance 1e-8",
                          fp=True).with_details(ratio=E * 8.0 * np.asarray(ks, dtype=float) ** 2)


def claim_pl_lower(name: str, ks: Sequence[int], errors: Sequence[float], M: int, curv_min: float,
                   curv_max: float, *, theory: Theory = _theory) -> Claim:
    """Theorem 4b's lower bound L_k = curv_min/(16 k^2) for a convex f with curv_min <= f'' <= curv_max.

    The grid LP optimum E_k under-estimates the equispaced optimum (itself >= the free-knot one) by at most
    curv_max delta^2/8, delta = 1/(k M), plus the LP tolerance 1e-8/(8 k^2): relative to L_k a slack of
    2 curv_max/(curv_min M^2) + 2e-8/curv_min at every k.
    """
    E = np.asarray(errors, dtype=float)
    lower = np.array([theory.pl_error_bounds(int(k), curv_min, curv_max)[0] for k in ks])
    slack = 2.0 * curv_max / (curv_min * M**2) + 2e-8 / curv_min
    return check_lower(name, float(np.min(E / lower)), 1.0,
                       "min_k E_k/L_k; the grid under-estimates by <= 2 max f''/(min f'' M^2), LP tolerance",
                       tol=slack).with_details(ratio=E / lower)


def claim_pl_upper(name: str, ks: Sequence[int], errors: Sequence[float], curv_min: float, curv_max: float, *,
                   theory: Theory = _theory) -> Claim:
    """The equispaced fit has error at most U_k = curv_max/(16 k^2) (interpolant shifted by half its error).

    The grid LP can only under-estimate the equispaced optimum, so E_k <= U_k up to the LP tolerance
    1e-8/(8 k^2), i.e. 2e-8/curv_max relative to U_k.
    """
    E = np.asarray(errors, dtype=float)
    upper = np.array([theory.pl_error_bounds(int(k), curv_min, curv_max)[1] for k in ks])
    return check_upper(name, float(np.max(E / upper)), 1.0,
                       "max_k E_k/U_k; the grid only under-estimates; LP tolerance",
                       tol=2e-8 / curv_max).with_details(ratio=E / upper)


def claim_sawtooth_error(name: str, ms: Sequence[int], errors: Sequence[float], *,
                         theory: Theory = _theory) -> Claim:
    """sup |f_m - x^2| measured on a dyadic grid (exact arithmetic) equals 2^{-2m-2} for every m."""
    ratio = np.asarray(errors, dtype=float) / np.array([theory.sawtooth_error(int(m)) for m in ms])
    worst = float(ratio[np.argmax(np.abs(ratio - 1.0))])
    return check_exact(name, worst, 1.0,
                       "dyadic values are exact in binary floating point: the ratio is exactly 1").with_details(
        ratio=ratio)


def claim_sawtooth_pieces(name: str, ms: Sequence[int], pieces: Sequence[int], *,
                          theory: Theory = _theory) -> Claim:
    """The sawtooth network with 2m neurons has exactly 2^m linear pieces for every m."""
    wrong = sum(int(p) != theory.sawtooth_pieces(int(m)) for m, p in zip(ms, pieces, strict=True))
    return check_exact(name, wrong, 0, "slope changes counted exactly on a dyadic grid; number of m that differ")
