"""The Verification page: every claim of every chapter, read from the stored outputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import nbformat

from theorylib.core.claims import COLUMNS, measured_text, number_text, render_text, table_rows
from theorylib.core.claims_markdown import HEADER as CLAIMS_MD_HEADER
from theorylib.core.claims_markdown import claim_row, escape_markdown, markdown_table

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
    """The BLAS libraries of a ``made_on`` record with their versions and kernels, e.g. 'openblas 0.3.30 (Haswell)',
    sorted (threadpoolctl lists them in the order numpy and scipy happened to load them)."""
    return "; ".join(sorted(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture', '?')})"
                            for b in env.get("blas", []) if b.get("internal_api") in ("openblas", "mkl", "blis")))


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
        # ", " lets the column wrap: a SkylakeX row lists three dispatch levels
        simd = ", ".join(env.get("numpy_simd", {}).get("dispatched", [])) or "baseline"
        threads = ", ".join(f"{k}={v}" for k, v in env.get("env", {}).items()) or "-"
        rows.append([c.slug, packages, blas, simd, env.get("cpu", "?"), threads])
    return rows


PROVENANCE_HEADER = ("chapter", "packages", "BLAS (kernel)", "numpy SIMD", "CPU", "environment")


def _summary(rows: Sequence[Sequence[str]]) -> str:
    passed = sum(r[-1] == "pass" for r in rows)
    return f"{passed} of {len(rows)} claims hold across {len({r[0] for r in rows})} chapters."


def _runtime(c: BookChapter) -> str:
    wall = made_on(c.notebook_path).get("wall_s") if c.notebook_path.exists() else None
    return f"runs in {float(wall):.0f} s on one core" if wall is not None else "runtime not recorded"


def _mutation_status(c: BookChapter) -> str:
    from .mutation.report import code_hash, load_report

    rep = load_report(c)
    if rep is None:
        return "no mutation report"
    fresh = "up to date" if rep["code_hash"] == code_hash(c) else "STALE: rerun mutate"
    tested = rep["mutants"] - rep["counts"]["equivalent"]
    return f"mutation score {rep['score']:.0%} ({rep['killed']} of {tested}, {fresh})"


def chapter_section_markdown(c: BookChapter) -> str:
    """One chapter on the Verification page: a summary line, then its claims, each linked to its experiment
    and to the theorem-like blocks it checks."""
    record = claims_record(c.notebook_path) if c.notebook_path.exists() else None
    claims = (record or {}).get("claims", [])
    link = f"{{doc}}`/book/chapters/{c.slug}`"
    if not claims:
        return f"{link}: **no claims record** (the stored notebook has no claims table: refresh the chapter)"
    holding = sum(bool(k["passed"]) for k in claims)
    line = (f"{link}: {len(claims)} claims, {holding} holding"
            f"{'' if holding == len(claims) else ' (**FAILING**)'}; {escape_markdown(_mutation_status(c))}; "
            f"{_runtime(c)}.")
    rows = [claim_row(r, measured_text(r), number_text(r["predicted"])) for r in claims]
    return line + "\n\n" + markdown_table(rows, CLAIMS_MD_HEADER, css_class="claims-table verification-table")


def verification_markdown(chapters: Sequence[BookChapter] | None = None) -> str:
    """The whole page body: the summary, then one section per chapter, in book order."""
    chapters = list(chapters if chapters is not None else all_chapters())
    rows, _ = verification_rows(chapters)
    return "\n\n".join([f"**{_summary(rows)}**", *(chapter_section_markdown(c) for c in chapters)])


def show_verification_table(chapters: Sequence[BookChapter] | None = None) -> None:
    """Display every claim, grouped by chapter (MyST in the book, a text table for nbval and the terminal)."""
    from IPython.display import display

    rows, _ = verification_rows(chapters)
    display({"text/plain": _summary(rows) + "\n\n" + render_text(rows, HEADER),
             "text/markdown": verification_markdown(chapters)}, raw=True)


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
             "text/markdown": _plain_markdown_table(rows, MUTATION_HEADER, "mutation-table")}, raw=True)


def show_provenance_table(chapters: Sequence[BookChapter] | None = None) -> None:
    """Display where each chapter's stored outputs were made."""
    from IPython.display import display

    rows = provenance_rows(chapters)
    display({"text/plain": render_text(rows, PROVENANCE_HEADER),
             "text/markdown": _plain_markdown_table(rows, PROVENANCE_HEADER, "provenance-table")}, raw=True)


def _plain_markdown_table(rows: Sequence[Sequence[str]], header: Sequence[str], css_class: str) -> str:
    """A table of plain texts (escaped), its first column linked to the chapter."""
    cells = [[f"{{doc}}`/book/chapters/{r[0]}`" if i == 0 else escape_markdown(str(x))
              for i, x in enumerate(r)] for r in rows]
    return markdown_table(cells, [escape_markdown(h) for h in header], css_class=css_class)
