"""One chapter, one name: the layout every chapter shares, and the core's independence from the runner."""

import ast
import subprocess
import sys

import nbformat
import pytest

from theorylib.core.chapter import package_name
from theorylib.runner import registry
from theorylib.runner.paths import PACKAGES_DIR, REPO_ROOT

CHAPTERS = registry.all_chapters()


def imports_of(path):
    """Every module name a Python file imports (absolute, or relative as '.name')."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names.add(base)
            names.update(f"{base}.{a.name}" if node.module else f"{base}{a.name}" for a in node.names)
    return names


def test_every_file_belongs_to_a_chapter():
    assert registry.orphans() == [], "files that follow no chapter's name (slug a-b-c -> package a_b_c)"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.slug)
def test_a_chapter_has_one_name(chapter):
    name = package_name(chapter.slug)
    assert chapter.notebook_path == REPO_ROOT / "book" / "chapters" / f"{chapter.slug}.ipynb"
    assert chapter.twin_path.exists(), f"no text twin {chapter.twin_path.relative_to(REPO_ROOT)}"
    assert (PACKAGES_DIR / name / "__init__.py").exists()
    assert any(p.exists() for p in registry.tests_home(chapter.slug)), f"no tests/chapters/test_{name}.py"
    nb = nbformat.read(str(chapter.notebook_path), as_version=4)
    headings = [line[2:].strip() for c in nb.cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("# ")]
    assert headings and headings[0] == chapter.title, "the declared title must be the notebook's heading"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.slug)
def test_a_chapter_package_has_its_roles_and_the_model_never_sees_the_theory(chapter):
    pkg = PACKAGES_DIR / package_name(chapter.slug)
    assert (pkg / "theory.py").exists() and (pkg / "claims.py").exists(), "theory.py and claims.py"
    models = sorted(pkg.glob("model*.py"))
    assert models, "the measured side lives in model.py (or model_*.py)"
    forbidden = (".theory", ".claims", f"theorylib.chapters.{pkg.name}.theory", f"theorylib.chapters.{pkg.name}.claims")
    for model in models:
        bad = {n for n in imports_of(model) if any(n == f or n.startswith(f + ".") for f in forbidden)}
        assert not bad, f"{model.relative_to(REPO_ROOT)} imports {sorted(bad)}: theory mutants reach measurements"
    runner = {n for p in pkg.rglob("*.py") for n in imports_of(p) if n.startswith("theorylib.runner")}
    assert not runner, f"a chapter never imports the runner: {sorted(runner)}"


def test_the_core_imports_neither_the_chapters_nor_the_runner():
    for path in (REPO_ROOT / "theorylib" / "core").glob("*.py"):
        bad = {n for n in imports_of(path) if n.startswith(("theorylib.chapters", "theorylib.runner", "..runner",
                                                             "..chapters"))}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_listing_the_chapters_imports_no_heavy_library():
    code = ("import sys; from theorylib.runner.registry import all_chapters; all_chapters(); "
            "print(sorted(m for m in ('torch', 'scipy', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    assert done.stdout.strip() == "[]", done.stdout
