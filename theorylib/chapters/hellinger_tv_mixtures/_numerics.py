"""Chapter-specific input checks and the composite Gauss-Legendre rule, shared by ``theory`` and ``model``.

No chapter mathematics lives here: only argument checks (on top of :mod:`theorylib.core.validation`)
and a quadrature rule, so that neither ``theory`` nor ``model`` has to import the other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from theorylib.core.validation import check_int, check_positive, check_positive_int

ArrayLike = np.ndarray | Sequence[float] | float


def check_M(M: float) -> float:
    """The half-width M > 0 of the support [-M, M]."""
    return check_positive("M", M)


def check_L(L: int, *, even: bool = True) -> int:
    """A number of matched moments L >= 0; even by default (the finite-difference pair needs n = L + 1 odd)."""
    L = check_int("L", L, low=0)
    if even and L % 2:
        raise ValueError(f"L = {L} must be even (the finite-difference pair needs n = L + 1 odd)")
    return L


def check_dps(dps: int) -> int:
    """mpmath working precision in decimal digits, at least 15."""
    return check_int("dps", dps, low=15)


def check_measure(atoms: ArrayLike, weights: ArrayLike, name: str = "mixing measure") -> tuple[np.ndarray, np.ndarray]:
    """A finite discrete measure: equally long non-empty 1-D atoms and weights >= 0."""
    a = np.atleast_1d(np.asarray(atoms, dtype=float))
    w = np.atleast_1d(np.asarray(weights, dtype=float))
    if a.ndim != 1 or a.shape != w.shape or a.size == 0:
        raise ValueError(f"{name}: atoms and weights must be non-empty 1-D arrays of equal length, "
                         f"got shapes {a.shape} and {w.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(w))):
        raise ValueError(f"{name}: atoms and weights must be finite")
    if np.any(w < 0):
        raise ValueError(f"{name}: weights must be >= 0")
    return a, w


def gauss_legendre_panels(a: float, b: float, panels: int, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of composite Gauss-Legendre on [a, b] (``panels`` equal panels, ``nodes`` each)."""
    panels = check_positive_int("panels", panels)
    nodes = check_int("nodes", nodes, low=2)
    if not (math.isfinite(a) and math.isfinite(b) and b > a):
        raise ValueError(f"need finite a < b, got [{a!r}, {b!r}]")
    t, w = np.polynomial.legendre.leggauss(nodes)
    edges = np.linspace(a, b, panels + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    return (mid[:, None] + half[:, None] * t).ravel(), (half[:, None] * w).ravel()
