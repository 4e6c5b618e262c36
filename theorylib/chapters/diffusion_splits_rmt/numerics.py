"""Numerical plumbing of chapter 'diffusion-splits-rmt': a bracketed root finder and adaptive quadrature.

None of this is the chapter's mathematics: the theory (:mod:`.theory`) states *which* equation to solve and
*which* integral to take (its integrands, substitutions and brackets are derived there); this module only
computes a root or an integral to a fixed precision far below the resolution of any claim (relative 1e-15
for roots, 1e-10 for integrals, against statistical resolutions of about 1e-3). Every setting here is a
numerical-method parameter; the unit tests check the routines against closed forms.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import integrate, optimize

ROOT_RTOL = 1e-15  # Brent: relative tolerance on the root
ROOT_MAXITER = 500
TINY = 1e-300  # the left end of a bracket that starts at 0 (where the function may be undefined)
QUAD_EPSREL = 1e-10  # adaptive Gauss-Kronrod (21 points), relative tolerance, no absolute tolerance
QUAD_LIMIT = 2000  # at most this many subintervals (a divergent integrand stops here instead of running on)
KNEE = 10.0  # quad_sin2: a breakpoint where t - a = KNEE * a
GAUSS_ORDER = 24  # gauss_sin2: Gauss-Legendre nodes per panel (fixed rule for the double integrals)


def increasing_root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of a strictly increasing ``f`` on (lo, hi], by Brent's method.

    Conventions at the ends: ``lo`` when f(lo) >= 0 (f is evaluated at ``TINY`` instead when lo = 0);
    ``hi`` when f(hi) <= 0 (a root at the end of an exact bracket, up to rounding).
    """
    left = max(float(lo), TINY)
    if f(left) >= 0:
        return float(lo)
    if f(hi) <= 0:
        return float(hi)
    return float(optimize.brentq(f, left, hi, xtol=TINY, rtol=ROOT_RTOL, maxiter=ROOT_MAXITER))


def quad(f: Callable[[float], np.ndarray], lo: float, hi: float,
         points: tuple[float, ...] | None = None) -> np.ndarray:
    """int_lo^hi f(u) du for a vector-valued f (adaptive Gauss-Kronrod, relative tolerance ``QUAD_EPSREL``)."""
    val, _ = integrate.quad_vec(f, lo, hi, epsabs=0, epsrel=QUAD_EPSREL, points=points, limit=QUAD_LIMIT)
    return np.asarray(val, dtype=float)


def quad_sin2(f: Callable[[float], np.ndarray], a: float, b: float) -> np.ndarray:
    """int_0^{pi/2} f(u) du for an integrand written in u, t = a + (b - a) sin^2 u, with a breakpoint at the
    u where t = (1 + KNEE) a (the integrand's knee when a << b)."""
    u_knee = float(np.arcsin(np.sqrt(min(1.0, KNEE * a / (b - a)))))
    return quad(f, 0.0, np.pi / 2, points=(u_knee,))


def quad_half_line(f: Callable[[float], np.ndarray], like: np.ndarray) -> np.ndarray:
    """int_0^inf f(u) du, with u = tan(theta) on [0, pi/2) (the integrand's value at infinity is 0; ``like``
    gives its shape)."""

    def g(th: float) -> np.ndarray:
        if th >= np.pi / 2:
            return np.zeros_like(like, dtype=float)
        return np.asarray(f(np.tan(th)), dtype=float) / np.cos(th) ** 2

    return quad(g, 0.0, np.pi / 2)


def gauss_sin2(a: float, b: float, order: int = GAUSS_ORDER) -> tuple[np.ndarray, np.ndarray]:
    """A fixed Gauss-Legendre rule (nodes u, weights) for int_0^{pi/2} f(u) du, for the same substitution
    t = a + (b - a) sin^2 u as :func:`quad_sin2`: ``order`` nodes on each panel, the panels split where
    t - a = KNEE^k a (k = 1, 2, ..., one panel per decade of t - a, since the integrand's features sit at
    t ~ a and t ~ s_i) and at u = pi/4. A fixed rule, so that a double integral is the double sum over one
    set of nodes; its accuracy against closed forms is unit-tested (relative 1e-9 or better)."""
    cuts, step = [0.0, np.pi / 4, np.pi / 2], KNEE * a
    while step < (b - a) / 2:
        cuts.append(float(np.arcsin(np.sqrt(step / (b - a)))))
        step *= KNEE
    cuts = sorted(cuts)
    x, w = np.polynomial.legendre.leggauss(int(order))
    nodes, weights = [], []
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        nodes.append(lo + (hi - lo) * (x + 1) / 2)
        weights.append(w * (hi - lo) / 2)
    return np.concatenate(nodes), np.concatenate(weights)
