"""Tests of chapter 'dpo-choice-models': the theory, the model, and one mutation test per claim."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import special

from theorylib.chapters.dpo_choice_models import CHAPTER, model, theory
from theorylib.chapters.dpo_choice_models import claims as cl
from theorylib.chapters.dpo_choice_models.model import Loss
from theorylib.chapters.dpo_choice_models.model_links import (
    LINKS,
    data_cdf,
    get_link,
    margin_choice_cdf,
    score_terms,
)
from theorylib.core import rng_for
from theorylib.core.theory import nan_after_first, variant

DEF = CHAPTER.defaults()


@pytest.fixture(scope="module")
def setting():
    r = model.true_reward(rng_for(DEF["seed"], "reward"), DEF["K"], DEF["reward_scale"], DEF["max_gap"])
    pi_ref = model.reference_policy(rng_for(DEF["seed"], "pi_ref"), DEF["K"])
    return r, pi_ref


@pytest.fixture(scope="module")
def idn(setting):
    r, pi_ref = setting
    data, losses = model.combinations(DEF["gamma_grid"])
    return model.identification(r, pi_ref, DEF["beta"], data, losses, 5, rng_for(0, "C1"))


@pytest.fixture(scope="module")
def rates(setting):
    r, _ = setting
    specs = {"bt": ("logistic", Loss()), "cauchy": ("cauchy", Loss(link="cauchy")), "mis": ("probit", Loss()),
             "margin": ("logistic", Loss(margin=DEF["gamma_rate"]))}
    return {k: model.rate_run(k, r, d, loss, tuple(DEF["N_grid"]), DEF["R"], DEF["seed"], rng_for)
            for k, (d, loss) in specs.items()}


# ------------------------------------------------------------------------------------------------
# links and scores


@pytest.mark.parametrize("name", sorted(LINKS))
def test_links_are_compliant_and_invertible(name):
    link = LINKS[name]
    t = np.linspace(-8, 8, 161)
    assert_allclose(link.cdf(t) + link.cdf(-t), 1.0, atol=1e-15)
    assert np.all(np.diff(link.cdf(t)) > 0)
    assert_allclose(link.inv_cdf(link.cdf(t[40:121])), t[40:121], atol=1e-9)
    assert_allclose(link.logcdf(t), np.log(link.cdf(t)), rtol=1e-10, atol=1e-15)
    m = t[30:131]
    assert_allclose(link.pdf(m), (link.cdf(m + 1e-5) - link.cdf(m - 1e-5)) / 2e-5, rtol=1e-5, atol=1e-12)
    assert_allclose(link.dlogpdf(m), (link.logpdf(m + 1e-5) - link.logpdf(m - 1e-5)) / 2e-5, atol=1e-8)
    assert np.isfinite(link.logcdf(np.array([-40.0]))).all()
    assert link.logcdf(np.array([-40.0]))[0] < -3


@pytest.mark.parametrize("name", sorted(LINKS))
def test_theory_links_agree_with_the_measured_side(name):
    t = np.linspace(-5, 5, 41)
    assert_allclose(theory.cdf(name, t), LINKS[name].cdf(t), atol=1e-15)
    assert_allclose(theory.pdf(name, t)[0], LINKS[name].pdf(t), rtol=1e-12)
    p = np.linspace(0.05, 0.95, 19)
    assert_allclose(theory.inv_cdf(name, p), LINKS[name].inv_cdf(p), atol=1e-12)


def test_cauchy_log_cdf_is_stable_in_the_tail():
    lc = LINKS["cauchy"].logcdf(np.array([-1e8]))[0]
    assert_allclose(lc, -np.log(np.pi * 1e8), rtol=1e-6)


@pytest.mark.parametrize("score", ["log", "brier", "matsushita", "quartic"])
@pytest.mark.parametrize("name", sorted(LINKS))
def test_score_derivatives_match_finite_differences(score, name):
    s = np.linspace(-3, 3, 13)
    e = 1e-5
    u, du, ddu = score_terms(score, LINKS[name], s)
    up, dup, _ = score_terms(score, LINKS[name], s + e)
    um, dum, _ = score_terms(score, LINKS[name], s - e)
    assert_allclose(du, (up - um) / (2 * e), rtol=1e-6, atol=1e-9)
    assert_allclose(ddu, (dup - dum) / (2 * e), rtol=1e-6, atol=1e-9)


def test_margin_choice_model():
    d = np.linspace(-6, 6, 121)
    assert_allclose(margin_choice_cdf(d, 0.0), special.expit(d), atol=1e-15)
    for g in (0.5, 1.0, 2.0):
        F = margin_choice_cdf(d, g)
        assert_allclose(F + margin_choice_cdf(-d, g), 1.0, atol=1e-15)
        assert np.all(np.diff(F) > 0)
        assert_allclose(margin_choice_cdf(np.array([0.0]), g), 0.5)
        e = 1e-6
        slope = (margin_choice_cdf(np.array([e]), g) - margin_choice_cdf(np.array([-e]), g)) / (2 * e)
        assert_allclose(slope, 1 / (2 * (1 + np.exp(g))), rtol=1e-8)
        assert_allclose(theory.margin_cdf(d, g), F, atol=1e-14)
        p = np.linspace(0.05, 0.95, 19)
        assert_allclose(theory.margin_cdf(theory.margin_gap(p, g), g), p, atol=1e-12)


def test_margin_gap_worked_example():
    assert_allclose(theory.margin_gap(0.7, 2.0), 2.3109, atol=1e-4)
    assert_allclose(theory.wrong_margin_gap_shift(0.7, 2.0), 2.8473, atol=1e-4)


def test_logit_of_probit_values():
    vals = theory.link_transfer(np.array([0.1, 0.5, 1, 2, 3]), "probit", "logistic")
    assert_allclose(vals, [0.1596, 0.8070, 1.6683, 3.7602, 6.6064], atol=1e-4)


def test_cauchy_log_loss_curvature_dips_below_zero():
    t = np.linspace(-3, 0, 3001)
    u2 = theory.score_curvature("log", "cauchy", t)
    assert_allclose(u2.min(), -0.2344, atol=1e-4)
    assert_allclose(t[np.argmin(u2)], -1.10, atol=0.01)


# ------------------------------------------------------------------------------------------------
# the normative optimum


def test_gibbs_policy_is_the_regularized_optimum(setting):
    r, pi_ref = setting
    beta = DEF["beta"]
    pi = theory.gibbs_policy(pi_ref, r, beta)
    assert_allclose(pi.sum(), 1.0)

    def objective(p):
        return p @ r - beta * np.sum(p * np.log(p / pi_ref))

    others = rng_for(0, "test-gibbs").dirichlet(np.ones(r.size), size=500)
    assert all(objective(pi) > objective(q) for q in others)
    assert_allclose(model.policy_from_reward(pi_ref, r, beta), pi, atol=1e-15)
    assert_allclose(model.implied_reward(pi, pi_ref, beta), r - r.mean(), atol=1e-12)


# ------------------------------------------------------------------------------------------------
# the losses and fits


def test_dpo_loss_derivatives_and_shift_invariance(setting):
    r, _ = setting
    pairs = model.pair_design(r.size)
    counts = model.sample_counts(rng_for(0, "test-loss"), model.choice_probs(r, pairs, "logistic"), 500)
    h = rng_for(1, "test-loss").normal(size=r.size)
    for loss in (Loss(), Loss("brier", "cauchy"), Loss(margin=1.0), Loss(alpha=0.3, lengths=tuple(range(6)))):
        v, g, H = model.dpo_loss(h, pairs, counts, loss)
        e = 1e-6
        fd_g = [(model.dpo_loss(h + e * np.eye(6)[k], pairs, counts, loss)[0]
                 - model.dpo_loss(h - e * np.eye(6)[k], pairs, counts, loss)[0])[0] / (2 * e) for k in range(6)]
        fd_H = [(model.dpo_loss(h + e * np.eye(6)[k], pairs, counts, loss)[1]
                 - model.dpo_loss(h - e * np.eye(6)[k], pairs, counts, loss)[1])[0] / (2 * e) for k in range(6)]
        assert_allclose(g[0], fd_g, atol=1e-7)
        assert_allclose(H[0], np.array(fd_H), atol=1e-6)
        assert_allclose(model.dpo_loss(h + 3.0, pairs, counts, loss)[0], v, atol=1e-14)


def test_population_minimizer_on_a_path_is_the_link_transfer(setting):
    r, _ = setting
    for f, g in model.TRANSFER_PAIRS:
        dr, dh, _ = model.path_gaps(r, f, Loss(link=g))
        assert_allclose(dh, theory.link_transfer(dr, f, g), atol=1e-10)


def test_quartic_score_learns_a_third_of_the_reward(setting):
    r, _ = setting
    fit = model.population_minimizer(r, model.pair_design(r.size), "logistic", Loss("quartic"))
    assert_allclose(fit.h[0], (r - r.mean()) / 3, atol=1e-10)


def test_sandwich_equals_fisher_when_well_specified(setting):
    r, _ = setting
    pairs = model.pair_design(r.size)
    q = np.full(len(pairs), 1 / len(pairs))
    for link in ("logistic", "probit", "cauchy"):
        probs = theory.cdf(link, r[pairs[:, 0]] - r[pairs[:, 1]])
        A = theory.expected_hessian(r, pairs, q, probs, "log", link)
        cov = theory.sandwich_cov(r, r, pairs, q, link, link)
        assert_allclose(cov, np.linalg.pinv(A), atol=1e-9)
        assert_allclose(theory.sandwich_trace(r, r, pairs, q, link, link), theory.fisher_trace(r, pairs, q, link),
                        rtol=1e-9)


def test_mle_exists_detects_separation():
    pairs = model.pair_design(3)
    ok = np.array([[[3, 1], [2, 2], [1, 4]]], dtype=float)
    sep = np.array([[[3, 0], [2, 0], [1, 4]]], dtype=float)  # item 0 never loses
    assert model.mle_exists(pairs, ok).all()
    assert not model.mle_exists(pairs, sep).any()


def test_fit_dpo_recovers_the_two_item_logit():
    pairs = model.pair_design(2)
    counts = np.array([[[70.0, 30.0]]])
    pi, fit = model.fit_dpo(pairs, counts, Loss(), np.array([0.4, 0.6]), 0.5)
    h = model.implied_reward(pi, np.array([0.4, 0.6]), 0.5)
    assert_allclose(h[0, 0] - h[0, 1], special.logit(0.7), atol=1e-10)


# ------------------------------------------------------------------------------------------------
# bad input


def test_bad_input_is_refused():
    pi_ref = np.array([0.5, 0.5])
    pairs = model.pair_design(2)
    counts = np.array([[[3.0, 2.0]]])
    with pytest.raises(ValueError):
        model.fit_dpo(pairs, counts, Loss(), pi_ref, 0.0)
    with pytest.raises(ValueError):
        model.fit_dpo(pairs, counts, Loss(), pi_ref, -1.0)
    with pytest.raises(ValueError):
        model.fit_dpo(pairs, counts, Loss(), np.array([1.0, 0.0]), 0.5)
    with pytest.raises(ValueError):
        model.fit_dpo(pairs, counts, Loss(), np.array([0.6, 0.6]), 0.5)
    with pytest.raises(ValueError, match="disconnected"):
        model.check_design(np.array([[0, 1], [2, 3]]), 4)
    with pytest.raises(ValueError, match="shape"):
        model.fit_dpo(pairs, np.ones((1, 2, 2)), Loss(), pi_ref, 0.5)
    with pytest.raises(ValueError, match="shape"):
        model.dpo_loss(np.zeros(2), pairs, np.ones((1, 3, 2)), Loss())
    with pytest.raises(ValueError, match="unknown link"):
        get_link("gumbel")
    with pytest.raises(ValueError, match="unknown link"):
        theory.cdf("gumbel", 0.0)
    with pytest.raises(ValueError):
        data_cdf("gumbel", np.zeros(1))
    with pytest.raises(ValueError, match="unknown score"):
        score_terms("hinge", LINKS["logistic"], np.zeros(1))
    for p in (0.0, 1.0, 1.2):
        with pytest.raises(ValueError):
            theory.margin_gap(p, 1.0)
    with pytest.raises(ValueError):
        theory.gibbs_policy(pi_ref, np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="perfect separation"):
        model.fit_dpo(pairs, np.array([[[5.0, 0.0]]]), Loss(), pi_ref, 0.5)
    with pytest.raises(ValueError):
        model.pair_design(4, "star")


# ------------------------------------------------------------------------------------------------
# claims: hold for the theory, fail for each named wrong theory


def test_c1_claims_and_their_wrong_theories(setting, idn):
    r, pi_ref = setting
    beta = DEF["beta"]
    assert cl.claim_policy_recovered("C1a", idn, r, pi_ref, beta).passed
    wrong = variant(theory, gibbs_policy=theory.wrong_gibbs_policy_beta)
    assert not cl.claim_policy_recovered("C1a", idn, r, pi_ref, beta, theory=wrong).passed
    assert cl.claim_identification_set("C1b", idn).passed
    for name in ("wrong_identifies_link_agnostic", "wrong_identifies_convex_only",
                 "wrong_identifies_margin_is_bt"):
        bad = variant(theory, identifies=getattr(theory, name))
        assert not cl.claim_identification_set("C1b", idn, theory=bad).passed, name


def test_c1c_witness_and_its_wrong_theory(setting):
    r, _ = setting
    wrong = variant(theory, expected_hessian=theory.wrong_expected_hessian_fisher)
    for data, score, link, sign in [("cauchy", "log", "cauchy", -1), ("logistic", "brier", "logistic", -1),
                                    ("probit", "log", "probit", 1)]:
        w = model.witness_curvature(r, data, Loss(score, link))
        assert np.sign(w.lam) == sign
        assert cl.claim_witness_curvature("C1c", w, r, data, score, link).passed
        assert not cl.claim_witness_curvature("C1c", w, r, data, score, link, theory=wrong).passed
        # the finite-difference curvature agrees with the analytic Hessian of the model's loss
        pairs = model.pair_design(r.size)
        counts = model.population_counts(model.choice_probs(r, pairs, data))
        Q = np.linalg.qr(np.eye(r.size)[:, :-1] - 1.0 / r.size)[0]
        lam = np.linalg.eigvalsh(Q.T @ model.dpo_loss(w.h, pairs, counts, Loss(score, link))[2][0] @ Q)[0]
        assert abs(w.lam - lam) <= cl.witness_tolerance(w)


def test_fd_hessian_of_a_quadratic_is_exact():
    M = np.array([[2.0, -1.0, 0.5], [-1.0, 3.0, 0.0], [0.5, 0.0, -1.0]])
    H = model.fd_hessian(lambda x: 0.5 * x @ M @ x + x.sum(), np.ones(3), np.eye(3), 1e-2)
    assert_allclose(H, M, atol=1e-10)


def test_c2_claims_and_their_wrong_theories(setting):
    r, pi_ref = setting
    runs = model.path_runs(r)
    assert cl.claim_path_transfer("C2a", runs).passed
    bad_cdf = variant(theory, margin_cdf=lambda d, g: theory.margin_cdf(d, 0.0))
    for w in (theory.wrong_link_transfer_agnostic, theory.wrong_link_transfer_scale):
        assert not cl.claim_path_transfer("C2a", runs, theory=variant(theory, link_transfer=w)).passed
    pg, gg = tuple(DEF["p_grid"]), tuple(DEF["gamma_grid"])
    gaps, bounds = model.margin_gaps(pg, gg)
    assert cl.claim_margin_gap("C2b", pg, gg, gaps, bounds).passed
    wrong = variant(theory, margin_gap=theory.wrong_margin_gap_shift)
    assert not cl.claim_margin_gap("C2b", pg, gg, gaps, bounds, theory=wrong).passed
    assert not cl.claim_margin_gap("C2b", pg, gg, gaps, bounds, theory=bad_cdf).passed
    lr = model.length_run(r, DEF["alpha_len"], rng_for(DEF["seed"], "C2c"))
    assert cl.claim_length("C2c", lr, r, DEF["alpha_len"]).passed
    wrong = variant(theory, length_limit=theory.wrong_length_limit_unbiased)
    assert not cl.claim_length("C2c", lr, r, DEF["alpha_len"], theory=wrong).passed
    two = model.two_item_run((0.5, 1.0, 1.5, 2.0), DEF["N_k2"], pi_ref, DEF["beta"], DEF["seed"], rng_for)
    assert cl.claim_two_item("C2d", two).passed
    for w in (theory.wrong_link_transfer_agnostic, theory.wrong_link_transfer_scale):
        assert not cl.claim_two_item("C2d", two, theory=variant(theory, link_transfer=w)).passed


def test_c3_claims_and_their_wrong_theories(setting, rates):
    r, _ = setting
    assert all(run.dropped.sum() == 0 for run in rates.values())
    assert cl.claim_rate("C3a", rates["bt"], r, rng_for(DEF["seed"], "C3a")).passed
    wrong = variant(theory, rmse_exponent=theory.wrong_rmse_exponent)
    assert not cl.claim_rate("C3a", rates["bt"], r, rng_for(DEF["seed"], "C3a"), theory=wrong).passed
    wrong = variant(theory, fisher_trace=theory.wrong_fisher_trace_local)
    for k in ("bt", "cauchy"):
        assert cl.claim_fisher_constant("C3b", rates[k], r).passed
        assert not cl.claim_fisher_constant("C3b", rates[k], r, theory=wrong).passed
    assert cl.claim_sandwich_constant("C3d", rates["mis"], r).passed
    wrong = variant(theory, sandwich_trace=theory.wrong_sandwich_trace_fisher_at_truth)
    assert not cl.claim_sandwich_constant("C3d", rates["mis"], r, theory=wrong).passed
    assert cl.claim_sandwich_constant("C3f", rates["margin"], r).passed
    for w in (theory.wrong_sandwich_trace_fisher_at_truth, theory.wrong_sandwich_trace_hessian,
              theory.wrong_sandwich_trace_score):
        bad = variant(theory, sandwich_trace=w)
        assert not cl.claim_sandwich_constant("C3f", rates["margin"], r, theory=bad).passed, w.__name__
    assert cl.claim_limit("C3e", rates["mis"], r).passed
    wrong = variant(theory, estimator_limit=theory.wrong_estimator_limit_consistent)
    assert not cl.claim_limit("C3e", rates["mis"], r, theory=wrong).passed


def test_extrapolation_recovers_an_exact_line():
    N = np.array([1000.0, 2000, 4000, 8000])
    c0, s0, c1 = cl.extrapolate(N, 5 + 300 / N, np.ones(4))
    assert_allclose([c0, c1], [5, 300], rtol=1e-10)
    assert s0 > 0


@pytest.mark.parametrize("name", sorted(LINKS))
def test_theory_score_derivatives_agree_with_the_measured_side(name):
    s = np.linspace(-4, 4, 33)
    _, du, ddu = score_terms("log", LINKS[name], s)
    assert_allclose(theory.log_score_slope(name, s), du, rtol=1e-10)
    assert_allclose(theory.score_curvature("log", name, s), ddu, rtol=1e-9, atol=1e-14)
    _, _, ddb = score_terms("brier", LINKS[name], s)
    assert_allclose(theory.score_curvature("brier", name, s), ddb, rtol=1e-9, atol=1e-14)


def test_margin_sandwich_differs_from_its_halves(setting):
    r, _ = setting
    pairs = model.pair_design(r.size)
    q = np.full(len(pairs), 1 / len(pairs))
    h = model.population_minimizer(r, pairs, "logistic", Loss(margin=2.0)).h[0]
    args = (h, r, pairs, q, "logistic", "logistic", 2.0)
    sand = theory.sandwich_trace(*args)
    assert sand > 2 * theory.wrong_sandwich_trace_hessian(*args) > 4 * theory.wrong_sandwich_trace_score(*args)
    # at gamma = 0 on BT data the margin loss is the likelihood: all three coincide with tr(I_F^+)
    args0 = (r - r.mean(), r, pairs, q, "logistic", "logistic", 0.0)
    fisher = theory.fisher_trace(r, pairs, q, "logistic")
    for f in (theory.sandwich_trace, theory.wrong_sandwich_trace_hessian, theory.wrong_sandwich_trace_score):
        assert_allclose(f(*args0), fisher, rtol=1e-9)


def test_margin_sandwich_parts_match_the_model_loss(setting):
    r, _ = setting
    pairs = model.pair_design(r.size)
    q = np.full(len(pairs), 1 / len(pairs))
    loss = Loss(margin=1.5)
    h = model.population_minimizer(r, pairs, "logistic", loss).h[0]
    A, B = theory.sandwich_parts(h, r, pairs, q, "logistic", "logistic", 1.5)
    counts = model.population_counts(model.choice_probs(r, pairs, "logistic"))
    assert_allclose(A, model.dpo_loss(h, pairs, counts, loss)[2][0], atol=1e-12)
    # B: the second moment of the per-comparison gradient, summed over outcomes
    Bm = np.zeros_like(B)
    for y in (0, 1):
        one = np.zeros_like(counts)
        for e in range(len(pairs)):
            one[...] = 0.0
            one[0, e, y] = 1.0
            g = model.dpo_loss(h, pairs, one, loss)[1][0]
            Bm += counts[0, e, y] * np.outer(g, g)
    assert_allclose(B, Bm, atol=1e-12)


def test_limit_fit_removes_a_one_over_n_bias():
    """Synthetic replicates with mean h + theta / N: the fitted intercept is h and the claim passes."""
    K, R, Ns = 4, 400, (1000, 2000, 4000)
    rng = rng_for(0, "test-limit")
    h = np.array([0.5, -0.2, 0.1, -0.4])
    theta = np.array([40.0, -30.0, 5.0, -15.0])
    h_hat = np.stack([h + theta / n + rng.standard_normal((R, K)) / np.sqrt(n) for n in Ns])
    h_hat -= h_hat.mean(axis=2, keepdims=True)
    run = model.RateRun("syn", "probit", Loss(), Ns, h_hat, np.zeros(3, dtype=int), h - h.mean())
    c0, cov, nu = cl.limit_fit(run, h)
    assert np.all(np.abs(c0 - (h - h.mean())) < 5 * np.sqrt(np.diag(cov)))
    assert nu > R
    assert cl.claim_limit("C3e", run, h).passed
    biased = model.RateRun("syn", "probit", Loss(), Ns, h_hat + 0.05 * np.array([1, -1, 0, 0]),
                           np.zeros(3, dtype=int), h - h.mean())
    assert not cl.claim_limit("C3e", biased, h).passed


def test_a_nan_prediction_fails_the_c2_claims(setting):
    r, _ = setting
    runs = model.path_runs(r)
    nan = variant(theory, link_transfer=nan_after_first(theory.link_transfer))
    assert not cl.claim_path_transfer("C2a", runs, theory=nan).passed
    pg, gg = tuple(DEF["p_grid"]), tuple(DEF["gamma_grid"])
    gaps, bounds = model.margin_gaps(pg, gg)
    nan = variant(theory, margin_cdf=nan_after_first(theory.margin_cdf))
    assert not cl.claim_margin_gap("C2b", pg, gg, gaps, bounds, theory=nan).passed
