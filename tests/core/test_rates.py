"""fit_loglog recovers known exponents, and its intervals have the stated coverage."""

import numpy as np
import pytest

from theorylib.core.rates import fit_loglog, ols_slope


def test_exact_power_law_is_recovered_without_noise():
    x = np.array([1.0, 2, 4, 8, 16])
    fit = fit_loglog(x, 3.0 * x**-0.5)
    assert fit.slope == pytest.approx(-0.5, abs=1e-12)
    assert fit.intercept == pytest.approx(np.log(3.0), abs=1e-12)
    np.testing.assert_allclose(fit.predict(x), 3.0 * x**-0.5, rtol=1e-12)


def test_ols_slope_batches_over_leading_axes():
    x = np.arange(5.0)
    y = np.stack([2 * x + 1, -x])
    slope, icpt = ols_slope(x, y)
    np.testing.assert_allclose(slope, [2, -1]) and np.testing.assert_allclose(icpt, [1, 0], atol=1e-12)


def test_bootstrap_interval_covers_true_slope_at_stated_rate():
    # 300 experiments at alpha = 0.1: misses ~ Binomial(300, 0.1), mean 30, sd 5.2
    rng = np.random.default_rng(1)
    x = np.array([10.0, 20, 40, 80])
    misses = 0
    for _ in range(300):
        reps = x**-1.0 * np.exp(0.2 * rng.standard_normal((60, x.size)))
        fit = fit_loglog(x, replicates=reps, alpha=0.1, n_boot=400, rng=rng)
        misses += not (fit.ci_low <= -1.0 <= fit.ci_high)
    assert 10 <= misses <= 55


def test_paired_bootstrap_runs_and_ols_interval_widens_with_noise():
    rng = np.random.default_rng(2)
    x = np.array([1.0, 2, 4, 8])
    reps = x**2 * (1 + 0.01 * rng.standard_normal((50, 4)))
    fit = fit_loglog(x, replicates=reps, paired=True, rng=rng)
    assert abs(fit.slope - 2) < 10 * fit.slope_se
    noisy = fit_loglog(x, x**2 * np.array([1.0, 1.2, 0.9, 1.1]))
    assert noisy.ci_low < 2 < noisy.ci_high and noisy.ci_high - noisy.ci_low > 0.1


@pytest.mark.parametrize(
    ("x", "y", "msg"),
    [
        ([1.0], [1.0], "at least 2"),
        ([1.0, -2.0, 3.0], [1.0, 2.0, 3.0], "> 0"),
        ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0], "> 0"),
        ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], "distinct"),
        ([1.0, 2.0], [1.0, 2.0], "at least 3"),
    ],
)
def test_bad_input(x, y, msg):
    with pytest.raises(ValueError, match=msg):
        fit_loglog(np.array(x), np.array(y))


def test_bootstrap_needs_rng_and_right_shape():
    x = np.array([1.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="rng"):
        fit_loglog(x, replicates=np.ones((5, 3)))
    with pytest.raises(ValueError, match="shape"):
        fit_loglog(x, replicates=np.ones((5, 2)), rng=np.random.default_rng(0))
