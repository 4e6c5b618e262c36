"""The measured side of the paper's sharpness construction on Chebyshev nodes (chapter 'hellinger-tv-mixtures').

The construction of Jung and Gao (2026, Lemma 3.2 and Corollaries 3.3-3.4), for odd n and a = min(1, M):
atoms a theta_j, theta_j = cos((2j + 1) pi / (2n + 2)) (the zeros of T_{n+1}); weights w solving the Vandermonde
system sum_j w_j (a theta_j)^k = Delta_k, k = 0..n, with Delta_k = (a (sqrt 2 - 1))^{n+1} / (n - k)!! for odd k
and 0 for even k; pi0 = sum_j (1/(n+1) + w_j) delta_{a theta_j}, eta0 uniform on the atoms; the dilution
pi1 = (1 - lambda) delta_0 + lambda pi0 (eta1 likewise), lambda = exp(-sqrt(8n + 4)); finally
pi2 = pi1/4 + 3 eta1/4, eta2 = eta1. Everything here is computed from the atoms in mpmath: the densities at
quadrature nodes, the measured TV and H of (f_pi2, f_eta2), and the exact moment quantities of the
construction that size the claims' error bounds (the Hermite tail ||r_n||, the weight spread, a Gaussian
moment of g_n). This module never imports ``theory``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

from theorylib.core.validation import check_int

from ._numerics import check_dps, check_M, gauss_legendre_panels
from .model import LogDistances, cutoff, pilot_log_tv_of, working_dps


def check_odd_n(n: int) -> int:
    """The construction's degree: an odd integer n >= 11 (the paper's range)."""
    n = check_int("n", n, low=11)
    if n % 2 == 0:
        raise ValueError(f"n = {n} must be odd (the Chebyshev construction needs n + 1 even)")
    return n


@dataclass(frozen=True)
class ChebyshevPair:
    """The construction at degree n in mpmath numbers: atoms a theta_j, weights w_j, lambda, at ``dps`` digits."""

    n: int
    M: float
    atoms: tuple
    w: tuple
    lam: object
    dps: int

    @property
    def a(self) -> float:
        return min(1.0, self.M)

    @property
    def spread(self) -> float:
        """omega = (n + 1) max_j |w_j|: the paper's bound |u| <= omega on u = f_pi1/f_eta1 - 1 (item 1: <= 1)."""
        with mpmath.workdps(self.dps):
            return float((self.n + 1) * max(abs(v) for v in self.w))


def chebyshev_pair_mp(n: int, M: float, dps: int = 60) -> ChebyshevPair:
    """The paper's pair at degree n: Chebyshev atoms scaled by a = min(1, M), weights from the Vandermonde system."""
    n, M, dps = check_odd_n(n), check_M(M), check_dps(dps)
    with mpmath.workdps(dps + 20):  # the system is solved with guard digits (its condition grows like 2^n)
        a = mpmath.mpf(min(1.0, M))
        atoms = [a * mpmath.cos(mpmath.mpf(2 * j + 1) / (2 * n + 2) * mpmath.pi) for j in range(n + 1)]
        c = (a * (mpmath.sqrt(2) - 1)) ** (n + 1)
        delta = [c / mpmath.fac2(n - k) if k % 2 else mpmath.mpf(0) for k in range(n + 1)]
        V = mpmath.matrix([[t**k for t in atoms] for k in range(n + 1)])
        w = mpmath.lu_solve(V, mpmath.matrix(delta))
        lam = mpmath.exp(-mpmath.sqrt(8 * n + 4))
        return ChebyshevPair(n, M, tuple(+t for t in atoms), tuple(+w[j] for j in range(n + 1)), +lam, dps)


def _densities(pair: ChebyshevPair, x: np.ndarray) -> tuple[list, list]:
    """f_eta2(x) and D(x) = f_pi2(x) - f_eta2(x) = (lambda/4) sum_j w_j phi(x - a theta_j), from the atoms."""
    with mpmath.workdps(pair.dps):
        c = 1 / mpmath.sqrt(2 * mpmath.pi)
        inv = mpmath.mpf(1) / (pair.n + 1)
        fe, d = [], []
        for xv in np.atleast_1d(x):
            X = mpmath.mpf(float(xv))
            k = [mpmath.exp(-(X - t) ** 2 / 2) for t in pair.atoms]
            fe.append(c * ((1 - pair.lam) * mpmath.exp(-X * X / 2) + pair.lam * inv * mpmath.fsum(k)))
            d.append(c * pair.lam / 4 * mpmath.fsum(wj * kj for wj, kj in zip(pair.w, k, strict=True)))
        return fe, d


def pilot_log_tv(n: int, M: float) -> float:
    """A coarse *measured* log TV of the pair (see :func:`.model.pilot_log_tv_of`); D is odd, so |D| is even."""
    n, M = check_odd_n(n), check_M(M)
    pairs: dict[int, ChebyshevPair] = {}

    def abs_diff(x: np.ndarray, dps: int) -> list:
        pair = pairs.setdefault(dps, chebyshev_pair_mp(n, M, dps))
        return [abs(v) for v in _densities(pair, x)[1]]

    return pilot_log_tv_of(abs_diff, min(1.0, M), f"the Chebyshev pair (n = {n}, M = {M})")


@dataclass(frozen=True, eq=False)
class ChebyshevMeasurement(LogDistances):
    """TV and H of (f_pi2, f_eta2) measured from the atoms, and the construction's exact moment quantities."""

    n: int
    M: float
    log_tv: float
    log_h: float
    ell0: float  # the pilot's -log TV, which set dps and X
    dps: int
    X: float
    panels: int
    nodes: int
    log_lambda: float
    log_r_l2: float  # log ||r_n||_{L2(phi)}, the Hermite tail beyond degree n (an upper bound: the series is cut)
    log_g_l2: float  # log ||g_n||_{L2(phi)}, g_n = (f_pi0 - f_eta0)/phi, from the double sum sum w_j w_l e^{t_j t_l}
    spread: float  # omega = (n + 1) max |w_j|
    cosh_ratio: float  # E[g^2 cosh(aX)] / E[g^2], X ~ N(0, 1), g = sum_j w_j e^{a theta_j X - a^2 theta_j^2/2}


def _tail_and_moments(pair: ChebyshevPair) -> tuple[float, float, float]:
    """log ||r_n||_2 (Hermite tail sum_{k > n} Delta_k^2 / k!), log ||g_n||_2 and E[g^2 cosh aX] / E[g^2], exactly.

    Delta_k = sum_j w_j (a theta_j)^k. The tail is summed to k = n + 200; the rest is at most
    2 (sum |w_j|)^2 / (n + 201)! (|a theta_j| <= 1) and is added, so the value is an upper bound. The Gaussian
    moments are double sums over the atoms, E[e^{sX}] = e^{s^2/2}, at twice the working digits (g is a
    difference of terms ~ |w_j| that cancels to ~ TV / lambda).
    """
    n = pair.n
    with mpmath.workdps(2 * pair.dps):
        t, w = pair.atoms, pair.w
        a = mpmath.mpf(pair.a)
        K = n + 200
        tail = mpmath.fsum(mpmath.fsum(wj * tj**k for wj, tj in zip(w, t, strict=True)) ** 2 / mpmath.factorial(k)
                           for k in range(n + 1, K + 1))
        tail += 2 * mpmath.fsum(abs(v) for v in w) ** 2 / mpmath.factorial(K + 1)
        g2 = mpmath.fsum(wj * wl * mpmath.exp(tj * tl) for wj, tj in zip(w, t, strict=True)
                         for wl, tl in zip(w, t, strict=True))
        gc = mpmath.fsum(wj * wl * mpmath.exp(-(tj**2 + tl**2) / 2)
                         * (mpmath.exp((tj + tl + a) ** 2 / 2) + mpmath.exp((tj + tl - a) ** 2 / 2)) / 2
                         for wj, tj in zip(w, t, strict=True) for wl, tl in zip(w, t, strict=True))
        return 0.5 * float(mpmath.log(tail)), 0.5 * float(mpmath.log(g2)), float(gc / g2)


def measure_chebyshev_pair(n: int, M: float, *, panels: int = 40, nodes: int = 20,
                           ell: float | None = None, dps: int | None = None) -> ChebyshevMeasurement:
    """TV = int_0^X |D| and H^2 = (1/2) int_{-X}^X D^2 / (sqrt f_pi2 + sqrt f_eta2)^2 from the atoms.

    D = f_pi2 - f_eta2 is odd (w_{n-j} = -w_j: the system's solution is unique and Delta_k = 0 for even k) and
    f_eta2 even, so f_pi2(-x) = f_eta2(x) - D(x) and both integrals fold onto
    [0, X]. X = cutoff(ell, a) and the digits working_dps(ell) come from the *measured* pilot TV = e^{-ell}
    (the mass of f_pi2 + f_eta2 beyond X is at most 4 Phibar(X - a), below 1.7e-17 H^2 as for the tilted pairs).
    """
    n, M = check_odd_n(n), check_M(M)
    ell0 = -pilot_log_tv(n, M) if ell is None else float(ell)
    dps = working_dps(ell0) if dps is None else check_dps(dps)
    pair = chebyshev_pair_mp(n, M, dps)
    X = cutoff(ell0, pair.a)
    x, wq = gauss_legendre_panels(0.0, X, panels, nodes)
    fe, d = _densities(pair, x)
    with mpmath.workdps(dps):
        tv = mpmath.fsum(mpmath.mpf(float(wi)) * abs(di) for wi, di in zip(wq, d, strict=True))
        h2 = mpmath.fsum(mpmath.mpf(float(wi)) * di * di / 2
                         * (1 / (mpmath.sqrt(f + di) + mpmath.sqrt(f)) ** 2
                            + 1 / (mpmath.sqrt(f - di) + mpmath.sqrt(f)) ** 2)
                         for wi, di, f in zip(wq, d, fe, strict=True))
        log_tv, log_h = float(mpmath.log(tv)), 0.5 * float(mpmath.log(h2))
        log_lam = float(mpmath.log(pair.lam))
    log_r, log_g, cosh_ratio = _tail_and_moments(pair)
    return ChebyshevMeasurement(n, M, log_tv, log_h, ell0, dps, X, panels, nodes, log_lam, log_r, log_g,
                                pair.spread, cosh_ratio)


def measure_chebyshev_sweep(ns: tuple[int, ...], M: float, *, panels: int = 40,
                            nodes: int = 20) -> tuple[ChebyshevMeasurement, ...]:
    """The construction at every degree of ``ns``, each measured from its atoms."""
    return tuple(measure_chebyshev_pair(int(n), M, panels=panels, nodes=nodes) for n in ns)


def chebyshev_panel_doubling(meas: ChebyshevMeasurement) -> float:
    """Relative change of TV or H when the panels are doubled (same X, same digits): the quadrature's error."""
    d = measure_chebyshev_pair(meas.n, meas.M, panels=2 * meas.panels, nodes=meas.nodes, ell=meas.ell0,
                               dps=meas.dps)
    return max(abs(math.expm1(d.log_tv - meas.log_tv)), abs(math.expm1(d.log_h - meas.log_h)))


def chebyshev_degrees(n_max: int) -> tuple[int, ...]:
    """The degrees 11, 15, ..., <= n_max of the sweep (odd, step 4)."""
    n_max = check_int("n_max", n_max, low=11)
    return tuple(range(11, n_max + 1, 4))

