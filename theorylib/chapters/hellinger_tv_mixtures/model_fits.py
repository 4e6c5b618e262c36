"""The fits of chapter 'hellinger-tv-mixtures': asymptotic constants estimated from the measured sweep.

Least-squares fits over L >= 10 of the measured log(H/TV) increments (C7.2) and of the measured remainder
of log TV (C7.3), and the refit estimate of their truncation error. The fits receive numbers only (the
remainder's base values are computed by the claim from the theory it tests); never imports ``theory``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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


def fit_tv_remainder(L: np.ndarray, log_tv: np.ndarray, base: np.ndarray, L_fit_min: int = 10,
                     powers: Sequence[int] = (1, 2)) -> float:
    """Intercept of y_L = n (log TV_L - base_L) regressed on [1, n^-k for k in powers] over L >= 10."""
    L = np.asarray(L)
    lt = np.asarray(log_tv, dtype=float)
    b = np.asarray(base, dtype=float)
    if lt.shape != L.shape or b.shape != L.shape:
        raise ValueError("L, log_tv and base must have the same length")
    sel = L >= L_fit_min
    if sel.sum() < len(powers) + 2:
        raise ValueError(f"need at least {len(powers) + 2} values L >= {L_fit_min} for this fit")
    n = L[sel] + 1.0
    y = n * (lt[sel] - b[sel])
    return float(np.linalg.lstsq(_design(n, powers), y, rcond=None)[0][0])


def fit_sensitivity(fit: Callable[..., float], L: np.ndarray, y: np.ndarray, powers: Sequence[int],
                    extra_power: int, **kw) -> float:
    """Truncation-error estimate of an asymptotic fit: the largest change of the fitted constant when
    (i) the next power n^-extra_power is added, or (ii) the smallest L >= 10 is dropped from the fit (each
    only where enough points remain). nan if neither variant is feasible."""
    L = np.asarray(L)
    base = fit(L, y, powers=tuple(powers), **kw)
    first = int(L[L >= 10].min())
    changes = []
    for variant in ({"powers": (*powers, extra_power)}, {"powers": tuple(powers), "L_fit_min": first + 1}):
        try:
            changes.append(abs(fit(L, y, **variant, **kw) - base))
        except ValueError:
            continue
    return max(changes) if changes else float("nan")


def increment_slope(L: np.ndarray, log_ratio: np.ndarray, **kw) -> float:
    """The fitted asymptotic increment b alone (the fit of :func:`fit_increments`)."""
    return fit_increments(L, log_ratio, **kw)[0]
