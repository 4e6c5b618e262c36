"""The rendered book: built once per module with warnings as errors, then checked as a reader sees it."""

import subprocess
import sys
from pathlib import Path

import pytest

from theorylib.core.chapters import REPO_ROOT, all_chapters

CHAPTERS = all_chapters()


@pytest.fixture(scope="module")
def built_html(tmp_path_factory) -> Path:
    """Build the book into a fresh folder with -W -n; the path of its html/."""
    out = tmp_path_factory.mktemp("book")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(REPO_ROOT), "--path-output", str(out),
         "-W", "-n", "--keep-going"],
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, "the book build failed or warned:\n" + done.stdout[-5000:] + done.stderr[-3000:]
    return out / "_build" / "html"


@pytest.mark.slow
def test_book_builds_without_warnings(built_html):
    verification = (built_html / "book" / "verification.html").read_text()
    for c in CHAPTERS:
        assert (built_html / Path(c.notebook).with_suffix(".html")).exists(), c.slug
        assert c.slug in verification
