"""The theory of chapter '__SLUG__': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. Every claim reads its prediction from this
module (``theory.mean_of_square(...)``); a wrong theory ``wrong_...`` has the
signature of the function it replaces and is passed to a claim as
``theory=variant(theory, mean_of_square=theory.wrong_mean_of_square)``.
"""

from __future__ import annotations


def mean_of_square(sigma: float) -> float:
    """E[X^2] = sigma^2 for X ~ N(0, sigma^2) (replace with the chapter's result)."""
    return sigma**2


def wrong_mean_of_square(sigma: float) -> float:
    """A wrong theory the claim must reject: E[X^2] = sigma."""
    return sigma
