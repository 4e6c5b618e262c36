"""Tests of theorylib.detequiv (chapter 'diffusion-splits-rmt'): unit tests and one mutation test per claim."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from threadpoolctl import threadpool_limits

from theorylib import detequiv as de
from theorylib.chapters.diffusion_splits_rmt import CHAPTER
from theorylib.core import rng_for

# ------------------------------------------------------------------------------------------------
# kappa and its equation


@pytest.mark.parametrize("d,n", [(50, 200), (100, 100), (200, 100), (30, 10)])
@pytest.mark.parametrize("lam", [0.0, 1e-6, 0.01, 0.3, 5.0])
def test_kappa_solves_its_equation_above_kappa0(d, n, lam):
    s = de.logunif_spectrum(d)
    k = de.kappa(lam, s, n)
    if lam == 0 and d <= n:
        assert k == 0.0
        return
    if lam == 0:
        assert_allclose(de.df1(k, s), n, rtol=1e-12)
    else:
        assert_allclose(k, lam + k * de.df1(k, s) / n, rtol=1e-12)
    assert lam <= k <= lam + s.sum() / n
    if d > n:  # above the root kappa0 of df1 = n (the referee's uniqueness argument)
        k0 = de.kappa(0.0, s, n)
        assert k >= k0
        grid = np.linspace(k0 * 1e-3, k0 * (1 - 1e-9), 50)
        assert np.all(grid * (1 - de.df1(grid, s) / n) < 0)
    if lam > 0:
        assert 1 - de.df2(k, s) / n >= lam / k * (1 - 1e-12)


def test_g_is_not_monotone_for_d_above_n_but_root_is_unique():
    s, n = de.logunif_spectrum(100), 50
    grid = np.geomspace(1e-4, 10, 4000)
    g = grid * (1 - de.df1(grid, s) / n)
    assert np.any(np.diff(g) < 0)  # the spec's monotonicity claim is false here
    for lam in (0.02, 0.1, 0.4):
        roots = np.flatnonzero(np.diff(np.sign(g - lam)))
        assert roots.size == 1
        assert_allclose(de.kappa(lam, s, n), grid[roots[0]], rtol=5e-3)


def test_kappa_increasing_in_lambda_and_tends_to_lambda_as_n_grows():
    s = de.logunif_spectrum(40)
    lams = np.geomspace(1e-3, 10, 30)
    ks = de.kappa_vec(lams, s, 60)
    assert np.all(np.diff(ks) > 0)
    assert_allclose(de.kappa_vec(lams, s, 10**9), lams, rtol=1e-6)


@pytest.mark.parametrize("d,n", [(50, 200), (200, 100), (100, 100)])
def test_kappa_matches_marchenko_pastur_closed_form(d, n):
    s = np.ones(d)
    for lam in (1e-3, 0.1, 1.0, 7.0):
        assert_allclose(de.kappa(lam, s, n), de.mp_kappa_isotropic(lam, d / n), rtol=1e-11)
    if d > n:
        assert_allclose(de.kappa(0.0, s, n), d / n - 1, rtol=1e-11)


def test_kappa_bad_input():
    s = de.logunif_spectrum(10)
    with pytest.raises(ValueError, match="lam"):
        de.kappa(-0.1, s, 10)
    with pytest.raises(ValueError, match="n = 0"):
        de.kappa(0.1, s, 0)
    with pytest.raises(ValueError, match="> 0"):
        de.kappa(0.1, np.array([1.0, 0.0]), 10)
    with pytest.raises(ValueError, match="1-D"):
        de.kappa(0.1, np.ones((2, 2)), 10)
    with pytest.raises(ValueError, match="gamma"):
        de.mp_kappa_isotropic(0.1, 0.0)


def test_kappa_per_mode_solves_its_scalar_equation():
    s, n, lam = de.logunif_spectrum(20), 30, 0.05
    k = de.kappa_per_mode(lam, s, n)
    assert_allclose(k, lam + k * s / (n * (s + k)), rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# deterministic equivalents


def test_inverse_wishart_mean_shows_the_order_one_over_n_gap():
    """E[R(0)] = n/(n-d-1) Sigma^{-1} exactly (d < n); the equivalent lam R -> kappa G gives n/(n-d) Sigma^{-1}."""
    d, n, reps = 10, 40, 4000
    s = de.logunif_spectrum(d, 2.0, 1.0)
    ev, V = de.sample_eigh(s, n, reps, rng_for(1, "test-iw"))
    diag = de.matrix_function_diag(ev, V, lambda x: 1 / x) * s  # (reps, d), mean n/(n-d-1)
    per = diag.mean(axis=1)
    m, se = per.mean(), per.std(ddof=1) / np.sqrt(reps)
    assert abs(m - n / (n - d - 1)) <= 4 * se
    assert abs(m - n / (n - d)) > 10 * se
    # the equivalent's small-lam limit: kappa(lam)/lam -> 1/(1 - d/n)
    assert_allclose(de.kappa(1e-9, s, n) / 1e-9, n / (n - d), rtol=1e-6)


def test_stieltjes_identity_for_the_sampling_map():
    x = np.array([0.0, 1e-3, 0.03, 1.0, 4.0, 1e3])
    for a, b in [(4e-6, 100.0), (0.01, 2.0)]:
        assert_allclose(de.stieltjes_sqrt_ratio(x, a, b), np.sqrt((x + a) / (x + b)), atol=1e-10, rtol=0)


def test_fractional_equivalents_reduce_to_plugin_when_n_is_huge():
    s = de.logunif_spectrum(10)
    a, b = 1e-4, 100.0
    assert_allclose(de.sampling_map_detequiv(s, 10**10, a, b), de.plugin_sampling_map(s, a, b), rtol=1e-6)
    assert_allclose(de.sqrt_detequiv(s, 10**10), np.sqrt(s), rtol=1e-6)
    # finite n: the equivalent lies below the plug-in (more shrinkage)
    assert np.all(de.sampling_map_detequiv(s, 20, a, b) < de.plugin_sampling_map(s, a, b))


def test_second_order_formula_with_A_sigma_is_the_ridge_bias():
    s, n = de.logunif_spectrum(30), 50
    k = de.kappa(0.1, s, n)
    full = de.second_order_equivalent(s, k, np.diag(s), n)
    g = 1 / (s + k)
    # kappa^2 G Sigma G (1 + tr(Sigma^2 G^2)/n/(1-df2/n)) = kappa^2 Sigma G^2/(1 - df2/n)
    assert_allclose(np.diag(full), de.ridge_bias_formula(s, k, n), rtol=1e-12)
    assert_allclose(full - np.diag(np.diag(full)), 0, atol=1e-15)
    assert_allclose(de.ridge_bias_formula(s, k, n), k**2 * s * g**2 / (1 - de.df2(k, s) / n))


def test_covariance_prediction_is_homogeneous_and_consistent():
    s, n = de.logunif_spectrum(20), 40
    k = de.kappa(0.05, s, n)
    y = np.linspace(1, 2, 20)
    c = de.predicted_cov_diag(s, k, y, n)
    assert_allclose(de.predicted_cov_diag(s, k, 3 * y, n), 9 * c)
    assert_allclose(de.predicted_disagreement(s, k, y, n), 2 * c.sum())
    # off-diagonal-free second-order term with A = yy^T/|y|^2 equals c(y)/|y|^2 G Sigma G
    A = np.outer(y, y) / (y @ y)
    sec = de.second_order_equivalent(s, k, A, n) - k**2 * np.outer(y / (s + k), y / (s + k)) / (y @ y)
    assert_allclose(np.diag(sec), c / (y @ y), rtol=1e-12)
    with pytest.raises(ValueError, match="shape"):
        de.predicted_cov_diag(s, k, y[:5], n)


# ------------------------------------------------------------------------------------------------
# simulation helpers


def test_sample_eigh_and_matrix_functions():
    s, n, reps = de.logunif_spectrum(12), 8, 5
    rng = rng_for(3, "test-eigh")
    ev, V = de.sample_eigh(s, n, reps, rng)
    assert ev.shape == (reps, 12) and V.shape == (reps, 12, 12)
    assert np.all(ev >= 0)
    assert_allclose(np.matmul(V.transpose(0, 2, 1), V), np.broadcast_to(np.eye(12), V.shape), atol=1e-12)
    X = rng_for(3, "test-eigh").standard_normal((reps, n, 12)) * np.sqrt(s)
    S = np.matmul(X.transpose(0, 2, 1), X) / n
    assert_allclose(de.matrix_function_diag(ev, V, lambda x: x), np.diagonal(S, axis1=1, axis2=2), atol=1e-12)
    Y = np.vstack([np.ones(12), np.arange(12.0)])
    out = de.denoiser_outputs(ev, V, Y, 0.3)
    direct = np.einsum("rij,kj->rki", S @ np.linalg.inv(S + 0.3 * np.eye(12)), Y)
    assert_allclose(out, direct, atol=1e-10)
    with pytest.raises(ValueError, match="sigma2"):
        de.denoiser_outputs(ev, V, Y, 0.0)
    with pytest.raises(ValueError, match="columns"):
        de.apply_matrix_function(ev, V, np.sqrt, np.ones((1, 5)))
    with pytest.raises(ValueError, match="mismatch"):
        de.matrix_function_diag(ev[:, :3], V, np.sqrt)


def test_centered_data_equals_n_minus_one_substitution():
    X = rng_for(0, "test-centered").standard_normal((9, 4)) * np.array([2.0, 1.0, 0.5, 0.1])
    H = de.helmert_rows(9)
    assert_allclose(H @ H.T, np.eye(8), atol=1e-14)
    assert_allclose(H @ np.ones(9), 0, atol=1e-14)
    Z = H @ X  # 8 rows, iid N(0, Sigma) when the rows of X are
    assert_allclose(de.centered_covariance(X), Z.T @ Z / 8, atol=1e-13)
    with pytest.raises(ValueError):
        de.centered_covariance(np.ones(3))


def test_jackknife_of_a_mean_is_the_classical_standard_error():
    x = rng_for(0, "test-jk").standard_normal((50, 3))
    est, cov = de.jackknife(x, lambda m, _c: m)
    assert_allclose(est, x.mean(axis=0))
    assert_allclose(cov, np.cov(x.T) / 50, rtol=1e-12)
    with pytest.raises(ValueError, match="3 units"):
        de.jackknife(x[:2], lambda m, _c: m)


def test_richardson_and_whitening():
    r, c = de.richardson(np.array([0.02, 0.01]), np.eye(2) * 1e-4, np.array([0.01, 0.005]), np.eye(2) * 2e-4)
    assert_allclose(r, [0.0, 0.0], atol=1e-15)
    assert_allclose(c, np.eye(2) * 9e-4)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    v = np.array([1.0, -2.0])
    z = de.whiten(v, cov)
    assert_allclose(z @ z, v @ np.linalg.solve(cov, v))
    with pytest.raises(ValueError, match="covariance"):
        de.whiten(v, np.eye(3))
    with pytest.raises(ValueError, match="shapes"):
        de.richardson(np.zeros(2), 1, np.zeros(3), 1)


def test_sizes_spectra_inputs_bad_input():
    assert de.sizes(100, 0.5, 1000) == ((200, 100, 1000), (400, 200, 500))
    with pytest.raises(ValueError, match="multiple of 10"):
        de.sizes(105, 0.5, 1000)
    with pytest.raises(ValueError, match="integer"):
        de.sizes(100, 0.3, 1000)
    with pytest.raises(ValueError, match="unknown spectrum"):
        de.make_spectrum("flat", 10)
    with pytest.raises(ValueError, match="even"):
        de.twolevel_spectrum(7)
    assert_allclose(de.logunif_spectrum(4, 4.0, 5.0)[0], 4 * np.exp(-5 / 8))
    with pytest.raises(ValueError, match="0 < a < b"):
        de.sampling_map_detequiv(np.ones(3), 10, 2.0, 1.0)
    Y = de.fluct_inputs(de.logunif_spectrum(30), 0.05, rng_for(0, "x"))
    assert Y.shape == (4, 30) and np.count_nonzero(Y[1]) == 1 and np.count_nonzero(Y[2]) == 1


# ------------------------------------------------------------------------------------------------
# mutation tests: each claim at the defaults, with the right theory and with the named wrong one

D = CHAPTER.defaults()


@pytest.fixture(scope="module")
def runs():
    with threadpool_limits(1):  # one core: batched eigh/matmul thrash when BLAS threads compete
        return de.run_sizes(D["seed"], D["d"], D["gamma"], D["reps"], D["sigma2_list"], D["sigma2_fluct"],
                            D["spectrum"], D["s_max"], D["s_decay"], D["sigma_min"], D["sigma_max"])


@pytest.mark.parametrize("j", [0, 1, 2])
def test_mutation_C1_kappa(runs, j):
    run_P, run_2P = runs
    assert de.claim_kappa("C1", run_P, run_2P, j)[0].passed
    for wrong in (de.kappa_unrenormalized, de.kappa_ridgeless, de.kappa_naive, de.kappa_per_mode):
        assert not de.claim_kappa("C1", run_P, run_2P, j, wrong)[0].passed, wrong.__name__


MUTANTS_C2 = {"random": (de.cov_diag_no_amplification, de.kappa),
              "top": (de.cov_diag_input_blind, de.kappa),
              "mid": (de.predicted_cov_diag, de.kappa_unrenormalized),
              "flat": (de.cov_diag_no_amplification, de.kappa)}


@pytest.mark.parametrize("k,name", list(enumerate(de.INPUT_NAMES)))
def test_mutation_C2_variance(runs, k, name):
    run_P, run_2P = runs
    assert de.claim_variance("C2", run_P, run_2P, k)[0].passed
    pred, kfn = MUTANTS_C2[name]
    assert not de.claim_variance("C2", run_P, run_2P, k, pred, kfn)[0].passed


def test_mutation_C2_profile_and_pairs(runs):
    run_P, run_2P = runs
    assert de.claim_profile("C2p", run_P, run_2P, 0)[0].passed
    assert not de.claim_profile("C2p", run_P, run_2P, 0, de.cov_diag_isotropic_profile)[0].passed
    assert de.claim_pairs("C2pairs", run_P)[0].passed
    assert not de.claim_pairs("C2pairs", run_P, factor=1.0)[0].passed


def test_mutation_C3_rate():
    with threadpool_limits(1):
        s, y, ns, dis = de.rate_experiment(D["seed"], D["rate_d"], D["rate_n"], D["rate_pairs"], D["sigma2_fluct"],
                                           D["spectrum"], D["s_max"], D["s_decay"])
    win = ns >= D["rate_fit_from"]
    beta = de.formula_slope(s, ns[win], y, D["sigma2_fluct"])
    assert de.claim_rate("C3", ns[win], dis[:, win], beta, rng_for(D["seed"], "C3-boot"))[0].passed
    for wrong in (-0.5, -1.0):
        assert not de.claim_rate("C3", ns[win], dis[:, win], wrong, rng_for(D["seed"], "C3-boot"))[0].passed


def test_mutation_C4_fractional(runs):
    run_P, run_2P = runs
    a, b = D["sigma_min"] ** 2, D["sigma_max"] ** 2
    right = {"smap": lambda r: de.sampling_map_detequiv(r.s, r.n, a, b), "ssqrt": lambda r: de.sqrt_detequiv(r.s, r.n)}
    wrong = {"smap": lambda r: de.plugin_sampling_map(r.s, a, b), "ssqrt": lambda r: np.sqrt(r.s)}
    for which in ("smap", "ssqrt"):
        assert de.claim_fractional("C4", run_P, run_2P, which, right[which])[0].passed
        assert not de.claim_fractional("C4", run_P, run_2P, which, wrong[which])[0].passed
    with pytest.raises(ValueError, match="which"):
        de.fractional_stat(run_P, "other", np.ones(run_P.s.size))
