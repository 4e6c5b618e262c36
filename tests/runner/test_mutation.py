"""The mutation engine: operators, sites, the in-process replay with its memo, and the stored reports."""

import json
import shutil
import sys
import types

import jupytext
import numpy as np
import pytest
from cosmic_ray.mutating import mutate_code

import theorylib.chapters as chapters_pkg
from theorylib.runner.mutation import operators, report
from theorylib.runner.mutation.replay import Replayer, ReplayMismatch, TheoryMemo
from theorylib.runner.mutation.sites import enumerate_mutants
from theorylib.runner.registry import all_chapters


@pytest.mark.parametrize("name", sorted(operators.FORMULA))
def test_formula_operators_do_what_their_examples_say(name):
    op = operators.FORMULA[name]()
    for ex in op.examples():
        assert mutate_code(ex.pre_mutation_code, op, ex.occurrence) == ex.post_mutation_code


def test_every_operator_loads_and_exponents_are_shifted_not_scaled():
    ops = operators.all_operators()
    assert set(ops) == set(operators.COSMIC_RAY) | set(operators.FORMULA)
    assert mutate_code("y = x ** 2", ops["scale-constant"], 0) is None  # an exponent is shift-exponent's
    assert mutate_code("y = x ** -0.5", ops["shift-exponent"], 1) == "y = x ** -1.5"
    assert mutate_code("y = f(a, b=2)", ops["swap-arguments"], 0) is None


THEORY = '''"""Demo theory."""
import numpy as np

SCALE = 2.0


def check_n(n):
    if n < 1:
        raise ValueError("n must be positive")
    return n


def predicted(s2, n, tol=1e-12):
    """The prediction."""
    if n <= 0:
        raise ValueError("bad")
    return SCALE * s2 + 1.0 / n


def wrong_predicted(s2, n):
    return s2 + 7.0
'''


def test_sites_skip_wrong_theories_checks_guards_signatures_and_docstrings():
    mutants = enumerate_mutants(THEORY)
    lines = {m.line for m in mutants}
    assert lines <= {4, 17}, lines  # SCALE and the return line only
    ids = [m.id for m in mutants]
    assert len(ids) == len(set(ids)) and "predicted:drop-term:0" in ids and "<module>:scale-constant:0" in ids
    # Ids are stable when another function changes.
    other = THEORY.replace("def wrong_predicted(s2, n):\n    return s2 + 7.0",
                           "def helper(x):\n    return x + 1\n\n\ndef wrong_predicted(s2, n):\n    return s2 + 7.0")
    again = {m.id: m.diff.splitlines()[-1] for m in enumerate_mutants(other) if m.function == "predicted"}
    assert again == {m.id: m.diff.splitlines()[-1] for m in mutants if m.function == "predicted"}


MODEL = '''"""Demo model."""
import numpy as np

CALLS = []


def sample(n, s2, rng):
    CALLS.append(n)
    return np.sqrt(s2) * rng.standard_normal(n)
'''
CLAIMS = '''"""Demo claims."""
import numpy as np

from theorylib.core.claims import check_zscore

from . import theory as _theory


def claim_mean(name, x, s2, *, theory=_theory):
    sq = x ** 2
    se = float(sq.std(ddof=1) / np.sqrt(sq.size))
    return check_zscore(name, float(sq.mean()), theory.predicted(s2, 10 ** 9) / theory.SCALE, se, "CLT")
'''
INIT = '''from theorylib.core.chapter import Chapter
from theorylib.core.params import Param

CHAPTER = Chapter(slug="mutation-demo", title="Demo", paper=1,
                  params=(Param("seed", 0, "int", low=0), Param("n", 4000, "int", low=10)))
'''
NOTEBOOK = '''---
jupytext:
  formats: ipynb,md:myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Demo

```{code-cell} ipython3
:tags: [parameters]

seed = 0
n = 4000
```

```{code-cell} ipython3
from theorylib.chapters.mutation_demo import CHAPTER, model, theory
from theorylib.chapters.mutation_demo import claims as cl
from theorylib.core import ClaimSet, rng_for

P = CHAPTER.validate(globals())
claims = ClaimSet(CHAPTER.slug)
x = model.sample(P.n + DEPENDS * int(theory.SCALE), 1.5, rng_for(P.seed, "C1"))
claims.add(cl.claim_mean("C1", x, 1.5))
claims.report()
```
'''


def run(replayer, mutant):
    return replayer.run(mutant.source, mutated=mutant.function)


@pytest.fixture
def demo(tmp_path):
    """A throw-away chapter package 'mutation-demo' (importable as theorylib.chapters.mutation_demo)."""
    def make(depends: bool):
        folder = tmp_path / "packages" / "mutation_demo"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for name, text in {"__init__.py": INIT, "theory.py": THEORY, "model.py": MODEL, "claims.py": CLAIMS}.items():
            (folder / name).write_text(text)
        nb = jupytext.reads(NOTEBOOK.replace("DEPENDS", "1" if depends else "0"), fmt="md:myst")
        path = tmp_path / "mutation-demo.ipynb"
        jupytext.write(nb, path)
        for mod in [m for m in sys.modules if m.startswith("theorylib.chapters.mutation_demo")]:
            del sys.modules[mod]
        return Replayer("mutation-demo", path, {"seed": 0, "n": 4000}, packages=tmp_path / "packages")

    chapters_pkg.__path__.append(str(tmp_path / "packages"))
    yield make
    chapters_pkg.__path__.remove(str(tmp_path / "packages"))
    for mod in [m for m in sys.modules if m.startswith("theorylib.chapters.mutation_demo")]:
        del sys.modules[mod]


def test_replay_reuses_the_measurements_and_kills_a_wrong_formula(demo):
    replayer = demo(depends=False)
    base = replayer.baseline(None)
    assert base.status == "survived" and [c["name"] for c in base.claims] == ["C1"]
    model = sys.modules["theorylib.chapters.mutation_demo.model"]
    calls = len(model.CALLS)
    by_id = {m.id: m for m in enumerate_mutants(THEORY)}
    dropped = run(replayer, by_id["predicted:drop-term:1"])  # 1/n dropped: at n = 1e9 the same function
    assert dropped.status == "survived" and not dropped.misses
    doubled = run(replayer, by_id["<module>:scale-constant:0"])  # SCALE cancels in the claim: equivalent
    assert doubled.status == "survived"
    swapped = run(replayer, by_id["predicted:mul->div:0"])  # SCALE / s2: wrong
    assert swapped.status == "killed" and swapped.failed == ["C1"]
    assert len(model.CALLS) == calls, "a theory mutant must not rerun the simulation"


def test_replay_reports_a_measurement_that_depends_on_the_theory(demo):
    replayer = demo(depends=True)
    replayer.baseline(None)
    by_id = {m.id: m for m in enumerate_mutants(THEORY)}
    out = run(replayer, by_id["<module>:scale-constant:0"])  # SCALE feeds the sample size
    assert out.misses == ["model.sample"]


def test_replay_refuses_to_run_when_it_cannot_reproduce_the_stored_claims(demo):
    replayer = demo(depends=False)
    with pytest.raises(ReplayMismatch, match="differ from the stored"):
        replayer.baseline([{"name": "C1", "passed": False}])


MEMO_THEORY = '''
import functools

import numpy as np

CALLS = []


def h(x):
    CALLS.append("h")
    return x + 1


def f(x):
    CALLS.append("f")
    return 2 * h(x)


def k(xs):
    CALLS.append("k")
    return sum(v * v for v in xs)


@functools.lru_cache
def cached(x):
    CALLS.append("cached")
    return 3 * x


def uses_cached(x):
    CALLS.append("uses_cached")
    return cached(x) + 1


@functools.lru_cache
def cached_h(x):
    CALLS.append("cached_h")
    return h(x) * 5


def user_a(x):
    CALLS.append("user_a")
    return cached_h(x) + 1


def user_b(x):
    CALLS.append("user_b")
    return cached_h(x) + 2


def fill(out):
    CALLS.append("fill")
    out[0] += 1.0
    return float(out[0])


def draw(rng):
    CALLS.append("draw")
    return float(rng.standard_normal())
'''


def memo_module():
    module = types.ModuleType("memo_demo")
    module.__file__ = "<memo-demo theory>"
    exec(compile(MEMO_THEORY, module.__file__, "exec"), module.__dict__)
    return module


def memo_calls(module):
    return [module.f(1), module.k([1, 2]), module.uses_cached(2), module.uses_cached(2), module.fill(np.zeros(1)),
            module.draw(np.random.default_rng(0))]


def test_the_theory_memo_reruns_exactly_the_calls_that_reach_the_mutated_function():
    memo = TheoryMemo()
    recorded = memo_module()
    memo.install(recorded, None)
    expected = memo_calls(recorded)
    memo.recording = False
    rerun = {}
    for mutated in ("h", "f", "k", "cached", "uses_cached", "<module>"):
        module = memo_module()
        memo.install(module, mutated)
        assert memo_calls(module) == expected
        rerun[mutated] = module.CALLS
    # fill changes its argument and draw advances its generator: they always run.
    assert rerun["h"] == ["f", "h", "fill", "draw"]
    assert rerun["f"] == ["f", "fill", "draw"]  # f's own call of h never reached f: replayed
    assert rerun["k"] == ["k", "fill", "draw"]  # the generator expression inside k counts as k
    # The second uses_cached(2) only hits cached's lru cache, yet it reached cached: both rerun.
    assert rerun["cached"] == ["uses_cached", "cached", "uses_cached", "fill", "draw"]
    assert rerun["uses_cached"] == ["uses_cached", "uses_cached", "fill", "draw"]
    assert rerun["<module>"] == ["f", "h", "k", "uses_cached", "cached", "uses_cached", "fill", "draw"]


def test_a_cache_hit_inherits_what_the_cached_call_reached():
    # user_b's call of cached_h(1) is a cache hit: it never runs h, yet its value came from h (through user_a's
    # call), so a mutant of h must rerun user_b too, not answer it from the unmutated run.
    memo = TheoryMemo()
    recorded = memo_module()
    memo.install(recorded, None)
    expected = [recorded.user_a(1), recorded.user_b(1)]
    memo.recording = False
    for mutated, calls in (("h", ["user_a", "cached_h", "h", "user_b"]), ("user_a", ["user_a"]),
                           ("cached_h", ["user_a", "cached_h", "user_b"])):
        module = memo_module()
        memo.install(module, mutated)
        assert [module.user_a(1), module.user_b(1)] == expected
        assert module.CALLS == calls, mutated


def test_the_theory_memo_answers_from_the_unmutated_run_not_the_mutant():
    memo = TheoryMemo()
    recorded = memo_module()
    memo.install(recorded, None)
    assert recorded.k([1, 2]) == 5
    memo.recording = False
    mutant = memo_module()
    mutant_source = MEMO_THEORY.replace("return x + 1", "return x + 100")
    exec(compile(mutant_source, mutant.__file__, "exec"), mutant.__dict__)
    memo.install(mutant, "h")
    assert mutant.k([1, 2]) == 5 and mutant.CALLS == []  # k never reached h: replayed
    assert mutant.f(1) == 202  # f reached h: computed by the mutant


CHAPTERS = all_chapters()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.slug)
def test_the_stored_mutation_report_is_the_score_of_the_code(chapter):
    stored = report.load_report(chapter)
    if stored is None:  # the Verification page shows the chapter as "(no report)": its score is not measured yet
        pytest.skip(f"no mutation report yet: run python -m theorylib mutate {chapter.slug}")
    assert stored["code_hash"] == report.code_hash(chapter), (
        f"the mutation report is older than the chapter's theory, claims or notebook code: "
        f"rerun python -m theorylib mutate {chapter.slug}")
    assert stored["mutants"] == len(stored["results"]) and 0 <= stored["score"] <= 1
    notes = report.read_notes(chapter, enumerate_mutants((report.package_dir(chapter) / "theory.py").read_text()))
    assert set(notes[1]) >= set(stored["untested"])



def test_renote_reapplies_edited_notes_to_the_stored_runs_and_refuses_once_the_code_changed(tmp_path, monkeypatch):
    from types import SimpleNamespace

    folder = tmp_path / "renote_demo"
    folder.mkdir()
    (folder / "theory.py").write_text("def f(x):\n    return 2.0 * x + 1.0\n")
    (folder / "claims.py").write_text("# claims\n")
    nb = jupytext.reads("# Demo\n\n```{code-cell} ipython3\nx = 1\n```\n", fmt="md:myst")
    jupytext.write(nb, tmp_path / "renote-demo.ipynb")
    chapter = SimpleNamespace(slug="renote-demo", notebook_path=tmp_path / "renote-demo.ipynb")
    monkeypatch.setattr(report, "package_dir", lambda c: folder)
    mutants = enumerate_mutants((folder / "theory.py").read_text())
    assert len(mutants) >= 2
    survivor = mutants[0].id
    results = {m.id: {"status": "survived" if m.id == survivor else "killed", "failed": [], "error": None,
                      "misses": []} for m in mutants}
    stored = report._assemble(chapter, mutants, results, 1.0, 1)
    (folder / report.REPORT_NAME).write_text(json.dumps(stored))
    assert stored["unexplained_survivors"] == [survivor] and stored["score"] < 1

    (folder / report.NOTES_NAME).write_text(f'[equivalent]\n"{survivor}" = "the same function"\n')
    assert report.load_report(chapter)["code_hash"] != report.code_hash(chapter)  # notes changed: stale
    new = report.renote(chapter)
    assert new["code_hash"] == report.code_hash(chapter) and new["score"] == 1.0
    assert new["counts"]["equivalent"] == 1 and new["unexplained_survivors"] == []
    assert {r["id"]: r["status"] for r in new["results"]} == {
        m.id: "equivalent" if m.id == survivor else "killed" for m in mutants}

    (folder / report.NOTES_NAME).write_text(f'[untested]\n"{survivor}" = "not measured"\n')  # and back again
    assert report.renote(chapter)["untested"] == [survivor]

    (folder / "claims.py").write_text("# claims, changed\n")  # the runs no longer describe the code
    with pytest.raises(report.MutationUsageError, match="run the mutants again"):
        report.renote(chapter)
