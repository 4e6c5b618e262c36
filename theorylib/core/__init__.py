"""The book's core: what runs inside a chapter's notebook kernel.

Claims, rates (``fit_loglog``), parameters and the chapter declaration type,
reproducibility, plotting, glue and the output policy (``formatting``), and the
input checks every chapter shares (``validation``). The core imports neither
the chapters nor the runner. Its names load lazily, so that a chapter's
declaration (``theorylib.core.chapter``) imports no numerical library.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "Chapter": "chapter", "ClaimSet": "claims", "ClaimsFailed": "claims", "Param": "params",
    "ParameterError": "params", "Params": "params", "LogLogFit": "rates", "fit_loglog": "rates",
    "rng_for": "repro", "setup": "repro",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
