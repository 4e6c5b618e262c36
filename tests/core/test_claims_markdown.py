"""The claims table as the book renders it (MyST Markdown): escaping, typesetting, links, marks."""

import re

import pytest

from theorylib.core import claims as C
from theorylib.core import claims_markdown as M


def _record(**kw):
    base = {"name": "C1 count", "measured": 4, "predicted": 4, "rule": "exact", "tolerance": 0.0,
            "tolerance_text": "exact equality", "justification": "integers", "passed": True, "alpha": None,
            "fp": False, "section": "ch-c1", "checks": ["ch-thm-a"]}
    return {**base, **kw}


@pytest.mark.parametrize("text", ["||J_ab||_1 * eps", "a <b> [c](d) {prf:ref}`x` #h ~y^ `z` $w", "x\\y | z"])
def test_escaped_text_reads_as_written(text):
    out = M.escape_markdown(text)
    # every special character is preceded by a backslash, and removing them gives the text back
    assert re.sub(r"\\(.)", r"\1", out) == text
    assert not re.search(r"(?<!\\)[*_`\[\]{}<>#|~^$]", out)


def test_name_keeps_math_and_escapes_the_rest():
    assert M.name_markdown(r"C3 mean $\|\hat A - A\|_F^2$, n_1 *x*") == r"C3 mean $\|\hat A - A\|_F^2$, n\_1 \*x\*"


@pytest.mark.parametrize(("text", "tex"), [
    ("1.3e-05", r"1.3\times 10^{-5}"), ("1e-12", "10^{-12}"), ("2.5", "2.5"), ("-1e+03", "-10^{3}"),
    ("x1e-3", "x1e-3"),  # part of a word: left alone
])
def test_tex_number(text, tex):
    assert M.tex_number(text) == tex


@pytest.mark.parametrize(("text", "tex"), [
    ("|m-p| <= 1e-11", r"$|m-p| \le  10^{-11}$"),
    ("3.29 SE = 1.3e-05", r"$3.29 \,\mathrm{SE} = 1.3\times 10^{-5}$"),
    ("chi2_5 <= 20.5", r"$\chi^2_{5} \le  20.5$"),
    ("0.5(1 ± 1e-9)", r"$0.5(1 \pm  10^{-9})$"),
    ("m >= p - 0.1", r"$m \ge  p - 0.1$"),
])
def test_tex_expression(text, tex):
    assert M.tex_expression(text) == tex


def test_tolerance_cell_names_alpha_and_typesets_an_interval():
    z = _record(rule="zscore", tolerance_text="3.29 SE = 0.021", alpha=1e-3)
    assert M.tolerance_markdown(z).endswith(r", $\alpha = 10^{-3}$")
    ci = _record(rule="interval", tolerance_text="99.9% CI [0.1234, -1.2e-05]", alpha=1e-3)
    assert M.tolerance_markdown(ci).startswith(r"99.9% CI $[0.1234,\ -1.2\times 10^{-5}]$")
    assert M.tolerance_markdown(_record(rule="zscore", tolerance_text="x", alpha=0.005)).endswith(r"5\times 10^{-3}$")
    assert M.tolerance_markdown(_record()) == "exact"


def test_row_links_experiment_and_theorems_and_marks_the_result():
    row = M.claim_row(_record(checks=["ch-thm-a", "ch-lem-b"]), "4", "4")
    assert row[0] == "{ref}`C1 <ch-c1>` count"
    assert row[1] == "{prf:ref}`ch-thm-a`, {prf:ref}`ch-lem-b`"
    assert row[-1] == M.PASS_MARK
    failed = M.claim_row(_record(passed=False, section="", checks=[]), "5", "4")
    assert failed[0] == "**C1** count" and failed[1] == "—" and failed[-1] == M.FAIL_MARK


def test_table_is_a_list_table_with_one_item_per_cell_and_folded_reasons():
    cs = C.ClaimSet("demo")
    cs.experiment("demo-c1", "demo-thm")
    cs.exact("C1 count", 4, 4, "integers: *exact*")
    cs.absolute("C2 residual", 1e-15, 0.0, 1e-12, "fp model", fp=True)
    md = cs.markdown()
    assert md.startswith("::::{list-table}\n:header-rows: 1\n:class: claims-table")
    assert md.count("\n* - ") == 3 and md.count("\n  - ") == 3 * (len(M.HEADER) - 1)
    assert r"$\le  10^{-12}$" in md  # an fp residual shown as its bound, typeset
    assert ":::{dropdown} Why each tolerance" in md and r"integers: \*exact\*" in md


def test_experiment_context_is_recorded_and_required_to_be_complete():
    cs = C.ClaimSet("demo")
    cs.exact("C0 before", 1, 1, "x")
    cs.experiment("demo-c1", "demo-thm", "demo-lem")
    c = cs.exact("C1 after", 1, 1, "x")
    assert (cs.claims[0].section, cs.claims[0].checks) == ("", ())
    assert (c.section, c.checks) == ("demo-c1", ("demo-thm", "demo-lem"))
    assert c.as_record()["checks"] == ["demo-thm", "demo-lem"]
    with pytest.raises(ValueError, match="theorem label"):
        cs.experiment("demo-c2")
