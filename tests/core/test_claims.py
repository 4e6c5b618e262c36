"""Claim rules: each passes at its boundary and fails just past it."""

import math

import numpy as np
import pytest
from scipy import stats

from theorylib.core import claims as C


def test_z_critical_is_the_two_sided_quantile():
    assert C.z_critical(1e-3) == pytest.approx(3.2905, abs=1e-4)
    with pytest.raises(ValueError):
        C.z_critical(0.7)


def test_exact():
    assert C.check_exact("a", np.int64(24), 24, "count").passed
    assert not C.check_exact("a", 25, 24, "count").passed
    assert isinstance(C.check_exact("a", np.int64(3), 3, "").measured, int)


def test_absolute_and_relative_boundaries():
    assert C.check_absolute("a", 1.0, 1.5, 0.5, "").passed
    assert not C.check_absolute("a", 1.0, 1.5 + 1e-12, 0.5, "").passed
    assert C.check_relative("r", 1.1, 1.0, 0.1 + 1e-12, "").passed
    assert not C.check_relative("r", 1.2, 1.0, 0.1, "").passed
    assert not C.check_absolute("a", math.nan, 0.0, 1.0, "").passed
    with pytest.raises(ValueError):
        C.check_absolute("a", 0, 0, -1, "")


def test_zscore_uses_alpha():
    z = C.z_critical(1e-3)
    assert C.check_zscore("z", 0.0, z * 0.999, 1.0, "").passed
    assert not C.check_zscore("z", 0.0, z * 1.001, 1.0, "").passed
    # a 95% rule would reject 2.5 SE; the book's 1e-3 rule does not
    assert C.check_zscore("z", 0.0, 2.5, 1.0, "").passed
    assert not C.check_zscore("z", 0.0, 2.5, 1.0, "", alpha=0.05).passed
    with pytest.raises(ValueError):
        C.check_zscore("z", 0.0, 1.0, 0.0, "")


def test_zscore_false_alarm_rate_is_alpha():
    rng = np.random.default_rng(0)
    draws = rng.standard_normal(400_000)
    z = C.z_critical(1e-3)
    rate = np.mean(np.abs(draws) > z)
    # binomial SE at p = 1e-3, n = 4e5 is 5e-5: a 4 SE band
    assert abs(rate - 1e-3) < 2e-4


def test_interval_and_bounds():
    assert C.check_interval("i", -0.5, -0.5, -0.6, -0.4, "").passed
    assert not C.check_interval("i", -0.5, -0.3, -0.6, -0.4, "").passed
    with pytest.raises(ValueError):
        C.check_interval("i", 0, 0, 1, -1, "")
    assert C.check_upper("u", 1.0, 1.0, "").passed and not C.check_upper("u", 1.0 + 1e-9, 1.0, "").passed
    assert C.check_lower("l", 1.0, 1.0, "").passed and not C.check_lower("l", 1.0 - 1e-9, 1.0, "").passed


def test_chi2_threshold():
    k = 5
    crit = stats.chi2.isf(1e-3, k)
    z_ok = np.full(k, math.sqrt(crit / k) * 0.999)
    z_bad = np.full(k, math.sqrt(crit / k) * 1.001)
    assert C.check_chi2("c", z_ok, "").passed and not C.check_chi2("c", z_bad, "").passed
    with pytest.raises(ValueError):
        C.check_chi2("c", [], "")


def test_record_keeps_full_precision_and_is_json_ready():
    """The record lives in output metadata, which nbval does not compare: no rounding needed there."""
    import json

    claim = C.check_absolute("a", 1 / 3, 0.3333333333333, 1e-9, "why").with_details(r=np.arange(3))
    rec = claim.as_record()
    assert rec["measured"] == 1 / 3 and rec["justification"] == "why" and "details" not in rec
    assert json.loads(json.dumps(rec)) == rec and claim.details["r"].tolist() == [0, 1, 2]


def test_claimset_rejects_duplicates_and_reports_failures(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append((a, k)))
    cs = C.ClaimSet("demo")
    cs.exact("C1", 1, 1, "x")
    with pytest.raises(ValueError, match="duplicate"):
        cs.exact("C1", 1, 1, "x")
    cs.report()
    (data,), meta = shown[-1]
    assert "C1" in data["text/plain"] and "claims-table" in data["text/markdown"] and "text/html" not in data
    assert meta["metadata"][C.CLAIMS_KEY]["chapter"] == "demo"
    cs.absolute("C2", 1.0, 2.0, 0.1, "y")
    with pytest.raises(C.ClaimsFailed, match="1 of 2 claims failed: C2"):
        cs.report()
    assert "FAIL" in shown[-1][0][0]["text/plain"]


def test_empty_claimset_is_an_error():
    with pytest.raises(ValueError, match="no claims"):
        C.ClaimSet("demo").report()


def test_bounds_with_a_relative_slack():
    up = C.check_upper("u", 1.0 + 5e-13, 1.0, "why", rtol=1e-12)
    assert up.passed and up.tolerance_text == "m <= p(1 + 1e-12)"
    assert not C.check_upper("u", 1.0 + 2e-12, 1.0, "why", rtol=1e-12).passed
    assert C.check_upper("u", -1.0 - 5e-13, -1.0, "why", rtol=1e-12).passed  # slack relative to |bound|
    lo = C.check_lower("l", 1.0 - 5e-13, 1.0, "why", rtol=1e-12)
    assert lo.passed and lo.tolerance_text == "m >= p(1 - 1e-12)"
    assert not C.check_lower("l", 1.0 - 2e-12, 1.0, "why", rtol=1e-12).passed
    with pytest.raises(ValueError):
        C.check_upper("u", 1.0, 1.0, "why", tol=1e-3, rtol=1e-3)
    with pytest.raises(ValueError):
        C.check_lower("l", 1.0, 1.0, "why", tol=1e-3, rtol=1e-3)


# ---- strict_max / strict_min: a NaN must reach the claim, never vanish -------------------------------

def test_strict_max_keeps_nan_wherever_it_stands():
    from theorylib.core.claims import strict_max, strict_min
    nan = float("nan")
    assert max([1.0, nan]) == 1.0  # the trap: Python's max drops a NaN that does not come first
    for values in ([nan, 1.0, 2.0], [1.0, nan, 2.0], [1.0, 2.0, nan]):
        assert np.isnan(strict_max(values))
        assert np.isnan(strict_min(values))
    parts = [np.array([1.0, 2.0]), np.array([[3.0], [nan]])]
    assert np.isnan(strict_max(parts)) and np.isnan(strict_max(iter(parts)))


def test_strict_max_and_min_values():
    from theorylib.core.claims import strict_max, strict_min
    parts = [np.array([1.0, -4.0]), 2.5, np.array([[0.5], [3.0]])]
    assert strict_max(parts) == 3.0 and strict_min(parts) == -4.0
    assert strict_max(np.array([[1.0, 7.0]])) == 7.0 and strict_min(np.array([[1.0, 7.0]])) == 1.0
    assert strict_max(5) == 5.0 and strict_min(5) == 5.0
    assert strict_max(x for x in [1.0, 2.0]) == 2.0
    assert np.isnan(strict_max([])) and np.isnan(strict_min([]))
    assert strict_max([np.inf, 1.0]) == np.inf and strict_min([-np.inf, 1.0]) == -np.inf


def test_nan_after_first_breaks_from_the_second_call():
    from theorylib.core.theory import nan_after_first
    f = nan_after_first(lambda x: np.array([x, 2 * x]))
    first = f(1.0)
    assert np.array_equal(first, [1.0, 2.0])
    second = f(1.0)
    assert second.shape == (2,) and np.isnan(second).all()
