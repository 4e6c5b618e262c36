"""The claims of chapter '__SLUG__': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the
name first, then the measured data, then the wrong-theory hook ``theory=``.
"""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

import numpy as np

from theorylib.core.claims import Claim, check_zscore

from . import theory as _theory

Theory = ModuleType | SimpleNamespace


def claim_mean_of_square(name: str, x: np.ndarray, sigma: float, *, theory: Theory = _theory) -> Claim:
    """The sample mean of x^2 against ``theory.mean_of_square(sigma)``, within 3.29 Monte-Carlo SE."""
    sq = np.asarray(x, dtype=float) ** 2
    se = float(sq.std(ddof=1) / np.sqrt(sq.size))
    return check_zscore(name, float(sq.mean()), theory.mean_of_square(sigma), se,
                        why="CLT: the mean of n iid squares has SE sd/sqrt(n)").with_details(se=se)
