"""The claims table as the book shows it: MyST Markdown, rendered when the book is built.

A chapter's claims table is stored in the notebook as ``text/markdown`` (beside the fixed-width
``text/plain`` table that the command line prints). The book renders it with the MyST parser, so the
table is typeset and linked at build time: math in claim names (``$\\|\\hat A - A\\|_F^2$``) and in the
measured, predicted and tolerance cells is typeset; each claim's ID links to the section of its experiment
and the *checks* column names, with its book number, each theorem-like block the claim tests
(``{prf:ref}`label```, e.g. "Theorem 2.1"); each row ends with a clear mark, ✓ or ✗ **FAIL**; the
justification of each tolerance is folded under the table. The same rows feed the Verification page.

Text that is not math is escaped, so that an ASCII justification such as ``||J_ab||_1 * eps`` reads as
written rather than as Markdown emphasis.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

# Markdown's inline punctuation, and MyST's role and substitution braces.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~^$])")
# A number as the claims module writes it (3 or 4 significant digits, maybe in e-notation).
_NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)(?:e([+-]?\d+))?(?![\w.])")
_MATH = re.compile(r"(\$[^$]+\$)")

PASS_MARK = "✓"
FAIL_MARK = "✗ **FAIL**"  # the mark outside the bold: the PDF's bold serif has no ✗


def escape_markdown(text: str) -> str:
    """``text`` as literal Markdown: every character that Markdown or MyST would interpret is escaped."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def name_markdown(name: str) -> str:
    """A claim name: its ``$...$`` segments are kept as math, the rest is escaped."""
    parts = _MATH.split(name)
    return "".join(p if i % 2 else escape_markdown(p) for i, p in enumerate(parts))


def tex_number(text: str) -> str:
    """``1.3e-05`` -> ``1.3\\times 10^{-5}``, ``1e-12`` -> ``10^{-12}``; other numbers as written."""

    def one(m: re.Match[str]) -> str:
        mant, exp = m.group(1), m.group(2)
        if exp is None:
            return mant
        e = int(exp)
        if mant in ("1", "1.0"):
            return f"10^{{{e}}}"
        if mant in ("-1", "-1.0"):
            return f"-10^{{{e}}}"
        return f"{mant}\\times 10^{{{e}}}"

    return _NUMBER.sub(one, text)


def tex_expression(text: str) -> str:
    """A measured or tolerance text of the claims module (``|m-p| <= 1e-11``, ``3.29 SE = 1.3e-05``,
    ``chi2_5 <= 20.5``, ``p(1 ± 1e-9)``) as inline TeX."""
    t = tex_number(text)
    t = t.replace("<=", r"\le ").replace(">=", r"\ge ").replace("±", r"\pm ")
    t = re.sub(r"chi2_(\d+)", r"\\chi^2_{\1}", t)
    t = re.sub(r"\bSE\b", r"\\,\\mathrm{SE}", t)
    return f"${t.strip()}$"


def tolerance_markdown(record: Mapping[str, Any]) -> str:
    """The tolerance cell, typeset, with the false-alarm level of a statistical rule."""
    text = record["tolerance_text"]
    if record["rule"] == "exact":
        cell = "exact"
    else:
        m = re.fullmatch(r"([\d.]+)% CI \[(.+), (.+)\]", text)
        if m:
            cell = f"{m.group(1)}% CI $[{tex_number(m.group(2))},\\ {tex_number(m.group(3))}]$"
        else:
            cell = tex_expression(text)
    alpha = record.get("alpha")
    if alpha is not None:
        decade = f"{alpha:.0e}"
        shown = decade if float(decade) == alpha else f"{alpha:g}"
        cell += f", $\\alpha = {tex_number(shown)}$"
    return cell


def measured_markdown(text: str) -> str:
    """The measured (or predicted) cell: a plain number, or a bound such as ``<= 1e-12``, typeset."""
    return tex_expression(text)


def checks_markdown(checks: Sequence[str]) -> str:
    """The theorem-like blocks a claim tests, each a reference the book resolves to its number."""
    return ", ".join(f"{{prf:ref}}`{label}`" for label in checks) if checks else "—"


def claim_id(name: str) -> tuple[str, str]:
    """A claim name split into its ID and the rest: ``"C1a minimax = tau"`` -> ``("C1a", "minimax = tau")``."""
    head, _, rest = name.partition(" ")
    return head, rest


def claim_cell(record: Mapping[str, Any]) -> str:
    """The claim's ID, linked to its experiment's section when known, then its typeset name."""
    cid, rest = claim_id(record["name"])
    section = record.get("section") or ""
    head = f"{{ref}}`{escape_markdown(cid)} <{section}>`" if section else f"**{escape_markdown(cid)}**"
    return f"{head} {name_markdown(rest)}".strip()


HEADER = ("Claim", "Checks", "Measured", "Predicted", "Tolerance", "Holds")


def markdown_table(rows: Sequence[Sequence[str]], header: Sequence[str], *, css_class: str) -> str:
    """A MyST ``list-table`` of ready-made Markdown cells."""
    lines = ["::::{list-table}", ":header-rows: 1", f":class: {css_class}", ""]
    for row in [list(header), *rows]:
        for j, cell in enumerate(row):
            lines.append(("* - " if j == 0 else "  - ") + (cell or " "))
    lines.append("::::")
    return "\n".join(lines)


def claim_row(record: Mapping[str, Any], measured: str, predicted: str) -> list[str]:
    """One row of the claims table (``measured`` / ``predicted``: the texts of the plain table)."""
    return [claim_cell(record), checks_markdown(record.get("checks") or ()), measured_markdown(measured),
            measured_markdown(predicted), tolerance_markdown(record), PASS_MARK if record["passed"] else FAIL_MARK]


def why_markdown(records: Sequence[Mapping[str, Any]], title: str = "Why each tolerance") -> str:
    """The justifications, folded under the table (one line per claim)."""
    body = "\n\n".join(f"**{escape_markdown(claim_id(r['name'])[0])}** {escape_markdown(r['justification'])}"
                       for r in records)
    return f":::{{dropdown}} {title}\n:class-container: claims-why\n\n{body}\n:::"


def claims_markdown(records: Sequence[Mapping[str, Any]], cells: Sequence[tuple[str, str]],
                    *, css_class: str = "claims-table") -> str:
    """The claims table with its folded justifications; ``cells`` are each claim's (measured, predicted) texts."""
    rows = [claim_row(r, m, p) for r, (m, p) in zip(records, cells, strict=True)]
    return markdown_table(rows, HEADER, css_class=css_class) + "\n\n" + why_markdown(records)
