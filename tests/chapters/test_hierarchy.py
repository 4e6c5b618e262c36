"""Tests of theorylib.hierarchy (chapter 'hierarchical-labels-layerwise-sgd')."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from theorylib import hierarchy as H
from theorylib.chapters.hierarchical_labels_layerwise_sgd import CHAPTER
from theorylib.core import rng_for, setup

DEF = CHAPTER.defaults()


# ------------------------------------------------------------------ cube, tree, features


def test_enumerate_cube_is_the_whole_cube():
    X = H.enumerate_cube(5)
    assert X.shape == (32, 5)
    assert set(np.unique(X)) == {-1, 1}
    assert len({tuple(r) for r in X}) == 32


@pytest.mark.parametrize("d", [0, 21, 2.0, True])
def test_enumerate_cube_rejects_bad_d(d):
    with pytest.raises(ValueError, match="enumerate the cube"):
        H.enumerate_cube(d)


def test_parity_tree_levels():
    X = H.enumerate_cube(8)
    levels = H.parity_tree_labels(X, r=3)
    assert [lv.shape[1] for lv in levels] == [8, 4, 2, 1]
    for lv in levels:
        assert set(np.unique(lv)) <= {-1, 1}
    assert_array_equal(levels[-1][:, 0], np.prod(X, axis=1))
    assert_array_equal(levels[2][:, 1], np.prod(X[:, 4:8], axis=1))
    assert_array_equal(H.label_levels(8), [1, 1, 1, 1, 2, 2, 3])
    assert H.all_labels(X).shape == (256, 7)


@pytest.mark.parametrize("d", [3, 6, 12])
def test_parity_tree_rejects_non_power_of_two(d):
    with pytest.raises(ValueError, match="power of 2"):
        H.parity_tree_labels(np.ones((4, d)))


def test_parity_tree_rejects_bad_input():
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        H.parity_tree_labels(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="does not match"):
        H.parity_tree_labels(np.ones((3, 4)), r=3)
    with pytest.raises(ValueError, match="depth r"):
        H.stack_shapes(0)


def test_quad_features_order_and_pair_index():
    rng = np.random.default_rng(0)
    Z = H.random_signs((20, 6), rng)
    Phi = H.quad_features(Z)
    assert Phi.shape == (20, H.n_quad_features(6)) == (20, 22)
    assert_array_equal(Phi[:, 0], 1)
    assert_array_equal(Phi[:, 1:7], Z)
    for a, b in itertools.combinations(range(6), 2):
        assert_array_equal(Phi[:, H.pair_index(6, a, b)], Z[:, a] * Z[:, b])
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        H.quad_features(np.array([[1.0, 0.5]]))
    with pytest.raises(ValueError, match="2-D"):
        H.quad_features(np.ones(3))


@pytest.mark.parametrize("m", [2, 3, 6])
def test_features_orthonormal_on_cube(m):
    Phi = H.quad_features(H.enumerate_cube(m))
    p = H.n_quad_features(m)
    assert_allclose(Phi.T @ Phi / 2**m, np.eye(p), atol=1e-12)
    assert_allclose(np.sum(Phi**2, axis=1), p)


def test_labels_of_one_level_are_iid_uniform():
    # level-1 labels of d = 8 inputs: their quadratic features are orthonormal (the Lemma)
    X = H.enumerate_cube(8)
    Z = H.parity_tree_labels(X)[1]
    Phi = H.quad_features(Z)
    assert_allclose(Phi.T @ Phi / len(X), np.eye(Phi.shape[1]), atol=1e-12)


# ------------------------------------------------------------------ Theorem A


@pytest.mark.parametrize("m,B,eta", [(3, 1, 0.1), (3, 1, 0.3), (2, 2, 0.4), (3, 2, 0.25)])
def test_second_moment_matrix_by_enumeration(m, B, eta):
    """E[(I - eta C_hat)^2] = rho I, C_hat the mean of B independent phi phi^T, by enumerating batches."""
    Phi = H.quad_features(H.enumerate_cube(m))
    p = Phi.shape[1]
    acc = np.zeros((p, p))
    for idx in itertools.product(range(len(Phi)), repeat=B):
        C = sum(np.outer(Phi[i], Phi[i]) for i in idx) / B
        M = np.eye(p) - eta * C
        acc += M @ M
    acc /= len(Phi) ** B
    assert_allclose(acc, H.sgd_contraction(eta, B, p) * np.eye(p), atol=1e-12)


def test_contraction_formulas():
    p, B = 37, 4
    c = 1 + (p - 1) / B
    assert H.sgd_second_moment(B, p) == pytest.approx(c)
    eta_star = H.optimal_step(B, p)
    assert eta_star == pytest.approx(1 / c)
    assert H.sgd_contraction(eta_star, B, p) == pytest.approx((p - 1) / (B + p - 1))
    etas = np.linspace(0.01, 2 / c - 0.01, 200)
    assert min(H.sgd_contraction(e, B, p) for e in etas) >= H.sgd_contraction(eta_star, B, p) - 1e-15
    assert H.sgd_contraction(2 / c, B, p) == pytest.approx(1.0)


def test_steps_to_mse_monotone_and_exact():
    p = 37
    eps = np.geomspace(1e-6, 0.5, 40)
    T = [H.steps_to_mse(e, 1 / p, 1, p) for e in eps]
    assert all(a >= b for a, b in zip(T, T[1:], strict=False))
    rho = H.sgd_contraction(1 / p, 1, p)
    for e, t in zip(eps, T, strict=True):
        assert rho**t <= e < rho ** (t - 1)
    L = np.log(100)
    t = H.steps_to_mse(0.01, 1 / p, 1, p)
    assert (p - 1) * L <= t <= p * L + 1
    assert H.steps_to_mse(2.0, 0.1, 1, 5) == 0


@pytest.mark.parametrize(
    "args,msg",
    [((0.01, 0.0, 1, 5), "eta"), ((0.01, -1.0, 1, 5), "eta"), ((0.01, 0.1, 0, 5), "batch size"),
     ((0.01, 1.5, 1, 5), "unstable"), ((0.0, 0.1, 1, 5), "eps")],
)
def test_steps_to_mse_rejects(args, msg):
    with pytest.raises(ValueError, match=msg):
        H.steps_to_mse(*args)


def test_projection_runs_are_monotone():
    m = 5
    p = H.n_quad_features(m)
    runs = H.sgd_readout_runs(m, H.pair_index(m, 0, 1), 1 / p, 1, 60, 30, np.random.default_rng(1))
    assert runs.shape == (61, 30)
    assert_allclose(runs[0], 1.0)
    assert np.all(np.diff(runs, axis=0) <= 1e-12)
    with pytest.raises(ValueError, match="target_col"):
        H.sgd_readout_runs(m, p, 0.1, 1, 5, 3, np.random.default_rng(0))


def test_first_passage():
    assert_array_equal(H.first_passage(np.array([[1.0, 0.5, 0.1, 0.05]]), 0.1), [2])
    rho = H.sgd_contraction(1 / 11, 1, 11)
    curve = rho ** np.arange(80.0)
    t = H.first_passage(curve, 0.01, interpolate=True)
    assert t == pytest.approx(H.crossing_time(0.01, 1 / 11, 1, 11), rel=1e-12)
    assert H.steps_to_mse(0.01, 1 / 11, 1, 11) - 1 < t <= H.steps_to_mse(0.01, 1 / 11, 1, 11)
    with pytest.raises(ValueError, match="never falls"):
        H.first_passage(np.array([1.0, 0.5]), 0.1)


# ------------------------------------------------------------------ Theorems B and C


def test_stack_mse_is_the_exact_clean_mse_and_union_bound_holds():
    rng = np.random.default_rng(3)
    d, r = 8, 3
    Ws = H.train_hinted_stack(r, [10, 4, 2], None, 1, rng)
    X = H.enumerate_cube(d)
    levels = H.parity_tree_labels(X)
    raw = H.predict_stack(X, Ws, rounding=False)
    enum_mse = np.concatenate([np.mean((v - levels[i + 1]) ** 2, axis=0) for i, v in enumerate(raw)])
    mse = H.stack_mse(Ws)
    assert_allclose(mse, enum_mse, atol=1e-12)
    beta = H.exact_sign_errors(Ws, d)
    assert np.all(beta <= mse + 1e-12)  # Markov step
    assert H.exact_top_error(Ws, d) <= beta.sum() + 1e-12 <= mse.sum() + 2e-12


def test_union_bound_and_steps_validation():
    assert H.union_bound([0.1, 0.2]) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="non-empty"):
        H.union_bound([])
    with pytest.raises(ValueError, match="non-empty"):
        H.union_bound([-0.1])
    with pytest.raises(ValueError, match="delta"):
        H.stack_steps(3, 0.0)
    with pytest.raises(ValueError, match="frac"):
        H.under_trained_steps([5, 5], 0.0)


def test_no_signal_identities():
    d = 8
    assert H.max_top_correlation(d) == 0
    assert H.max_top_correlation(d, level=2) == 0
    assert H.max_top_correlation(d, level=1) == 2**d
    w = np.random.default_rng(0).normal(size=H.n_quad_features(d))
    assert H.exact_no_hint_mse(w, d) == pytest.approx(1 + w @ w, abs=1e-10)


# ------------------------------------------------------------------ torch network


def test_manual_gradients_match_autograd():
    import torch

    setup(0, torch=True)
    rng = np.random.default_rng(5)
    d = 8
    net = H.ResidualLabelNet(d, 16, 2, rng)
    X = H.random_signs((32, d), rng)
    # end to end: one step of the manual update equals one autograd SGD step
    params = [t.clone().requires_grad_() for t in (*net.V, *net.b, *net.U)]
    V, b, U = params[:2], params[2:4], params[4:]
    Hs = net.stream(X)
    for k in range(2):
        out = Hs.clone()
        out[:, d:] = out[:, d:] + torch.relu(Hs @ V[k].T + b[k]) @ U[k].T
        Hs = out
    y = torch.from_numpy(np.prod(X, axis=1).astype(np.float32))
    loss = 0.5 * ((Hs[:, -1] - y) ** 2).mean()
    grads = torch.autograd.grad(loss, params)
    expected = [(p - 0.1 * g).detach().numpy() for p, g in zip(params, grads, strict=True)]
    # replay the same batch through train_end_to_end by feeding a generator that draws exactly X
    class Fixed:
        def integers(self, lo, hi, size):
            return ((X.reshape(size) + 1) / 2).astype(int)

    H.train_end_to_end(net, 1, 0.1, 32, Fixed())
    for got, exp in zip(net.state(), expected, strict=True):
        assert_allclose(got, exp, rtol=1e-5, atol=1e-6)


def test_layerwise_gradient_matches_autograd():
    import torch

    setup(0, torch=True)
    rng = np.random.default_rng(6)
    d = 8
    net = H.ResidualLabelNet(d, 16, 1, rng)
    X = H.random_signs((32, d), rng)
    V, b, U = (t.clone().requires_grad_() for t in (net.V[0], net.b[0], net.U[0]))
    out = net.stream(X)[:, d:] + torch.relu(net.stream(X) @ V.T + b) @ U.T
    Y = torch.from_numpy(H.all_labels(X).astype(np.float32))
    loss = 0.5 * ((out - Y) ** 2).sum(1).mean()
    gV, gb, gU = torch.autograd.grad(loss, (V, b, U))

    class Fixed:
        def integers(self, lo, hi, size):
            return ((X.reshape(size) + 1) / 2).astype(int)

    H.train_layerwise(net, 1, 0.1, 32, Fixed())
    assert_allclose(net.V[0].numpy(), (V - 0.1 * gV).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert_allclose(net.b[0].numpy(), (b - 0.1 * gb).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert_allclose(net.U[0].numpy(), (U - 0.1 * gU).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_torch_runs_are_deterministic():
    import torch

    setup(0, torch=True)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.get_num_threads() == 1
    states = []
    for _ in range(2):
        rng = np.random.default_rng(11)
        net = H.ResidualLabelNet(8, 16, 2, rng)
        H.train_layerwise(net, 20, 0.05, 16, rng)
        states.append(net.state())
    for a, b in zip(*states, strict=True):
        assert_array_equal(a, b)


def test_hidden_leaves():
    rng = np.random.default_rng(2)
    lv = H.hidden_leaves(8, 16, rng)
    assert lv.shape == (8,) and np.unique(lv).size == 8 and lv.max() < 16
    with pytest.raises(ValueError, match="n_in"):
        H.hidden_leaves(8, 4, rng)
    net = H.ResidualLabelNet(8, 8, 1, rng, n_in=16)
    with pytest.raises(ValueError, match="leaves"):
        H.top_accuracy(net, H.random_signs((4, 16), rng), leaves=np.zeros(8, dtype=int))


def test_net_validation():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="power of 2"):
        H.ResidualLabelNet(12, 8, 1, rng)
    net = H.ResidualLabelNet(8, 8, 1, rng)
    with pytest.raises(ValueError, match="columns"):
        net.stream(np.ones((2, 4)))
    with pytest.raises(ValueError, match="lr"):
        H.train_layerwise(net, 5, -0.1, 4, rng)
    assert H.chance_band(8192) == pytest.approx(3.2905 * np.sqrt(0.25 / 8192), rel=1e-4)


# ------------------------------------------------------------------ mutation tests, one per claim


def test_c1_mutation_sgd_law():
    cells = H.law_experiment(DEF["m_law"], DEF["R_law"], rng_for(DEF["seed"], "C1"))
    assert H.claim_sgd_law(cells).passed
    assert not H.claim_sgd_law(cells, H.gd_law).passed  # no gradient noise
    assert not H.claim_sgd_law(cells, H.batch_one_law).passed  # the 1/B forgotten


def test_c2_mutation_rate():
    study = H.rate_study(DEF["m_list"], DEF["eps_rate"], DEF["R_rate"], rng_for(DEF["seed"], "C2"))
    assert H.claim_rate(study, H.exact_rate_slope(DEF["m_list"], DEF["eps_rate"])).passed
    assert not H.claim_rate(study, 2.0).passed
    assert not H.claim_rate(study, 0.5).passed


@pytest.fixture(scope="module")
def separation():
    return H.separation_experiment(DEF["d_exact"], DEF["delta"], DEF["under_frac"], rng_for(DEF["seed"], "C3"))


def test_c3a_mutation_orthogonality(separation):
    assert H.claim_orthogonality(separation.max_corr_top).passed
    # wrong theory: the top label has a degree-2 part, as a level-1 label does
    assert not H.claim_orthogonality(separation.max_corr_top, predicted=2 ** DEF["d_exact"]).passed
    assert not H.claim_orthogonality(H.max_top_correlation(DEF["d_exact"], level=1)).passed


def test_c3b_mutation_parseval(separation):
    assert H.claim_parseval(separation.no_hint_mse, separation.no_hint_w).passed
    assert separation.no_hint_mse >= 1
    # wrong theory: a quadratic block learns the top label at the Thm A rate
    p = H.n_quad_features(DEF["d_exact"])
    wrong = H.sgd_contraction(1 / p, 1, p) ** sum(separation.steps)
    assert not H.claim_parseval(separation.no_hint_mse, separation.no_hint_w, predicted=wrong).passed


def test_c3c_mutation_union_bound(separation):
    assert H.claim_union_bound(separation.under_top_error, separation.under_mse).passed
    assert H.claim_union_bound(separation.top_error, separation.mse).passed
    # wrong constant: beta <= MSE / 4
    assert not H.claim_union_bound(separation.under_top_error, separation.under_mse, factor=0.25).passed


def test_c4_mutation_network():
    """At a reduced budget (width 96, 1500 steps per block) to keep the test file fast; the notebook runs the
    same function at its defaults."""
    setup(0, torch=True)
    res = H.net_experiment(16, 96, 3, 1500, 128, 0.05, 4096, rng_for(0, "C4"))
    assert H.claim_hinted_accuracy(res.hinted_top, H.ACC_THRESHOLD).passed
    assert H.claim_chance(res.baseline_top, res.n_test).passed
    # wrong theory "not learnable layerwise": the hinted net at chance
    assert not H.claim_chance(res.hinted_top, res.n_test).passed
    # wrong theory "end to end discovers the hierarchy": the baseline above the threshold
    assert not H.claim_hinted_accuracy(res.baseline_top, H.ACC_THRESHOLD).passed
