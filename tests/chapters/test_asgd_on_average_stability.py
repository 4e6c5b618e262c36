"""Tests of chapter 'asgd-on-average-stability': the theory, the model, and one mutation test per claim."""

import itertools
import math

import numpy as np
import pytest

from theorylib.chapters.asgd_on_average_stability import CHAPTER, claims, model, theory
from theorylib.core import rng_for
from theorylib.core.theory import variant

D = CHAPTER.defaults()


# ---------------------------------------------------------------- theory: impulse response


def test_impulse_response_without_delays_is_geometric():
    phi, psi = theory.impulse_response(0.1, np.zeros(30, dtype=int))
    np.testing.assert_allclose(psi, 0.9 ** (29 - np.arange(30)), rtol=1e-13)
    assert phi == pytest.approx(0.9**30, rel=1e-13)


@pytest.mark.parametrize("seed", range(50))
def test_fixed_point_identity_for_random_delays(seed):
    rng = np.random.default_rng(seed)
    T, tau = int(rng.integers(1, 80)), int(rng.integers(0, 6))
    eta = float(rng.uniform(0.01, 2 / (1 + 2 * tau)))
    dl = model.delay_schedule(T, tau, "random", rng)
    for avg in (False, True):
        phi, psi = theory.impulse_response(eta, dl, avg)
        assert phi + eta * psi.sum() == pytest.approx(1.0, abs=1e-12)


def _forward(eta, dl, x0, b, average=False):
    x = [x0]
    for t in range(dl.size):
        x.append(x[t] - eta * x[t - dl[t]] + eta * b[t])
    return np.mean(x[:-1]) if average else x[-1]


@pytest.mark.parametrize("average", [False, True])
def test_adjoint_matches_forward_impulses(average):
    rng = np.random.default_rng(3)
    dl = model.delay_schedule(25, 4, "random", rng)
    phi, psi = theory.impulse_response(0.15, dl, average)
    assert _forward(0.15, dl, 1.0, np.zeros(25), average) == pytest.approx(phi, abs=1e-14)
    for s in (0, 7, 24):
        b = np.zeros(25)
        b[s] = 1.0
        assert _forward(0.15, dl, 0.0, b, average) == pytest.approx(0.15 * psi[s], abs=1e-14)


def test_exact_formulas_against_enumeration():
    """N = 2 samples, T = 3 steps, d = 1: enumerate the 8 index sequences and integrate the Gaussian data
    exactly (x_T is linear in the xi's, so the expectations are sums of products of coefficients)."""
    eta, dl, q, r0 = 0.3, np.array([0, 1, 1]), np.array([0.7, 0.3]), 2.0
    stab = gap = exc = exc_avg = 0.0
    for seq in itertools.product(range(2), repeat=3):
        pr = np.prod(q[list(seq)])
        # coefficients of (x0, xi_0, xi_1) in x_t, t = 0..3
        xs = [np.array([1.0, 0, 0])]
        for t in range(3):
            e = np.zeros(3)
            e[1 + seq[t]] = 1.0
            xs.append(xs[t] - eta * xs[t - dl[t]] + eta * e)
        c, cbar = xs[-1], np.mean(xs[:-1], axis=0)
        x0 = math.sqrt(r0)
        exc += pr * 0.5 * (c[0] ** 2 * x0**2 + c[1] ** 2 + c[2] ** 2)
        exc_avg += pr * 0.5 * (cbar[0] ** 2 * x0**2 + cbar[1] ** 2 + cbar[2] ** 2)
        gap += pr * (q[0] * c[1] + q[1] * c[2])
        # perturbing xi_k -> xi'_k: difference coefficient c[1 + k] times (xi_k - xi'_k), variance 2
        stab += pr * sum(q[k] * 2 * c[1 + k] ** 2 for k in range(2))
    assert theory.stability(eta, dl, q, 1, 1.0) == pytest.approx(stab, rel=1e-12)
    assert theory.gap(eta, dl, q, 1, 1.0) == pytest.approx(gap, rel=1e-12)
    assert theory.excess(eta, dl, q, 1, 1.0, r0) == pytest.approx(exc, rel=1e-12)
    assert theory.excess(eta, dl, q, 1, 1.0, r0, average=True) == pytest.approx(exc_avg, rel=1e-12)


def test_stability_bound_is_nondecreasing_in_T_and_checks_the_step():
    b = [theory.stability_bound(0.1, 1.0, 3, 1 / 100, T, 1.0) for T in (1, 10, 100, 1000)]
    assert all(x < y for x, y in itertools.pairwise(b))
    assert b[0] == pytest.approx(8 * math.e * 0.01 / 100 * (4 + 0.01))
    with pytest.raises(ValueError):
        theory.stability_bound(0.3, 1.0, 3, 0.01, 10, 1.0)


def test_bound_dominates_the_exact_stability_along_exact_risks():
    """The theorem on the quadratic instance at the exact E F_S^q along the run (w_0 = mu)."""
    for tau, eta in ((0, 0.5), (2, 0.3), (3, 0.2)):
        for N in (4, 64):
            q = np.full(N, 1.0 / N)
            dl = model.delay_schedule(60, tau)
            # w_0 = mu: E F_S(w) >= E F_S(empirical mean) = (1 - 1/N) d sigma^2 / 2 at every t
            floor = 60 * (1 - 1 / N) / 2
            assert theory.stability(eta, dl, q, 1, 1.0) <= theory.stability_bound(eta, 1.0, tau, 1 / N, 60, floor)


def test_ratio_range_brackets_the_exact_ratio():
    """bound / exact stability lies in the proposition's sandwich at every N (exact quantities)."""
    for tau, eta, T in ((0, 0.01, 64), (2, 0.05, 64), (3, 0.002, 128)):
        dl = model.delay_schedule(T, tau)
        _, psi = theory.impulse_response(eta, dl)
        for N in (2, 8, 64, 1024):
            r = theory.stability_bound(eta, 1.0, tau, 1 / N, T, 2.5 * T) / theory.stability(
                eta, dl, np.full(N, 1 / N), 3, 1.0)
            lo, hi = theory.ratio_range(tau, T, N, psi, 2.5, 3, 1.0)
            assert lo * (1 - 1e-12) <= r <= hi * (1 + 1e-12)
    lo, hi = theory.ratio_range(0, 10, 10, np.array([1.0, 2.0]), 1.0, 1, 1.0)
    assert hi / lo == pytest.approx(4.0) and hi == pytest.approx(4 * math.e * 2 / 1.9)


def test_wrong_theories_differ_where_the_claims_need():
    dl = model.delay_schedule(200, 3)
    q = model.participation_probs(model.worker_probs(4, 0.55), 32)
    s = theory.stability(0.1, dl, q, 3, 1.0)
    assert theory.wrong_stability_no_delay(0.1, dl, q, 3, 1.0) < 0.85 * s
    assert theory.wrong_stability_blind(0.1, dl, q, 3, 1.0) < 0.7 * s
    assert theory.wrong_gap_blind(0.1, dl, q, 3, 1.0) < 0.7 * theory.gap(0.1, dl, q, 3, 1.0)


@pytest.mark.parametrize("call", [
    lambda: theory.impulse_response(0.0, np.zeros(3, dtype=int)),
    lambda: theory.impulse_response(0.1, np.array([0, 2, 0])),
    lambda: theory.impulse_response(0.1, np.array([0, -1, 0])),
    lambda: theory.impulse_response(0.1, np.array([0.0, 1.0])),
    lambda: model.participation_probs(np.array([0.5, 0.6]), 4),
    lambda: model.participation_probs(np.array([1.2, -0.2]), 4),
    lambda: model.participation_probs(np.array([0.5, 0.5]), 0),
    lambda: model.worker_probs(1, 0.5),
    lambda: model.delay_schedule(10, -1),
    lambda: model.delay_schedule(10, 2, "random"),
    lambda: model.delay_schedule(10, 2, "other"),
    lambda: model.asgd_run(np.zeros((2, 3, 1)), np.array([0, 2, 0]), 0.1, np.zeros(1)),
    lambda: model.asgd_run(np.zeros((2, 3, 1)), np.zeros(3, dtype=int), -0.1, np.zeros(1)),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------- model


def test_delay_schedules_respect_the_caps():
    rng = rng_for(0, "dl")
    for kind in ("const", "random"):
        dl = model.delay_schedule(50, 4, kind, rng)
        assert np.all(dl >= 0) and np.all(dl <= np.minimum(np.arange(50), 4))
    np.testing.assert_array_equal(model.delay_schedule(6, 3), [0, 1, 2, 3, 3, 3])


def test_participation_probs_and_sampling_frequencies():
    q = model.participation_probs(model.worker_probs(3, 0.6), 5)
    assert q.size == 15 and q.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(q[:5], 0.12)
    idx = model.sample_indices(q, 400, 500, rng_for(0, "si"))
    freq = np.bincount(idx.ravel(), minlength=15) / idx.size
    assert np.all(np.abs(freq - q) < 5 * np.sqrt(q / idx.size))


def test_first_occurrence():
    idx = np.array([[3, 1, 3, 2, 1, 3], [0, 0, 0, 5, 5, 0]])
    np.testing.assert_array_equal(model.first_occurrence(idx), [[0, 1, 0, 3, 1, 0], [0, 0, 0, 3, 3, 0]])


def test_lazy_draws_reuse_values_on_repeated_indices():
    q = np.full(5, 0.2)
    dr = model.lazy_draws(q, 20, 30, 2, 1.0, rng_for(0, "lazy"))
    for r in range(20):
        for t in range(30):
            np.testing.assert_array_equal(dr.z[r, t], dr.z[r, dr.first[r, t]])
        assert dr.weight[r].sum() == pytest.approx(0.2 * np.unique(dr.first[r]).size)


def test_asgd_run_without_delays_is_plain_sgd_and_average():
    rng = rng_for(0, "sgd")
    z = rng.standard_normal((4, 20, 3))
    w = np.ones((4, 3))
    path = [w]
    for t in range(20):
        w = w - 0.2 * (w - z[:, t])
        path.append(w)
    dl = np.zeros(20, dtype=int)
    np.testing.assert_allclose(model.asgd_run(z, dl, 0.2, np.ones(3)), w, atol=1e-14)
    np.testing.assert_allclose(model.asgd_run(z, dl, 0.2, np.ones(3), average=True),
                               np.mean(path[:-1], axis=0), atol=1e-14)


def test_asgd_run_with_delays_matches_the_recursion():
    rng = rng_for(0, "del")
    z = rng.standard_normal((1, 15, 1))
    dl = model.delay_schedule(15, 3, "random", rng)
    x = [np.array([[0.5]])]
    for t in range(15):
        x.append(x[t] - 0.1 * (x[t - dl[t]] - z[:, t]))
    np.testing.assert_allclose(model.asgd_run(z, dl, 0.1, np.array([0.5])), x[-1], atol=1e-14)


def test_coupled_runs_are_exact_and_zero_for_undrawn_indices():
    """Each coupled slot equals a separate ASGD run on S^(k); undrawn slots have delta = 0 exactly."""
    q = np.full(6, 1 / 6)
    dr, Z = model.full_data(q, 3, 8, 2, 1.0, rng_for(0, "cp"))
    dl = model.delay_schedule(8, 2)
    c = model.coupled_stability(dr, dl, 0.2, np.zeros(2))
    np.testing.assert_allclose(c.w_final, model.asgd_run(dr.z, dl, 0.2, np.zeros(2)), atol=1e-14)
    for r in range(3):
        total = 0.0
        for j in np.unique(dr.first[r]):
            zz = dr.z[r].copy()
            zz[dr.first[r] == j] = dr.z_prime[r, j]
            wk = model.asgd_run(zz[None], dl, 0.2, np.zeros(2))[0]
            total += q[0] * np.sum((wk - c.w_final[r]) ** 2)
        assert c.stability[r] == pytest.approx(total, rel=1e-12)
    never = [j for j in range(8) if j not in set(dr.first[0])]
    assert np.all(dr.weight[0, never] == 0)


def test_coupled_result_does_not_depend_on_chunking(monkeypatch):
    q = np.full(10, 0.1)
    dr, Z = model.full_data(q, 7, 12, 2, 1.0, rng_for(0, "chunk"))
    dl = model.delay_schedule(12, 2)
    emp = model.weighted_moments(Z, q)
    a = model.coupled_stability(dr, dl, 0.1, np.ones(2), emp)
    monkeypatch.setattr(model, "CHUNK", 3 * 12 * 2 * 2)
    b = model.coupled_stability(dr, dl, 0.1, np.ones(2), emp)
    np.testing.assert_array_equal(a.stability, b.stability)
    np.testing.assert_array_equal(a.sum_emp_risk, b.sum_emp_risk)


def test_weighted_moments_and_gap_with_control():
    rng = rng_for(0, "wm")
    Z = rng.standard_normal((3, 8, 2))
    q = rng.dirichlet(np.ones(8))
    w = rng.standard_normal((3, 2))
    zbar, c = model.weighted_moments(Z, q)
    direct = 0.5 * np.einsum("k,rk->r", q, np.sum((w[:, None] - Z) ** 2, axis=2))
    np.testing.assert_allclose(0.5 * np.sum((w - zbar) ** 2, axis=1) + c, direct, atol=1e-13)
    F = 0.5 * np.sum(w**2, axis=1) + 1.0  # d sigma^2 / 2 with d = 2, sigma = 1
    cv = 0.5 * np.einsum("k,rk->r", q, np.sum(Z**2, axis=2)) - 1.0
    np.testing.assert_allclose(model.gap_with_control(w, Z, q), F - direct + cv, atol=1e-13)


def test_c1_sample_size():
    assert model.c1_sample_size(32, 4, 0.1) == 32
    assert model.c1_sample_size(16, 8, 0.05) == 30


# ---------------------------------------------------------------- claims: hold, and reject the wrong theories


@pytest.fixture(scope="module")
def c1_cells():
    n1 = model.c1_sample_size(D["n"], D["m"], D["eta"])
    out = []
    for key, pd in (("a", None), ("b", D["p_dom"])):
        q = model.participation_probs(model.worker_probs(D["m"], pd), n1)
        dl = model.delay_schedule(D["T"], D["tau"])
        out.append((model.run_stability(q, dl, D["eta"], D["d"], D["sigma"], D["r0sq"], D["R_c1"],
                                        rng_for(0, "C1", key)), dl, q))
    return out


def test_c1_holds_and_rejects_no_delay_and_blind(c1_cells):
    args = (D["eta"],)
    for stab, dl, q in c1_cells:
        assert claims.claim_stability("C1", stab, *args, dl, q, D["d"], D["sigma"]).passed
        bad = variant(theory, stability=theory.wrong_stability_no_delay)
        assert not claims.claim_stability("C1", stab, *args, dl, q, D["d"], D["sigma"], theory=bad).passed
    stab, dl, q = c1_cells[1]
    bad = variant(theory, stability=theory.wrong_stability_blind)
    assert not claims.claim_stability("C1", stab, *args, dl, q, D["d"], D["sigma"], theory=bad).passed


@pytest.fixture(scope="module")
def c2_data():
    dl = model.delay_schedule(D["T"], D["tau"])
    gaps, qs = [], []
    for m_ in model.M_GRID:
        for kind, p in (("bal", model.worker_probs(m_)), ("dom", model.worker_probs(m_, D["p_dom"]))):
            q = model.participation_probs(p, D["n"])
            gaps.append(model.run_gap(q, dl, D["eta"], D["d"], D["sigma"], D["r0sq"], D["R_gap"],
                                      rng_for(0, "C2", kind, str(m_))))
            qs.append(q)
    return gaps, qs, dl


def test_c2_holds_and_rejects_participation_blind(c2_data):
    gaps, qs, dl = c2_data
    assert claims.claim_gap("C2", gaps, qs, D["eta"], dl, D["d"], D["sigma"]).passed
    bad = variant(theory, gap=theory.wrong_gap_blind)
    assert not claims.claim_gap("C2", gaps, qs, D["eta"], dl, D["d"], D["sigma"], theory=bad).passed


def test_c2_control_variate_is_unbiased_and_reduces_variance():
    q = model.participation_probs(model.worker_probs(4), 8)
    dl = model.delay_schedule(50, 2)
    dr, Z = model.full_data(q, 4000, 50, 2, 1.0, rng_for(0, "cv"))
    w = model.asgd_run(dr.z, dl, 0.1, np.ones(2))
    F = 0.5 * np.sum(w**2, axis=1) + 1.0
    zbar, c = model.weighted_moments(Z, q)
    raw = F - (0.5 * np.sum((w - zbar) ** 2, axis=1) + c)
    cv = model.gap_with_control(w, Z, q)
    pred = theory.gap(0.1, dl, q, 2, 1.0)
    assert abs(raw.mean() - pred) < 4 * raw.std() / np.sqrt(4000)
    assert abs(cv.mean() - pred) < 4 * cv.std() / np.sqrt(4000)
    assert cv.std() < 0.5 * raw.std()


@pytest.fixture(scope="module")
def c3_data():
    reps = model.run_rate(model.N_GRID_RATE, D["T_small"], D["tau"], D["eta"], D["d"], D["sigma"], D["r0sq"],
                          D["R_rate"], lambda N: rng_for(0, "C3", str(N)))
    return reps, model.delay_schedule(D["T_small"], D["tau"])


def test_c3_holds_and_rejects_the_uniform_stability_rate(c3_data):
    reps, dl = c3_data
    args = (reps, model.N_GRID_RATE, D["eta"], dl, D["d"], D["sigma"])
    assert claims.claim_rate("C3", *args, rng_for(0, "C3", "boot")).passed
    bad = variant(theory, stability=theory.wrong_stability_uniform)
    c = claims.claim_rate("C3", *args, rng_for(0, "C3", "boot"), theory=bad)
    assert not c.passed and c.predicted == pytest.approx(-2.0, abs=0.05)


@pytest.fixture(scope="module")
def c4_data():
    N4 = tuple(int(round(D["T_bound"] / r)) for r in model.TN_GRID_BOUND)
    out = {}
    for tb in (0, D["tau_bound"]):
        st, sf = model.run_bound(N4, D["T_bound"], tb, D["eta_small"], D["d"], D["sigma"], D["r0sq"],
                                 D["R_bound"], lambda N, tb=tb: rng_for(0, "C4", str(tb), str(N)))
        out[tb] = (st, sf, N4, D["T_bound"], D["eta_small"], tb)
    return out


def test_c4_holds_and_rejects_the_bound_without_t_over_n(c4_data):
    bad = variant(theory, stability_bound=theory.wrong_stability_bound_no_tn)
    for args in c4_data.values():
        assert claims.claim_bound_holds("C4a", *args).passed
        assert claims.claim_bound_sandwich("C4b", *args, D["d"], D["sigma"]).passed
        assert not claims.claim_bound_holds("C4a", *args, theory=bad).passed
        assert not claims.claim_bound_sandwich("C4b", *args, D["d"], D["sigma"], theory=bad).passed


@pytest.fixture(scope="module")
def c5_data():
    last, avg = model.run_excess(model.N_GRID_EXCESS, D["tau"], D["c0"], D["d"], D["sigma"], D["r0sq"],
                                 D["R_excess"], lambda N: rng_for(0, "C5", str(N)))
    return last, avg, [model.delay_schedule(N, D["tau"]) for N in model.N_GRID_EXCESS]


def test_c5_holds_and_rejects_fast_last_and_slow_average(c5_data):
    last, avg, dls = c5_data
    common = (model.N_GRID_EXCESS, dls, D["c0"], D["d"], D["sigma"], D["r0sq"])
    assert claims.claim_excess_slope("C5a", last, *common, False, rng_for(0, "C5", "boot", "a")).passed
    assert claims.claim_excess_slope("C5b", avg, *common, True, rng_for(0, "C5", "boot", "b")).passed
    fast = variant(theory, excess=theory.wrong_excess_fast)
    assert not claims.claim_excess_slope("C5a", last, *common, False, rng_for(0, "C5", "boot", "a"),
                                         theory=fast).passed
    assert claims.claim_excess_level("C5c", last, *common, False).passed
    assert claims.claim_excess_level("C5d", avg, *common, True).passed
    slow = variant(theory, excess=theory.wrong_excess_last)
    assert not claims.claim_excess_level("C5d", avg, *common, True, theory=slow).passed
    assert not claims.claim_excess_level("C5c", last, *common, False, theory=fast).passed
    assert not claims.claim_excess_slope("C5b", avg, *common, True, rng_for(0, "C5", "boot", "b"),
                                         theory=slow).passed


def test_a_broken_prediction_fails_instead_of_raising(c1_cells, c2_data, c4_data):
    def nan_stab(eta, dl, q, d, sigma):
        return math.nan

    def neg_bound(eta, L, tau, q_max, T, s):
        return -1.0

    stab, dl, q = c1_cells[0]
    assert not claims.claim_stability("C1", stab, D["eta"], dl, q, D["d"], D["sigma"],
                                      theory=variant(theory, stability=nan_stab)).passed
    gaps, qs, dl2 = c2_data
    assert not claims.claim_gap("C2", gaps, qs, D["eta"], dl2, D["d"], D["sigma"],
                                theory=variant(theory, gap=nan_stab)).passed
    args = c4_data[0]
    bad = variant(theory, stability_bound=neg_bound)
    assert not claims.claim_bound_holds("C4a", *args, theory=bad).passed
    assert not claims.claim_bound_sandwich("C4b", *args, D["d"], D["sigma"], theory=bad).passed


def test_exact_stability_and_gap_hold_for_a_random_delay_sequence():
    """Any delays fixed in advance: one random sequence, coupled runs vs the exact formulas (4 SE)."""
    rng = rng_for(0, "random-delays")
    dl = model.delay_schedule(40, 4, "random", rng)
    q = model.participation_probs(model.worker_probs(4, 0.4), 5)
    dr, Z = model.full_data(q, 3000, 40, 2, 1.0, rng)
    c = model.coupled_stability(dr, dl, 0.2, np.ones(2))
    se = c.stability.std(ddof=1) / np.sqrt(3000)
    assert abs(c.stability.mean() - theory.stability(0.2, dl, q, 2, 1.0)) < 4 * se
    g = model.gap_with_control(c.w_final, Z, q)
    assert abs(g.mean() - theory.gap(0.2, dl, q, 2, 1.0)) < 4 * g.std(ddof=1) / np.sqrt(3000)
    assert abs(theory.stability(0.2, dl, q, 2, 1.0) / theory.wrong_stability_no_delay(0.2, dl, q, 2, 1.0) - 1) > 0.05


def test_c0_tau_relation_is_the_step_condition_at_the_smallest_sample_size_of_c5():
    """The declaration's relation c0 (1 + 2 tau) <= 16 is eta (1 + 2 tau) <= 2 at C5's largest step
    eta = c0 / sqrt(N_min), N_min = 64; c0 = 2, tau = 6 violates it and the default satisfies it."""
    assert model.N_GRID_EXCESS[0] == 64 == min(model.N_GRID_EXCESS)
    rel = next(r for r in CHAPTER.relations if set(r.names) == {"c0", "tau"})
    assert not rel.holds({"c0": 2.0, "tau": 6}) and rel.holds({"c0": 0.5, "tau": 3})
    assert rel.holds({"c0": 16 / 13, "tau": 6}) and not rel.holds({"c0": 16 / 13 + 1e-9, "tau": 6})
