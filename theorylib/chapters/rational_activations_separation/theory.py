"""The theory of chapter 'rational-activations-separation': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. Every claim reads its prediction from this module; a wrong theory
``wrong_...`` has the signature of the function it replaces and is passed to a claim as
``theory=variant(theory, f=theory.wrong_f)``.

Notation (Tang and Townsend 2026; the Newton map is the scaled Newton iteration for the matrix sign
function of Byers and Xu 2008): ell_0 = ell in (0, 1), F_j(y) = (y + ell_j / y) / (1 + ell_j),
ell_{j+1} = F_j(sqrt(ell_j)) = 2 sqrt(ell_j) / (1 + ell_j), e_j = 1 - ell_j.
"""

from __future__ import annotations

import math

import numpy as np

from theorylib.core.validation import check_int, check_positive, check_positive_int, check_real


def _check_unit(name: str, value: float) -> float:
    return check_real(name, value, 0.0, 1.0, open_low=True, open_high=True)


def schedule(ell: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(ell_j, e_j) for j = 0..k, e_j = 1 - ell_j carried without cancellation.

    ell_{j+1} = 2 sqrt(ell_j) / (1 + ell_j) and e_{j+1} = e_j^2 / ((1 + sqrt(ell_j))^2 (1 + ell_j))
    (Theorem: sign error, part b).
    """
    ell = _check_unit("ell", ell)
    k = check_int("k", k, low=0)
    ells, errs = np.empty(k + 1), np.empty(k + 1)
    ells[0], errs[0] = ell, 1.0 - ell
    for j in range(k):
        lj, ej = ells[j], errs[j]
        ells[j + 1] = 2.0 * math.sqrt(lj) / (1.0 + lj)
        errs[j + 1] = ej * ej / ((1.0 + math.sqrt(lj)) ** 2 * (1.0 + lj))
    return ells, errs


def sign_error(ell: float, k: int) -> float:
    """sup_{ell <= |x| <= 1} |sign x - s_k(x)| = 1 - ell_k = e_k, attained (part a)."""
    k = check_positive_int("k", k)
    return float(schedule(ell, k)[1][k])


def wrong_sign_error(ell: float, k: int) -> float:
    """Unscaled Newton (mu_j = 1): error 2 c_k / (1 - c_k), c_k = ((1 - ell)/(1 + ell))^(2^k)."""
    ell = _check_unit("ell", ell)
    k = check_positive_int("k", k)
    c = math.exp(2.0**k * math.log((1.0 - ell) / (1.0 + ell)))
    return 2.0 * c / (1.0 - c)


def depth_needed(eps: float, ell: float | None = None) -> int:
    """K(ell, eps) = min{k >= 1 : e_k <= eps}, ell = eps when not given (Theorem: |x| network)."""
    eps = _check_unit("eps", eps)
    ell = eps if ell is None else _check_unit("ell", ell)
    lj, ej, k = ell, 1.0 - ell, 0
    while True:
        lj, ej = 2.0 * math.sqrt(lj) / (1.0 + lj), ej * ej / ((1.0 + math.sqrt(lj)) ** 2 * (1.0 + lj))
        k += 1
        if ej <= eps:
            return k


def wrong_depth_needed(eps: float, ell: float | None = None) -> int:
    """Plain Newton depth: min{k : 2 c_k / (1 - c_k) <= eps}, about log2(1/eps) + log2 ln(1/eps)."""
    eps = _check_unit("eps", eps)
    ell = eps if ell is None else _check_unit("ell", ell)
    k = 1
    while wrong_sign_error(ell, k) > eps:
        k += 1
    return k


def depth_bound(eps: float, ell: float) -> int:
    """Part c: K(ell, eps) <= max(0, ceil(log2 log2(1/ell))) + max(0, ceil(log2(log2(4/eps) / 3)))."""
    eps, ell = _check_unit("eps", eps), _check_unit("ell", ell)
    j1 = max(0, math.ceil(math.log2(math.log2(1.0 / ell))))
    i2 = max(0, math.ceil(math.log2(math.log2(4.0 / eps) / 3.0)))
    return max(1, j1 + i2)


def log_depth_needed(log10_eps: float) -> int:
    """K(eps, eps) for eps = 10**log10_eps far below the float range, with ell_j and e_j in logs.

    Phase 1 in log ell: ln ell_{j+1} = ln 2 + ln(ell_j)/2 - ln(1 + ell_j); phase 2 in ln e with the e-form.
    """
    log10_eps = check_real("log10_eps", log10_eps, high=0.0, open_high=True)
    ln_eps = log10_eps * math.log(10.0)
    ln_l, k = ln_eps, 0
    ln_e = math.log1p(-math.exp(ln_l))
    while True:
        ell = math.exp(ln_l)
        ln_e_next = 2.0 * ln_e - 2.0 * math.log1p(math.sqrt(ell)) - math.log1p(ell)
        ln_l = math.log(2.0) + 0.5 * ln_l - math.log1p(ell)
        ln_e = ln_e_next
        k += 1
        if ln_e <= ln_eps:
            return k


def pl_error_bounds(k: int, curv_min: float, curv_max: float) -> tuple[float, float]:
    """Bounds on the minimax error of continuous PL fits with k equispaced pieces to a convex f on [0, 1].

    If curv_min <= f'' <= curv_max on [0, 1]: every PL g with k pieces has ||f - g||_inf >= curv_min / (16 k^2)
    (Theorem 4b), and the interpolant at the k + 1 equispaced knots shifted down by half its error has error at
    most curv_max / (16 k^2). For x^2 (curv_min = curv_max = 2) both equal 1/(8 k^2).
    """
    k = check_positive_int("k", k)
    lo = check_positive("curv_min", curv_min)
    hi = check_real("curv_max", curv_max, lo)
    return lo / (16.0 * k * k), hi / (16.0 * k * k)


def wrong_pl_error_bounds(k: int, curv_min: float, curv_max: float) -> tuple[float, float]:
    """The rate a rational approximant would give, exponential in k: curvature e^{-k} / 16."""
    k = check_positive_int("k", k)
    return curv_min * math.exp(-k) / 16.0, curv_max * math.exp(-k) / 16.0


def sawtooth_error(m: int) -> float:
    """sup_{[0,1]} |f_m - x^2| = 2^{-2m-2}: f_m is the interpolant of x^2 on the dyadic knots i 2^{-m}."""
    return 2.0 ** (-2 * check_positive_int("m", m) - 2)


def wrong_sawtooth_error(m: int) -> float:
    """'The sawtooth is optimal': 1/(8 k^2) with k = 2^m pieces, 2^{-2m-3}."""
    return 2.0 ** (-2 * check_positive_int("m", m) - 3)


def sawtooth_pieces(m: int) -> int:
    """The sawtooth network with 2m ReLU neurons is linear on exactly 2^m pieces of [0, 1]."""
    return 2 ** check_positive_int("m", m)


def wrong_sawtooth_pieces(m: int) -> int:
    """The counting bound 2^N itself, N = 2m neurons: 4^m."""
    return 4 ** check_positive_int("m", m)
