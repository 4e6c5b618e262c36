"""The model of chapter '__SLUG__': samplers, learners, simulations; every measured value.

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``.
"""

from __future__ import annotations

import numpy as np

from theorylib.core.validation import check_positive, check_positive_int


def sample(n: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """n draws of N(0, sigma^2) (replace with the chapter's simulation)."""
    n, sigma = check_positive_int("n", n), check_positive("sigma", sigma)
    return sigma * rng.standard_normal(n)
