"""Tests of chapter 'heavy-tail-clipped-sgd': the theory, the model, and one mutation test per claim."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, stats

from theorylib.chapters.heavy_tail_clipped_sgd import claims, model, theory
from theorylib.core import rng_for
from theorylib.core.theory import nan_after_first, variant

LAM = 1.0


# ---------------------------------------------------------------- model: clipping and SGD


def test_clip_caps_the_norm_and_is_identity_inside_the_ball():
    rng = rng_for(0, "t-clip")
    g = rng.standard_normal((500, 4)) * rng.exponential(2.0, (500, 1))
    c = model.clip(g, 1.3)
    assert np.all(np.linalg.norm(c, axis=1) <= 1.3 * (1 + 1e-15))
    inside = np.linalg.norm(g, axis=1) <= 1.3
    assert_array_equal(c[inside], g[inside])
    outside = ~inside
    assert_allclose(np.linalg.norm(c[outside], axis=1), 1.3, rtol=1e-14)
    # direction kept
    assert_allclose(c[outside] / 1.3, g[outside] / np.linalg.norm(g[outside], axis=1, keepdims=True),
                    rtol=1e-12)
    assert_array_equal(model.clip(g, np.inf), g)
    assert_array_equal(model.clip(np.zeros((2, 3)), 0.5), np.zeros((2, 3)))


def _step(w, z, c, tau, lam=LAM):
    return w - (c / lam) * model.clip(lam * w - z, tau)


def test_clipped_step_is_nonexpansive_for_c_in_0_2():
    rng = rng_for(0, "t-nonexp")
    for _ in range(200):
        d = int(rng.integers(1, 6))
        c = float(rng.uniform(0, 2))
        tau = float(rng.exponential(1.0)) + 1e-3
        w, w2 = rng.standard_normal((2, 1, d)) * rng.exponential(2.0)
        z = rng.standard_normal((1, d)) * 3
        lhs = np.linalg.norm(_step(w, z, c, tau) - _step(w2, z, c, tau))
        assert lhs <= np.linalg.norm(w - w2) * (1 + 1e-12)


def test_step_beyond_two_expands_inside_the_ball():
    # c = 3 inside the ball: the map is w -> (1 - c) w + c z / lam, factor |1 - c| = 2
    w, w2, z = np.array([[0.1]]), np.array([[0.2]]), np.array([[0.0]])
    d = np.linalg.norm(_step(w, z, 3.0, 10.0) - _step(w2, z, 3.0, 10.0))
    assert_allclose(d, 2 * 0.1, rtol=1e-12)


def test_unclipped_harmonic_sgd_is_the_average_of_the_used_samples():
    rng = rng_for(0, "t-avg")
    R, n, d = 7, 12, 3
    Z = rng.standard_normal((R, n, d))
    idx = rng.integers(0, n, (R, n))
    w = model.sgd_quadratic_linear(Z, idx, 2.0, model.harmonic_schedule(n, 2.0))
    expected = Z[np.arange(R)[:, None], idx].mean(axis=1) / 2.0
    assert_allclose(w, expected, rtol=1e-12, atol=1e-14)


def test_unclipped_sgd_equals_the_weighted_sum_of_the_theorem():
    rng = rng_for(0, "t-weights")
    R, n, d, lam = 5, 10, 2, 0.7
    etas = rng.uniform(0.1, 2.0, n) / lam
    Z = rng.standard_normal((R, n, d))
    idx = rng.integers(0, n, (R, n))
    w = model.sgd_quadratic_linear(Z, idx, lam, etas)
    c = theory.unclipped_weights(lam, etas)
    assert_allclose(w, np.einsum("t,rtd->rd", c, Z[np.arange(R)[:, None], idx]), rtol=1e-10, atol=1e-12)


def test_clipped_iterates_obey_the_norm_bound():
    rng = rng_for(0, "t-norm")
    Z = model.sym_pareto(rng, (300, 40, 2), 1.2)
    idx = rng.integers(0, 40, (300, 40))
    etas = model.harmonic_schedule(40, 1.0)
    w = model.sgd_quadratic_linear(Z, idx, 1.0, etas, 0.3)
    assert np.all(np.linalg.norm(w, axis=1) <= 0.3 * etas.sum() * (1 + 1e-12))


def test_coupled_runs_with_identical_data_do_not_diverge():
    rng = rng_for(0, "t-couple")
    Z = rng.standard_normal((20, 15, 3))
    idx = rng.integers(0, 15, (20, 15))
    div, used = model.coupled_divergence(Z, Z[:, 0], idx, 0, 1.0, model.harmonic_schedule(15, 1.0), 0.5)
    assert_array_equal(div, 0.0)
    assert_allclose(used, ((idx == 0) * model.harmonic_schedule(15, 1.0)).sum(axis=1))


def test_unused_sample_gives_zero_divergence():
    rng = rng_for(0, "t-unused")
    Z = rng.standard_normal((10, 8, 2))
    idx = rng.integers(1, 8, (10, 8))  # sample 0 never used
    div, used = model.coupled_divergence(Z, rng.standard_normal((10, 2)), idx, 0, 1.0,
                                         model.harmonic_schedule(8, 1.0), 0.5)
    assert_array_equal(div, 0.0)
    assert_array_equal(used, 0.0)


def test_gap_estimates_is_the_inner_product():
    rng = rng_for(0, "t-gap")
    w, Z, mu = rng.standard_normal((4, 3)), rng.standard_normal((4, 6, 3)), rng.standard_normal(3)
    assert_allclose(model.gap_estimates(w, Z, mu), np.sum(w * (Z.mean(axis=1) - mu), axis=1))


# ---------------------------------------------------------------- theory


def test_unclipped_gap_closed_forms():
    for lam in (0.5, 1.0, 3.0):
        for T in (1, 7, 50):
            assert_allclose(theory.unclipped_gap_exact(2.0, 10, lam, model.harmonic_schedule(T, lam)),
                            2.0 / (lam * 10), rtol=1e-12)
            eta = 0.3 / lam
            assert_allclose(theory.unclipped_gap_exact(2.0, 10, lam, model.constant_schedule(T, eta)),
                            2.0 * (1 - (1 - eta * lam) ** T) / (lam * 10), rtol=1e-12)


def test_student_t_moments_match_quadrature():
    for nu in (1.5, 3.0, 4.5, 10.0):
        q, _ = integrate.quad(lambda x, nu=nu: abs(x) * stats.t.pdf(x, nu), -np.inf, np.inf)
        assert_allclose(theory.student_t_abs_mean(nu), q, rtol=1e-7)
    assert_allclose(theory.student_t_abs_mean(math.inf), math.sqrt(2 / math.pi))
    for nu in (2.5, 6.0):
        assert_allclose(theory.student_t_var(nu), stats.t.var(nu), rtol=1e-12)
    assert theory.student_t_var(math.inf) == 1.0


def _pareto_moments_by_quadrature(tau: float, nu: float) -> list[float]:
    def pdf(x):
        return nu * x ** (-nu - 1)

    m1 = integrate.quad(lambda x: x * pdf(x), 1, tau)[0] + tau * tau ** (-nu)
    m2 = integrate.quad(lambda x: x * x * pdf(x), 1, tau)[0] + tau**2 * tau ** (-nu)
    b = integrate.quad(lambda x: x ** (-nu), tau, np.inf)[0]
    return [m1, m2, b]


def test_pareto_moments_match_quadrature():
    for nu in (1.2, 1.5, 1.8):
        for tau in (1.0, 3.0, 50.0):
            assert_allclose(theory.pareto_truncated_moments(tau, nu), _pareto_moments_by_quadrature(tau, nu),
                            rtol=1e-8)


def test_samplers_have_the_right_laws():
    rng = rng_for(0, "t-laws")
    x = model.pareto(rng, (200_000,), 1.5)
    assert x.min() >= 1.0
    assert stats.kstest(x, stats.pareto(1.5).cdf).pvalue > 1e-3
    s = model.sym_pareto(rng, (200_000,), 1.5)
    assert stats.kstest(np.abs(s), stats.pareto(1.5).cdf).pvalue > 1e-3
    assert abs(np.mean(s > 0) - 0.5) < 3.29 * 0.5 / math.sqrt(s.size)
    t = model.student_t(rng, (200_000,), 5.0)
    assert stats.kstest(t, stats.t(5.0).cdf).pvalue > 1e-3
    assert model.pareto_mean(1.5) == 3.0


def test_sharp_case_of_the_stability_bound():
    # d = 1, the replaced sample used only at the last step, clipped in opposite directions
    n = 5
    etas = model.harmonic_schedule(n, 1.0)
    Z = np.array([[[0.0], [0.1], [-0.1], [0.2], [-0.2]]])
    idx = np.array([[1, 2, 3, 4, 0]])
    Z[0, 0, 0] = -50.0
    div, used = model.coupled_divergence(Z, np.array([[50.0]]), idx, 0, 1.0, etas, 0.5)
    assert_allclose(div / theory.stability_bound(0.5, used), 1.0, rtol=1e-12)


def test_small_tau_fit_recovers_a_known_line():
    taus = np.array([0.01, 0.02, 0.04, 0.08])
    rng = rng_for(0, "t-fit")
    a, b = 0.3, -0.7
    G = (a + b * taus + 0.01 * rng.standard_normal((4000, 4))) * taus
    ah, ase, bh, bse = claims.small_tau_fit(G, taus)
    assert abs(ah - a) < 3.29 * ase and abs(bh - b) < 3.29 * bse


def test_sampling_fit_recovers_a_known_exponent():
    ns = np.array([30, 100, 300, 1000, 3000])
    rng = rng_for(0, "t-sfit")
    mean = 2.0 * ns ** -0.2 * (1 + 0.3 * ns ** (-(2 / 1.5 - 1)))
    S = mean * np.exp(0.05 * rng.standard_normal((5000, 5)))
    coef, se, _ = claims.sampling_fit(S, ns, 1.5)
    assert abs(coef[1] + 0.2) < 3.29 * se[1] + 1e-3


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("call", [
    lambda: model.clip(np.ones(3), 0.0),
    lambda: model.clip(np.ones(3), -1.0),
    lambda: theory.student_t_abs_mean(1.0),
    lambda: theory.student_t_var(2.0),
    lambda: model.pareto_mean(1.0),
    lambda: theory.pareto_truncated_moments(0.5, 1.5),
    lambda: theory.pareto_truncated_moments(3.0, 2.5),
    lambda: theory.unclipped_gap_exact(1.0, 10, 1.0, np.array([2.5])),
    lambda: theory.unclipped_gap_exact(1.0, 10, 1.0, np.array([])),
    lambda: theory.clipped_gap_bound(0.0, 10, np.ones(3), 1.0),
    lambda: theory.sampling_exponent(2.5, 0.5),
    lambda: model.sgd_quadratic_linear(np.ones((2, 3, 1)), np.zeros((3, 3), int), 1.0, np.ones(3)),
    lambda: model.sgd_quadratic_linear(np.ones((2, 3, 1)), np.zeros((2, 3), int), 1.0, np.ones(2)),
    lambda: model.sgd_quadratic_linear(np.ones((2, 3, 1)), np.zeros((2, 3), int), 1.0, np.full(3, 2.5)),
    lambda: model.sgd_quadratic_linear(np.ones((2, 3, 1)), np.full((2, 3), 3), 1.0, np.ones(3)),
    lambda: model.coupled_divergence(np.ones((2, 3, 1)), np.ones((2, 2)), np.zeros((2, 3), int), 0, 1.0,
                                     np.ones(3), 1.0),
    lambda: model.harmonic_schedule(0, 1.0),
    lambda: model.draw_noise(rng_for(0, "bad"), (2,), "cauchy", 1.0),
    lambda: model.draw_noise(rng_for(0, "bad"), (2,), "t", 0.0),
    lambda: model.sgd_least_squares(np.full((1, 2, 2), 1.0), np.zeros((1, 2)), np.zeros((1, 3), int),
                                     np.full(3, 1.5)),
    lambda: model.sgd_least_squares(np.ones((1, 2, 2)), np.zeros((1, 3)), np.zeros((1, 3), int), np.ones(3)),
    lambda: model.ls_pair_run(rng_for(0, "bad"), 1.5, 2, 3, 2, np.ones(3), 1.0, np.ones(3)),
    lambda: theory.grad_stability_bound(1.0, 0, np.ones(2)),
    lambda: model.sphere(rng_for(0, "bad"), (2,), 0),
])
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------- claims: hold, and reject their wrong theory


@pytest.fixture(scope="module")
def c1_data():
    gaps, sets = [], []
    for nu in (math.inf, 10.0):
        for n in (20, 40):
            etas = model.harmonic_schedule(n, LAM)
            gaps.append(model.gap_run(rng_for(0, "t-C1", str(nu), str(n)), "t", nu, 6000, n, 2,
                                      LAM, etas, mu=0.5))
            sets.append(dict(tr_sigma=2 * theory.student_t_var(nu), n=n, lam=LAM, etas=etas))
    return gaps, sets


def test_c1_holds_and_rejects_its_wrong_theories(c1_data):
    gaps, sets = c1_data
    assert claims.claim_unclipped_gap("C1", gaps, sets).passed
    for wrong in (theory.wrong_unclipped_gap_no_contraction, theory.wrong_unclipped_gap_factor_two,
                  theory.wrong_unclipped_gap_one_pass):
        assert not claims.claim_unclipped_gap("C1", gaps, sets,
                                              theory=variant(theory, unclipped_gap_exact=wrong)).passed


@pytest.fixture(scope="module")
def c2_data():
    etas = model.harmonic_schedule(50, LAM)
    out = []
    for d in (3, 1):
        for tau in (0.5, 2.0):
            dv, u = model.pair_run(rng_for(0, "t-C2", str(d), str(tau)), "sym_pareto", 1.5, 1500,
                                   50, d, LAM, etas, tau)
            out.append((dv, u, tau))
    return out


def test_c2_holds_and_rejects_its_wrong_theories(c2_data):
    dv, u, t = zip(*c2_data, strict=True)
    assert claims.claim_stability_inequality("C2a", dv, u, t).passed
    assert claims.claim_stability_sharp("C2b", dv[2:], u[2:], t[2:]).passed
    one = variant(theory, stability_bound=theory.wrong_stability_bound_const_one)
    assert not claims.claim_stability_inequality("C2a", dv, u, t, theory=one).passed
    loose = variant(theory, stability_bound=theory.wrong_stability_bound_loose)
    assert not claims.claim_stability_sharp("C2b", dv[2:], u[2:], t[2:], theory=loose).passed


def test_unclipped_sgd_breaks_the_stability_bound():
    etas = model.harmonic_schedule(50, LAM)
    dv, u = model.pair_run(rng_for(0, "t-C2u"), "sym_pareto", 1.5, 1000, 50, 1, LAM, etas, np.inf)
    ratio = claims.ratios_to_bound(dv, theory.stability_bound(0.5, u))
    assert ratio.max() > 10


@pytest.fixture(scope="module")
def c3_data():
    n, tau = 30, 0.15
    etas = model.harmonic_schedule(n, LAM)
    nus = (4.5, 10.0, math.inf)
    gaps = [model.gap_run(rng_for(0, "t-C3", str(nu)), "t", nu, 10000, n, 1, LAM, etas, tau)
            for nu in nus]
    return gaps, n, tau, etas, [theory.student_t_abs_mean(v) for v in nus], [theory.student_t_var(v) for v in nus]


def test_c3_holds_and_rejects_its_wrong_theories(c3_data):
    gaps, n, tau, etas, ma, var = c3_data
    assert claims.claim_clipped_bound("C3a", gaps, tau, n, LAM, etas, ma, var).passed
    one = variant(theory, clipped_gap_bound=theory.wrong_clipped_gap_bound_one_step)
    assert not claims.claim_clipped_bound("C3a", gaps, tau, n, LAM, etas, ma, var, theory=one).passed
    assert claims.claim_clipping_helps("C3b", gaps[0], var[0], n, LAM, etas).passed
    zero = variant(theory, unclipped_gap_exact=theory.wrong_unclipped_gap_one_pass)
    assert not claims.claim_clipping_helps("C3b", gaps[0], var[0], n, LAM, etas, theory=zero).passed


def test_c3_is_uninformative_at_a_large_clipping_level(c3_data):
    gaps, n, _, etas, ma, var = c3_data
    c = claims.claim_clipped_bound("C3a", gaps, 1.0, n, LAM, etas, ma, var)
    assert not c.details["informative"]
    assert claims.claim_clipped_bound("C3a", gaps, n=n, tau=0.15, lam=LAM, etas=etas, mean_abs=ma,
                                      tr_sigma=var).details["informative"]


def test_the_attained_bound_rejects_a_slightly_larger_constant(c2_data):
    dv, u, t = zip(*c2_data, strict=True)
    c = claims.claim_stability_sharp("C2b", dv[2:], u[2:], t[2:])
    assert c.passed and abs(c.measured - 1.0) < claims.FP_REL
    wider = variant(theory, stability_bound=lambda tau, used: 2.2 * tau * np.asarray(used, dtype=float))
    assert not claims.claim_stability_sharp("C2b", dv[2:], u[2:], t[2:], theory=wider).passed


def test_student_t_noise_is_never_the_worst_case_of_the_relation():
    # Var/E|xi| of t_nu is >= that of N(0,1): t = Z S with S = (V/nu)^(-1/2), E S >= 1 (Jensen), E S^2 >= E S.
    gauss = 1.0 / theory.student_t_abs_mean(math.inf)
    for nu in np.geomspace(4.5, 1e4, 40):
        assert theory.student_t_var(nu) / theory.student_t_abs_mean(nu) >= gauss


@pytest.fixture(scope="module")
def c4_data():
    taus = np.array([0.01, 0.02, 0.04, 0.08])
    etas = model.harmonic_schedule(50, LAM)
    G = model.gap_vs_tau(rng_for(0, "t-C4"), "t", 5.0, 30000, 50, LAM, etas, taus)
    return G, taus, etas


def test_c4_holds_and_rejects_its_wrong_theories(c4_data):
    G, taus, etas = c4_data
    ma = theory.student_t_abs_mean(5.0)
    assert claims.claim_small_tau("C4", G, taus, 50, etas, ma).passed
    for wrong in (theory.wrong_small_tau_gap_tight, theory.wrong_small_tau_gap_quadratic):
        assert not claims.claim_small_tau("C4", G, taus, 50, etas, ma,
                                          theory=variant(theory, small_tau_gap=wrong)).passed


def test_small_tau_gap_is_half_the_bound_and_linear_in_tau():
    etas = model.harmonic_schedule(40, LAM)
    for tau in (0.01, 0.3, 2.0):
        assert_allclose(theory.small_tau_gap(tau, 40, etas, 0.7),
                        0.5 * theory.clipped_gap_bound(tau, 40, etas, 0.7), rtol=1e-15)
        assert_allclose(theory.small_tau_gap(tau, 40, etas, 0.7) / tau, etas.sum() * 0.7 / 40, rtol=1e-14)


# ---------------------------------------------------------------- least squares and normalized steps


def _ls_step(w, x, y, eta, tau):
    return w - eta * model.clip(x * (np.sum(x * w, axis=-1, keepdims=True) - y), tau)


def test_clipped_least_squares_step_is_nonexpansive():
    rng = rng_for(0, "t-ls-nonexp")
    for _ in range(300):
        d = int(rng.integers(1, 6))
        x = model.sphere(rng, (1,), d)
        eta = float(rng.uniform(0, 2.0 / d))
        tau = float(rng.exponential(1.0)) + 1e-3
        w, w2 = rng.standard_normal((2, 1, d)) * rng.exponential(2.0)
        y = float(rng.standard_normal() * 3)
        lhs = np.linalg.norm(_ls_step(w, x, y, eta, tau) - _ls_step(w2, x, y, eta, tau))
        assert lhs <= np.linalg.norm(w - w2) * (1 + 1e-12)


def test_least_squares_step_beyond_two_over_d_expands():
    # unclipped, eta ||x||^2 = 3: along x the factor is |1 - 3| = 2
    x = np.array([[1.0, 0.0]]) * math.sqrt(2)
    w, w2 = np.array([[0.1, 0.0]]), np.array([[0.2, 0.0]])
    lhs = np.linalg.norm(_ls_step(w, x, 0.0, 1.5, np.inf) - _ls_step(w2, x, 0.0, 1.5, np.inf))
    assert_allclose(lhs, 2 * 0.1, rtol=1e-12)


def test_sgd_least_squares_matches_a_scalar_loop():
    rng = rng_for(0, "t-ls-loop")
    R, n, d, T = 3, 5, 2, 7
    X = model.sphere(rng, (R, n), d)
    Y = rng.standard_normal((R, n))
    idx = rng.integers(0, n, (R, T))
    etas = model.harmonic_schedule(T, float(d))
    out = model.sgd_least_squares(X, Y, idx, etas, 0.7)
    for r in range(R):
        w = np.zeros(d)
        for t in range(T):
            x, y = X[r, idx[r, t]], Y[r, idx[r, t]]
            g = x * (x @ w - y)
            w = w - etas[t] * g * min(1.0, 0.7 / np.linalg.norm(g))
        assert_allclose(out[r], w, rtol=1e-13, atol=1e-15)
    assert_allclose(np.linalg.norm(X, axis=-1), math.sqrt(d), rtol=1e-14)


def test_ls_pair_run_reports_d_times_the_parameter_distance_and_zero_when_unused():
    etas = model.harmonic_schedule(30, 3.0)
    gd, u = model.ls_pair_run(rng_for(0, "t-ls-pair"), 1.5, 500, 30, 3, etas, 0.5, np.ones(3))
    assert np.all(gd[u == 0] == 0) and np.any(u == 0)
    assert np.all(gd >= 0) and np.all(gd[u > 0] > 0)


def test_normalized_step_is_not_nonexpansive():
    # the sign step w -> w - eta sign(lam w - z) in d = 1: +-delta -> -+(eta - delta)
    eta, lam, z = 0.3, 1.0, 0.0
    for delta in (0.1, 0.01, 1e-6):
        pts = np.array([-delta, delta])
        after = pts - eta * np.sign(lam * pts - z)
        assert_allclose(abs(after[1] - after[0]), 2 * (eta - delta), rtol=1e-12)
    assert abs(after[1] - after[0]) - 2e-6 > 2 * eta * (1 - 1e-5)  # the expansion tends to 2 eta
    # while the clipped step contracts the same points
    clipped = pts - eta * model.clip((lam * pts - z)[:, None], 1.0)[:, 0]
    assert_allclose(abs(clipped[1] - clipped[0]), (1 - eta * lam) * 2e-6, rtol=1e-9)


@pytest.fixture(scope="module")
def c7_data():
    etas = model.harmonic_schedule(50, 3.0)
    out = [model.ls_pair_run(rng_for(0, "t-C7", str(tau)), 1.5, 1500, 50, 3, etas, tau, np.ones(3) / 3)
           for tau in (0.5, 2.0)]
    return [o[0] for o in out], [o[1] for o in out], (0.5, 2.0)


def test_c7_holds_and_rejects_its_wrong_theory(c7_data):
    g, u, t = c7_data
    assert claims.claim_grad_stability("C7", g, u, t, 3).passed
    wrong = variant(theory, grad_stability_bound=theory.wrong_grad_stability_bound_no_smoothness)
    assert not claims.claim_grad_stability("C7", g, u, t, 3, theory=wrong).passed
    # the dynamics, not the closed-form supremum d ||Delta||, reject tau per use instead of 2 tau
    half = variant(theory, grad_stability_bound=lambda tau, d, used: 0.5 * theory.grad_stability_bound(
        tau, d, used))
    assert not claims.claim_grad_stability("C7", g, u, t, 3, theory=half).passed


def test_unclipped_least_squares_breaks_the_gradient_bound():
    etas = model.harmonic_schedule(50, 3.0)
    g, u = model.ls_pair_run(rng_for(0, "t-C7u"), 1.5, 1000, 50, 3, etas, np.inf, np.ones(3) / 3)
    assert claims.ratios_to_bound(g, theory.grad_stability_bound(0.5, 3, u)).max() > 10


@pytest.fixture(scope="module")
def c5_data():
    taus = np.array([3.0, 10.0, 30.0, 100.0])
    mean, cov = model.truncated_moment_samples(rng_for(0, "t-C5"), 1.5, taus, 1_000_000)
    return mean, cov, taus


def test_c5_holds_and_rejects_its_wrong_theories(c5_data):
    mean, cov, taus = c5_data
    assert claims.claim_truncated_moments("C5a", mean, cov, taus, 1.5).passed
    wrong = variant(theory, pareto_truncated_moments=theory.wrong_pareto_truncated_moments)
    assert not claims.claim_truncated_moments("C5a", mean, cov, taus, 1.5, theory=wrong).passed
    b, cb = model.tail_means(mean, cov, 1.5, taus.size)
    assert claims.claim_bias_exponent("C5b", b, cb, taus, 1.5).passed
    wrong = variant(theory, pareto_bias_exponent=theory.wrong_pareto_bias_exponent)
    assert not claims.claim_bias_exponent("C5b", b, cb, taus, 1.5, theory=wrong).passed


def test_c6_holds_and_rejects_its_wrong_theory():
    ns = np.array([30, 100, 300, 1000, 3000])
    S = model.sampling_term(rng_for(0, "t-C6"), 1.5, ns, 10000, 0.5)
    assert claims.claim_sampling_exponent("C6", S, ns, 1.5, 0.5).passed
    wrong = variant(theory, sampling_exponent=theory.wrong_sampling_exponent)
    assert not claims.claim_sampling_exponent("C6", S, ns, 1.5, 0.5, theory=wrong).passed


def test_a_nan_prediction_fails_the_c2_and_c3a_claims(c2_data, c3_data):
    dv, u, t = zip(*c2_data, strict=True)
    nan = variant(theory, stability_bound=nan_after_first(theory.stability_bound))
    assert not claims.claim_stability_inequality("C2a", dv, u, t, theory=nan).passed
    nan = variant(theory, stability_bound=nan_after_first(theory.stability_bound))
    assert not claims.claim_stability_sharp("C2b", dv[2:], u[2:], t[2:], theory=nan).passed
    gaps, n, tau, etas, ma, var = c3_data
    nan = variant(theory, clipped_gap_bound=nan_after_first(theory.clipped_gap_bound))
    assert not claims.claim_clipped_bound("C3a", gaps, tau, n, LAM, etas, ma, var, theory=nan).passed
