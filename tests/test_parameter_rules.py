"""Every rule of every chapter's parameters is declared and checked before anything runs.

For each declared rule (a multiple, a power of two, a relation between parameters) one value that breaks
it must stop ``run`` with exit 2 and a message naming the parameter, the value and the rule, before any
notebook is written; one value that keeps it must be accepted, and the chapter must run there without
raising (a claim may fail at a setting no study covered, exit 1; a crash, exit 3, is a bug).
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from theorylib.core.params import Param
from theorylib.runner.paths import REPO_ROOT
from theorylib.runner.registry import all_chapters

CHAPTERS = all_chapters()


def _first(p: Param, keep: bool, default: Any) -> int:
    """The first integer of p's range that keeps (``keep``) or breaks p's rule, other than ``default``."""
    lo, hi = int(p.low), int(p.high)
    for v in range(lo, hi + 1):
        ok = (p.multiple_of is None or v % p.multiple_of == 0) and (not p.power_of_two or v & (v - 1) == 0)
        if ok == keep and v != default:
            return v
    raise AssertionError(f"{p.name}: no {'allowed' if keep else 'violating'} value in [{lo}, {hi}]")


def rule_cases() -> list[tuple[str, str, dict[str, Any], dict[str, Any], str]]:
    """(slug, rule, violating overrides, satisfying overrides, text the message must contain)."""
    cases = []
    for c in CHAPTERS:
        for p in c.params:
            if p.kind != "int" or (p.multiple_of is None and not p.power_of_two):
                continue
            rule = "even" if p.multiple_of == 2 else (f"a multiple of {p.multiple_of}" if p.multiple_of else
                                                     "a power of 2")
            bad = _first(p, False, p.default)
            cases.append((c.slug, f"{p.name}: {rule}", {p.name: bad}, {p.name: _first(p, True, p.default)},
                          f"{bad} is not {rule}"))
        for rel in c.relations:
            cases.append((c.slug, rel.rule, dict(rel.violating), dict(rel.satisfying), f"the rule: {rel.rule}"))
    return cases


CASES = rule_cases()
IDS = [f"{slug}-{rule}" for slug, rule, *_ in CASES]


def _run(slug: str, values: dict[str, Any], out: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "theorylib", "run", slug, "-o", out, "--json", "--no-progress"]
    for name, value in values.items():
        argv += ["-p", name, repr(value)]
    return subprocess.run(argv, capture_output=True, text=True, cwd=REPO_ROOT, timeout=900)


def test_the_rules_found_in_the_chapters_are_declared():
    declared = {(slug, rule.split(":")[0]) for slug, rule, *_ in CASES}
    for slug, name in [("hierarchical-labels-layerwise-sgd", "d_exact"),
                       ("diffusion-splits-rmt", "d"), ("diffusion-splits-rmt", "at least 3 sizes of rate_n are "
                                                       ">= rate_fit_from (the C3 fit window)"),
                       ("attention-query-learning", "2 r <= d_lr"), ("hellinger-tv-mixtures", "L_step"),
                       ("hellinger-tv-mixtures",
                        "at least 5 values L >= 10 in the sweep 6, 6 + L_step, ..., <= L_max")]:
        assert (slug, name) in declared, f"{slug}: the rule on {name} is not declared"


@pytest.mark.parametrize(("slug", "rule", "bad", "good", "fragment"), CASES, ids=IDS)
def test_a_value_breaking_a_rule_stops_before_anything_runs(slug, rule, bad, good, fragment, tmp_path):
    out = tmp_path / "rerun.ipynb"
    done = _run(slug, bad, str(out))
    assert done.returncode == 2, f"exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    msg = done.stdout + done.stderr
    assert fragment in msg
    for name, value in bad.items():
        assert f"{name!r} = {value!r}" in msg
    assert not out.exists(), "nothing is executed on a bad value"


@pytest.mark.parametrize(("slug", "rule", "bad", "good", "fragment"), CASES, ids=IDS)
def test_a_value_keeping_a_rule_is_accepted(slug, rule, bad, good, fragment):
    chapter = next(c for c in CHAPTERS if c.slug == slug)
    values = chapter.validate(good, strict=True)
    assert all(values[k] == v for k, v in good.items())


@pytest.mark.slow
@pytest.mark.parametrize(("slug", "rule", "bad", "good", "fragment"), CASES, ids=IDS)
def test_the_chapter_runs_at_a_value_keeping_a_rule(slug, rule, bad, good, fragment, tmp_path):
    done = _run(slug, good, str(tmp_path / "rerun.ipynb"))
    assert done.returncode in (0, 1), f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
