"""Reading the claims records back from executed notebooks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

from theorylib.core.claims import CLAIMS_KEY


def claims_record(nb: nbformat.NotebookNode | str | Path) -> dict[str, Any] | None:
    """The last claims record among a notebook's outputs, or None if it has none.

    A record is ``{"chapter": slug, "claims": [{name, measured, predicted, rule,
    tolerance, tolerance_text, justification, passed, alpha}, ...]}``.
    """
    if not isinstance(nb, nbformat.NotebookNode):
        nb = nbformat.read(str(nb), as_version=4)
    found = None
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {})
            if CLAIMS_KEY in meta:
                found = meta[CLAIMS_KEY]
    return found
