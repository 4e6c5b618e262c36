"""Tests of chapter 'attention-query-learning': the model, the learners, the theory, and one mutation test per claim.

The mutation tests compute each claim's data with the same functions the notebook calls, at the default
parameters, and check that the claim passes with the chapter's theory and fails with the named wrong theory
(``theory=variant(theory, f=theory.wrong_f)``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from theorylib.chapters.attention_query_learning import CHAPTER, model, model_runs, theory, tolerances
from theorylib.chapters.attention_query_learning import claims as cl
from theorylib.core import rng_for
from theorylib.core.theory import nan_after_first, variant

P = CHAPTER.validate(CHAPTER.defaults())
PACKAGE = Path(cl.__file__).parent


def _instance(d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return model.random_full_instance(d, np.random.default_rng(seed))


# ------------------------------------------------------------------------------------------ the model

def test_one_token_query_returns_the_value():
    A, u = _instance(5)
    X = np.random.default_rng(1).standard_normal((7, 1, 5))
    assert_allclose(model.attention_oracle(X, A, u), X[:, 0, :] @ u, rtol=1e-14, atol=1e-15)


def test_two_token_probe_identity_lemma_1():
    rng = np.random.default_rng(2)
    for _ in range(20):
        A, u = _instance(6, int(rng.integers(1 << 30)))
        q, w = rng.standard_normal(6), rng.standard_normal(6)
        f = model.attention_oracle(np.stack([q + w, q])[None], A, u)[0]
        assert_allclose(f, u @ q + theory._sigmoid(q @ A @ w) * (u @ w), rtol=1e-12, atol=1e-13)


def test_oracle_matches_a_direct_softmax_and_is_stable_at_huge_logits():
    rng = np.random.default_rng(3)
    A, u = _instance(4)
    X = rng.standard_normal((10, 5, 4))
    s = np.einsum("bnd,bd->bn", X, X[:, -1] @ A)
    wts = np.exp(s) / np.exp(s).sum(1, keepdims=True)
    assert_allclose(model.attention_oracle(X, A, u), np.einsum("bn,bn->b", wts, X @ u), rtol=1e-12)
    big = model.attention_oracle(X, 1e3 * A, u)           # logits ~1e3: no overflow, a convex combination
    vals = X @ u
    assert np.all(np.isfinite(big))
    assert np.all((big >= vals.min(1) - 1e-12) & (big <= vals.max(1) + 1e-12))


def test_sigmoid_and_logit_are_inverse_and_logit_refuses_non_probabilities():
    z = np.linspace(-15, 15, 61)                  # 1 - sigma(15) ~ 3e-7: logit is accurate to eps / 3e-7
    assert_allclose(model.logit(theory._sigmoid(z)), z, atol=1e-8)
    assert np.all(np.isfinite(theory._sigmoid(np.array([-1e4, 1e4]))))
    with pytest.raises(ValueError, match="probability in"):
        model.logit(np.array([0.5, 1.0]))


def test_multihead_oracle_sums_heads():
    A1, u1 = _instance(3, 1)
    A2, u2 = _instance(3, 2)
    X = np.random.default_rng(0).standard_normal((4, 3, 3))
    assert_allclose(model.multihead_oracle(X, [A1, A2], [u1, u2]),
                    model.attention_oracle(X, A1, u1) + model.attention_oracle(X, A2, u2), rtol=1e-14)


# ------------------------------------------------------------------------------------------ the oracle

def test_oracle_counts_every_query_including_broadcast_repeats():
    A, u = _instance(3)
    o = model.QueryOracle(A, u)
    o(np.ones((2, 5, 1, 3)))
    assert o.n_queries == 10
    X = np.broadcast_to(np.ones((1, 2, 3)), (7, 1, 2, 3))
    y = o(X)
    assert o.n_queries == 17 and y.shape == (7, 1)
    assert not hasattr(o, "A") and not hasattr(o, "u")


def test_gaussian_oracle_draws_fresh_noise_for_each_repeat():
    A, u = _instance(3)
    o = model.QueryOracle(A, u, noise="gaussian", sigma=1.0, rng=np.random.default_rng(0))
    y = o(np.broadcast_to(np.eye(3)[0][None, None, :], (1000, 1, 3)))
    assert o.n_queries == 1000
    assert abs(np.std(y) - 1.0) < 0.1 and np.unique(y).size == 1000


def test_noise_on_one_kind_of_query_only():
    A, u = _instance(3)
    o = model.QueryOracle(A, u, noise=model.GaussianNoiseOn(1.0, np.random.default_rng(0), 2))
    one = np.ones((4, 1, 3))
    assert_array_equal(o(one), model.attention_oracle(one, A, u))
    two = np.ones((4, 2, 3))
    assert np.all(o(two) != model.attention_oracle(two, A, u))
    with pytest.raises(ValueError, match="source"):
        model_runs.run_noise(A, u, 1e-4, [1], 10, np.random.default_rng(0), source="base")


def test_learn_value_vector_with_repeats_counts_n_times():
    A, u = _instance(4)
    o = model.QueryOracle(A, u, noise="gaussian", sigma=1e-3, rng=np.random.default_rng(1))
    model.learn_value_vector(o, 4, repeats=16, batch=(5,))
    assert o.n_queries == 4 * 16 * 5


# ------------------------------------------------------------------------------------------ learners

def test_learn_full_is_exact_and_counts_d2_plus_2d():
    for d in (1, 2, 3, 7):
        A, u = _instance(d, d)
        o = model.QueryOracle(A, u)
        A_hat, u_hat = model.learn_full(o, d, s=2.5)
        assert_allclose(A_hat, A, atol=1e-12)
        assert_allclose(u_hat, u, atol=1e-14)
        assert o.n_queries == model.query_count_full(d) == d * d + 2 * d


def test_learn_full_batch_equals_single_runs():
    A, u = _instance(4)
    A_hat, _ = model.learn_full(model.QueryOracle(A, u), 4, batch=(3,))
    assert A_hat.shape == (3, 4, 4)
    assert_allclose(A_hat, np.broadcast_to(A, (3, 4, 4)), atol=1e-12)


@pytest.mark.parametrize("d,r", [(6, 1), (6, 6), (9, 3), (12, 2)])
def test_learn_low_rank_is_exact_at_k_equal_r(d, r):
    rng = np.random.default_rng(d * 10 + r)
    A, u = model.random_low_rank_instance(d, r, rng)
    o = model.QueryOracle(A, u)
    A_hat, u_hat, info = model.learn_low_rank(o, d, r, rng)
    assert_allclose(A_hat, A, atol=1e-10)
    assert info.rank == r
    assert o.n_queries == model.query_count_low_rank(d, r)
    if r < d:
        assert o.n_queries == r * (2 * d - r) + 2 * d + r


def test_sketch_above_rank_exact_and_below_rank_above_eckart_young():
    rng = np.random.default_rng(5)
    A, u = model.random_low_rank_instance(12, 3, rng)
    for k in range(1, 7):
        run = model_runs.run_sketch(A, u, 3, k, rng)
        assert run.n_queries == model.query_count_low_rank(12, k)
        if k >= 3:
            assert run.rel_err <= tolerances.sketch_rel_tolerance(A, u, run.info.K, run.info.Q, run.info.kappa)
        else:
            assert np.linalg.matrix_rank(run.A_hat) <= k
            assert run.rel_err >= theory.eckart_young_floor(A, k)


def test_sketch_margins_are_at_least_one_and_the_theory_restates_the_offset():
    u = np.random.default_rng(0).standard_normal(8)
    K, _ = model.sketch_basis(8, 2, np.random.default_rng(1))
    v0, c = model.margin_offset(u, K.T)
    assert np.min(u @ (v0[None, :] + K.T).T) >= 1 - 1e-12 and u @ v0 == pytest.approx(c)
    v0_t, c_t = theory.design_offset(u, K.T)
    assert_allclose(v0_t, v0, rtol=1e-14) and c_t == pytest.approx(float(c), rel=1e-14)


def test_dof_and_count_formulas():
    assert model.query_count_low_rank(32, 2) == 190 and model.query_count_full(32) == 1088
    for d in range(2, 20):
        for r in range(1, d):
            assert model.query_count_low_rank(d, r) - theory.dof_lower_bound(d, r) == d + r
            assert theory.wrong_dof_lower_bound_no_gauge(d, r) - theory.dof_lower_bound(d, r) == r * r


def test_parametrization_jacobian_is_the_derivative_of_u_v_transpose():
    rng = np.random.default_rng(9)
    d, r = 5, 2
    U, V, dU, dV, du = (rng.standard_normal(shape) for shape in ((d, r), (d, r), (d, r), (d, r), (d,)))
    J = model_runs.parametrization_jacobian(U, V)
    assert J.shape == (d * d + d, 2 * d * r + d)
    h = 1e-6
    fd = ((U + h * dU) @ (V + h * dV).T - (U - h * dU) @ (V - h * dV).T) / (2 * h)
    out = J @ np.concatenate([dU.ravel(), dV.ravel(), du])
    assert_allclose(out[: d * d].reshape(d, d), fd, atol=1e-8)
    assert_allclose(out[d * d:], du, atol=0)
    G = rng.standard_normal((r, r))                   # a gauge direction U -> U (I + tG), V -> V (I - tG)^T
    gauge = J @ np.concatenate([(U @ G).ravel(), (-V @ G.T).ravel(), np.zeros(d)])
    assert np.max(np.abs(gauge)) < 1e-12


@pytest.mark.parametrize("d,r", [(4, 1), (6, 3), (8, 8), (12, 2)])
def test_tangent_rank_is_d_plus_r_2d_minus_r(d, r):
    tr = model_runs.tangent_rank(d, r, np.random.default_rng(d + r))
    assert tr.rank == theory.dof_lower_bound(d, r)
    kept, dropped = tr.gap
    assert kept > 1e-3 and dropped < tr.tol


# ------------------------------------------------------------------------------------------ Theorem 3

def test_closed_form_jacobian_equals_the_measured_finite_differences_of_the_estimator():
    A, u = model_runs.conditioned_full_instance(4, np.random.default_rng(7), J_max=200.0)
    J = theory.first_order_jacobian(A, u)
    M = model_runs.measured_jacobian(A, u)
    scale = np.max(J.l1())
    assert_allclose(M.probe, J.alpha, rtol=1e-5, atol=1e-5 * scale)
    assert_allclose(M.base, -np.broadcast_to(J.beta[:, None], (4, 4)), rtol=1e-5, atol=1e-5 * scale)
    assert_allclose(M.value, J.gamma, rtol=1e-5, atol=1e-5 * scale)
    assert_allclose(M.l1(), J.l1(), rtol=1e-6)


def test_measured_jacobian_with_amplitude_s_matches_gamma_over_s():
    A, u = _instance(3, 4)
    for s in (0.5, 2.5):
        J = theory.first_order_jacobian(A, u, s=s)
        M = model_runs.measured_jacobian(A, u, s=s)
        assert_allclose(M.l1(), J.l1(), rtol=1e-5)
        assert_allclose(M.value, J.gamma / s, rtol=1e-5, atol=1e-5 * np.max(J.l1()))
        wrong = theory.wrong_first_order_jacobian_amplitude_squared(A, u, s=s)
        assert np.max(np.abs(wrong.l1() - M.l1()) / M.l1()) > 0.05


def test_wrong_jacobians_differ_from_the_finite_differences():
    A, u = model_runs.conditioned_full_instance(4, np.random.default_rng(7), J_max=200.0)
    M = model_runs.measured_jacobian(A, u)
    eb = theory.wrong_first_order_jacobian_margin_without_e_b(A, u)
    assert_allclose(eb.beta, theory.first_order_jacobian(A, u).beta)
    assert np.max(np.abs(eb.alpha - M.probe) / np.abs(M.probe)) > 0.05
    lf = theory.wrong_first_order_jacobian_logit_free(A, u)
    assert np.all(lf.l1() < M.l1())


def test_jacobian_l1_bound_of_theorem_3():
    for seed in range(10):
        A, u = _instance(6, seed)
        J = theory.first_order_jacobian(A, u)
        B_D = np.max(np.abs(theory.design_logits(A, u)))
        W = J.v0 + np.eye(6)
        margin = np.minimum(J.m, J.m0)[None, :]
        bound = 8 * np.exp(B_D) * (1 + (1 + np.abs(W).sum(1)[None, :] + np.abs(J.v0).sum())) / margin
        assert np.all(J.l1() <= bound)
        assert np.all(margin >= 1 - 1e-12)


def test_predicted_mse_scales_as_sigma2_over_n_and_logit_free_is_smaller():
    A, u = _instance(5)
    J = theory.first_order_jacobian(A, u)
    m1 = theory.predicted_mse(J, 1e-3, 1)
    assert theory.predicted_mse(J, 2e-3, 4) == pytest.approx(m1)
    half = theory.first_order_jacobian(A, u, s=0.5)
    assert half.frobenius2() == pytest.approx(np.sum(J.alpha**2) + 5 * np.sum(J.beta**2) + 4 * np.sum(J.gamma**2))


def test_logit_free_probe_part_is_at_least_16_times_smaller_on_random_instances():
    """The true statement: sum(alpha^2 + beta^2) >= 16 x its logit-free version on every instance (each factor
    p(1-p) <= 1/4), over random instances in the declared ranges; the value part and the total have no
    uniform factor 16 (gamma mixes two probes' factors), and a random instance shows it."""
    rng = np.random.default_rng(2026)
    value_ratios, total_ratios = [], []
    for _ in range(400):
        d = int(rng.integers(2, 9))
        A, u = model.random_full_instance(d, rng, A_scale=rng.uniform(0.1, 3.0), u_scale=rng.uniform(0.1, 10.0))
        s = rng.uniform(0.1, 4.0)
        right = theory.first_order_jacobian(A, u, s=s)
        lf = theory.wrong_first_order_jacobian_logit_free(A, u, s=s)
        assert right.probe_frobenius2() >= 16 * lf.probe_frobenius2() * (1 - 1e-12)
        value_ratios.append(right.value_frobenius2() / lf.value_frobenius2())
        total_ratios.append(right.frobenius2() / lf.frobenius2())
    assert min(value_ratios) < 16 and min(total_ratios) < 16


# ------------------------------------------------------------------------------------------ Proposition 4

def _equivalent_multihead(A, u1, u2, w):
    """Proposition 4(1): heads (A, u1 + w), (A, u2 - w) define the same function as (A, u1), (A, u2)."""
    return (A, A), (u1 + w, u2 - w)


def test_equivalent_multihead_same_function_and_distance():
    rng = np.random.default_rng(11)
    A, u1 = _instance(5, 3)
    u2 = rng.standard_normal(5)
    w = model_runs.orthogonal_shift(u1, u2, 3.0, rng)
    assert abs(w @ (u1 - u2)) < 1e-12 and np.linalg.norm(w) == pytest.approx(3.0)
    theta = ((A, A), (u1, u2))
    theta2 = _equivalent_multihead(A, u1, u2, w)
    for X in model_runs.random_sequences(500, 6, 5, rng):
        if X.shape[0]:
            assert_allclose(model.multihead_oracle(X, *theta2), model.multihead_oracle(X, *theta), atol=1e-13)
    assert model_runs.param_distance_mod_perm(theta, theta2) == pytest.approx(math.sqrt(2) * np.linalg.norm(w))
    assert np.linalg.norm(w) == pytest.approx(3.0)
    swapped = ((A, A), (u2, u1))
    assert model_runs.param_distance_mod_perm(theta, swapped) == 0.0


# ------------------------------------------------------------------------------------------ bad input

def test_bad_inputs_raise_clear_errors():
    A, u = _instance(3)
    with pytest.raises(ValueError, match="not identifiable"):
        model.learn_full(model.QueryOracle(A, np.zeros(3)), 3)
    with pytest.raises(ValueError, match="not identifiable"):
        theory.first_order_jacobian(A, np.zeros(3))
    with pytest.raises(ValueError, match="rank r"):
        model.random_low_rank_instance(3, 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="r = 0"):
        theory.dof_lower_bound(3, 0)
    with pytest.raises(ValueError, match="dimension 2"):
        model.attention_oracle(np.ones((1, 2, 2)), A, u)
    with pytest.raises(ValueError, match="at least one token"):
        model.attention_oracle(np.ones((1, 0, 3)), A, u)
    with pytest.raises(ValueError, match="sigma"):
        model.QueryOracle(A, u, noise="gaussian", sigma=-1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="explicit rng"):
        model.QueryOracle(A, u, noise="gaussian", sigma=1.0)
    with pytest.raises(ValueError, match="repeats"):
        model.learn_full(model.QueryOracle(A, u), 3, repeats=0)
    with pytest.raises(ValueError, match="sketch size k"):
        model.learn_low_rank(model.QueryOracle(A, u), 3, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="shape"):
        model.QueryOracle(A, np.ones(4))
    with pytest.raises(ValueError, match="J_max"):
        model_runs.conditioned_full_instance(4, np.random.default_rng(0), J_max=1e-3, max_tries=3)
    with pytest.raises(ValueError, match="tau_adv"):
        model_runs.run_adversarial(A, u, [1e-6], 0.0, 1, np.random.default_rng(0))


def test_a_probability_outside_0_1_under_noise_raises_and_is_never_clipped():
    A, u = _instance(4)
    o = model.QueryOracle(A, u, noise="gaussian", sigma=10.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"left \(0, 1\)"):
        model.learn_full(o, 4, batch=(50,))


# ------------------------------------------------------------------------------------------ mutation tests
# Each fixture computes a claim's data with the notebook's functions at the default parameters.

@pytest.fixture(scope="module")
def full_runs():
    rng1 = rng_for(P.seed, "C1")
    return [model_runs.run_full(d, rng1, A_scale=P.A_scale, u_scale=P.u_scale, s=P.s_amp) for d in P.d_list]


@pytest.fixture(scope="module")
def sketch_runs():
    rng2 = rng_for(P.seed, "C1-C2")
    A, u = model.random_low_rank_instance(P.d_lr, P.r, rng2, A_scale=P.A_scale, u_scale=P.u_scale)
    return model_runs.run_sketches(A, u, P.r, rng2)


RANK_ONE = variant(theory, recovered_matrix=theory.wrong_recovered_matrix_rank_one)


def test_mutation_c1a_rank_one_strawman(full_runs):
    assert cl.claim_full_recovery("C1a", full_runs).passed
    assert not cl.claim_full_recovery("C1a", full_runs, theory=RANK_ONE).passed


def test_full_learner_count_is_d2_plus_2d_by_design(full_runs):
    # by construction (the learner's own plan), so a unit test, not a claim
    for run in full_runs:
        assert run.n_queries == model.query_count_full(run.d)
        assert run.n_queries != run.d * run.d + run.d  # 'the value vector comes for free'


def test_mutation_c1c_rank_one_strawman_on_the_sketch(sketch_runs):
    sk = sketch_runs[P.r - 1]
    assert cl.claim_sketch_recovery("C1c", sk).passed
    assert not cl.claim_sketch_recovery("C1c", sk, theory=RANK_ONE).passed


def test_sketch_count_by_design(sketch_runs):
    for sk in sketch_runs:
        assert sk.n_queries == model.query_count_low_rank(sk.d, sk.k)
        assert sk.n_queries < model.query_count_full(sk.d)  # a low-rank head does not need d^2 + 2d


def test_mutation_c1e_parameter_dimension():
    tr = model_runs.tangent_rank(P.d_lr, P.r, rng_for(P.seed, "C1-dim"))
    assert cl.claim_parameter_dimension("C1e", tr).passed
    wrong = variant(theory, dof_lower_bound=theory.wrong_dof_lower_bound_no_gauge)
    assert not cl.claim_parameter_dimension("C1e", tr, theory=wrong).passed


def test_mutation_c2_threshold(sketch_runs):
    c2 = cl.claim_sketch_threshold("C2", sketch_runs)
    assert c2.passed and c2.details["kstar"] == P.r
    for wrong in (theory.wrong_sketch_threshold_half, theory.wrong_sketch_threshold_full):
        assert not cl.claim_sketch_threshold("C2", sketch_runs, theory=variant(theory, sketch_threshold=wrong)).passed


def test_c2_below_the_threshold_every_sketch_is_above_its_floor(sketch_runs):
    c2 = cl.claim_sketch_threshold("C2", sketch_runs)
    for run, floor, tol in zip(sketch_runs, c2.details["floor"], c2.details["rel_tol"], strict=True):
        if run.k < P.r:
            assert run.rel_err >= floor >= 1e3 * tol


@pytest.fixture(scope="module")
def noise_run():
    rng3 = rng_for(P.seed, "C3")
    A, u = model_runs.conditioned_full_instance(P.d_noise, rng3, J_max=P.J_max, A_scale=P.A_scale,
                                                u_scale=P.u_scale, s=P.s_amp)
    return model_runs.run_noise(A, u, P.sigma, P.n_list, P.R, rng3, s=P.s_amp)


WRONG_JACOBIANS = {
    "logit-free": theory.wrong_first_order_jacobian_logit_free,
    "amplitude 1/s^2": theory.wrong_first_order_jacobian_amplitude_squared,
    "margin without e_b": theory.wrong_first_order_jacobian_margin_without_e_b,
    "amplitude-free": theory.wrong_first_order_jacobian_amplitude_free,
}


@pytest.fixture(scope="module")
def source_runs(noise_run):
    rng = rng_for(P.seed, "C3-sources")
    return {(src, amp): model_runs.run_noise(noise_run.A, noise_run.u, P.sigma, [1], 10 * P.R, rng, s=amp,
                                             source=src)
            for src, amp in (("probes", P.s_amp), ("values", P.s_amp), ("values", P.s_amp2))}


def test_the_two_parts_add_up_to_the_total():
    A, u = _instance(5)
    J = theory.first_order_jacobian(A, u, s=0.3)
    parts = theory.predicted_mse_by_source(J, 1e-3, 4)
    assert parts["probes"] + parts["values"] == pytest.approx(float(theory.predicted_mse(J, 1e-3, 4)))


@pytest.mark.parametrize("key", [("probes", P.s_amp), ("values", P.s_amp), ("values", P.s_amp2)])
def test_mutation_c3_sources_logit_free(source_runs, key):
    run = source_runs[key]
    assert cl.claim_noise_mse_source("C3s", run).passed
    wrong = variant(theory, first_order_jacobian=WRONG_JACOBIANS["logit-free"])
    assert not cl.claim_noise_mse_source("C3s", run, theory=wrong).passed


@pytest.mark.parametrize("amp", [P.s_amp, P.s_amp2])
@pytest.mark.parametrize("which", ["amplitude 1/s^2", "amplitude-free"])
def test_mutation_c3_values_wrong_power_of_s_at_both_amplitudes(source_runs, amp, which):
    wrong = variant(theory, first_order_jacobian=WRONG_JACOBIANS[which])
    assert not cl.claim_noise_mse_source("C3s", source_runs["values", amp], theory=wrong).passed


def test_the_defaults_test_the_amplitude_on_both_sides_of_1():
    assert P.s_amp < 1.0 < P.s_amp2


@pytest.mark.parametrize("which", ["amplitude 1/s^2", "logit-free"])
def test_mutation_c3_wrong_jacobians(noise_run, which):
    """The logit-free and the 1/s^2 Jacobians are rejected at every n."""
    wrong = variant(theory, first_order_jacobian=WRONG_JACOBIANS[which])
    for i in range(len(P.n_list)):
        assert cl.claim_noise_mse("C3", noise_run, i).passed
        assert not cl.claim_noise_mse("C3", noise_run, i, theory=wrong).passed


def test_noisy_oracle_count_by_design(noise_run):
    # every repeat is a real oracle call (the batch broadcast does not hide repeats from the counter)
    d = noise_run.u.size
    assert noise_run.n_queries == model.noisy_query_count(d, noise_run.n_list, noise_run.R)
    assert noise_run.n_queries != noise_run.R * model.query_count_full(d) * len(noise_run.n_list)  # lazy


def test_mutation_c3_rate_exponent(noise_run):
    fit = model_runs.rms_rate_fit(noise_run, rng_for(P.seed, "C3-bootstrap"))
    assert cl.claim_rms_rate("C3", fit).passed
    assert not cl.claim_rms_rate("C3", fit, theory=variant(theory, rms_exponent=theory.wrong_rms_exponent_bias)).passed


@pytest.fixture(scope="module")
def adversary_run():
    rng4 = rng_for(P.seed, "C4")
    A, u = model_runs.conditioned_full_instance(P.d_noise, rng4, J_max=P.J_max, A_scale=P.A_scale,
                                                u_scale=P.u_scale, s=P.s_amp)
    return model_runs.run_adversarial(A, u, P.tau_list, P.tau_adv, P.n_adv, rng4, s=P.s_amp)


def test_mutation_c4a_margin_only(adversary_run):
    assert cl.claim_worst_coefficient("C4a", adversary_run).passed
    wrong = variant(theory, worst_coefficient=theory.wrong_worst_coefficient_margin_only)
    assert not cl.claim_worst_coefficient("C4a", adversary_run, theory=wrong).passed


@pytest.mark.parametrize("which", sorted(WRONG_JACOBIANS))
def test_mutation_c4a_wrong_jacobians(adversary_run, which):
    wrong = variant(theory, first_order_jacobian=WRONG_JACOBIANS[which])
    assert not cl.claim_worst_coefficient("C4a", adversary_run, theory=wrong).passed


def test_mutation_c4b_margin_without_e_b(adversary_run):
    """The margin without its e_b term (a wrong theory) is rejected by C4b too (and by C4a)."""
    wrong = variant(theory, first_order_jacobian=WRONG_JACOBIANS["margin without e_b"])
    assert not cl.claim_random_adversaries("C4b", adversary_run, theory=wrong).passed


def test_mutation_c4b_margin_only(adversary_run):
    assert cl.claim_random_adversaries("C4b", adversary_run).passed
    wrong = variant(theory, first_order_bound=theory.wrong_first_order_bound_margin_only)
    assert not cl.claim_random_adversaries("C4b", adversary_run, theory=wrong).passed


def test_c4_worst_entry_of_the_measured_jacobian_is_the_theory_s(adversary_run):
    L1 = theory.first_order_jacobian(adversary_run.A, adversary_run.u, s=adversary_run.s).l1()
    assert adversary_run.worst == np.unravel_index(int(np.argmax(L1)), L1.shape)


def test_c4_second_order_structure(adversary_run):
    """rho(tau) - 1 is linear in tau: the even part gives the same kappa at every tau (to rounding)."""
    k = adversary_run.kappa_worst
    assert_allclose(k[1:], k[-1], rtol=1e-2)
    assert_array_equal(adversary_run.odd_slope > 0, True)


def test_proposition_4_holds_by_construction_and_the_wrong_equivalence_does_not():
    """Proposition 4(1) and (3) at the former defaults (d = 8, ||w|| = 3, 10^4 sequences of length <= 8): the
    equivalent model agrees to rounding, the 'shift both heads' model does not; the distance is sqrt 2 ||w||."""
    from theorylib.chapters.attention_query_learning.model_runs import function_gap, param_distance_mod_perm

    rng = np.random.default_rng(5)
    heads = model_runs.random_two_heads(8, 3.0, rng)
    seqs = model_runs.random_sequences(10000, 8, 8, rng)
    gap = function_gap(heads.theta, _equivalent_multihead(heads.A, heads.u1, heads.u2, heads.w), seqs)
    assert gap.max_diff <= tolerances.two_head_rounding(8, gap.L_max, gap.scale)
    wrong = ((heads.A, heads.A), (heads.u1 + heads.w, heads.u2 + heads.w))      # 'shift both heads by w'
    assert function_gap(heads.theta, wrong, seqs).max_diff > 1e-3
    theta2 = _equivalent_multihead(heads.A, heads.u1, heads.u2, heads.w)
    norms = [float(np.linalg.norm(v)) for v in (*heads.theta[1], *theta2[1])]
    assert abs(param_distance_mod_perm(heads.theta, theta2) - math.sqrt(2) * np.linalg.norm(heads.w)) <= \
        tolerances.norm_rounding(norms)
    assert param_distance_mod_perm(heads.theta, theta2) > 1.0          # not identifiable up to permutation


# ------------------------------------------------------------------------------------------ C5: rank-one probes

def test_rank_one_probes_are_exact_bilinear_measurements_one_query_each():
    rng = np.random.default_rng(3)
    A, u = model.random_low_rank_instance(10, 2, rng)
    oracle = model.QueryOracle(A, u)
    Q, W = rng.standard_normal((30, 10)) / math.sqrt(10), rng.standard_normal((30, 10)) / math.sqrt(10)
    y = model.rank_one_probes(oracle, u, Q, W)
    assert oracle.n_queries == 30
    assert_allclose(y, np.einsum("ia,ab,ib->i", Q, A, W), atol=1e-11)


def test_als_recovers_a_rank_r_matrix_from_enough_gaussian_rank_one_measurements():
    rng = np.random.default_rng(4)
    for d, r in ((12, 1), (16, 3)):
        M = rng.standard_normal((d, r)) @ rng.standard_normal((r, d))
        m = 6 * d * r
        Q, W = rng.standard_normal((m, d)), rng.standard_normal((m, d))
        y = np.einsum("ia,ab,ib->i", Q, M, W)
        M_hat = model.als_rank_one(Q, W, y, r, 80)
        assert np.linalg.norm(M_hat - M) <= 1e-9 * np.linalg.norm(M)
        assert np.linalg.matrix_rank(M_hat) == r


def test_learn_rank_one_probes_counts_d_plus_m_and_recovers():
    rng = np.random.default_rng(6)
    A, u = model.random_low_rank_instance(12, 2, rng)
    oracle = model.QueryOracle(A, u)
    A_hat, u_hat, Q, W = model.learn_rank_one_probes(oracle, 12, 2, 150, rng)
    assert oracle.n_queries == 12 + 150 and Q.shape == W.shape == (150, 12)
    assert_allclose(u_hat, u, atol=1e-14)
    assert np.linalg.norm(A_hat - A) <= 1e-9 * np.linalg.norm(A)


def test_probe_tangent_operator_is_the_derivative_along_rank_r_matrices():
    """T (X, Y) = d/dt P(A + t (X V^T + U Y^T)) (central differences), and its rank is min(m, r (2d - r))."""
    rng = np.random.default_rng(8)
    d, r = 7, 2
    A, _ = model.random_low_rank_instance(d, r, rng)
    U, _, Vt = np.linalg.svd(A)
    X, Y = rng.standard_normal((d, r)), rng.standard_normal((d, r))
    direction = X @ Vt[:r] + U[:, :r] @ Y.T
    h = 1e-6
    for m in (10, 40):
        Q, W = rng.standard_normal((m, d)), rng.standard_normal((m, d))
        T = model_runs.probe_tangent_operator(A, Q, W, r)

        def meas(M, Q=Q, W=W):
            return np.einsum("ia,ab,ib->i", Q, M, W)

        fd = (meas(A + h * direction) - meas(A - h * direction)) / (2 * h)
        assert_allclose(T @ np.concatenate([X.ravel(), Y.ravel()]), fd, rtol=1e-7, atol=1e-7)
        assert np.linalg.matrix_rank(T) == min(m, theory.probe_measurements_needed(d, r))


@pytest.fixture(scope="module")
def probe_runs():
    rng6 = rng_for(P.seed, "C5")
    A, u = model.random_low_rank_instance(P.d_lr, P.r, rng6, A_scale=P.A_scale, u_scale=P.u_scale)
    m_list = [int(round(mu * P.d_lr * P.r)) for mu in P.m_grid]
    grid = model_runs.run_probe_grid(A, u, P.r, m_list, P.n_rop, rng6)
    top = model_runs.run_probes(A, u, P.r, int(round(P.m_top * P.d_lr * P.r)), rng6)
    return grid, top


def test_mutation_c5a_probe_recovery(probe_runs):
    _, top = probe_runs
    assert cl.claim_probe_recovery("C5a", top).passed
    wrong = variant(theory, recovered_matrix=theory.wrong_recovered_matrix_rank_one)
    assert not cl.claim_probe_recovery("C5a", top, theory=wrong).passed


def test_probe_count_by_design(probe_runs):
    grid, top = probe_runs
    for run in [*grid, top]:
        assert run.n_queries == model.probe_query_count(run.d, run.m)
        assert run.n_queries != run.d + 2 * run.m  # 'every probe needs a base query'


def test_mutation_c5c_tangent_rank_no_gauge(probe_runs):
    grid, top = probe_runs
    assert cl.claim_probe_tangent_ranks("C5c", [*grid, top]).passed
    wrong = variant(theory, probe_tangent_rank=theory.wrong_probe_tangent_rank_no_gauge)
    assert not cl.claim_probe_tangent_ranks("C5c", [*grid, top], theory=wrong).passed


def test_c5c_fails_when_one_run_is_off_even_if_the_sums_agree(probe_runs):
    grid, top = probe_runs
    ranks = {"n": 0}

    def shifted(d, r, m):
        ranks["n"] += 1
        return theory.probe_tangent_rank(d, r, m) + (1 if ranks["n"] == 1 else -1 if ranks["n"] == 2 else 0)

    wrong = variant(theory, probe_tangent_rank=shifted)
    assert not cl.claim_probe_tangent_ranks("C5c", [*grid, top], theory=wrong).passed


def test_mutation_c5d_entrywise(probe_runs):
    grid, _ = probe_runs
    assert cl.claim_no_recovery_below_bound("C5d", grid).passed
    wrong = variant(theory, probe_measurements_needed=theory.wrong_probe_measurements_needed_entrywise)
    assert not cl.claim_no_recovery_below_bound("C5d", grid, theory=wrong).passed


def test_c5_grid_straddles_the_bound_at_the_defaults(probe_runs):
    grid, _ = probe_runs
    n_r = theory.probe_measurements_needed(P.d_lr, P.r)
    assert any(run.m < n_r for run in grid) and any(run.m >= 2 * P.d_lr * P.r for run in grid)


# ------------------------------------------------------------------------------------------ the certificate

def test_certificate_bounds_every_adversary_and_is_first_order_tight():
    """On random instances and random |xi| <= tau (including large tau), the error is within the certificate;
    as tau -> 0 the certificate over tau tends to a limit >= ||J_ab||_1."""
    rng = np.random.default_rng(21)
    for seed in range(4):
        A, u = model_runs.conditioned_full_instance(4, np.random.default_rng(seed), J_max=200.0, s=0.5)
        J = model_runs.measured_jacobian(A, u, s=0.5)
        run = model_runs.run_certificates(A, u, J, [1e-6, 1e-4, 3e-3], 30, rng, s=0.5)
        E = theory.certified_bound(run.u_hat, run.D, run.tau, run.s)
        assert np.all(np.abs(run.err) <= E + tolerances.fp_tolerance_full(A, u, 0.5))
        small = run.tau == 1e-6
        L1 = theory.first_order_jacobian(A, u, s=0.5).l1()
        assert np.all(E[small] / 1e-6 >= L1 * (1 - 1e-3))
        assert np.all(E[small] / 1e-6 <= 10 * L1)


def test_certificate_is_infinite_when_the_interval_reaches_0_or_1():
    u_hat = np.array([[1.0, 0.5]])
    D = np.full((1, 2, 3), 8.0)                   # P = sigma(8) ~ 0.99966: rho ~ 3.4e-4
    assert np.all(np.isfinite(theory.certified_bound(u_hat, D, np.array([1e-6]), 1.0)))
    assert np.all(np.isinf(theory.certified_bound(u_hat, D, np.array([1e-2]), 1.0)))


def test_learner_raw_probes_are_the_logits_of_the_design():
    A, u = _instance(4, 2)
    oracle = model.QueryOracle(A, u)
    D = model.bilinear_measurements(oracle, u, np.eye(4), np.eye(4), raw=True)
    J = theory.first_order_jacobian(A, u)
    assert_allclose(D[:, 0], J.z0, atol=1e-10)
    assert_allclose(D[:, 1:], J.z, atol=1e-10)


@pytest.fixture(scope="module")
def certificate_runs(adversary_run):
    rng4 = rng_for(P.seed, "C4")
    A, u = model_runs.conditioned_full_instance(P.d_noise, rng4, J_max=P.J_max, A_scale=P.A_scale,
                                                u_scale=P.u_scale, s=P.s_amp)
    model_runs.run_adversarial(A, u, P.tau_list, P.tau_adv, P.n_adv, rng4, s=P.s_amp)   # advance the stream
    out = {}
    for amp in (P.s_amp, P.s_amp2):
        J = adversary_run.J if amp == P.s_amp else model_runs.measured_jacobian(A, u, s=amp)
        out[amp] = model_runs.run_certificates(A, u, J, P.tau_cert, P.n_adv, rng4, s=amp)
    return out


@pytest.mark.parametrize("amp", [P.s_amp, P.s_amp2])
def test_mutation_c4c_linearised_certificate(certificate_runs, amp):
    run = certificate_runs[amp]
    assert cl.claim_certificate("C4c", run).passed
    wrong = variant(theory, certified_bound=theory.wrong_certified_bound_linearised)
    assert not cl.claim_certificate("C4c", run, theory=wrong).passed


@pytest.mark.parametrize("amp", [P.s_amp, P.s_amp2])
def test_mutation_c4d_certificate_first_order_exact(certificate_runs, amp):
    run = certificate_runs[amp]
    assert cl.claim_certificate_tightness("C4d", run).passed
    wrong = variant(theory, certificate_coefficient=theory.wrong_certificate_coefficient_exact)
    assert not cl.claim_certificate_tightness("C4d", run, theory=wrong).passed


def test_certificate_coefficient_is_the_limit_of_the_certificate_and_at_least_the_jacobian():
    A, u = model_runs.conditioned_full_instance(5, np.random.default_rng(3), J_max=200.0, s=0.7)
    oracle = model.QueryOracle(A, u)
    u_hat = model.learn_value_vector(oracle, 5, s=0.7)
    D = model.bilinear_measurements(oracle, u_hat, np.eye(5), np.eye(5), raw=True)
    E = theory.certified_bound(u_hat[None], D[None], np.array([1e-9]), 0.7)[0]
    c = theory.certificate_coefficient(A, u, s=0.7)
    assert_allclose(E / 1e-9, c, rtol=1e-5)
    assert np.all(c >= theory.first_order_jacobian(A, u, s=0.7).l1() * (1 - 1e-12))


# ------------------------------------------------------------------------------- per-probe certificate (C4e)

@pytest.fixture(scope="module")
def probe_certificate_runs():
    rng4 = rng_for(P.seed, "C4")
    A, u = model_runs.conditioned_full_instance(P.d_noise, rng4, J_max=P.J_max, A_scale=P.A_scale,
                                                u_scale=P.u_scale, s=P.s_amp)
    return {amp: model_runs.run_probe_certificates(A, u, P.tau_cert, s=amp) for amp in (P.s_amp, P.s_amp2)}


@pytest.mark.parametrize("amp", [P.s_amp, P.s_amp2])
def test_mutation_c4e_slope_at_P(probe_certificate_runs, amp):
    run = probe_certificate_runs[amp]
    assert cl.claim_probe_certificate("C4e", run).passed
    wrong = variant(theory, certified_logit_bound=theory.wrong_certified_logit_bound_slope_at_P)
    assert not cl.claim_probe_certificate("C4e", run, theory=wrong).passed


@pytest.mark.parametrize("amp", [P.s_amp, P.s_amp2])
def test_c4e_adversaries_reach_the_probe_bound_up_to_a_term_linear_in_tau(probe_certificate_runs, amp):
    """1 - max ratio is positive and shrinks in proportion to tau (the bound is sharp to first order)."""
    run = probe_certificate_runs[amp]
    L = theory.certified_logit_bound(run.u_hat, run.D, run.tau, run.s)
    ratio = np.abs(run.err) / L[np.arange(run.tau.size), run.probe[:, 0], run.probe[:, 1]]
    gaps = np.array([1 - np.max(ratio[run.tau == t]) for t in P.tau_cert])
    assert np.all(gaps > 0)
    assert_allclose(gaps / np.asarray(P.tau_cert), gaps[0] / P.tau_cert[0], rtol=0.2)


def test_entry_certificate_is_the_sum_of_its_two_probe_certificates():
    rng = np.random.default_rng(5)
    u_hat = rng.standard_normal((3, 4))
    D = rng.standard_normal((3, 4, 5))
    tau = np.array([1e-6, 1e-5, 1e-4])
    L = theory.certified_logit_bound(u_hat, D, tau, 0.5)
    assert_allclose(theory.certified_bound(u_hat, D, tau, 0.5), L[..., 1:] + L[..., :1], rtol=0, atol=0)


def _flat(As, us):
    return np.concatenate([np.concatenate([A.ravel(), u]) for A, u in zip(As, us, strict=True)])


def _unflat(theta, d):
    th = theta.reshape(2, d * d + d)
    return [t[: d * d].reshape(d, d) for t in th], [t[d * d:] for t in th]


@pytest.mark.parametrize("L", [1, 2, 3, 4])
def test_multihead_jacobian_matches_central_differences(L):
    d, rng = 3, np.random.default_rng(10 + L)
    As, us = _unflat(rng.standard_normal(2 * (d * d + d)), d)
    X = rng.standard_normal((40, L, d))
    theta, h = _flat(As, us), 1e-6

    def answers(th):
        return model.multihead_oracle(X, *_unflat(th, d))

    J_fd = np.stack([(answers(theta + h * e) - answers(theta - h * e)) / (2 * h) for e in np.eye(theta.size)], 1)
    assert_allclose(model.multihead_jacobian(X, As, us), J_fd, rtol=0, atol=1e-7)


def test_multihead_jacobian_refuses_bad_input():
    A, u = _instance(3)
    with pytest.raises(ValueError, match="as many value vectors"):
        model.multihead_jacobian(np.zeros((2, 2, 3)), [A, A], [u])
    with pytest.raises(ValueError, match="shape"):
        model.multihead_jacobian(np.zeros((2, 3)), [A], [u])


@pytest.mark.parametrize("L", [1, 2, 3, 4])
def test_shared_attention_kernel_directions_annihilate_every_sequence(L):
    """Proposition on two heads, (3): (c u2^T, -c u1^T, v, -v) is in the kernel at A1 = A2, for every length."""
    d, rng = 4, np.random.default_rng(20 + L)
    A, u1 = _instance(d, 1)
    u2 = rng.standard_normal(d)
    X = rng.standard_normal((50, L, d))
    J = model.multihead_jacobian(X, [A, A], [u1, u2])
    for _ in range(3):
        c, v = rng.standard_normal(d), rng.standard_normal(d)
        direction = _flat([np.outer(c, u2), -np.outer(c, u1)], [v, -v])
        assert np.max(np.abs(J @ direction)) < 1e-12 * np.max(np.abs(J)) * np.linalg.norm(direction) * 100
    B = A + rng.standard_normal((d, d))                      # distinct heads: the same direction moves the answer
    J_dist = model.multihead_jacobian(X, [A, B], [u1, u2])
    if L > 1:
        assert np.max(np.abs(J_dist @ direction)) > 1e-3


def _numerical_rank(J):
    s = np.linalg.svd(J, compute_uv=False)
    return int(np.sum(s > s[0] * max(J.shape) * np.finfo(float).eps))


@pytest.mark.parametrize("d", [3, 4])
def test_two_head_exclusions_are_sharp_for_two_token_queries(d):
    """Remark on the exclusions: opposite values, uniform attention and opposite attention each defeat one- and
    two-token queries (equal answers, or a rank deficit d), and three-token queries tell them apart again."""
    rng = np.random.default_rng(40 + d)
    A1, A2 = rng.standard_normal((2, d, d))
    u1, u2 = rng.standard_normal((2, d))
    zero = np.zeros((d, d))
    pairs = {                                                    # (Theta, Theta'), not equal up to order
        "opposite values": (([A1, A2], [u1, -u1]), ([-A1, -A2], [-u1, u1])),
        "uniform attention": (([zero, A2], [u1, u2]), ([zero, -A2], [u1 + 2 * u2, -u2])),
    }
    p = 2 * (d * d + d)
    for L in (1, 2, 3):
        X = rng.standard_normal((200, L, d))
        for theta, theta2 in pairs.values():
            diff = np.max(np.abs(model.multihead_oracle(X, *theta) - model.multihead_oracle(X, *theta2)))
            assert (diff < 1e-12) if L < 3 else (diff > 1e-2)
        if L > 1:
            J = model.multihead_jacobian(X, [A1, -A1], [u1, u2])
            assert _numerical_rank(J) == (p - d if L == 2 else p)
            if L == 2:                                           # the kernel is (c u2^T, -c u1^T, 0, 0)
                c = rng.standard_normal(d)
                direction = _flat([np.outer(c, u2), -np.outer(c, u1)], [np.zeros(d), np.zeros(d)])
                assert np.max(np.abs(J @ direction)) < 1e-12 * np.max(np.abs(J)) * np.linalg.norm(direction) * 100
    X = rng.standard_normal((200, 2, d))                         # the generic pair at the same points: full rank
    assert _numerical_rank(model.multihead_jacobian(X, [A1, A2], [u1, u2])) == p


def test_heads_rank_at_every_allowed_dimension():
    rng = np.random.default_rng(31)
    for d in range(2, 7):
        for shared in (False, True):
            run = model_runs.heads_jacobian_rank(d, 100, rng, shared=shared)
            assert run.rank == theory.multihead_jacobian_rank(d, shared)
            kept, dropped = run.margins
            assert kept > 1e6 and dropped < 0.1                 # far from a tie on either side


def test_multihead_rank_theory_values():
    assert theory.multihead_jacobian_rank(4, False) == 40 and theory.multihead_jacobian_rank(4, True) == 32
    assert theory.wrong_multihead_jacobian_rank_family(4, False) == 36
    with pytest.raises(ValueError):
        theory.multihead_jacobian_rank(1, False)


@pytest.fixture(scope="module")
def heads_runs():
    rng = rng_for(P.seed, "C7")
    return {shared: model_runs.heads_jacobian_rank(P.d_mh, P.n_mh, rng, shared=shared, A_scale=P.A_scale,
                                                   u_scale=P.u_scale) for shared in (False, True)}


@pytest.mark.parametrize("shared", [False, True])
def test_mutation_c7_value_trading_family_only(heads_runs, shared):
    run = heads_runs[shared]
    assert cl.claim_heads_rank("C7", run).passed
    wrong = variant(theory, multihead_jacobian_rank=theory.wrong_multihead_jacobian_rank_family)
    assert not cl.claim_heads_rank("C7", run, theory=wrong).passed


# ---- C6: the one-layer Transformer reduction ---------------------------------------------------------------

@pytest.fixture(scope="module")
def transformer_run():
    return model_runs.run_transformer(P.d_ffn, P.h_ffn, rng_for(P.seed, "C6"), A_scale=P.A_scale)


def test_relu_canonical_is_invariant_under_the_symmetries():
    rng = np.random.default_rng(7)
    a, W, b = rng.standard_normal(3), rng.standard_normal((3, 4)), rng.standard_normal(3)
    c = rng.uniform(0.2, 5.0, 3)
    perm = rng.permutation(3)
    same = theory.relu_canonical((a / c)[perm], (W * c[:, None])[perm], (b * c)[perm])
    for x, y in zip(theory.relu_canonical(a, W, b), same, strict=True):
        assert_allclose(x, y, rtol=1e-13, atol=1e-14)
    a_c, W_c, _ = theory.relu_canonical(a, W, b)
    assert_allclose(np.linalg.norm(W_c, axis=1), 1.0, rtol=1e-14)
    # the canonical network is the same function
    X = rng.standard_normal((50, 4))
    assert_allclose(model.relu_net(X, *theory.relu_canonical(a, W, b)), model.relu_net(X, a, W, b), atol=1e-12)
    # orientation is not a symmetry: flipping a unit changes the canonical form
    flipped = theory.relu_canonical(a, W * np.array([[-1.0], [1.0], [1.0]]), b * np.array([-1.0, 1.0, 1.0]))
    assert not np.allclose(flipped[1], theory.relu_canonical(a, W, b)[1])


def test_relu_learner_recovers_random_networks_within_tolerance():
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        W, b, a = rng.standard_normal((4, 5)), rng.standard_normal(4), rng.standard_normal(4)
        oracle = model.ReluOracle(a, W, b)
        fit = model.learn_relu(oracle, 5, rng)
        a_c, W_c, b_c = theory.relu_canonical(a, W, b)
        tol = tolerances.relu_tolerance(fit)
        assert fit.a.shape == a_c.shape
        assert max(np.max(np.abs(fit.a - a_c)), np.max(np.abs(fit.W - W_c)), np.max(np.abs(fit.b - b_c))) <= tol
        assert tol < 1e-2


def test_line_kinks_finds_every_crossing():
    rng = np.random.default_rng(3)
    W, b, a = rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal(4)
    x0, v = rng.standard_normal(3), rng.standard_normal(3)
    true = np.sort(-(W @ x0 + b) / (W @ v))
    found = model._line_kinks(lambda t: float(model.relu_net(x0 + t * v, a, W, b)), -100.0, 100.0, 1e-5, 1e-6)
    assert_allclose(sorted(k[0] for k in found), true[np.abs(true) < 100], atol=1e-8)


def test_transformer_answers_and_single_token_reduction(transformer_run):
    run = transformer_run
    oracle = model.TransformerOracle(run.A, run.a, run.W, run.b)
    X = np.random.default_rng(5).standard_normal((20, P.d_ffn))
    assert_allclose(oracle(X[:, None, :]), model.relu_net(X, run.a, run.W, run.b), rtol=1e-14, atol=1e-14)
    assert oracle.n_queries == 20
    # the learnt network answers fresh inputs like the true one: with every canonical entry within t,
    # |g_hat(x) - g(x)| <= t sum_j (|n_j^T x + b_j| + |a_j| (||x||_1 + 1)) to first order (x2 for the rest)
    t = tolerances.relu_tolerance(run.fit.relu)
    a_c, W_c, b_c = theory.relu_canonical(run.a, run.W, run.b)
    X = 3.0 * np.random.default_rng(6).standard_normal((200, P.d_ffn))
    fit = run.fit.relu
    err = np.abs(model.relu_net(X, fit.a, fit.W, fit.b) - model.relu_net(X, run.a, run.W, run.b))
    bound = t * (np.abs(X @ W_c.T + b_c) + np.abs(a_c) * (np.abs(X).sum(axis=1, keepdims=True) + 1)).sum(axis=1)
    assert np.all(err <= 2 * bound)
    assert run.answer_err <= 2 * t * float(np.max(np.sum(np.abs(a_c)) * (3.0 * 10 * P.d_ffn + 1)
                                                   + P.h_ffn * 3.0 * 10 * P.d_ffn + np.sum(np.abs(b_c))))


def test_transformer_probe_ball_is_inside_the_linear_region(transformer_run):
    fit = transformer_run.fit
    pre = transformer_run.W @ fit.c + transformer_run.b
    dist = np.abs(pre) / np.linalg.norm(transformer_run.W, axis=1)
    assert_allclose(fit.rho, dist.min(), rtol=1e-6)
    gamma = transformer_run.W.T @ (transformer_run.a * (pre > 0))
    assert_allclose(fit.gamma, gamma, rtol=1e-6, atol=1e-8)
    assert np.all((fit.P > 0) & (fit.P < 1))


def test_transformer_oracle_rejects_bad_shapes():
    with pytest.raises(ValueError):
        model.TransformerOracle(np.eye(3), np.ones(2), np.ones((2, 4)), np.ones(2))
    with pytest.raises(ValueError):
        model.ReluOracle(np.ones(3), np.ones((2, 4)), np.ones(2))
    with pytest.raises(ValueError):
        model.ReluOracle(np.ones(2), np.ones((2, 4)), np.ones(2))(np.ones((3, 5)))
    with pytest.raises(ValueError):
        model.learn_relu(lambda X: X[..., 0], 0, np.random.default_rng(0))


def test_mutation_c6a_rescaling_forgotten(transformer_run):
    assert cl.claim_relu_parameters("C6a", transformer_run).passed
    wrong = variant(theory, relu_canonical=theory.wrong_relu_canonical_identifiable)
    assert not cl.claim_relu_parameters("C6a", transformer_run, theory=wrong).passed


def test_mutation_c6b_rank_one_strawman(transformer_run):
    assert cl.claim_transformer_attention("C6b", transformer_run).passed
    wrong = variant(theory, recovered_matrix=theory.wrong_recovered_matrix_rank_one)
    assert not cl.claim_transformer_attention("C6b", transformer_run, theory=wrong).passed


# ---- the a priori finite-tau bound (corollary): a property test, not a claim (it is ~1e6 loose) ----------

def a_priori_bound(tau: float, d: int, B_A: float, u_min: float, s: float) -> float:
    """The corollary's bound: with W1 = sqrt(d) (2/u_min + 1) + 1, Z = B_A (2 + 2/u_min), rho0 = sigma(-Z),
    C = 2 (1 + (1 + W1)/s): if tau <= min(s u_min/(2 sqrt d), s/(2 W1), rho0/(4 C)) then every entry of
    A_hat is within 8 C tau / rho0 (no remainder); inf above that tolerance."""
    W1 = math.sqrt(d) * (2 / u_min + 1) + 1
    rho0 = 1 / (1 + math.exp(B_A * (2 + 2 / u_min)))
    C = 2 * (1 + (1 + W1) / s)
    tau0 = min(s * u_min / (2 * math.sqrt(d)), s / (2 * W1), rho0 / (4 * C))
    return 8 * C * tau / rho0 if tau <= tau0 else math.inf


@pytest.mark.parametrize("s", [0.25, 4.0])
def test_a_priori_bound_dominates_certificate_and_errors(s):
    for seed in range(3):
        rng = np.random.default_rng(200 + seed)
        A, u = model_runs.conditioned_full_instance(4, rng, J_max=P.J_max, A_scale=P.A_scale, s=s)
        B_A, u_min = float(np.linalg.norm(A, 2)), float(np.linalg.norm(u))
        W1 = math.sqrt(4) * (2 / u_min + 1) + 1
        rho0 = 1 / (1 + math.exp(B_A * (2 + 2 / u_min)))
        tau0 = min(s * u_min / 4, s / (2 * W1), rho0 / (8 * (1 + (1 + W1) / s)))
        taus = [tau0, tau0 / 10]
        J = model_runs.measured_jacobian(A, u, s=s)
        run = model_runs.run_certificates(A, u, J, taus, 20, rng, s=s)
        E = theory.certified_bound(run.u_hat, run.D, run.tau, s)
        bound = np.array([a_priori_bound(float(t), 4, B_A, u_min, s) for t in run.tau])
        assert np.all(np.isfinite(bound))
        assert np.all(E <= bound[:, None, None])
        fp = tolerances.fp_tolerance_full(A, u, s)
        assert np.all(np.abs(run.err) <= bound[:, None, None] + fp)
        # and the first-order coefficient of the bound is above the attained one, ||J_ab||_1
        assert 8 * (2 * (1 + (1 + W1) / s)) / rho0 >= float(np.max(theory.first_order_jacobian(A, u, s=s).l1()))
    assert a_priori_bound(1.0, 4, 1.0, 1.0, s) == math.inf


def test_a_nan_prediction_fails_c1a(full_runs):
    nan = variant(theory, recovered_matrix=nan_after_first(theory.recovered_matrix))
    assert not cl.claim_full_recovery("C1a", full_runs, theory=nan).passed
