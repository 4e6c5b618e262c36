"""The output policy: what a stored text output may show.

Stored outputs are compared digit by digit on every machine (nbval), so what
they show must be a function of the mathematics and the seed, never of
rounding noise (BLAS kernel, SIMD level, summation order):

* a number is shown at the precision its claim needs, through :func:`shown`
  (a format spec such as ``".4f"`` or ``".3g"``), never as a raw ``repr``;
* a quantity that is floating-point error by nature (the residual of an exact
  identity, the recovery error of an exact algorithm, the difference of two
  quadratures) is shown as a bound it satisfies on every machine,
  :func:`bound_text` (``"< 1e-12"``), never by its digits;
* full precision goes to output *metadata* only (nbval does not compare it).

The same rules hold for glue (:mod:`theorylib.core.glue`) and the claims table.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

_FLOAT_TYPES = "eEfFgG%"


def check_spec(spec: str) -> str:
    """A numeric format spec (``".4f"``, ``".3g"``, ``".1e"``, ``".1%"``, ``"d"``, ``","``...), else ValueError."""
    if not isinstance(spec, str) or not spec or spec[-1] not in _FLOAT_TYPES + "d":
        raise ValueError(f"format spec {spec!r}: give the precision the claim needs, e.g. '.4f', '.3g', '.1e' or 'd'")
    try:
        format(1, spec) if spec[-1] == "d" else format(1.0, spec)
    except ValueError as e:
        raise ValueError(f"format spec {spec!r} is not a valid numeric format: {e}") from e
    return spec


def plain(value: Any) -> int | float:
    """A plain Python int or float from a numpy scalar, an int or a float (a bool is refused)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("a bool is not a number; show it as text")
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value)


def rounded(value: Any, spec: str) -> int | float:
    """``value`` rounded exactly as ``format(value, spec)`` shows it, as a number.

    ``format(rounded(x, s), s) == format(x, s)``: storing the rounded value keeps
    what the reader sees and drops the digits that vary between machines.
    """
    spec = check_spec(spec)
    x = plain(value)
    if spec[-1] == "d":
        if isinstance(x, float):
            if not x.is_integer():
                raise ValueError(f"{x!r} is not an integer; its format {spec!r} needs one")
            x = int(x)
        return x
    x = float(x)
    if not math.isfinite(x):
        return x
    if spec[-1] == "%":  # ".1%" shows 3 decimals of x
        digits = re.search(r"\.(\d+)", spec)
        return float(format(x, f".{(int(digits[1]) if digits else 6) + 2}f"))
    return float(format(x, spec.replace(",", "").replace("_", "")))


def shown(value: Any, spec: str) -> str:
    """``format(value, spec)`` after checking the spec: the one way numbers reach a stored output."""
    spec = check_spec(spec)
    x = plain(value)
    return format(int(x) if spec[-1] == "d" else float(x), spec)


def shown_array(values: Any, spec: str) -> str:
    """An array shown entry by entry at ``spec``: ``"[0.012 -0.003 0.041]"``."""
    return "[" + " ".join(shown(v, spec) for v in np.ravel(np.asarray(values))) + "]"


def bound_text(bound: float) -> str:
    """A bound at two significant digits, rounded *up* (``1.64e-12`` -> ``"1.7e-12"``), so "< text" stays true."""
    b = float(bound)
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"bound = {bound!r} must be finite and > 0")
    text = f"{b:.2g}"
    if float(text) < b:
        step = 10.0 ** (math.floor(math.log10(b)) - 1)
        text = f"{math.ceil(b / step) * step:.2g}"
    return text


def decade_text(bound: float) -> str:
    """The smallest power of ten at or above ``bound`` (``5.12e-12`` -> ``"1e-11"``): how a bound that is itself
    computed in floating point (a rounding model evaluated on the data) is shown, since its leading digits
    are as machine-dependent as the error it bounds; its decade is not."""
    b = float(bound)
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"bound = {bound!r} must be finite and > 0")
    k = math.ceil(math.log10(b))
    if 10.0 ** (k - 1) >= b:  # log10 rounded up past an exact power of ten
        k -= 1
    return f"{10.0 ** k:.2g}"


def fp_shown(value: Any, bound: float) -> str:
    """A floating-point-error quantity as the bound it satisfies: ``"< 1e-12"``.

    When ``|value| >= bound`` the bound does not hold, and the value is shown with
    the bound it broke (that run fails its claim anyway; the digits help to see why).
    """
    x = abs(float(plain(value)))
    text = bound_text(bound)
    if x < float(bound):
        return f"< {text}"
    return f"{x:.3g} (above the bound {text})"
