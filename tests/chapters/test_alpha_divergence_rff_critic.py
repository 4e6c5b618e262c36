"""Tests of chapter 'alpha-divergence-rff-critic': the theory, the model, and one mutation test per claim."""

import warnings

import numpy as np
import pytest
from scipy import optimize

from theorylib.chapters.alpha_divergence_rff_critic import claims, model, theory
from theorylib.core import rng_for
from theorylib.core.theory import variant

MP, SP = np.array([1.0, 0.0]), np.diag([1.5, 0.7])
MQ, SQ = np.zeros(2), np.eye(2)


def _f(t, a):
    return (t**a - a * t - (1 - a)) / (a * (a - 1))


def _features(D, n, seed, stream):
    rng = rng_for(seed, stream)
    W = model.sample_frequencies(D, 2, 1.0, 3.0, rng)
    return W, model.rff(model.sample_gaussian(n, MP, SP, rng), W), model.rff(rng.standard_normal((n, 2)), W)


# --- theory ------------------------------------------------------------------------------------------------


def test_divergence_is_nonnegative_and_zero_iff_equal():
    rng = rng_for(0, "t-div")
    for _ in range(20):
        a = rng.uniform(0.1, 0.9)
        A = rng.standard_normal((3, 3))
        S = A @ A.T + 0.5 * np.eye(3)
        m = rng.standard_normal(3)
        assert theory.alpha_div_gaussian(a, m, S, np.zeros(3), np.eye(3)) >= 0
        assert abs(theory.alpha_div_gaussian(a, m, S, m, S)) < 1e-14


def test_divergence_symmetry_and_kl_limit():
    rng = rng_for(0, "t-sym")
    A = rng.standard_normal((2, 2))
    S = A @ A.T + 0.3 * np.eye(2)
    m = np.array([0.4, -0.7])
    for a in (0.2, 0.5, 0.8):
        np.testing.assert_allclose(theory.alpha_div_gaussian(a, m, S, MQ, SQ),
                                   theory.alpha_div_gaussian(1 - a, MQ, SQ, m, S), rtol=1e-12)
    kl = 0.5 * (np.trace(S) + m @ m - 2 - np.linalg.slogdet(S)[1])  # KL(N(m,S) || N(0,I))
    np.testing.assert_allclose(theory.alpha_div_gaussian(1 - 1e-7, m, S, MQ, SQ), kl, rtol=1e-5)


def test_closed_form_matches_quadrature_including_correlation():
    S2 = np.array([[1.5, 0.4], [0.4, 0.7]])
    for a in (0.3, 0.7):
        np.testing.assert_allclose(model.quadrature_divergence(a, MP, SP, MQ, SQ),
                                   theory.alpha_div_gaussian(a, MP, SP, MQ, SQ), rtol=1e-10)
        np.testing.assert_allclose(model.quadrature_divergence(a, MP, S2, MQ, SQ),
                                   theory.alpha_div_gaussian(a, MP, S2, MQ, SQ), rtol=1e-9)


@pytest.mark.parametrize("a", [0.3, 0.5, 0.7])
def test_conjugate_is_the_legendre_transform(a):
    for u in (-2.0, -0.5, 0.0, 0.3, 0.8, 0.8 / (1 - a)):
        res = optimize.minimize_scalar(lambda t, u=u: -(u * t - _f(t, a)), bounds=(1e-12, 1e4), method="bounded",
                                       options={"xatol": 1e-12})
        np.testing.assert_allclose(theory.fconj(u, a), -res.fun, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(model.conj(np.array(u), a), theory.fconj(u, a), rtol=1e-13)
    assert np.isinf(theory.fconj(1 / (1 - a), a)) and np.isinf(theory.fconj(1 / (1 - a) + 1, a))


def test_conjugate_derivatives_by_finite_differences():
    u, h = np.linspace(-1.5, 1.2, 7), 1e-5
    for a in (0.3, 0.7):
        np.testing.assert_allclose((model.conj(u + h, a) - model.conj(u - h, a)) / (2 * h), model.conj_d1(u, a),
                                   rtol=1e-8)
        np.testing.assert_allclose((model.conj_d1(u + h, a) - model.conj_d1(u - h, a)) / (2 * h),
                                   theory.fconj_d2(u, a), rtol=1e-8)
        np.testing.assert_allclose(model.conj_d2(u, a), theory.fconj_d2(u, a), rtol=1e-13)


def test_oracle_critic_has_the_divergence_as_mean():
    rng = rng_for(0, "t-oracle")
    lrP, lrQ = model.log_ratios(model.sample_gaussian(100_000, MP, SP, rng), rng.standard_normal((100_000, 2)),
                                MP, SP, MQ, SQ)
    gP, fQ = theory.fprime_log(lrP, 0.3), theory.fconj(theory.fprime_log(lrQ, 0.3), 0.3)
    np.testing.assert_allclose(fQ, np.expm1(0.3 * lrQ) / 0.3, rtol=1e-9, atol=1e-12)  # f*(f'(r)) = (r^a - 1)/a
    se = np.sqrt(gP.var() / gP.size + fQ.var() / fQ.size)
    assert abs(gP.mean() - fQ.mean() - theory.alpha_div_gaussian(0.3, MP, SP, MQ, SQ)) < 4 * se


# --- kernel and features -----------------------------------------------------------------------------------


def test_kernel_is_one_at_zero_psd_and_matches_monte_carlo():
    rng = rng_for(0, "t-kern")
    X = rng.standard_normal((60, 2))
    K = model.bl_gauss_kernel(X, X, 1.0, 3.0)
    np.testing.assert_allclose(np.diag(K), 1.0, rtol=1e-13)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    W = model.sample_frequencies(200_000, 2, 1.0, 3.0, rng)
    t = X[:5] - X[5:10]
    mc = np.cos(t @ W.T).mean(axis=1)
    k = np.array([model.bl_gauss_kernel(t[i:i + 1], np.zeros((1, 2)), 1.0, 3.0)[0, 0] for i in range(5)])
    np.testing.assert_allclose(mc, k, atol=4 / np.sqrt(200_000))


def test_kernel_without_band_limit_is_gaussian():
    t = np.linspace(-3, 3, 13)[:, None]
    np.testing.assert_allclose(model.bl_gauss_kernel(t, np.zeros((1, 1)), 1.3, 50.0)[:, 0],
                               np.exp(-t[:, 0] ** 2 / (2 * 1.3**2)), atol=1e-12)


def test_frequencies_are_truncated():
    W = model.sample_frequencies(5000, 3, 0.5, 2.0, rng_for(0, "t-freq"))
    assert np.abs(W).max() <= 2.0 and W.shape == (5000, 3)


def test_rff_has_unit_norm_and_gram_converges_at_rate():
    rng = rng_for(0, "t-rff")
    X = rng.standard_normal((30, 2))
    K = model.bl_gauss_kernel(X, X, 1.0, 3.0)
    W = model.sample_frequencies(10_000, 2, 1.0, 3.0, rng)
    F = model.rff(X, W)
    np.testing.assert_allclose(np.linalg.norm(F, axis=1), 1.0, rtol=1e-13)
    # entries of K_D - K have sd <= 1/sqrt(2 D): the max over 900 entries stays below 5 sd
    assert np.abs(F @ F.T - K).max() < 5 / np.sqrt(2 * 10_000)


# --- solver ------------------------------------------------------------------------------------------------


def test_solve_ball_satisfies_kkt_and_constraint():
    _, FP, FQ = _features(8, 500, 0, "t-kkt")
    for R in (0.3, 1.0, 1.8):
        theta, val, it = model.solve_ball(FP, FQ, R, 0.5)
        assert np.linalg.norm(theta) <= R * (1 + 1e-12)
        assert model.kkt_residual(theta, FP, FQ, R, 0.5) < 1e-10
        np.testing.assert_allclose(val, model.objective(theta, FP, FQ, 0.5), rtol=1e-14)
        assert it < 60


def test_solve_ball_beats_random_feasible_points():
    _, FP, FQ = _features(6, 300, 1, "t-opt")
    theta, val, _ = model.solve_ball(FP, FQ, 1.0, 0.3)
    rng = rng_for(0, "t-pts")
    for _ in range(200):
        v = rng.standard_normal(theta.size)
        v *= rng.uniform() / np.linalg.norm(v)
        assert model.objective(v, FP, FQ, 0.3) <= val + 1e-12


def test_interior_maximizer_when_ball_is_large():
    # P = Q in law on the features: the unconstrained maximizer is near 0, inside the ball
    rng = rng_for(0, "t-int")
    W = model.sample_frequencies(4, 2, 1.0, 3.0, rng)
    FP, FQ = model.rff(rng.standard_normal((2000, 2)), W), model.rff(rng.standard_normal((2000, 2)), W)
    theta, _, _ = model.solve_ball(FP, FQ, 1.5, 0.5)
    assert np.linalg.norm(theta) < 1.5
    assert np.linalg.norm(model.gradient(theta, FP, FQ, 0.5)) < 1e-10


def test_small_radius_value_is_first_order():
    _, FP, FQ = _features(8, 1000, 0, "t-small")
    gap = np.linalg.norm(FP.mean(axis=0) - FQ.mean(axis=0))
    for R in (1e-3, 1e-4):
        _, val, _ = model.solve_ball(FP, FQ, R, 0.5)
        np.testing.assert_allclose(val, R * gap, rtol=5 * R / gap)


def test_gram_value_equals_feature_value():
    W, FP, FQ = _features(6, 80, 0, "t-gram")
    _, val, _ = model.solve_ball(FP, FQ, 1.0, 0.5)
    F = np.vstack([FP, FQ])
    np.testing.assert_allclose(model.gram_ball_value(F @ F.T, 80, 1.0, 0.5), val, rtol=1e-10)


def test_projected_ga_converges_and_rate_matches_linearization():
    _, FP, FQ = _features(16, 2000, 0, "t-ga")
    theta, _, _ = model.solve_ball(FP, FQ, 1.0, 0.5, tol=1e-15)
    L = np.linalg.eigvalsh(-model.hessian(theta, FQ, 0.5)).max()
    path = model.projected_ga(FP, FQ, 1.0, 0.5, 1 / L, 300, np.zeros(32))
    err = np.linalg.norm(path - theta, axis=1)
    assert err[-1] < 1e-13
    J = theory.linearized_map(theta, FP, FQ, 1.0, 0.5, 1 / L)
    rho = np.max(np.abs(np.linalg.eigvals(J)))
    assert 0 < rho < 1
    # the rate obeys rho <= 1/(1 + eta lambda) at eta = 1/L
    lam = theta @ model.gradient(theta, FP, FQ, 0.5)
    assert rho <= 1 / (1 + lam / L) + 1e-12


def test_armijo_full_batch_converges_and_minibatch_steps_meet_the_armijo_condition():
    _, FP, FQ = _features(16, 400, 0, "t-armijo")
    theta, value, _ = model.solve_ball(FP, FQ, 1.0, 0.5, tol=1e-15)
    full = model.armijo_sga(FP, FQ, 1.0, 0.5, 400, 60, rng_for(0, "t-armijo-full"))
    assert np.all(np.linalg.norm(full, axis=1) <= 1.0 + 1e-12)
    assert value - model.objective(full[-1], FP, FQ, 0.5) < 1e-12
    gaps = [value - model.objective(t, FP, FQ, 0.5) for t in full]
    assert np.all(np.diff(gaps) <= 1e-15)  # full-batch Armijo ascent never decreases J_n
    mini = model.armijo_sga(FP, FQ, 1.0, 0.5, 32, 50, rng_for(0, "t-armijo-mini"))
    assert np.all(np.linalg.norm(mini, axis=1) <= 1.0 + 1e-12)
    assert value - model.objective(mini[-1], FP, FQ, 0.5) < value - model.objective(mini[0], FP, FQ, 0.5)
    with pytest.raises(ValueError):
        model.armijo_sga(FP, FQ, 1.0, 0.5, 401, 5, rng_for(0, "t"))


def test_contraction_window():
    err = 0.5 ** np.arange(60)
    assert model.contraction_window(err, 1e-3, 1e-12) == (10, 39)
    assert model.contraction_window(err, 1e-30, 1e-40) is None


def test_bad_inputs_raise():
    _, FP, FQ = _features(4, 50, 0, "t-bad")
    with pytest.raises(ValueError):
        model.solve_ball(FP, FQ, 1.0, 1.2)
    with pytest.raises(ValueError):
        model.solve_ball(FP, FQ, 2.0, 0.5)  # R >= 1/(1 - alpha)
    with pytest.raises(ValueError):
        model.solve_ball(FP, FQ[:, :4], 1.0, 0.5)
    with pytest.raises(ValueError):
        model.sample_gaussian(10, MP, np.diag([1.0, -1.0]), rng_for(0, "x"))
    with pytest.raises(ValueError):
        model.sample_frequencies(0, 2, 1.0, 3.0, rng_for(0, "x"))
    with pytest.raises(ValueError):
        model.sample_frequencies(4, 2, 1.0, 0.0, rng_for(0, "x"))
    with pytest.raises(ValueError):
        model.rff(np.zeros((3, 2)), np.zeros((4, 3)))
    with pytest.raises(ValueError):
        model.bl_gauss_kernel(np.zeros((3, 2)), np.zeros((3, 1)), 1.0, 3.0)
    with pytest.raises(ValueError):
        model.log_ratios(np.zeros((2, 3)), np.zeros((2, 3)), MP, SP, MQ, SQ)


# --- claims and their wrong theories ------------------------------------------------------------------------


def _cases():
    cs = [dict(alpha=a, mP=MP, SP=SP, mQ=MQ, SQ=SQ) for a in (0.3, 0.5, 0.7)]
    for c in cs:
        c["quad"] = model.quadrature_divergence(c["alpha"], MP, SP, MQ, SQ)
    return cs


def test_claim_c1a_holds_and_rejects_swapped_alpha():
    cs = _cases()
    assert claims.claim_closed_form("C1a", cs).passed
    wrong = variant(theory, alpha_div_gaussian=theory.wrong_alpha_div_gaussian)
    assert not claims.claim_closed_form("C1a", cs, theory=wrong).passed


def test_claim_c1b_holds_and_rejects_swapped_alpha_and_unshifted_conjugate():
    cs = _cases()
    lrs = []
    for a in (0.3, 0.5, 0.7):
        rng = rng_for(0, "t-C1b", f"{a}")
        lrs.append(model.log_ratios(model.sample_gaussian(200_000, MP, SP, rng), rng.standard_normal((200_000, 2)),
                                    MP, SP, MQ, SQ))
    assert claims.claim_oracle("C1b", lrs, cs).passed
    wrong = variant(theory, alpha_div_gaussian=theory.wrong_alpha_div_gaussian)
    assert not claims.claim_oracle("C1b", lrs, cs, theory=wrong).passed
    wrong = variant(theory, fconj=theory.wrong_fconj)
    assert not claims.claim_oracle("C1b", lrs, cs, theory=wrong).passed


@pytest.fixture(scope="module")
def stat_data():
    W, FPp, FQp = _features(16, 200_000, 0, "t-C2pop")
    theta, _, _ = model.solve_ball(FPp, FQp, 1.0, 0.5)
    ns = [250, 500, 1000, 2000]
    est = np.array([model.replicate_estimates(n, 150, W, MP, SP, 1.0, 0.5, theta, rng_for(0, "t-C2", f"{n}"))[0]
                    for n in ns]).T
    sharp, kkt = model.replicate_estimates(2000, 400, W, MP, SP, 1.0, 0.5, theta, rng_for(0, "t-C2s"))
    return theta, FPp, FQp, ns, est, sharp, kkt


def test_replicates_are_solved_to_kkt(stat_data):
    assert stat_data[-1] < 1e-12


def test_claim_c2a_holds_and_rejects_dropped_q_term(stat_data):
    theta, FPp, FQp, _, _, sharp, _ = stat_data
    assert claims.claim_sharp_variance("C2a", sharp, 2000, theta, FPp, FQp, 0.5).passed
    wrong = variant(theory, asymptotic_variance=theory.wrong_asymptotic_variance)
    assert not claims.claim_sharp_variance("C2a", sharp, 2000, theta, FPp, FQp, 0.5, theory=wrong).passed


def test_claim_c2b_holds_and_rejects_fast_rate(stat_data):
    _, _, _, ns, est, _, _ = stat_data
    assert claims.claim_statistical_rate("C2b", ns, est, 2000, rng_for(0, "t-b")).passed
    wrong = variant(theory, statistical_exponent=theory.wrong_statistical_exponent)
    assert not claims.claim_statistical_rate("C2b", ns, est, 2000, rng_for(0, "t-b"), theory=wrong).passed


def test_chi2_variance_interval_covers_at_the_nominal_level():
    rng = rng_for(0, "t-chi2")
    x = rng.standard_normal((4000, 100))
    lo, hi = claims.chi2_variance_interval(x.var(axis=1, ddof=1), 100, alpha=0.1)
    cover = np.mean((lo <= 1) & (1 <= hi))
    assert abs(cover - 0.9) < 3.29 * np.sqrt(0.09 / 4000)


def test_claim_c3_holds_and_rejects_bias_rate():
    rng = rng_for(0, "t-C3")
    XP, XQ = model.sample_gaussian(60, MP, SP, rng), rng.standard_normal((60, 2))
    X = np.vstack([XP, XQ])
    VH = model.gram_ball_value(model.bl_gauss_kernel(X, X, 1.0, 3.0), 60, 1.0, 0.5)
    Ds = [64, 128, 256, 512, 1024]
    errs = np.array([model.rff_gram_values(XP, XQ, model.sample_frequencies(1024, 2, 1.0, 3.0,
                                                                            rng_for(0, "t-C3", f"{r}")),
                                           Ds, 1.0, 0.5) - VH for r in range(24)])
    assert claims.claim_rff_rate("C3", Ds, errs, 2000, rng_for(0, "t-b3")).passed
    wrong = variant(theory, rff_exponent=theory.wrong_rff_exponent)
    assert not claims.claim_rff_rate("C3", Ds, errs, 2000, rng_for(0, "t-b3"), theory=wrong).passed


def test_claim_c4_holds_and_rejects_unconstrained_rate():
    _, FP, FQ = _features(16, 2000, 3, "t-C4")
    theta, _, _ = model.solve_ball(FP, FQ, 1.0, 0.5, tol=1e-15)
    eta = 1 / np.linalg.eigvalsh(-model.hessian(theta, FQ, 0.5)).max()
    path = model.projected_ga(FP, FQ, 1.0, 0.5, eta, 400, np.zeros(32))
    win = model.contraction_window(np.linalg.norm(path - theta, axis=1), 1e-8, 1e-12)
    assert claims.claim_local_contraction("C4", path, theta, win, FP, FQ, 1.0, 0.5, eta).passed
    wrong = variant(theory, linearized_map=theory.wrong_linearized_map)
    assert not claims.claim_local_contraction("C4", path, theta, win, FP, FQ, 1.0, 0.5, eta, theory=wrong).passed
    assert not claims.claim_local_contraction("C4", path, theta, None, FP, FQ, 1.0, 0.5, eta).passed


def test_claim_c5_holds_at_interior_and_rejects_quadratic_curvature():
    FP, FQ, theta, _ = model.interior_design(2, 2000, MP, SP, np.zeros(2), np.eye(2), 1.0, 3.0, 1.8, 0.5,
                                             rng_for(0, "t-C5"))
    eta = 1 / np.linalg.eigvalsh(-model.hessian(theta, FQ, 0.5)).max()
    path = model.projected_ga(FP, FQ, 1.8, 0.5, eta, 400, np.zeros(4))
    win = model.contraction_window(np.linalg.norm(path - theta, axis=1), 1e-8, 1e-12)
    assert claims.claim_local_contraction("C5", path, theta, win, FP, FQ, 1.8, 0.5, eta, interior=True).passed
    wrong = variant(theory, linearized_map=theory.wrong_linearized_map_chi2)
    assert not claims.claim_local_contraction("C5", path, theta, win, FP, FQ, 1.8, 0.5, eta, interior=True,
                                              theory=wrong).passed


def test_claim_c5_fails_when_the_maximizer_is_on_the_sphere():
    # the active-ball experiment of C4 read as an interior one: the premise fails, whatever the rate
    _, FP, FQ = _features(16, 2000, 3, "t-C4")
    theta, _, _ = model.solve_ball(FP, FQ, 1.0, 0.5, tol=1e-15)
    eta = 1 / np.linalg.eigvalsh(-model.hessian(theta, FQ, 0.5)).max()
    path = model.projected_ga(FP, FQ, 1.0, 0.5, eta, 400, np.zeros(32))
    win = model.contraction_window(np.linalg.norm(path - theta, axis=1), 1e-8, 1e-12)
    assert claims.claim_local_contraction("C5", path, theta, win, FP, FQ, 1.0, 0.5, eta).passed
    assert not claims.claim_local_contraction("C5", path, theta, win, FP, FQ, 1.0, 0.5, eta, interior=True).passed


@pytest.mark.parametrize("seed", range(6))
def test_interior_design_returns_an_interior_maximizer(seed):
    FP, FQ, theta, draws = model.interior_design(2, 2000, MP, SP, np.zeros(2), np.eye(2), 1.0, 3.0, 1.8, 0.5,
                                                 rng_for(seed, "t-design"))
    assert 1 <= draws <= 50 and np.linalg.norm(theta) <= 0.95 * 1.8
    assert np.linalg.norm(model.gradient(theta, FP, FQ, 0.5)) < 1e-10  # a stationary point, not the sphere's


def test_interior_design_gives_up_after_max_draws():
    # a radius far below every draw's unconstrained maximizer: every draw is on the sphere
    FP, FQ, theta, draws = model.interior_design(2, 500, MP, SP, np.zeros(2), np.eye(2), 1.0, 3.0, 0.05, 0.5,
                                                 rng_for(0, "t-design"), max_draws=3)
    assert draws == 3
    np.testing.assert_allclose(np.linalg.norm(theta), 0.05, rtol=1e-12)


@pytest.fixture(scope="module")
def radius_data():
    W, FPp, FQp = _features(16, 200_000, 0, "t-C2pop")
    radii = [0.1, 0.3]
    thetas = [model.solve_ball(FPp, FQp, r, 0.5)[0] for r in radii]
    est = np.array([model.replicate_estimates(2000, 300, W, MP, SP, r, 0.5, th, rng_for(0, "t-C2c", f"{r}"))[0]
                    for r, th in zip(radii, thetas, strict=True)]).T
    return thetas, FPp, FQp, est


def test_claim_c2c_holds_and_rejects_radius_free_and_dropped_q_term(radius_data):
    thetas, FPp, FQp, est = radius_data
    assert claims.claim_sharp_variance_radii("C2c", est, 2000, thetas, FPp, FQp, 0.5).passed
    for wrong_fn in (theory.wrong_asymptotic_variance_radius_free, theory.wrong_asymptotic_variance):
        wrong = variant(theory, asymptotic_variance=wrong_fn)
        assert not claims.claim_sharp_variance_radii("C2c", est, 2000, thetas, FPp, FQp, 0.5, theory=wrong).passed


def test_claim_c2c_fails_when_one_radius_is_off(radius_data):
    # a prediction wrong at a single radius (by a factor 2) must fail the family claim
    thetas, FPp, FQp, est = radius_data
    calls = iter([1.0, 2.0])
    wrong = variant(theory, asymptotic_variance=lambda *a: next(calls) * theory.asymptotic_variance(*a))
    assert not claims.claim_sharp_variance_radii("C2c", est, 2000, thetas, FPp, FQp, 0.5, theory=wrong).passed


def test_small_radius_variance_is_the_limit_of_the_sharp_constant():
    # corollary: sigma_inf^2(R)/R^2 -> s_0^2 with an O(R) error; at R = 1e-3 the relative gap is O(1e-3)
    _, FPp, FQp = _features(16, 50_000, 0, "t-s0")
    s0 = theory.small_radius_variance(FPp, FQp)
    gaps = []
    for r in (1e-2, 1e-3):
        th = model.solve_ball(FPp, FQp, r, 0.5)[0]
        gaps.append(abs(theory.asymptotic_variance(th, FPp, FQp, 0.5) / r**2 / s0 - 1))
    assert gaps[1] < 5e-3
    assert gaps[1] < gaps[0] / 3  # the gap shrinks with R (first order)


@pytest.mark.parametrize("bad", [0.0, np.nan, np.inf, -1.0])
def test_claim_c2c_fails_cleanly_on_a_degenerate_prediction(radius_data, bad):
    thetas, FPp, FQp, est = radius_data
    wrong = variant(theory, asymptotic_variance=lambda *a: bad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not claims.claim_sharp_variance_radii("C2c", est, 2000, thetas, FPp, FQp, 0.5, theory=wrong).passed
