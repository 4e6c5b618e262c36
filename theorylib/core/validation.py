"""Input checks shared by every chapter's functions: one home, one message style.

Each check returns the value (converted to a plain Python type) or raises a
``ValueError`` whose message names the argument, the value and what is allowed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """An integer (not a bool) in [low, high]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} = {value!r} must be an integer")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} = {value!r} must be an integer in [{low if low is not None else '-inf'}, "
                         f"{high if high is not None else 'inf'}]")
    return int(value)


def check_positive_int(name: str, value: Any) -> int:
    """An integer >= 1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} = {value!r} must be a positive integer")
    return int(value)


def check_power_of_two(name: str, value: Any, low: int = 1) -> int:
    """An integer power of two, at least ``low``."""
    v = check_int(name, value, low=low)
    if v & (v - 1):
        raise ValueError(f"{name} = {value!r} must be a power of two >= {low}")
    return v


def check_real(name: str, value: Any, low: float | None = None, high: float | None = None, *,
               open_low: bool = False, open_high: bool = False) -> float:
    """A finite real number in [low, high] (either end open when asked)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} = {value!r} must be a finite number")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} = {value!r} must be a finite number") from None
    bad = not math.isfinite(x)
    if low is not None:
        bad |= x <= low if open_low else x < low
    if high is not None:
        bad |= x >= high if open_high else x > high
    if bad:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        left = "(" if open_low or low is None else "["
        right = ")" if open_high or high is None else "]"
        interval = f"{left}{lo}, {hi}{right}"
        raise ValueError(f"{name} = {value!r} must be a finite number in {interval}")
    return x


def check_positive(name: str, value: Any) -> float:
    """A finite number > 0."""
    return check_real(name, value, low=0.0, open_low=True)


def check_probability(name: str, value: Any) -> float:
    """A number in [0, 1]."""
    return check_real(name, value, low=0.0, high=1.0)


def check_array(name: str, value: Any, *, ndim: int | None = None, shape: tuple[int | None, ...] | None = None,
                finite: bool = True, dtype: Any = float) -> np.ndarray:
    """An array of the given rank / shape (``None`` in ``shape`` matches any length), finite by default."""
    a = np.asarray(value, dtype=dtype)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional; got shape {a.shape}")
    if shape is not None and (a.ndim != len(shape) or any(s is not None and s != t for s, t in
                                                          zip(shape, a.shape, strict=True))):
        raise ValueError(f"{name} must have shape {shape}; got {a.shape}")
    if finite and np.issubdtype(a.dtype, np.number) and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a
