"""The Verification page: every claim of every chapter, read from the stored outputs."""

from __future__ import annotations

from collections.abc import Sequence

from .chapters import Chapter, all_chapters
from .claims import COLUMNS, render_html, render_text, table_rows
from .records import claims_record

HEADER = ("chapter", *COLUMNS)


def verification_rows(chapters: Sequence[Chapter] | None = None) -> tuple[list[list[str]], list[str]]:
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


def show_verification_table(chapters: Sequence[Chapter] | None = None) -> None:
    """Display the table (HTML in the book, text for nbval) and a one-line summary."""
    from IPython.display import display

    rows, notes = verification_rows(chapters)
    passed = sum(r[-1] == "pass" for r in rows)
    summary = f"{passed} of {len(rows)} claims hold across {len({r[0] for r in rows})} chapters."
    display({"text/plain": summary + "\n\n" + render_text(rows, HEADER),
             "text/html": f"<p>{summary}</p>" + render_html(rows, HEADER, notes)}, raw=True)
