"""Glue (what it stores and displays), the wrong-theory hook, and the shared input checks."""

import types

import numpy as np
import pytest

from theorylib.core import glue, validation
from theorylib.core.theory import variant


@pytest.fixture
def shown(monkeypatch):
    calls = []
    monkeypatch.setattr("IPython.display.display", lambda data, **kw: calls.append((data, kw)))
    return calls


def test_glue_number_stores_the_value_as_the_prose_shows_it(shown):
    glue.glue_number("x", np.float64(0.05054132440591969), ".4f")
    (data, kw), = shown
    assert data == {"application/papermill.record/text/plain": "0.0505"}
    meta = kw["metadata"]
    assert meta["scrapbook"]["name"] == "x" and meta[glue.GLUE_KEY] == {"spec": ".4f", "raw": 0.05054132440591969}
    assert kw["raw"] is True


def test_glue_numbers_text_and_bound(shown):
    glue.glue_numbers(".2f", a=1.234, b=2.345)
    glue.glue_text("t", "two-level")
    glue.glue_bound("e", 3.2e-15, 1e-12)
    texts = [d["application/papermill.record/text/plain"] for d, _ in shown]
    assert texts == ["1.23", "2.35", "'two-level'", "'< 1e-12'"]
    assert shown[3][1]["metadata"][glue.GLUE_KEY]["raw"] == 3.2e-15
    with pytest.raises(ValueError, match="precision the claim needs"):
        glue.glue_number("y", 1.0, "")
    with pytest.raises(TypeError, match="bool"):
        glue.glue_number("y", True, ".1f")


def test_variant_replaces_named_functions_only():
    theory = types.SimpleNamespace(kappa=lambda s: s, df2=lambda s: 2 * s, wrong_kappa=lambda s: -s)
    bad = variant(theory, kappa=theory.wrong_kappa)
    assert bad.kappa(3) == -3 and bad.df2(3) == 6 and theory.kappa(3) == 3
    with pytest.raises(AttributeError, match="no 'kapa'"):
        variant(theory, kapa=theory.wrong_kappa)


def test_shared_input_checks_name_the_argument_and_the_rule():
    assert validation.check_int("n", np.int64(3), low=1) == 3
    assert validation.check_positive_int("n", 5) == 5
    assert validation.check_power_of_two("d", 8) == 8
    assert validation.check_real("x", 0.5, 0, 1) == 0.5 and validation.check_probability("p", 1.0) == 1.0
    assert validation.check_positive("s", 2) == 2.0
    for call, match in [
        (lambda: validation.check_int("n", True), "n = True must be an integer"),
        (lambda: validation.check_int("n", 0, low=1), r"n = 0 must be an integer in \[1, inf\]"),
        (lambda: validation.check_positive_int("m", 0), "m = 0 must be a positive integer"),
        (lambda: validation.check_positive_int("m", 2.0), "m = 2.0 must be a positive integer"),
        (lambda: validation.check_power_of_two("d", 12), "d = 12 must be a power of two"),
        (lambda: validation.check_real("x", float("nan")), "x = nan must be a finite number"),
        (lambda: validation.check_real("x", 1.5, 0, 1), r"in \[0, 1\]"),
        (lambda: validation.check_positive("s", 0.0), r"in \(0, inf\)"),
        (lambda: validation.check_array("A", [[1.0, 2.0]], ndim=1), "A must be 1-dimensional"),
        (lambda: validation.check_array("A", [1.0, np.inf]), "A must be finite"),
        (lambda: validation.check_array("A", np.zeros((2, 3)), shape=(2, 2)), r"A must have shape \(2, 2\)"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()
    assert validation.check_array("A", np.zeros((2, 3)), shape=(2, None)).shape == (2, 3)
