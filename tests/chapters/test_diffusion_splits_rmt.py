"""Tests of chapter 'diffusion-splits-rmt' (package theorylib.chapters.diffusion_splits_rmt): the theory, the
model and its estimators, and one mutation test per claim (the claim fed its named wrong theory fails)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from threadpoolctl import threadpool_limits

from theorylib.chapters.diffusion_splits_rmt import CHAPTER, claims, estimators, model, model_stats, numerics, theory
from theorylib.core import rng_for
from theorylib.core.claims import check_chi2
from theorylib.core.theory import variant

# ------------------------------------------------------------------------------------------------
# kappa and its equation


@pytest.mark.parametrize("d,n", [(50, 200), (100, 100), (200, 100), (30, 10)])
@pytest.mark.parametrize("lam", [0.0, 1e-6, 0.01, 0.3, 5.0])
def test_kappa_solves_its_equation_above_kappa0(d, n, lam):
    s = model.logunif_spectrum(d)
    k = theory.kappa(lam, s, n)
    if lam == 0 and d <= n:
        assert k == 0.0
        return
    if lam == 0:
        assert_allclose(theory.df1(k, s), n, rtol=1e-12)
    else:
        assert_allclose(k, lam + k * theory.df1(k, s) / n, rtol=1e-12)
    assert lam <= k <= lam + s.sum() / n
    if d > n:  # above the root kappa0 of df1 = n the fixed point is unique
        k0 = theory.kappa(0.0, s, n)
        assert k >= k0
        grid = np.linspace(k0 * 1e-3, k0 * (1 - 1e-9), 50)
        assert all(g * (1 - theory.df1(g, s) / n) < 0 for g in grid)
    if lam > 0:
        assert 1 - theory.df2(k, s) / n >= lam / k * (1 - 1e-12)


def test_g_is_not_monotone_for_d_above_n_but_root_is_unique():
    s, n = model.logunif_spectrum(100), 50
    grid = np.geomspace(1e-4, 10, 4000)
    g = np.array([k * (1 - theory.df1(k, s) / n) for k in grid])
    assert np.any(np.diff(g) < 0)  # kappa (1 - df1/n) is not monotone here: uniqueness needs kappa0
    for lam in (0.02, 0.1, 0.4):
        roots = np.flatnonzero(np.diff(np.sign(g - lam)))
        assert roots.size == 1
        assert_allclose(theory.kappa(lam, s, n), grid[roots[0]], rtol=5e-3)


def test_kappa_increasing_in_lambda_and_tends_to_lambda_as_n_grows():
    s = model.logunif_spectrum(40)
    lams = np.geomspace(1e-3, 10, 30)
    ks = np.array([theory.kappa(v, s, 60) for v in lams])
    assert np.all(np.diff(ks) > 0)
    assert_allclose([theory.kappa(v, s, 10**9) for v in lams], lams, rtol=1e-6)


@pytest.mark.parametrize("d,n", [(50, 200), (200, 100), (100, 100)])
def test_kappa_matches_marchenko_pastur_closed_form(d, n):
    s = np.ones(d)
    for lam in (1e-3, 0.1, 1.0, 7.0):
        assert_allclose(theory.kappa(lam, s, n), theory.mp_kappa_isotropic(lam, d / n), rtol=1e-11)
    if d > n:
        assert_allclose(theory.kappa(0.0, s, n), d / n - 1, rtol=1e-11)


def test_kappa_bad_input():
    s = model.logunif_spectrum(10)
    with pytest.raises(ValueError, match="lam"):
        theory.kappa(-0.1, s, 10)
    with pytest.raises(ValueError, match="n = 0"):
        theory.kappa(0.1, s, 0)
    with pytest.raises(ValueError, match="> 0"):
        theory.kappa(0.1, np.array([1.0, 0.0]), 10)
    with pytest.raises(ValueError, match="1-dimensional"):
        theory.kappa(0.1, np.ones((2, 2)), 10)
    with pytest.raises(ValueError, match="gamma"):
        theory.mp_kappa_isotropic(0.1, 0.0)


def test_kappa_per_mode_solves_its_scalar_equation():
    s, n, lam = model.logunif_spectrum(20), 30, 0.05
    k = theory.wrong_kappa_per_mode(lam, s, n)
    assert_allclose(k, lam + k * s / (n * (s + k)), rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# deterministic equivalents


def test_inverse_wishart_mean_shows_the_order_one_over_n_gap():
    """E[R(0)] = n/(n-d-1) Sigma^{-1} exactly (d < n); the equivalent lam R -> kappa G gives n/(n-d) Sigma^{-1}."""
    d, n, reps = 10, 40, 4000
    s = model.logunif_spectrum(d, 2.0, 1.0)
    ev, V = model.sample_eigh(s, n, reps, rng_for(1, "test-iw"))
    diag = model.matrix_function_diag(ev, V, lambda x: 1 / x) * s  # (reps, d), mean n/(n-d-1)
    per = diag.mean(axis=1)
    m, se = per.mean(), per.std(ddof=1) / np.sqrt(reps)
    assert abs(m - n / (n - d - 1)) <= 4 * se
    assert abs(m - n / (n - d)) > 10 * se
    # the equivalent's small-lam limit: kappa(lam)/lam -> 1/(1 - d/n)
    assert_allclose(theory.kappa(1e-9, s, n) / 1e-9, n / (n - d), rtol=1e-6)


def test_stieltjes_identities_for_the_fractional_powers():
    """The scalar identities behind C4, by the theory's own quadratures: sqrt((x+a)/(x+b)) and sqrt(x)."""
    x = np.array([0.0, 1e-3, 0.03, 1.0, 4.0, 1e3])
    for a, b in [(4e-6, 100.0), (0.01, 100.0), (0.01, 2.0)]:
        assert_allclose(theory.sqrt_ratio_integral(lambda t: 1 / (x + t), a, b), np.sqrt((x + a) / (x + b)),
                        atol=1e-10, rtol=0)
    xp = x[1:]
    assert_allclose(theory.sqrt_integral(lambda lam: xp / (xp + lam), xp), np.sqrt(xp), rtol=1e-9)
    with pytest.raises(ValueError, match="0 < a < b"):
        theory.sqrt_ratio_integral(lambda t: 1 / (x + t), 1.0, 1.0)


def test_numerics_root_conventions_and_half_line_quadrature():
    assert_allclose(numerics.increasing_root(lambda k: k - 0.3, 0.0, 1.0), 0.3, rtol=1e-15)
    assert numerics.increasing_root(lambda k: 1.0, 0.0, 1.0) == 0.0  # f(lo+) >= 0: the left end
    assert numerics.increasing_root(lambda k: -1.0, 0.0, 2.0) == 2.0  # f(hi) <= 0: the right end
    assert_allclose(numerics.quad_half_line(lambda u: np.array([1 / (1 + u * u)]), np.zeros(1)), [np.pi / 2],
                    rtol=1e-10)
    assert_allclose(numerics.quad_sin2(lambda u: np.array([np.sin(u) ** 2]), 0.01, 100.0), [np.pi / 4], rtol=1e-10)


def test_fractional_equivalents_reduce_to_plugin_when_n_is_huge():
    s = model.logunif_spectrum(10)
    a, b = 1e-4, 100.0
    plugin = theory.wrong_sampling_map_plugin(s, 10**10, a, b)
    assert_allclose(theory.sampling_map_detequiv(s, 10**10, a, b), plugin, rtol=1e-6)
    assert_allclose(theory.sqrt_detequiv(s, 10**10), theory.wrong_sqrt_plugin(s, 10**10), rtol=1e-6)
    # finite n: the equivalent lies below the plug-in (more shrinkage)
    assert np.all(theory.sampling_map_detequiv(s, 20, a, b) < theory.wrong_sampling_map_plugin(s, 20, a, b))


def test_second_order_formula_with_A_sigma_is_the_ridge_bias():
    s, n = model.logunif_spectrum(30), 50
    k = theory.kappa(0.1, s, n)
    full = theory.second_order_equivalent(s, k, np.diag(s), n)
    g = 1 / (s + k)
    # kappa^2 G Sigma G (1 + tr(Sigma^2 G^2)/n/(1-df2/n)) = kappa^2 Sigma G^2/(1 - df2/n), the classical ridge bias
    ridge_bias = k**2 * s * g**2 / (1 - np.sum(s**2 * g**2) / n)
    assert_allclose(np.diag(full), ridge_bias, rtol=1e-12)
    assert_allclose(full - np.diag(np.diag(full)), 0, atol=1e-15)


def test_covariance_prediction_is_homogeneous_and_consistent():
    s, n = model.logunif_spectrum(20), 40
    k = theory.kappa(0.05, s, n)
    y = np.linspace(1, 2, 20)
    c = theory.predicted_cov_diag(s, k, y, n)
    assert_allclose(theory.predicted_cov_diag(s, k, 3 * y, n), 9 * c)
    assert_allclose(theory.predicted_disagreement(s, k, y, n), 2 * c.sum())
    # the covariance is c(y) s/(s+kappa)^2, c(y) = kappa^2 (y^T Sigma G^2 y / n)/(1 - df2/n)
    g = 1 / (s + k)
    c_y = k**2 * np.sum(s * g**2 * y**2) / n / (1 - np.sum(s**2 * g**2) / n)
    assert_allclose(c, c_y * s * g**2, rtol=1e-12)
    assert_allclose(theory.wrong_cov_diag_no_amplification(s, k, y, n), c / theory.amplification(s, k, n), rtol=1e-12)
    # the wrong theory: the amplification at sigma^2 = kappa (1 - df1/n) instead of at kappa
    sig2 = 0.05
    wrong = theory.wrong_cov_diag_amplification_at_sigma2(s, k, y, n)
    assert_allclose(wrong / c, (1 - theory.df2(k, s) / n) / (1 - theory.df2(sig2, s) / n), rtol=1e-10)
    assert np.all(wrong > c)  # df2(sigma^2) > df2(kappa): the wrong theory over-amplifies
    with pytest.raises(ValueError, match="shape"):
        theory.predicted_cov_diag(s, k, y[:5], n)


def test_amplification_rankone_and_pair_identity():
    s, n = model.logunif_spectrum(30), 50
    k = theory.kappa(0.1, s, n)
    amp = theory.amplification(s, k, n)
    assert_allclose(amp, 1 / (1 - theory.df2(k, s) / n), rtol=1e-14)
    assert 1 < amp <= k / 0.1 * (1 + 1e-12)  # 1 - df2/n >= lam/kappa (the lemma)
    with pytest.raises(ValueError, match="df2"):
        theory.amplification(s, 1e-6, 5)  # not the renormalised noise of (s, 5)
    # Sigma = I and y = e_1: the rank-one term is 1/d of the rest, and the limit is sigma^4 (d+1)/(1+sigma^2)^4
    full, dropped = (theory.delta_method_variance(np.ones(20), np.eye(20)[0], 0.3),
                     theory.wrong_delta_method_no_rankone(np.ones(20), np.eye(20)[0], 0.3))
    assert_allclose(full / dropped - 1, 1 / 20, rtol=1e-13)
    assert_allclose(full, 0.3**2 * 21 / 1.3**4, rtol=1e-13)
    assert_allclose(theory.split_pair_disagreement([1.0, 2.5]), [2.0, 5.0])


def test_rankone_term_equals_the_bulk_along_the_input_and_is_the_delta_method_at_fixed_d():
    s, n = model.logunif_spectrum(30), 60
    k = theory.kappa(0.05, s, n)
    rng = np.random.default_rng(3)
    amp = theory.amplification(s, k, n)
    for y in (rng.standard_normal(30), np.eye(30)[4] * 2.0, np.ones(30)):
        v = y / np.linalg.norm(y)
        w = theory.rankone_term(s, k, y, n)
        bulk = float(np.sum(theory.predicted_cov_diag(s, k, y, n) * v**2))
        assert_allclose((v @ w) ** 2, bulk, rtol=1e-12)  # along the input: rank-one term = bulk term
        assert_allclose(w, k * s * y / (s + k) ** 2 * np.sqrt(amp / n), rtol=1e-12)  # kappa^2 uu^T amp / n
        assert_allclose(theory.wrong_rankone_unamplified(s, k, y, n), w / np.sqrt(amp), rtol=1e-12)
        assert np.all(theory.wrong_rankone_dropped(s, k, y, n) == 0)
        # homogeneous of degree one in y (the term is quadratic)
        assert_allclose(theory.rankone_term(s, k, 3 * y, n), 3 * w, rtol=1e-12)
    # the trace of bulk + rank-one term at kappa -> sigma^2 and df2/n -> 0 is the fixed-d delta-method limit
    y, sig2, N = rng.standard_normal(30), 0.05, 10**9
    kN = theory.kappa(sig2, s, N)
    total = N * (np.sum(theory.predicted_cov_diag(s, kN, y, N)) + np.sum(theory.rankone_term(s, kN, y, N) ** 2))
    assert_allclose(total, theory.delta_method_variance(s, y, sig2), rtol=1e-6)
    with pytest.raises(ValueError, match="shape"):
        theory.rankone_term(s, k, y[:5], n)
    with pytest.raises(ValueError):
        theory.rankone_term(s, -1.0, y, n)


# ------------------------------------------------------------------------------------------------
# simulation helpers


def test_sample_eigh_and_matrix_functions():
    s, n, reps = model.logunif_spectrum(12), 8, 5
    rng = rng_for(3, "test-eigh")
    ev, V = model.sample_eigh(s, n, reps, rng)
    assert ev.shape == (reps, 12) and V.shape == (reps, 12, 12)
    assert np.all(ev >= 0)
    assert_allclose(np.matmul(V.transpose(0, 2, 1), V), np.broadcast_to(np.eye(12), V.shape), atol=1e-12)
    X = rng_for(3, "test-eigh").standard_normal((reps, n, 12)) * np.sqrt(s)
    S = np.matmul(X.transpose(0, 2, 1), X) / n
    assert_allclose(model.matrix_function_diag(ev, V, lambda x: x), np.diagonal(S, axis1=1, axis2=2), atol=1e-12)
    Y = np.vstack([np.ones(12), np.arange(12.0)])
    out = model.denoiser_outputs(ev, V, Y, 0.3)
    direct = np.einsum("rij,kj->rki", S @ np.linalg.inv(S + 0.3 * np.eye(12)), Y)
    assert_allclose(out, direct, atol=1e-10)
    with pytest.raises(ValueError, match="sigma2"):
        model.denoiser_outputs(ev, V, Y, 0.0)
    with pytest.raises(ValueError, match="columns"):
        model.apply_matrix_function(ev, V, np.sqrt, np.ones((1, 5)))
    with pytest.raises(ValueError, match="mismatch"):
        model.matrix_function_diag(ev[:, :3], V, np.sqrt)


def test_centered_data_equals_n_minus_one_substitution():
    X = rng_for(0, "test-centered").standard_normal((9, 4)) * np.array([2.0, 1.0, 0.5, 0.1])
    H = model.helmert_rows(9)
    assert_allclose(H @ H.T, np.eye(8), atol=1e-14)
    assert_allclose(H @ np.ones(9), 0, atol=1e-14)
    Z = H @ X  # 8 rows, iid N(0, Sigma) when the rows of X are
    assert_allclose(model.centered_covariance(X), Z.T @ Z / 8, atol=1e-13)
    with pytest.raises(ValueError):
        model.centered_covariance(np.ones(3))


def test_jackknife_of_a_mean_is_the_classical_standard_error():
    x = rng_for(0, "test-jk").standard_normal((50, 3))
    est, cov = estimators.jackknife(x, lambda m, _c: m)
    assert_allclose(est, x.mean(axis=0))
    assert_allclose(cov, np.cov(x.T) / 50, rtol=1e-12)
    with pytest.raises(ValueError, match="3 units"):
        estimators.jackknife(x[:2], lambda m, _c: m)


def test_richardson_and_whitening():
    r, c = estimators.richardson(np.array([0.02, 0.01]), np.eye(2) * 1e-4, np.array([0.01, 0.005]), np.eye(2) * 2e-4)
    assert_allclose(r, [0.0, 0.0], atol=1e-15)
    assert_allclose(c, np.eye(2) * 9e-4)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    v = np.array([1.0, -2.0])
    z = estimators.whiten(v, cov)
    assert_allclose(z @ z, v @ np.linalg.solve(cov, v))
    with pytest.raises(ValueError, match="covariance"):
        estimators.whiten(v, np.eye(3))
    with pytest.raises(ValueError, match="shapes"):
        estimators.richardson(np.zeros(2), 1, np.zeros(3), 1)


def test_sizes_spectra_inputs_bad_input():
    assert model.sizes(100, 0.5, 1000) == ((200, 100, 1000), (400, 200, 500))
    with pytest.raises(ValueError, match="multiple of 10"):
        model.sizes(105, 0.5, 1000)
    with pytest.raises(ValueError, match="integer"):
        model.sizes(100, 0.3, 1000)
    with pytest.raises(ValueError, match="unknown spectrum"):
        model.make_spectrum("flat", 10)
    with pytest.raises(ValueError, match="even"):
        model.twolevel_spectrum(7)
    assert_allclose(model.logunif_spectrum(4, 4.0, 5.0)[0], 4 * np.exp(-5 / 8))
    with pytest.raises(ValueError, match="0 < a < b"):
        theory.sampling_map_detequiv(np.ones(3), 10, 2.0, 1.0)
    Y = model.fluct_inputs(model.logunif_spectrum(30), 0.05, rng_for(0, "x"))
    assert Y.shape == (4, 30) and np.count_nonzero(Y[1]) == 1 and np.count_nonzero(Y[2]) == 1


def test_isotropic_shrinkage_is_the_normalized_trace():
    rng = rng_for(2, "test-iso")
    out = model.isotropic_shrinkage(6, 4, 3, [0.1, 1.0], rng)
    X = rng_for(2, "test-iso").standard_normal((3, 4, 6))
    for r in range(3):
        S = X[r].T @ X[r] / 4
        for j, t in enumerate((0.1, 1.0)):
            assert_allclose(out[r, j], t * np.trace(np.linalg.inv(S + t * np.eye(6))) / 6, rtol=1e-10)
    design = model.SplitDesign.from_params({**CHAPTER.defaults(), "d": 20})
    iso_P, iso_2P = model.run_isotropic(design, 10, rngs=[rng_for(0, "a"), rng_for(0, "b")])
    assert (iso_P.d, iso_P.n, iso_2P.d, iso_2P.n) == (20, 40, 40, 80)
    assert iso_P.shrink.shape == (10, 3) and iso_2P.shrink.shape == (5, 3)
    with pytest.raises(ValueError, match="two streams"):
        model.run_isotropic(design, 10, rngs=[rng_for(0, "a")])


def test_peak_mode_input_and_fixed_d_experiment():
    s = model.logunif_spectrum(10)
    y = model.peak_mode_input(s, 0.05)
    m = int(np.flatnonzero(y)[0])
    assert np.count_nonzero(y) == 1 and abs(np.log(s[m] / 0.05)) == np.min(np.abs(np.log(s / 0.05)))
    assert_allclose(y[m], np.sqrt(s[m] + 0.05))
    fd = model.fixed_d_experiment(d=10, ns=[40, 80], reps=7, sigma2=0.05, spectrum="logunif", s_max=4.0,
                                  s_decay=5.0, rngs=[rng_for(0, "a"), rng_for(0, "b")], chunk=3)
    assert fd.ns == (40, 80) and [D.shape for D in fd.denoised] == [(7, 10), (7, 10)]
    with pytest.raises(ValueError, match="one random stream per size"):
        model.fixed_d_experiment(d=10, ns=[40, 80], reps=7, sigma2=0.05, spectrum="logunif", s_max=4.0,
                                 s_decay=5.0, rngs=[rng_for(0, "a")])
    with pytest.raises(ValueError, match="n and 2n"):
        claims.claim_fixed_d("x", model.FixedDData(fd.s, fd.y, 0.05, (40, 100), fd.denoised))


def test_bank_inputs_are_extra_rows_and_leave_the_named_inputs_alone():
    s = model.logunif_spectrum(20)
    rng = rng_for(0, "bank")
    Y = model.fluct_inputs(s, 0.05, rng)
    bank = model.random_inputs(s, 0.05, 3, rng)
    run = model.simulate_splits(s, 40, 6, rng_for(1, "x"), sigma2_list=[0.05], sigma2_fluct=0.05, inputs=Y,
                                a=0.01, b=100.0, bank=bank)
    alone = model.simulate_splits(s, 40, 6, rng_for(1, "x"), sigma2_list=[0.05], sigma2_fluct=0.05, inputs=Y,
                                  a=0.01, b=100.0)
    assert run.bank_denoised.shape == (6, 3, 20) and alone.bank_denoised.shape == (6, 0, 20)
    assert_allclose(run.denoised, alone.denoised, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="bank inputs"):
        model.simulate_splits(s, 40, 6, rng_for(1, "x"), sigma2_list=[0.05], sigma2_fluct=0.05, inputs=Y,
                              a=0.01, b=100.0, bank=np.ones((2, 5)))


# ------------------------------------------------------------------------------------------------
# the model never sees the theory


# ------------------------------------------------------------------------------------------------
# mutation tests: each claim at the defaults, with the right theory and with the named wrong one.
# The data come from the same functions and the same streams as in the notebook.

D = CHAPTER.defaults()


@pytest.fixture(scope="module")
def runs():
    with threadpool_limits(1):  # one core: batched eigh/matmul thrash when BLAS threads compete
        return model.run_sizes(model.SplitDesign.from_params(D),
                               rngs=[rng_for(D["seed"], "datasets", t) for t in ("P", "2P")],
                               input_rngs=[rng_for(D["seed"], "C2-input", t) for t in ("P", "2P")],
                               mean_rngs=[rng_for(D["seed"], "C2-centered", t) for t in ("P", "2P")])


def test_split_design_and_run_sizes_bad_input():
    design = model.SplitDesign.from_params(D)
    assert design.sizes() == model.sizes(D["d"], D["gamma"], D["reps"])
    assert design.a == D["sigma_min"] ** 2 and design.b == D["sigma_max"] ** 2
    with pytest.raises(ValueError, match="two dataset streams"):
        model.run_sizes(design, rngs=[rng_for(0, "x")], input_rngs=[rng_for(0, "y")])
    with pytest.raises(ValueError, match="two mean streams"):
        model.run_sizes(design, rngs=[rng_for(0, "x")] * 2, input_rngs=[rng_for(0, "y")] * 2,
                        mean_rngs=[rng_for(0, "z")])
    with pytest.raises(ValueError, match="one random stream per size"):
        model.rate_experiment(d=10, ns=[20, 40], pairs=5, sigma2=0.05, spectrum="logunif", s_max=4.0, s_decay=5.0,
                              input_rng=rng_for(0, "x"), rngs=[rng_for(0, "y")])


def test_run_sizes_streams_are_independent_per_size(runs):
    """The 2P datasets do not depend on the P stream: rebuilding 2P with another P stream changes nothing."""
    run_P, run_2P = runs
    small = model.SplitDesign.from_params({**D, "d": 20, "reps": 8})
    a = model.run_sizes(small, rngs=[rng_for(0, "a"), rng_for(0, "b")], input_rngs=[rng_for(0, "c"), rng_for(0, "d")])
    b = model.run_sizes(small, rngs=[rng_for(1, "a"), rng_for(0, "b")], input_rngs=[rng_for(1, "c"), rng_for(0, "d")])
    assert_allclose(a[1].denoised, b[1].denoised, rtol=0, atol=0)
    assert not np.allclose(a[0].denoised, b[0].denoised)
    assert run_2P.n == 2 * run_P.n and run_2P.s.size == 2 * run_P.s.size


@pytest.mark.parametrize("j", [0, 1, 2])
def test_mutation_C1_kappa(runs, j):
    run_P, run_2P = runs
    assert claims.claim_kappa("C1", run_P, run_2P, j).passed
    for wrong in (theory.wrong_kappa_unrenormalized, theory.wrong_kappa_ridgeless, theory.wrong_kappa_naive,
                  theory.wrong_kappa_per_mode):
        assert not claims.claim_kappa("C1", run_P, run_2P, j, theory=variant(theory, kappa=wrong)).passed, \
            wrong.__name__


@pytest.fixture(scope="module")
def iso():
    with threadpool_limits(1):
        return model.run_isotropic(model.SplitDesign.from_params(D), D["iso_reps"],
                                   rngs=[rng_for(D["seed"], "C1-iso", t) for t in ("P", "2P")])


def test_mutation_C1_isotropic(iso):
    claim = claims.claim_isotropic("C1iso", *iso)
    assert claim.passed and claim.details["r_inf"].shape == (len(D["sigma2_list"]),)
    other = variant(theory, mp_kappa_isotropic=theory.wrong_mp_kappa_other_root)
    assert not claims.claim_isotropic("C1iso", *iso, theory=other).passed
    # and the Sigma = I closed form is the root of the general equation
    assert not claims.claim_isotropic("C1iso", *iso, theory=variant(
        theory, mp_kappa_isotropic=lambda lam, gamma: theory.wrong_kappa_unrenormalized(lam, np.ones(2), 2))).passed


def test_mutation_C2_bank_rejects_the_amplification_at_the_nominal_noise(runs):
    """The wrong theory 1/(1 - df2(sigma^2)/n), is rejected by the pooled claim with a wide margin."""
    run_P, run_2P = runs
    claim = claims.claim_bank("C2bank", run_P, run_2P)
    assert claim.passed and run_P.bank.shape == (D["bank_inputs"], run_P.s.size)
    wrong = claims.claim_bank("C2bank", run_P, run_2P, theory=variant(
        theory, predicted_cov_diag=theory.wrong_cov_diag_amplification_at_sigma2))
    assert not wrong.passed
    assert abs(wrong.measured - 1) / wrong.details["se_inf"][0] > 10
    assert not claims.claim_bank("C2bank", run_P, run_2P, theory=variant(
        theory, predicted_cov_diag=theory.wrong_cov_diag_no_amplification)).passed


MUTANTS_C2 = {"random": {"predicted_cov_diag": theory.wrong_cov_diag_no_amplification},
              "top": {"predicted_cov_diag": theory.wrong_cov_diag_input_blind},
              "mid": {"kappa": theory.wrong_kappa_unrenormalized},
              "flat": {"predicted_cov_diag": theory.wrong_cov_diag_no_amplification}}


@pytest.mark.parametrize("k,name", list(enumerate(model.INPUT_NAMES)))
def test_mutation_C2_variance(runs, k, name):
    run_P, run_2P = runs
    claim = claims.claim_variance("C2", run_P, run_2P, k)
    assert claim.passed
    assert claim.measured == 1 + claim.details["r_inf"][0] and claim.tolerance > 0
    assert not claims.claim_variance("C2", run_P, run_2P, k, theory=variant(theory, **MUTANTS_C2[name])).passed


def test_mutation_C2_profile(runs):
    run_P, run_2P = runs
    assert claims.claim_profile("C2p", run_P, run_2P, 0).passed
    iso = variant(theory, predicted_cov_diag=theory.wrong_cov_diag_isotropic_profile)
    assert not claims.claim_profile("C2p", run_P, run_2P, 0, theory=iso).passed


def test_mutation_C2_own_direction(runs):
    run_P, run_2P = runs
    claim = claims.claim_own_direction("C2o", run_P, run_2P)
    assert claim.passed and claim.details["r_inf"].shape == (len(model.INPUT_NAMES),)
    dropped = variant(theory, rankone_term=theory.wrong_rankone_dropped)
    assert not claims.claim_own_direction("C2o", run_P, run_2P, theory=dropped).passed
    pooled = claims.claim_own_direction("C2b", run_P, run_2P, pooled=True)
    assert pooled.passed and pooled.measured == 1 + pooled.details["r_inf"][0] and pooled.tolerance > 0
    for wrong in (theory.wrong_rankone_dropped, theory.wrong_rankone_unamplified):
        bad = variant(theory, rankone_term=wrong)
        assert not claims.claim_own_direction("C2b", run_P, run_2P, pooled=True, theory=bad).passed


def test_mutation_C2_centered_rejects_the_known_mean_formula(runs):
    """The mean's own term: right theory passes; the known-mean formula (term 0) and the unamplified term fail,
    the former without dividing by zero."""
    run_P, run_2P = runs
    claim = claims.claim_centered("C2c", run_P, run_2P)
    assert claim.passed and claim.details["r_inf"].shape == (1,)
    known_mean = variant(theory, centered_mean_term=theory.wrong_centered_mean_ignored)
    wrong = claims.claim_centered("C2c", run_P, run_2P, theory=known_mean)
    assert not wrong.passed
    assert_allclose(wrong.details["r_p"], [-1.0]) and assert_allclose(wrong.details["r_inf"], [-1.0])
    unamp = variant(theory, centered_mean_term=theory.wrong_centered_mean_unamplified)
    bad = claims.claim_centered("C2c", run_P, run_2P, theory=unamp)
    assert not bad.passed
    assert abs(bad.measured - 1) > 10 * claim.details["se_inf"][0]


def test_centered_totals_are_the_sum_of_the_two_checked_parts(runs):
    """Illustration of part (c): the centered totals of top, mid and flat match bulk + mean term."""
    ex = claims.centered_totals(*runs)
    z = ex["r_inf"] / ex["se_inf"]
    assert ex["r_inf"].shape == (4,) and np.all(np.abs(z[1:]) < 3.29)
    with pytest.raises(ValueError, match="centered model"):
        claims.centered_mean_ratio(model.simulate_splits(
            model.logunif_spectrum(6), 12, 5, rng_for(4, "x"), sigma2_list=[0.05], sigma2_fluct=0.05,
            inputs=np.eye(6)[:2], a=0.01, b=1.0))


def test_wrong_centered_mean_unamplified_is_the_term_without_amplification():
    s, n, lam = model.logunif_spectrum(40), 80, 0.05
    kap = theory.kappa(lam, s, n)
    assert_allclose(theory.wrong_centered_mean_unamplified(s, kap, n, n + 1) * theory.amplification(s, kap, n),
                    theory.centered_mean_term(s, kap, n, n + 1), rtol=1e-12)


def test_centered_mean_term_is_the_ridge_bias_over_N():
    s, n, lam = model.logunif_spectrum(40), 80, 0.05
    kap = theory.kappa(lam, s, n)
    g = 1 / (s + kap)
    assert_allclose(theory.centered_mean_term(s, kap, n, n + 1),
                    kap**2 * s * g**2 * theory.amplification(s, kap, n) / (n + 1), rtol=1e-12)
    with pytest.raises(ValueError):
        theory.centered_mean_term(s, kap, n, 0)


def test_centered_shift_is_sigma2_R_xbar_and_leaves_the_other_features_alone():
    """The centered model's output D_hat(y) + sigma^2 R xbar equals
    xbar + Sigma_hat (Sigma_hat + sigma^2)^{-1}(y - xbar) computed directly, with xbar ~ N(0, Sigma/(n+1)) drawn
    from its own stream, which changes no other feature."""
    s = model.logunif_spectrum(6)
    Y = model.fluct_inputs(s, 0.05, np.random.default_rng(3))
    kw = dict(sigma2_list=[0.05], sigma2_fluct=0.05, inputs=Y, a=0.01, b=1.0)
    run = model.simulate_splits(s, 12, 5, rng_for(4, "x"), mean_rng=rng_for(4, "m"), **kw)
    plain = model.simulate_splits(s, 12, 5, rng_for(4, "x"), **kw)
    assert_allclose(run.denoised, plain.denoised, rtol=0, atol=0)
    assert plain.centered_shift is None and run.n_centered == 13
    with pytest.raises(ValueError, match="centered model"):
        plain.centered(0)
    X = rng_for(4, "x").standard_normal((5, 12, 6)) * np.sqrt(s)  # the same datasets as sample_eigh draws
    xbar = rng_for(4, "m").standard_normal((5, 6)) * np.sqrt(s / 13)
    for r in range(5):
        S = X[r].T @ X[r] / 12
        direct = xbar[r] + S @ np.linalg.solve(S + 0.05 * np.eye(6), Y[1] - xbar[r])
        assert_allclose(run.centered(1)[r], direct, atol=1e-10)


def test_own_direction_statistic_without_a_bank_uses_the_named_inputs_only():
    s = model.logunif_spectrum(12)
    rng = np.random.default_rng(0)
    Y = model.fluct_inputs(s, 0.05, rng)
    run = model.simulate_splits(s, 24, 40, rng, sigma2_list=[0.05], sigma2_fluct=0.05, inputs=Y, a=0.01, b=1.0)
    r, cov = claims.own_direction_ratio(run)
    assert r.shape == (Y.shape[0],) and cov.shape == (Y.shape[0],) * 2
    # by hand: the unbiased variance of v^T D_hat(y) over the datasets against the prediction
    k = theory.kappa(0.05, s, 24)
    v = Y[1] / np.linalg.norm(Y[1])
    pred = np.sum(theory.predicted_cov_diag(s, k, Y[1], 24) * v**2) + (v @ theory.rankone_term(s, k, Y[1], 24)) ** 2
    assert_allclose(r[1], np.var(run.denoised[:, 1, :] @ v, ddof=1) / pred - 1, rtol=1e-10)
    with pytest.raises(ValueError, match="bank"):
        claims.claim_own_direction("x", run, run, pooled=True)


@pytest.mark.parametrize("factor,holds", [(2.0, True), (1.0, False)])
def test_split_pairs_of_the_sampler_disagree_by_twice_the_variance(runs, factor, holds):
    """E|D1 - D2|^2 = 2 tr Cov for any two i.i.d. datasets: a check of the split sampler (datasets 2j and
    2j+1 independent), not of the theory. Whitened chi2 over the inputs, delete-one-pair jackknife."""
    run_P, _ = runs
    k, d = run_P.denoised.shape[1], run_P.denoised.shape[2]

    def stat(m: np.ndarray, count: int) -> np.ndarray:
        pair, v = estimators.pair_moments(m, count, k, d)
        out = pair - factor * v
        return out if out.shape[0] > 1 else out[0]

    delta, cov = estimators.jackknife(model_stats.pair_features(run_P), stat)
    assert delta.shape == (len(model.INPUT_NAMES),)
    assert check_chi2("pairs", estimators.whiten(delta, cov), "sampler check").passed is holds


@pytest.fixture(scope="module")
def rate():
    with threadpool_limits(1):
        return model.rate_experiment(d=D["rate_d"], ns=D["rate_n"], pairs=D["rate_pairs"], sigma2=D["sigma2_fluct"],
                                     spectrum=D["spectrum"], s_max=D["s_max"], s_decay=D["s_decay"],
                                     input_rng=rng_for(D["seed"], "C3-input"),
                                     rngs=[rng_for(D["seed"], "C3", str(n)) for n in D["rate_n"]])


def test_mutation_C3_rate(rate):
    claim = claims.claim_rate("C3", rate, D["rate_fit_from"], rng_for(D["seed"], "C3-boot"))
    assert claim.passed
    win = claim.details["window"]
    assert win.sum() >= 3 and np.all(rate.ns[win] >= D["rate_fit_from"])
    assert -1.2 < claim.predicted < -1.0  # steeper than -1 at moderate n (kappa(n) and df2/n fall)
    for wrong, slope in ((theory.wrong_disagreement_inverse_sqrt_n, -0.5), (theory.wrong_disagreement_inverse_n, -1.0)):
        bad = claims.claim_rate("C3", rate, D["rate_fit_from"], rng_for(D["seed"], "C3-boot"),
                                theory=variant(theory, predicted_disagreement=wrong))
        assert_allclose(bad.predicted, slope, rtol=1e-12)
        assert not bad.passed, wrong.__name__
    with pytest.raises(ValueError, match="fewer than 3"):
        claims.claim_rate("C3", rate, 1000, rng_for(D["seed"], "C3-boot"))


@pytest.fixture(scope="module")
def fixed_d():
    ns = [D["rankone_n"], 2 * D["rankone_n"]]
    with threadpool_limits(1):
        return model.fixed_d_experiment(d=D["rankone_d"], ns=ns, reps=D["rankone_reps"], sigma2=D["sigma2_fluct"],
                                        spectrum=D["spectrum"], s_max=D["s_max"], s_decay=D["s_decay"],
                                        rngs=[rng_for(D["seed"], "C3-fixed-d", str(n)) for n in ns])


def test_mutation_C3_fixed_d_rank_one_term(fixed_d):
    claim = claims.claim_fixed_d("C3d", fixed_d)
    assert claim.passed
    dropped = claims.claim_fixed_d("C3d", fixed_d, theory=variant(
        theory, delta_method_variance=theory.wrong_delta_method_no_rankone))
    assert not dropped.passed


def test_mutation_C4_fractional(runs):
    run_P, run_2P = runs
    wrong = {"smap": {"sampling_map_detequiv": theory.wrong_sampling_map_plugin},
             "smid": {"sampling_map_detequiv": theory.wrong_sampling_map_plugin},
             "ssqrt": {"sqrt_detequiv": theory.wrong_sqrt_plugin}}
    for which in ("smap", "smid", "ssqrt"):
        assert claims.claim_fractional("C4", run_P, run_2P, which).passed
        assert not claims.claim_fractional("C4", run_P, run_2P, which, theory=variant(theory, **wrong[which])).passed
    with pytest.raises(ValueError, match="which"):
        claims.claim_fractional("C4", run_P, run_2P, "other")
    with pytest.raises(ValueError, match="which"):
        claims.fractional_stat(run_P, "other", np.ones(run_P.s.size))


def test_midpoint_map_is_the_trajectory_stopped_at_sqrt_ab():
    """smid = diag (Sigma_hat + sqrt(ab))^{1/2} (Sigma_hat + b)^{-1/2}, by hand from one dataset's eigenpairs;
    the claims predict it at the same a_mid."""
    s = model.logunif_spectrum(12)
    rng = np.random.default_rng(3)
    Y = model.fluct_inputs(s, 0.05, rng)
    run = model.simulate_splits(s, 24, 4, rng_for(2, "mid"), sigma2_list=[0.05], sigma2_fluct=0.05, inputs=Y,
                                a=0.01, b=4.0, chunk=1)
    assert run.a_mid == pytest.approx(0.2, rel=1e-15)
    ev, V = model.sample_eigh(s, 24, 1, rng_for(2, "mid"))
    by_hand = np.einsum("ij,j,ij->i", V[0], np.sqrt((ev[0] + 0.2) / (ev[0] + 4.0)), V[0])
    assert_allclose(run.smid[0], by_hand, rtol=1e-12)
    assert_allclose(claims.fractional_prediction(run, "smid"), theory.sampling_map_detequiv(s, 24, 0.2, 4.0))
    assert not np.allclose(run.smid, run.smap)
    with pytest.raises(ValueError, match="0 < a < b"):
        model.trajectory_midpoint(4.0, 1.0)


# ------------------------------------------------------------------------------------------------
# C5: two resolvents at different noise levels, and the disagreement of generated samples


def _closed_form_profile(s: np.ndarray, n: int, a: float, b: float) -> np.ndarray:
    """2 [1 - (b - a) (kappa_b/b)/(s + kappa_b) - m^2]: M_hat^2 = I - (b - a) R(b) exactly, so E[M_hat^2] needs only
    the first-order equivalent at b; m is the C4 equivalent of E[M_hat] (adaptive quadrature)."""
    kb = theory.kappa(b, s, n)
    m = theory.sampling_map_detequiv(s, n, a, b)
    return 2 * (1 - (b - a) * (kb / b) / (s + kb) - m**2)


@pytest.mark.parametrize("d,n", [(40, 80), (60, 30)])
def test_two_resolvent_lemma_reduces_to_theorem_2_at_equal_arguments_and_is_symmetric(d, n):
    s = model.logunif_spectrum(d)
    a = np.random.default_rng(0).uniform(0.1, 1.0, d)
    for lam in (0.01, 0.3):
        k = theory.kappa(lam, s, n)
        assert_allclose(theory.two_resolvent_equivalent(s, k, k, a, n),
                        np.diag(theory.second_order_equivalent(s, k, np.diag(a), n)), rtol=1e-13)
        assert_allclose(theory.cross_amplification(s, k, k, n), theory.amplification(s, k, n), rtol=1e-14)
    kl, km = theory.kappa(0.02, s, n), theory.kappa(1.5, s, n)
    assert_allclose(theory.two_resolvent_equivalent(s, kl, km, a, n), theory.two_resolvent_equivalent(s, km, kl, a, n),
                    rtol=1e-14)
    assert_allclose(theory.resolvent_covariance(s, kl, km, n), theory.resolvent_covariance(s, km, kl, n), rtol=1e-13)
    grid = np.array([theory.kappa(v, s, n) for v in (0.01, 0.1, 1.0)])
    batch = theory.two_resolvent_equivalent(s, grid[:, None], grid[None, :], a, n)
    assert batch.shape == (3, 3, d)
    assert_allclose(batch[0, 2], theory.two_resolvent_equivalent(s, grid[0], grid[2], a, n), rtol=1e-14)


@pytest.mark.parametrize("d,n", [(40, 80), (60, 30), (100, 100)])
def test_two_resolvent_lemma_with_A_identity_is_the_divided_difference_of_first_order(d, n):
    """R(lam) R(mu) = (R(lam) - R(mu))/(mu - lam) exactly; the lemma at A = I reproduces it for the equivalents."""
    s = model.logunif_spectrum(d)
    for lam, mu in ((0.01, 4.0), (0.2, 0.25), (1e-3, 1e-2)):
        kl, km = theory.kappa(lam, s, n), theory.kappa(mu, s, n)
        e_l, e_m = kl / lam / (s + kl), km / mu / (s + km)
        assert_allclose(theory.two_resolvent_equivalent(s, kl, km, 1.0, n), lam * mu * (e_l - e_m) / (mu - lam),
                        rtol=1e-9)


def test_resolvent_covariance_and_amplification_are_positive():
    s, n = model.logunif_spectrum(100), 50  # d > n
    ks = np.array([theory.kappa(v, s, n) for v in np.geomspace(1e-3, 10, 12)])
    amp = theory.cross_amplification(s, ks[:, None], ks[None, :], n)
    assert np.all(amp >= 1) and np.all(np.isfinite(amp))
    df2 = np.array([theory.df2(k, s) for k in ks])
    assert np.all(1 - 1 / amp <= np.sqrt(df2[:, None] * df2[None, :]) / n * (1 + 1e-12))  # Cauchy-Schwarz
    assert np.all(theory.resolvent_covariance(s, ks[:, None], ks[None, :], n) > 0)
    assert np.all(theory.sample_disagreement_profile(s, n, 0.01, 4.0) > 0)
    with pytest.raises(ValueError, match="renormalised noises"):
        theory.cross_amplification(s, 1e-9, 1e-9, n)


@pytest.mark.parametrize("d,n,a,b,kind", [(100, 200, 0.01, 4.0, "logunif"), (200, 400, 0.01, 4.0, "logunif"),
                                          (100, 50, 4e-4, 4.0, "logunif"), (80, 320, 4e-4, 100.0, "twolevel"),
                                          (40, 400, 1e-8, 1e4, "logunif"), (20, 200, 0.5, 1.0, "logunif")])
def test_double_integral_matches_the_closed_form(d, n, a, b, kind):
    """The quadrature of the double integral against the closed form (two routes to the same equivalent)."""
    s = model.make_spectrum(kind, d)
    assert_allclose(theory.sample_disagreement_profile(s, n, a, b), _closed_form_profile(s, n, a, b), rtol=1e-7)


def test_sample_disagreement_profile_limits_and_inputs():
    s = model.logunif_spectrum(30)
    far = theory.sample_disagreement_profile(s, 10**9, 0.01, 4.0)
    assert np.all(far < 1e-6)  # n -> inf: the splits agree
    D = theory.sample_disagreement_profile(s, 60, 0.01, 4.0)
    Z = np.random.default_rng(1).standard_normal((3, 30))
    assert_allclose(theory.sample_disagreement(s, 60, 0.01, 4.0, Z), Z**2 @ D, rtol=1e-14)
    assert_allclose(theory.sample_disagreement(s, 60, 0.01, 4.0, np.eye(30)[4]), D[4:5], rtol=1e-14)
    with pytest.raises(ValueError, match="columns"):
        theory.sample_disagreement(s, 60, 0.01, 4.0, np.ones((2, 5)))
    with pytest.raises(ValueError, match="0 < a < b"):
        theory.sample_disagreement_profile(s, 60, 4.0, 0.01)
    flat = theory.wrong_sample_disagreement_flat(s, 60, 0.01, 4.0, 2 * np.eye(30)[[0, 10, 29]])
    assert_allclose(flat, 4 * np.mean(D), rtol=1e-14)
    unamp = theory.wrong_sample_disagreement_unamplified(s, 60, 0.01, 4.0, np.eye(30))
    assert np.all(unamp < D)
    single = theory.wrong_sample_disagreement_single_kappa(s, 60, 0.01, 4.0, np.eye(30))
    assert not np.allclose(single, D, rtol=0.02)
    k = theory.kappa(0.1, s, 60)
    assert_allclose(theory.wrong_resolvent_covariance_unamplified(s, k, k, 60)
                    * theory.amplification(s, k, 60), theory.resolvent_covariance(s, k, k, 60), rtol=1e-12)


def test_gauss_sin2_rule_integrates_the_scalar_identity():
    for a, b in ((0.01, 4.0), (1e-8, 1e4), (0.5, 1.0)):
        u, w = numerics.gauss_sin2(a, b)
        assert np.all(np.diff(u) > 0) and u[0] > 0 and u[-1] < np.pi / 2
        t = a + (b - a) * np.sin(u) ** 2
        for x in (0.0, 0.03, 2.0):
            approx = 1 - np.sum(w * 2 * (b - a) * np.sin(u) ** 2 / (x + t)) / np.pi
            assert_allclose(approx, np.sqrt((x + a) / (x + b)), rtol=1e-9)


def test_sample_inputs_generated_samples_and_the_pair_identity():
    Z, modes = model.sample_inputs(50, np.random.default_rng(0))
    assert Z.shape == (len(model.SAMPLE_MODES) + 1, 50)
    assert modes[0] == 0 and modes[-1] == 49
    assert_allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-14)
    s = model.logunif_spectrum(12)
    Z, _ = model.sample_inputs(12, np.random.default_rng(1))
    out = model.generated_samples(s, 24, 5, rng_for(4, "gen"), Z, 0.01, 4.0, chunk=2)
    ev, V = model.sample_eigh(s, 24, 1, rng_for(4, "gen"))
    M = V[0] @ np.diag(np.sqrt((ev[0] + 0.01) / (ev[0] + 4.0))) @ V[0].T
    assert_allclose(out[0], Z @ M.T, rtol=1e-10, atol=1e-14)
    R_b = V[0] @ np.diag(1 / (ev[0] + 4.0)) @ V[0].T
    assert_allclose(M @ M, np.eye(12) - (4.0 - 0.01) * R_b, atol=1e-12)  # M^2 = I - (b - a) R(b)
    # the mean over all pairs of datasets of |O_r - O_q|^2 is exactly 2 x the unbiased total variance
    flat = out.reshape(5, -1)
    means = model_stats.var_features(flat).mean(axis=0)
    pairs = [np.sum((out[r] - out[q]) ** 2, axis=-1) for r in range(5) for q in range(5) if r != q]
    assert_allclose(estimators.mean_pair_disagreement(means, 5, Z.shape[0]), np.mean(pairs, axis=0), rtol=1e-10)
    with pytest.raises(ValueError, match="0 < a < b"):
        model.generated_samples(s, 24, 5, rng_for(4, "gen"), Z, 4.0, 0.01)


@pytest.fixture(scope="module")
def samples():
    with threadpool_limits(1):
        return model.run_samples(model.SplitDesign.from_params(D),
                                 rngs=[rng_for(D["seed"], "C5", t) for t in ("P", "2P")],
                                 input_rngs=[rng_for(D["seed"], "C5-input", t) for t in ("P", "2P")])


def test_run_samples_streams_and_bad_input(samples):
    run_P, run_2P = samples
    assert run_2P.n == 2 * run_P.n and run_2P.s.size == 2 * run_P.s.size
    assert run_P.samples.shape == (D["reps"], len(model.SAMPLE_MODES) + 1, D["d"])
    small = model.SplitDesign.from_params({**D, "d": 20, "reps": 8})
    a = model.run_samples(small, rngs=[rng_for(0, "a"), rng_for(0, "b")], input_rngs=[rng_for(0, "c"), rng_for(0, "d")])
    b = model.run_samples(small, rngs=[rng_for(1, "a"), rng_for(0, "b")], input_rngs=[rng_for(1, "c"), rng_for(0, "d")])
    assert_allclose(a[1].samples, b[1].samples, rtol=0, atol=0)
    assert not np.allclose(a[0].samples, b[0].samples)
    with pytest.raises(ValueError, match="two dataset streams"):
        model.run_samples(small, rngs=[rng_for(0, "a")], input_rngs=[rng_for(0, "c")])


@pytest.mark.parametrize("wrong", ["flat", "unamplified", "single_kappa"])
def test_mutation_C5_sample_disagreement(samples, wrong):
    run_P, run_2P = samples
    assert claims.claim_sample_disagreement("C5", run_P, run_2P).passed
    bad = variant(theory, sample_disagreement=getattr(theory, f"wrong_sample_disagreement_{wrong}"))
    assert not claims.claim_sample_disagreement("C5", run_P, run_2P, theory=bad).passed
