"""The command line: exit statuses 0/1/2/3, messages, and that reruns never write into book/."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from toy_chapter import TOY

from theorylib.runner import cli, scaffold
from theorylib.runner.paths import BOOK_DIR, REPO_ROOT
from theorylib.runner.registry import all_chapters


def book_state() -> dict[Path, float]:
    return {p: p.stat().st_mtime_ns for p in BOOK_DIR.rglob("*") if p.is_file()}


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(cli, "get_chapter", lambda slug: TOY if slug == TOY.slug else pytest.fail(slug))
    return TOY


def test_list_shows_every_chapter_with_ranges(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for c in all_chapters():
        assert c.slug in out
        for p in c.params:
            assert p.allowed() in out
    assert cli.main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [c["slug"] for c in listed] == [c.slug for c in all_chapters()]


def test_bad_parameter_exits_2_naming_it_and_writes_nothing(capsys, tmp_path):
    slug = all_chapters()[0].slug
    before = book_state()
    code = subprocess.run(
        [sys.executable, "-m", "theorylib", "run", slug, "-p", "seed", "-3", "-o", str(tmp_path / "x.ipynb")],
        capture_output=True, text=True, cwd=REPO_ROOT,
    )
    assert code.returncode == 2
    assert "parameter 'seed' = -3" in code.stderr and "allowed: an integer >= 0" in code.stderr
    assert not (tmp_path / "x.ipynb").exists()
    assert book_state() == before


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["run", "no-such-chapter"], "unknown chapter 'no-such-chapter'"),
        (["run", "toy-chapter", "-p", "nope", "1"], "unknown parameter 'nope'"),
        (["run", "toy-chapter", "-p", "size", "11"], "parameter 'size' = 11"),
        (["run", "toy-chapter", "-p", "mode", "maybe"], "one of 'pass', 'fail', 'crash'"),
        (["run", "toy-chapter", "-o", "book/chapters/x.ipynb"], "never writes into book/"),
        (["run", "toy-chapter", "-o", "out.txt"], "must be an .ipynb"),
    ],
)
def test_usage_errors_exit_2(argv, fragment, capsys, monkeypatch):
    real = cli.get_chapter
    monkeypatch.setattr(cli, "get_chapter", lambda slug: TOY if slug == TOY.slug else real(slug))
    assert cli.main(argv) == 2
    assert fragment in capsys.readouterr().err


def test_run_passes_with_exit_0_and_json(toy, tmp_path, capsys):
    out = tmp_path / "ok.ipynb"
    assert cli.main(["run", toy.slug, "-p", "seed", "3", "-o", str(out), "--json", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "without encryption" not in captured.err  # kernels talk over IPC, not unencrypted TCP
    claims = json.loads(captured.out)
    assert claims == [
        {"name": "C1 count", "measured": 4, "predicted": 4, "tolerance": 0.0, "tolerance_text": "exact equality",
         "rule": "exact", "alpha": None, "passed": True}
    ]
    assert out.exists()
    assert f"1/1 claims hold; notebook at {out};" in captured.err and captured.err.rstrip().endswith(" s")


def test_list_is_aligned_and_shows_rules_and_the_last_runtime(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for c in all_chapters():
        block = out[out.index(c.slug + "  ("):].split("\n\n")[0]
        lines = [x for x in block.splitlines() if "allowed:" in x]
        assert len({x.index(" = ") for x in lines}) == 1 and len({x.index("allowed:") for x in lines}) == 1
        assert "last run" in block.splitlines()[0]
        for rel in c.relations:
            assert f"rule: {rel.rule}" in block
    assert cli.main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert all(isinstance(c["last_run_s"], float) and c["last_run_s"] > 0 for c in listed)
    assert {c["slug"]: c["relations"] for c in listed}["attention-query-learning"] == ["s_amp < s_amp2", "2 r <= d_lr"]


def test_failed_claim_exits_1_and_shows_the_table(toy, tmp_path, capsys):
    assert cli.main(["run", toy.slug, "-p", "mode", "'fail'", "-o", str(tmp_path / "f.ipynb"), "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert "C1 count" in captured.out and "FAIL" in captured.out
    assert "1 of 1 claims failed" in captured.err and "0/1 claims hold; notebook at" in captured.err


def test_crash_exits_3_naming_the_cell(toy, tmp_path, capsys):
    assert cli.main(["run", toy.slug, "-p", "mode", "crash", "-o", str(tmp_path / "c.ipynb"), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "execution failed in cell" in err and "RuntimeError: the experiment crashed" in err
    assert "IPKernelApp" not in err and "KeyboardInterrupt" not in err  # the chapter's message, no kernel noise


def test_run_writes_the_executed_notebook_as_html(toy, tmp_path, capsys):
    out = tmp_path / "ok.ipynb"
    assert cli.main(["run", toy.slug, "-o", str(out), "--html", "--no-progress"]) == 0
    html = out.with_suffix(".html")
    assert f"html: {html}" in capsys.readouterr().err
    text = html.read_text()
    assert text.lstrip().lower().startswith("<!doctype html") and "C1 count" in text


def test_new_writes_every_file_of_a_chapter_from_the_template(tmp_path, capsys):
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nparts:\n"
                                       "  - caption: Back matter\n    chapters:\n      - file: book/references\n")
    written = scaffold.new_chapter("demo-chapter", title="Demo", paper=3, part="Learning theory", cite="key",
                                   root=tmp_path)
    expected = {"book/chapters/myst/demo-chapter.md", "book/chapters/demo-chapter.ipynb",
                "theorylib/chapters/demo_chapter/__init__.py", "theorylib/chapters/demo_chapter/theory.py",
                "theorylib/chapters/demo_chapter/model.py", "theorylib/chapters/demo_chapter/claims.py",
                "tests/chapters/test_demo_chapter.py", "_toc.yml"}
    assert set(written) == expected and all((tmp_path / p).exists() for p in expected)
    for path in expected:
        text = (tmp_path / path).read_text()
        assert "__SLUG__" not in text and "__PACKAGE__" not in text and "__TITLE__" not in text, path
    twin = (tmp_path / "book/chapters/myst/demo-chapter.md").read_text()
    assert "(demo-chapter)=" in twin and "{cite}`key`" in twin
    assert "tags: [parameters]" in twin and "What is checked, what is only proved" in twin
    toc = yaml.safe_load((tmp_path / "_toc.yml").read_text())
    assert [p["caption"] for p in toc["parts"]] == ["Learning theory", "Back matter"]
    assert toc["parts"][0]["chapters"] == [{"file": "book/chapters/demo-chapter"}]
    with pytest.raises(scaffold.ScaffoldError, match="exists already"):
        scaffold.new_chapter("demo-chapter", title="Demo", paper=3, part="Learning theory", root=tmp_path)
    assert cli.main(["new", "Bad_Slug", "--title", "T", "--paper", "3"]) == 2
    assert "lower-case words" in capsys.readouterr().err


def test_the_template_chapter_runs_and_its_claim_rejects_its_wrong_theory(tmp_path):
    """The scaffolded package and notebook work as written: the declaration, the claim contract, the cells."""
    import jupytext

    import theorylib.chapters as chapters_pkg

    scaffold.new_chapter("demo-chapter", title="Demo", paper=3, part="Learning theory", root=tmp_path)
    pkg_dir = tmp_path / "theorylib" / "chapters"
    chapters_pkg.__path__.append(str(pkg_dir))
    try:
        from theorylib.chapters.demo_chapter import CHAPTER  # type: ignore[import-not-found]

        assert CHAPTER.slug == "demo-chapter" and CHAPTER.package == "theorylib.chapters.demo_chapter"
        tests = {}
        exec(compile((tmp_path / "tests/chapters/test_demo_chapter.py").read_text(), "template-test", "exec"), tests)
        for name, fn in tests.items():
            if name.startswith("test_"):
                fn()
        nb = jupytext.read(tmp_path / "book/chapters/myst/demo-chapter.md")
        namespace: dict = {}
        for cell in nb.cells:
            if cell.cell_type == "code" and "plt" not in cell.source:
                exec(cell.source, namespace)
        assert [c.passed for c in namespace["claims"].claims] == [True]
    finally:
        chapters_pkg.__path__.remove(str(pkg_dir))
        for mod in [m for m in sys.modules if m.startswith("theorylib.chapters.demo_chapter")]:
            del sys.modules[mod]


def test_refresh_executes_in_place_and_syncs_the_twin(tmp_path):
    import shutil

    import nbformat

    from theorylib.runner.execute import METADATA_KEY, execute_in_place
    from theorylib.runner.registry import twin_path

    src = Path(TOY.notebook_path)
    nb_path = tmp_path / src.name
    shutil.copy(src, nb_path)
    shutil.copy(src.parent / "toy_chapter.py", tmp_path / "toy_chapter.py")
    (tmp_path / "myst").mkdir()
    shutil.copy(twin_path(src), twin_path(nb_path))
    seconds = execute_in_place(nb_path)
    nb = nbformat.read(str(nb_path), as_version=4)
    assert seconds > 0 and all(c.execution_count for c in nb.cells if c.cell_type == "code")
    assert "C1 count" in str(nb.cells[-1].outputs)
    assert twin_path(nb_path).read_text().count("```{code-cell}") == 2
    made_on = nb.metadata[METADATA_KEY]["made_on"]
    assert made_on["packages"]["numpy"] and made_on["cpu"] and made_on["blas"]


def test_bench_times_each_chapter(monkeypatch, capsys):
    monkeypatch.setattr(cli, "get_chapter", lambda slug: TOY)
    assert cli.main(["bench", "toy-chapter"]) == 0
    out = capsys.readouterr().out
    assert "toy-chapter" in out and "total" in out and "ok" in out
