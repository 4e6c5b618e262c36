"""Numbers quoted in prose come through glue, never typed by hand."""

from __future__ import annotations

from typing import Any

import numpy as np


def glue_number(name: str, value: Any) -> None:
    """Glue ``value`` as a plain Python int or float (never a numpy scalar).

    In the MyST text: ``{glue:text}`name:.3f``` (the format spec is applied by myst-nb).
    """
    from myst_nb import glue

    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"glue {name!r}: a bool is not a number; glue a string instead")
    plain = int(value) if isinstance(value, (int, np.integer)) else float(value)
    glue(name, plain, display=False)


def glue_text(name: str, text: str) -> None:
    """Glue a short string (rendered without quotes with ``{glue:text}`` via its format)."""
    from myst_nb import glue

    glue(name, str(text), display=False)
