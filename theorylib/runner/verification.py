"""The Verification page: every claim of every chapter, read from the stored outputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import nbformat

from theorylib.core.claims import COLUMNS, render_html, render_text, table_rows

from .execute import METADATA_KEY
from .records import claims_record
from .registry import BookChapter, all_chapters

HEADER = ("chapter", *COLUMNS)


def verification_rows(chapters: Sequence[BookChapter] | None = None) -> tuple[list[list[str]], list[str]]:
    """Rows (chapter, claim, measured, predicted, tolerance, alpha, status) and their justifications.

    A chapter whose stored notebook is missing or holds no claims record shows
    as one failing row, so a broken chapter cannot vanish from the table.
    """
    rows: list[list[str]] = []
    notes: list[str] = []
    for c in chapters if chapters is not None else all_chapters():
        record = claims_record(c.notebook_path) if c.notebook_path.exists() else None
        if not record or not record.get("claims"):
            rows.append([c.slug, "(no claims record)", "", "", "", "", "FAIL"])
            notes.append("the stored notebook has no claims table: refresh the chapter")
            continue
        rows.extend(table_rows(record["claims"], chapter=c.slug))
        notes.extend(claim["justification"] for claim in record["claims"])
    return rows, notes


def made_on(nb_path: Any) -> dict[str, Any]:
    """Where a stored notebook's outputs were made (written by ``refresh``), or {} when unrecorded."""
    nb = nbformat.read(str(nb_path), as_version=4)
    return dict(nb.metadata.get(METADATA_KEY, {}).get("made_on", {}))


def blas_text(env: dict[str, Any]) -> str:
    """The BLAS libraries of a ``made_on`` record with their versions and kernels, e.g. 'openblas 0.3.30 (Haswell)'."""
    return "; ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture', '?')})"
                     for b in env.get("blas", []) if b.get("internal_api") in ("openblas", "mkl", "blis"))


def provenance_rows(chapters: Sequence[BookChapter] | None = None) -> list[list[str]]:
    """One row per chapter: packages, BLAS kernel, numpy SIMD, CPU and threads of its stored outputs."""
    rows = []
    for c in chapters if chapters is not None else all_chapters():
        env = made_on(c.notebook_path) if c.notebook_path.exists() else {}
        if not env:
            rows.append([c.slug, "(not recorded: refresh the chapter)", "", "", "", ""])
            continue
        pk = env.get("packages", {})
        packages = ", ".join(f"{k} {v}" for k, v in pk.items() if k in ("numpy", "scipy", "torch"))
        blas = blas_text(env)
        simd = "+".join(env.get("numpy_simd", {}).get("dispatched", [])) or "baseline"
        threads = ", ".join(f"{k}={v}" for k, v in env.get("env", {}).items()) or "-"
        rows.append([c.slug, packages, blas, simd, env.get("cpu", "?"), threads])
    return rows


PROVENANCE_HEADER = ("chapter", "packages", "BLAS (kernel)", "numpy SIMD", "CPU", "environment")


def show_verification_table(chapters: Sequence[BookChapter] | None = None) -> None:
    """Display the table (HTML in the book, text for nbval) and a one-line summary."""
    from IPython.display import display

    rows, notes = verification_rows(chapters)
    passed = sum(r[-1] == "pass" for r in rows)
    summary = f"{passed} of {len(rows)} claims hold across {len({r[0] for r in rows})} chapters."
    display({"text/plain": summary + "\n\n" + render_text(rows, HEADER),
             "text/html": f"<p>{summary}</p>" + render_html(rows, HEADER, notes)}, raw=True)


MUTATION_HEADER = ("chapter", "mutants", "killed", "equivalent", "survived", "score", "up to date")


def mutation_rows(chapters: Sequence[BookChapter] | None = None) -> list[list[str]]:
    """One row per chapter from its stored mutation report (``python -m theorylib mutate``)."""
    from .mutation.report import code_hash, load_report

    rows = []
    for c in chapters if chapters is not None else all_chapters():
        rep = load_report(c)
        if rep is None:
            rows.append([c.slug, "(no report)", "", "", "", "", ""])
            continue
        n = rep["counts"]
        rows.append([c.slug, str(rep["mutants"]), str(rep["killed"]), str(n["equivalent"]), str(n["survived"]),
                     f"{rep['score']:.0%}", "yes" if rep["code_hash"] == code_hash(c) else "NO: rerun mutate"])
    return rows


def show_mutation_table(chapters: Sequence[BookChapter] | None = None) -> None:
    """Display each chapter's mutation score."""
    from IPython.display import display

    rows = mutation_rows(chapters)
    display({"text/plain": render_text(rows, MUTATION_HEADER),
             "text/html": render_html(rows, MUTATION_HEADER, table_class="mutation-table")}, raw=True)


def show_provenance_table(chapters: Sequence[BookChapter] | None = None) -> None:
    """Display where each chapter's stored outputs were made."""
    from IPython.display import display

    rows = provenance_rows(chapters)
    display({"text/plain": render_text(rows, PROVENANCE_HEADER),
             "text/html": render_html(rows, PROVENANCE_HEADER, table_class="provenance-table")}, raw=True)
