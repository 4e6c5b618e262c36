"""The command line: exit statuses 0/1/2/3, messages, and that reruns never write into book/."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from toy_chapter import TOY

from theorylib import cli
from theorylib.core.chapters import BOOK_DIR, REPO_ROOT, all_chapters


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
    claims = json.loads(capsys.readouterr().out)
    assert claims == [
        {"name": "C1 count", "measured": 4, "predicted": 4, "tolerance": 0.0, "tolerance_text": "exact equality",
         "rule": "exact", "alpha": None, "passed": True}
    ]
    assert out.exists()


def test_failed_claim_exits_1_and_shows_the_table(toy, tmp_path, capsys):
    assert cli.main(["run", toy.slug, "-p", "mode", "'fail'", "-o", str(tmp_path / "f.ipynb"), "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert "C1 count" in captured.out and "FAIL" in captured.out
    assert "1 of 1 claims failed" in captured.err


def test_crash_exits_3_naming_the_cell(toy, tmp_path, capsys):
    assert cli.main(["run", toy.slug, "-p", "mode", "crash", "-o", str(tmp_path / "c.ipynb"), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "execution failed in cell" in err and "RuntimeError: the experiment crashed" in err


def test_new_creates_a_pair_and_a_declaration_from_the_template(monkeypatch, tmp_path, capsys):
    (tmp_path / "theorylib" / "chapters").mkdir(parents=True)
    monkeypatch.setattr(cli, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(cli, "BOOK_DIR", tmp_path / "book")
    argv = ["new", "demo-chapter", "--title", "Demo", "--paper", "3", "--module", "demo_chapter", "--cite", "key"]
    assert cli.main(argv) == 0
    twin = tmp_path / "book" / "chapters" / "myst" / "demo-chapter.md"
    nb = tmp_path / "book" / "chapters" / "demo-chapter.ipynb"
    decl = tmp_path / "theorylib" / "chapters" / "demo_chapter.py"
    assert twin.exists() and nb.exists() and decl.exists()
    text = twin.read_text()
    assert "(demo-chapter)=" in text and "{cite}`key`" in text and "__" not in text.replace("__name__", "")
    assert "tags: [parameters]" in text and "What is checked, what is only proved" in text
    namespace: dict = {}
    exec(decl.read_text(), namespace)
    assert namespace["CHAPTER"].slug == "demo-chapter" and namespace["CHAPTER"].defaults() == {"seed": 0}
    assert cli.main(argv) == 2 and "exists already" in capsys.readouterr().err


def test_refresh_executes_in_place_and_syncs_the_twin(tmp_path):
    import shutil

    import nbformat

    from theorylib.core.execute import execute_in_place, twin_path

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


def test_bench_times_each_chapter(monkeypatch, capsys):
    monkeypatch.setattr(cli, "get_chapter", lambda slug: TOY)
    assert cli.main(["bench", "toy-chapter"]) == 0
    out = capsys.readouterr().out
    assert "toy-chapter" in out and "total" in out and "ok" in out
