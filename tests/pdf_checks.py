"""The PDF as a reader meets it: ``python tests/pdf_checks.py _build/latex`` (run by ``make pdf``).

Reads ``book.pdf`` with poppler's ``pdftotext`` and the LaTeX log beside it, and fails, naming what is
missing, unless every chapter is there with its numbered theorems, its proofs, its numbered figures and
its claims table, the citations are resolved and the bibliography printed, and no line sticks out into
the margin by more than :data:`MAX_OVERFULL_PT` (the margins are an inch wide, so such a line is not cut).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MAX_OVERFULL_PT = 36.0
CLAIMS_HEADER = "Holds"  # the last column of every claims table


def pdf_text(pdf: Path) -> list[str]:
    """The text of each page."""
    if shutil.which("pdftotext") is None:
        raise SystemExit("pdftotext not found: install Debian's poppler-utils (.ci/run does)")
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    return text.split("\f")


def overfull_boxes(log: Path) -> list[tuple[float, str]]:
    """``Overfull \\hbox`` warnings of the LaTeX log wider than :data:`MAX_OVERFULL_PT`, with their lines."""
    found = re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\) ([^\n]*)", log.read_text(errors="replace"))
    return [(float(pt), where) for pt, where in found if float(pt) > MAX_OVERFULL_PT]


def check_pdf(latex_dir: Path) -> list[str]:
    from theorylib.runner.registry import all_chapters

    pdf, log = latex_dir / "book.pdf", latex_dir / "book.log"
    if not pdf.exists():
        return [f"{pdf} was not made"]
    pages = pdf_text(pdf)
    text = "\n".join(pages)
    flat = re.sub(r"\s+", " ", text)
    problems = []
    for chapter in all_chapters():
        number = chapter.paper  # the book numbers each chapter by its paper (_ext/chapter_numbers.py)
        title = re.sub(r"\s+", " ", chapter.title)
        if title[:40] not in flat:
            problems.append(f"chapter {number} '{title}' is missing")
        for what in ("Theorem", "Fig."):
            if not re.search(rf"{re.escape(what)} {number}\.1\b", flat):
                problems.append(f"chapter {number}: no '{what} {number}.1' (numbered blocks and figures)")
    if flat.count("Proof.") < len(all_chapters()):
        problems.append(f"only {flat.count('Proof.')} proofs ('Proof.') for {len(all_chapters())} chapters")
    if text.count(CLAIMS_HEADER) < len(all_chapters()):
        problems.append(f"only {text.count(CLAIMS_HEADER)} claims tables for {len(all_chapters())} chapters")
    if "??" in flat or "[?]" in flat:
        problems.append("an unresolved reference or citation ('??' or '[?]')")
    if "Bibliography" not in flat:
        problems.append("no bibliography")
    problems += [f"a line sticks {pt:.0f} pt into the margin {where}" for pt, where in overfull_boxes(log)]
    return problems


def main(argv: list[str]) -> int:
    problems = check_pdf(Path(argv[1] if len(argv) > 1 else "_build/latex"))
    for p in problems:
        print(f"PDF: {p}", file=sys.stderr)
    print(f"PDF checks: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
