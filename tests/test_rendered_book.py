"""The rendered book: built once per module with warnings as errors, then checked as a reader sees it."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import browser_checks as bc
import pytest
import yaml

from theorylib.runner.paths import REPO_ROOT
from theorylib.runner.registry import all_chapters

CHAPTERS = all_chapters()
SCREENSHOTS = REPO_ROOT / "_build" / "screenshots"


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


def _jupyter_book_build(source: Path, out: Path, *strict: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(source), "--path-output", str(out),
         *strict], capture_output=True, text=True, timeout=900,
    )


def _need_browser() -> None:
    """Skip without Chromium and chromedriver, except under CI (CI=true), where that is a failure."""
    reason = bc.missing_browser()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so the browser checks must run (.ci/run installs both)")
    pytest.skip(reason)


def _report(problems: list[bc.Problem]) -> str:
    return f"{len(problems)} problem(s) in the rendered book:\n" + "\n".join(f"  {p}" for p in problems)


@pytest.mark.slow
def test_book_in_browser(built_html):
    """Every page of the table of contents, as headless Chromium shows it (tests/browser_checks.py)."""
    _need_browser()
    pages = bc.toc_pages(REPO_ROOT / "_toc.yml")
    chapter_pages = [str(Path(c.notebook).with_suffix("")) for c in CHAPTERS]
    missing = [p for p in chapter_pages if p not in pages]
    assert not missing, f"declared chapters missing from _toc.yml: {missing}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("*.png"):
        old.unlink()
    spec = bc.BookSpec(built_html, pages, chapter_pages, "book/verification", [c.slug for c in CHAPTERS],
                       screenshot_dir=SCREENSHOTS, landing_page=pages[0],
                       search_terms=["renormalized", "Hellinger", "queries"],
                       chapter_numbers={str(Path(c.notebook).with_suffix("")): c.paper for c in CHAPTERS})
    with bc.chromium() as driver:
        problems = bc.check_book(spec, driver)
    assert not problems, _report(problems)
    for doc in chapter_pages:
        assert (SCREENSHOTS / f"{Path(doc).name}.png").stat().st_size > 0, doc


# --------------------------------------------------------------------------------------------------
# The test of the test: a tiny book with one deliberate fault per page, rendered with the book's own
# configuration (MathJax offline, sphinx-proof, the inline-script fix), must be reported item by item.

_BROKEN_PAGES = {
    "landing": """
        # A landing page

        <table class="chapter-table"><tbody><tr><td><a href="good.html">A good chapter</a></td></tr></tbody></table>
        """,
    "good": r"""
        # A good chapter

        Pythagoras: $a^2 + b^2 = c^2$, and {prf:ref}`thm-good` below.

        ```{prf:theorem} Good
        :label: thm-good

        $\E[X] = 0$ for a centred $X$.
        ```

        ```{prf:proof}
        By definition.
        ```

        ````{container} cell_output
        ```{figure} figure.png
        :name: fig-good

        A good figure, numbered and captioned.
        ```
        ````

        <details class="hide above-input"><summary>Show code cell source</summary><pre>plot()</pre></details>

        <table class="claims-table"><tbody><tr><td><a href="#thm-good">C1</a> count</td>
        <td><a href="#thm-good">Theorem 1.1</a></td><td>1</td><td>✓</td></tr></tbody></table>

        <div class="reproduce"><p>Reproduce this page:</p><pre>python -m theorylib run good</pre></div>
        """,
    "formula": r"""
        # A broken formula

        A formula with an unknown macro: $\undefinedmacro{x} + 1$, one that does not parse: $\frac{1}$,
        and one whose braces do not balance, which MathJax leaves as raw text: $x^{2$.

        <p>Math that nothing typesets: \(x + y\) and $a+b$.</p>
        """,
    "image": """
        # A missing image

        (The figures below sit in a 'cell_output' box, as a notebook's do; docutils spells the class
        'cell-output', and the checks know both.)

        <img src="missing-figure.png" alt="the lost figure">

        ```{container} cell_output
        ![a bare figure](figure.png)
        ```

        ```{container} cell_output
        ![a shrunken figure](wide.png)
        ```
        """,
    "layout": r"""
        # Things cut off

        $$
        a_1 + a_2 + a_3 + a_4 + a_5 + a_6 + a_7 + a_8 + a_9 + a_{10} + a_{11} + a_{12} + a_{13} + a_{14} + a_{15}
        + a_{16} + a_{17} + a_{18} + a_{19} + a_{20} + a_{21} + a_{22} + a_{23} + a_{24} + a_{25} + a_{26} = s
        $$

        ```python
        result = a_function_with_a_long_name(first_argument, second_argument, third_argument, fourth_argument, fifth)
        ```

        ## Theorem 3: a heading that numbers its own block

        Text.
        """,
    "links": """
        # Dangling links

        <p><a href="#thm-missing">Theorem 9</a>, <a href="good.html#no-such-id">the good page's lemma</a>,
        <a href="nowhere.html">a page that was never built</a>.</p>

        <script>console.error("deliberate console error");</script>
        <script src="https://cdn.example.com/online-only.js"></script>
        """,
    "verification": """
        # Verification

        <p><a href="good.html">A good chapter</a></p>
        <table class="claims-table"><tbody><tr><td>good</td><td>C1</td></tr></tbody></table>
        """,
}


@pytest.fixture(scope="module")
def broken_book(tmp_path_factory) -> Path:
    """The tiny broken book, built (no -W: the faults are meant to get through); its html/."""
    from PIL import Image

    _need_browser()  # before building: nothing to check it with otherwise

    src = tmp_path_factory.mktemp("broken-book")
    real = yaml.safe_load((REPO_ROOT / "_config.yml").read_text())
    sphinx = real["sphinx"]
    sphinx["local_extensions"] = {k: str(REPO_ROOT / v) for k, v in sphinx.get("local_extensions", {}).items()}
    sphinx["config"] = {k: v for k, v in sphinx["config"].items() if not k.startswith("bibtex")}
    sphinx["config"]["html_static_path"] = [str(REPO_ROOT / p) for p in sphinx["config"].get("html_static_path", [])]
    sphinx["config"].pop("html_js_files", None)  # without the snippet fix, search quotes raw TeX
    config = {"title": "Broken", "execute": {"execute_notebooks": "off"}, "only_build_toc_files": True,
              "parse": real["parse"], "html": real["html"], "sphinx": sphinx}
    (src / "_config.yml").write_text(yaml.safe_dump(config))
    # One numbered part (its chapters' headings carry numbers) and one that is not (the 'image' chapter's not).
    (src / "_toc.yml").write_text(yaml.safe_dump({
        "format": "jb-book", "root": "landing",
        "parts": [{"caption": "Numbered", "numbered": 1, "chapters": [{"file": "good"}, {"file": "layout"}]},
                  {"caption": "Other", "chapters": [{"file": name} for name in _BROKEN_PAGES
                                                    if name not in ("landing", "good", "layout")]}]}))
    for name, text in _BROKEN_PAGES.items():
        (src / f"{name}.md").write_text(textwrap.dedent(text))
    Image.new("RGB", (40, 30), (30, 90, 200)).save(src / "figure.png")
    Image.new("RGB", (3000, 300), (30, 90, 200)).save(src / "wide.png")  # shown at ~25% of its size
    done = _jupyter_book_build(src, src / "out")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return src / "out" / "_build" / "html"


@pytest.mark.slow
def test_browser_checks_report_each_fault(broken_book, tmp_path):
    _need_browser()
    pages = bc.toc_pages(broken_book.parents[2] / "_toc.yml")
    spec = bc.BookSpec(broken_book, pages, chapter_pages=["good", "image", "layout"],
                       verification_page="verification", chapter_slugs=["good", "ghost"], screenshot_dir=tmp_path,
                       landing_page="landing", search_terms=["Pythagoras"],
                       chapter_numbers={"good": 1, "layout": 7})  # 'layout' is the numbered part's second
    with bc.chromium() as driver:
        problems = bc.check_book(spec, driver)
    report = _report(problems)

    def found(page: str, check: str, *words: str) -> bool:
        return any(p.page == page and p.check == check and all(w in p.detail for w in words) for p in problems)

    expected = [
        ("formula.html", "math", "formula", r"\undefinedmacro{x} + 1", r"undefined control sequence \undefinedmacro"),
        ("formula.html", "math", "formula", r"'\frac{1}'", r"Missing argument for \frac"),
        ("formula.html", "math", r"raw \(...\)", r"'\(x^{2\)'"),
        ("formula.html", "math", r"raw \(...\)", r"'\(x + y\)'"),
        ("formula.html", "math", "raw $...$", "'$a+b$'"),
        ("image.html", "image", "missing-figure.png", "the lost figure", "failed to load"),
        ("image.html", "claims", "no claims table"),
        ("image.html", "prf", "theorem"),
        ("image.html", "reproduce", "no box 'Reproduce this page'"),
        ("landing.html", "chapters", "does not link to 'image'"),
        ("image.html", "figure", "no numbered caption"),
        ("image.html", "figure", "labels fall below 9 px"),
        ("image.html", "toggle", "no folded code cell"),
        ("image.html", "numbering", "chapter heading 'A missing image' carries no number"),
        ("layout.html", "overflow", "at 1280 px", "display math", "a1+a2"),
        ("layout.html", "overflow", "at 1920 px", "display math"),
        ("layout.html", "overflow", "at 1280 px", "code", "a_function_with_a_long_name"),
        ("layout.html", "numbering", "'Theorem 3: a heading that numbers its own block'"),
        ("layout.html", "numbering", "numbered 2, not 7"),
        ("verification.html", "claims", "claim 'good' ends with no mark"),
        ("search.html", "search", "'Pythagoras'", "raw TeX"),
        ("links.html", "link", "Theorem 9", "'thm-missing'", "links.html"),
        ("links.html", "link", "no-such-id", "good.html"),
        ("links.html", "link", "nowhere.html does not exist"),
        ("links.html", "console", "deliberate console error"),
        ("links.html", "console", "https://cdn.example.com/online-only.js", "ERR_NAME_NOT_RESOLVED"),
        ("verification.html", "claims", "'ghost'"),
    ]
    for page, check, *words in expected:
        assert found(page, check, *words), f"not reported: {page} [{check}] {words}\n{report}"
    assert not [p for p in problems if p.page in ("good.html", "landing.html") and p.check != "chapters"], report
    assert (tmp_path / "good.png").stat().st_size > 0
