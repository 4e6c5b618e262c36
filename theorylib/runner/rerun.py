"""One rerun of a chapter, shared by ``run`` and ``sweep``: execute, read the claims, classify.

A rerun's status is ``passed`` (every claim held), ``failed`` (a claim failed),
``crashed`` (the notebook raised otherwise, or left no claims record) or
``error`` (the rerun could not finish: a dead kernel, an interruption, which
may not be the chapter's doing). :func:`rerun` never raises for a failure of
the chapter itself.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .paths import refuse_book

FINAL = ("passed", "failed", "crashed")
INTERRUPTED = ("KeyboardInterrupt", "DeadKernelError")


@dataclass
class RerunResult:
    """What one rerun produced: ``status``, ``error`` (ename, evalue, cell) or None, the claims, seconds."""

    status: str
    error: dict[str, Any] | None
    claims: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    notebook: Path | None = None


def classify(error: Mapping[str, Any] | None, claims: list[dict[str, Any]]) -> tuple[str, dict[str, Any] | None]:
    """The one classification of a rerun's outcome (see the module docstring)."""
    if error is None and not claims:
        return "crashed", {"ename": "NoClaimsRecord", "evalue": "the run left no claims record", "cell": None}
    if error is None:
        return ("passed" if all(c["passed"] for c in claims) else "failed"), None
    if error["ename"] == "ClaimsFailed":
        return "failed", dict(error)
    if error["ename"] in INTERRUPTED:
        return "error", dict(error)
    return "crashed", dict(error)


def rerun(notebook: Path, output: Path, parameters: Mapping[str, Any], *, progress: bool = False) -> RerunResult:
    """Rerun ``notebook`` with papermill into ``output`` (never inside ``book/``) and classify the result."""
    from papermill.exceptions import PapermillExecutionError

    from .execute import execute_papermill
    from .records import claims_record

    refuse_book(output)
    start = time.perf_counter()
    error: dict[str, Any] | None = None
    try:
        execute_papermill(notebook, output, parameters, progress=progress)
    except PapermillExecutionError as e:
        error = {"ename": e.ename, "evalue": e.evalue, "cell": e.cell_index}
    except Exception as e:  # a dead kernel or a timeout is recorded, not raised
        error = {"ename": type(e).__name__, "evalue": str(e), "cell": None}
    record = claims_record(output) if output.exists() else None
    claims = (record or {}).get("claims", [])
    status, error = classify(error, claims)
    return RerunResult(status, error, claims, round(time.perf_counter() - start, 3),
                       output if output.exists() else None)
