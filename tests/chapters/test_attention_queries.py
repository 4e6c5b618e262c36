"""Tests of theorylib.attention_queries (chapter 'attention-query-learning').

Unit tests of the model, the oracle, the learners and the Jacobian, and one mutation test per claim: each
recomputes the claim as the notebook does at the default parameters and checks that the right theory passes
and the named wrong theory fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from theorylib import attention_queries as aq
from theorylib.chapters.attention_query_learning import CHAPTER
from theorylib.core import rng_for

P = CHAPTER.defaults()


def _instance(d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return aq.random_full_instance(d, np.random.default_rng(seed))


# ------------------------------------------------------------------------------------------ the model

def test_one_token_query_returns_the_value():
    A, u = _instance(5)
    X = np.random.default_rng(1).standard_normal((7, 1, 5))
    assert_allclose(aq.attention_oracle(X, A, u), X[:, 0, :] @ u, rtol=1e-14, atol=1e-15)


def test_two_token_probe_identity_lemma_1():
    rng = np.random.default_rng(2)
    for _ in range(20):
        A, u = _instance(6, int(rng.integers(1 << 30)))
        q, w = rng.standard_normal(6), rng.standard_normal(6)
        f = aq.attention_oracle(np.stack([q + w, q])[None], A, u)[0]
        assert_allclose(f, u @ q + aq.sigmoid(q @ A @ w) * (u @ w), rtol=1e-12, atol=1e-13)


def test_oracle_matches_a_direct_softmax_and_is_stable_at_huge_logits():
    rng = np.random.default_rng(3)
    A, u = _instance(4)
    X = rng.standard_normal((10, 5, 4))
    s = np.einsum("bnd,bd->bn", X, X[:, -1] @ A)
    wts = np.exp(s) / np.exp(s).sum(1, keepdims=True)
    assert_allclose(aq.attention_oracle(X, A, u), np.einsum("bn,bn->b", wts, X @ u), rtol=1e-12)
    big = aq.attention_oracle(X, 1e3 * A, u)              # logits ~1e3: no overflow, a convex combination
    vals = X @ u
    assert np.all(np.isfinite(big))
    assert np.all((big >= vals.min(1) - 1e-12) & (big <= vals.max(1) + 1e-12))


def test_sigmoid_and_logit_are_inverse_and_logit_refuses_non_probabilities():
    z = np.linspace(-15, 15, 61)                  # 1 - sigma(15) ~ 3e-7: logit is accurate to eps / 3e-7
    assert_allclose(aq.logit(aq.sigmoid(z)), z, atol=1e-8)
    assert np.all(np.isfinite(aq.sigmoid(np.array([-1e4, 1e4]))))
    with pytest.raises(ValueError, match="probability in"):
        aq.logit(np.array([0.5, 1.0]))


def test_multihead_oracle_sums_heads():
    A1, u1 = _instance(3, 1)
    A2, u2 = _instance(3, 2)
    X = np.random.default_rng(0).standard_normal((4, 3, 3))
    assert_allclose(aq.multihead_oracle(X, [A1, A2], [u1, u2]),
                    aq.attention_oracle(X, A1, u1) + aq.attention_oracle(X, A2, u2), rtol=1e-14)


# ------------------------------------------------------------------------------------------ the oracle

def test_oracle_counts_every_query_including_broadcast_repeats():
    A, u = _instance(3)
    o = aq.QueryOracle(A, u)
    o(np.ones((2, 5, 1, 3)))
    assert o.n_queries == 10
    X = np.broadcast_to(np.ones((1, 2, 3)), (7, 1, 2, 3))
    y = o(X)
    assert o.n_queries == 17 and y.shape == (7, 1)
    assert not hasattr(o, "A") and not hasattr(o, "u")


def test_gaussian_oracle_draws_fresh_noise_for_each_repeat():
    A, u = _instance(3)
    o = aq.QueryOracle(A, u, noise="gaussian", sigma=1.0, rng=np.random.default_rng(0))
    y = o(np.broadcast_to(np.eye(3)[0][None, None, :], (1000, 1, 3)))
    assert o.n_queries == 1000
    assert abs(np.std(y) - 1.0) < 0.1 and np.unique(y).size == 1000


def test_learn_value_vector_with_repeats_counts_n_times():
    A, u = _instance(4)
    o = aq.QueryOracle(A, u, noise="gaussian", sigma=1e-3, rng=np.random.default_rng(1))
    aq.learn_value_vector(o, 4, repeats=16, batch=(5,))
    assert o.n_queries == 4 * 16 * 5


# ------------------------------------------------------------------------------------------ learners

def test_learn_full_is_exact_and_counts_d2_plus_2d():
    for d in (1, 2, 3, 7):
        A, u = _instance(d, d)
        o = aq.QueryOracle(A, u)
        A_hat, u_hat = aq.learn_full(o, d, s=2.5)
        assert_allclose(A_hat, A, atol=1e-12)
        assert_allclose(u_hat, u, atol=1e-14)
        assert o.n_queries == aq.query_count_full(d) == d * d + 2 * d


def test_learn_full_batch_equals_single_runs():
    A, u = _instance(4)
    A_hat, _ = aq.learn_full(aq.QueryOracle(A, u), 4, batch=(3,))
    assert A_hat.shape == (3, 4, 4)
    assert_allclose(A_hat, np.broadcast_to(A, (3, 4, 4)), atol=1e-12)


@pytest.mark.parametrize("d,r", [(6, 1), (6, 6), (9, 3), (12, 2)])
def test_learn_low_rank_is_exact_at_k_equal_r(d, r):
    rng = np.random.default_rng(d * 10 + r)
    A, u = aq.random_low_rank_instance(d, r, rng)
    o = aq.QueryOracle(A, u)
    A_hat, u_hat, info = aq.learn_low_rank(o, d, r, rng)
    assert_allclose(A_hat, A, atol=1e-10)
    assert info.rank == r
    assert o.n_queries == aq.query_count_low_rank(d, r)
    if r < d:
        assert o.n_queries == r * (2 * d - r) + 2 * d + r


def test_sketch_above_rank_exact_and_below_rank_above_eckart_young():
    rng = np.random.default_rng(5)
    A, u = aq.random_low_rank_instance(12, 3, rng)
    for k in range(1, 7):
        run = aq.run_sketch(A, u, 3, k, rng)
        assert run.n_queries == aq.query_count_low_rank(12, k)
        if k >= 3:
            assert run.rel_err <= run.rel_tol
        else:
            assert np.linalg.matrix_rank(run.A_hat) <= k
            assert run.rel_err >= aq.eckart_young_floor(A, k)


def test_sketch_margins_are_at_least_one():
    u = np.random.default_rng(0).standard_normal(8)
    K, _ = aq.sketch_basis(8, 2, np.random.default_rng(1))
    v0, c = aq.margin_offset(u, K.T)
    assert np.min(u @ (v0[None, :] + K.T).T) >= 1 - 1e-12 and u @ v0 == pytest.approx(c)


def test_dof_and_count_formulas():
    assert aq.query_count_low_rank(32, 2) == 190 and aq.query_count_full(32) == 1088
    for d in range(2, 20):
        for r in range(1, d):
            assert aq.query_count_low_rank(d, r) - aq.dof_lower_bound(d, r) == d + r


# ------------------------------------------------------------------------------------------ Theorem 3

def _finite_difference_jacobian(A, u, h=1e-6):
    """Central differences of the estimator's output w.r.t. each answer error, batched in one run."""
    d = u.size
    m = d + d * (d + 1)
    schedules = []
    for sign in (1.0, -1.0):
        for i in range(m):
            e = np.zeros(m)
            e[i] = sign * h
            schedules.append([e[:d], e[d:].reshape(d, d + 1)])
    err = aq.run_adversaries(A, u, schedules).reshape(2, m, d, d)
    return (err[0] - err[1]) / (2 * h)                  # (m, d, d): d A_hat_ab / d xi_i


def test_closed_form_jacobian_equals_finite_differences_of_the_estimator():
    A, u = aq.conditioned_full_instance(4, np.random.default_rng(7), J_max=200.0)
    d = 4
    J = aq.first_order_jacobian(A, u)
    fd = _finite_difference_jacobian(A, u)
    closed = np.zeros_like(fd)
    for a in range(d):
        for b in range(d):
            closed[:d, a, b] = J.gamma[a, b]
            closed[d + a * (d + 1), a, b] = -J.beta[a]
            closed[d + a * (d + 1) + b + 1, a, b] = J.alpha[a, b]
    assert_allclose(fd, closed, rtol=1e-5, atol=1e-5 * np.max(np.abs(closed)))


def test_jacobian_l1_bound_of_theorem_3():
    for seed in range(10):
        A, u = _instance(6, seed)
        J = aq.first_order_jacobian(A, u)
        B_D = np.max(np.abs(aq.design_logits(A, u)))
        W = J.v0 + np.eye(6)
        bound = 8 * np.exp(B_D) * (1 + (1 + np.abs(W).sum(1)[None, :] + np.abs(J.v0).sum())) / J.margin
        assert np.all(J.l1() <= bound)
        assert np.all(J.margin >= 1 - 1e-12)


def test_predicted_mse_scales_as_sigma2_over_n_and_logit_free_is_smaller():
    A, u = _instance(5)
    m1 = aq.predicted_mse(A, u, 1e-3, 1)
    assert aq.predicted_mse(A, u, 2e-3, 4) == pytest.approx(m1)
    assert aq.logit_free_mse(A, u, 1e-3, 1) <= m1 / 16


# ------------------------------------------------------------------------------------------ Proposition 4

def test_equivalent_multihead_same_function_and_distance():
    rng = np.random.default_rng(11)
    A, u1 = _instance(5, 3)
    u2 = rng.standard_normal(5)
    w = aq.orthogonal_shift(u1, u2, 3.0, rng)
    assert abs(w @ (u1 - u2)) < 1e-12 and np.linalg.norm(w) == pytest.approx(3.0)
    theta = ((A, A), (u1, u2))
    theta2 = aq.equivalent_multihead(A, u1, u2, w)
    for X in aq.random_sequences(500, 6, 5, rng):
        if X.shape[0]:
            assert_allclose(aq.multihead_oracle(X, *theta2), aq.multihead_oracle(X, *theta), atol=1e-13)
    assert aq.param_distance_mod_perm(theta, theta2) == pytest.approx(3 * math.sqrt(2))
    swapped = ((A, A), (u2, u1))
    assert aq.param_distance_mod_perm(theta, swapped) == 0.0


# ------------------------------------------------------------------------------------------ bad input

def test_bad_inputs_raise_clear_errors():
    A, u = _instance(3)
    with pytest.raises(ValueError, match="not identifiable"):
        aq.learn_full(aq.QueryOracle(A, np.zeros(3)), 3)
    with pytest.raises(ValueError, match="rank r"):
        aq.random_low_rank_instance(3, 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="r = 0"):
        aq.dof_lower_bound(3, 0)
    with pytest.raises(ValueError, match="dimension 2"):
        aq.attention_oracle(np.ones((1, 2, 2)), A, u)
    with pytest.raises(ValueError, match="at least one token"):
        aq.attention_oracle(np.ones((1, 0, 3)), A, u)
    with pytest.raises(ValueError, match="sigma"):
        aq.QueryOracle(A, u, noise="gaussian", sigma=-1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="explicit rng"):
        aq.QueryOracle(A, u, noise="gaussian", sigma=1.0)
    with pytest.raises(ValueError, match="repeats"):
        aq.learn_full(aq.QueryOracle(A, u), 3, repeats=0)
    with pytest.raises(ValueError, match="sketch size k"):
        aq.learn_low_rank(aq.QueryOracle(A, u), 3, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="shape"):
        aq.QueryOracle(A, np.ones(4))
    with pytest.raises(ValueError, match="J_max"):
        aq.conditioned_full_instance(4, np.random.default_rng(0), J_max=1e-3, max_tries=3)


def test_a_probability_outside_0_1_under_noise_raises_and_is_never_clipped():
    A, u = _instance(4)
    o = aq.QueryOracle(A, u, noise="gaussian", sigma=10.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"left \(0, 1\)"):
        aq.learn_full(o, 4, batch=(50,))


# ------------------------------------------------------------------------------------------ mutation tests
# Each fixture recomputes a claim's data as the notebook does at the default parameters.

@pytest.fixture(scope="module")
def full_runs():
    rng1 = rng_for(P["seed"], "C1")
    return [aq.run_full(d, rng1, A_scale=P["A_scale"], u_scale=P["u_scale"], s=P["s_amp"]) for d in P["d_list"]]


@pytest.fixture(scope="module")
def sketch_runs():
    rng2 = rng_for(P["seed"], "C1-C2")
    A, u = aq.random_low_rank_instance(P["d_lr"], P["r"], rng2, A_scale=P["A_scale"], u_scale=P["u_scale"])
    return u, [aq.run_sketch(A, u, P["r"], k, rng2) for k in range(1, 2 * P["r"] + 1)]


def _recovery_claim(runs, us, theory):
    errs = [aq.recovery_error(run.A_hat, run.A, u, theory) for run, u in zip(runs, us, strict=True)]
    return aq.claim_exact_recovery("C1", errs, [run.tol for run in runs], "")


def test_mutation_c1a_rank_one_strawman(full_runs):
    us = [run.u for run in full_runs]
    assert _recovery_claim(full_runs, us, aq.exact_theory).passed
    assert not _recovery_claim(full_runs, us, aq.rank_one_theory).passed


def test_mutation_c1b_value_vector_for_free(full_runs):
    measured = sum(run.n_queries for run in full_runs)
    assert aq.exact_count_claim("C1b", measured, sum(aq.query_count_full(d) for d in P["d_list"]), "").passed
    assert not aq.exact_count_claim("C1b", measured, sum(d * d + d for d in P["d_list"]), "").passed


def test_mutation_c1c_rank_one_strawman_on_the_sketch(sketch_runs):
    u, runs = sketch_runs
    sk = runs[P["r"] - 1]
    assert _recovery_claim([sk], [u], aq.exact_theory).passed
    assert not _recovery_claim([sk], [u], aq.rank_one_theory).passed


def test_mutation_c1d_low_rank_still_needs_d2(sketch_runs):
    sk = sketch_runs[1][P["r"] - 1]
    assert aq.exact_count_claim("C1d", sk.n_queries, aq.query_count_low_rank(P["d_lr"], P["r"]), "").passed
    assert not aq.exact_count_claim("C1d", sk.n_queries, aq.query_count_full(P["d_lr"]), "").passed


def test_mutation_c2_threshold(sketch_runs):
    kstar = aq.sketch_threshold(sketch_runs[1])
    assert aq.exact_count_claim("C2", kstar, P["r"], "").passed
    assert not aq.exact_count_claim("C2", kstar, max(1, P["r"] // 2), "").passed   # "r/2 suffices"
    assert not aq.exact_count_claim("C2", kstar, P["d_lr"], "").passed            # "k = d needed"


@pytest.fixture(scope="module")
def noise_run():
    rng3 = rng_for(P["seed"], "C3")
    A, u = aq.conditioned_full_instance(P["d_noise"], rng3, J_max=P["J_max"], A_scale=P["A_scale"],
                                        u_scale=P["u_scale"])
    return aq.run_noise(A, u, P["sigma"], P["n_list"], P["R"], rng3, s=P["s_amp"])


def test_mutation_c3_logit_free_propagation(noise_run):
    for i in range(len(P["n_list"])):
        assert aq.claim_noise_mse("C3", noise_run, i, aq.predicted_mse).passed
        assert not aq.claim_noise_mse("C3", noise_run, i, aq.logit_free_mse).passed


def test_mutation_c3_lazy_oracle_count(noise_run):
    per_run = P["R"] * aq.query_count_full(P["d_noise"])
    assert aq.exact_count_claim("C3", noise_run.n_queries, per_run * sum(P["n_list"]), "").passed
    assert not aq.exact_count_claim("C3", noise_run.n_queries, per_run * len(P["n_list"]), "").passed


def test_mutation_c3_rate_exponent(noise_run):
    fit = aq.rms_rate_fit(noise_run, rng_for(P["seed"], "C3-bootstrap"))
    assert aq.claim_rms_rate("C3", fit, -0.5).passed
    assert not aq.claim_rms_rate("C3", fit, -1.0).passed


@pytest.fixture(scope="module")
def adversary_run():
    rng4 = rng_for(P["seed"], "C4")
    A, u = aq.conditioned_full_instance(P["d_noise"], rng4, J_max=P["J_max"], A_scale=P["A_scale"],
                                        u_scale=P["u_scale"])
    return aq.run_adversarial(A, u, P["tau_list"], P["tau_adv"], P["n_adv"], rng4)


def test_mutation_c4a_margin_only(adversary_run):
    assert aq.claim_worst_coefficient("C4a", adversary_run, aq.l1_coefficient).passed
    assert not aq.claim_worst_coefficient("C4a", adversary_run, aq.margin_only_coefficient).passed


def test_mutation_c4b_margin_only(adversary_run):
    assert aq.claim_random_adversaries("C4b", adversary_run, aq.l1_bound).passed
    assert not aq.claim_random_adversaries("C4b", adversary_run, aq.margin_only_bound).passed


def test_c4_second_order_structure(adversary_run):
    """rho(tau) - 1 is linear in tau: the even part gives the same kappa at every tau (to rounding)."""
    k = adversary_run.kappa_worst
    assert_allclose(k[1:], k[-1], rtol=1e-2)
    assert_array_equal(adversary_run.odd_slope > 0, True)


@pytest.fixture(scope="module")
def multihead_runs():
    args = (P["d_mh"], P["n_mh"], P["L_max"], P["w_norm"])
    kw = {"A_scale": P["A_scale"], "u_scale": P["u_scale"]}
    right = aq.run_multihead(*args, rng_for(P["seed"], "C5"), **kw)
    wrong = aq.run_multihead(*args, rng_for(P["seed"], "C5"), construction=aq.shift_both_heads, **kw)
    return right, wrong


def test_mutation_c5a_wrong_equivalence(multihead_runs):
    right, wrong = multihead_runs
    assert aq.claim_same_function("C5a", right).passed
    assert not aq.claim_same_function("C5a", wrong).passed


def test_mutation_c5b_identifiable_up_to_permutation(multihead_runs):
    right, _ = multihead_runs
    assert aq.claim_distance("C5b", right, math.sqrt(2) * P["w_norm"]).passed
    assert not aq.claim_distance("C5b", right, 0.0).passed
