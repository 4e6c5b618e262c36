"""Sphinx extension: a chapter's number is its paper's place in the list of ICML 2026 papers the book follows.

Sphinx numbers the chapters of the numbered parts of ``_toc.yml`` in reading order (1, 2, 3, ...), and so
would renumber every chapter after the place where a new one is added. This book's chapters keep one
number for good, the paper's (``CHAPTER.paper`` of the declaration: chapter 19 is paper 19), in the
sidebar, the headings, the blocks and figures ("Theorem 19.2", "Fig. 19.1"), the cross-references and the
PDF; the numbers not yet used are the chapters still to be written.

After Sphinx has numbered the table of contents (``env-get-updated``, once every page is read), the
leading number of each chapter's section and figure numbers is replaced by its paper's. The PDF gets the
same numbers from a ``\\setcounter{chapter}`` put before each chapter.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes


def chapter_numbers() -> dict[str, int]:
    """docname -> the chapter's number (its paper's), for every declared chapter."""
    from pathlib import Path

    from theorylib.runner.registry import all_chapters

    return {str(Path(c.notebook).with_suffix("")): c.paper for c in all_chapters()}


def _lead(number: Any, chapter: int) -> Any:
    if not number:
        return number
    return type(number)([chapter, *list(number)[1:]])


def renumber(app: Any, env: Any) -> list[str]:
    """Give each chapter its paper's number; returns the pages to rewrite (numbers shown on them moved)."""
    changed = []
    for doc, chapter in chapter_numbers().items():
        secnums = env.toc_secnumbers.get(doc)
        if not secnums or not secnums.get(""):
            continue  # not in a numbered part: left unnumbered, as Sphinx leaves it
        env.toc_secnumbers[doc] = {anchor: _lead(num, chapter) for anchor, num in secnums.items()}
        for ref in env.tocs[doc].findall(nodes.reference):
            if ref.get("secnumber"):
                ref["secnumber"] = _lead(ref["secnumber"], chapter)
        title = env.titles.get(doc)
        if title is not None and title.get("secnumber"):
            title["secnumber"] = _lead(title["secnumber"], chapter)
        for ids in env.toc_fignumbers.get(doc, {}).values():
            for key, num in ids.items():
                ids[key] = _lead(num, chapter)
        changed.append(doc)
    # every page that shows a chapter's number (the sidebar, cross-references) is rewritten
    return list(env.all_docs) if changed else []


BACK_MATTER = "Back matter"


def first_back_matter_page(srcdir: Any) -> str | None:
    """The first page of the part captioned :data:`BACK_MATTER` in ``_toc.yml``."""
    from pathlib import Path

    import yaml

    toc = yaml.safe_load((Path(srcdir) / "_toc.yml").read_text())
    for part in toc.get("parts", []):
        if part.get("caption") == BACK_MATTER and part.get("chapters"):
            return str(Path(part["chapters"][0]["file"]).with_suffix(""))
    return None


def latex_chapter_counter(app: Any, doctree: nodes.document) -> None:
    """In the PDF: before a chapter's heading, set LaTeX's chapter counter to the number before its own;
    before the back matter, start the appendices (lettered A, B, ..., so that they take no chapter's number)."""
    docname = app.env.docname
    chapter = chapter_numbers().get(docname)
    if chapter is not None:
        doctree.insert(0, nodes.raw("", f"\\setcounter{{chapter}}{{{chapter - 1}}}\n", format="latex"))
    elif docname == first_back_matter_page(app.srcdir):
        doctree.insert(0, nodes.raw("", "\\appendix\n", format="latex"))


def setup(app: Any) -> dict[str, Any]:
    app.connect("env-get-updated", renumber, priority=900)  # after Sphinx's own numbering (priority 500)
    app.connect("doctree-read", latex_chapter_counter)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
