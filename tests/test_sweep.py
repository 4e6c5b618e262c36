"""``python -m theorylib sweep`` / ``sweep-plot``: plan and validation, Dask execution, records, resume, summary, plot.

The sweeps run the toy chapter (tests/fixtures) on LocalClusters of 2 single-threaded workers: one embedded
(``--jobs 2``), one shared by the module and reached with ``--scheduler`` (as an existing cluster would be).
"""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from toy_chapter import TOY

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, ParameterError
from theorylib.runner import cli, sweep
from theorylib.runner.paths import REPO_ROOT
from theorylib.runner.registry import BookChapter

CLAIM = "C1 count"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(cli, "get_chapter", lambda slug: TOY if slug == TOY.slug else pytest.fail(slug))
    return TOY


@pytest.fixture(scope="module")
def scheduler():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def mixed(scheduler, tmp_path_factory):
    """A sweep over pass, fail and crash (seed 0) on the shared cluster: (exit status, stderr, folder)."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("mixed") / "sweep"
    err = io.StringIO()
    real = cli.get_chapter
    cli.get_chapter = lambda slug: TOY
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(["sweep", TOY.slug, "-p", "mode", "pass,fail,crash", "--seeds", "0",
                             "--scheduler", scheduler, "-o", str(out), "--no-progress"])
    finally:
        cli.get_chapter = real
    return code, err.getvalue(), out


# ----------------------------------------------------------------------------------------- pure functions


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("2,4,8", ["2", "4", "8"]),
        ("pass, 'fail'", ["pass", "'fail'"]),
        ("[4,8],[8,16]", ["[4,8]", "[8,16]"]),
        ("[4,8];[8,16,32]", ["[4,8]", "[8,16,32]"]),
        ("'a,b',c", ["'a,b'", "c"]),
        ("a,b;c", ["a,b", "c"]),
        ("7", ["7"]),
    ],
)
def test_split_values(text, values):
    assert sweep.split_values(text) == values


def test_parse_seeds():
    assert sweep.parse_seeds("0..3") == [0, 1, 2, 3]
    assert sweep.parse_seeds("5") == [5]
    assert sweep.parse_seeds("0..1,7") == [0, 1, 7]
    for bad in ("3..1", "a", "0..2,1", ""):
        with pytest.raises(ParameterError):
            sweep.parse_seeds(bad)


def test_plan_is_the_product_in_declaration_order_with_safe_keys():
    plan = sweep.plan_sweep(TOY, {"size": [2, 3], "mode": ["pass", "fail"]}, [0, 1])
    assert len(plan) == 8
    assert plan[0].key == "mode=pass__size=2__seed=0" and plan[0].overrides == {"mode": "pass", "size": 2, "seed": 0}
    assert plan[0].parameters == {"seed": 0, "mode": "pass", "size": 2}
    assert len({r.key for r in plan}) == 8
    assert sweep.value_token([4, 8]) == "[4,8]"
    lists = BookChapter(Chapter("lists", "L", 0, (Param("seed", 0, "int", low=0),
                                                 Param("d", [4], "int_list", low=1, max_len=3))),
                        Path("x.ipynb"), "tests")
    swept = sweep.parse_sweep_params([("d", "[4,8];[8,16, 32]")])
    assert [r.key for r in sweep.plan_sweep(lists, swept, [0])] == ["d=[4,8]__seed=0", "d=[8,16,32]__seed=0"]
    with pytest.raises(ParameterError, match=r"parameter 'd' = \[1, 2, 3, 4\] is not allowed \(length 4\)"):
        sweep.plan_sweep(lists, sweep.parse_sweep_params([("d", "[1],[1,2,3,4]")]), [0])
    odd = sweep.value_token("a/b c")
    assert "/" not in odd and " " not in odd and odd != sweep.value_token("a_b c")


def _record(status, measured=4, predicted=4):
    claims = [] if status == "crashed" else [
        {"name": CLAIM, "measured": measured, "predicted": predicted, "tolerance_text": "exact equality",
         "passed": measured == predicted}]
    error = {"ename": "RuntimeError", "evalue": "boom", "cell": 3} if status == "crashed" else None
    return {"status": status, "claims": claims, "error": error, "seconds": 1.0}


def test_summary_pass_rate_mean_and_spread():
    plan = sweep.plan_sweep(TOY, {"size": [2, 3]}, [0, 1, 2])
    records = {plan[0].key: _record("passed", 4), plan[1].key: _record("failed", 6),
               plan[2].key: _record("passed", 5, 5), plan[3].key: _record("crashed")}
    settings, claims = sweep.summarize(plan, records)
    first = claims[0]
    assert first["setting"] == {"size": 2} and first["seeds"] == 3 and first["passed"] == 2
    assert first["pass_rate"] == pytest.approx(2 / 3) and first["measured_mean"] == pytest.approx(5.0)
    assert first["measured_sd"] == pytest.approx(1.0) and first["failed_seeds"] == [1]
    assert settings[1] == {**settings[1], "crashed": 1, "missing": 2, "crashed_seeds": [0], "missing_seeds": [1, 2]}
    lines = sweep.failures(settings, claims)
    assert any("'C1 count' failed at size=2 for 1 of 3 seeds (seeds 1)" in x for x in lines)
    assert any("1 of 3 reruns crashed at size=3 (seeds 0): RuntimeError: boom (cell 3)" in x for x in lines)
    assert any("2 of 3 reruns missing at size=3" in x for x in lines)
    rows = list(csv.DictReader(sweep.csv_text(plan, records).splitlines()))
    assert len(rows) == 4 and rows[3]["status"] == "crashed" and rows[3]["claim"] == ""


# ----------------------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["-p", "size", "2,11"],
         "parameter 'size' = 11 is not allowed (11 is above 10); allowed: an integer in [1, 10]"),
        (["-p", "mode", "pass,maybe"], "parameter 'mode' = 'maybe' is not allowed; allowed: one of 'pass', 'fail'"),
        (["-p", "nope", "1,2"], "unknown parameter 'nope'"),
        (["-p", "size", "2", "--seeds", "0..-1"], "--seeds 0..-1"),
        (["--seeds=-1..2"], "parameter 'seed' = -1"),
        (["-p", "seed", "1,2"], "sweep the seed with --seeds"),
        (["-p", "size", "2,2"], "a value is given twice"),
        (["-p", "size", "2", "-o", "book/sweep"], "never writes into book/"),
        (["-p", "size", "2", "--jobs", "0"], "--jobs 0"),
        (["--plot", CLAIM], "a plot needs a swept parameter"),
    ],
)
def test_bad_usage_exits_2_before_anything_runs(argv, fragment, toy, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sweep, "start_client", lambda *a: pytest.fail("a cluster was started"))
    out = [] if "-o" in argv else ["-o", str(tmp_path / "sweep")]
    assert cli.main(["sweep", toy.slug, *argv, *out]) == 2
    assert fragment in capsys.readouterr().err
    assert not (tmp_path / "sweep").exists()
    assert not (REPO_ROOT / "book" / "sweep").exists()


# ----------------------------------------------------------------------------------------- sweeps on Dask


def test_small_sweep_on_an_embedded_local_cluster(toy, tmp_path, capsys):
    out = tmp_path / "sweep"
    argv = ["sweep", toy.slug, "-p", "size", "2,3", "--seeds", "0..1", "--jobs", "2", "-o", str(out),
            "--plot", CLAIM, "--no-progress"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert "every claim passed at every setting and seed (4 reruns)" in captured.err
    assert [line.split()[:4] for line in captured.out.splitlines()[2:]] == [["size=2", "C1", "count", "2/2"],
                                                                         ["size=3", "C1", "count", "2/2"]]
    keys = [f"size={s}__seed={k}" for s in (2, 3) for k in (0, 1)]
    for key in keys:
        rec = json.loads((out / "reruns" / f"{key}.json").read_text())
        assert rec["status"] == "passed" and rec["claims"][0]["name"] == CLAIM
        assert (out / rec["notebook"]).exists()
        assert rec["env"] == dict.fromkeys(sweep.THREAD_VARS, "1")  # the kernels ran single-threaded
    assert len({json.loads((out / "reruns" / f"{k}.json").read_text())["worker"] for k in keys}) <= 2
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["complete"] and doc["all_passed"] and doc["swept"] == {"size": [2, 3]} and doc["seeds"] == [0, 1]
    assert [(c["setting"], c["pass_rate"], c["measured_mean"], c["measured_sd"], c["predicted_mean"])
            for c in doc["summary"]] == [({"size": 2}, 1.0, 4.0, 0.0, 4.0), ({"size": 3}, 1.0, 4.0, 0.0, 4.0)]
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    assert [(r["size"], r["seed"], r["status"], r["claim"], r["passed"]) for r in rows] == [
        (s, k, "passed", CLAIM, "True") for s in ("2", "3") for k in ("0", "1")]
    assert (out / "sweep-c1-count-vs-size.png").stat().st_size > 5000


def test_failed_and_crashed_settings_keep_the_others(mixed):
    code, err, out = mixed
    assert code == 1
    assert "claim 'C1 count' failed at mode='fail' for 1 of 1 seeds (seeds 0)" in err
    assert "1 of 1 reruns crashed at mode='crash' (seeds 0): RuntimeError: the experiment crashed" in err
    status = {p.stem: json.loads(p.read_text())["status"] for p in (out / "reruns").glob("*.json")}
    assert status == {"mode=pass__seed=0": "passed", "mode=fail__seed=0": "failed", "mode=crash__seed=0": "crashed"}
    assert len(list((out / "reruns").glob("*.ipynb"))) == 3  # the crashed notebook too, for diagnosis
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["complete"] and not doc["all_passed"]
    assert {c["setting"]["mode"]: c["pass_rate"] for c in doc["summary"]} == {"pass": 1.0, "fail": 0.0}
    assert [s["crashed"] for s in doc["settings"]] == [0, 0, 1]


def test_resume_runs_only_the_missing_reruns(mixed, scheduler, toy, tmp_path, capsys):
    out = tmp_path / "sweep"
    shutil.copytree(mixed[2], out)
    runs = out / "reruns"
    (runs / "mode=pass__seed=0.json").unlink()  # never finished
    (runs / "mode=fail__seed=0.json").write_text('{"chapter": "toy-ch')  # cut short by an interruption
    kept = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.json") if p.name != "mode=fail__seed=0.json"}
    assert list(kept) == ["mode=crash__seed=0.json"]
    argv = ["sweep", toy.slug, "-p", "mode", "pass,fail,crash", "--seeds", "0", "--scheduler", scheduler,
            "-o", str(out), "--no-progress"]
    assert cli.main(argv) == 1
    assert "3 reruns (3 settings x 1 seed)" in (err := capsys.readouterr().err) and "1 done already, 2 to run" in err
    assert {p.name: p.stat().st_mtime_ns for p in runs.glob("*.json") if p.name in kept} == kept
    assert json.loads((runs / "mode=pass__seed=0.json").read_text())["status"] == "passed"
    assert json.loads((runs / "mode=fail__seed=0.json").read_text())["status"] == "failed"
    # everything done: a third run executes nothing (no cluster is even started)
    sweep_start = sweep.start_client
    sweep.start_client = lambda *a: pytest.fail("a cluster was started")
    try:
        assert cli.main(argv) == 1
    finally:
        sweep.start_client = sweep_start
    assert "3 done already, 0 to run" in capsys.readouterr().err


def test_interrupted_sweep_keeps_finished_reruns_and_resumes(toy, scheduler, tmp_path, capsys):
    out = tmp_path / "sweep"
    script = textwrap.dedent(f"""
        import signal
        import sys
        sys.path.insert(0, {str(Path(__file__).parent / "fixtures")!r})
        # Ctrl-C as in a terminal, even when this test runs in the background (where SIGINT is inherited ignored)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if __name__ == "__main__":
            from toy_chapter import TOY
            from theorylib.runner import cli
            cli.get_chapter = lambda slug: TOY
            sys.exit(cli.main(sys.argv[1:]))
    """)
    (tmp_path / "toy_cli.py").write_text(script)
    # six reruns, one at a time: the interrupt lands while most are still to run, even on a loaded machine
    args = ["sweep", toy.slug, "-p", "size", "1,2,3,4,5,6", "--jobs", "1", "-o", str(out), "--no-progress"]
    proc = subprocess.Popen([sys.executable, str(tmp_path / "toy_cli.py"), *args], cwd=REPO_ROOT,
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((out / "reruns").glob("*.json")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole process group, kernels included
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == sweep.EXIT_INTERRUPTED, err
    assert "interrupted" in err and "run the same command again" in err
    done = {p.name for p in (out / "reruns").glob("*.json")
            if json.loads(p.read_text())["status"] == "passed"}
    assert 1 <= len(done) < 6
    assert cli.main(["sweep", toy.slug, "-p", "size", "1,2,3,4,5,6", "--scheduler", scheduler, "-o", str(out),
                     "--no-progress"]) == 0
    assert f"{len(done)} done already, {6 - len(done)} to run" in capsys.readouterr().err


def test_records_carry_the_code_and_the_plan_is_stored(mixed):
    out = mixed[2]
    doc = json.loads((out / "sweep.json").read_text())
    assert [p["key"] for p in doc["plan"]] == ["mode=pass__seed=0", "mode=fail__seed=0", "mode=crash__seed=0"]
    code = sweep.chapter_code(TOY)
    for rec in doc["reruns"]:
        assert rec["code"]["code_hash"] == code["code_hash"] and len(code["code_hash"]) == 64
        assert rec["code"]["commit"] and {"python", "numpy"} <= set(rec["code"]["versions"])


def test_resume_refuses_records_made_by_other_chapter_code(mixed, scheduler, toy, tmp_path, capsys, monkeypatch):
    out = tmp_path / "sweep"
    shutil.copytree(mixed[2], out)
    path = out / "reruns" / "mode=crash__seed=0.json"
    rec = json.loads(path.read_text())
    rec["code"]["code_hash"] = "0" * 64  # as if the chapter had changed since this rerun
    path.write_text(json.dumps(rec))
    argv = ["sweep", toy.slug, "-p", "mode", "pass,fail,crash", "--seeds", "0", "--scheduler", scheduler,
            "-o", str(out), "--no-progress"]
    monkeypatch.setattr(sweep, "start_client", lambda *a: pytest.fail("a cluster was started"))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "holds 1 rerun made by other code of toy-chapter (e.g. mode=crash__seed=0" in err and "fresh -o DIR" in err


def test_an_ambiguous_plot_claim_stops_a_book_sweep_before_it_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sweep, "start_client", lambda *a: pytest.fail("a cluster was started"))
    argv = ["sweep", "attention-query-learning", "-p", "d_noise", "4,8", "--plot", "C3", "-o", str(tmp_path / "s")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "claim 'C3' is ambiguous in attention-query-learning; it starts 9 claims:" in err
    assert "'C3 RMS exponent in $n$'" in err and "'C1a" not in err
    assert not (tmp_path / "s").exists()


def test_residuals_standardize_each_seed_where_the_prediction_varies():
    z = sweep.residual({"measured": 1.5, "predicted": 1.0, "tolerance": 3.2905 * 0.25, "rule": "zscore",
                        "alpha": 1e-3})
    assert z[0] == pytest.approx(2.0, rel=1e-4) and z[1] == "SE" and z[2] == pytest.approx(3.2905, rel=1e-4)
    assert sweep.residual({"measured": 2.2, "predicted": 2.0, "tolerance": 0.1, "rule": "relative"})[:2] == (
        pytest.approx(1.0), "tol")
    assert sweep.residual({"measured": 1.0, "predicted": 2.0, "tolerance": 0.0, "rule": "upper"}) is None
    plan = sweep.plan_sweep(TOY, {"size": [2]}, [0, 1, 2])

    def rec(m, p):
        return {"status": "passed", "claims": [{"name": "C3", "measured": m, "predicted": p, "tolerance": 0.329,
                                                "tolerance_text": "3.29 SE", "rule": "zscore", "alpha": 1e-3,
                                                "passed": True}]}
    records = {plan[0].key: rec(1.1, 1.0), plan[1].key: rec(2.0, 2.1), plan[2].key: rec(3.0, 3.0)}
    _, claims = sweep.summarize(plan, records)
    c = claims[0]
    assert c["predicted_sd"] > 0 and c["residual_unit"] == "SE"
    assert c["residual_mean"] == pytest.approx(0.0, abs=1e-9) and c["residual_max_abs"] == pytest.approx(1.0, rel=1e-3)
    text = sweep.render_summary([], claims)
    assert "+0.00 ± 1.00 SE, max |.| 1.00 (pass <= 3.29)" in text and "3/3 (expected fails 0.003)" in text


def test_sweep_plot_command(mixed, tmp_path, capsys):
    fig = tmp_path / "fig.svg"
    assert cli.main(["sweep-plot", str(mixed[2]), CLAIM, "-o", str(fig)]) == 0
    assert fig.read_text().startswith("<?xml") and "C1 count" in fig.read_text()
    assert cli.main(["sweep-plot", str(mixed[2]), "C9 nothing"]) == 2
    err = capsys.readouterr().err
    assert "claim 'C9 nothing' is not in" in err and "claims: 'C1 count'" in err
    assert sweep.resolve_claim("C1", ["C1 count", "C2 rate"]) == "C1 count"
    with pytest.raises(ParameterError, match="ambiguous"):
        sweep.resolve_claim("C", ["C1 count", "C2 rate"])
