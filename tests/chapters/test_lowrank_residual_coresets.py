"""Tests of chapter 'lowrank-residual-coresets': the theory, the model, and one mutation test per claim."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from theorylib.chapters.lowrank_residual_coresets import CHAPTER, model, theory
from theorylib.chapters.lowrank_residual_coresets import claims as cl
from theorylib.core import rng_for
from theorylib.core.theory import nan_after_first, variant

DEF = CHAPTER.defaults()


# --------------------------------------------------------------------------------------------------
# fixtures: the notebook's data at the defaults (smaller reps where the claim allows it)


@pytest.fixture(scope="module")
def enum():
    A = model.small_matrix(DEF["enum_n"], rng_for(DEF["seed"], "C1"))
    sig2 = model.squared_singular_values(A)
    return {j: model.enumerate_volume_sampling(A, j) for j in (1, 2, 3)}, sig2


@pytest.fixture(scope="module")
def inst():
    return model.make_instance(DEF["n"], DEF["d"], DEF["k"], DEF["spectrum"], rng_for(DEF["seed"], "instance"))


@pytest.fixture(scope="module")
def settings(inst):
    return [model.build_setting(inst, nu, DEF["k"], DEF["rounds"], rng_for(DEF["seed"], "rows"))
            for nu in DEF["noise_list"]]


@pytest.fixture(scope="module")
def base(inst):
    return model.build_setting(inst, DEF["noise"], DEF["k"], DEF["rounds"], rng_for(DEF["seed"], "rows"))


@pytest.fixture(scope="module")
def c2_runs(base):
    return [model.residual_cell(base, z, DEF["m"], DEF["reps"], rng_for(DEF["seed"], "C2", str(z))) for z in (1, 2)]


@pytest.fixture(scope="module")
def c4_runs(settings):
    return {z: [model.residual_cell(st, z, DEF["m"], DEF["reps"], rng_for(DEF["seed"], "C4", str(z), str(j)))
                for j, st in enumerate(settings)] for z in (1, 2)}


@pytest.fixture(scope="module")
def c6_runs(settings):
    return [model.sensitivity_cell(st, DEF["m"], DEF["reps"], rng_for(DEF["seed"], "C6", str(j)))
            for j, st in enumerate(settings)]


# --------------------------------------------------------------------------------------------------
# the roles of the modules


# --------------------------------------------------------------------------------------------------
# theory


def test_elementary_symmetric_matches_brute_force():
    x = rng_for(0, "test-e").uniform(0, 2, 7)
    for j in range(0, 8):
        brute = sum(math.prod(x[list(S)]) for S in itertools.combinations(range(7), j))
        assert theory.elementary_symmetric(x, j) == pytest.approx(brute, rel=1e-12)
    assert theory.elementary_symmetric(x, 9) == 0.0


def test_cauchy_binet_on_a_random_matrix():
    A = rng_for(0, "test-cb").standard_normal((9, 4))
    s2 = model.squared_singular_values(A)
    for k in (1, 2, 3, 4):
        dets = sum(np.linalg.det(A[list(T)] @ A[list(T)].T) for T in itertools.combinations(range(9), k))
        assert dets == pytest.approx(theory.elementary_symmetric(s2, k), rel=1e-10)


def test_volume_identity_rank_deficient():
    rng = rng_for(0, "test-rank")
    A = rng.standard_normal((10, 2)) @ rng.standard_normal((2, 6))  # rank 2
    s2 = model.squared_singular_values(A)
    assert theory.volume_sampling_expectation(s2, 2) == pytest.approx(0.0, abs=1e-9)
    res = model.enumerate_volume_sampling(A, 1)
    assert res["volume_mean"] == pytest.approx(theory.volume_sampling_expectation(s2, 1), rel=1e-9)


def test_volume_bound_and_spec_values(enum):
    e, s2 = enum
    assert theory.volume_sampling_expectation(s2, 3) == pytest.approx(2.825, abs=1e-3)
    assert theory.volume_sampling_bound(s2, 3) == pytest.approx(3.60, abs=1e-9)
    for k in (1, 2, 3):
        assert theory.volume_sampling_expectation(s2, k) <= theory.volume_sampling_bound(s2, k)
        assert e[k]["uniform_mean"] > e[k]["volume_mean"]


def test_variance_formula_against_brute_force_expectation():
    rng = rng_for(0, "test-var")
    e = rng.standard_normal(6)
    e[0] = 0.0
    q = np.abs(rng.standard_normal(6)) + 0.1
    q[0] = 0.0
    p = q / q.sum()
    n = e.size
    Y = np.where(p > 0, e / (n * np.where(p > 0, p, 1)), 0.0)
    var = float(p @ Y**2 - (p @ Y) ** 2)
    assert theory.estimator_variance(e, p, 1) == pytest.approx(var, rel=1e-12)
    assert theory.estimator_variance(e, p, 4) == pytest.approx(var / 4, rel=1e-12)


def test_variance_bound_and_radius():
    rng = rng_for(0, "test-bound")
    r = np.abs(rng.standard_normal(50))
    e = 0.5 * rng.uniform(-1, 1, 50) * r**2
    q = r**2
    p = q / q.sum()
    R = theory.summand_bound(0.5, q)
    assert R == pytest.approx(0.5 * q.sum() / 50)
    assert np.max(np.abs(e / (50 * p))) <= R
    assert theory.estimator_variance(e, p, 10) <= R**2 / 10
    run = model.EstimatorRun(np.zeros(3), 2.0, np.ones(50), e, p, q, 0.5, 10, 0.0)
    assert cl.radius(run, "additive", 0.05) == pytest.approx(R * math.sqrt(2 * math.log(40) / 10))
    assert cl.radius(run, "relative", 0.05) == pytest.approx((2.0 + 2 * R) * math.sqrt(math.log(40) / 20))
    with pytest.raises(ValueError, match="kind"):
        cl.radius(run, "other", 0.05)


@pytest.mark.parametrize("call, match", [
    (lambda: theory.summand_bound(-1.0, np.ones(3)), "lam"),
    (lambda: theory.summand_bound(1.0, -np.ones(3)), "q"),
    (lambda: theory.estimator_variance(np.ones(3), np.ones(3), 0), "m"),
    (lambda: theory.estimator_variance(np.ones(3), -np.ones(3), 2), "p"),
    (lambda: model.sampling_probabilities(np.array([1.0, -1.0])), "q"),
    (lambda: model.sampling_probabilities(np.zeros(3)), "q"),
    (lambda: model.draw_indices(np.ones(3) / 3, 0, 2, rng_for(0, "x")), "m"),
    (lambda: model.make_instance(100, 5, 5, "linear", rng_for(0, "x")), "k"),
    (lambda: model.signal_spectrum(3, "flat"), "spectrum"),
    (lambda: model.enumerate_volume_sampling(np.ones((60, 3)), 10), "enumeration limit"),
    (lambda: model.projection_coefficients(np.ones((4, 2)), np.array([1, 1])), "distinct"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_relation_rejects_too_many_rows():
    with pytest.raises(ValueError, match="rounds"):
        CHAPTER.validate({**DEF, "k": 9, "rounds": 4})


# --------------------------------------------------------------------------------------------------
# model


def test_projection_coefficients_reproduce_the_projection(base):
    A, T, C = base.A, base.T, base.C
    np.testing.assert_allclose(C[T], np.eye(T.size), atol=0)
    R = A - C @ A[T]
    np.testing.assert_allclose(np.linalg.norm(R, axis=1), base.r, atol=1e-10)
    assert np.all(base.r[T] == 0)
    np.testing.assert_allclose(R @ A[T].T, 0, atol=1e-9)  # residuals orthogonal to the span


def test_adaptive_rows_residuals_shrink(base):
    h = base.history
    assert np.all(np.diff(h, axis=0) <= 1e-10)
    assert base.T.size <= 2 * (DEF["k"] + 1) * DEF["rounds"]
    assert np.linalg.matrix_rank(base.A[base.T]) == base.T.size


def test_losses_are_regular_and_positive(base, settings):
    for st in [base, *settings]:
        e1 = st.ell_linear - st.C @ st.ell_linear[st.T]
        lam1 = math.sqrt(model.LOSS_SLOPE**2 + model.LOSS_OFFSET**2)
        assert np.all(np.abs(e1) <= lam1 * st.r + 1e-10)
        e2 = st.ell_angular - st.C @ st.ell_angular[st.T]
        assert np.all(np.abs(e2) <= 0.5 * st.r**2 + 1e-12)
        assert np.all(e2[st.T] == 0)
        assert st.ell_angular.min() > 0 and st.ell_linear.min() > 0


@pytest.mark.parametrize("alt", sorted(CHAPTER.alternatives))
def test_losses_positive_at_the_alternatives(alt):
    v = {**DEF, **CHAPTER.alternatives[alt]}
    inst = model.make_instance(v["n"], v["d"], v["k"], v["spectrum"], rng_for(v["seed"], "instance"))
    st = model.build_setting(inst, max(v["noise_list"]), v["k"], v["rounds"], rng_for(v["seed"], "rows"))
    assert st.ell_angular.min() > 0


def test_estimator_exact_for_linear_loss_without_noise(inst):
    st = model.build_setting(inst, 0.0, DEF["k"], 1, rng_for(0, "rows0"))
    # noise 0: the rows span the signal (rank k + 1), every residual is rounding
    assert st.r.max() < 1e-8
    interp = st.C @ st.ell_linear[st.T]
    np.testing.assert_allclose(interp, st.ell_linear, atol=1e-9)


def test_estimator_reads_only_T_and_the_sample(base):
    oracle = model.LossOracle(base.ell_angular)
    est, idx = model.residual_sampling_estimate(oracle(base.T), oracle, base.C, base.r**2, 16, 5,
                                                rng_for(0, "reads"))
    assert oracle.queried == set(base.T.tolist()) | set(np.unique(idx).tolist())
    assert not set(np.unique(idx).tolist()) & set(base.T.tolist())  # p = 0 on T


def test_coreset_weights_reproduce_the_estimate(base):
    q = base.r**2
    p = model.sampling_probabilities(q)
    oracle = model.LossOracle(base.ell_angular)
    est, idx = model.residual_sampling_estimate(oracle(base.T), oracle, base.C, q, 32, 3, rng_for(0, "w"))
    for r in range(3):
        T, omega, S, v = model.coreset_weights(base.C, base.T, idx[r], p, 32)
        value = omega @ base.ell_angular[T] + v @ base.ell_angular[S]
        assert value == pytest.approx(est[r], rel=1e-12)


def test_unbiased_monte_carlo(c2_runs):
    for r in c2_runs:
        se = r.est.std(ddof=1) / math.sqrt(r.est.size)
        assert abs(r.est.mean() - r.mu) <= 5 * se


def test_draw_indices_law():
    p = np.array([0.0, 0.2, 0.5, 0.3])
    idx = model.draw_indices(p, 1000, 20, rng_for(0, "law"))
    freq = np.bincount(idx.ravel(), minlength=4) / idx.size
    assert freq[0] == 0
    np.testing.assert_allclose(freq, p, atol=0.01)


# --------------------------------------------------------------------------------------------------
# the claims hold, and each rejects its wrong theory


def test_c1_claims_hold_and_reject(enum):
    e, s2 = enum
    assert cl.claim_volume_expectation("x", e, s2).passed
    assert cl.claim_gram_sum("x", e, s2).passed
    assert cl.claim_volume_bound("x", e, s2).passed
    wrong = variant(theory, volume_sampling_expectation=theory.wrong_volume_sampling_expectation)
    assert not cl.claim_volume_expectation("x", e, s2, theory=wrong).passed
    wrong = variant(theory, elementary_symmetric=theory.wrong_elementary_symmetric)
    assert not cl.claim_gram_sum("x", e, s2, theory=wrong).passed
    wrong = variant(theory, volume_sampling_bound=theory.wrong_volume_sampling_bound)
    assert not cl.claim_volume_bound("x", e, s2, theory=wrong).passed


def test_c2_claims_hold_and_reject(c2_runs):
    assert cl.claim_unbiased("x", c2_runs).passed
    assert cl.claim_variance("x", c2_runs).passed
    wrong = variant(theory, estimator_mean=theory.wrong_estimator_mean)
    assert not cl.claim_unbiased("x", c2_runs, theory=wrong).passed
    wrong = variant(theory, estimator_variance=theory.wrong_estimator_variance)
    assert not cl.claim_variance("x", c2_runs, theory=wrong).passed


def test_c3_rate_in_m_holds_and_rejects(base):
    ms = [16, 64, 256, 1024]
    sq = np.column_stack([model.residual_cell(base, 2, mm, 1000, rng_for(0, "C3t", str(mm))).err ** 2
                          for mm in ms])
    assert cl.claim_rate_in_m("x", ms, sq, rng_for(0, "b")).passed
    wrong = variant(theory, rmse_exponent_in_m=theory.wrong_rmse_exponent_in_m)
    assert not cl.claim_rate_in_m("x", ms, sq, rng_for(0, "b"), theory=wrong).passed


def test_c4_rate_in_phi_holds_and_rejects(settings, c4_runs):
    phis = [st.phi for st in settings]
    c = cl.claim_rate_in_phi("x", phis, c4_runs[2], rng_for(0, "b"))
    assert c.passed and abs(c.predicted - 1) < 0.02
    wrong = variant(theory, residual_rmse=theory.wrong_residual_rmse)
    assert not cl.claim_rate_in_phi("x", phis, c4_runs[2], rng_for(0, "b"), theory=wrong).passed


def test_c6_sensitivity_holds_and_rejects(c6_runs):
    assert cl.claim_sensitivity_mse("x", c6_runs).passed
    wrong = variant(theory, estimator_variance=theory.wrong_estimator_variance)
    assert not cl.claim_sensitivity_mse("x", c6_runs, theory=wrong).passed


def test_c5_guarantee_holds_and_rejects(c4_runs, c6_runs):
    runs = c4_runs[1] + c4_runs[2] + c6_runs
    kinds = ["additive"] * 10 + ["relative"] * 5
    assert cl.claim_guarantee("x", runs, kinds, DEF["delta"]).passed
    wrong = variant(theory, summand_bound=theory.wrong_summand_bound)
    assert not cl.claim_guarantee("x", runs, kinds, DEF["delta"], theory=wrong).passed
    with pytest.raises(ValueError, match="kind"):
        cl.failure_counts(runs[:1], 0.05, ["other"])


def test_residual_summand_range_is_reached_by_construction(c2_runs, inst):
    """Not a claim: the range R = lam sum q / n is reached by the definition of lam_hat, and for the
    constructed angular loss (e_i = zeta_i q_i / 2) the summands are exactly R zeta_i."""
    for run in c2_runs:
        pos = run.p > 0
        y = run.e[pos] / (run.e.size * run.p[pos])
        assert np.max(np.abs(y)) == pytest.approx(theory.summand_bound(run.lam, run.q), rel=1e-12)
    run = c2_runs[1]
    pos = run.p > 0
    y = run.e[pos] / (run.e.size * run.p[pos])
    R = theory.summand_bound(model.ANGULAR_LAMBDA, run.q)
    np.testing.assert_allclose(y, R * inst.zeta[pos], rtol=1e-9)
    assert np.max(np.abs(y)) <= R * (1 + 1e-12)
    # the wrong range (no importance weight) is exceeded by far
    assert np.max(np.abs(y)) > 10 * theory.wrong_summand_bound(model.ANGULAR_LAMBDA, run.q)


def test_hoeffding_deviation_inverts_the_tail_bound():
    for h, m, delta in [(1.0, 64, 0.05), (0.3, 10, 1e-3), (2.5, 1000, 0.2)]:
        u = cl.hoeffding_deviation(h, m, delta)
        # Hoeffding for values in [-h, h]: P(|mean - E| > u) <= 2 exp(-2 m u^2 / (2h)^2)
        assert 2 * math.exp(-2 * m * u**2 / (2 * h) ** 2) == pytest.approx(delta, rel=1e-12)


def test_detectable_z_and_variance_se():
    assert cl.detectable_z(2) == pytest.approx(math.sqrt(-2 * math.log(1e-3)), rel=1e-9)
    x = rng_for(0, "test-se").standard_normal(20_000)
    s2, se = cl.sample_variance_and_se(x)
    assert s2 == pytest.approx(1.0, abs=0.05)
    assert se == pytest.approx(math.sqrt(2 / x.size), rel=0.05)


def test_c5_sensitivity_range_holds_and_rejects(c6_runs):
    assert cl.claim_sensitivity_range("x", c6_runs).passed
    wrong = variant(theory, sensitivity_range_bound=theory.wrong_sensitivity_range_bound)
    assert not cl.claim_sensitivity_range("x", c6_runs, theory=wrong).passed


def test_binomial_cap():
    assert cl.binomial_cap(3000, 0.05, 1) > 150
    assert cl.binomial_cap(3000, 0.05, 15) >= cl.binomial_cap(3000, 0.05, 1)


def test_a_nan_prediction_fails_the_bound_claims(enum, c6_runs):
    e, s2 = enum
    nan_bound = variant(theory, volume_sampling_bound=nan_after_first(theory.volume_sampling_bound))
    assert not cl.claim_volume_bound("x", e, s2, theory=nan_bound).passed
    nan_range = variant(theory, sensitivity_range_bound=nan_after_first(theory.sensitivity_range_bound))
    assert not cl.claim_sensitivity_range("x", c6_runs, theory=nan_range).passed
