"""The tolerance of claims C3a and C3b of chapter 'generation-mistake-feedback': the excess constant.

C3a and C3b predict the sharp no-feedback rate ``ceil(T (1 - 1/tau*))``; a generator that outputs the
types at LP frequencies ``p`` (every ``p(A_i) >= 1/tau*``) by the largest-deficit rule stays within

    M(T) <= T (1 - 1/tau*) + beta(p),   beta(p) = (1 - 1/s) max_i |supp(p) minus A_i|,

``s = |supp(p)|`` (Proposition "sharp no-feedback rate", part (iii)). ``beta`` is the claims' error
budget on the upper side, a proved constant, not a prediction: it lives here, not in :mod:`.theory`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from .families import check_inc


def excess_constant(inc: np.ndarray, weights: Sequence[Fraction]) -> Fraction:
    """``beta(p) = (1 - 1/s) max_i |supp(p) \\ A_i|`` for output frequencies ``p`` (exact)."""
    inc = check_inc(inc)
    if len(weights) != inc.shape[1]:
        raise ValueError(f"need one weight per type ({inc.shape[1]}), got {len(weights)}")
    if any(w < 0 for w in weights) or sum(weights) != 1:
        raise ValueError("weights must be nonnegative and sum to 1")
    supp = np.array([w > 0 for w in weights])
    s = int(supp.sum())
    outside = int((supp[None, :] & ~inc).sum(axis=1).max())
    return (1 - Fraction(1, s)) * outside


def upper_end(rate: Fraction, T: int, beta: Fraction) -> int:
    """``floor(T rate + beta)``: the largest integer the proved upper bound allows (exact)."""
    return math.floor(T * rate + beta)
