"""Tests of chapter 'rational-activations-separation': the theory, the model, and one mutation test per claim."""

import math

import numpy as np
import pytest

from theorylib.chapters.rational_activations_separation import claims, model, theory
from theorylib.core import rng_for
from theorylib.core.theory import variant

# ---------------------------------------------------------------- theory


def test_schedule_increases_to_one_and_e_form_matches():
    ells, errs = theory.schedule(1e-3, 8)
    assert np.all(np.diff(ells) >= 0) and ells[-1] <= 1.0
    assert np.all(np.diff(errs[errs > 0]) < 0)
    ok = ells < 0.999  # where 1 - ell is representable to many digits
    np.testing.assert_allclose(errs[ok], 1.0 - ells[ok], rtol=1e-12)


@pytest.mark.parametrize("ell", [1e-12, 1e-5, 0.3, 0.9])
def test_newton_map_sends_interval_onto_interval(ell):
    ells = theory.schedule(ell, 3)[0]
    for j in range(3):
        lj = ells[j]
        y = np.geomspace(lj, 1.0, 20_001)
        F = (y + lj / y) / (1 + lj)
        np.testing.assert_allclose([F[0], F[-1]], [1.0, 1.0], rtol=1e-15)
        np.testing.assert_allclose((2 * math.sqrt(lj)) / (1 + lj), ells[j + 1], rtol=1e-15)
        assert F.min() >= ells[j + 1] * (1 - 1e-15) and F.max() <= 1 + 1e-15
        np.testing.assert_allclose(F.min(), ells[j + 1], rtol=1e-6)


def test_depth_needed_is_below_bound_for_random_eps():
    rng = rng_for(0, "test-bound")
    for eps, ell in zip(10 ** rng.uniform(-15, -0.01, 200), 10 ** rng.uniform(-15, -0.01, 200), strict=True):
        assert theory.depth_needed(eps, ell) <= theory.depth_bound(eps, ell)
        assert theory.depth_needed(eps, ell) >= 1


def test_depth_needed_is_the_first_k_with_small_error():
    for eps in [1e-2, 1e-7, 1e-13]:
        k = theory.depth_needed(eps)
        assert theory.sign_error(eps, k) <= eps
        if k > 1:
            assert theory.sign_error(eps, k - 1) > eps


def test_log_depth_agrees_with_float_depth():
    for d in [1, 2, 5, 10, 14]:
        assert theory.log_depth_needed(-d) == theory.depth_needed(10.0**-d)
    assert theory.log_depth_needed(-100_000) > theory.log_depth_needed(-1000)


def test_wrong_depth_is_plain_newton():
    assert theory.wrong_depth_needed(1e-12) == 44
    np.testing.assert_allclose(theory.wrong_sign_error(1e-6, 5), 3.1e4, rtol=0.01)


def test_closed_forms():
    assert theory.sawtooth_error(3) == 2.0**-8 and theory.sawtooth_pieces(3) == 8
    assert model.rational_neurons(4) == 10


# ---------------------------------------------------------------- model


@pytest.mark.parametrize(("ell", "k"), [(1e-2, 3), (1e-8, 6)])
def test_h_form_equals_x_times_sign(ell, k):
    x = np.concatenate([-np.geomspace(1e-3, 1, 500), np.geomspace(1e-3, 1, 500)])
    np.testing.assert_allclose(model.abs_net(x, ell, k), x * model.sign_net(x, ell, k), rtol=1e-14)


def test_abs_net_at_zero_even_positive():
    ell, k = 1e-4, 5
    # h_1(0) = ell/(1 + ell) and h_{j+1}(0) = h_j(0)/(1 + ell_j): the closed form of the |x| theorem.
    ells = theory.schedule(ell, k)[0]
    at_zero = ells[0] / (1.0 + ells[0]) / np.prod(1.0 + ells[1:k])
    np.testing.assert_allclose(model.abs_net(np.array([0.0]), ell, k)[0], at_zero, rtol=(6 * k + 4) * 2.0**-53)
    x = np.linspace(0, 1, 1001)
    h = model.abs_net(x, ell, k)
    assert np.all(h > 0)
    np.testing.assert_array_equal(h, model.abs_net(-x, ell, k))


def test_abs_error_is_within_theorem_bound():
    eps = 1e-5
    k = theory.depth_needed(eps)
    x = np.concatenate([[0.0], np.geomspace(1e-9, 1, 20_000)])
    assert np.max(np.abs(model.abs_net(x, eps, k) - x)) <= eps
    np.testing.assert_allclose(np.max(np.abs(model.relu_net(x, eps, k) - x)),
                               0.5 * np.max(np.abs(model.abs_net(x, eps, k) - x)), rtol=1e-12)
    xb = 3.0 * x
    assert np.max(np.abs(model.relu_net(-xb, eps, k, B=3.0))) <= 3.0 * eps / 2


def test_rational_network_matches_h_form_and_counts():
    for k in [1, 2, 4]:
        net = model.build_abs_network(1e-3, k)
        assert net.n_neurons == model.rational_neurons(k) == 1 + 3 * (k - 1)
        x = np.linspace(-1, 1, 801)
        np.testing.assert_allclose(net.forward(x), model.abs_net(x, 1e-3, k), atol=1e-9)
        for n in net.neurons:
            assert len(n.P) <= 3 and len(n.Q) <= 2
    assert model.build_abs_network(1e-3, 2).n_params > 0


def test_sign_sup_error_finds_interior_minima():
    ell, k = 1e-4, 3
    grid = model.log_grid(ell, 1.0, 20_000, rng_for(0, "t"), 100)
    np.testing.assert_allclose(model.sign_sup_error(ell, k, grid), theory.sign_error(ell, k), atol=1e-14)
    assert model.sign_net(np.array([ell, 1.0]), ell, k) == pytest.approx([1.0, 1.0], abs=1e-15)


def test_measured_depth_sandwich():
    for eps in [1e-2, 1e-9]:
        grid = np.concatenate([[0.0], model.log_grid(1e-3 * eps, 1.0, 20_000, rng_for(1, "t"), 0)])
        k, errs = model.measured_depth(eps, grid)
        K = theory.depth_needed(eps)
        assert K - 1 <= k <= K and errs[-1] <= eps < min(errs[:-1], default=np.inf)


def test_sawtooth_error_and_pieces():
    for m in range(1, 7):
        net = model.sawtooth_network(m)
        assert net.n_neurons == 2 * m
        g = model.dyadic_grid(m + 5)
        v = net.forward(g)
        assert np.max(np.abs(v - g * g)) == 2.0 ** (-2 * m - 2)
        assert model.count_pieces(v, g) == 2**m


def test_random_relu_dag_pieces_at_most_two_to_n():
    rng = rng_for(0, "dag")
    x = np.linspace(-3, 3, 200_001)
    for N in range(1, 9):
        net = model.random_relu_dag(N, rng)
        assert model.count_pieces(net.forward(x), x, tol=1e-6) <= 2**N


def test_lp_square_k3():
    np.testing.assert_allclose(model.best_pl_error_lp(lambda t: t * t, 3, 8, scale=72.0), 1 / 72, rtol=1e-8)
    # an odd grid misses the midpoints: a smaller value, by at most 2/M^2 relative
    e = model.best_pl_error_lp(lambda t: t * t, 3, 3, scale=72.0) * 72
    assert 1 - 2 / 9 - 1e-8 <= e < 1


def test_bad_inputs():
    with pytest.raises(ValueError):
        theory.schedule(0.0, 3)
    with pytest.raises(ValueError):
        theory.depth_needed(1.0)
    with pytest.raises(ValueError):
        theory.sign_error(0.1, 0)
    with pytest.raises(ValueError):
        model.newton_weights(0.1, 1.5)
    with pytest.raises(ValueError):
        model.relu_net(np.zeros(2), 0.1, 2, B=0.0)
    with pytest.raises(ValueError):
        model.best_pl_error_lp(lambda t: t, 2, 1)
    with pytest.raises(ValueError):
        model.best_pl_error_lp(3.0, 2, 4)
    with pytest.raises(ValueError):
        model.sup_error(np.abs, np.array([0.0, 1.0]))
    with pytest.raises(ValueError):
        model.sign_net(np.array([0.0, 0.5]), 0.1, 2)
    with pytest.raises(ValueError):
        model.sawtooth_network(0)
    with pytest.raises(ValueError):
        model.count_pieces(np.zeros(3), np.zeros(4))


# ---------------------------------------------------------------- claims and their wrong theories


def _sign_data(ell=1e-6, K=6):
    grid = model.log_grid(ell, 1.0, 20_000, rng_for(0, "C1t"), 200)
    ks = list(range(1, K + 1))
    return ks, [model.sign_sup_error(ell, k, grid) for k in ks]


def test_c1_holds_and_rejects_unscaled_newton():
    ks, meas = _sign_data()
    assert claims.claim_sign_error("C1", 1e-6, ks, meas).passed
    wrong = variant(theory, sign_error=theory.wrong_sign_error)
    assert not claims.claim_sign_error("C1", 1e-6, ks, meas, theory=wrong).passed


def _depth_data():
    eps = np.geomspace(1e-12, 1e-1, 8)
    ks = []
    for e in eps:
        grid = np.concatenate([[0.0], model.log_grid(1e-3 * e, 1.0, 20_000, rng_for(0, "C2t"), 0)])
        ks.append(model.measured_depth(float(e), grid)[0])
    return eps, ks


def test_c2_holds_and_rejects_plain_newton_depth():
    eps, ks = _depth_data()
    assert claims.claim_depth("C2", eps, ks).passed
    assert claims.claim_depth_bound("C2b", eps, ks).passed
    wrong = variant(theory, depth_needed=theory.wrong_depth_needed)
    assert not claims.claim_depth("C2", eps, ks, theory=wrong).passed
    wrong_bound = variant(theory, depth_bound=lambda e, ell: theory.depth_bound(e, ell) - 3)
    assert not claims.claim_depth_bound("C2b", eps, ks, theory=wrong_bound).passed


def test_c3_holds_and_rejects_exponential_rate():
    ks = [2, 4, 8]
    E = [model.best_pl_error_lp(lambda t: t * t, k, 16, scale=8.0 * k * k) for k in ks]
    assert claims.claim_pl_square("C3", ks, E, 16).passed
    wrong = variant(theory, pl_error_bounds=theory.wrong_pl_error_bounds)
    assert not claims.claim_pl_square("C3", ks, E, 16, theory=wrong).passed
    wrong_k = variant(theory, pl_error_bounds=lambda k, a, b: (a / (16.0 * k), b / (16.0 * k)))
    assert not claims.claim_pl_square("C3", ks, E, 16, theory=wrong_k).passed
    stronger_lower = variant(theory, pl_error_bounds=lambda k, a, b: (a / (8.0 * k * k), b / (16.0 * k * k)))
    assert not claims.claim_pl_square("C3", ks, E, 16, theory=stronger_lower).passed


def _inv_data(ks, M=16):
    return [model.best_pl_error_lp(lambda t: 1.0 / (1.0 + t), k, M, scale=8.0 * k * k) for k in ks]


def test_c3_inverse_lower_bound_holds_and_rejects_first_order_rate():
    ks = [2, 8, 32, 128]
    E = _inv_data(ks)
    assert claims.claim_pl_lower("C3b", ks, E, 16, 0.25, 2.0).passed
    first_order = variant(theory, pl_error_bounds=lambda k, a, b: (a / (16.0 * k), b / (16.0 * k)))
    assert not claims.claim_pl_lower("C3b", ks, E, 16, 0.25, 2.0, theory=first_order).passed


def test_c3_inverse_upper_bound_holds_and_rejects_exponential_rate():
    ks = [2, 8, 32, 128]
    E = _inv_data(ks)
    assert claims.claim_pl_upper("C3c", ks, E, 0.25, 2.0).passed
    wrong = variant(theory, pl_error_bounds=theory.wrong_pl_error_bounds)
    assert not claims.claim_pl_upper("C3c", ks, E, 0.25, 2.0, theory=wrong).passed
    # an upper bound from the smallest curvature is false: the piece at x = 0 has f'' = 2
    assert not claims.claim_pl_upper("C3c", ks, E, 0.25, 0.25).passed


def test_pl_error_bounds_and_the_shifted_interpolant():
    # the shifted interpolant attains the upper bound's guarantee for 1/(1+x), measured on a fine grid
    for k in (1, 3, 10):
        knots = np.linspace(0.0, 1.0, k + 1)
        x = np.linspace(0.0, 1.0, 200_001)
        f = 1.0 / (1.0 + x)
        interp = np.interp(x, knots, 1.0 / (1.0 + knots))
        gap = interp - f
        assert gap.min() >= -1e-15
        lo, hi = theory.pl_error_bounds(k, 0.25, 2.0)
        assert np.max(np.abs(f - (interp - gap.max() / 2))) <= hi * (1 + 1e-12)
        assert gap.max() / 2 >= lo
    assert theory.pl_error_bounds(3, 2.0, 2.0) == (1 / 72, 1 / 72)
    with pytest.raises(ValueError):
        theory.pl_error_bounds(3, 2.0, 1.0)
    with pytest.raises(ValueError):
        theory.pl_error_bounds(3, 0.0, 1.0)


def _saw_data():
    ms = list(range(1, 6))
    err, pieces = [], []
    for m in ms:
        g = model.dyadic_grid(m + 6)
        v = model.sawtooth_network(m).forward(g)
        err.append(float(np.max(np.abs(v - g * g))))
        pieces.append(model.count_pieces(v, g))
    return ms, err, pieces


def test_c4_error_holds_and_rejects_optimal_sawtooth():
    ms, err, _ = _saw_data()
    assert claims.claim_sawtooth_error("C4", ms, err).passed
    wrong = variant(theory, sawtooth_error=theory.wrong_sawtooth_error)
    assert not claims.claim_sawtooth_error("C4", ms, err, theory=wrong).passed


def test_c4_pieces_holds_and_rejects_counting_bound():
    ms, _, pieces = _saw_data()
    assert claims.claim_sawtooth_pieces("C4p", ms, pieces).passed
    wrong = variant(theory, sawtooth_pieces=theory.wrong_sawtooth_pieces)
    assert not claims.claim_sawtooth_pieces("C4p", ms, pieces, theory=wrong).passed


def test_c2_log_domain_law_holds_and_rejects_plain_newton():
    eps, ks = _depth_data()
    assert claims.claim_depth_log("C2l", eps, ks).passed
    wrong = variant(theory, log_depth_needed=lambda d: theory.wrong_depth_needed(10.0**d))
    assert not claims.claim_depth_log("C2l", eps, ks, theory=wrong).passed


def test_c1_depth_holds_and_rejects_plain_newton_depth():
    ks, meas = _sign_data(ell=1e-6, K=8)
    eps = np.geomspace(1e-14, 1e-1, 12)
    assert claims.claim_sign_depth("C1d", 1e-6, eps, meas).passed
    wrong = variant(theory, depth_needed=theory.wrong_depth_needed)
    assert not claims.claim_sign_depth("C1d", 1e-6, eps, meas, theory=wrong).passed


def test_c3_square_needs_bounds_that_meet():
    ks = [2, 4, 8]
    E = [model.best_pl_error_lp(lambda t: t * t, k, 16, scale=8.0 * k * k) for k in ks]
    looser_upper = variant(theory, pl_error_bounds=lambda k, a, b: (a / (16.0 * k * k), b / (8.0 * k * k)))
    assert not claims.claim_pl_square("C3", ks, E, 16, theory=looser_upper).passed
    looser_lower = variant(theory, pl_error_bounds=lambda k, a, b: (a / (32.0 * k * k), b / (16.0 * k * k)))
    assert not claims.claim_pl_square("C3", ks, E, 16, theory=looser_lower).passed
