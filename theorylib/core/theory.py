"""The wrong-theory hook shared by every chapter's claims.

Every claim function takes ``theory=`` (default: the chapter's ``theory``
module) and reads each prediction from it, ``theory.kappa(...)``. A named wrong
theory is a function ``wrong_...`` in the same module; :func:`variant` builds
the theory with some of its functions replaced, which a test (or a mutation
run) passes to the claim::

    bad = variant(theory, kappa=theory.wrong_kappa_unrenormalized)
    assert not claims.claim_kappa("C1", runs, theory=bad).passed
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np


def variant(theory: ModuleType | SimpleNamespace, **replaced: Any) -> SimpleNamespace:
    """``theory`` with the named functions replaced; an unknown name is an error (a typo must not pass)."""
    names = {k: v for k, v in vars(theory).items() if not k.startswith("__")}
    unknown = sorted(set(replaced) - set(names))
    if unknown:
        raise AttributeError(f"the theory has no {unknown[0]!r} to replace")
    return SimpleNamespace(**{**names, **replaced})


def nan_after_first(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, but NaN (in the shape of its value) from its second call on.

    The wrong theory that breaks down on a later run or setting: a claim that takes a maximum over runs must
    fail on it, never let the NaN vanish (Python's ``max(a, nan)`` is ``a``). Tests pass it through
    :func:`variant`, e.g. ``variant(theory, bound=nan_after_first(theory.bound))``."""
    calls = 0

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        out = fn(*args, **kwargs)
        return out if calls == 1 else np.asarray(out, dtype=float) * np.nan
    return wrapped
