"""Tests of chapter 'data-mixing-skills': the theory, the model, and one mutation test per claim."""

import numpy as np
import pytest

from theorylib.chapters.data_mixing_skills import claims, model, theory
from theorylib.core import rng_for
from theorylib.core.theory import variant

M, M0, SIG = [16, 24], 8, np.array([0.5, 1.5])
PI = np.array([0.5, 0.5])


@pytest.fixture(scope="module")
def full():
    var = model.skill_variances(M0, M, 0.5, 0.3, 0.6)
    theta = model.skill_signs(rng_for(0, "theta"), var.shape[1])
    return var, theta


@pytest.fixture(scope="module")
def cap():
    var = model.skill_variances(M0, [300, 300], 0.5, 0.3, 0.6)
    theta = model.skill_signs(rng_for(0, "theta_cap"), var.shape[1])
    configs = [[4000, 16000, 60], [16000, 4000, 120], [10000, 10000, 60], [40000, 10000, 60]]
    counts, ex, left = model.capacity_fits(rng_for(0, "C3"), configs, var, SIG, theta, 4)
    return var, configs, counts, ex, left


@pytest.fixture(scope="module")
def noise_curve(full):
    var, theta = full
    D = 240
    grid = np.arange(32, 207, 8)
    ex = model.ols_excess(rng_for(0, "C4"), np.c_[grid, D - grid], var, SIG, theta, 1000) @ PI
    return D, grid, ex


# ------------------------------------------------------------------ theory
def test_exact_excess_without_shared_skills_is_the_ols_formula():
    n = np.array([40, 70])
    np.testing.assert_allclose(theory.exact_excess(n, M, 0, SIG),
                               SIG**2 * np.array(M) / (n - np.array(M) - 1), rtol=1e-14)


def test_exact_excess_with_equal_noise_is_the_pooled_formula():
    n, s = np.array([50, 90]), np.array([1.3, 1.3])
    n_eff = np.sum(n - np.array(M))
    d0 = M0 * 1.69 / (n_eff - M0 - 1)
    np.testing.assert_allclose(theory.exact_excess(n, M, M0, s),
                               d0 + (1.69 + d0) * np.array(M) / (n - np.array(M) - 1), rtol=1e-14)


def test_exact_excess_weights_noise_by_residual_degrees_of_freedom():
    n = np.array([30, 200])
    omega = ((30 - 16) * 0.25 + (200 - 24) * 2.25) / (30 - 16 + 200 - 24)
    d0 = M0 * omega / (30 - 16 + 200 - 24 - M0 - 1)
    np.testing.assert_allclose(theory.exact_excess(n, M, M0, SIG)[0],
                               d0 + (0.25 + d0) * 16 / (30 - 16 - 1), rtol=1e-14)


@pytest.mark.parametrize("n, m0, sigma", [([17, 60], 8, SIG), ([40, 25], 8, SIG),
                                          ([18, 26], 8, SIG), ([40, 60], 8, [0.5, -1.0])])
def test_exact_excess_rejects_bad_input(n, m0, sigma):
    with pytest.raises(ValueError):
        theory.exact_excess(n, M, m0, sigma)


def test_grid_optimum_matches_the_closed_form_without_shared_skills():
    D, pi = 300, np.array([0.3, 0.7])
    grid = np.arange(M[0] + 2, D - M[1] - 1)
    a = SIG * np.sqrt(pi * np.array(M))
    n1 = M[0] + 1 + (D - sum(M) - 2) * a[0] / a.sum()
    assert abs(theory.grid_optimum(D, grid, M, 0, SIG, pi) - n1) <= 1


def test_grid_optimum_is_symmetric_under_swapping_the_domains():
    D, grid = 240, np.arange(40, 201)
    n1 = theory.grid_optimum(D, grid, [20, 20], M0, np.array([0.5, 1.5]), PI)
    n1s = theory.grid_optimum(D, grid, [20, 20], M0, np.array([1.5, 0.5]), PI)
    assert n1 + n1s == D
    assert n1 < D // 2  # the noisier domain 2 gets more data


def test_zipf_allocation_sums_and_grows_with_the_weight():
    a = [theory.zipf_allocation(60, 8, [w, 1 - w], 0.6) for w in (0.2, 0.5, 0.8)]
    for x in a:
        np.testing.assert_allclose(x.sum(), 52, rtol=1e-14)
    assert a[0][0] < a[1][0] < a[2][0]
    np.testing.assert_allclose(a[1], [26, 26])
    g = 1 / 1.6
    np.testing.assert_allclose(a[2][0], 52 * 0.8**g / (0.8**g + 0.2**g), rtol=1e-14)


@pytest.mark.parametrize("N, w", [(8, [0.5, 0.5]), (60, [0.6, 0.6]), (60, [1.0, 0.0])])
def test_zipf_allocation_rejects_bad_input(N, w):
    with pytest.raises(ValueError):
        theory.zipf_allocation(N, 8, w, 0.6)


def test_population_counts_within_one_of_the_zipf_law():
    var = model.skill_variances(M0, [300, 300], 0.5, 0.3, 0.6)
    rng = rng_for(0, "prop")
    for _ in range(100):
        w1 = rng.uniform(0.1, 0.9)
        N = int(rng.integers(20, 200))
        counts, _ = theory.population_selection(var, [w1, 1 - w1], N)
        assert counts.sum() == N - M0
        assert np.all(np.abs(counts - theory.zipf_allocation(N, M0, [w1, 1 - w1], 0.6)) < 1)


def test_population_tail_obeys_the_continuum_bound():
    c, a, Ms = 0.3, 0.6, 300
    var = model.skill_variances(M0, [Ms, Ms], 0.5, c, a)
    for w1 in (0.2, 0.5, 0.8):
        for N in (30, 60, 120):
            _, tails = theory.population_selection(var, [w1, 1 - w1], N)
            Nk = theory.zipf_allocation(N, M0, [w1, 1 - w1], a)
            cont = theory.continuum_tail(Nk, c, a, Ms)
            np.testing.assert_allclose(cont, c / a * (Nk**-a - Ms**-a), rtol=1e-14)
            assert np.all(np.abs(tails - cont) < 2 * c * (Nk - 1) ** -(1 + a))


def test_evaluation_mixture_is_optimal_at_infinite_data():
    var = model.skill_variances(M0, [300, 300], 0.5, 0.3, 0.6)
    rng = rng_for(0, "inf")
    for pi1 in (0.3, 0.5, 0.7):
        pi = np.array([pi1, 1 - pi1])
        best = pi @ theory.population_selection(var, pi, 60)[1]
        for w1 in rng.uniform(0.05, 0.95, 200):
            assert best <= pi @ theory.population_selection(var, [w1, 1 - w1], 60)[1] + 1e-15


def test_noise_term_leading_order():
    out = theory.noise_term(np.array([0.25, 0.75]), 1000, np.array([10, 20]), np.array([0.1, 0.2]),
                            np.array([1.0, 2.0]), 4)
    s = np.array([1.1, 4.2])
    np.testing.assert_allclose(out, (4 * (0.25 * 1.1 + 0.75 * 4.2) + np.array([10, 20]) * s
                                     / np.array([0.25, 0.75])) / 1000, rtol=1e-14)


def test_mixing_law_is_the_tail_plus_the_noise_term():
    w, N, D, c, a, s2, Ms = np.array([0.3, 0.7]), 60, 5000, 0.3, 0.6, np.array([0.25, 2.25]), 300
    g = 1 / (1 + a)
    Nk = (N - M0) * w**g / np.sum(w**g)
    A = c / a * (Nk**-a - Ms**-a)
    s = s2 + A
    want = s2 + A + (M0 * np.sum(w * s) + Nk * s / w) / D
    np.testing.assert_allclose(theory.mixing_law(w, N, D, c, a, s2, M0, Ms), want, rtol=1e-13)
    wrong = theory.wrong_mixing_law_proportional(w, N, D, c, a, s2, M0, Ms)
    Nk1 = (N - M0) * w
    A1 = c / a * (Nk1**-a - Ms**-a)
    np.testing.assert_allclose(wrong, s2 + A1 + (M0 * np.sum(w * (s2 + A1)) + (N - M0) * (s2 + A1)) / D,
                               rtol=1e-13)


def test_capacity_split_minimizes_the_weighted_capacity_loss():
    """N_k(w) minimizes sum_k w_k (c / alpha) x_k^{-alpha} over x_1 + x_2 = N - m0 (the paper's inner
    allocation problem)."""
    rng = rng_for(0, "inner")
    for w1 in (0.2, 0.5, 0.8):
        w = np.array([w1, 1 - w1])
        x = theory.zipf_allocation(60, M0, w, 0.6)
        best = np.sum(w * 0.5 * x**-0.6)
        for t in rng.uniform(1, 51, 200):
            assert best <= np.sum(w * 0.5 * np.array([t, 52 - t]) ** -0.6) + 1e-15


def test_quadratic_argmin_is_exact_on_a_parabola():
    w = np.linspace(0.3, 0.7, 9)
    y = np.stack([3 * (w - 0.44) ** 2 + 1, 0.5 * (w - 0.61) ** 2 - 2])
    np.testing.assert_allclose(claims.quadratic_argmin(w, y), [0.44, 0.61], rtol=1e-10)


def test_fit_mixing_law_recovers_the_law_from_its_own_values():
    configs = [[round(w * D), D - round(w * D), N] for N in (24, 32, 40) for D in (1000, 4000)
               for w in (0.2, 0.5, 0.8)]
    true = np.array([0.3, 0.6, 0.25, 2.25])
    law = claims._law_losses(theory, true, configs, M0, 300)
    rng = rng_for(0, "fit")
    losses = law + 1e-6 * rng.standard_normal((8, *law.shape))
    params, cov, chi2_dof = claims.fit_mixing_law(losses, configs, M0, 300)
    np.testing.assert_allclose(params, true, rtol=1e-3)
    assert chi2_dof < 3 and np.all(np.diag(cov) > 0)


# ------------------------------------------------------------------ model
def test_skill_variances_layout():
    var = model.skill_variances(3, [2, 4], 0.7, 0.3, 0.5)
    assert var.shape == (2, 9)
    np.testing.assert_allclose(var[:, :3], 0.7)
    np.testing.assert_allclose(var[0, 3:5], 0.3 * np.arange(1, 3) ** -1.5)
    np.testing.assert_allclose(var[0, 5:], 0)
    np.testing.assert_allclose(var[1, 3:5], 0)


def test_domain_losses_vanish_at_the_truth(full):
    var, theta = full
    np.testing.assert_allclose(model.domain_losses(theta, theta, var), 0)


def test_ols_excess_equals_lstsq_on_one_replicate(full):
    var, theta = full
    pairs = np.array([[40, 60], [30, 80], [20, 60]])  # 20 < m0 + M_1: pooling suffices
    got = model.ols_excess(rng_for(3, "x"), pairs, var, SIG, theta, 1)[0]
    rng = rng_for(3, "x")
    cols = [np.flatnonzero(var[k] > 0) for k in range(2)]
    pools = [model._pool(rng, 1, int(pairs[:, k].max()), np.sqrt(var[k, cols[k]]),
                         theta[cols[k]], float(SIG[k])) for k in range(2)]
    for j, (n1, n2) in enumerate(pairs):
        X = np.zeros((n1 + n2, var.shape[1]))
        X[:n1, cols[0]] = pools[0][0][0, :n1]
        X[n1:, cols[1]] = pools[1][0][0, :n2]
        y = np.concatenate([pools[0][1][0, :n1], pools[1][1][0, :n2]])
        beta = np.linalg.lstsq(X, y, rcond=None)[0]
        np.testing.assert_allclose(got[j], model.domain_losses(beta, theta, var), rtol=1e-8)


def test_ols_excess_rejects_too_few_samples(full):
    var, theta = full
    with pytest.raises(ValueError):
        model.ols_excess(rng_for(0, "x"), [[10, 60]], var, SIG, theta, 2)


def test_capacity_learner_with_full_capacity_keeps_everything(full):
    var, theta = full
    counts, ex, left = model.capacity_fits(rng_for(0, "y"), [[80, 120, var.shape[1]]], var, SIG,
                                           theta, 2)
    np.testing.assert_array_equal(counts[:, 0], [M, M])
    np.testing.assert_array_equal(left, 0)
    assert np.all(ex > 0)


def test_capacity_learner_selects_the_population_set_at_large_data(cap):
    var, configs, counts, _, _ = cap
    for j, (n1, n2, N) in enumerate(configs):
        pc, _ = theory.population_selection(var, np.array([n1, n2]) / (n1 + n2), N)
        assert np.all(np.abs(counts[:, j].mean(0) - pc) <= 2)


def test_capacity_learner_rejects_bad_capacity(full):
    var, theta = full
    with pytest.raises(ValueError):
        model.capacity_fits(rng_for(0, "y"), [[80, 120, var.shape[1] + 1]], var, SIG, theta, 1)


# ------------------------------------------------------------------ claims and their wrong theories
@pytest.fixture(scope="module")
def exact_data(full):
    var, theta = full
    allocs = [np.array([34, 70]), np.array([106, 82])]
    ex = [model.ols_excess(rng_for(0, "C1", str(a)), [n], var, SIG, theta, 800)[:, 0]
          for a, n in enumerate(allocs)]
    return allocs, ex


def test_c1_holds_and_rejects_domains_fitted_alone(exact_data):
    allocs, ex = exact_data
    assert claims.claim_exact_law("C1", ex, allocs, M, M0, SIG).passed
    wrong = variant(theory, exact_excess=theory.wrong_exact_excess_alone)
    assert not claims.claim_exact_law("C1", ex, allocs, M, M0, SIG, theory=wrong).passed


def test_c1_rejects_the_law_without_noise_inflation(exact_data):
    allocs, ex = exact_data
    wrong = variant(theory, exact_excess=theory.wrong_exact_excess_no_inflation)
    assert not claims.claim_exact_law("C1", ex, allocs, M, M0, SIG, theory=wrong).passed


def test_c2_holds_and_rejects_the_square_root_rate(full):
    var, theta = full
    D_grid = [128, 256, 512, 1024]
    ex = np.stack([model.ols_excess(rng_for(0, "C2", str(D)), [[D // 2, D // 2]], var, SIG, theta,
                                    200)[:, 0] @ PI for D in D_grid], axis=1)
    assert claims.claim_rate("C2", ex, D_grid, M, M0, SIG, PI, rng_for(0, "b")).passed
    wrong = variant(theory, exact_excess=theory.wrong_exact_excess_sqrt)
    assert not claims.claim_rate("C2", ex, D_grid, M, M0, SIG, PI, rng_for(0, "b"),
                                 theory=wrong).passed


def test_c3a_holds_and_rejects_the_proportional_split(cap):
    var, configs, counts, _, _ = cap
    assert claims.claim_capacity_split("C3a", counts, configs, var, M0, 0.6).passed
    wrong = variant(theory, zipf_allocation=theory.wrong_zipf_allocation)
    assert not claims.claim_capacity_split("C3a", counts, configs, var, M0, 0.6, theory=wrong).passed


def test_c3b_holds_and_rejects_independent_domain_laws(cap):
    var, configs, _, _, left = cap
    assert claims.claim_unlearned("C3b", left, configs, var).passed
    wrong = variant(theory, population_selection=theory.wrong_population_selection)
    assert not claims.claim_unlearned("C3b", left, configs, var, theory=wrong).passed


def test_c3c_holds_and_rejects_the_noise_term_without_shared_skills(cap):
    var, configs, counts, ex, left = cap
    assert claims.claim_noise_term("C3c", ex, left, counts, configs, SIG, M0, var).passed
    wrong = variant(theory, noise_term=theory.wrong_noise_term_specialized_only)
    assert not claims.claim_noise_term("C3c", ex, left, counts, configs, SIG, M0, var,
                                       theory=wrong).passed


def test_unlearned_part_is_the_left_out_variance(cap):
    var, configs, counts, ex, left = cap
    assert np.all(left <= ex)
    assert np.all(left > 0)


def test_c3d_holds_and_rejects_independent_domain_laws(cap):
    var, configs, _, ex, _ = cap
    assert claims.claim_coupling("C3d", ex, configs, 2, 3, var, SIG, M0).passed
    wrong = variant(theory, population_selection=theory.wrong_population_selection)
    assert not claims.claim_coupling("C3d", ex, configs, 2, 3, var, SIG, M0, theory=wrong).passed


def test_c4a_holds_and_rejects_the_evaluation_mixture(noise_curve):
    D, grid, ex = noise_curve
    assert claims.claim_beats_pi("C4a", ex, grid, D, M, M0, SIG, PI).passed
    wrong = variant(theory, grid_optimum=theory.wrong_grid_optimum_pi)
    assert not claims.claim_beats_pi("C4a", ex, grid, D, M, M0, SIG, PI, theory=wrong).passed


def test_c4b_holds_and_rejects_the_shift_to_the_easier_domain(noise_curve):
    D, grid, ex = noise_curve
    assert claims.claim_beats_mirror("C4b", ex, grid, D, M, M0, SIG, PI).passed
    wrong = variant(theory, grid_optimum=theory.wrong_grid_optimum_easier)
    assert not claims.claim_beats_mirror("C4b", ex, grid, D, M, M0, SIG, PI, theory=wrong).passed


def test_selection_band_holds_both_members_of_the_swaps():
    """A selection error trades a kept skill for a left-out one: both must lie in the band (the
    second moments of independent Gaussian coordinates are exact scaled chi^2 variables)."""
    var = model.skill_variances(12, [300, 300], 0.8, 0.3, 0.4)
    rng = rng_for(0, "band")
    users = var > 0
    for n in ([4000, 16000], [16000, 4000]):
        n = np.array(n)
        D, N = n.sum(), 30
        band = claims._selection_band(var, n, N, 3.29)
        pop = np.zeros(var.shape[1], dtype=bool)
        pop[np.argsort(-(n / D) @ var, kind="stable")[:N]] = True
        assert np.any(band & users[0] & ~users[1]) and np.any(band & users[1] & ~users[0])
        df = np.where(users.sum(0) > 1, D, users.T @ n)
        q = var.max(0) / D * rng.chisquare(df, size=(400, var.shape[1]))
        for row in q:
            kept = np.zeros(row.size, dtype=bool)
            kept[np.argsort(-row, kind="stable")[:N]] = True
            assert np.all(band[kept != pop])


@pytest.fixture(scope="module")
def extrapolation():
    var = model.skill_variances(M0, [300, 300], 0.5, 0.3, 0.6)
    theta = model.skill_signs(rng_for(0, "theta_cap"), var.shape[1])
    small = [[round(w * D), D - round(w * D), N] for N in (24, 32, 40) for D in (1000, 2000, 4000)
             for w in (0.2, 0.35, 0.5, 0.65, 0.8)]
    _, ex, _ = model.capacity_fits(rng_for(0, "C5", "small"), small, var, SIG, theta, 8)
    w_big = np.linspace(0.3, 0.7, 9)
    big = [[round(w * 20000), 20000 - round(w * 20000), 120] for w in w_big]
    _, exb, _ = model.capacity_fits(rng_for(0, "C5", "large"), big, var, SIG, theta, 24)
    return (ex + SIG**2, small, (exb + SIG**2) @ PI, w_big, 120, 20000, M0, 300, PI)


def test_c5_holds_and_rejects_the_proportional_split(extrapolation):
    c5 = claims.claim_extrapolated_optimum("C5", *extrapolation, rng_for(0, "C5", "boot"))
    assert c5.passed and c5.predicted < 0.5
    wrong = variant(theory, mixing_law=theory.wrong_mixing_law_proportional)
    bad = claims.claim_extrapolated_optimum("C5", *extrapolation, rng_for(0, "C5", "boot"),
                                            theory=wrong)
    assert not bad.passed


def test_c5_fails_without_crashing_on_a_broken_law(extrapolation):
    broken = variant(theory, mixing_law=lambda *a: np.full(2, np.nan))
    bad = claims.claim_extrapolated_optimum("C5", *extrapolation, rng_for(0, "C5", "boot"),
                                            theory=broken)
    assert not bad.passed
