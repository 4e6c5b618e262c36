"""Numbers quoted in prose come through glue, never typed by hand.

Glue stores what the prose shows, not the raw value (see
:mod:`theorylib.core.formatting`): :func:`glue_number` takes the format spec that
the prose uses and stores the value rounded to it, so ``{glue:text}`name:.3f```
shows the same digits on every machine while ``name``'s full-precision value
sits in the output's metadata (key :data:`GLUE_KEY`), which nbval does not
compare. The book's tests check that every ``{glue:text}`` reference in a
chapter uses the spec its value was glued with.
"""

from __future__ import annotations

from typing import Any

from .formatting import check_spec, fp_shown, plain, rounded

GLUE_KEY = "theorylib.glue"
# myst-nb's marker for a glued value that is not displayed where it is made.
_HIDDEN_PREFIX = "application/papermill.record/"


def _display(name: str, text_plain: str, meta: dict[str, Any]) -> None:
    from IPython.display import display

    metadata = {"scrapbook": {"name": name, "mime_prefix": _HIDDEN_PREFIX}, GLUE_KEY: meta}
    display({_HIDDEN_PREFIX + "text/plain": text_plain}, raw=True, metadata=metadata)


def glue_number(name: str, value: Any, spec: str) -> None:
    """Glue ``value`` rounded as ``spec`` shows it; quote it in prose as ``{glue:text}`name:spec```."""
    check_spec(spec)
    raw = plain(value)
    _display(name, repr(rounded(raw, spec)), {"spec": spec, "raw": raw})


def glue_numbers(spec: str, **values: Any) -> None:
    """Several :func:`glue_number` calls sharing one spec: ``glue_numbers(".3f", c1_gap=g, c1_se=se)``."""
    for name, value in values.items():
        glue_number(name, value, spec)


def glue_text(name: str, text: str) -> None:
    """Glue a short string; quote it as ``{glue:text}`name```."""
    _display(name, repr(str(text)), {"spec": None, "raw": str(text)})


def glue_bound(name: str, value: Any, bound: float) -> None:
    """Glue a floating-point-error quantity as the bound it satisfies (``"< 1e-12"``); quote it as text."""
    raw = plain(value)
    _display(name, repr(fp_shown(raw, bound)), {"spec": None, "raw": raw, "bound": float(bound)})
