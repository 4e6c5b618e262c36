"""Tests of chapter 'voting-margin-bounds': the theory, the model, and one mutation test per claim."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize, stats

from theorylib.chapters.voting_margin_bounds import CHAPTER, model, theory
from theorylib.chapters.voting_margin_bounds import claims as cl
from theorylib.core import rng_for
from theorylib.core.theory import variant

DEF = CHAPTER.defaults()


# ------------------------------------------------------------------------------------------------
# fixtures: the chapter's measurements at the defaults (small where the claim allows it)


@pytest.fixture(scope="module")
def sparsified():
    rng = rng_for(0, "C1", "alpha")
    alpha = rng.dirichlet(np.ones(50))
    H = model.signs_for_margins(alpha, np.array([0.6, 0.3, 0.05, -0.1]))
    gam = model.realized_margins(alpha, H)
    g, ks, cnt, ms = [], [], [], []
    for k in DEF["k_list"]:
        m = model.sparsify(alpha, H, k, DEF["reps_sparsify"], rng_for(0, "C1", str(k)))
        c = model.margin_counts(m, k)
        for p in range(gam.size):
            g.append(gam[p])
            ks.append(k)
            cnt.append(c[p])
            ms.append(m[:, p])
    return g, ks, cnt, ms


@pytest.fixture(scope="module")
def chernoff_grid():
    grid = [(n, p, d) for n in DEF["n_chernoff"] for p in np.logspace(-3, np.log10(0.5), 60)
            for d in (0.05, 1e-3)]
    gn, gp, gd = (np.array(v) for v in zip(*grid, strict=True))
    t = np.array([model.exact_lower_deviation(n, p, d) for n, p, d in grid])
    pmfs = [model.binomial_pmf(n, p) for n, p, _ in grid]
    return gn, gp, gd, t, pmfs


@pytest.fixture(scope="module")
def margins():
    n_list = [16, 23, 32, 45, 64, 90]
    return model.attainable_margins(n_list, 2.0, 6, 0, rng_for)


# ------------------------------------------------------------------------------------------------
# sparsification


@pytest.mark.parametrize(("gamma", "k"), [(0.6, 8), (-0.3, 33), (0.0, 1), (1.0, 5)])
def test_pmf_is_a_binomial_with_mean_gamma(gamma, k):
    pmf = theory.sparsified_margin_pmf(gamma, k)
    assert_allclose(pmf.sum(), 1.0, atol=1e-14)
    x = 2 * np.arange(k + 1) / k - 1
    assert_allclose(pmf @ x, gamma, atol=1e-13)
    assert_allclose(pmf, stats.binom.pmf(np.arange(k + 1), k, (1 + gamma) / 2), atol=1e-15)


def test_signs_reach_the_targets_within_the_largest_weight():
    rng = np.random.default_rng(3)
    for _ in range(20):
        alpha = rng.dirichlet(np.ones(40))
        targets = rng.uniform(-0.9, 0.9, size=5)
        H = model.signs_for_margins(alpha, targets)
        assert set(np.unique(H)) <= {-1, 1}
        gam = model.realized_margins(alpha, H)
        assert np.all(gam <= targets + 1e-12)
        assert np.all(targets - gam <= 2 * alpha.max() + 1e-12)


def test_sparsify_mean_converges_to_the_margin():
    rng = np.random.default_rng(0)
    alpha = rng.dirichlet(np.ones(10))
    H = np.where(rng.random((3, 10)) < 0.5, -1, 1)
    m = model.sparsify(alpha, H, 7, 200_000, np.random.default_rng(1))
    gam = model.realized_margins(alpha, H)
    se = np.sqrt((1 - gam**2) / 7 / 200_000)
    assert np.all(np.abs(m.mean(axis=0) - gam) <= 4.5 * se)
    assert m.shape == (200_000, 3)
    assert_allclose(np.rint(7 * (m + 1) / 2), 7 * (m + 1) / 2, atol=1e-12)


def test_margin_counts_are_histograms():
    m = np.array([[-1.0, 1.0], [0.0, 1.0], [1.0, 0.5]])
    c = model.margin_counts(m, 4)
    assert_allclose(c, [[1, 0, 1, 0, 1], [0, 0, 0, 1, 2]])


def test_hoeffding_dominates_the_exact_tail_on_a_grid():
    for gamma, theta, k in itertools.product([0.2, 0.5, 0.9], [0.1, 0.4, 1.0], [1, 4, 32, 128]):
        if gamma <= theta / 2:
            continue
        thr = np.floor(k * (1 + theta / 2) / 2 + 1e-12)
        exact = stats.binom.cdf(thr, k, (1 + gamma) / 2)
        assert exact <= theory.hoeffding_tail(gamma - theta / 2, k) + 1e-15


def test_spec_example_exact_tail_and_both_exponentials():
    exact = stats.binom.cdf(np.floor(32 * 1.25 / 2 + 1e-12), 32, 0.75)
    assert_allclose(exact, 0.0804, atol=5e-4)
    assert_allclose(theory.hoeffding_tail(0.25, 32), np.exp(-1.0), rtol=1e-14)
    assert theory.wrong_hoeffding_tail(0.25, 32) < exact


def test_pearson_merging():
    stat, dof = cl.pearson_merged(np.array([3, 7, 10, 0]), np.array([2.0, 8.0, 10.0, 0.0]))
    assert dof == 1  # bins [3+7 | 10+0] after merging the first and the empty tail
    assert_allclose(stat, 0.0, atol=1e-12)
    stat, _ = cl.pearson_merged(np.array([0, 5, 5]), np.array([0.0, 0.0, 10.0]))
    assert_allclose(stat, 0.0, atol=1e-12)
    stat, _ = cl.pearson_merged(np.array([4, 6]), np.array([0.0, 0.0]))
    assert np.isinf(stat)


# ------------------------------------------------------------------------------------------------
# Chernoff


def test_exact_lower_deviation_is_the_boundary():
    rng = np.random.default_rng(5)
    for _ in range(50):
        n, p, d = int(rng.integers(10, 400)), float(rng.uniform(0.01, 0.9)), float(rng.choice([0.05, 1e-3]))
        t = model.exact_lower_deviation(n, p, d)
        j = round(n * (p - t))
        assert stats.binom.cdf(j, n, p) > d
        if j >= 1:
            assert stats.binom.cdf(j - 1, n, p) <= d


def test_chernoff_holds_on_a_random_grid():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n, p, d = int(rng.integers(5, 3000)), float(10 ** rng.uniform(-3, -0.1)), float(10 ** rng.uniform(-4, -1))
        t = theory.chernoff_deviation(p, n, np.log(1 / d))
        assert stats.binom.cdf(np.floor(n * (p - t) + 1e-12), n, p) <= d * (1 + 1e-9)


def test_relative_deviation_bound_inverts_the_deviation():
    for phat, n, L in itertools.product([0.0, 0.01, 0.3], [10, 100, 1000], [0.5, 3.0, 20.0]):
        ucb = theory.relative_deviation_bound(phat, n, L)
        a = np.sqrt(2 * L / n)
        exact = phat + a**2 / 2 + a * np.sqrt(a**2 + 4 * phat) / 2
        assert ucb >= exact - 1e-12
        # p just above the exact root violates phat > p - sqrt(2 p L / n)
        p = exact * (1 + 1e-9)
        assert phat <= p - theory.chernoff_deviation(p, n, L) + 1e-9


def test_relative_deviation_bound_is_monotone():
    ph = np.linspace(0, 1, 50)
    assert np.all(np.diff(theory.relative_deviation_bound(ph, 100, 3.0)) > 0)
    ns = np.arange(10, 500)
    assert np.all(np.diff(theory.relative_deviation_bound(0.1, ns, 3.0)) < 0)


def test_union_log_term():
    assert_allclose(theory.union_log_term(1, 10, 0.05), np.log(10) + np.log(4 / 0.05))
    assert_allclose(sum(1 / (k * (k + 1)) for k in range(1, 200_000)), 1.0, atol=1e-5)


# ------------------------------------------------------------------------------------------------
# the bound


def test_bound_properties():
    b = theory.thm_bound(0.05, 0.3, 10_000, 1000, 0.05)
    assert b >= 0.05
    assert theory.thm_bound(0.05, 0.3, 20_000, 1000, 0.05) < b
    assert theory.thm_bound(0.05, 0.3, 10_000, 4000, 0.05) > b
    assert theory.thm_bound(0.05, 0.4, 10_000, 1000, 0.05) < b
    assert theory.thm_bound(0.1, 0.3, 10_000, 1000, 0.05) > b
    k = np.arange(1, 10_001)
    assert_allclose(b, theory.thm_bound_at_k(0.05, 0.3, 10_000, 1000, 0.05, k).min())


def test_corollary_choice_of_k_gives_the_fast_term():
    for n, H, theta in [(10**6, 100, 0.2), (10**7, 10**4, 0.1), (10**8, 50, 0.5)]:
        d = np.log(H) / theta**2
        k = int(np.ceil(8 / theta**2 * np.log(n / d)))
        assert theory.hoeffding_tail(theta / 2, k) <= d / n * (1 + 1e-12)
        b = theory.thm_bound_at_k(0.0, theta, n, H, 0.05, k)
        assert b <= 40 * d * np.log(n / d) / n + 40 * np.log(1 / 0.05) / n


def test_bound_is_vacuous_below_the_capacity():
    assert theory.thm_bound(0.0, 0.3, 100, 2 * 10**4, 0.05) > 1


# ------------------------------------------------------------------------------------------------
# the max-margin LP


def _full_lp(W):
    n, m = W.shape
    c = np.r_[np.zeros(m), -1.0]
    res = optimize.linprog(c, A_ub=np.hstack([-W, np.ones((n, 1))]), b_ub=np.zeros(n),
                           A_eq=np.r_[np.ones(m), 0.0][None], b_eq=[1.0],
                           bounds=[(0, None)] * m + [(None, None)], method="highs")
    return -res.fun


@pytest.mark.parametrize(("n", "N0", "s"), [(6, 5, 0), (10, 40, 1), (20, 300, 2), (30, 2000, 3)])
def test_column_generation_matches_the_full_lp(n, N0, s):
    W0 = model.random_label_instance(n, N0, np.random.default_rng(s)).astype(float)
    sol = model.max_margin_lp(W0, add=4)
    assert_allclose(sol.theta, _full_lp(np.hstack([W0, -W0])), atol=1e-9)
    assert_allclose(sol.dual_value, sol.theta, atol=1e-8)
    margins = W0[:, sol.columns] @ (sol.signs * sol.weights)
    assert_allclose(margins.min(), sol.theta, atol=1e-9)
    assert_allclose(sol.weights.sum(), 1.0, atol=1e-12)
    assert_allclose(sol.q.sum(), 1.0, atol=1e-12)
    assert np.all(sol.q >= 0)


def test_small_case_against_brute_force():
    # 2 points, 2 base columns: the LP value is the best mixture over the 4 signed columns
    W0 = np.array([[1.0, 1.0], [-1.0, 1.0]])
    assert_allclose(model.max_margin_lp(W0).theta, 1.0)  # column 2 is all +1
    W0 = np.array([[1.0, -1.0], [-1.0, 1.0]])
    assert_allclose(model.max_margin_lp(W0).theta, 0.0, atol=1e-12)
    W0 = np.array([[1.0, 1.0, -1.0], [1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]])
    grid = np.linspace(0, 1, 201)
    best = max(min(W0 @ np.array([a, b, 1 - a - b])) for a in grid for b in grid if a + b <= 1)
    assert_allclose(model.max_margin_lp(W0).theta, best, atol=1e-2)
    assert model.max_margin_lp(W0).theta >= best - 1e-12


def test_lp_is_invariant_under_row_permutations():
    W0 = model.random_label_instance(25, 400, np.random.default_rng(9)).astype(float)
    perm = np.random.default_rng(10).permutation(25)
    assert_allclose(model.max_margin_lp(W0[perm]).theta, model.max_margin_lp(W0).theta, atol=1e-9)


def test_certificate_of_the_proposition(margins):
    for i, n in enumerate(margins["n"]):
        cert = np.sqrt(2 * np.log(2 * margins["N0"][i] / 0.05) / n)
        assert np.all(margins["theta"][i] <= cert)


def test_fresh_error_is_a_half_with_ties_as_errors():
    sol = model.MaxMargin(0.1, 0.1, np.array([0, 1]), np.array([1.0, 1.0]), np.array([0.5, 0.5]),
                          np.ones(3) / 3, 1)
    e, se = model.fresh_error(sol, 200_000, np.random.default_rng(0))
    assert abs(e - 0.75) <= 4 * se  # P(tie) = 1/2: error = (1 + 1/2)/2
    sol = model.MaxMargin(0.1, 0.1, np.arange(3), np.array([1.0, -1.0, 1.0]), np.array([0.45, 0.35, 0.2]),
                          np.ones(3) / 3, 1)
    e, se = model.fresh_error(sol, 200_000, np.random.default_rng(1))
    assert abs(e - 0.5) <= 4 * se


# ------------------------------------------------------------------------------------------------
# bad input


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        model.signs_for_margins(np.array([0.5, 0.6]), np.array([0.0]))
    with pytest.raises(ValueError):
        model.signs_for_margins(np.array([0.5, 0.5]), np.array([1.5]))
    with pytest.raises(ValueError):
        model.sparsify(np.array([0.5, 0.5]), np.ones((2, 3)), 4, 10, np.random.default_rng(0))
    with pytest.raises(ValueError):
        model.sparsify(np.array([0.5, 0.5]), np.ones((2, 2)), 0, 10, np.random.default_rng(0))
    with pytest.raises(ValueError):
        model.margin_counts(np.array([[1.5]]), 4)
    with pytest.raises(ValueError):
        model.exact_lower_deviation(10, 0.5, 1.0)
    with pytest.raises(ValueError):
        model.exact_lower_deviation(10, 1.5, 0.1)
    with pytest.raises(ValueError):
        model.random_label_instance(0, 5, np.random.default_rng(0))
    with pytest.raises(ValueError):
        model.fresh_error(model.MaxMargin(0, 0, np.arange(1), np.ones(1), np.ones(1), np.ones(1), 1), 0,
                          np.random.default_rng(0))
    with pytest.raises(ValueError):
        model.erm_error_law(0, 5, 0.2)
    with pytest.raises(ValueError):
        model.erm_error_law(10, 0, 0.2)
    with pytest.raises(ValueError):
        model.erm_error_law(10, 5, 1.5)


# ------------------------------------------------------------------------------------------------
# the claims and their wrong theories


def test_c1_claims_and_their_wrong_theories(sparsified):
    g, ks, cnt, ms = sparsified
    assert cl.claim_sparsification_law("C1", cnt, g, ks).passed
    assert not cl.claim_sparsification_law(
        "C1", cnt, g, ks, theory=variant(theory, sparsified_margin_pmf=theory.wrong_sparsified_margin_pmf)).passed
    assert cl.claim_hoeffding("C1b", ms, g, ks, 0.5).passed
    assert not cl.claim_hoeffding(
        "C1b", ms, g, ks, 0.5, theory=variant(theory, hoeffding_tail=theory.wrong_hoeffding_tail)).passed


def test_c1_detects_a_law_that_ignores_the_sign():
    def flipped(gamma, k):
        return theory.sparsified_margin_pmf(-gamma, k)

    rng = np.random.default_rng(0)
    alpha = rng.dirichlet(np.ones(30))
    H = model.signs_for_margins(alpha, np.array([0.4]))
    m = model.sparsify(alpha, H, 16, 5000, rng)
    g = model.realized_margins(alpha, H)
    c = model.margin_counts(m, 16)
    assert cl.claim_sparsification_law("C1", [c[0]], [g[0]], [16]).passed
    assert not cl.claim_sparsification_law("C1", [c[0]], [g[0]], [16],
                                           theory=variant(theory, sparsified_margin_pmf=flipped)).passed


def test_c2_claims_and_their_wrong_theories(chernoff_grid):
    gn, gp, gd, t, pmfs = chernoff_grid
    assert cl.claim_chernoff("C2", t, gp, gn, np.log(1 / gd)).passed
    assert not cl.claim_chernoff("C2", t, gp, gn, np.log(1 / gd), theory=variant(
        theory, chernoff_deviation=theory.wrong_chernoff_deviation)).passed
    c2b = cl.claim_inversion("C2b", pmfs, gp, gn, gd)
    assert c2b.passed
    assert np.all(c2b.details["ratio"] <= 1)
    assert not cl.claim_inversion("C2b", pmfs, gp, gn, gd, theory=variant(
        theory, relative_deviation_bound=theory.wrong_relative_deviation_bound)).passed


def test_c1c_claim_and_its_wrong_theory():
    grid = [(g, t, k) for g in np.linspace(0.05, 0.95, 19) for t in (0.1, 0.3, 0.5, 1.0)
            for k in 2 ** np.arange(10) if g > t / 2]
    g, t, k = (np.array(v) for v in zip(*grid, strict=True))
    tails = np.array([model.exact_margin_tail(int(kk), gg, tt / 2) for gg, tt, kk in grid])
    assert cl.claim_hoeffding_exact("C1c", tails, g, t, k).passed
    assert not cl.claim_hoeffding_exact("C1c", tails, g, t, k, theory=variant(
        theory, hoeffding_tail=theory.wrong_hoeffding_tail)).passed


def test_exact_margin_tail_matches_simulation(sparsified):
    g, ks, _, ms = sparsified
    for gg, k, m in zip(g, ks, ms, strict=True):
        p = model.exact_margin_tail(k, gg, 0.25)
        assert abs(np.mean(m <= 0.25 + 1e-12) - p) <= 4.5 * np.sqrt(p * (1 - p) / m.size) + 1e-12


def test_c3_claims_and_their_wrong_theories(margins):
    th, n, N0 = margins["theta"], margins["n"], margins["N0"]
    assert cl.claim_margin_rate("C3", th, n, N0).passed
    assert not cl.claim_margin_rate("C3", th, n, N0,
                                    theory=variant(theory, margin_scale=theory.wrong_margin_scale)).passed
    pool = {}
    for nn in (32, 64):
        for a in (1.5, 2.0, 2.5):
            NN = int(round(nn**a))
            pool[(nn, NN)] = [model.max_margin_lp(model.random_label_instance(
                nn, NN, rng_for(0, "C3b", str(a), str(nn), str(r)))).theta for r in range(6)]
    assert cl.claim_margin_constant("C3b", pool).passed

    def log_n0(n, N0):
        return float(np.sqrt(np.log(N0) / n))

    assert not cl.claim_margin_constant("C3b", pool, theory=variant(theory, margin_scale=log_n0)).passed


def test_c3_slope_is_exact_on_synthetic_data():
    n = np.array([16, 32, 64, 128])
    N0 = n**2
    scale = np.array([theory.margin_scale(a, b) for a, b in zip(n, N0, strict=True)])
    rng = np.random.default_rng(0)
    th = 1.3 * scale[:, None] * np.exp(0.01 * rng.standard_normal((4, 8)))
    b, se, _ = cl.margin_slope(th, scale)
    assert abs(b - 1) <= 4 * se
    assert cl.claim_margin_rate("C3", th, n, N0).passed
    assert not cl.claim_margin_rate("C3", th * scale[:, None] ** 0.5, n, N0).passed


def test_c4_claim_and_its_wrong_theory(margins):
    sols, th = margins["sol"], margins["theta"]
    R = th.shape[1]
    err, se = np.zeros_like(th), np.zeros_like(th)
    for i, n in enumerate(margins["n"]):
        for r in range(R):
            err[i, r], se[i, r] = model.fresh_error(sols[i][r], 20_000, rng_for(0, "C4", str(n), str(r)))
    nb = np.repeat(margins["n"][:, None], R, axis=1)
    N0b = np.repeat(margins["N0"][:, None], R, axis=1)
    assert_allclose(err.mean(), 0.5, atol=4 * np.sqrt(0.25 / err.size / 20_000) + 0.01)
    assert cl.claim_bound_consistency("C4", err, se, th, nb, N0b, 0.05).passed
    assert not cl.claim_bound_consistency("C4", err, se, th, nb, N0b, 0.05,
                                          theory=variant(theory, thm_bound=theory.wrong_thm_bound)).passed


# ------------------------------------------------------------------------------------------------
# empirical risk minimization over independent noisy hypotheses (C5)


def test_erm_law_of_one_hypothesis_is_the_binomial():
    assert_allclose(model.erm_error_law(40, 1, 0.3), stats.binom.pmf(np.arange(41), 40, 0.3), atol=1e-14)


@pytest.mark.parametrize(("n", "N0", "p"), [(50, 20, 0.2), (200, 1000, 0.05)])
def test_erm_law_matches_simulated_minima(n, N0, p):
    pmf = model.erm_error_law(n, N0, p)
    assert_allclose(pmf.sum(), 1.0, atol=1e-12)
    assert np.all(pmf >= 0)
    R = 4000
    mins = np.random.default_rng(1).binomial(n, p, size=(R, N0)).min(axis=1)
    mean, sd = pmf @ np.arange(n + 1), np.sqrt(pmf @ np.arange(n + 1) ** 2 - (pmf @ np.arange(n + 1)) ** 2)
    assert abs(mins.mean() - mean) <= 4 * sd / np.sqrt(R)
    cdf = np.cumsum(pmf)
    emp = np.searchsorted(np.sort(mins), np.arange(n + 1), side="right") / R
    assert np.max(np.abs(emp - cdf)) <= 1.95 / np.sqrt(R)  # Kolmogorov 0.999 quantile


def test_erm_law_is_stable_for_huge_classes():
    pmf = model.erm_error_law(1000, 10**15, 0.2)
    assert_allclose(pmf.sum(), 1.0, atol=1e-12)
    tau = pmf @ np.arange(1001) / 1000
    assert 0.2 - np.sqrt(2 * 0.2 * np.log(10**15) / 1000) < tau < 0.2


@pytest.fixture(scope="module")
def erm():
    grid = [(n, N0, p) for n in (1000, 10_000) for N0 in (10**3, 10**15) for p in (0.05, 0.2)]
    n, N0, p = (np.array(v) for v in zip(*grid, strict=True))
    return [model.erm_error_law(*g) for g in grid], p, n, N0


def test_c5_claim_and_its_wrong_theories(erm):
    pmfs, p, n, N0 = erm
    c = cl.claim_erm_bound("C5", pmfs, p, n, N0, 0.05)
    assert c.passed and c.measured == 0.0 and np.all(c.details["slack"] > 0)
    assert not cl.claim_erm_bound("C5", pmfs, p, n, N0, 0.05,
                                  theory=variant(theory, thm_bound=theory.wrong_thm_bound)).passed

    def no_tau(tau, theta, n, H, delta, k_max=10_000):
        return theory.thm_bound(0.0, theta, n, H, delta, k_max)

    def no_class(tau, theta, n, H, delta, k_max=10_000):
        return theory.thm_bound(tau, theta, n, 1, delta, k_max)

    for wrong in (no_tau, no_class):
        assert not cl.claim_erm_bound("C5", pmfs, p, n, N0, 0.05,
                                      theory=variant(theory, thm_bound=wrong)).passed


def test_alternatives_are_declared():
    assert set(CHAPTER.alternatives) == {"A", "B"}
    for alt in CHAPTER.alternatives.values():
        CHAPTER.validate({**DEF, **alt}, strict=True)


# ------------------------------------------------------------------------------------------------
# C6: the ingredients against their exact values


@pytest.fixture(scope="module")
def sharp():
    L, s, th = 400.0, 0.05, 0.04
    ka, kb = 320_000, 2_000_000
    ma, mb = round(ka * (1 - s) / 2), round(kb * (1 + th / 2) / 2)
    n, p = 10**10, 0.01
    return {
        "L": L, "s": s, "th": th, "ka": ka, "kb": kb, "ma": ma, "mb": mb, "n": n, "p": p,
        "lta": model.binomial_log_cdf(ma, ka, 0.5), "ltb": model.binomial_log_cdf(mb, kb, (1 + th) / 2),
        "j": model.lower_quantile_count(n, p, -L), "p0": model.clopper_pearson_upper(0, n, -L),
        "pcp": model.clopper_pearson_upper(round(p * n), n, -L),
    }


def _c6(d, T=theory):
    return [
        cl.claim_hoeffding_sharp("a", d["lta"], d["s"], d["ka"], d["ma"], theory=T),
        cl.claim_eta_sharp("b", d["ltb"], d["th"], d["kb"], d["mb"], theory=T),
        cl.claim_chernoff_sharp("c", d["j"], d["n"], d["p"], d["L"], theory=T),
        cl.claim_inversion_zero("d", d["p0"], d["n"], d["L"], theory=T),
        cl.claim_inversion_sharp("e", d["pcp"], d["p"], d["n"], d["L"], theory=T),
    ]


def test_c6_claims_hold(sharp):
    assert all(c.passed for c in _c6(sharp))


@pytest.mark.parametrize(("idx", "name", "wrong"), [
    (0, "hoeffding_tail", theory.wrong_hoeffding_tail),
    (1, "thm_bound_at_k", theory.wrong_thm_bound_at_k),
    (2, "chernoff_deviation", theory.wrong_chernoff_deviation),
    (3, "relative_deviation_bound", theory.wrong_relative_deviation_bound),
    (4, "relative_deviation_bound", theory.wrong_relative_deviation_additive),
])
def test_c6_claims_reject_their_wrong_theories(sharp, idx, name, wrong):
    res = _c6(sharp, variant(theory, **{name: wrong}))
    assert not res[idx].passed


@pytest.mark.parametrize("factor", [0.5, 2 / 3, 1.5, 2.0])
def test_c6_rejects_looser_and_tighter_constants(sharp, factor):
    """A Hoeffding or Chernoff constant off by the factor leaves the bracket in either direction."""
    def tail(gap, k):
        return np.exp(-factor * k * gap**2 / 2)

    def dev(p, n, L):
        return np.sqrt(2 * factor * p * L / n)

    res = _c6(sharp, variant(theory, hoeffding_tail=tail, chernoff_deviation=dev))
    assert not res[0].passed and not res[2].passed


def test_c6b_rejects_the_eta_mutants(sharp):
    """eta_k at theta/4, theta/3, theta and 2 theta leaves the bracket of C6b."""
    for c in (4, 3, 1, 0.5):
        def bound(tau, theta, n, H, delta, k, c=c):
            eta = theory.hoeffding_tail(theta / c, k)
            return eta + theory.relative_deviation_bound(tau + eta, n, theory.union_log_term(k, H, delta))

        assert not _c6(sharp, variant(theory, thm_bound_at_k=bound))[1].passed


def test_binomial_log_slack_bounds_the_exact_tail():
    """ln(1/P) <= k s^2/2 + slack on random (k, gamma, s) with an integer threshold count."""
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(200):
        k = int(rng.integers(10, 5000))
        m = int(rng.integers(1, k))
        gamma = float(rng.uniform(2 * m / k - 1, 1))
        s = gamma - (2 * m / k - 1)
        if s <= 0 or gamma >= 1:
            continue
        u = max(abs(gamma), abs(gamma - s))
        if u >= 1:
            continue
        E = -stats.binom.logcdf(m, k, (1 + gamma) / 2)
        if not np.isfinite(E):
            continue
        assert k * s**2 / 2 <= E + 1e-9
        assert E <= k * s**2 / 2 + cl._binomial_log_slack(m, k, s, u) + 1e-9
        checked += 1
    assert checked >= 20


def test_lower_quantile_count_matches_the_tabulated_cdf():
    for n, p, d in [(50, 0.1, 0.05), (1000, 0.3, 1e-3), (5000, 0.01, 0.05)]:
        j = model.lower_quantile_count(n, p, np.log(d))
        assert_allclose(p - j / n, model.exact_lower_deviation(n, p, d), atol=1e-15)


def test_clopper_pearson_upper_is_the_root():
    for j, n, L in [(0, 100, 3.0), (5, 100, 3.0), (100, 10**6, 20.0)]:
        p = model.clopper_pearson_upper(j, n, -L)
        assert_allclose(stats.binom.logcdf(j, n, p), -L, rtol=1e-9)
    with pytest.raises(ValueError):
        model.clopper_pearson_upper(5, 5, -1.0)
    with pytest.raises(ValueError):
        model.clopper_pearson_upper(1, 5, 0.5)


def test_sparsification_events_counts():
    H = np.array([[1, -1]])
    assert [model.sparsification_events(H, k) for k in (1, 2, 3)] == [(2, 2), (4, 3), (8, 4)]
    H1 = np.array([[1, 1]])  # one sign only: a single level
    assert model.sparsification_events(H1, 3) == (8, 1)
    with pytest.raises(ValueError):
        model.sparsification_events(np.ones((1, 20)), 6)


def _union_spend(H, tuples, levels, delta, T=theory):
    """sum_k tuples_k levels_k exp(-Lambda_k) / delta, term by term (item 5 of the sharpness lemma)."""
    return np.array([t * lv * np.exp(-float(T.union_log_term(k, H, delta)))
                     for k, (t, lv) in enumerate(zip(tuples, levels, strict=True), start=1)]) / delta


def test_union_allotment_by_enumeration():
    """Lambda_k spends exactly delta/(k (k + 1)) on the |H|^k ordered draws and k + 1 levels of size k.

    An identity by construction (the definition of Lambda_k), hence a unit test and not a claim: the
    counts are enumerated on a class of four hypotheses (two and their negations, on three points).
    """
    H = np.array([[1, 1, -1, -1], [1, -1, -1, 1], [-1, 1, 1, -1]])
    ev = [model.sparsification_events(H, k) for k in range(1, 7)]
    tup, lev = [e[0] for e in ev], [e[1] for e in ev]
    assert tup == [4**k for k in range(1, 7)] and lev == [k + 1 for k in range(1, 7)]
    for delta in (0.05, 1e-3):
        spend = _union_spend(4, tup, lev, delta)
        assert_allclose(spend, [1 / (k * (k + 1)) for k in range(1, 7)], rtol=1e-12)
        assert_allclose(spend.sum(), 6 / 7, rtol=1e-12)
        wrong = _union_spend(4, tup, lev, delta, variant(theory, union_log_term=theory.wrong_union_log_term))
        assert wrong.sum() > 10


def test_union_allotment_for_any_class_size():
    for H in (2, 7, 1000):
        spend = _union_spend(H, [H**k for k in range(1, 9)], [k + 1 for k in range(1, 9)], 0.01)
        assert_allclose(spend, [1 / (k * (k + 1)) for k in range(1, 9)], rtol=1e-12)


def test_eta_is_read_off_the_large_n_limit():
    for th, k in [(0.3, 50), (0.04, 2000)]:
        eta = theory.thm_bound_at_k(0.0, th, 1e300, 2, 0.5, k) / 2
        assert_allclose(eta, theory.hoeffding_tail(th / 2, k), rtol=1e-12)
