"""The tolerance of claim C3b of chapter 'generation-mistake-feedback': the slope envelope.

C3b predicts the log-log slope ``1`` of the worst-case no-feedback mistakes ``M(T)``; its tolerance
is the deterministic envelope of the Lemma "slope envelope": if ``c T <= M(T) <= T`` on the grid
(with ``c = (m - Delta)/m`` from the proved lower bound, itself tested by C3a, C3d and C3e), the
least-squares slope of ``log M`` on ``log T`` lies in ``1 +- kappa log(1/c)``. This is the claim's
error analysis, not a prediction: it lives here, not in :mod:`.theory`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .families import check_inc


def envelope_kappa(Ts: Sequence[float]) -> float:
    """``kappa = sum_{x_i > xbar} (x_i - xbar) / S_xx`` with ``x = log T``.

    If ``T c <= M(T) <= T`` then the least-squares log-log slope of ``M`` lies in
    ``1 +- kappa log(1/c)``. Correctly rounded sums (``math.fsum``): the same value on every machine.
    """
    x = [math.log(float(t)) for t in Ts]
    xbar = math.fsum(x) / len(x)
    xc = [v - xbar for v in x]
    return math.fsum(v for v in xc if v > 0) / math.fsum(v * v for v in xc)


def slope_half_width(Ts: Sequence[float], inc: np.ndarray) -> float:
    """The half-width ``kappa log(m/(m - Delta))`` of the slope envelope (Lemma, slope envelope)."""
    inc = check_inc(inc)
    m, delta = inc.shape[0], int(inc.sum(axis=0).max())
    return envelope_kappa(Ts) * math.log(m / (m - delta))
