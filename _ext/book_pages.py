"""Sphinx extension: the book's page furniture made at build time from the chapters' declarations.

* ``{chapter-table}``: a directive for the landing page, one row per chapter (its number in the book, as
  the sidebar and its headings show it, title with a link,
  what it proves, what its numbers check, claims holding), from ``theorylib.runner.book_pages``.
* ``{pdf-download}``: the landing page's link to the whole book as a PDF, when ``make pdf`` has made it.
* A box "Reproduce this page" under the title of every chapter page (folded; a click opens it): the
  command that reruns it, its default parameters and seed, the runtime and the environment its stored
  outputs were made in.

Neither is stored in a notebook's outputs, so neither can drift from the declarations or the metadata.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

CHAPTER_PREFIX = "book/chapters/"
TABLE_HEADER = ("No.", "Chapter", "What it proves", "What its numbers check", "Claims holding")


def _doc_link(docname: str, text: str) -> addnodes.pending_xref:
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + docname, refexplicit=True,
                                refwarn=True)
    ref += nodes.inline("", text)
    return ref


def _row(cells: list[nodes.Node | str]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        para = nodes.paragraph()
        para += nodes.Text(cell) if isinstance(cell, str) else cell
        entry += para
        row += entry
    return row


def _chapter_number(docname: str) -> nodes.inline:
    """A placeholder for the chapter's number, filled in by :func:`fill_chapter_numbers` once Sphinx has
    numbered the table of contents (after every page is read), so the table shows the sidebar's number."""
    node = nodes.inline("", "", classes=["chapter-number"])
    node["chapter_doc"] = docname
    return node


def fill_chapter_numbers(app: Any, doctree: nodes.document, docname: str) -> None:
    for node in list(doctree.findall(nodes.inline)):
        if "chapter_doc" in node.attributes:
            number = app.env.toc_secnumbers.get(node["chapter_doc"], {}).get("", ())
            node += nodes.Text(".".join(map(str, number)) or "–")


class ChapterTable(SphinxDirective):
    """The table of chapters."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from theorylib.runner.book_pages import chapter_rows

        rows = chapter_rows()
        table = nodes.table(classes=["chapter-table"])
        group = nodes.tgroup(cols=len(TABLE_HEADER))
        for width in (4, 22, 34, 30, 10):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        head += _row(list(TABLE_HEADER))
        body = nodes.tbody()
        for r in rows:
            self.env.note_dependency(str(self.env.relfn2path("/" + r.docname + ".ipynb")[1]))
            body += _row([_chapter_number(r.docname), _doc_link(r.docname, r.title), r.proves, r.checks,
                          f"{r.claims_holding} of {r.claims}"])
        group += head
        group += body
        table += group
        return [table]


PDF_NAME = "book.pdf"


def _pdf_path(app: Any) -> Any:
    """Where ``make pdf`` leaves the PDF: beside the HTML output, under ``latex/``."""
    from pathlib import Path

    return Path(app.outdir).parent / "latex" / PDF_NAME


class PdfDownload(SphinxDirective):
    """A line offering the whole book as a PDF, when ``make pdf`` has made it (the HTML build copies it)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        pdf = _pdf_path(self.env.app)
        self.env.note_dependency(str(pdf))  # a missing dependency keeps the page outdated until it exists
        para = nodes.paragraph()
        if pdf.exists():
            depth = self.env.docname.count("/")
            para += nodes.reference("", "Download the whole book as a PDF", refuri="../" * depth + PDF_NAME,
                                    classes=["pdf-download"])
            para += nodes.Text(" (theorems, proofs, figures and claims tables, as on these pages).")
        else:
            para += nodes.Text("A PDF of the whole book is made by ")
            para += nodes.literal("", "make pdf")
            para += nodes.Text("; this build has none.")
        return [para]


def copy_pdf(app: Any, exception: Exception | None) -> None:
    """Put the PDF at the root of the HTML output, where the landing page links it."""
    import shutil

    pdf = _pdf_path(app)
    if exception is None and app.builder.format == "html" and pdf.exists():
        shutil.copy2(pdf, app.outdir / PDF_NAME)


def _reproduce_box(docname: str) -> nodes.Node | None:
    from theorylib.runner.book_pages import reproduce_info
    from theorylib.runner.registry import all_chapters

    slug = docname.removeprefix(CHAPTER_PREFIX)
    chapter = next((c for c in all_chapters() if c.slug == slug), None) if docname.startswith(CHAPTER_PREFIX) else None
    if chapter is None:
        return None
    info = reproduce_info(chapter)
    box = nodes.admonition(classes=["reproduce", "tip", "dropdown"])
    box += nodes.title("", "Reproduce this page")
    intro = nodes.paragraph()
    intro += nodes.Text("From a checkout of the book's repository, after ")
    intro += nodes.literal("", "make test")
    intro += nodes.Text(" or ")
    intro += nodes.literal("", "make book")
    intro += nodes.Text(" has made the environment, rerun this chapter at its defaults (add ")
    intro += nodes.literal("", "-p NAME VALUE")
    intro += nodes.Text(" to change a parameter):")
    box += intro
    box += nodes.literal_block("", ".venv/bin/" + info.command, language="bash")
    fields = nodes.bullet_list()
    for label, value in (("Parameters", info.parameters), ("Seed", str(info.seed)), ("Runtime", info.runtime),
                         ("Stored outputs made with", info.environment)):
        item = nodes.list_item()
        para = nodes.paragraph()
        para += nodes.strong("", label + ": ")
        para += nodes.Text(value)
        item += para
        fields += item
    box += fields
    return box


def add_reproduce_box(app: Any, doctree: nodes.document) -> None:
    """Put the box right under the first title of a chapter page."""
    box = _reproduce_box(app.env.docname)
    if box is None:
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        doctree.insert(0, box)
        return
    title = next(iter(section.findall(nodes.title)), None)
    section.insert(section.index(title) + 1 if title is not None else 0, box)


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("chapter-table", ChapterTable)
    app.add_directive("pdf-download", PdfDownload)
    app.connect("build-finished", copy_pdf)
    app.connect("doctree-read", add_reproduce_box)
    app.connect("doctree-resolved", fill_chapter_numbers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
