"""The page furniture made at build time: the table of chapters and the box 'Reproduce this page'."""

from __future__ import annotations

import nbformat
import pytest

from theorylib.runner import book_pages
from theorylib.runner.records import claims_record
from theorylib.runner.registry import all_chapters

CHAPTERS = all_chapters()


def test_chapter_rows_follow_the_book_and_count_the_stored_claims():
    rows = book_pages.chapter_rows()
    assert [r.slug for r in rows] == [c.slug for c in CHAPTERS]
    for r, c in zip(rows, CHAPTERS, strict=True):
        assert r.paper == c.paper and r.docname == f"book/chapters/{c.slug}" and r.title == c.title
        claims = claims_record(c.notebook_path)["claims"]
        assert (r.claims_holding, r.claims) == (sum(k["passed"] for k in claims), len(claims))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.slug)
def test_every_chapter_says_what_it_proves_and_checks(chapter):
    for field in ("proves", "checks"):
        text = getattr(chapter, field)
        assert len(text) >= 40, f"{chapter.slug}: declare {field}= in one line (the table of chapters shows it)"
        assert "in one line" not in text, f"{chapter.slug}: {field} still holds the template's placeholder"
        assert "$" not in text, f"{chapter.slug}: {field} is plain text (the table shows it as is), no TeX"


def test_reproduce_info_reads_the_declaration_and_the_metadata():
    c = CHAPTERS[0]
    info = book_pages.reproduce_info(c)
    assert info.command == f"python -m theorylib run {c.slug}"
    assert info.seed == c.defaults()["seed"]
    for name, value in c.defaults().items():
        assert f"{name} = {value}" in info.parameters
    wall = nbformat.read(str(c.notebook_path), as_version=4).metadata["theorylib"]["made_on"]["wall_s"]
    assert info.runtime == f"{float(wall):.0f} s on one core"
    assert "numpy" in info.environment and "Python" in info.environment


def test_reproduce_info_without_a_record_says_so(tmp_path):
    c = CHAPTERS[0]
    nb = nbformat.read(str(c.notebook_path), as_version=4)
    nb.metadata.pop("theorylib", None)
    path = tmp_path / "bare.ipynb"
    nbformat.write(nb, str(path))
    bare = type(c)(c.chapter, path, c.part)
    info = book_pages.reproduce_info(bare)
    assert info.runtime == "not recorded" and info.environment.startswith("not recorded")


def test_every_part_with_chapters_is_numbered_and_the_back_matter_is_not():
    """One numbering: Sphinx numbers the chapters (sidebar, headings, "Theorem 2.1", "Fig. 2.1"); a part left
    unnumbered would restart or drop the numbers, and a numbered back matter would shift the PDF's."""
    import yaml

    from theorylib.runner.paths import REPO_ROOT
    from theorylib.runner.registry import all_chapters

    parts = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text())["parts"]
    chapter_files = {f"book/chapters/{c.slug}" for c in all_chapters()}
    for part in parts:
        files = {entry["file"] for entry in part.get("chapters", [])}
        if files & chapter_files:
            assert part.get("numbered") and files <= chapter_files, part["caption"]
        else:
            assert not part.get("numbered"), part["caption"]
    assert parts[-1]["caption"] == "Back matter"


def test_the_verification_page_lists_blas_libraries_in_a_fixed_order():
    # threadpoolctl reports numpy's and scipy's OpenBLAS in the order they were loaded
    from theorylib.runner.verification import blas_text

    a = {"internal_api": "openblas", "version": "0.3.31", "architecture": "SkylakeX"}
    b = {"internal_api": "openblas", "version": "0.3.30", "architecture": "SkylakeX"}
    omp = {"internal_api": "openmp", "version": None}
    assert blas_text({"blas": [a, omp, b]}) == blas_text({"blas": [b, a]})
    assert blas_text({"blas": [a, b]}) == "openblas 0.3.30 (SkylakeX); openblas 0.3.31 (SkylakeX)"
