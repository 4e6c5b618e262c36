"""Tests of chapter 'adversarial-vit-benign-overfitting': the theory, the model, and one mutation test per claim."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from theorylib.chapters.adversarial_vit_benign_overfitting import CHAPTER, model, theory
from theorylib.chapters.adversarial_vit_benign_overfitting import claims as cl
from theorylib.core import rng_for
from theorylib.core.theory import variant

DEF = CHAPTER.defaults()


def _random_model(rng, d=30, P=4):
    return rng.standard_normal(d) / np.sqrt(d), rng.standard_normal(P)


# ---- model -------------------------------------------------------------------------------------------

def test_data_have_the_patch_structure():
    X, y, y_obs = model.make_patch_data(500, 20, 3, 2.5, 1.5, 0.2, rng_for(0, "t"))
    assert_allclose(X[:, 0, 0], 2.5 * y)
    assert np.all(X[:, 0, 1:] == 0) and np.all(X[:, 1:, 0] == 0)
    assert_allclose(X[:, 1:, 1:].std(), 1.5, rtol=0.03)
    assert abs(np.mean(y != y_obs) - 0.2) < 3.29 * np.sqrt(0.16 / 500)


def test_gradients_match_central_differences():
    rng = rng_for(1, "t")
    X, _, y_obs = model.make_patch_data(6, 12, 3, 1.5, 1.0, 0.2, rng)
    v, s = _random_model(rng, 12, 3)
    _, gv, gs = model.robust_loss_grad(X, y_obs, v, s, 0.3)
    h = 1e-6
    num_v = [(model.robust_loss_grad(X, y_obs, v + h * e, s, 0.3)[0]
              - model.robust_loss_grad(X, y_obs, v - h * e, s, 0.3)[0]) / (2 * h) for e in np.eye(12)]
    num_s = [(model.robust_loss_grad(X, y_obs, v, s + h * e, 0.3)[0]
              - model.robust_loss_grad(X, y_obs, v, s - h * e, 0.3)[0]) / (2 * h) for e in np.eye(3)]
    assert_allclose(gv, num_v, rtol=1e-6, atol=1e-9)
    assert_allclose(gs, num_s, rtol=1e-6, atol=1e-9)


def test_loss_is_the_logistic_loss_of_the_attacked_margin():
    rng = rng_for(2, "t")
    X, y, _ = model.make_patch_data(10, 15, 4, 2.0, 1.0, 0.0, rng)
    v, s = _random_model(rng, 15, 4)
    loss, _, _ = model.robust_loss_grad(X, y, v, s, 0.4)
    assert_allclose(loss, np.mean(np.log1p(np.exp(-model.robust_margins(X, y, v, s, 0.4)))), rtol=1e-12)


def test_worst_case_perturbation_beats_random_feasible_ones():
    rng = rng_for(3, "t")
    X, y, _ = model.make_patch_data(1, 10, 3, 1.0, 1.0, 0.0, rng)
    v, s = _random_model(rng, 10, 3)
    best = model.robust_margins(X, y, v, s, 0.5)[0]
    D = rng.standard_normal((1000, 3, 10))
    D *= 0.5 * rng.random((1000, 1, 1)) / np.linalg.norm(D, axis=(1, 2), keepdims=True)
    margins = y[0] * model.forward(X + D, v, s)
    assert np.all(margins >= best - 1e-12)
    assert_allclose(np.linalg.norm(model.worst_case_perturbation(X, y, v, s, 0.5)), 0.5, rtol=1e-12)


def test_pgd_and_closed_form_agree_with_the_lemma():
    rng = rng_for(4, "t")
    X, y, _ = model.make_patch_data(5, 12, 4, 2.0, 1.0, 0.0, rng)
    v, s = _random_model(rng, 12, 4)
    pgd = model.pgd_attack_margin(X, y, v, s, 0.7, rng)
    assert_allclose(pgd, theory.robust_margin(X, y, v, s, 0.7), rtol=1e-12, atol=1e-12)
    assert_allclose(model.robust_margins(X, y, v, s, 0.7), theory.robust_margin(X, y, v, s, 0.7), atol=1e-12)


def test_first_step_is_the_pooled_sum_and_leaves_attention_uniform():
    rng = rng_for(5, "t")
    N, d, P = 8, 20, 3
    X, y, y_obs = model.make_patch_data(N, d, P, 2.0, 1.0, 0.25, rng)
    v, s, _ = model.train_adversarial(X, y_obs, 0.5, 1, 0.3, 1.0)
    assert np.all(s == 0)
    assert_allclose(v, 0.3 / (2 * N * P) * np.einsum("n,npd->d", y_obs, X), rtol=1e-12, atol=1e-15)


def test_train_reduces_the_robust_loss_and_freeze_keeps_attention():
    rng = rng_for(6, "t")
    X, _, y_obs = model.make_patch_data(16, 100, 3, 3.0, 1.0, 0.0, rng)
    v, s, hist = model.train_adversarial(X, y_obs, 0.2, 200, 0.05, 1.0, freeze_attention=True)
    assert np.all(s == 0) and hist[-1] < hist[0] and np.all(np.diff(hist) <= 1e-12)


def test_mc_error_is_half_when_v_misses_the_signal():
    v = np.r_[0.0, np.ones(19)]
    err, se = model.mc_robust_test_error(v, np.zeros(3), 2.0, 1.0, 0.0, 20000, rng_for(7, "t"))
    assert abs(err - 0.5) <= 3.29 * se


def test_budget_wall_in_monte_carlo():
    """Lemma (risk), second part: eps >= ||mu|| gives error >= 1/2 for any model."""
    rng = rng_for(8, "t")
    for _ in range(5):
        v, s = _random_model(rng, 20, 3)
        v[0] = abs(v[0]) * 5
        err, se = model.mc_robust_test_error(v, s, 1.0, 1.0, 1.0, 4000, rng)
        assert err >= 0.5 - 3.29 * se


def test_crossing_helper_recovers_a_known_line():
    x = np.linspace(1.0, 9.0, 5)
    root, se = model.crossing(x, 2 * x - 8, np.ones(5))
    assert_allclose(root, 2.0, rtol=1e-12) and se >= 0
    with pytest.raises(ValueError):
        model.crossing(x, -x - 1, np.ones(5))


@pytest.mark.parametrize("kwargs", [dict(P=1), dict(d=1), dict(rho=0.5), dict(rho=-0.1), dict(sigma=0.0),
                                    dict(N=0)])
def test_bad_data_inputs_raise(kwargs):
    args = dict(N=4, d=5, P=3, mu_norm=1.0, sigma=1.0, rho=0.1) | kwargs
    with pytest.raises(ValueError):
        model.make_patch_data(**args, rng=rng_for(0, "t"))


def test_bad_model_inputs_raise():
    X = np.zeros((2, 3, 5))
    with pytest.raises(ValueError):
        model.forward(X, np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError):
        model.forward(X, np.zeros(5), np.zeros(2))
    with pytest.raises(ValueError):
        model.robust_loss_grad(X, np.ones(2), np.zeros(5), np.zeros(3), -0.1)
    with pytest.raises(ValueError):
        model.robust_loss_grad(X, np.ones(3), np.zeros(5), np.zeros(3), 0.1)


# ---- theory ------------------------------------------------------------------------------------------

def test_risk_at_zero_budget_is_the_standard_error_formula():
    rng = rng_for(9, "t")
    v, s = _random_model(rng, 20, 4)
    a = theory.attention(s)
    expect = stats.norm.cdf(-a[0] * v[0] * 3.0 / (1.5 * np.linalg.norm(v[1:]) * np.linalg.norm(a[1:])))
    assert_allclose(theory.robust_test_error(v, s, 3.0, 1.5, 0.0), expect, rtol=1e-12)


def test_risk_properties():
    rng = rng_for(10, "t")
    for _ in range(20):
        v, s = _random_model(rng, 20, 4)
        errs = [theory.robust_test_error(v, s, 2.0, 1.0, e) for e in np.linspace(0, 3, 13)]
        assert np.all(np.diff(errs) >= 0)
        assert theory.robust_test_error(v, s, 2.0, 1.0, 2.0) >= 0.5       # the budget wall
    v = np.r_[0.0, np.ones(9)]
    assert theory.robust_test_error(v, np.zeros(3), 2.0, 1.0, 0.0) == 0.5


def test_one_step_law_is_monotone_and_matches_its_small_case():
    errs = [theory.one_step_robust_error(m, 8, 50, 3, 1.0, 0.3, 0.1) for m in (1.0, 2.0, 3.0, 4.0)]
    assert np.all(np.diff(errs) < 0)
    # at rho = 0 the law is one chi-square integral: compare with a Monte-Carlo average over W
    q = stats.chi2.rvs(49, size=200_000, random_state=np.random.default_rng(0))
    W = np.sqrt(8 * 2 * q)
    mc = theory.one_step_conditional_error(8, W, 2.0, 3, 1.0, 0.3)
    assert abs(theory.one_step_robust_error(2.0, 8, 50, 3, 1.0, 0.3, 0.0) - mc.mean()) < 4 * mc.std() / 450


def test_thresholds_at_the_defaults():
    assert_allclose(theory.attention_threshold(32, 400, 1.0, 0.1), 4.3756, atol=1e-4)
    assert_allclose(theory.attention_threshold(32, 400, 1.0, 0.0), np.sqrt(399 / 32), rtol=1e-12)
    assert_allclose(theory.second_moment_A(10, 0.3),
                    sum(stats.binom.pmf(f, 10, 0.3) * (10 - 2 * f) ** 2 for f in range(11)), rtol=1e-12)
    thr = theory.attention_threshold(20, 100, 1.3, 0.05)
    assert abs(theory.expected_increment(thr, 20, 100, 4, 1.3, 0.05)) < 1e-12
    assert theory.benign(1.01 * thr, 20, 100, 1.3, 0.05) and not theory.benign(0.99 * thr, 20, 100, 1.3, 0.05)


# ---- claims: each holds, and rejects its named wrong theory -------------------------------------------

@pytest.fixture(scope="module")
def attack_data():
    rng = rng_for(0, "C1a-test")
    inst, pgd = [], []
    for _ in range(3):
        X, y, _ = model.make_patch_data(4, 30, 4, 2.0, 1.0, 0.0, rng)
        v, s = _random_model(rng, 30, 4)
        inst.append((X, y, v, s))
        pgd.append(model.pgd_attack_margin(X, y, v, s, 0.5, rng))
    return pgd, inst


def test_c1a_exact_attack(attack_data):
    pgd, inst = attack_data
    assert cl.claim_exact_attack("C1a", pgd, inst, 0.5).passed
    wrong = variant(theory, robust_margin=theory.wrong_robust_margin)
    assert not cl.claim_exact_attack("C1a", pgd, inst, 0.5, theory=wrong).passed


@pytest.fixture(scope="module")
def one_step_model():
    X, _, y_obs = model.make_patch_data(32, 200, 4, 3.0, 1.0, 0.1, rng_for(0, "C1b-test"))
    _, gv, _ = model.robust_loss_grad(X, y_obs, np.zeros(200), np.zeros(4), 0.5)
    return -gv


def test_c1b_mc_risk(one_step_model):
    v, s = one_step_model, np.linspace(0.5, -0.5, 4)
    err, se = model.mc_robust_test_error(v, s, 3.0, 1.0, 0.5, 20000, rng_for(0, "C1b-mc"))
    assert 0.05 < err < 0.45
    assert cl.claim_mc_risk("C1b", err, se, v, s, 3.0, 1.0, 0.5).passed
    wrong = variant(theory, robust_test_error=theory.wrong_robust_test_error)
    assert not cl.claim_mc_risk("C1b", err, se, v, s, 3.0, 1.0, 0.5, theory=wrong).passed


def test_c2_one_step():
    cells = [(0.0, 2.0), (0.1, 3.0)]
    errs = [model.one_step_errors(16, 100, 3, mu, 1.0, 0.3, r, 300, 8, rng_for(0, "C2-test", f"{r}"))
            for r, mu in cells]
    assert cl.claim_one_step("C2", errs, cells, 16, 100, 3, 1.0, 0.3).passed
    wrong = variant(theory, one_step_robust_error=theory.wrong_one_step_robust_error)
    assert not cl.claim_one_step("C2", errs, cells, 16, 100, 3, 1.0, 0.3, theory=wrong).passed


@pytest.fixture(scope="module")
def increments():
    thr = theory.attention_threshold(16, 100, 1.0, 0.1)
    grid = np.linspace(0.5, 1.5, 5) * thr
    inc = [model.step2_attention_increment(16, 100, 3, mu, 1.0, 0.5, 0.1, 1e-6, 1.0, 150,
                                           rng_for(0, "C3-test", f"{k}")) for k, mu in enumerate(grid)]
    return grid, inc


def test_c3a_increment_law(increments):
    grid, inc = increments
    assert cl.claim_increment_law("C3a", grid, inc, 16, 100, 3, 1.0, 0.1).passed
    wrong = variant(theory, expected_increment=theory.wrong_expected_increment)
    assert not cl.claim_increment_law("C3a", grid, inc, 16, 100, 3, 1.0, 0.1, theory=wrong).passed


def test_c3b_attention_threshold(increments):
    grid, inc = increments
    assert cl.claim_attention_threshold("C3b", grid, inc, 16, 100, 1.0, 0.1).passed
    wrong = variant(theory, attention_threshold=theory.wrong_attention_threshold)
    assert not cl.claim_attention_threshold("C3b", grid, inc, 16, 100, 1.0, 0.1, theory=wrong).passed


def test_c3b_fails_without_a_crossing():
    grid = np.linspace(1.0, 2.0, 4)
    flat = [np.full(10, 1.0) + 0.01 * np.arange(10) for _ in grid]
    assert not cl.claim_attention_threshold("C3b", grid, flat, 16, 100, 1.0, 0.1).passed


@pytest.fixture(scope="module")
def long_runs():
    out = {}
    thr = theory.attention_threshold(32, 400, 1.0, 0.0)
    for regime, mult in (("benign", 2.0), ("harmful", 0.5)):
        X, y, y_obs = model.make_patch_data(32, 400, 4, mult * thr, 1.0, 0.0, rng_for(0, "C4-test", regime))
        v, s, _ = model.train_adversarial(X, y_obs, 0.5, 1500, 0.5 * 16 / 400, 1.0)
        train = float(np.mean(model.robust_margins(X, y_obs, v, s, 0.5) <= 0))
        test, _ = model.mc_robust_test_error(v, s, mult * thr, 1.0, 0.5, 2000, rng_for(0, "C4-test", "t"))
        out[regime] = (mult * thr, train, test)
    return out


def test_c4a_robust_interpolation(long_runs):
    trains = [r[1] for r in long_runs.values()]
    assert cl.claim_robust_interpolation("C4a", trains, 0.0).passed
    wrong = variant(theory, robust_train_error_limit=theory.wrong_robust_train_error_limit)
    assert not cl.claim_robust_interpolation("C4a", trains, 0.0, theory=wrong).passed


def test_c4b_regimes(long_runs):
    for mu, _, test in long_runs.values():
        assert cl.claim_regime("C4b", [test], mu, 32, 400, 1.0, 0.0).passed
    mu, _, test = long_runs["benign"]
    wrong = variant(theory, benign=theory.wrong_benign)
    assert not cl.claim_regime("C4b", [test], mu, 32, 400, 1.0, 0.0, theory=wrong).passed


# ---- batched forms and the phase boundary -----------------------------------------------------------------

def test_batched_gradient_is_the_per_set_gradient():
    rng = rng_for(11, "t")
    X, y, y_obs = model.make_patch_data_batch(3, 5, 12, 3, 1.5, 1.0, 0.2, rng)
    assert np.all(X[:, :, 0, 1:] == 0) and np.all(X[:, :, 1:, 0] == 0)
    assert_allclose(X[:, :, 0, 0], 1.5 * y)
    v, s = rng.standard_normal((3, 12)), rng.standard_normal((3, 3))
    v[0] = 0.0                                            # the zero subgradient at v = 0
    loss, gv, gs = model.robust_loss_grad_batch(X, y_obs, v, s, 0.3)
    for b in range(3):
        lb, gvb, gsb = model.robust_loss_grad(X[b], y_obs[b], v[b], s[b], 0.3)
        assert_allclose(loss[b], lb, rtol=1e-13)
        assert_allclose(gv[b], gvb, rtol=1e-12, atol=1e-15)
        assert_allclose(gs[b], gsb, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError):
        model.robust_loss_grad_batch(X, y_obs[:, :4], v, s, 0.3)


def test_batched_increments_follow_the_per_set_first_order_form():
    """On one set the first-order step-2 increment is (A^2 ||mu||^2 / N - ||Xi||^2 / (N (P - 1))) / (4 N P^2)."""
    inc = model.step2_increments_batch(3, 20, 3, 2.0, 1.0, 0.4, 0.0, 1e-8, 1.0, 5, rng_for(12, "t"), chunk=2)
    X, _, y_obs = model.make_patch_data_batch(2, 3, 20, 3, 2.0, 1.0, 0.0, rng_for(12, "t"))
    Xi = np.einsum("bn,bnpd->bd", y_obs, X[:, :, 1:, :])
    A = np.sum(y_obs * X[:, :, 0, 0] / 2.0, axis=1)
    expect = (A**2 * 4.0 / 3 - np.sum(Xi**2, axis=1) / 6) / (4 * 3 * 9)
    assert_allclose(inc[:2], expect, rtol=1e-6)


def test_grid_training_is_training_set_by_set():
    rng = rng_for(13, "t")
    S, N, P, d = 2, 6, 3, 20
    noise = np.zeros((S, N, P - 1, d))
    noise[..., 1:] = rng.standard_normal((S, N, P - 1, d - 1))
    y = rng.choice(np.array([-1.0, 1.0]), size=(S, N))
    mus = np.array([0.5, 2.0, 3.0])
    for frozen in (False, True):
        V, sc = model.train_adversarial_grid(noise, y, mus, 0.3, 40, 0.05, 1.0, frozen)
        E = model.exact_robust_errors(V, sc, mus, 1.0, 0.3)
        for r in range(S):
            for g, mu in enumerate(mus):
                X = np.zeros((N, P, d))
                X[:, 0, 0], X[:, 1:, :] = y[r] * mu, noise[r]
                v, s, _ = model.train_adversarial(X, y[r], 0.3, 40, 0.05, 1.0, frozen)
                assert_allclose(V[r, g], v, rtol=1e-10, atol=1e-14)
                assert_allclose(sc[r, g], s, rtol=1e-10, atol=1e-14)
                assert_allclose(E[r, g], theory.robust_test_error(v, s, mu, 1.0, 0.3), rtol=1e-10)


def test_error_crossing_interpolates_and_never_extrapolates():
    x = np.log(np.array([1.0, 2.0, 4.0, 8.0]))
    assert_allclose(model.error_crossing(x, np.array([0.6, 0.5, 0.0, 0.0])), x[1] + 0.5 * (x[2] - x[1]))
    with pytest.raises(ValueError):
        model.error_crossing(x, np.array([0.6, 0.5, 0.4, 0.3]))
    with pytest.raises(ValueError):
        model.error_crossing(x, np.array([0.2, 0.1, 0.0, 0.0]))


def test_boundary_slopes_and_their_quantization_weight():
    x = np.log([4.0, 8.0, 16.0, 32.0])
    slopes, wsum = cl.boundary_slopes(x, np.vstack([-0.5 * x + 1, -0.25 * x]))
    assert_allclose(slopes, [-0.5, -0.25], rtol=1e-12)
    assert_allclose(wsum, 0.8 / np.log(2.0), rtol=1e-12)


@pytest.fixture(scope="module")
def precise_increments():
    cells = [(1, 0.0, 1.0), (1, 0.0, 2.0), (1, 20.0, 1.0), (4, 20.0, 1.0)]
    inc = [model.step2_increments_batch(n, 100, 3, mu, sg, 0.5, 0.1, 1e-8, 1.0, 3000,
                                        rng_for(0, "C3c-test", f"{k}")) for k, (n, mu, sg) in enumerate(cells)]
    return cells, inc


def test_c3c_increment_terms(precise_increments):
    cells, inc = precise_increments
    assert cl.claim_increment_terms("C3c", cells, inc, 100, 3, 0.1).passed
    wrong = variant(theory, expected_increment=theory.wrong_expected_increment_mean_flips)
    assert not cl.claim_increment_terms("C3c", cells, inc, 100, 3, 0.1, theory=wrong).passed


@pytest.fixture(scope="module")
def phase_runs():
    Ns, S, d, P = [4, 8, 16, 32], 6, 400, 4
    mus = np.sqrt(d) * np.geomspace(0.1, 0.8, 33)
    cross = {"learned": np.zeros((S, 4)), "frozen": np.zeros((S, 4))}
    for j, N in enumerate(Ns):
        rng = rng_for(1, "C5-test", f"{N}")
        noise = np.zeros((S, N, P - 1, d))
        noise[..., 1:] = rng.standard_normal((S, N, P - 1, d - 1))
        y = rng.choice(np.array([-1.0, 1.0]), size=(S, N))
        for arch in cross:
            V, sc = model.train_adversarial_grid(noise, y, mus, 0.5, 1000, 0.5 * P**2 / d, 1.0, arch == "frozen")
            E = model.exact_robust_errors(V, sc, mus, 1.0, 0.5)
            cross[arch][:, j] = [model.error_crossing(np.log(mus), E[r]) for r in range(S)]
    return np.log(Ns), cross, float(np.log(8.0) / 32)


def test_c5_boundary_exponents(phase_runs):
    log_N, cross, cell = phase_runs
    for arch in cross:
        assert cl.claim_boundary_exponent("C5", log_N, cross[arch], cell, arch).passed
    for wrong_fn, arch in ((theory.wrong_boundary_exponent, "frozen"),
                           (theory.wrong_boundary_exponent_pooling, "learned")):
        wrong = variant(theory, boundary_exponent=wrong_fn)
        assert not cl.claim_boundary_exponent("C5", log_N, cross[arch], cell, arch, theory=wrong).passed
