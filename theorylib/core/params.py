"""Validation of a chapter's papermill parameters.

Every chapter declares its parameters once, as a tuple of :class:`Param`.
The notebook's ``parameters`` cell holds the defaults (papermill overrides
them), and the next cell calls :func:`validate`, which stops the run with a
:class:`ParameterError` naming the parameter, the value and the allowed range.
The command line validates the same declaration *before* anything executes.

Besides a range, a number may have to be a multiple of an integer (``multiple_of``) or a power of two
(``power_of_two``); a rule that ties several parameters is a :class:`Relation` of the chapter, checked
after each parameter is. Every rule a chapter's code relies on is declared here, so that a value the
declaration allows never stops a run halfway.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["int", "float", "str", "bool", "int_list", "float_list"]
_SCALAR_OF = {"int_list": "int", "float_list": "float"}


class ParameterError(ValueError):
    """A parameter value outside its declared type, range or choices."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


@dataclass(frozen=True)
class Param:
    """One papermill parameter: its default and the values it may take.

    ``low``/``high`` bound a number (or every item of a list), inclusive;
    ``multiple_of`` and ``power_of_two`` restrict an integer (or every item);
    ``choices`` lists the allowed strings; ``min_len``/``max_len`` bound a
    list's length; ``increasing`` asks a list to be strictly increasing.
    """

    name: str
    default: Any
    kind: Kind
    doc: str = ""
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    min_len: int = 1
    max_len: int | None = None
    increasing: bool = False
    multiple_of: int | None = None
    power_of_two: bool = False

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"parameter name {self.name!r} is not a Python identifier")
        if (self.multiple_of is not None or self.power_of_two) and _SCALAR_OF.get(self.kind, self.kind) != "int":
            raise ValueError(f"parameter {self.name!r}: multiple_of and power_of_two apply to integers only")
        if self.multiple_of is not None and not (_is_int(self.multiple_of) and self.multiple_of >= 2):
            raise ValueError(f"parameter {self.name!r}: multiple_of = {self.multiple_of!r} must be an integer >= 2")
        # The default must itself be valid: a declaration error, caught at import.
        self.check(self.default)

    def allowed(self) -> str:
        """A human description of the allowed values, used in error messages."""
        if self.kind == "bool":
            return "True or False"
        if self.kind == "str":
            return "one of " + ", ".join(repr(c) for c in self.choices or ())
        scalar = _SCALAR_OF.get(self.kind, self.kind)
        noun = "an integer" if scalar == "int" else "a finite number"
        if self.low is not None and self.high is not None:
            rng = f"{noun} in [{self.low:g}, {self.high:g}]"
        elif self.low is not None:
            rng = f"{noun} >= {self.low:g}"
        elif self.high is not None:
            rng = f"{noun} <= {self.high:g}"
        else:
            rng = noun
        if self.multiple_of == 2:
            rng += ", even"
        elif self.multiple_of is not None:
            rng += f", a multiple of {self.multiple_of}"
        if self.power_of_two:
            rng += ", a power of 2"
        if self.kind in _SCALAR_OF:
            length = f"{self.min_len}..{self.max_len}" if self.max_len else f">= {self.min_len}"
            order = ", strictly increasing" if self.increasing else ""
            return f"a list of {length} items{order}, each {rng}"
        return rng

    def _fail(self, value: Any, why: str = "") -> ParameterError:
        extra = f" ({why})" if why else ""
        return ParameterError(
            f"parameter {self.name!r} = {value!r} is not allowed{extra}; allowed: {self.allowed()}"
        )

    def _check_scalar(self, value: Any, scalar: str, shown: Any) -> Any:
        if scalar == "int":
            if not _is_int(value):
                raise self._fail(shown, "not an integer")
        elif not _is_real(value):
            raise self._fail(shown, "not a finite number")
        else:
            value = float(value)
        if self.low is not None and value < self.low:
            raise self._fail(shown, f"{value!r} is below {self.low:g}")
        if self.high is not None and value > self.high:
            raise self._fail(shown, f"{value!r} is above {self.high:g}")
        if self.multiple_of is not None and value % self.multiple_of:
            raise self._fail(shown, f"{value!r} is not " + ("even" if self.multiple_of == 2 else
                                                          f"a multiple of {self.multiple_of}"))
        if self.power_of_two and (value < 1 or value & (value - 1)):
            raise self._fail(shown, f"{value!r} is not a power of 2")
        return value

    def check(self, value: Any) -> Any:
        """Return ``value`` (ints promoted to float for float kinds) or raise."""
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise self._fail(value, "not a bool")
            return value
        if self.kind == "str":
            if not isinstance(value, str) or (self.choices and value not in self.choices):
                raise self._fail(value)
            return value
        if self.kind in _SCALAR_OF:
            if not isinstance(value, (list, tuple)):
                raise self._fail(value, "not a list")
            if len(value) < self.min_len or (self.max_len is not None and len(value) > self.max_len):
                raise self._fail(value, f"length {len(value)}")
            items = [self._check_scalar(v, _SCALAR_OF[self.kind], value) for v in value]
            if self.increasing and any(b <= a for a, b in zip(items, items[1:], strict=False)):
                raise self._fail(value, "not strictly increasing")
            return items
        return self._check_scalar(value, self.kind, value)


@dataclass(frozen=True)
class Relation:
    """A rule that ties several parameters, e.g. ``Relation(("r", "d_lr"), "2 r <= d_lr", lambda v: ...)``.

    ``holds`` receives the validated values (every parameter, by name) and says whether the rule holds;
    ``rule`` states it for the message. ``violating`` and ``satisfying`` are overrides of the defaults that
    break and that keep the rule: the tests check both against the declaration, and run the chapter at
    ``satisfying``.
    """

    names: tuple[str, ...]
    rule: str
    holds: Callable[[Mapping[str, Any]], bool]
    violating: Mapping[str, Any]
    satisfying: Mapping[str, Any]

    def check(self, values: Mapping[str, Any]) -> None:
        if not self.holds(values):
            shown = ", ".join(f"{n!r} = {values[n]!r}" for n in self.names)
            raise ParameterError(f"parameters {shown} are not allowed together; the rule: {self.rule}")


class Params(dict):
    """Validated parameter values: a dict that also reads as attributes (``P.d`` is ``P["d"]``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no parameter {name!r}; this chapter's parameters are: {', '.join(self)}") from None


def validate(values: Mapping[str, Any], params: Sequence[Param], *, strict: bool = False,
             relations: Sequence[Relation] = ()) -> Params:
    """Check ``values`` against ``params``, then against ``relations``, and return the validated values.

    Names missing from ``values`` take their defaults. With ``strict=True`` a
    name that no parameter declares is an error (the command line uses this;
    a notebook passes its ``globals()``, which hold much else).
    """
    known = {p.name: p for p in params}
    if strict:
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ParameterError(
                f"unknown parameter {unknown[0]!r}; this chapter's parameters are: {', '.join(known)}"
            )
    out = Params({p.name: p.check(values[p.name]) if p.name in values else p.check(p.default) for p in params})
    for rel in relations:
        rel.check(out)
    return out


def parse_value(text: str) -> Any:
    """Parse a command-line value: a Python literal if it is one, else the string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_pairs(pairs: Iterable[Sequence[str]]) -> dict[str, Any]:
    """Turn ``[(name, text), ...]`` from ``-p NAME VALUE`` into a dict of parsed values."""
    return {name: parse_value(text) for name, text in pairs}
