"""Tests of chapter 'self-improvement-filtered-mle': the theory, the model, and one mutation test per claim."""

import numpy as np
import pytest
from scipy import stats

from theorylib.chapters.self_improvement_filtered_mle import CHAPTER, claims, model, theory
from theorylib.core import rng_for
from theorylib.core.theory import variant

D = CHAPTER.defaults()
SIG, TAU, d = D["sigma"], D["tau"], D["d"]
NMIN = 2 * d
KS = (1, 2, 4)
E0 = D["e0"]


# ---------------------------------------------------------------- theory


def test_acceptance_rate_properties():
    kappa, s2 = theory.constants(SIG, TAU)
    np.testing.assert_allclose(theory.acceptance_rate(0.0, SIG, TAU), np.sqrt(kappa), rtol=1e-15)
    e = np.linspace(0, 50, 101)
    assert np.all(np.diff(theory.acceptance_rate(e, SIG, TAU)) < 0)
    np.testing.assert_allclose(theory.acceptance_rate(10.0, 1.0, 1e4), 1.0, atol=1e-6)
    np.testing.assert_allclose(theory.acceptance_rate(10.0, SIG, TAU, 3),
                               theory.acceptance_rate(10.0, SIG, TAU) ** 3, rtol=1e-14)
    # the average over prompts by quadrature: E exp(-Z^2/2s^2), Z ~ N(0, e)
    z, w = np.polynomial.hermite_e.hermegauss(80)
    quad = np.sqrt(kappa) * np.sum(w * np.exp(-10.0 * z**2 / (2 * s2))) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(theory.acceptance_rate(10.0, SIG, TAU), quad, rtol=1e-12)


def test_constants_match_the_gaussian_product():
    # int N(y; mu, sigma^2) exp(-(y - mu*)^2 / 2 tau^2) dy = sqrt(kappa) exp(-(mu - mu*)^2 / 2 s^2)
    kappa, s2 = theory.constants(0.7, 1.3)
    y = np.linspace(-30, 30, 200001)
    mu, mus = 0.8, -0.4
    f = stats.norm.pdf(y, mu, 0.7) * np.exp(-((y - mus) ** 2) / (2 * 1.3**2))
    np.testing.assert_allclose(np.trapezoid(f, y), np.sqrt(kappa) * np.exp(-((mu - mus) ** 2) / (2 * s2)),
                               rtol=1e-9)
    # the posterior mean puts weight kappa on mu and has variance kappa sigma^2
    Z = np.trapezoid(f, y)
    np.testing.assert_allclose(np.trapezoid(y * f, y) / Z, mus + kappa * (mu - mus), rtol=1e-9)
    m = mus + kappa * (mu - mus)
    np.testing.assert_allclose(np.trapezoid((y - m) ** 2 * f, y) / Z, kappa * 0.7**2, rtol=1e-8)
    assert theory.shrinkage(0.7, 1.3) == kappa


@pytest.mark.parametrize("counts", [{1: 100}, {4: 50}, {1: 34, 2: 33, 4: 33}, {2: 7, 3: 0}])
def test_pairs_pmf(counts):
    if set(counts) == {4}:  # only multiples of 4 pairs are possible
        pmf = theory.pairs_pmf(10.0, counts, SIG, TAU)
        assert np.all(pmf[np.arange(pmf.size) % 4 != 0] == 0)
    pmf = theory.pairs_pmf(10.0, counts, SIG, TAU)
    np.testing.assert_allclose(pmf.sum(), 1.0, atol=1e-12)
    assert pmf.size == sum(k * v for k, v in counts.items()) + 1
    mean = sum(v * k * float(theory.acceptance_rate(10.0, SIG, TAU, k)) for k, v in counts.items())
    np.testing.assert_allclose(np.arange(pmf.size) @ pmf, mean, rtol=1e-12)


def test_one_step_mean_without_any_update_is_the_identity():
    # 4 * 10 hard tasks give at most 40 pairs: below N_min = 48 (d = 24), no update can ever happen
    assert theory.one_step_mean(7.0, {4: 10}, 24, SIG, TAU, 48) == pytest.approx(7.0, rel=1e-15)


def test_one_step_mean_in_the_concentration_regime():
    e = 2.0
    kappa, s2 = theory.constants(SIG, TAU)
    F = theory.one_step_mean(e, {1: 100_000}, d, SIG, TAU, NMIN)
    EN = 100_000 * float(theory.acceptance_rate(e, SIG, TAU))
    np.testing.assert_allclose(F, kappa**2 * e + kappa * SIG**2 * (d + e / s2) / (EN - d - 1), rtol=1e-6)


def test_fixed_point_and_plateau_bounds():
    kappa, _ = theory.constants(SIG, TAU)
    for n in (100, 400, 3200):
        e_star = theory.mean_field_fixed_point(n, 1, d, SIG, TAU, NMIN)
        np.testing.assert_allclose(theory.one_step_mean(e_star, {1: n}, d, SIG, TAU, NMIN), e_star, rtol=1e-9)
        assert e_star >= kappa * SIG**2 * d / ((1 - kappa**2) * (n - d - 1))  # the proved lower bound
    limit = np.sqrt(kappa) * SIG**2 * d / (1 - kappa**2)
    np.testing.assert_allclose(102_400 * theory.mean_field_fixed_point(102_400, 1, d, SIG, TAU, NMIN), limit,
                               rtol=2e-3)
    assert np.isnan(theory.mean_field_fixed_point(10, 4, 24, SIG, TAU, 48))


def test_data_optimal_difficulty_and_boundaries():
    # k* switches 1 -> 2 at J = 1/2 and 2 -> 4 at J = 1/sqrt(2): J_b = (k_i / k_j)^(1 / (k_j - k_i))
    for jb, before, after in ((0.5, 1, 2), (1 / np.sqrt(2), 2, 4)):
        assert theory.data_optimal_difficulty(jb - 1e-9, KS) == before
        assert theory.data_optimal_difficulty(jb + 1e-9, KS) == after
    assert theory.data_optimal_difficulty(0.5, KS) == 1  # tie goes to the smaller k
    assert theory.data_optimal_difficulty(0.0, KS) == 1
    ks = (1, 2, 3, 5)
    grid = np.linspace(0.01, 0.99, 300)
    kstar = [theory.data_optimal_difficulty(j, ks) for j in grid]
    assert np.all(np.diff(kstar) >= 0)  # easy-to-hard


def test_stall_probability_against_the_binomial():
    J4 = float(theory.acceptance_rate(40.0, SIG, TAU, 4))
    q = stats.binom.cdf(4, 100, J4)  # 4 M < 20 iff M <= 4
    np.testing.assert_allclose(theory.stall_probability(40.0, 100, 4, d, SIG, TAU, 12, NMIN), q**12, rtol=1e-12)


def test_mean_field_paths():
    hard = theory.mean_field_path(40.0, {4: 100}, 12, 100, KS, d, SIG, TAU, NMIN)
    greedy = theory.mean_field_path(40.0, "greedy", 12, 100, KS, d, SIG, TAU, NMIN)
    easy = theory.mean_field_path(40.0, {1: 100}, 3, 100, KS, d, SIG, TAU, NMIN)
    assert hard[0] == greedy[0] == 40.0 and hard.size == 13
    assert greedy[-1] < hard[-1]
    np.testing.assert_allclose(greedy[1], easy[1], rtol=1e-15)  # greedy starts easy
    e = 40.0
    for t in range(3):
        e = theory.one_step_mean(e, {1: 100}, d, SIG, TAU, NMIN)
        np.testing.assert_allclose(easy[t + 1], e, rtol=1e-15)
    with pytest.raises(ValueError):
        theory.mean_field_path(40.0, "random", 12, 100, KS, d, SIG, TAU, NMIN)


def test_fixed_point_gap_has_one_sign_change():
    # the bracket of mean_field_fixed_point cannot matter: F(e) - e changes sign once, at the corners of
    # the allowed parameter ranges
    for dd, sig, tau, n in ((4, 0.5, 4.0, 100), (16, 2.0, 1.0, 3200), (16, 2.0, 1.0, 290), (10, 0.8, 1.6, 100)):
        grid = np.concatenate([np.geomspace(1e-4, 1, 40), np.linspace(1, 400, 80)])
        g = [theory.one_step_mean(e, {1: n}, dd, sig, tau, 2 * dd) - e for e in grid]
        assert np.sum(np.diff(np.sign(g)) != 0) == 1


@pytest.mark.parametrize("call", [
    lambda: theory.constants(0.0, 1.0),
    lambda: theory.constants(1.0, -1.0),
    lambda: theory.acceptance_rate(-1.0, 1.0, 1.0),
    lambda: theory.acceptance_rate(1.0, 1.0, 1.0, k=0),
    lambda: theory.pairs_pmf(1.0, {}, 1.0, 1.0),
    lambda: theory.pairs_pmf(1.0, {1: -3}, 1.0, 1.0),
    lambda: theory.one_step_mean(1.0, {1: 10}, 10, 1.0, 1.0, 5),
    lambda: theory.data_optimal_difficulty(1.5, KS),
    lambda: model.simulate_round(np.zeros((3, 4)), np.zeros((3, 5)), {1: 10}, 1.0, 1.0, 8, rng_for(0, "x")),
    lambda: model.simulate_round(np.zeros((3, 4)), np.zeros((3, 4)), {1: 10}, -1.0, 1.0, 8, rng_for(0, "x")),
    lambda: model.simulate_round(np.zeros((3, 4)), np.zeros((3, 4)), {0: 10}, 1.0, 1.0, 8, rng_for(0, "x")),
    lambda: model.simulate_round(np.zeros((3, 4)), np.zeros((3, 4)), {1: 10}, 1.0, 1.0, 3, rng_for(0, "x")),
    lambda: model.random_direction_state(3, 4, -1.0, rng_for(0, "x")),
    lambda: model.run_schedule(np.zeros((3, 4)), np.zeros((3, 4)), "random", 2, 10, KS, 1.0, 1.0, 8,
                               rng_for(0, "x")),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------- model


def test_round_skips_without_enough_pairs_and_is_deterministic():
    th, ts = model.random_direction_state(50, 10, 40.0, rng_for(0, "skip"))
    new, N, M = model.simulate_round(th, ts, {4: 5}, SIG, TAU, 21, rng_for(1, "skip"))
    assert np.all(N < 21) and np.array_equal(new, th)  # 20 pairs at most
    a = model.simulate_round(th, ts, {1: 100}, SIG, TAU, 20, rng_for(2, "det"))
    b = model.simulate_round(th, ts, {1: 100}, SIG, TAU, 20, rng_for(2, "det"))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[1], a[2][1])  # k = 1: N = M


def test_round_is_least_squares_on_the_accepted_pairs():
    # with a verifier that accepts everything (tau huge) the update is OLS on all pairs: noise energy
    # E |delta' - delta|^2 (N - d - 1) = sigma^2 d exactly (kappa = 1, no tilt)
    th, ts = model.random_direction_state(4000, 5, 3.0, rng_for(0, "ols"))
    new, N, _ = model.simulate_round(th, ts, {1: 40}, 1.0, 1e6, 10, rng_for(1, "ols"))
    assert np.all(N == 40)
    en = np.sum((new - th) ** 2, axis=1) * (40 - 5 - 1)
    assert abs(en.mean() - 5.0) < 3.29 * en.std() / np.sqrt(en.size)


def test_accepted_prompts_have_the_tilted_covariance():
    # d = 2, many one-prompt tasks: the accepted x are N(0, (I + delta delta^T / s^2)^{-1})
    theta_star = np.zeros((1, 2))
    theta = np.array([[3.0, 0.0]])
    X, _, w, _ = model._verify(theta, theta_star, {1: 200_000}, SIG, TAU, rng_for(0, "tilt"))
    acc = X[0][w[0] > 0]
    _, s2 = theory.constants(SIG, TAU)
    cov = np.linalg.inv(np.eye(2) + np.outer(theta[0], theta[0]) / s2)
    emp = acc.T @ acc / acc.shape[0]
    se = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / acc.shape[0])
    assert np.all(np.abs(emp - cov) < 4 * se)


def test_greedy_rule_and_mixture_counts():
    M = np.array([0, 50, 90, 60])
    k = model.greedy_difficulty(M, np.array([1, 1, 1, 2]), 100, KS)
    # J_hat = 0, 0.5 (tie 1 vs 2 -> 1), 0.9 -> 4, sqrt(0.6) = 0.775 -> 4
    np.testing.assert_array_equal(k, [1, 1, 4, 4])
    assert model.mixture_counts(100, KS) == {1: 34, 2: 33, 4: 33}


def test_run_schedule_shapes_and_hard_stall():
    th, ts = model.random_direction_state(30, 10, 40.0, rng_for(0, "sched"))
    path, upd, used = model.run_schedule(th, ts, "greedy", 4, 100, KS, SIG, TAU, 20, rng_for(1, "sched"))
    assert path.shape == (5, 30, 10) and upd.shape == (30,) and used.shape == (4, 30)
    assert np.all(used[0] == 1)
    path, upd, _ = model.run_schedule(th, ts, lambda t: {4: 4}, 3, 4, KS, SIG, TAU, 20, rng_for(2, "s"))
    assert np.all(upd == 0) and np.array_equal(path[-1], th)  # 16 pairs < 20: never an update


# ---------------------------------------------------------------- claims and their wrong theories


@pytest.fixture(scope="module")
def acceptance():
    out = {}
    for e in (1.0, 10.0, 40.0):
        for k in KS:
            rng = rng_for(0, "C1", f"{e:g}", str(k))
            th, ts = model.random_direction_state(200, d, e, rng)
            out[e, k] = model.accepted_tasks(th, ts, k, 100, SIG, TAU, rng)
    return out


def test_c1_holds(acceptance):
    assert claims.claim_acceptance("C1", acceptance, 100, SIG, TAU).passed


@pytest.mark.parametrize("wrong", ["wrong_acceptance_rate_plugin", "wrong_acceptance_rate_no_temperature"])
def test_c1_rejects_wrong(acceptance, wrong):
    bad = variant(theory, acceptance_rate=getattr(theory, wrong))
    assert not claims.claim_acceptance("C1", acceptance, 100, SIG, TAU, theory=bad).passed


@pytest.fixture(scope="module")
def onestep():
    out = {}
    for e in (2.0, 10.0, 40.0):
        for name, counts in {"k=1": {1: 100}, "k=4": {4: 100}, "mix": model.mixture_counts(100, KS)}.items():
            rng = rng_for(0, "C2", f"{e:g}", name)
            th, ts = model.random_direction_state(1500, d, e, rng)
            new, N, _ = model.simulate_round(th, ts, counts, SIG, TAU, NMIN, rng)
            out[e, name] = (e, counts, th, new, ts, N)
    return out


def _energy_runs(onestep):
    cells = ((2.0, "k=1"), (40.0, "k=1"), (2.0, "k=4"), (10.0, "k=4"))
    return [(e, th, new, ts, N) for (e, _, th, new, ts, N) in (onestep[c] for c in cells)]


def _mean_runs(onestep):
    return [v for (e, name), v in onestep.items() if e < 40.0 or name == "k=1"]


def test_c2_holds(onestep):
    assert claims.claim_noise_energy("C2", _energy_runs(onestep), d, SIG, TAU, NMIN).passed
    assert claims.claim_one_step_mean("C2b", _mean_runs(onestep), d, SIG, TAU, NMIN).passed


@pytest.mark.parametrize("wrong", ["wrong_conditional_noise_no_tilt", "wrong_conditional_noise_unfiltered_variance",
                                   "wrong_conditional_noise_plain_n"])
def test_c2_rejects_wrong(onestep, wrong):
    bad = variant(theory, conditional_noise=getattr(theory, wrong))
    assert not claims.claim_noise_energy("C2", _energy_runs(onestep), d, SIG, TAU, NMIN, theory=bad).passed


def test_c2_rejects_no_shrinkage(onestep):
    bad = variant(theory, shrinkage=lambda sigma, tau: 1.0)
    assert not claims.claim_noise_energy("C2", _energy_runs(onestep), d, SIG, TAU, NMIN, theory=bad).passed


def test_c2b_rejects_wrong(onestep):
    bad = variant(theory, one_step_mean=theory.wrong_one_step_mean_no_filter_loss)
    assert not claims.claim_one_step_mean("C2b", _mean_runs(onestep), d, SIG, TAU, NMIN, theory=bad).passed


@pytest.fixture(scope="module")
def plateau():
    ns = [100, 200, 400, 800]
    ebar = np.empty((80, len(ns)))
    for j, nn in enumerate(ns):
        errs = model.plateau_errors(nn, 24, 80, d, SIG, TAU, NMIN, rng_for(0, "C3", str(nn)))
        ebar[:, j] = errs[9:].mean(axis=0)
    return ns, ebar


def test_c3_holds_and_rejects_sqrt_plateau(plateau):
    ns, ebar = plateau
    c = claims.claim_plateau_slope("C3", ns, ebar, d, SIG, TAU, NMIN, 1000, rng_for(0, "boot"))
    assert c.passed
    bad = variant(theory, mean_field_fixed_point=theory.wrong_mean_field_fixed_point)
    c = claims.claim_plateau_slope("C3", ns, ebar, d, SIG, TAU, NMIN, 1000, rng_for(0, "boot"), theory=bad)
    assert not c.passed
    np.testing.assert_allclose(c.predicted, -0.5, rtol=1e-12)


@pytest.fixture(scope="module")
def curriculum():
    out = {}
    for sch in model.SCHEDULES:
        rng = rng_for(0, "C4", sch)
        th, ts = model.random_direction_state(150, d, E0, rng)
        path, upd, _ = model.run_schedule(th, ts, sch, 12, 100, KS, SIG, TAU, NMIN, rng)
        out[sch + "_design"] = "greedy" if sch == "greedy" else {"hard": {4: 100}, "easy": {1: 100},
                                                                  "mixture": model.mixture_counts(100, KS)}[sch]
        out[sch] = (upd, model.accepted_tasks(path[-1], ts, 4, 500, SIG, TAU, rng) / 500)
    return out


def test_c4_stall_holds_and_rejects_wrong(curriculum):
    upd = curriculum["hard"][0]
    assert claims.claim_stall("C4a", upd, E0, 100, 4, d, SIG, TAU, 12, NMIN).passed
    bad = variant(theory, stall_probability=theory.wrong_stall_probability)
    assert not claims.claim_stall("C4a", upd, E0, 100, 4, d, SIG, TAU, 12, NMIN, theory=bad).passed


def test_c4_stall_at_an_intermediate_budget_rejects_an_off_by_one_threshold():
    # at n_stall tasks per round q^T is near 1/2, where the claim resolves P(N < N_min) from P(N <= N_min)
    ns = D["n_stall"]
    rng = rng_for(3, "C4a", str(ns))
    th, ts = model.random_direction_state(200, d, E0, rng)
    _, upd, _ = model.run_schedule(th, ts, "hard", 12, ns, KS, SIG, TAU, NMIN, rng)
    q_T = theory.stall_probability(E0, ns, 4, d, SIG, TAU, 12, NMIN)
    assert 0.2 < q_T < 0.8
    assert claims.claim_stall("C4a", upd, E0, ns, 4, d, SIG, TAU, 12, NMIN).passed

    def off_by_one(e0, n, K, d, sigma, tau, T, n_min):
        return float(theory.pairs_pmf(e0, {K: n}, sigma, tau)[:n_min + 1].sum()) ** T

    bad = variant(theory, stall_probability=off_by_one)
    assert not claims.claim_stall("C4a", upd, E0, ns, 4, d, SIG, TAU, 12, NMIN, theory=bad).passed


@pytest.mark.parametrize("other", ["mixture", "easy"])
def test_c4_curriculum_holds_and_rejects_population_theory(curriculum, other):
    args = (E0, 12, 100, KS, d, SIG, TAU, NMIN)
    g, o, des = curriculum["greedy"][1], curriculum[other][1], curriculum[other + "_design"]
    assert claims.claim_curriculum("C4", g, o, "greedy", des, *args).passed
    bad = variant(theory, mean_field_path=theory.wrong_mean_field_path_population)
    c = claims.claim_curriculum("C4", g, o, "greedy", des, *args, theory=bad)
    assert not c.passed and c.details["gap"] == 0.0
    # the ordering is tested in both directions: swapped schedules pass, swapped data fail
    assert claims.claim_curriculum("C4", o, g, des, "greedy", *args).passed
    assert not claims.claim_curriculum("C4", o, g, "greedy", des, *args).passed
