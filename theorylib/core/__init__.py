"""The book's small core: claims, rates, parameters, plotting, reproducibility, records."""

from .chapters import Chapter, all_chapters, get_chapter
from .claims import ClaimSet, ClaimsFailed
from .params import Param, ParameterError
from .rates import LogLogFit, fit_loglog
from .repro import rng_for, setup

__all__ = [
    "Chapter", "ClaimSet", "ClaimsFailed", "LogLogFit", "Param", "ParameterError",
    "all_chapters", "fit_loglog", "get_chapter", "rng_for", "setup",
]
