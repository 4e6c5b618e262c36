"""What the book shows about each chapter, read from its declaration and its stored notebook.

Two pieces of page furniture are made from this at build time (``_ext/book_pages.py``), never stored in
a notebook's outputs: the table of chapters on the landing page (:func:`chapter_rows`) and the box
"Reproduce this page" at the top of every chapter (:func:`reproduce_info`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .records import claims_record
from .registry import BookChapter, all_chapters
from .verification import blas_text, made_on


@dataclass(frozen=True)
class ChapterRow:
    """One line of the table of chapters. ``paper`` is the paper's place in the list of ICML 2026 abstracts that
    the book follows (not shown: the book numbers its chapters in reading order, as the sidebar does)."""

    paper: int
    slug: str
    docname: str
    title: str
    proves: str
    checks: str
    claims_holding: int
    claims: int


def _claims_counts(c: BookChapter) -> tuple[int, int]:
    record = claims_record(c.notebook_path) if c.notebook_path.exists() else None
    claims = (record or {}).get("claims", [])
    return sum(bool(k.get("passed")) for k in claims), len(claims)


def chapter_rows() -> list[ChapterRow]:
    """The book's chapters in book order, with what each proves and checks and how many claims hold."""
    rows = []
    for c in all_chapters():
        holding, total = _claims_counts(c)
        rows.append(ChapterRow(c.paper, c.slug, f"book/chapters/{c.slug}", c.title, c.proves, c.checks,
                               holding, total))
    return rows


@dataclass(frozen=True)
class ReproduceInfo:
    """How to rerun one chapter and where its stored outputs were made."""

    command: str
    parameters: str
    seed: Any
    runtime: str
    environment: str


def _environment_line(env: dict[str, Any]) -> str:
    if not env:
        return "not recorded (the stored outputs predate the record; refresh the chapter)"
    pk = env.get("packages", {})
    packages = ", ".join(f"{k} {v}" for k, v in pk.items())
    blas = blas_text(env)
    parts = [f"Python {env['python']}" if env.get("python") else "", packages, f"BLAS {blas}" if blas else "",
             env.get("cpu", ""), ", ".join(f"{k}={v}" for k, v in env.get("env", {}).items())]
    return "; ".join(p for p in parts if p)


def reproduce_info(c: BookChapter) -> ReproduceInfo:
    """The rerun command, the default parameters and seed, the runtime and the environment of the outputs."""
    defaults = c.defaults()
    env = made_on(c.notebook_path) if c.notebook_path.exists() else {}
    wall = env.get("wall_s")
    return ReproduceInfo(
        command=f"python -m theorylib run {c.slug}",
        parameters=", ".join(f"{k} = {v}" for k, v in defaults.items()),
        seed=defaults.get("seed"),
        runtime=f"{float(wall):.0f} s on one core" if wall is not None else "not recorded",
        environment=_environment_line(env),
    )
