"""The fits of chapter 'hellinger-tv-mixtures': asymptotic constants estimated from the measured sweep.

The least-squares fit over L >= 10 of the measured log(H/TV) increments (C2): measured data only, never
``theory``. Fits of residuals against the theory's expansions (C2b, C3) and the refit estimate of a fit's
truncation error are part of the decision and live in ``claims``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _design(n: np.ndarray, powers: Sequence[int]) -> np.ndarray:
    return np.column_stack([np.ones_like(n)] + [n ** (-float(k)) for k in powers])


def fit_increments(L: np.ndarray, log_ratio: np.ndarray, L_fit_min: int = 10,
                   powers: Sequence[int] = (2, 3)) -> tuple[float, np.ndarray, np.ndarray]:
    """Increments D_L = [r_{L+step} - r_L]/step of r_L = log(H/TV), fitted as b + sum_k c_k n^{-k} (L >= 10).

    The default powers (2, 3) follow from r_L = (n/2) log 2 + a_0 + a_1/n + a_2/n^2 + ...: a difference of a
    1/n series has no 1/n term. Returns (b, L of the increments, increments).
    """
    L = np.asarray(L)
    r = np.asarray(log_ratio, dtype=float)
    if L.size < 2 or r.shape != L.shape:
        raise ValueError("L and log_ratio must be equally long sweeps with at least 2 values")
    step = np.diff(L)
    if np.any(step != step[0]):
        raise ValueError("L must be an equally spaced sweep")
    D = np.diff(r) / step
    Li = L[:-1]
    sel = Li >= L_fit_min
    if sel.sum() < len(powers) + 2:
        raise ValueError(f"need at least {len(powers) + 2} increments with L >= {L_fit_min} for this fit")
    n = Li[sel] + 1.0
    coef = np.linalg.lstsq(_design(n, powers), D[sel], rcond=None)[0]
    return float(coef[0]), Li, D


def increment_slope(L: np.ndarray, log_ratio: np.ndarray, **kw) -> float:
    """The fitted asymptotic increment b alone (the fit of :func:`fit_increments`)."""
    return fit_increments(L, log_ratio, **kw)[0]
