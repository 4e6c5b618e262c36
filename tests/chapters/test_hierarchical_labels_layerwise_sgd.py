"""Tests of chapter 'hierarchical-labels-layerwise-sgd': theory, model, and one mutation test per claim."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from theorylib.chapters.hierarchical_labels_layerwise_sgd import (
    CHAPTER,
    claims,
    model,
    model_deep,
    model_sgd,
    model_walsh,
    theory,
)
from theorylib.chapters.hierarchical_labels_layerwise_sgd import model_net as net_model
from theorylib.core import rng_for, setup
from theorylib.core.theory import variant

DEF = CHAPTER.defaults()
PACKAGE = Path(claims.__file__).parent


# ------------------------------------------------------------------ package layout


def test_declaration_imports_no_numerical_library():
    code = ("import sys, theorylib.chapters.hierarchical_labels_layerwise_sgd; "
            "print(sorted({'torch', 'numpy', 'scipy'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------------ cube, tree, features


def test_enumerate_cube_is_the_whole_cube():
    X = model.enumerate_cube(5)
    assert X.shape == (32, 5)
    assert set(np.unique(X)) == {-1, 1}
    assert len({tuple(r) for r in X}) == 32


@pytest.mark.parametrize("d", [0, 21, 2.0, True])
def test_enumerate_cube_rejects_bad_d(d):
    with pytest.raises(ValueError, match="enumerate the cube"):
        model.enumerate_cube(d)


def test_parity_tree_levels():
    X = model.enumerate_cube(8)
    levels = model.parity_tree_labels(X, r=3)
    assert [lv.shape[1] for lv in levels] == [8, 4, 2, 1]
    for lv in levels:
        assert set(np.unique(lv)) <= {-1, 1}
    assert_array_equal(levels[-1][:, 0], np.prod(X, axis=1))
    assert_array_equal(levels[2][:, 1], np.prod(X[:, 4:8], axis=1))
    assert_array_equal(model.label_levels(8), [1, 1, 1, 1, 2, 2, 3])
    assert model.all_labels(X).shape == (256, 7)


@pytest.mark.parametrize("d", [3, 6, 12])
def test_parity_tree_rejects_non_power_of_two(d):
    with pytest.raises(ValueError, match="power of 2"):
        model.parity_tree_labels(np.ones((4, d)))


def test_parity_tree_rejects_bad_input():
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        model.parity_tree_labels(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="does not match"):
        model.parity_tree_labels(np.ones((3, 4)), r=3)
    with pytest.raises(ValueError, match="depth r"):
        model.stack_shapes(0)


def test_quad_features_order_and_pair_index():
    rng = np.random.default_rng(0)
    Z = model.random_signs((20, 6), rng)
    Phi = model.quad_features(Z)
    assert Phi.shape == (20, model.n_quad_features(6)) == (20, 22)
    assert_array_equal(Phi[:, 0], 1)
    assert_array_equal(Phi[:, 1:7], Z)
    for a, b in itertools.combinations(range(6), 2):
        assert_array_equal(Phi[:, model.pair_index(6, a, b)], Z[:, a] * Z[:, b])
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        model.quad_features(np.array([[1.0, 0.5]]))
    with pytest.raises(ValueError, match="2-D"):
        model.quad_features(np.ones(3))


@pytest.mark.parametrize("m", [1, 2, 5, 16])
def test_theory_and_model_count_the_same_features(m):
    assert theory.n_features(m) == model.n_quad_features(m) == model.quad_features(np.ones((1, m))).shape[1]


@pytest.mark.parametrize("m", [2, 3, 6])
def test_features_orthonormal_on_cube(m):
    Phi = model.quad_features(model.enumerate_cube(m))
    p = model.n_quad_features(m)
    assert_allclose(Phi.T @ Phi / 2**m, np.eye(p), atol=1e-12)
    assert_allclose(np.sum(Phi**2, axis=1), p)


def test_labels_of_one_level_are_iid_uniform():
    # level-1 labels of d = 8 inputs: their quadratic features are orthonormal (the Lemma)
    X = model.enumerate_cube(8)
    Z = model.parity_tree_labels(X)[1]
    Phi = model.quad_features(Z)
    assert_allclose(Phi.T @ Phi / len(X), np.eye(Phi.shape[1]), atol=1e-12)


# ------------------------------------------------------------------ Theorem A


@pytest.mark.parametrize("m,B,eta", [(3, 1, 0.1), (3, 1, 0.3), (2, 2, 0.4), (3, 2, 0.25)])
def test_second_moment_matrix_by_enumeration(m, B, eta):
    """E[(I - eta C_hat)^2] = rho I, C_hat the mean of B independent phi phi^T, by enumerating batches."""
    Phi = model.quad_features(model.enumerate_cube(m))
    p = Phi.shape[1]
    acc = np.zeros((p, p))
    for idx in itertools.product(range(len(Phi)), repeat=B):
        C = sum(np.outer(Phi[i], Phi[i]) for i in idx) / B
        M = np.eye(p) - eta * C
        acc += M @ M
    acc /= len(Phi) ** B
    assert_allclose(acc, theory.sgd_contraction(eta, B, p) * np.eye(p), atol=1e-12)


def test_contraction_formulas():
    p, B = 37, 4
    c = 1 + (p - 1) / B
    assert theory.sgd_second_moment(B, p) == pytest.approx(c)
    eta_star = theory.optimal_step(B, p)
    assert eta_star == pytest.approx(1 / c)
    assert theory.sgd_contraction(eta_star, B, p) == pytest.approx((p - 1) / (B + p - 1))
    etas = np.linspace(0.01, 2 / c - 0.01, 200)
    assert min(theory.sgd_contraction(e, B, p) for e in etas) >= theory.sgd_contraction(eta_star, B, p) - 1e-15
    assert theory.sgd_contraction(2 / c, B, p) == pytest.approx(1.0)
    # at B = 1 the optimal step is the model's projection step 1/p, to the last bit
    assert theory.optimal_step(1, p) == model.projection_step(p)


def test_steps_to_mse_monotone_and_exact():
    p = 37
    eps = np.geomspace(1e-6, 0.5, 40)
    T = [theory.steps_to_mse(e, 1 / p, 1, p) for e in eps]
    assert all(a >= b for a, b in zip(T, T[1:], strict=False))
    rho = theory.sgd_contraction(1 / p, 1, p)
    for e, t in zip(eps, T, strict=True):
        assert rho**t <= e < rho ** (t - 1)
    L = np.log(100)
    t = theory.steps_to_mse(0.01, 1 / p, 1, p)
    assert (p - 1) * L <= t <= p * L + 1
    assert theory.steps_to_mse(2.0, 0.1, 1, 5) == 0


@pytest.mark.parametrize(
    "args,msg",
    [((0.01, 0.0, 1, 5), "eta"), ((0.01, -1.0, 1, 5), "eta"), ((0.01, 0.1, 0, 5), "batch size"),
     ((0.01, 1.5, 1, 5), "unstable"), ((0.0, 0.1, 1, 5), "eps")],
)
def test_steps_to_mse_rejects(args, msg):
    with pytest.raises(ValueError, match=msg):
        theory.steps_to_mse(*args)


def test_c1_design_is_the_theory_steps_and_a_measured_horizon():
    m, R = 8, 400
    p = theory.n_features(m)
    for B in (1, 4, 16):
        assert model_sgd.normalised_step(B, p) == theory.optimal_step(B, p)  # to the last bit
    study = model_sgd.law_experiment(m, R, rng_for(0, "C1"))
    assert len(study.cells) == 9
    for (label, eta, B), (label2, eta2, B2, ts) in zip(model_sgd.law_configs(m), study.design, strict=True):
        assert (label, eta, B) == (label2, eta2, B2)
        T = ts[-1]
        assert ts == (T // 4, T // 2, T)
        # the pilot's horizon sits where the law puts rho^T = 1e-3, up to the pilot's noise
        assert abs(T - theory.steps_to_mse(model_sgd.LAW_TARGET, eta, B, p)) <= 0.1 * T
    assert [c.t for c in study.cells[:3]] == list(study.design[0][3])
    assert all(c.m == m and c.p == theory.n_features(m) for c in study.cells)


def test_pilot_horizon_is_a_first_passage():
    m, eta, B, R = 4, 0.2, 2, 50
    T = model_sgd.pilot_horizon(m, eta, B, R, np.random.default_rng(9))
    curve = model_sgd.sgd_readout_runs(m, model.pair_index(m, 0, 1), eta, B, T, R, np.random.default_rng(9)).mean(1)
    assert curve[T] <= model_sgd.LAW_TARGET < curve[:T].min()


def test_projection_runs_are_monotone():
    m = 5
    p = model.n_quad_features(m)
    runs = model_sgd.sgd_readout_runs(m, model.pair_index(m, 0, 1), 1 / p, 1, 60, 30, np.random.default_rng(1))
    assert runs.shape == (61, 30)
    assert_allclose(runs[0], 1.0)
    assert np.all(np.diff(runs, axis=0) <= 1e-12)
    with pytest.raises(ValueError, match="target_col"):
        model_sgd.sgd_readout_runs(m, p, 0.1, 1, 5, 3, np.random.default_rng(0))


def test_runs_do_not_depend_on_how_steps_are_grouped():
    """The C2 study advances its runs a chunk at a time; the draws and values equal one long run's."""
    m, B, T, R = 4, 2, 37, 9
    p = model.n_quad_features(m)
    whole = model_sgd.sgd_readout_runs(m, model.pair_index(m, 0, 1), 0.1, B, T, R, np.random.default_rng(4))
    runs = model_sgd._ReadoutRuns(m, model.pair_index(m, 0, 1), 0.1, B, R, np.random.default_rng(4))
    parts = [runs.sq_norms()[None, :], runs.advance(5), runs.advance(p), runs.advance(T - 5 - p)]
    assert_array_equal(np.concatenate(parts), whole)


def test_first_passage():
    assert_array_equal(model_sgd.first_passage(np.array([[1.0, 0.5, 0.1, 0.05]]), 0.1), [2])
    rho = theory.sgd_contraction(1 / 11, 1, 11)
    curve = rho ** np.arange(80.0)
    t = model_sgd.first_passage(curve, 0.01, interpolate=True)
    assert t == pytest.approx(theory.crossing_time(0.01, 1 / 11, 1, 11), rel=1e-12)
    assert theory.steps_to_mse(0.01, 1 / 11, 1, 11) - 1 < t <= theory.steps_to_mse(0.01, 1 / 11, 1, 11)
    with pytest.raises(ValueError, match="never falls"):
        model_sgd.first_passage(np.array([1.0, 0.5]), 0.1)


def test_rate_study_simulates_past_every_crossing():
    m_list, eps = [3, 5], 0.05
    study = model_sgd.rate_study(m_list, eps, 40, 2, n_boot=50)
    assert study.p.tolist() == [7.0, 16.0]
    assert np.all(study.horizons > study.T_hat)
    assert np.all(study.horizons <= [model_sgd.rate_cap(p, eps) for p in (7, 16)])
    assert study.boot_slopes.shape == (50,)
    assert study.slope_se > 0 and study.ci95[0] < study.ci95[1]
    # no horizon enters a value: a longer simulation of the same stream gives the same T_hat
    g_runs = rng_for(2, "C2", "3").spawn(2)[1]
    curves = model_sgd.sgd_readout_runs(3, model.pair_index(3, 0, 1), 1 / 7, 1, int(study.horizons[0]) + 40, 40, g_runs)
    assert model_sgd.first_passage(curves.mean(axis=1), eps, interpolate=True) == study.T_hat[0]
    # each m has its own stream: its value does not depend on the other m of the list
    alone = model_sgd.rate_study([5, 8], eps, 40, 2, n_boot=50)
    assert alone.T_hat[0] == study.T_hat[1]
    with pytest.raises(ValueError, match="distinct"):
        model_sgd.rate_study([3, 3], eps, 40, 2)



def test_rate_study_stops_at_its_cap(monkeypatch):
    monkeypatch.setattr(model_sgd, "RATE_CAP_FACTOR", 0)  # a cap of 0 steps: every run reaches it
    with pytest.raises(RuntimeError, match="did not all reach"):
        model_sgd.rate_study([3, 5], 1e-6, 20, 2, n_boot=5)


def test_model_never_reads_the_theory():
    for mod in (model, model_sgd, model_deep, net_model):
        src = Path(mod.__file__).read_text()
        assert "import theory" not in src and "from . import theory" not in src and ".theory import" not in src


# ------------------------------------------------------------------ Theorems B and C


def test_stack_mse_is_the_exact_clean_mse_and_union_bound_holds():
    rng = np.random.default_rng(3)
    d, r = 8, 3
    etas = [model.projection_step(p) for _, p, _ in model.stack_shapes(r)]
    Ws = model.train_hinted_stack(r, [10, 4, 2], etas, 1, rng)
    X = model.enumerate_cube(d)
    levels = model.parity_tree_labels(X)
    raw = model.predict_stack(X, Ws, rounding=False)
    enum_mse = np.concatenate([np.mean((v - levels[i + 1]) ** 2, axis=0) for i, v in enumerate(raw)])
    mse = model.stack_mse(Ws)
    assert_allclose(mse, enum_mse, atol=1e-12)
    beta = model.exact_sign_errors(Ws, d)
    assert np.all(beta <= mse + 1e-12)  # Markov step
    assert model.exact_top_error(Ws, d) <= beta.sum() + 1e-12 <= mse.sum() + 2e-12


@pytest.mark.parametrize("steps", [[1, 1, 1], [30, 20, 1], [45, 20, 5]])
def test_union_bound_holds_for_every_realisation(steps):
    # Thm B's union bound, P(top wrong) <= sum beta_ij <= sum MSE_ij, on stacks trained to and below budget
    d, r = 8, 3
    etas = [model.projection_step(p) for _, p, _ in model.stack_shapes(r)]
    for seed in range(5):
        Ws = model.train_hinted_stack(r, steps, etas, 1, np.random.default_rng(seed))
        beta = model.exact_sign_errors(Ws, d)
        assert model.exact_top_error(Ws, d) <= beta.sum() + 1e-12
        assert np.all(beta <= model.stack_mse(Ws) + 1e-12)


def test_union_bound_one_step_stack_is_loose_by_at_most_three():
    # one projection step from 0 on z*: the top readout errs w.p. 1/2 or 1/4 on clean inputs, MSE 3/4
    for seed in range(6):
        Ws = model.train_hinted_stack(1, [1], [model.projection_step(4)], 1, np.random.default_rng(seed))
        beta = model.exact_sign_errors(Ws, 2)[0]
        assert beta in (0.25, 0.5)
        assert model.stack_mse(Ws)[0] == pytest.approx(0.75)


def test_steps_validation():
    with pytest.raises(ValueError, match="delta"):
        theory.stack_steps(8, 0.0)
    with pytest.raises(ValueError, match="power of 2"):
        theory.stack_steps(12, 0.1)
    with pytest.raises(ValueError, match="step counts"):
        model.train_hinted_stack(3, [1, 1], [0.1, 0.1], 1, np.random.default_rng(0))


def test_stack_budget_is_thm_b():
    d, delta = 16, 0.05
    steps = theory.stack_steps(d, delta)
    for (_, p, _), T in zip(model.stack_shapes(4), steps, strict=True):
        rho = theory.sgd_contraction(theory.optimal_step(1, p), 1, p)
        assert rho**T <= delta / (d - 1) < rho ** (T - 1)
        assert T <= p * np.log((d - 1) / delta) + 1


@pytest.mark.parametrize("d", [4, 8, 16])
def test_model_budget_equals_the_theory_budget(d):
    """The model fixes Thm B's budget itself (no measurement reads the theory); it is the theory's, exactly."""
    for delta in np.geomspace(1e-3, 0.5, 25):
        assert model.stack_budget(d, float(delta)) == theory.stack_steps(d, float(delta))


def test_no_signal_identities():
    d = 8
    assert model.max_top_correlation(d) == 0 == theory.top_feature_correlation(d)
    assert model.max_top_correlation(d, level=2) == 0
    assert model.max_top_correlation(d, level=1) == 2**d == theory.wrong_top_correlation_degree2(d)
    w = np.random.default_rng(0).normal(size=model.n_quad_features(d))
    assert model.exact_no_hint_mse(w, d) == pytest.approx(1 + w @ w, abs=1e-10)  # Parseval


# ------------------------------------------------------------------ torch network


class _Fixed:
    """A stand-in generator whose integers() return the given ±1 inputs (replays one batch)."""

    def __init__(self, X):
        self.X = X

    def integers(self, lo, hi, size):
        return ((self.X.reshape(size) + 1) / 2).astype(int)


def test_manual_gradients_match_autograd():
    import torch

    setup(0, torch=True)
    rng = np.random.default_rng(5)
    d = 8
    net = net_model.ResidualLabelNet(d, 16, 2, rng)
    X = model.random_signs((32, d), rng)
    # end to end: one step of the manual update equals one autograd SGD step
    params = [t.clone().requires_grad_() for t in (*net.V, *net.b, *net.U)]
    V, b, U = params[:2], params[2:4], params[4:]
    Hs = net.stream(X)
    for k in range(2):
        out = Hs.clone()
        out[:, d:] = out[:, d:] + torch.relu(Hs @ V[k].T + b[k]) @ U[k].T
        Hs = out
    y = torch.from_numpy(np.prod(X, axis=1).astype(np.float64))
    loss = 0.5 * ((Hs[:, -1] - y) ** 2).mean()
    grads = torch.autograd.grad(loss, params)
    expected = [(p - 0.1 * g).detach().numpy() for p, g in zip(params, grads, strict=True)]
    net_model.train_end_to_end(net, 1, 0.1, 32, _Fixed(X))
    for got, exp in zip(net.state(), expected, strict=True):
        assert got.dtype == np.float64
        assert_allclose(got, exp, rtol=1e-12, atol=1e-14)


def test_layerwise_gradient_matches_autograd():
    import torch

    setup(0, torch=True)
    rng = np.random.default_rng(6)
    d = 8
    net = net_model.ResidualLabelNet(d, 16, 1, rng)
    X = model.random_signs((32, d), rng)
    V, b, U = (t.clone().requires_grad_() for t in (net.V[0], net.b[0], net.U[0]))
    out = net.stream(X)[:, d:] + torch.relu(net.stream(X) @ V.T + b) @ U.T
    Y = torch.from_numpy(model.all_labels(X).astype(np.float64))
    loss = 0.5 * ((out - Y) ** 2).sum(1).mean()
    gV, gb, gU = torch.autograd.grad(loss, (V, b, U))
    net_model.train_layerwise(net, 1, 0.1, 32, _Fixed(X))
    assert_allclose(net.V[0].numpy(), (V - 0.1 * gV).detach().numpy(), rtol=1e-12, atol=1e-14)
    assert_allclose(net.b[0].numpy(), (b - 0.1 * gb).detach().numpy(), rtol=1e-12, atol=1e-14)
    assert_allclose(net.U[0].numpy(), (U - 0.1 * gU).detach().numpy(), rtol=1e-12, atol=1e-14)


def test_torch_runs_are_deterministic():
    import torch

    setup(0, torch=True)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.get_num_threads() == 1
    states = []
    for _ in range(2):
        rng = np.random.default_rng(11)
        net = net_model.ResidualLabelNet(8, 16, 2, rng)
        net_model.train_layerwise(net, 20, 0.05, 16, rng)
        states.append(net.state())
    for a, b in zip(*states, strict=True):
        assert_array_equal(a, b)


def test_initial_weights_come_from_numpy():
    """The weights are numpy draws (the same on every machine), not torch's vectorised sampler."""
    rng = np.random.default_rng(12)
    net = net_model.ResidualLabelNet(8, 4, 1, rng)
    ref = np.random.default_rng(12)
    assert_array_equal(net.V[0].numpy(), ref.standard_normal((4, 15)) / np.sqrt(15))
    assert_array_equal(net.U[0].numpy(), ref.standard_normal((7, 4)) / np.sqrt(4))


def test_hidden_leaves():
    rng = np.random.default_rng(2)
    lv = net_model.hidden_leaves(8, 16, rng)
    assert lv.shape == (8,) and np.unique(lv).size == 8 and lv.max() < 16
    with pytest.raises(ValueError, match="n_in"):
        net_model.hidden_leaves(8, 4, rng)
    net = net_model.ResidualLabelNet(8, 8, 1, rng, n_in=16)
    with pytest.raises(ValueError, match="leaves"):
        net_model.top_accuracy(net, model.random_signs((4, 16), rng), leaves=np.zeros(8, dtype=int))


def test_net_validation():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="power of 2"):
        net_model.ResidualLabelNet(12, 8, 1, rng)
    net = net_model.ResidualLabelNet(8, 8, 1, rng)
    with pytest.raises(ValueError, match="columns"):
        net.stream(np.ones((2, 4)))
    with pytest.raises(ValueError, match="lr"):
        net_model.train_layerwise(net, 5, -0.1, 4, rng)
    assert claims.chance_band(8192) == pytest.approx(3.2905 * np.sqrt(0.25 / 8192), rel=1e-4)


# ------------------------------------------------------------------ mutation tests, one per claim


def test_c1_mutation_sgd_law():
    cells = model_sgd.law_experiment(DEF["m_law"], DEF["R_law"], rng_for(DEF["seed"], "C1")).cells
    assert claims.claim_sgd_law("C1", cells).passed
    gd = variant(theory, sgd_contraction=theory.wrong_gd_law)  # no gradient noise
    assert not claims.claim_sgd_law("C1", cells, theory=gd).passed
    b1 = variant(theory, sgd_contraction=theory.wrong_batch_one_law)  # the 1/B forgotten
    assert not claims.claim_sgd_law("C1", cells, theory=b1).passed


@pytest.fixture(scope="module")
def rate():
    return model_sgd.rate_study(DEF["m_list"], DEF["eps_rate"], DEF["R_rate"], DEF["seed"])


def test_c2_mutation_rate(rate):
    assert claims.claim_rate("C2", rate, DEF["m_list"], DEF["eps_rate"]).passed
    for wrong in (theory.wrong_rate_slope_quadratic, theory.wrong_rate_slope_sqrt):
        bad = variant(theory, rate_slope=wrong)
        assert not claims.claim_rate("C2", rate, DEF["m_list"], DEF["eps_rate"], theory=bad).passed


def test_c2b_mutation_crossing_times(rate):
    m_list, eps = DEF["m_list"], DEF["eps_rate"]
    c = claims.claim_crossing_times("C2b", rate, m_list, eps)
    assert c.passed and c.details["z"].shape == (len(m_list),)
    # wrong theory: the continuous-time count p log(1/eps), the same slope as the truth
    bad = variant(theory, crossing_times=theory.wrong_crossing_times_continuous)
    assert not claims.claim_crossing_times("C2b", rate, m_list, eps, theory=bad).passed
    # a law off by a constant factor keeps C2's slope, and C2b still catches it
    scaled = variant(theory, crossing_times=lambda ms, e: 1.05 * theory.crossing_times(ms, e))
    assert claims.claim_rate("C2", rate, m_list, eps, theory=scaled).passed
    assert not claims.claim_crossing_times("C2b", rate, m_list, eps, theory=scaled).passed
    # a prediction of the wrong length fails, it does not raise
    short = variant(theory, crossing_times=lambda ms, e: theory.crossing_times(ms[:-1], e))
    assert not claims.claim_crossing_times("C2b", rate, m_list, eps, theory=short).passed


@pytest.mark.parametrize("factor", [0.1, 0.5, 2.0, 10.0])
def test_c2_a_wrong_law_fails_the_claims_not_the_run(factor):
    # the measurement reads no law, so a law that predicts far too few (or many) steps cannot shorten the
    # simulation: the run completes and the claims fail
    m_list, eps = [3, 5, 8], 0.05
    study = model_sgd.rate_study(m_list, eps, 200, 1, n_boot=200)
    bad = variant(theory, crossing_times=lambda ms, e: factor * theory.crossing_times(ms, e),
                  steps_to_mse=lambda *a, **k: max(1, int(factor * theory.steps_to_mse(*a, **k))))
    assert claims.claim_crossing_times("C2b", study, m_list, eps).passed
    assert not claims.claim_crossing_times("C2b", study, m_list, eps, theory=bad).passed
    steep = variant(theory, rate_slope=lambda ms, e: factor * theory.rate_slope(ms, e))
    assert not claims.claim_rate("C2", study, m_list, eps, theory=steep).passed


def test_rate_study_bootstrap_se_of_each_time(rate):
    assert rate.T_boot.shape == (1000, len(DEF["m_list"]))
    assert_allclose(rate.log_T_se, np.log(rate.T_boot).std(axis=0, ddof=1))
    assert np.all(rate.log_T_se > 0)


@pytest.fixture(scope="module")
def budget_runs():
    return model_sgd.budget_study(DEF["d_exact"], DEF["delta"], DEF["R_rate"], DEF["seed"])


def test_budget_study_measures_every_block(budget_runs):
    d = DEF["d_exact"]
    assert budget_runs.p.tolist() == [float(p) for _, p, _ in model.stack_shapes(model.tree_depth(d))]
    assert np.all(budget_runs.horizons > budget_runs.T_hat)


def test_budget_distance_is_zero_inside_the_ceiling_interval():
    study = SimpleNamespace(T_hat=np.array([19.5, 60.0, 7.0]), log_T_se=np.array([0.01, 0.01, 0.1]))
    assert_allclose(claims.budget_distance(study, [20, 60, 8]), [0.0, 0.0, 0.0])
    assert_allclose(claims.budget_distance(study, [19, 61, 6]), [np.log(19.5 / 19) / 0.01, np.log(60 / 60) / 0.01,
                                                                 np.log(7 / 6) / 0.1])
    assert np.all(np.isinf(claims.budget_distance(study, [20, 60])))


def test_c3d_mutation_budget(budget_runs):
    d, delta = DEF["d_exact"], DEF["delta"]
    c = claims.claim_budget("C3d", budget_runs, d, delta)
    assert c.passed and c.predicted == pytest.approx(claims.z_critical(1e-3 / model.tree_depth(d)))
    # wrong theory: the budget counted with p - 1 features (the constant monomial forgotten)
    bad = variant(theory, stack_steps=theory.wrong_stack_steps_no_constant)
    assert not claims.claim_budget("C3d", budget_runs, d, delta, theory=bad).passed
    # a budget a fifth too long, and one block too few, fail (the latter without raising)
    longer = variant(theory, stack_steps=lambda dd, de: [int(1.2 * t) for t in theory.stack_steps(dd, de)])
    assert not claims.claim_budget("C3d", budget_runs, d, delta, theory=longer).passed
    fewer = variant(theory, stack_steps=lambda dd, de: theory.stack_steps(dd, de)[:-1])
    assert not claims.claim_budget("C3d", budget_runs, d, delta, theory=fewer).passed


@pytest.mark.parametrize("d", [4, 8, 16])
def test_steps_to_mse_first_estimate_is_exact_except_at_powers_of_rho(d):
    """On the chapter's inputs (B = 1, eta = 1/p, e0 = 1, eps = delta/(d-1)) the first estimate
    ceil(log(1/eps)/log(1/rho)) is the smallest t with rho^t <= eps on a grid of delta; where eps is a power
    rho^k it can be off, and the repair loops return the smallest t (mutation.toml rests on both)."""
    repaired = 0
    for _, p, _ in model.stack_shapes(model.tree_depth(d)):
        rho = theory.sgd_contraction(1.0 / p, 1, p)
        for k in range(2, 3000):
            eps = rho**k
            if not 1e-3 / (d - 1) <= eps <= 0.5 / (d - 1):
                continue
            T = theory.steps_to_mse(eps, 1.0 / p, 1, p)
            assert rho**T <= eps < rho ** (T - 1)
            repaired += T != int(np.ceil(np.log(1.0 / eps) / np.log(1.0 / rho)))
    assert repaired > 0  # the loops are not dead code
    for delta in np.geomspace(1e-3, 0.5, 2001):
        eps = float(delta) / (d - 1)
        for _, p, _ in model.stack_shapes(model.tree_depth(d)):
            rho = theory.sgd_contraction(1.0 / p, 1, p)
            first = int(np.ceil(np.log(1.0 / eps) / np.log(1.0 / rho)))
            assert first == theory.steps_to_mse(eps, 1.0 / p, 1, p)
            assert rho**first <= eps < rho ** (first - 1)


@pytest.fixture(scope="module")
def separation():
    return model.separation_experiment(DEF["d_exact"], DEF["delta"], rng_for(DEF["seed"], "C3"))


def test_c3a_mutation_orthogonality(separation):
    d = DEF["d_exact"]
    assert claims.claim_orthogonality("C3a", separation.max_corr_top, d).passed
    # wrong theory: the top label has a degree-2 part, as a level-1 label does
    bad = variant(theory, top_feature_correlation=theory.wrong_top_correlation_degree2)
    assert not claims.claim_orthogonality("C3a", separation.max_corr_top, d, theory=bad).passed
    # and a wrong label in the measurement (a level-1 label in the top's place) is caught too
    assert not claims.claim_orthogonality("C3a", model.max_top_correlation(d, level=1), d).passed


@pytest.fixture(scope="module")
def no_hint(separation):
    d = DEF["d_exact"]
    cps = model.no_hint_checkpoints(sum(separation.steps))
    return model.no_hint_study(d, cps, DEF["R_rate"], rng_for(DEF["seed"], "C3b"))


def test_c3b_mutation_no_hint_law(no_hint):
    assert claims.claim_no_hint_law("C3b", no_hint).passed
    # wrong theories: the block learns the top label at the Thm A rate; the noise grows without bound
    for wrong in (theory.wrong_no_hint_mse_learned, theory.wrong_no_hint_mse_linear):
        bad = variant(theory, no_hint_mse=wrong)
        assert not claims.claim_no_hint_law("C3b", no_hint, theory=bad).passed


def test_no_hint_study_is_the_exact_mse_of_looped_runs():
    # batched runs == the single-run learner on the same stream; 1 + ||w||^2 == the enumerated MSE
    d, cps = 4, (1, 3, 7)
    study = model.no_hint_study(d, cps, 3, np.random.default_rng(5))
    rng = np.random.default_rng(5)
    p = model.n_quad_features(d)
    W = np.zeros((3, p))
    for t in range(1, 8):
        X = model.random_signs((3, d), rng)
        for r in range(3):
            phi = model.quad_features(X[r : r + 1])[0]
            W[r] -= (1.0 / p) * (phi @ W[r] - np.prod(X[r])) * phi
        if t in cps:
            exact = [model.exact_no_hint_mse(W[r], d) for r in range(3)]
            np.testing.assert_allclose(study.mse[:, cps.index(t)], exact, rtol=0, atol=1e-12)


def test_c3b_at_the_first_step_has_no_spread():
    # at t = 1 every run has ||w_1||^2 = 1/p exactly: the SE is 0 and the claim holds up to rounding
    study = model.no_hint_study(4, (1, 7, 28), 400, np.random.default_rng(7))
    assert study.se[0] < 1e-12
    c = claims.claim_no_hint_law("C3b", study)
    assert c.passed and c.details["z"][0] == 0.0
    off = variant(theory, no_hint_mse=lambda d, t: theory.no_hint_mse(d, t) + (1e-6 if t == 1 else 0.0))
    assert not claims.claim_no_hint_law("C3b", study, theory=off).passed


def test_no_hint_law_recursion_and_checkpoints():
    d, p = 8, model.n_quad_features(8)
    # E||w_{t+1}||^2 = (1 - 1/p) E||w_t||^2 + 1/p, so E MSE_{t+1} - 1 = (1 - 1/p)(E MSE_t - 1) + 1/p
    for t in range(5):
        lhs = theory.no_hint_mse(d, t + 1) - 1
        np.testing.assert_allclose(lhs, (1 - 1 / p) * (theory.no_hint_mse(d, t) - 1) + 1 / p, rtol=1e-14)
    assert theory.no_hint_mse(d, 0) == 1.0
    assert model.no_hint_checkpoints(1068) == (16, 66, 267, 1068)
    assert model.no_hint_checkpoints(3) == (1, 3)
    with pytest.raises(ValueError):
        model.no_hint_study(d, (3, 2), 2, np.random.default_rng(0))


@pytest.fixture(scope="module")
def small_net():
    """At a reduced budget (width 96, 1500 steps per block, 4096 test points) to keep the test file fast; the
    notebook runs the same function at its defaults."""
    setup(0, torch=True)
    return net_model.net_experiment(16, 96, 3, 1500, 128, 0.05, 4096, rng_for(0, "C4"))


def test_c4a_mutation_layerwise(small_net):
    assert claims.claim_hinted_accuracy("C4a", small_net.hinted_top).passed
    # wrong theory "deep hierarchies are not learnable layerwise": chance accuracy
    bad = variant(theory, layerwise_top_accuracy=theory.wrong_layerwise_chance)
    assert not claims.claim_hinted_accuracy("C4a", small_net.hinted_top, theory=bad).passed
    # the rule is the threshold of the seed study: acc >= ACC_THRESHOLD
    assert claims.claim_hinted_accuracy("C4a", claims.ACC_THRESHOLD + 1e-9).passed
    assert not claims.claim_hinted_accuracy("C4a", claims.ACC_THRESHOLD - 1e-9).passed


def test_c4b_mutation_baseline(small_net):
    assert claims.claim_chance("C4b", small_net.baseline_top, small_net.n_test).passed
    # wrong theory "end to end discovers the hierarchy": the baseline learns the top label
    bad = variant(theory, baseline_top_accuracy=theory.wrong_baseline_discovers_hierarchy)
    assert not claims.claim_chance("C4b", small_net.baseline_top, small_net.n_test, theory=bad).passed
    # the layerwise net is far from chance
    assert not claims.claim_chance("C4b", small_net.hinted_top, small_net.n_test).passed


# ------------------------------------------------------------------ Theorem D and the random-feature blocks


def test_chain_and_tree_labels():
    X = model.enumerate_cube(6)
    leaves = np.array([4, 1, 5, 0])
    chain = model_deep.chain_labels(X, leaves)
    assert chain.shape == (64, 3)
    assert_array_equal(chain[:, 0], X[:, 4] * X[:, 1])
    assert_array_equal(chain[:, 2], X[:, 4] * X[:, 1] * X[:, 5] * X[:, 0])
    tree = model_deep.tree_labels(X, leaves)
    assert_array_equal(tree[:, 0], X[:, 4] * X[:, 1])
    assert_array_equal(tree[:, 1], X[:, 5] * X[:, 0])
    assert_array_equal(tree[:, 2], chain[:, 2])  # the same top label
    assert_array_equal(model_deep.dead_zone(np.array([0.49, -0.49, 0.5, -0.7, 1e-13])), [0, 0, 1, -1, 0])


def test_population_least_squares_is_the_projection():
    X = model.enumerate_cube(5).astype(float)
    H = np.concatenate([X, np.zeros((32, 2)), X[:, :1] * X[:, 1:2]], axis=1)  # zero and duplicate columns
    Phi = model_deep.stream_features(H)
    Y = np.stack([X[:, 0] * X[:, 1] * X[:, 2], X[:, 0] * X[:, 1] * X[:, 2] * X[:, 3]], axis=1)
    fit = model_deep.population_least_squares(Phi, Y)
    assert_allclose(fit[:, 0], Y[:, 0], atol=1e-10)  # x0 x1 x2 = (x0 x1 slot) * x2: in the span
    assert_allclose(fit[:, 1], 0.0, atol=1e-10)  # degree 4 with one degree-2 slot: orthogonal to the span


@pytest.mark.parametrize("d,n_in", [(4, 4), (4, 8), (8, 8), (8, 10)])
def test_closure_theorem_on_the_cube(d, n_in):
    study = model_deep.depth_experiment(d, n_in, np.random.default_rng(d + n_in))
    assert study.chain.right.shape == (d, d - 1)
    for k in range(1, d + 1):
        assert study.chain.n_right[k - 1] == theory.chain_labels_known(d, k) == min(k, d - 1)
        assert study.tree.n_right[k - 1] == theory.tree_labels_known(d, k)
    assert np.all(study.chain.right | study.chain.zero) and np.all(study.tree.right | study.tree.zero)


def test_closure_theory_values():
    assert [theory.chain_labels_known(8, k) for k in range(9)] == [0, 1, 2, 3, 4, 5, 6, 7, 7]
    assert [theory.tree_labels_known(8, k) for k in range(5)] == [0, 4, 6, 7, 7]
    assert [theory.wrong_chain_labels_doubling(8, k) for k in range(5)] == [0, 1, 3, 7, 7]
    assert theory.wrong_tree_one_label_per_block(8, 2) == 2
    with pytest.raises(ValueError):
        theory.tree_labels_known(6, 1)
    with pytest.raises(ValueError):
        model_deep.depth_experiment(8, 6, np.random.default_rng(0))
    with pytest.raises(ValueError):
        model_deep.closure_run(model.enumerate_cube(3), np.ones((4, 1)), 1)


@pytest.fixture(scope="module")
def deep():
    return model_deep.depth_experiment(DEF["d_deep"], DEF["n_deep"], rng_for(DEF["seed"], "C5"))


def test_c5a_mutation_chain(deep):
    d = DEF["d_deep"]
    assert claims.claim_chain_depth("C5a", deep.chain, d).passed
    bad = variant(theory, chain_labels_known=theory.wrong_chain_labels_doubling)
    assert not claims.claim_chain_depth("C5a", deep.chain, d, theory=bad).passed
    # a law that does not saturate at the d - 1 labels (checked at block d) fails too
    unsaturated = variant(theory, chain_labels_known=lambda dd, k: k)
    assert not claims.claim_chain_depth("C5a", deep.chain, d, theory=unsaturated).passed
    # the tree's run is not the chain's
    assert not claims.claim_chain_depth("C5a", deep.tree, d).passed


def test_c5b_mutation_tree(deep):
    d = DEF["d_deep"]
    assert claims.claim_tree_depth("C5b", deep.tree, d).passed
    bad = variant(theory, tree_labels_known=theory.wrong_tree_one_label_per_block)
    assert not claims.claim_tree_depth("C5b", deep.tree, d, theory=bad).passed
    assert not claims.claim_tree_depth("C5b", deep.chain, d).passed


def test_ridge_readout_and_rf_stack():
    rng = np.random.default_rng(0)
    Psi = rng.standard_normal((50, 4))
    U = model_deep.ridge_readout(Psi, Psi @ np.ones((4, 1)), 1e-12)
    assert_allclose(U, np.ones((4, 1)), atol=1e-6)
    net = model_deep.RandomFeatureStack(3, 2, 5, 2, np.random.default_rng(1))
    net2 = model_deep.RandomFeatureStack(3, 2, 5, 2, np.random.default_rng(1))
    assert all(np.array_equal(a, b) for a, b in zip(net.V + net.b, net2.V + net2.b, strict=True))
    assert net.slots(model.enumerate_cube(3), 0).shape == (8, 2)


@pytest.fixture(scope="module")
def rf():
    """A smaller instance than the notebook's (d = 4 leaves of 8 inputs) to keep the test file fast."""
    return model_deep.rf_experiment(4, 8, 1024, 8192, model_deep.RF_RIDGE, 4096, rng_for(0, "C6"))


def test_c6_mutation_random_features(rf):
    assert rf.level_acc.shape == (2, 2)
    assert claims.claim_rf_accuracy("C6", rf.top_acc).passed
    bad = variant(theory, layerwise_top_accuracy=theory.wrong_layerwise_chance)
    assert not claims.claim_rf_accuracy("C6", rf.top_acc, theory=bad).passed
    assert claims.claim_rf_accuracy("C6", claims.RF_THRESHOLD + 1e-9).passed
    assert not claims.claim_rf_accuracy("C6", claims.RF_THRESHOLD - 1e-9).passed


# ------------------------------------------------------------------ whole-stream blocks through Walsh characters


def test_chain_and_tree_masks_match_the_labels():
    X = model.enumerate_cube(6)
    leaves = np.array([4, 1, 5, 0])

    def chi(mask):
        return np.prod(np.where((mask >> np.arange(6)) & 1, X, 1), axis=1)

    for masks, labels in ((model_walsh.chain_masks(leaves), model_deep.chain_labels(X, leaves)),
                          (model_walsh.tree_masks(leaves), model_deep.tree_labels(X, leaves))):
        assert len(masks) == 3
        for j, m in enumerate(masks):
            assert_array_equal(chi(m), labels[:, j])
    with pytest.raises(ValueError):
        model_walsh.chain_masks([3])
    with pytest.raises(ValueError):
        model_walsh.tree_masks([0, 1, 2])


def test_stream_monomials_order_and_zeros():
    mons = model_walsh.stream_monomials([(0b01, 1), (0b11, -1), None])
    assert mons == [(0, 1), (0b01, 1), (0b11, -1), None, (0b10, -1), None, None]
    X = model.enumerate_cube(2).astype(float)
    H = np.stack([X[:, 0], -X[:, 0] * X[:, 1], np.zeros(4)], axis=1)
    Phi = model_deep.stream_features(H)
    for col, e in zip(Phi.T, mons, strict=True):
        expect = 0.0 if e is None else e[1] * np.prod(np.where((e[0] >> np.arange(2)) & 1, X, 1.0), axis=1)
        assert_array_equal(col, expect)


def test_round_expansion_decides_or_refuses():
    chars = np.array([1, 2, 3])
    assert model_walsh.round_expansion(chars, np.array([1.0, 1e-12, -1e-12])) == (1, 1)
    assert model_walsh.round_expansion(chars, np.array([0.0, -0.9, 0.1])) == (2, -1)
    assert model_walsh.round_expansion(chars, np.array([1e-13, 0.2, 0.2])) is None
    assert model_walsh.round_expansion(chars[:0], np.array([])) is None
    with pytest.raises(ValueError):
        model_walsh.round_expansion(chars, np.array([0.6, 0.3, 0.0]))


def test_symbolic_block_collisions_and_singular_gram():
    # stream (x0, x1, x2, s = x0 x1): x0 s collides with x1, x1 s with x0, s with x0 x1; x2 s is chi_{012}
    blk = model_walsh.symbolic_block([(1, 1), (2, 1), (4, 1), (3, 1)], [7, 15, 3, 2])
    assert blk.slots == [(7, 1), None, (3, 1), (2, 1)]
    assert blk.p == 1 + 4 + 6 and blk.q == blk.p - 3  # three collisions: the Gram matrix has rank p - 3
    assert blk.rank == blk.q  # its numerical rank is the number of distinct characters
    assert blk.offset < 1e-12
    # a negated slot: the fit of x0 x1 from -x0 x1 in the stream is still +x0 x1
    assert model_walsh.symbolic_block([(1, 1), (2, 1), (3, -1)], [3]).slots == [(3, 1)]


@pytest.mark.parametrize("d,n_in,seed", [(4, 8, 0), (8, 12, 0), (8, 10, 3)])
def test_symbolic_stack_equals_the_enumerated_stack(d, n_in, seed):
    enum = model_deep.depth_experiment(d, n_in, rng_for(seed, "C5"))
    sym = model_walsh.symbolic_depth_experiment(d, n_in, rng_for(seed, "C5"))
    assert_array_equal(sym.leaves, enum.leaves)
    for a, b in ((sym.chain, enum.chain), (sym.tree, enum.tree)):
        assert_array_equal(a.right, b.right)
        assert_array_equal(a.zero, b.zero)


def test_symbolic_run_input_checks():
    with pytest.raises(ValueError):
        model_walsh.symbolic_closure_run(4, [0], 1)
    with pytest.raises(ValueError):
        model_walsh.symbolic_closure_run(4, [1 << 4], 1)
    with pytest.raises(ValueError):
        model_walsh.symbolic_depth_experiment(6, 16, np.random.default_rng(0))


@pytest.fixture(scope="module")
def sym():
    return model_walsh.symbolic_depth_experiment(DEF["d_sym"], DEF["n_sym"], rng_for(DEF["seed"], "C5c"))


def test_c5c_mutation_chain_depth_15(sym):
    d = DEF["d_sym"]
    assert d == 16 and DEF["n_sym"] == 32
    assert_array_equal(sym.chain.n_right, np.minimum(np.arange(1, d + 1), d - 1))
    assert sym.chain.offset < 1e-10
    assert claims.claim_chain_depth("C5c", sym.chain, d).passed
    bad = variant(theory, chain_labels_known=theory.wrong_chain_labels_doubling)
    assert not claims.claim_chain_depth("C5c", sym.chain, d, theory=bad).passed


def test_c5d_mutation_tree_depth_4(sym):
    d = DEF["d_sym"]
    assert_array_equal(sym.tree.n_right[:5], [8, 12, 14, 15, 15])
    assert claims.claim_tree_depth("C5d", sym.tree, d).passed
    bad = variant(theory, tree_labels_known=theory.wrong_tree_one_label_per_block)
    assert not claims.claim_tree_depth("C5d", sym.tree, d, theory=bad).passed


# ------------------------------------------------------------------ SGD with colliding features (C7)


def test_chain_block_characters_are_the_model_features():
    leaves = np.array([2, 0, 3, 1])
    X = model.enumerate_cube(5)
    masks, target = theory.chain_block_characters(leaves, 5, 2)
    Phi, y = model_walsh.chain_block_features(X, leaves, 2)
    chi = [np.prod(np.where((int(m) >> np.arange(5)) & 1, X, 1), axis=1) for m in masks]
    assert_array_equal(np.stack(chi, axis=1), Phi)
    assert_array_equal(np.prod(np.where((target >> np.arange(5)) & 1, X, 1), axis=1), y)
    assert target == 0b1101


def test_collision_law_reduces_to_theorem_a_without_collisions():
    # the quadratic monomials of 3 inputs: 7 distinct characters, target one of them -> rho^t
    ent = [1, 2, 4]
    masks = [0, *ent, 3, 5, 6]
    ts = [0, 1, 5, 20]
    for eta in (1 / 7, 0.05, 0.2):
        assert_allclose(theory.collision_sgd_mse(masks, 5, eta, ts),
                        [theory.sgd_contraction(eta, 1, 7) ** t for t in ts], rtol=1e-12)
        assert_allclose(theory.wrong_collision_sgd_mse_orthonormal(masks, 5, eta, ts),
                        [theory.sgd_contraction(eta, 1, 7) ** t for t in ts], rtol=1e-12)


def test_collision_law_against_exact_enumeration_of_small_sgd():
    # two steps of SGD on features (x0, x0, x1) with target x0 x1: the law against all 4^2 input sequences
    masks, T, eta = [1, 1, 2], 3, 0.3
    X = model.enumerate_cube(2).astype(float)
    Phi = np.stack([X[:, 0], X[:, 0], X[:, 1]], axis=1)
    y = X[:, 0] * X[:, 1]
    errs = {0: [], 1: [], 2: []}
    for seq in itertools.product(range(4), repeat=2):
        w = np.zeros(3)
        for t in range(3):
            errs[t].append(np.mean((Phi @ w - y) ** 2))
            if t < 2:
                i = seq[t]
                w = w - eta * Phi[i] * (Phi[i] @ w - y[i])
    exact = [np.mean(errs[t]) for t in range(3)]
    assert_allclose(theory.collision_sgd_mse(masks, T, eta, [0, 1, 2]), exact, rtol=1e-12)
    # a target in the span: the mean error still follows the law (exact sequences, 3 steps)
    masks2, T2 = [1, 1, 2, 3], 3
    Phi2 = np.concatenate([Phi, y[:, None]], axis=1)
    tot = []
    for seq in itertools.product(range(4), repeat=3):
        w = np.zeros(4)
        for i in seq:
            w = w - eta * Phi2[i] * (Phi2[i] @ w - y[i])
        tot.append(np.mean((Phi2 @ w - y) ** 2))
    assert_allclose(theory.collision_sgd_mse(masks2, T2, eta, [3]), [np.mean(tot)], rtol=1e-12)
    with pytest.raises(ValueError):
        theory.collision_sgd_mse(masks, T, 0.0, [1])
    with pytest.raises(ValueError):
        theory.chain_block_characters([0, 1, 2], 3, 3)


def test_collision_study_is_reproducible_and_exact():
    a = model_walsh.collision_sgd_study(4, 8, 50, np.random.default_rng(5))
    b = model_walsh.collision_sgd_study(4, 8, 50, np.random.default_rng(5))
    assert_array_equal(a.mean, b.mean)
    assert a.level == 2 and a.p == 1 + 9 + 36 and a.eta == 1 / a.p
    assert a.checkpoints == model_walsh.collision_checkpoints(a.p) == (23, 46, 92, 184)
    assert a.mean[0] < 1.0 and np.all(np.diff(a.mean) < 0) and np.all(a.se > 0)
    with pytest.raises(ValueError):
        model_walsh.collision_sgd_study(4, 16, 50, np.random.default_rng(0))


@pytest.fixture(scope="module")
def collide():
    return model_walsh.collision_sgd_study(DEF["d_deep"], DEF["n_deep"], DEF["R_coll"], rng_for(DEF["seed"], "C7"))


def test_c7_mutation_collision_law(collide):
    assert claims.claim_collision_law("C7", collide).passed
    bad = variant(theory, collision_sgd_mse=theory.wrong_collision_sgd_mse_orthonormal)
    wrong = claims.claim_collision_law("C7", collide, theory=bad)
    assert not wrong.passed and wrong.measured > 10
    wick = variant(theory, collision_sgd_mse=theory.wrong_collision_sgd_mse_wick)
    wrong = claims.claim_collision_law("C7, Wick", collide, theory=wick)
    assert not wrong.passed and wrong.measured > 4  # Gaussian fourth moments: about 5 SE off at the defaults
    short = variant(theory, collision_sgd_mse=lambda A, T, eta, ts: np.ones(2))
    assert not claims.claim_collision_law("C7", collide, theory=short).passed  # fails, does not crash
    nan = variant(theory, collision_sgd_mse=lambda A, T, eta, ts: np.full(4, np.nan))
    assert not claims.claim_collision_law("C7", collide, theory=nan).passed


def test_sample_skewness_and_rank_of_the_symbolic_stack():
    from scipy.stats import skew
    x = np.random.default_rng(0).exponential(size=(500, 3)) ** np.array([1.0, 2.0, 0.5])
    assert_allclose(model_walsh.sample_skewness(x), skew(x, axis=0), rtol=1e-12)
    assert_array_equal(model_walsh.sample_skewness(np.ones((5, 2))), [0.0, 0.0])
    run = model_walsh.symbolic_closure_run(6, [3, 7, 15], 3)
    assert run.rank_last == run.q_last < run.p_last


def test_skew_corrected_z():
    z = np.linspace(-60.0, 60.0, 2001)
    assert_array_equal(claims.skew_corrected_z(z, 0.0, 400), z)
    for g in (1.3, -1.3, 5.0):
        zc = claims.skew_corrected_z(z, g, 400)
        assert np.all(np.diff(zc) >= 0)  # increasing: a large error is never folded back
        johnson = z + g * (1 + 2 * z**2) / (6 * np.sqrt(400))
        small = np.abs(z) <= 4
        assert np.max(np.abs(zc - johnson)[small]) <= (g / 60) ** 2 * 64 / 3 + 1e-12  # the cubic term only
    assert claims.skew_corrected_z(np.array([np.inf, -np.inf, np.nan]), 1.3, 400).tolist() == [np.inf] * 3


def test_wick_law_differs_from_the_characters_law():
    ent = [1, 2, 4]
    masks = [0, *ent, 3, 5, 6]
    ts = [0, 1, 5, 20]
    law = theory.collision_sgd_mse(masks, 5, 1 / 7, ts)
    wick = theory.wrong_collision_sgd_mse_wick(masks, 5, 1 / 7, ts)
    assert wick[0] == law[0] == 1.0 and np.all(np.abs(wick[1:] - law[1:]) > 1e-3)
    # one step from w = 0 on features (x0, x1), target x0: Wick's E[phi phi^T y^2] = G + 2 g g^T
    assert_allclose(theory.wrong_collision_sgd_mse_wick([1, 2], 1, 0.5, [1]), [1 - 2 * 0.5 + 0.25 * (2 + 2)])
