"""The theory of chapter 'hellinger-tv-mixtures': closed forms, asymptotics, bounds, named wrong theories.

Reference: J. Jung and C. Gao, *Sharp Inequalities between Total Variation and Hellinger Distances for
Gaussian Mixtures*, arXiv:2602.03202 (2026). Classical background: Le Cam's inequalities
H^2 <= TV <= H sqrt(2 - H^2) (L. Le Cam, *Asymptotic Methods in Statistical Decision Theory*, 1986) and
moment matching for Gaussian mixtures (Y. Wu and P. Yang, Ann. Statist. 48 (2020) 1981-2007).

Conventions. phi is the N(0,1) density, f_P = phi * P, TV(p, q) = (1/2) int |p - q| and
H(p, q)^2 = (1/2) int (sqrt p - sqrt q)^2 = 1 - int sqrt(p q).

The *tilted finite-difference pair* (L even, n = L + 1, atoms theta_a = -M + 2 M a / n, a = 0..n) puts the
weights s C(n, a) e^{theta_a^2/2} on the odd atoms (P_L) and on the even atoms (Q_L),
s = 2 / sum_a C(n, a) e^{theta_a^2/2}. From phi(x - theta) e^{theta^2/2} = phi(x) e^{x theta} and the binomial
theorem, f_P - f_Q = s phi(x) (2 sinh(M x / n))^n and f_P + f_Q = s phi(x) (2 cosh(M x / n))^n, so
TV = (s/2) E|2 sinh U|^n and H^2 = (s/2) E[(2 cosh U)^n t / (1 + sqrt(1 - t))], t = tanh^{2n} U, U = M Z / n.

Everything here is a prediction computed from these formulas (float64, scipy.integrate.quad in log space, or
mpmath for the pointwise identity), never from the pairs' atoms: the measured side is ``model``. The
normalizer s is part of the definition and is computed here from its own formula. A wrong theory
``wrong_...`` has the signature of the function it replaces.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import mpmath
import numpy as np
from scipy import integrate, special

from theorylib.core.validation import check_int

from ._numerics import ArrayLike, check_dps, check_L, check_M, gauss_legendre_panels

LOG_2 = math.log(2.0)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)

# --------------------------------------------------------------------------------------------------
# the normalizer and the closed forms of the tilted pair (Theorem 'sharp' (a), (b))


def log_s_tilted(L: int, M: float) -> float:
    """log s = log 2 - log sum_a C(n, a) e^{theta_a^2/2} (a sum of positive terms: no cancellation)."""
    L, M = check_L(L), check_M(M)
    n = L + 1
    a = np.arange(n + 1)
    theta = -M + 2.0 * M * a / n
    logw = special.gammaln(n + 1) - special.gammaln(a + 1) - special.gammaln(n - a + 1) + 0.5 * theta**2
    return float(LOG_2 - special.logsumexp(logw))


def tilted_s_mp(L: int, M: float, dps: int):
    """s = 2 / sum_a C(n, a) e^{theta_a^2/2} in mpmath at ``dps`` digits (exact atoms -M + 2 M a / n)."""
    L, M, dps = check_L(L), check_M(M), check_dps(dps)
    n = L + 1
    with mpmath.workdps(dps):
        Mm = mpmath.mpf(M)
        return 2 / mpmath.fsum(mpmath.binomial(n, a) * mpmath.exp((-Mm + 2 * Mm * a / n) ** 2 / 2)
                               for a in range(n + 1))


def log_abs_moment(n: float) -> float:
    """log E|Z|^n = (n/2) log 2 + lgamma((n+1)/2) - (1/2) log pi."""
    return 0.5 * n * LOG_2 + math.lgamma(0.5 * (n + 1)) - 0.5 * math.log(math.pi)


def _log_sinhc(u: np.ndarray) -> np.ndarray:
    """log(sinh u / u) for u >= 0, stable at 0 and for large u."""
    u = np.asarray(u, dtype=float)
    out = np.empty_like(u)
    small = u < 1e-3
    us = u[small]
    out[small] = us**2 / 6 - us**4 / 180
    ul = u[~small]
    out[~small] = ul + np.log1p(-np.exp(-2 * ul)) - LOG_2 - np.log(ul)
    return out


def _log_cosh(u: np.ndarray) -> np.ndarray:
    u = np.abs(np.asarray(u, dtype=float))
    return u + np.log1p(np.exp(-2 * u)) - LOG_2


def _log_quad(logf: Callable[[np.ndarray], np.ndarray], z_peak: float, z_hi: float) -> tuple[float, float]:
    """log int_0^z_hi exp(logf(z)) dz and its relative error estimate, integrand scaled by its peak value."""
    ref = float(logf(np.array([z_peak]))[0])

    def g(z: float) -> float:
        return float(np.exp(logf(np.array([z]))[0] - ref))

    pts = [p for p in (z_peak - 3.0, z_peak, z_peak + 3.0) if 0 < p < z_hi]
    val, err = integrate.quad(g, 0.0, z_hi, points=pts, epsabs=0.0, epsrel=1e-13, limit=400)
    return ref + math.log(val), err / val


def log_tv_closed(L: int, M: float) -> tuple[float, float]:
    """(log TV_L, relative error estimate of the quadrature) of the tilted pair from its closed form.

    log TV = log s + n log(2M/n) + log int_0^inf phi(z) z^n sinhc(Mz/n)^n dz (float64, log space).
    """
    L, M = check_L(L), check_M(M)
    n = L + 1

    def log_int(z: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return n * np.log(z) - 0.5 * z * z - HALF_LOG_2PI + n * _log_sinhc(M * z / n)

    li, err = _log_quad(log_int, math.sqrt(n), math.sqrt(2 * n) + M + 40.0)
    return log_s_tilted(L, M) + n * math.log(2 * M / n) + li, err


def log_h_closed(L: int, M: float) -> tuple[float, float]:
    """(log H_L, relative error estimate of the quadrature of H^2) of the tilted pair from its closed form.

    log H^2 = log s + n log 2 + 2n log(M/n)
              + log int_0^inf phi(z) z^{2n} sinhc(u)^{2n} cosh(u)^{-n} / (1 + sqrt(1 - tanh^{2n} u)) dz, u = Mz/n.
    """
    L, M = check_L(L), check_M(M)
    n = L + 1

    def log_int(z: np.ndarray) -> np.ndarray:
        u = M * z / n
        t = np.tanh(u) ** (2 * n)
        with np.errstate(divide="ignore"):
            return (2 * n * np.log(z) - 0.5 * z * z - HALF_LOG_2PI + 2 * n * _log_sinhc(u) - n * _log_cosh(u)
                    - np.log1p(np.sqrt(1.0 - t)))

    li, err = _log_quad(log_int, math.sqrt(2 * n), math.sqrt(2 * n) + M + 40.0)
    return 0.5 * (log_s_tilted(L, M) + n * LOG_2 + 2 * n * math.log(M / n) + li), err


def _difference_mp(x: ArrayLike, L: int, M: float, dps: int, factor) -> list:
    """s phi(x) factor(M x / n)^n in mpmath."""
    L, M, dps = check_L(L), check_M(M), check_dps(dps)
    n = L + 1
    xs = np.atleast_1d(np.asarray(x, dtype=float))
    with mpmath.workdps(dps):
        c = tilted_s_mp(L, M, dps) / mpmath.sqrt(2 * mpmath.pi)
        Mm = mpmath.mpf(M)
        return [+(c * mpmath.exp(-mpmath.mpf(float(v)) ** 2 / 2) * factor(Mm * float(v) / n) ** n) for v in xs]


def tilted_difference_mp(x: ArrayLike, L: int, M: float, dps: int) -> list:
    """The closed form s phi(x) (2 sinh(M x / n))^n of f_P - f_Q, in mpmath at ``dps`` digits."""
    return _difference_mp(x, L, M, dps, lambda u: 2 * mpmath.sinh(u))


def wrong_difference_monomial_mp(x: ArrayLike, L: int, M: float, dps: int) -> list:
    """WRONG THEORY (monomial), pointwise: f_P - f_Q ~ s phi(x) (2 M x / n)^n (sinh u replaced by u)."""
    return _difference_mp(x, L, M, dps, lambda u: 2 * u)


def wrong_log_tv_monomial(L: int, M: float) -> tuple[float, float]:
    """WRONG THEORY (monomial): TV ~ (s/2) (2M/n)^n E|Z|^n, i.e. sinh u ~ u (misses the factor ~ e^{M^2/6})."""
    L, M = check_L(L), check_M(M)
    n = L + 1
    return log_s_tilted(L, M) - LOG_2 + n * math.log(2 * M / n) + log_abs_moment(n), 0.0


# --------------------------------------------------------------------------------------------------
# asymptotics (Theorem 'sharp' (c))


def c1(M: float) -> float:
    """The 1/n coefficient of log TV_L: c_1(M) = -M^2/3 + M^4/45."""
    M = check_M(M)
    return -M**2 / 3 + M**4 / 45


def wrong_c1_no_quartic(M: float) -> float:
    """WRONG THEORY: c_1 = -M^2/3 (the quartic term M^4/45 dropped)."""
    return -check_M(M) ** 2 / 3


def wrong_c1_quartic_36(M: float) -> float:
    """WRONG THEORY: c_1 = -M^2/3 + M^4/36 (the quartic term of log E_n e^{ng} alone, the -M^4/180 of the
    fourth-order term of g(u) = log(sinh u / u) dropped); off by M^4/180."""
    M = check_M(M)
    return -M**2 / 3 + M**4 / 36


def wrong_c1_zero(M: float) -> float:
    """WRONG THEORY: no 1/n term in log TV_L."""
    check_M(M)
    return 0.0


def tv_leading(L: int, M: float) -> float:
    """n log(M/n) + log E|Z|^n + M^2/6: log TV_L up to O(1/n)."""
    L, M = check_L(L), check_M(M)
    n = L + 1
    return n * math.log(M / n) + log_abs_moment(n) + M**2 / 6


def wrong_tv_leading_order(L: int, M: float) -> float:
    """WRONG THEORY: the leading-order form (n/2) log(M^2/(e n)), without the constant (1/2) log 2 + M^2/6."""
    L, M = check_L(L), check_M(M)
    n = L + 1
    return 0.5 * n * math.log(M * M / (math.e * n))


def log_ratio_asymptotic(L: int, M: float, *, stirling: bool = False) -> float:
    """log(H_L/TV_L) = (1/2) log[(2n-1)!!/(2 (E|Z|^n)^2)] - M^2/3 + O(1/n).

    With ``stirling=True`` the Gamma functions are expanded: (n/2) log 2 - (3/4) log 2 - M^2/3.
    """
    L, M = check_L(L), check_M(M)
    n = L + 1
    if stirling:
        return 0.5 * n * LOG_2 - 0.75 * LOG_2 - M**2 / 3
    log_dfact = n * LOG_2 + math.lgamma(n + 0.5) - 0.5 * math.log(math.pi)  # (2n-1)!!
    return 0.5 * (log_dfact - LOG_2 - 2 * log_abs_moment(n)) - M**2 / 3


def wrong_log_ratio_constant(L: int, M: float, *, stirling: bool = False) -> float:
    """WRONG THEORY: the constant of log(H_L/TV_L) with -M^2/6 in place of -M^2/3: H's factor e^{-M^2/6} kept,
    TV's factor e^{+M^2/6} (from sinh u / u, as in the monomial approximation) forgotten; off by M^2/6."""
    L, M = check_L(L), check_M(M)
    n = L + 1
    if stirling:
        return 0.5 * n * LOG_2 - 0.75 * LOG_2 - M**2 / 6
    log_dfact = n * LOG_2 + math.lgamma(n + 0.5) - 0.5 * math.log(math.pi)
    return 0.5 * (log_dfact - LOG_2 - 2 * log_abs_moment(n)) - M**2 / 6


def wrong_log_h_asymptotic(L: int, M: float) -> tuple[float, float]:
    """WRONG THEORY (as a closed form of H): log H = log TV (closed form) + the O(1/n)-truncated log(H/TV)."""
    return log_tv_closed(L, M)[0] + log_ratio_asymptotic(L, M), 0.0


def ratio_slope(M: float) -> float:
    """The asymptotic increment of log(H_L/TV_L) per unit L: (1/2) log 2, for every M."""
    check_M(M)
    return 0.5 * LOG_2


def wrong_ratio_slope_polylog(M: float) -> float:
    """WRONG THEORY (polylogarithmic picture of moment matching): log(H/TV) ~ (1/4) log n, increments -> 0."""
    check_M(M)
    return 0.0


def wrong_ratio_slope_log2(M: float) -> float:
    """WRONG THEORY: H/TV ~ 2^L (slope log 2, twice the derived rate)."""
    check_M(M)
    return LOG_2


# --------------------------------------------------------------------------------------------------
# Le Cam's inequalities and the polylog bound


def h2_bound_lecam(tv: ArrayLike) -> np.ndarray:
    """Le Cam's lower inequality as a bound on H^2: H^2 <= TV."""
    return np.asarray(tv, dtype=float)


def wrong_h2_bound_h_le_tv(tv: ArrayLike) -> np.ndarray:
    """WRONG THEORY: H <= TV, i.e. H^2 <= TV^2."""
    return np.asarray(tv, dtype=float) ** 2


def tv_bound_lecam(h: ArrayLike) -> np.ndarray:
    """Le Cam's upper inequality: TV <= H sqrt(2 - H^2)."""
    h = np.asarray(h, dtype=float)
    return h * np.sqrt(2 - h * h)


def wrong_tv_bound_h2(h: ArrayLike) -> np.ndarray:
    """WRONG THEORY: TV <= H^2 (Le Cam's lower inequality turned around)."""
    return np.asarray(h, dtype=float) ** 2


def polylog_bound(tv: ArrayLike) -> np.ndarray:
    """The polylog bound on H^2: (TV max(1, log(1/TV)))^2."""
    tv = np.asarray(tv, dtype=float)
    return (tv * np.maximum(1.0, np.log(1 / tv))) ** 2


# --------------------------------------------------------------------------------------------------
# Theorem 'upper': the explicit upper bound


def log_rho_tail(u: ArrayLike, L: int | np.ndarray) -> np.ndarray:
    """log rho_L(u), rho_L(u) = sum_{j > L} u^j / j! = e^u P(L + 1, u) (P: regularized lower gamma), u > 0.

    Broadcasts u against L. For u <= (L + 2)/2 the series u^{L+1}/(L+1)! sum_k u^k (L+1)!/(L+1+k)!
    (ratio <= 1/2, 60 terms) is used; otherwise u + log P(L + 1, u), which is then not small.
    """
    u = np.asarray(u, dtype=float)
    Lr = np.asarray(L)
    if np.any(Lr < 0) or not np.all(np.equal(np.mod(Lr, 1), 0)):
        raise ValueError("L must be a non-negative integer (array)")
    if np.any(u <= 0):
        raise ValueError("u must be > 0")
    u, Lb = np.broadcast_arrays(u, Lr.astype(float))
    out = np.empty(u.shape)
    ser = u <= 0.5 * (Lb + 2)
    us, Ls = u[ser], Lb[ser]
    term = np.ones_like(us)
    tot = np.ones_like(us)
    for k in range(1, 61):
        term = term * us / (Ls + 1 + k)
        tot = tot + term
    out[ser] = (Ls + 1) * np.log(us) - special.gammaln(Ls + 2) + np.log(tot)
    ug, Lg = u[~ser], Lb[~ser]
    out[~ser] = ug + np.log(special.gammainc(Lg + 1, ug))
    return out


def eta_zeta(M: float, L_top: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """(log eta_L, log zeta_L) for L = 0..L_top: eta_L = E rho_L(M|Z|), zeta_L^2 = E rho_L(M|Z|)^2 (d = 1 of
    :func:`eta_zeta_d`)."""
    return _eta_zeta_d(check_M(M), 1, check_int("L_top", L_top, low=0))


def wrong_eta_zeta_l1(M: float, L_top: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """WRONG THEORY: zeta_L = eta_L (the L^2 norm of the Taylor tail replaced by its L^1 norm)."""
    log_eta, _ = _eta_zeta_d(check_M(M), 1, check_int("L_top", L_top, low=0))
    return log_eta, log_eta.copy()


def thm71_bound(tv: ArrayLike, M: float, L_top: int = 300, T_span: float = 30.0,
                T_step: float = 0.05) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """B_M(tv) = min over L' in {0..L_top}, T in M + [0, T_span] (step T_step) of the right side of Theorem 'upper'.

    The L'-part A(L') = e^{2L'} (tv + eta_L')^2 + zeta_L'^2 enters monotonically, so it is minimized first.
    Returns (B, L_best, T_best), each of the shape of ``tv``; B may exceed 1 (then the bound is vacuous).
    The minimum over the grids is continuous in tv, so a near-tie of two grid points moves B by rounding only.
    It is :func:`rd_bound` with d = 1 (P(chi_1 > t) = 2 Phibar(t)).
    """
    return rd_bound(tv, M, 1, L_top, T_span, T_step)


def wrong_thm71_bound_no_half(tv: ArrayLike, M: float, L_top: int = 300, T_span: float = 30.0,
                              T_step: float = 0.05) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """WRONG THEORY: B_M doubled, 4 Phibar(T - M) + 8 e^{MT + M^2/2}[...] (the 1/2 of H^2 = (1/2) int (sqrt f -
    sqrt g)^2 forgotten in the proof's last line); still a valid bound, so only C4e can reject it."""
    B, L_best, T_best = thm71_bound(tv, M, L_top, T_span, T_step)
    return 2 * B, L_best, T_best


def h2_bound_thm71(tv: ArrayLike, M: float) -> np.ndarray:
    """Theorem 'upper' as a bound on H^2: H^2 <= B_M(TV)."""
    return thm71_bound(tv, M)[0]


def wrong_h2_bound_polylog(tv: ArrayLike, M: float) -> np.ndarray:
    """WRONG THEORY ('polylog'): H^2 <= (TV max(1, log(1/TV)))^2 for every M."""
    check_M(M)
    return polylog_bound(tv)


# --------------------------------------------------------------------------------------------------
# hypercontractivity and dilution


def hypercontractive_factor(L: int) -> float:
    """The Lemma's constant: ||p(Z)||_2 <= e^L ||p(Z)||_1 for every polynomial p of degree <= L."""
    return math.exp(check_int("L", L, low=0))


def log_monomial_l2_l1(L: int) -> float:
    """log(||Z^L||_2 / ||Z^L||_1) = (1/2) log (2L-1)!! - log E|Z|^L."""
    L = check_int("L", L, low=0)
    log_dfact = L * LOG_2 + math.lgamma(L + 0.5) - 0.5 * math.log(math.pi)
    return 0.5 * log_dfact - log_abs_moment(L)


def wrong_log_monomial_l2_l1_lemma(L: int) -> float:
    """WRONG THEORY: the monomial attains the Lemma's constant, ||Z^L||_2 / ||Z^L||_1 = e^L."""
    return float(check_int("L", L, low=0))


def dilution_sandwich(A: float, C: float, alpha: float) -> dict[str, float]:
    """The sandwich on H^2 of the diluted pair (1-a) delta_0 + a P versus (1-a) delta_0 + a Q.

    With F = (f_P - f_Q)/phi, A = E F(Z)^2, C = E[F^2 (F_P + F_Q)](Z):
      upper          a^2 A / (8 (1 - a))                       [(sqrt f + sqrt g)^2 >= 4 (1 - a) phi]
      lower (tight)  a^2 A / 8 * (1 - a C / (2 A))             [(sqrt f + sqrt g)^2 <= 2 (f + g)]
      lower (weak)   a^2 A / 8 * (1 - a C / A)                 (weaker by the factor 2 in the correction)
    and the limit of H^2/TV^2 as a -> 0 is A / (2 (E|F|)^2); ``ratio_limit`` is A / 2.
    """
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha = {alpha!r} must lie in (0, 1)")
    a2 = alpha * alpha
    return {"upper": a2 * A / (8 * (1 - alpha)), "lower_tight": a2 * A / 8 * (1 - alpha * C / (2 * A)),
            "lower_weak": a2 * A / 8 * (1 - alpha * C / A), "ratio_limit": A / 2}


def wrong_dilution_sandwich_sign(A: float, C: float, alpha: float) -> dict[str, float]:
    """WRONG THEORY: the tight lower bound with the sign of its correction flipped, a^2 A/8 (1 + a C/(2A))."""
    out = dilution_sandwich(A, C, alpha)
    return {**out, "lower_tight": alpha * alpha * A / 8 * (1 + alpha * C / (2 * A))}


def wrong_dilution_ratio_limit(A: float, C: float, alpha: float) -> dict[str, float]:
    """WRONG THEORY: H^2/TV^2 -> E F^2 / (E|F|)^2 (the factor 1/2 of H^2 = (1/2) int (sqrt f - sqrt g)^2 lost)."""
    return {**dilution_sandwich(A, C, alpha), "ratio_limit": A}


# --------------------------------------------------------------------------------------------------
# Theorem 'upper' in R^d, and the product pair in R^2


def log_chi_tail(t: ArrayLike, d: int) -> np.ndarray:
    """log P(|Z| > t) for Z ~ N(0, I_d): log Q(d/2, t^2/2) (Q: regularized upper gamma); d = 1 gives 2 Phibar(t)."""
    d = check_int("d", d, low=1)
    t = np.asarray(t, dtype=float)
    if np.any(t < 0):
        raise ValueError("t must be >= 0")
    return np.log(special.gammaincc(0.5 * d, 0.5 * t * t))


@lru_cache(maxsize=16)
def _eta_zeta_d(M: float, d: int, L_top: int) -> tuple[np.ndarray, np.ndarray]:
    Ls = np.arange(L_top + 1)
    r, w = gauss_legendre_panels(0.0, math.sqrt(2 * L_top + 2 * d) + 40.0, 120, 20)
    lr = log_rho_tail(M * r[:, None], Ls[None, :])  # (nodes, L)
    # the chi_d density r^{d-1} e^{-r^2/2} / (2^{d/2-1} Gamma(d/2)) times the weights
    ldens = (d - 1) * np.log(r) - 0.5 * r * r - (0.5 * d - 1) * LOG_2 - math.lgamma(0.5 * d) + np.log(w)
    log_eta = special.logsumexp(lr + ldens[:, None], axis=0)
    log_zeta = 0.5 * special.logsumexp(2 * lr + ldens[:, None], axis=0)
    return log_eta, log_zeta


def eta_zeta_d(M: float, d: int, L_top: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """(log eta_L, log zeta_L), L = 0..L_top, in R^d: eta_L = E rho_L(M |Z|), zeta_L^2 = E rho_L(M |Z|)^2,
    |Z| ~ chi_d (the law of the norm of a standard Gaussian vector in R^d)."""
    return _eta_zeta_d(check_M(M), check_int("d", d, low=1), check_int("L_top", L_top, low=0))


def rd_bound(tv: ArrayLike, M: float, d: int, L_top: int = 300, T_span: float = 30.0,
             T_step: float = 0.05) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """B_{M,d}(tv): the right side of Theorem 'upper-rd' minimized over L' <= L_top and T in M + [0, T_span]:

    P(chi_d > T - M) + 4 e^{MT + M^2/2} [e^{2L'} (tv + eta_L')^2 + zeta_L'^2], tail moments of chi_d.
    :func:`thm71_bound` is its d = 1. Returns (B, L_best, T_best) of the shape of ``tv``.
    """
    M = check_M(M)
    d = check_int("d", d, low=1)
    tvs = np.atleast_1d(np.asarray(tv, dtype=float))
    if np.any(~np.isfinite(tvs)) or np.any(tvs <= 0) or np.any(tvs > 1):
        raise ValueError("tv must lie in (0, 1]")
    log_eta, log_zeta = eta_zeta_d(M, d, L_top)
    Ls = np.arange(L_top + 1)
    log_a = np.logaddexp(2 * Ls + 2 * np.logaddexp(np.log(tvs)[:, None], log_eta), 2 * log_zeta)
    best_L = np.argmin(log_a, axis=1)
    log_a_min = log_a[np.arange(tvs.size), best_L]
    T = M + np.arange(0.0, T_span + 1e-12, T_step)
    log_rhs = np.logaddexp(log_chi_tail(T - M, d)[None, :],
                           math.log(4.0) + M * T[None, :] + M * M / 2 + log_a_min[:, None])
    j = np.argmin(log_rhs, axis=1)
    B = np.exp(log_rhs[np.arange(tvs.size), j])
    shape = np.shape(tv)
    return B.reshape(shape), best_L.reshape(shape), T[j].reshape(shape)


def h2_bound_rd(tv: ArrayLike, M: float, d: int) -> np.ndarray:
    """Theorem 'upper-rd' as a bound on H^2: H^2 <= B_{M,d}(TV) for mixing measures on the ball of radius M."""
    return rd_bound(tv, M, d)[0]


def wrong_h2_bound_rd_polylog(tv: ArrayLike, M: float, d: int) -> np.ndarray:
    """WRONG THEORY ('polylog in R^d'): H^2 <= (TV max(1, log(1/TV)))^2, for every M and d."""
    check_M(M)
    check_int("d", d, low=1)
    return polylog_bound(tv)


def log_tilt_moment(L: int, M: float, k: int) -> float:
    """log E_mu t^k of the tilted pair, mu = (f_P + f_Q)/2, t = ((f_P - f_Q)/(f_P + f_Q))^2 = tanh^{2n}(Mx/n).

    E_mu t^k = s int_0^inf phi(x) (2 cosh u)^n tanh^{2kn} u dx, u = M x / n (float64 quad in log space).
    """
    L, M = check_L(L), check_M(M)
    k = check_int("k", k, low=1)
    n = L + 1

    def log_int(z: np.ndarray) -> np.ndarray:
        u = M * z / n
        with np.errstate(divide="ignore"):
            log_tanh = np.log(u) + _log_sinhc(u) - _log_cosh(u)
            return -0.5 * z * z - HALF_LOG_2PI + n * LOG_2 + n * _log_cosh(u) + 2 * k * n * log_tanh

    li, _ = _log_quad(log_int, math.sqrt(2 * k * n), math.sqrt(2 * k * n) + M + 40.0)
    return log_s_tilted(L, M) + li


def product_second_order(L1: int, L2: int, M1: float, M2: float) -> tuple[float, float]:
    """(second-order term, remainder bound) of Proposition 'product' (d) for tilted pairs (L1, M1), (L2, M2).

    With m_{i,k} = E_{mu_i} t_i^k, kappa_i = m_{i,2}/m_{i,1}, lambda_i = m_{i,3}/m_{i,1} (psi(u) = 1 - sqrt(1 - u)
    = u/2 + u^2/8 + omega(u), 0 <= omega(u) <= 3u^3/8 on [0, 1]): the term
    (1/2)[log(1 + kappa_1 kappa_2/4) - log(1 + kappa_1/4) - log(1 + kappa_2/4)], about -(kappa_1 + kappa_2)/8,
    and the bound (3/8)(lambda_1 + lambda_2 + lambda_1 lambda_2) on what is left.
    """
    kappas, lambdas = [], []
    for L, m in ((L1, M1), (L2, M2)):
        log_m1 = log_tilt_moment(L, m, 1)
        kappas.append(math.exp(log_tilt_moment(L, m, 2) - log_m1))
        lambdas.append(math.exp(log_tilt_moment(L, m, 3) - log_m1))
    term = 0.5 * (math.log1p(kappas[0] * kappas[1] / 4) - math.log1p(kappas[0] / 4) - math.log1p(kappas[1] / 4))
    return term, 0.375 * (lambdas[0] + lambdas[1] + lambdas[0] * lambdas[1])


def product_log_ratio(L1: int, L2: int, M1: float, M2: float) -> tuple[float, float]:
    """(prediction, remainder bound) for log(H/TV) of the product pair built from tilted pairs (L1, M1), (L2, M2).

    Proposition 'product': TV = TV_1 TV_2 exactly, and
    log(H/TV) = sum_i log(H_i/TV_i) + (1/2) log 2 + (second-order term) + r, with the term and the bound on |r|
    from :func:`product_second_order`.
    """
    ratio = (log_h_closed(L1, M1)[0] - log_tv_closed(L1, M1)[0] + log_h_closed(L2, M2)[0]
             - log_tv_closed(L2, M2)[0] + 0.5 * LOG_2)
    term, remainder = product_second_order(L1, L2, M1, M2)
    return ratio + term, remainder


def wrong_product_log_ratio_first_order(L1: int, L2: int, M1: float, M2: float) -> tuple[float, float]:
    """WRONG THEORY: H^2 = 2 H_1^2 H_2^2 exactly, the factorization of the first-order Hellinger integrand
    psi(u) = u/2 read as the law (the second-order term u^2/8, of size -(kappa_1 + kappa_2)/8, dropped)."""
    ratio = (log_h_closed(L1, M1)[0] - log_tv_closed(L1, M1)[0] + log_h_closed(L2, M2)[0]
             - log_tv_closed(L2, M2)[0] + 0.5 * LOG_2)
    return ratio, 0.0


def wrong_product_log_ratio_as_1d(L1: int, L2: int, M1: float, M2: float) -> tuple[float, float]:
    """WRONG THEORY: the product pair read as one 1-D tilted pair with n = n_1 + n_2 and M^2 = M_1^2 + M_2^2,
    log(H/TV) = (1/2) log((2n-1)!! / (2 (E|Z|^n)^2)) - M^2/3 (Theorem 'sharp' (c)); off by ~(1/4) log 2."""
    n = check_L(L1) + check_L(L2) + 2
    m2 = check_M(M1) ** 2 + check_M(M2) ** 2
    log_dfact = n * LOG_2 + math.lgamma(n + 0.5) - 0.5 * math.log(math.pi)
    return 0.5 * (log_dfact - LOG_2 - 2 * log_abs_moment(n)) - m2 / 3, 0.0


def wrong_product_log_ratio_no_sqrt2(L1: int, L2: int, M1: float, M2: float) -> tuple[float, float]:
    """WRONG THEORY: log(H/TV) of the product pair = sum of the factors' log(H_i/TV_i), i.e. H = H_1 H_2
    (the factor sqrt 2 of H^2 = 2 H_1^2 H_2^2 forgotten)."""
    ratio, rem = product_log_ratio(L1, L2, M1, M2)
    return ratio - 0.5 * LOG_2, rem


# --------------------------------------------------------------------------------------------------
# the paper's sharpness construction on Chebyshev nodes (Jung and Gao 2026, Lemma 3.2, Corollaries 3.3-3.4)


def chebyshev_log_lambda(n: int) -> float:
    """log lambda_n = -sqrt(8n + 4), the weight of the dilution pi1 = (1 - lambda) delta_0 + lambda pi0."""
    return -math.sqrt(8 * check_int("n", n, low=1) + 4)


def chebyshev_log_q_norms(n: int, M: float) -> tuple[float, float]:
    """log ||q_n||_{L1(phi)} and log ||q_n||_{L2(phi)} of q_n = c x^n / n!, c = (a (sqrt 2 - 1))^{n+1}, a = min(1, M).

    q_n is the degree-<= n part of the Hermite expansion of g_n = (f_pi0 - f_eta0)/phi (the paper's item 5);
    E|Z|^n = 2^{n/2} Gamma((n+1)/2) / sqrt(pi) and E Z^{2n} = (2n - 1)!! = (2n)! / (2^n n!).
    """
    n = check_int("n", n, low=1)
    log_c = (n + 1) * math.log(min(1.0, check_M(M)) * (math.sqrt(2.0) - 1.0))
    base = log_c - math.lgamma(n + 1)
    log_l1 = base + log_abs_moment(n)
    log_l2 = base + 0.5 * (math.lgamma(2 * n + 1) - n * LOG_2 - math.lgamma(n + 1))
    return log_l1, log_l2


def chebyshev_log_tv(n: int, M: float) -> float:
    """log of (lambda/8) ||q_n||_1: TV(f_pi2, f_eta2) = (lambda/8) ||g_n||_1 exactly, and g_n = q_n + r_n."""
    return chebyshev_log_lambda(n) - math.log(8.0) + chebyshev_log_q_norms(n, M)[0]


def chebyshev_log_h(n: int, M: float) -> float:
    """log of lambda ||q_n||_2 / (8 sqrt 2): H^2 = int Psi(1 + u/4) f_eta1, Psi(1 + s) = s^2/8 + O(s^3), u small."""
    return chebyshev_log_lambda(n) - math.log(8.0) - 0.5 * LOG_2 + chebyshev_log_q_norms(n, M)[1]


def alpha_star(tv: ArrayLike) -> np.ndarray:
    """The paper's sharpness exponent alpha*(t) = 0.33 / log log(1/t) (its Theorem 3.1: H_n >= TV_n^{1 - alpha*})."""
    t = np.asarray(tv, dtype=float)
    return 0.33 / np.log(np.log(1.0 / t))


def wrong_chebyshev_log_tv_undiluted(n: int, M: float) -> float:
    """Wrong: (lambda/2) ||q_n||_1, the TV of (pi1, eta1), forgetting the mixing pi2 = pi1/4 + 3 eta1/4."""
    return chebyshev_log_lambda(n) - math.log(2.0) + chebyshev_log_q_norms(n, M)[0]


def wrong_chebyshev_log_tv_l2(n: int, M: float) -> float:
    """Wrong: (lambda/8) ||q_n||_2, the L2 norm where TV needs the L1 norm (the gap the construction exploits)."""
    return chebyshev_log_lambda(n) - math.log(8.0) + chebyshev_log_q_norms(n, M)[1]


def wrong_chebyshev_log_h_paper_bound(n: int, M: float) -> float:
    """Wrong: lambda ||q_n||_2 / 64, the paper's lower bound (Corollary 3.4) read as the value."""
    return chebyshev_log_lambda(n) - math.log(64.0) + chebyshev_log_q_norms(n, M)[1]


def wrong_chebyshev_log_h_chi2(n: int, M: float) -> float:
    """Wrong: H = sqrt(chi^2(f_pi2 || f_eta2)) = lambda ||q_n||_2 / 4, the chi^2 bound read as the value."""
    return chebyshev_log_lambda(n) - math.log(4.0) + chebyshev_log_q_norms(n, M)[1]
