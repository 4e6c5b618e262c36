"""The book as a whole: stored outputs, text twins, parameters cells, alternative settings, the build.

nbval (run by the same test command on every notebook under book/) re-executes the stored notebooks and
compares their outputs; these tests check what nbval does not.
"""

import ast
import json
import subprocess
import sys

import jupytext
import nbformat
import pytest

from theorylib.runner.paths import BOOK_DIR, REPO_ROOT
from theorylib.runner.records import claims_record
from theorylib.runner.registry import all_chapters, twin_path

CHAPTERS = all_chapters()
NOTEBOOKS = sorted(p for p in BOOK_DIR.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
ALTERNATIVES = [(c, name) for c in CHAPTERS for name in c.alternatives]


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_text_twin_agrees_with_notebook(nb_path):
    twin = twin_path(nb_path)
    assert twin.exists(), f"{nb_path.name} has no MyST twin at {twin.relative_to(REPO_ROOT)}"
    from_nb = nbformat.read(str(nb_path), as_version=4)
    from_twin = jupytext.read(twin)
    a = [(c.cell_type, c.source.strip(), c.metadata.get("tags", [])) for c in from_nb.cells]
    b = [(c.cell_type, c.source.strip(), c.metadata.get("tags", [])) for c in from_twin.cells]
    assert a == b, f"{nb_path.name} and its twin disagree: run `jupytext --sync {nb_path.relative_to(REPO_ROOT)}`"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_are_a_clean_full_run(nb_path):
    nb = nbformat.read(str(nb_path), as_version=4)
    cells = code_cells(nb)
    counts = [c.execution_count for c in cells]
    assert None not in counts and counts == list(range(1, len(cells) + 1)), "stored outputs must be one full run"
    for c in cells:
        for out in c.outputs:
            assert out.output_type != "error", f"stored error: {out.get('ename')}"
            assert not (out.output_type == "stream" and out.name == "stderr"), f"stored stderr: {out.text[:200]}"
            text = out.get("text", "") + out.get("data", {}).get("text/plain", "")
            assert " at 0x" not in text, f"a memory address in a stored output: {text[:200]}"
            assert "Claim(name=" not in text, "a Claim repr in a stored output: end the line with ';'"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.slug)
def test_chapter_notebook_anatomy(chapter):
    nb = nbformat.read(str(chapter.notebook_path), as_version=4)
    first = code_cells(nb)[0]
    assert "parameters" in first.metadata.get("tags", []), "the first code cell must be tagged 'parameters'"
    stored = {}
    for node in ast.parse(first.source).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, "parameters cell: literal assignments only"
        stored[node.targets[0].id] = ast.literal_eval(node.value)
    assert stored == chapter.defaults(), "the parameters cell must hold exactly the declared defaults"
    assert "CHAPTER.validate(globals())" in code_cells(nb)[1].source, "the second cell validates the parameters"
    figures = [o for c in code_cells(nb) for o in c.outputs if "image/png" in o.get("data", {})]
    assert figures, "a chapter shows at least one figure"
    record = claims_record(nb)
    assert record and record["chapter"] == chapter.slug and record["claims"], "no claims record"
    assert all(c["passed"] for c in record["claims"]), "a stored claim fails"
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "What is checked, what is only proved" in text
    assert "{prf:theorem}" in text and "{prf:proof}" in text and "{cite" in text


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.slug)
def test_markdown_avoids_known_rendering_traps(chapter):
    """Two traps the builds found: in a heading, \\varepsilon stops the PDF (hyperref's bookmark strings
    under unicode-math have no mapping for it: "Improper alphabetic constant"); an indented $$ block inside
    a list item renders as raw dollars in the HTML."""
    lines = twin_path(chapter.notebook_path).read_text(encoding="utf-8").splitlines()
    headings = [ln for ln in lines if ln.startswith("#") and "\\varepsilon" in ln]
    assert not headings, f"\\varepsilon in a heading breaks the PDF bookmarks: {headings}"
    indented = [i + 1 for i, ln in enumerate(lines) if ln.startswith((" ", "\t")) and ln.strip() == "$$"]
    assert not indented, f"indented $$ display block(s) at line(s) {indented}: write them inline"


@pytest.mark.slow
@pytest.mark.parametrize(("chapter", "alt"), ALTERNATIVES, ids=lambda v: getattr(v, "slug", v))
def test_claims_hold_at_alternative_setting(chapter, alt, tmp_path):
    """Rerun the chapter with papermill through the command line at a declared alternative setting."""
    argv = [sys.executable, "-m", "theorylib", "run", chapter.slug, "-o", str(tmp_path / "alt.ipynb"), "--json",
            "--no-progress"]
    for name, value in chapter.alternatives[alt].items():
        argv += ["-p", name, repr(value)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO_ROOT, timeout=900)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    claims = json.loads(done.stdout)
    assert claims and all(c["passed"] for c in claims)
