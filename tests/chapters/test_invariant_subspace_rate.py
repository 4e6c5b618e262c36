"""Tests of chapter 'invariant-subspace-rate': the theory, the model, and one mutation test per claim."""


import numpy as np
import pytest
from scipy import stats

from theorylib.chapters.invariant_subspace_rate import CHAPTER, claims, model, theory
from theorylib.core import rng_for
from theorylib.core.theory import variant

D = CHAPTER.defaults()


# ---------------------------------------------------------------- model: design, estimator, loss


@pytest.mark.parametrize("m,r,gamma", [(24, 8, 0.5), (9, 8, 0.7), (2, 1, 1.3), (48, 30, 0.3)])
def test_balanced_design(m, r, gamma):
    Z = model.balanced_shift_design(m, r, gamma, rng_for(0, "design"))
    assert Z.shape == (m, r)
    np.testing.assert_allclose(Z.T @ Z, m * gamma**2 * np.eye(r), atol=1e-10)
    np.testing.assert_allclose(Z.sum(axis=0), 0, atol=1e-10)


@pytest.mark.parametrize("call", [
    lambda: model.balanced_shift_design(8, 8, 0.5, rng_for(0, "x")),
    lambda: model.balanced_shift_design(10, 3, 0.0, rng_for(0, "x")),
    lambda: model.make_instance(12, 12, 24, 0.5, rng_for(0, "x")),
    lambda: model.make_instance(12, 0, 24, 0.5, rng_for(0, "x")),
    lambda: model.make_instance(12, 4, 8, 0.5, rng_for(0, "x")),
    lambda: model.make_instance(12, 4, 24, -0.5, rng_for(0, "x")),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_instance_structure():
    inst = model.make_instance(12, 4, 24, 0.5, rng_for(0, "inst"))
    Q = np.hstack([inst.V, inst.U])
    np.testing.assert_allclose(Q.T @ Q, np.eye(12), atol=1e-12)
    A = inst.shifts
    np.testing.assert_allclose(A.sum(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(inst.V.T @ A, 0, atol=1e-12)  # the shifts live in U
    C = A @ A.T / 24
    np.testing.assert_allclose(C, 0.25 * inst.U @ inst.U.T, atol=1e-12)  # balanced: C = gamma^2 P_U
    np.testing.assert_allclose(inst.U.T @ inst.beta, 0, atol=1e-12)  # beta in V
    np.testing.assert_allclose(np.linalg.norm(inst.beta), 1.0)


def _frame(d, k, seed):
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((d, k)))[0]


def test_subspace_dist2_properties():
    V1, V2 = _frame(10, 3, 1), _frame(10, 3, 2)
    R = np.linalg.qr(np.random.default_rng(3).standard_normal((3, 3)))[0]
    assert model.subspace_dist2(V1, V1 @ R) == pytest.approx(0, abs=1e-12)  # any basis of one span
    assert model.subspace_dist2(V1, V2) == pytest.approx(model.subspace_dist2(V2, V1), abs=1e-12)
    assert model.subspace_dist2(V1 @ R, V2) == pytest.approx(model.subspace_dist2(V1, V2), abs=1e-12)
    assert 0 <= model.subspace_dist2(V1, V2) <= 3
    E = np.eye(10)
    assert model.subspace_dist2(E[:, :3], E[:, 3:6]) == pytest.approx(3)
    assert model.subspace_dist2(E[:, :7], E[:, 3:10]) == pytest.approx(3)  # min(k, d - k)
    P1, P2 = V1 @ V1.T, V2 @ V2.T  # = (1/2) |P1 - P2|_F^2
    assert model.subspace_dist2(V1, V2) == pytest.approx(0.5 * np.sum((P1 - P2) ** 2), abs=1e-12)
    with pytest.raises(ValueError):
        model.subspace_dist2(2 * V1, V2)


def test_estimator_recovers_v_without_noise_and_at_huge_n():
    inst = model.make_instance(12, 4, 24, 0.5, rng_for(0, "rec"))
    assert model.subspace_dist2(model.spectral_invariant_subspace(inst.W, 4), inst.V) < 1e-12
    S = model.sample_sufficient_stats(inst.W, 1e12, 3, rng_for(0, "rec", "n"))
    assert np.all(model.subspace_dist2(model.spectral_invariant_subspace(S, 4), inst.V) < 1e-8)


def test_estimator_is_equivariant_under_rotations():
    inst = model.make_instance(8, 3, 10, 0.5, rng_for(0, "eq"))
    S = model.sample_sufficient_stats(inst.W, 50, 4, rng_for(0, "eq", "n"))
    Q = model.random_orthogonal(8, rng_for(0, "rot"))
    e1 = model.subspace_dist2(model.spectral_invariant_subspace(S, 3), inst.V)
    e2 = model.subspace_dist2(model.spectral_invariant_subspace(Q @ S, 3), Q @ inst.V)
    np.testing.assert_allclose(e1, e2, atol=1e-10)


def test_estimator_minimises_the_across_environment_variance():
    inst = model.make_instance(8, 3, 10, 0.5, rng_for(0, "rex"))
    S = model.sample_sufficient_stats(inst.W, 30, 1, rng_for(0, "rex", "n"))[0]
    Vh = model.spectral_invariant_subspace(S, 3)
    best = model.invariance_objective(Vh, S)
    for seed in range(200):
        assert model.invariance_objective(_frame(8, 3, seed), S) >= best - 1e-12
    for seed in range(50):  # small perturbations of V_hat
        Qp = np.linalg.qr(Vh + 1e-3 * np.random.default_rng(seed).standard_normal(Vh.shape))[0]
        assert model.invariance_objective(Qp, S) >= best - 1e-12
    # the population objective vanishes on V and has curvature >= m gamma^2 around it
    assert model.invariance_objective(inst.V, inst.W) == pytest.approx(0, abs=1e-20)
    H = 1e-3 * np.random.default_rng(1).standard_normal((5, 3))
    QH = np.linalg.qr(inst.V + inst.U @ H)[0]
    assert model.invariance_objective(QH, inst.W) >= 10 * 0.25 * np.sum(H**2) * (1 - 1e-4)


def test_sufficient_stats_mean_and_covariance():
    W = model.make_instance(4, 2, 5, 0.5, rng_for(0, "ss")).W
    S = model.sample_sufficient_stats(W, 25, 40_000, rng_for(0, "ss", "n"))
    se = 0.2 / np.sqrt(40_000)
    assert np.all(np.abs(S.mean(axis=0) - W) < 5 * se)
    flat = (S - W).reshape(40_000, -1) * 5  # sqrt(n) (S - w): covariance I
    cov = flat.T @ flat / 40_000
    assert np.max(np.abs(cov - np.eye(20))) < 5 * np.sqrt(2 / 40_000)


def test_raw_to_stats_closed_form():
    rng = rng_for(0, "raw")
    w = np.array([0.5, -1.0, 2.0])
    X, Y = model.sample_raw(w, 7, rng)
    assert set(np.unique(Y)) <= {-1.0, 1.0}
    np.testing.assert_allclose(model.stats_from_raw(X, Y), np.mean(Y[:, None] * X, axis=0))
    np.testing.assert_allclose(model.stats_from_raw(X, Y), w + np.mean(Y[:, None] * (X - Y[:, None] * w),
                                                                     axis=0))


def test_raw_statistics_match_stats_from_raw():
    rc = model.raw_statistics(4, 2, 3, 0.5, 10, 5, rng_for(0, "rs"))
    assert rc.S.shape == (5, 4, 3) and rc.W.shape == (4, 3)


def test_environment_grid_and_transition_grid():
    ms = model.environment_grid(12, 4)
    assert ms == [10, 14, 18, 27, 36] and min(ms) >= 9
    assert len(set(model.environment_grid(3, 2))) == 5
    ns = model.transition_grid(40, 10, 32, 0.5, 0.25, [0.9, 1.0, 1.1])
    assert list(ns) == [135, 150, 165]


# ---------------------------------------------------------------- theory


def test_formulas_vectorise_and_second_order_tends_to_first():
    n = np.array([10.0, 100.0, 1e6])
    f1 = theory.risk_first_order(12, 4, 24, n, 0.5)
    f2 = theory.risk_second_order(12, 4, 24, n, 0.5)
    assert f1.shape == f2.shape == (3,)
    np.testing.assert_allclose(f1, 32 / (n * 24 * 0.25))
    assert abs(f2[-1] / f1[-1] - 1) < 1e-5
    np.testing.assert_allclose(theory.n_star(12, 4, 24, 0.5) / n, f1)
    assert theory.second_order_coefficient(10, 5, 8) < 0 < theory.second_order_coefficient(12, 4, 24)


def test_general_first_order_reduces_to_the_balanced_one():
    n = np.array([50.0, 400.0])
    np.testing.assert_allclose(theory.risk_first_order_spectrum(4, 24, n, np.full(8, 0.25)),
                               theory.risk_first_order(12, 4, 24, n, 0.5))
    c = 0.25 * np.geomspace(1, 4, 8)  # on M(gamma) scaled: at most n*/n with gamma^2 = min c
    assert theory.risk_first_order_spectrum(4, 24, 100, c) <= theory.risk_first_order(12, 4, 24, 100, 0.5)


def test_unbalanced_instance_has_the_requested_spectrum():
    inst = model.make_instance(12, 4, 24, 0.5, rng_for(0, "unb"), spread=4.0)
    A = inst.shifts
    np.testing.assert_allclose(A.sum(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.eigvalsh(A @ A.T / 24)[4:], 0.25 * np.geomspace(1, 4, 8), atol=1e-12)


def test_assouad_construction_facts():
    """KL between neighbours = 2 n m gamma^2 delta^2; |eta| <= delta s / (1 - s); the class is respected."""
    k, r, m, n, g = 3, 4, 9, 20, 0.5
    rng = np.random.default_rng(0)
    Z = model.balanced_shift_design(m, r, g, rng)
    for _ in range(20):
        Th = rng.choice([-1.0, 1.0], size=(k, r))
        s = 1 / 3 * rng.uniform(0.1, 1)
        delta = np.sqrt(s / (k * r))
        i, j = rng.integers(k), rng.integers(r)
        Th2 = Th.copy()
        Th2[i, j] *= -1

        def W(T, delta=delta):
            return np.vstack([-delta * T, np.eye(r)]) @ Z.T

        kl = n / 2 * np.sum((W(Th) - W(Th2)) ** 2)
        assert kl == pytest.approx(2 * n * m * g**2 * delta**2)
        Vt = np.vstack([np.eye(k), delta * Th.T])
        Pv = Vt @ np.linalg.solve(Vt.T @ Vt, Vt.T)
        eta = Pv[k:, :k] - delta * Th.T
        assert np.max(np.abs(eta)) <= delta * s / (1 - s) + 1e-15
        ev = np.linalg.eigvalsh(W(Th) @ W(Th).T / m)[-r:]
        assert ev.min() >= g**2 * (1 - 1e-12) and ev.max() <= g**2 * (1 + s) * (1 + 1e-12)


def test_transition_cdf_is_the_scaled_chi2():
    p = theory.transition_cdf(0.25, 150, 40, 10, 32, 0.5)
    x = 150 * 32 * 0.25
    assert p == pytest.approx(stats.chi2.cdf(0.25 * x / (1 + (32 - 40) / x), 300))
    assert theory.statistic_sd(50, np.ones(3)) == pytest.approx(50**-0.5)


# ---------------------------------------------------------------- claims: hold for the theory, reject the wrong ones


@pytest.fixture(scope="module")
def exact():
    return model.sweep_n(D["d"], D["k"], D["m"], D["gamma"], model.C1_GRID, D["reps_exact"], 0, "C1")


@pytest.fixture(scope="module")
def exact_b():
    return model.sweep_n(D["d"], D["k"], D["m_b"], D["gamma"], model.C1_GRID, D["reps_exact"], 0, "C1b")


@pytest.fixture(scope="module")
def rates():
    d, k, m, g, R = D["d"], D["k"], D["m"], D["gamma"], D["reps_rate"]
    return (model.sweep_n(d, k, m, g, model.C2_N_GRID, R, 0, "C2n"),
            model.sweep_m(d, k, model.environment_grid(d, k), g, model.C2_M_NGAMMA2, R, 0, "C2m"),
            model.sweep_gamma(d, k, m, model.C2_GAMMA_GRID, model.C2_GAMMA_N, R, 0, "C2g"))


@pytest.fixture(scope="module")
def trans():
    return model.transition(D["T_d"], D["T_k"], D["T_m"], D["gamma"], D["eps"], model.C3_FACTORS,
                            D["reps_trans"], 0, "C3")


@pytest.fixture(scope="module")
def raw():
    return model.raw_statistics(6, 2, 8, 0.5, 50, 2000, rng_for(0, "C4"))


def test_c1a_holds_and_rejects_centred_and_kd(exact):
    assert claims.claim_constant("C1a", exact, D["d"], D["k"]).passed
    for wrong in (theory.wrong_risk_first_order_centred, theory.wrong_risk_first_order_kd):
        bad = variant(theory, risk_first_order=wrong)
        assert not claims.claim_constant("C1a", exact, D["d"], D["k"], theory=bad).passed


def test_c1a_measurement_does_not_depend_on_the_theory(exact):
    bad = variant(theory, risk_first_order=theory.wrong_risk_first_order_kd)
    good = claims.claim_constant("C1a", exact, D["d"], D["k"])
    wrong = claims.claim_constant("C1a", exact, D["d"], D["k"], theory=bad)
    assert wrong.measured == good.measured and good.predicted == pytest.approx(1.0)
    assert wrong.predicted == pytest.approx(D["d"] / (D["d"] - D["k"]))  # a in units of K/x


def test_c1b_holds(exact, exact_b):
    assert D["m_b"] < D["d"] < D["m"]  # the defaults put the two sweeps on both sides of m = d
    c = claims.claim_second_order("C1b", (exact, exact_b), D["d"], D["k"])
    assert c.passed
    np.testing.assert_allclose(c.details["predicted"], [0.5, -1 / 3])


@pytest.mark.parametrize("wrong,b_wrong", [
    ("naive", lambda d, k, m: (m - 1) / m),
    ("spurious", lambda d, k, m: (m - d + k) / m),
    ("plus_two", lambda d, k, m: (m - d + 2) / m),
    ("term_a", lambda d, k, m: (2 * (d - k) + 3 - m) / m),
])
def test_c1b_rejects_wrong_second_order(exact, exact_b, wrong, b_wrong):
    bad = variant(theory, risk_second_order=getattr(theory, f"wrong_risk_second_order_{wrong}"))
    d, k = D["d"], D["k"]
    for sw in (exact, exact_b):
        assert claims.predicted_second_order(sw, d, k, theory=bad) == pytest.approx(b_wrong(d, k, int(sw.m[0])))
    assert not claims.claim_second_order("C1b", (exact, exact_b), d, k, theory=bad).passed


def test_c2_holds_and_rejects_wrong_exponents(rates):
    wrongs = (theory.wrong_risk_sqrt_n, theory.wrong_risk_no_environment_gain, theory.wrong_risk_davis_kahan)
    for sw, wrong in zip(rates, wrongs, strict=True):
        assert claims.claim_slope("C2", sw, D["d"], D["k"]).passed
        bad = variant(theory, risk_second_order=wrong)
        assert not claims.claim_slope("C2", sw, D["d"], D["k"], theory=bad).passed


def test_c3_holds_and_rejects_wide_and_pooled(trans):
    args = (D["T_d"], D["T_k"], D["T_m"], D["gamma"])
    assert claims.claim_transition("C3", trans, *args).passed
    for wrong in (theory.wrong_transition_cdf_wide, theory.wrong_transition_cdf_pooled):
        bad = variant(theory, transition_cdf=wrong)
        assert not claims.claim_transition("C3", trans, *args, theory=bad).passed


def test_c4_holds_and_rejects_forgetting_y_squared(raw):
    assert claims.claim_sufficiency("C4", raw).passed
    bad = variant(theory, statistic_sd=theory.wrong_statistic_sd)
    assert not claims.claim_sufficiency("C4", raw, theory=bad).passed


def test_c5_holds_and_rejects_the_mean_eigenvalue_formula():
    sw, c = model.sweep_unbalanced(D["d"], D["k"], D["m"], D["gamma"], model.C5_GRID, D["reps_rate"], 0, "C5",
                                   spread=model.C5_SPREAD)
    assert claims.claim_general_design("C5", sw, D["k"], c).passed
    bad = variant(theory, risk_first_order_spectrum=theory.wrong_risk_first_order_spectrum_mean)
    assert not claims.claim_general_design("C5", sw, D["k"], c, theory=bad).passed


def test_wls_recovers_a_polynomial():
    t = np.linspace(0.01, 0.1, 8)
    coef, se = claims.wls(t, 1 + 0.5 * t - 2 * t**2, np.full(8, 1e-3), 2)
    np.testing.assert_allclose(coef, [1, 0.5, -2], atol=1e-9)
    assert np.all(se > 0)
    with pytest.raises(ValueError):
        claims.wls(t[:3], t[:3], np.ones(3), 2)
    assert np.all(np.isnan(claims.wls(t, t, np.zeros(8), 2)[0]))


def test_a_broken_prediction_fails_the_claim_instead_of_raising(exact):
    def negative(d, k, m, n, gamma):
        return -theory.risk_first_order(d, k, m, n, gamma)

    def nan(d, k, m, n, gamma):
        return np.nan * np.asarray(n, dtype=float)

    for f in (negative, nan):
        bad = variant(theory, risk_first_order=f)
        assert not claims.claim_constant("C1a", exact, D["d"], D["k"], theory=bad).passed
        assert not claims.claim_second_order("C1b", (exact,), D["d"], D["k"], theory=bad).passed
