"""Tests of chapter 'hellinger-tv-mixtures': the theory, the model, and one mutation test per claim."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_less
from scipy import special

from theorylib.chapters.hellinger_tv_mixtures import (
    CHAPTER,
    model,
    model_chebyshev,
    model_fits,
    model_float,
    model_product,
    theory,
)
from theorylib.chapters.hellinger_tv_mixtures import claims as cl
from theorylib.core import rng_for
from theorylib.core.theory import variant

DEF = CHAPTER.defaults()


# --------------------------------------------------------------------------------------------------
# the default sweep and test bed, computed once through the notebook's functions


@pytest.fixture(scope="module")
def sweep():
    L = model.l_grid(DEF["L_max"], DEF["L_step"])
    return model.measure_sweep(DEF["M"], L, panels=DEF["quad_panels"], nodes=DEF["quad_nodes"])


@pytest.fixture(scope="module")
def testbed(sweep):
    rp = model_float.random_pairs_distances(rng_for(DEF["seed"], "C7.4"), DEF["M"], DEF["n_random_pairs"])
    return model_float.inequality_testbed(sweep, rp)


# --------------------------------------------------------------------------------------------------
# the roles of the modules


# --------------------------------------------------------------------------------------------------
# the pairs


@pytest.mark.parametrize("make", [model.tilted_fd_pair, model.untilted_fd_pair])
@pytest.mark.parametrize("L,M", [(0, 1.0), (6, 0.5), (22, 1.0), (30, 2.0)])
def test_pairs_are_probability_measures_on_the_interval(make, L, M):
    aP, wP, aQ, wQ, s = make(L, M)
    for a, w in ((aP, wP), (aQ, wQ)):
        assert np.all(w >= 0)
        assert abs(w.sum() - 1) <= 1e-14
        assert np.all(np.abs(a) <= M + 1e-15)
    assert s > 0
    # Q is the reflection of P
    order = np.argsort(-aQ)
    assert_allclose(-aQ[order], aP, atol=1e-15)
    assert_allclose(wQ[order], wP, rtol=1e-13)


@pytest.mark.parametrize("tilted", [True, False])
def test_moments_vanish_up_to_L(tilted):
    L, M, dps = 10, 1.3, 80
    pr = model.fd_pair_mp(L, M, tilted=tilted, dps=dps)
    with mpmath.workdps(dps):
        th = pr.atoms()
        nu = [p - q for p, q in zip(pr.w_P, pr.w_Q, strict=True)]
        tilt = [mpmath.exp(-t * t / 2) if tilted else mpmath.mpf(1) for t in th]
        mom = [mpmath.fsum(v * g * t**j for v, g, t in zip(nu, tilt, th, strict=True)) for j in range(L + 2)]
        assert max(abs(m) for m in mom[: L + 1]) <= mpmath.mpf(10) ** -40
        assert abs(mom[L + 1]) > mpmath.mpf(10) ** -10  # degree n is not matched
        assert abs(mpmath.fsum(pr.w_P) - 1) < mpmath.mpf(10) ** -70


def test_identities_at_random_points():
    L, M, dps = 14, 1.0, 60
    rng = np.random.default_rng(3)
    x = rng.uniform(-8, 8, size=12)
    pr = model.fd_pair_mp(L, M, tilted=True, dps=dps)
    fP, fQ = model.equispaced_mixtures_mp(x, pr.theta0, pr.delta, [pr.w_P, pr.w_Q], dps)
    dP = model.mixture_density_mp(x, pr.atoms(), pr.w_P, dps)  # direct sum: one exp per term
    dQ = model.mixture_density_mp(x, pr.atoms(), pr.w_Q, dps)
    closed = theory.tilted_difference_mp(x, L, M, dps)
    n = L + 1
    with mpmath.workdps(dps):
        assert abs(theory.tilted_s_mp(L, M, dps) - pr.s) <= mpmath.mpf(10) ** (-dps + 3) * pr.s
        for i, xv in enumerate(x):
            tol = mpmath.mpf(10) ** (-dps + 5) * (fP[i] + fQ[i])
            assert abs(fP[i] - dP[i]) <= tol and abs(fQ[i] - dQ[i]) <= tol
            assert abs((fP[i] - fQ[i]) - closed[i]) <= tol
            cosh_form = pr.s * mpmath.npdf(xv) * (2 * mpmath.cosh(M * mpmath.mpf(xv) / n)) ** n
            assert abs((fP[i] + fQ[i]) - cosh_form) <= tol
    # float64 densities agree with the mp ones
    aP, wP, _, _, _ = model.tilted_fd_pair(L, M)
    assert_allclose(model.mixture_density(x, aP, wP), np.array(fP, dtype=float), rtol=1e-12)


def test_untilted_weights_and_float_pair_agree_with_mp():
    pr = model.fd_pair_mp(8, 0.7, tilted=False, dps=40)
    aP, wP, aQ, wQ, s = model.untilted_fd_pair(8, 0.7)
    assert_allclose(s, 2.0**-8)
    assert_allclose(wP, [float(w) for w in pr.w_P if w != 0], rtol=1e-14)
    assert_allclose(aQ, [float(t) for a, t in enumerate(pr.atoms()) if a % 2 == 0], atol=1e-15)


# --------------------------------------------------------------------------------------------------
# quadrature, the pilot and closed forms


def test_pilot_sets_the_same_precision_as_the_closed_form_would():
    for L, M in [(6, 1.0), (22, 1.0), (30, 2.0), (46, 0.5)]:
        pilot = model.pilot_log_tv(L, M)
        closed = theory.log_tv_closed(L, M)[0]
        assert abs(pilot - closed) < 1e-8
        assert model.working_dps(-pilot) == model.working_dps(-closed)
    # the untilted pair's pilot resolves its (smaller) TV too
    assert abs(model.pilot_log_tv(14, 1.0, tilted=False) - model.measure_fd_pair(14, 1.0, tilted=False).log_tv) < 1e-2


def test_panel_doubling_changes_little():
    a = model.measure_fd_pair(10, 1.0, panels=40, nodes=20)
    assert model.panel_doubling([a]) < 1e-11
    assert a.log_tail_bound - 2 * a.log_h < math.log(1e-17)


def test_closed_forms_match_measurement_small_L():
    for L, M in [(6, 0.5), (8, 2.0)]:
        m = model.measure_fd_pair(L, M)
        (log_tv, e_tv), (log_h, e_h2) = theory.log_tv_closed(L, M), theory.log_h_closed(L, M)
        assert abs(math.expm1(m.log_tv - log_tv)) < 1e-11
        assert abs(math.expm1(m.log_h - log_h)) < 1e-11
        assert cl.claim_c1_identity("C1a", [m]).passed
        assert e_tv < 1e-12 and e_h2 < 1e-12


def test_asymptotic_formulas():
    # Stirling form and Gamma form of log(H/TV) differ by O(1/n)
    d = [abs(theory.log_ratio_asymptotic(L, 1.0) - theory.log_ratio_asymptotic(L, 1.0, stirling=True))
         for L in (20, 80, 320)]
    assert d[0] > d[1] > d[2] and d[2] * 321 < 2 * d[0] * 21
    # log E|Z|^n against the moment formula for even n
    assert theory.log_abs_moment(6) == pytest.approx(math.log(15.0))
    # log s from the theory's formula equals log of the mp pair's normalizer and the float pair's
    pr = model.fd_pair_mp(12, 1.5, dps=40)
    assert theory.log_s_tilted(12, 1.5) == pytest.approx(float(mpmath.log(pr.s)), rel=1e-14)
    assert theory.log_s_tilted(12, 1.5) == pytest.approx(math.log(model.tilted_fd_pair(12, 1.5)[4]), rel=1e-14)
    # the monomial approximation misses the factor ~ e^{M^2/6}
    assert math.exp(theory.wrong_log_tv_monomial(30, 1.0)[0] - theory.log_tv_closed(30, 1.0)[0]) == pytest.approx(
        math.exp(-1 / 6), rel=0.02)


def test_tv_hellinger_float_two_gaussians():
    for a, b in [(-1.0, 1.0), (0.0, 0.05), (-2.0, 1.5)]:
        tv, h = model_float.tv_hellinger_float([a], [1.0], [b], [1.0])
        d = abs(a - b)
        assert tv == pytest.approx(2 * special.ndtr(d / 2) - 1, rel=1e-12)
        assert h**2 == pytest.approx(-math.expm1(-d * d / 8), rel=1e-11)
    assert model_float.tv_hellinger_float([0.3], [1.0], [0.3], [1.0]) == (0.0, 0.0)


def test_random_pairs_satisfy_le_cam():
    rp = model_float.random_pairs_distances(np.random.default_rng(7), 1.5, 60)
    tv, h = rp[:, 0], rp[:, 1]
    assert np.all(tv >= 1e-6)
    assert_array_less(h**2, tv)
    assert_array_less(tv, h * np.sqrt(2 - h**2))


def test_inequality_testbed_concatenates_sweep_and_random_pairs(sweep, testbed):
    tv, h = testbed
    k = len(sweep.L)
    assert tv.shape == h.shape == (2 * k + DEF["n_random_pairs"],)
    assert_allclose(np.log(tv[:k]), sweep.log_tv)
    assert_allclose(np.log(h[k:2 * k]), sweep.log_h_u)


@pytest.mark.parametrize("alpha", [1e-2, 1e-4])
def test_dilution_sandwich(alpha):
    rng = np.random.default_rng(11)
    for _ in range(3):
        m = model_float.dilution_measure(*model_float.random_pair(rng, 1.0), alpha)
        d = theory.dilution_sandwich(m["A"], m["C"], alpha)
        assert d["lower_weak"] <= d["lower_tight"] <= m["h2"] * (1 + 1e-10)
        assert m["h2"] <= d["upper"] * (1 + 1e-10)


# --------------------------------------------------------------------------------------------------
# Theorem 'upper': its pieces


@pytest.mark.parametrize("u,L", [(0.3, 0), (2.0, 5), (40.0, 12), (5.0, 60), (150.0, 300), (1e-3, 3)])
def test_log_rho_tail_against_mpmath(u, L):
    with mpmath.workdps(50):
        ref = mpmath.log(mpmath.nsum(lambda j: mpmath.mpf(u) ** j / mpmath.factorial(j), [L + 1, mpmath.inf]))
    assert float(theory.log_rho_tail(u, L)) == pytest.approx(float(ref), rel=1e-11, abs=1e-11)


def _thm71_rhs(tv: float, M: float, L: int, T: float) -> float:
    """The right side of Theorem 'upper' at one (L, T):
    2 Phibar(T - M) + 4 e^{MT + M^2/2} [e^{2L} (tv + eta_L)^2 + zeta_L^2]."""
    log_eta, log_zeta = model_float.tail_moments_series(M, max(L, 1))
    e, z = math.exp(log_eta[L]), math.exp(log_zeta[L])
    return 2 * special.ndtr(-(T - M)) + 4 * math.exp(M * T + M * M / 2) * (math.exp(2 * L) * (tv + e) ** 2 + z * z)


def test_thm71_bound_properties():
    M = 1.0
    tv = np.logspace(-40, -0.5, 30)
    B, Lb, Tb = theory.thm71_bound(tv, M)
    assert np.all(np.diff(B) >= 0)  # non-decreasing in TV
    assert np.all(B[tv >= 1e-9] >= 1)  # vacuous at moderate TV (documents the constants)
    assert B[0] < 1e-20
    # the minimizer reproduces B through the un-optimized right side
    i = 10
    assert _thm71_rhs(tv[i], M, int(Lb[i]), float(Tb[i])) == pytest.approx(B[i], rel=1e-9)
    assert np.all(Tb >= M)
    assert_allclose(theory.h2_bound_thm71(tv, M), B)
    # valid on random pairs and on a tilted pair where it is non-vacuous
    rp = model_float.random_pairs_distances(np.random.default_rng(2), M, 40)
    assert np.all(rp[:, 1] ** 2 <= theory.thm71_bound(rp[:, 0], M)[0])
    m = model.measure_fd_pair(18, M)
    b = theory.thm71_bound(m.tv, M)[0]
    assert m.h**2 <= b < 1


def test_hypercontractive_ratio():
    for L in range(0, 31, 3):
        c = np.zeros(L + 1)
        c[L] = 1.0
        r = model_float.hypercontractive_ratio(c)
        assert r == pytest.approx(math.exp(theory.log_monomial_l2_l1(L)), rel=1e-9)
        assert r <= theory.hypercontractive_factor(L)
    rng = np.random.default_rng(5)
    for deg in (1, 3, 6):
        c = rng.normal(size=deg + 1)
        assert 1.0 <= model_float.hypercontractive_ratio(c) <= theory.hypercontractive_factor(deg)
    # He_4 = x^4 - 6x^2 + 3: ||He_4||_2 = sqrt(24)
    assert model_float.hypercontractive_ratio([3.0, 0, -6.0, 0, 1.0]) > 1.0


# --------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("call,match", [
    (lambda: model.tilted_fd_pair(5, 1.0), "even"),
    (lambda: model.untilted_fd_pair(-2, 1.0), r"integer in \[0"),
    (lambda: model.tilted_fd_pair(4, -1.0), "M = -1.0"),
    (lambda: model.tilted_fd_pair(4, float("nan")), "finite"),
    (lambda: model.fd_pair_mp(4, 1.0, dps=10), "dps"),
    (lambda: model.mixture_density_mp([0.0], [0.0], [1.0], 12), "dps"),
    (lambda: model.measure_fd_pair(7, 1.0), "even"),
    (lambda: model.measure_fd_pair(6, 1.0, ell=-1.0), "ell"),
    (lambda: model.l_grid(20, 4), "fewer than 5"),
    (lambda: model.l_grid(38, 3), "even"),
    (lambda: model_float.random_pair(np.random.default_rng(0), 0.0), "M = 0.0"),
    (lambda: model_float.tv_hellinger_float([0.0], [0.5], [1.0], [1.0]), "sum to 1"),
    (lambda: model_float.tv_hellinger_float([0.0], [-1.0], [1.0], [1.0]), ">= 0"),
    (lambda: model.mixture_density([0.0], [0.0, 1.0], [1.0]), "equal length"),
    (lambda: model_float.inequality_testbed(None, np.zeros(3)), "shape"),
    (lambda: theory.thm71_bound([0.0], 1.0), r"\(0, 1\]"),
    (lambda: theory.log_rho_tail(-1.0, 2), "u must be > 0"),
    (lambda: theory.log_tv_closed(7, 1.0), "even"),
    (lambda: model_float.hypercontractive_ratio([0.0, 0.0]), "non-zero"),
    (lambda: model_float.dilution_measure([0.0], [1.0], [1.0], [1.0], 1.5), "alpha"),
    (lambda: theory.dilution_sandwich(1.0, 1.0, 0.0), "alpha"),
    (lambda: model.gauss_legendre_panels(1.0, 0.0, 4, 5), "a < b"),
    (lambda: model_fits.fit_increments(np.array([6, 10, 14]), np.zeros(3)), "at least 4"),
    (lambda: cl.remainder_intercept(np.array([6, 10]), np.zeros(3)), "same length"),
    (lambda: cl.remainder_intercept(np.array([6, 10, 14, 18]), np.zeros(4)), "at least 4"),
    (lambda: cl.max_rel_dev([0.0], [0.0, 1.0]), "equally long"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --------------------------------------------------------------------------------------------------
# mutation tests: one per claim, at the default parameters


def test_c1a_identity_rejects_monomial(sweep):
    assert cl.claim_c1_identity("C1a", sweep.tilted).passed
    wrong = variant(theory, tilted_difference_mp=theory.wrong_difference_monomial_mp)
    claim = cl.claim_c1_identity("C1a", sweep.tilted[-1:], theory=wrong)
    assert not claim.passed and claim.measured > 10


def test_c1b_tv_rejects_monomial_and_untilted(sweep):
    assert cl.claim_c1_tv("C1b", sweep.tilted).passed
    wrong_a = cl.claim_c1_tv("C1b", sweep.tilted, theory=variant(theory, log_tv_closed=theory.wrong_log_tv_monomial))
    assert not wrong_a.passed and wrong_a.measured > 0.1
    # the tilted closed form applied to the untilted pair (which matches as many ordinary moments)
    wrong_b = cl.claim_c1_tv("C1b", sweep.untilted)
    assert not wrong_b.passed and wrong_b.measured > 0.1


def test_c1c_h_rejects_asymptotic_and_untilted(sweep):
    assert cl.claim_c1_h("C1c", sweep.tilted).passed
    wrong = variant(theory, log_h_closed=theory.wrong_log_h_asymptotic)
    assert not cl.claim_c1_h("C1c", sweep.tilted, theory=wrong).passed
    assert not cl.claim_c1_h("C1c", sweep.untilted).passed


def test_c2_rejects_polylog_untilted_and_wrong_rate(sweep):
    assert cl.claim_c2("C2", sweep.tilted).passed
    for wrong_slope in (theory.wrong_ratio_slope_polylog, theory.wrong_ratio_slope_log2):
        assert not cl.claim_c2("C2", sweep.tilted, theory=variant(theory, ratio_slope=wrong_slope)).passed
    wrong = cl.claim_c2("C2", sweep.untilted)
    assert not wrong.passed and abs(wrong.measured - 0.5 * math.log(2)) > 0.25


def test_c2b_rejects_ratio_constant_m2_over_6(sweep):
    M = DEF["M"]
    good = cl.claim_c2b("C2b", sweep.tilted)
    assert good.passed and good.details["sens"] < good.tolerance / 10
    wrong = variant(theory, log_ratio_asymptotic=theory.wrong_log_ratio_constant)
    claim = cl.claim_c2b("C2b", sweep.tilted, theory=wrong)
    assert not claim.passed and claim.measured == pytest.approx(-M**2 / 6, abs=10 * good.tolerance)


def test_c2b_measures_the_constant_minus_m2_over_3(sweep):
    """The fitted constant of log(H/TV) beyond the Gamma-function part is -M^2/3, from the measured sweep alone."""
    M = DEF["M"]
    L = np.array([m.L for m in sweep.tilted])
    n = L + 1.0
    r = np.array([m.log_h - m.log_tv for m in sweep.tilted])
    gamma_part = 0.5 * (n * math.log(2) + special.gammaln(n + 0.5) - 0.5 * math.log(math.pi) - math.log(2)
                        - 2 * (0.5 * n * math.log(2) + special.gammaln(0.5 * (n + 1)) - 0.5 * math.log(math.pi)))
    a0 = cl.remainder_intercept(L, r - gamma_part)
    assert a0 == pytest.approx(-M**2 / 3, abs=cl.rate_tolerance(M) / 10)


def test_c2b_rejects_a_wrong_log2_constant_in_the_stirling_form(sweep):
    """-(1/4) log 2 in place of -(3/4) log 2 (the 2 of (2n-1)!!/(2 (E|Z|^n)^2) forgotten): C2b's Stirling
    residual extrapolates to -(1/2) log 2, far outside the tolerance; the Gamma form alone would not see it."""

    def wrong(L, M, *, stirling=False):
        true = theory.log_ratio_asymptotic(L, M, stirling=stirling)
        return true + 0.5 * math.log(2) if stirling else true

    claim = cl.claim_c2b("C2b", sweep.tilted, theory=variant(theory, log_ratio_asymptotic=wrong))
    assert not claim.passed
    assert claim.measured == pytest.approx(-0.5 * math.log(2), abs=10 * claim.tolerance)
    assert abs(claim.details["intercepts"][0]) <= claim.tolerance


def test_c2b_stirling_constant_is_the_limit_of_the_gamma_form():
    """(1/2) log[(2n-1)!!/(2 (E|Z|^n)^2)] - (n/2) log 2 -> -(3/4) log 2, with an O(1/n) remainder."""
    for L in (100, 1000, 10000):
        n = L + 1
        d = theory.log_ratio_asymptotic(L, 1.0) - theory.log_ratio_asymptotic(L, 1.0, stirling=True)
        assert abs(d) <= 1.0 / n


def test_cut_off_margin_from_le_cam_and_on_the_tilted_pairs(sweep):
    """X - M = sqrt(4 ell + 80) leaves 4 Phibar(X - M) <= 4 e^{-40} H^2 < 1.7e-17 H^2 for any pair
    (H >= TV/sqrt 2, Le Cam), and <= 2 e^{-40} H^2 < 1e-17 H^2 on the tilted pairs, which have H > TV."""
    assert 4 * math.exp(-40) < 1.7e-17 and 2 * math.exp(-40) < 1e-17
    for ell in (1.0, 20.0, 80.0, 200.0):
        tail = 4 * special.ndtr(-math.sqrt(4 * ell + 80))
        assert tail <= 4 * math.exp(-40) * math.exp(-2 * ell) / 2  # H^2 >= TV^2 / 2 = e^{-2 ell} / 2
        assert model.cutoff(ell, 1.0) - 1.0 == pytest.approx(math.sqrt(4 * ell + 80))
    log_ratio = np.array([m.log_h - m.log_tv for m in sweep.tilted])
    assert np.all(log_ratio > 0.1)


def test_exponent_at_m2_l30_exceeds_log2():
    """log(H/TV) log(ell)/ell of the tilted pair at M = 2, L = 30, measured from the atoms: above log 2,
    and equal to the closed forms' value shown in the text."""
    m = model.measure_fd_pair(30, 2.0, panels=DEF["quad_panels"], nodes=DEF["quad_nodes"])
    ell = -m.log_tv
    measured = (m.log_h - m.log_tv) * math.log(ell) / ell
    lt, lh = theory.log_tv_closed(30, 2.0)[0], theory.log_h_closed(30, 2.0)[0]
    assert measured == pytest.approx((lh - lt) * math.log(-lt) / -lt, rel=1e-8)
    assert measured > math.log(2) + 0.03


def test_c3_rejects_wrong_constants_and_leading_order(sweep):
    assert cl.claim_c3("C3", sweep.tilted).passed
    for wrong in (variant(theory, c1=theory.wrong_c1_no_quartic), variant(theory, c1=theory.wrong_c1_zero),
                  variant(theory, tv_leading=theory.wrong_tv_leading_order)):
        assert not cl.claim_c3("C3", sweep.tilted, theory=wrong).passed


def test_c3_rejects_quartic_m4_over_36(sweep):
    wrong = cl.claim_c3("C3", sweep.tilted, theory=variant(theory, c1=theory.wrong_c1_quartic_36))
    assert not wrong.passed and abs(wrong.measured - wrong.predicted) > 2 * wrong.tolerance


def test_c4a_le_cam_lower_rejects_h_le_tv(testbed):
    tv, h = testbed
    assert cl.claim_c4_lecam_lower("C4a", tv, h).passed
    wrong = variant(theory, h2_bound_lecam=theory.wrong_h2_bound_h_le_tv)
    assert not cl.claim_c4_lecam_lower("C4a", tv, h, theory=wrong).passed


def test_c4b_le_cam_upper_rejects_tv_le_h2(testbed):
    tv, h = testbed
    assert cl.claim_c4_lecam_upper("C4b", tv, h).passed
    wrong = variant(theory, tv_bound_lecam=theory.wrong_tv_bound_h2)
    assert not cl.claim_c4_lecam_upper("C4b", tv, h, theory=wrong).passed


def test_c4c_thm71_rejects_polylog(testbed):
    tv, h = testbed
    assert cl.claim_c4_thm71("C4c", tv, h, DEF["M"]).passed
    polylog = variant(theory, h2_bound_thm71=theory.wrong_h2_bound_polylog)
    wrong = cl.claim_c4_thm71("C4c", tv, h, DEF["M"], theory=polylog)
    assert not wrong.passed and wrong.measured > 1e3


def test_c4d_tail_moments_reject_zeta_equal_eta():
    M = DEF["M"]
    log_eta, log_zeta = model_float.tail_moments_series(M, 300)
    assert cl.claim_c4_tail_moments("C4d", log_eta, log_zeta, M).passed
    wrong = variant(theory, eta_zeta=theory.wrong_eta_zeta_l1)
    claim = cl.claim_c4_tail_moments("C4d", log_eta, log_zeta, M, theory=wrong)
    assert not claim.passed and claim.measured > 0.1


def _c4e_inputs(tv, M):
    log_eta, log_zeta = model_float.tail_moments_series(M, 300)
    log_b, x, log_c = model_float.thm71_minimum_direct(tv, M, log_eta, log_zeta)
    return log_b, x, model_float.thm71_log_curvature_max(x, log_c, M, cl.THM71_T_STEP / 2)


def test_c4e_thm71_minimum_rejects_doubled_bound(testbed):
    tv, _h = testbed
    M = DEF["M"]
    args = (tv, M, *_c4e_inputs(tv, M))
    right = cl.claim_c4_thm71_minimum("C4e", *args)
    assert right.passed and right.details["d_over_delta"] <= 1
    doubled_bound = variant(theory, thm71_bound=theory.wrong_thm71_bound_no_half)
    doubled = cl.claim_c4_thm71_minimum("C4e", *args, theory=doubled_bound)
    assert not doubled.passed and doubled.measured > 0.5  # log 2 minus delta
    # a bound made smaller (one tail of Phibar forgotten) is caught on the lower side of [0, delta]
    def halved_tail(tv_, M_, L_top=300, T_span=30.0, T_step=0.05):
        B, L_b, T_b = theory.thm71_bound(tv_, M_, L_top, T_span, T_step)
        return B - special.ndtr(-(T_b - M_)), L_b, T_b
    assert not cl.claim_c4_thm71_minimum("C4e", *args, theory=variant(theory, thm71_bound=halved_tail)).passed


@pytest.mark.parametrize("M", [0.5, 1.0, 2.0])
def test_thm71_minimum_direct_against_a_fine_scan(M):
    # the closed-form T* against a brute-force scan of T (step 1e-4) for every L' at once
    tv = np.array([0.3, 1e-5, 1e-40])
    log_eta, log_zeta = model_float.tail_moments_series(M, 300)
    log_b, x, _ = model_float.thm71_minimum_direct(tv, M, log_eta, log_zeta)
    T = M + np.arange(0.0, 30.0 + 1e-12, 1e-4)
    Ls = np.arange(301)
    for k, t in enumerate(tv):
        log_a = np.logaddexp(2 * Ls + 2 * np.logaddexp(math.log(t), log_eta), 2 * log_zeta)
        log_rhs = np.logaddexp(math.log(2) + special.log_ndtr(-(T - M))[:, None],
                               math.log(4) + M * T[:, None] + M * M / 2 + log_a[None, :])
        scan = log_rhs.min()
        assert log_b[k] <= scan + 1e-12 and scan - log_b[k] < 1e-6
        assert 0 <= x[k] <= 30


def test_thm71_curvature_bounds_the_grid_error():
    # on a single L' the grid minimum exceeds the exact one by at most (h^2/2) G, and G is not loose by > 3x
    M, log_c = 1.0, -60.0
    K = log_c + math.log(M) + M * M - (math.log(2) - 0.5 * math.log(2 * math.pi))
    x_star = -M + math.sqrt(M * M - 2 * K)
    f = lambda x: np.logaddexp(math.log(2) + special.log_ndtr(-x), log_c + M * (M + x))  # noqa: E731
    G = float(model_float.thm71_log_curvature_max(x_star, log_c, M, 0.025))
    for off in np.linspace(-0.025, 0.025, 11):
        assert f(x_star + off) - f(x_star) <= 0.5 * off * off * G + 1e-13
    h = 1e-3
    second = (f(x_star + h) - 2 * f(x_star) + f(x_star - h)) / h**2
    assert second <= G < 3 * second


def test_tail_moments_series_against_mpmath():
    M, L = 1.3, 4
    log_eta, log_zeta = model_float.tail_moments_series(M, 10)
    with mpmath.workdps(40):
        def rho(u):
            return mpmath.nsum(lambda j: u**j / mpmath.factorial(j), [L + 1, mpmath.inf])
        eta = 2 * mpmath.quad(lambda z: mpmath.npdf(z) * rho(M * z), [0, 10, 40])
        zeta2 = 2 * mpmath.quad(lambda z: mpmath.npdf(z) * rho(M * z) ** 2, [0, 10, 40])
    assert log_eta[L] == pytest.approx(float(mpmath.log(eta)), rel=1e-12)
    assert log_zeta[L] == pytest.approx(0.5 * float(mpmath.log(zeta2)), rel=1e-12)


def test_c5_monomial_rejects_lemma_constant():
    degrees = np.arange(0, DEF["L_max"] + 2)
    ratios = [model_float.hypercontractive_ratio(np.eye(d + 1)[d]) for d in degrees]
    assert cl.claim_c5_monomial("C5", degrees, ratios).passed
    wrong = variant(theory, log_monomial_l2_l1=theory.wrong_log_monomial_l2_l1_lemma)
    assert not cl.claim_c5_monomial("C5", degrees, ratios, theory=wrong).passed


@pytest.fixture(scope="module")
def dilution():
    return model_float.dilution_testbed(rng_for(DEF["seed"], "C7.6"), DEF["M"], 10)


def test_c6a_sandwich_rejects_flipped_sign(dilution):
    assert cl.claim_c6_sandwich("C6a", dilution).passed
    wrong = variant(theory, dilution_sandwich=theory.wrong_dilution_sandwich_sign)
    assert not cl.claim_c6_sandwich("C6a", dilution, theory=wrong).passed


def test_c6b_tightness_rejects_ratio_limit_without_half(dilution):
    assert cl.claim_c6_tight("C6b", dilution).passed
    wrong = variant(theory, dilution_sandwich=theory.wrong_dilution_ratio_limit)
    claim = cl.claim_c6_tight("C6b", dilution, theory=wrong)
    assert not claim.passed and claim.measured > 10


def test_dilution_width_bounds_the_sandwich():
    for a, A, C in [(1e-3, 1.0, 7.0), (1e-2, 2.0, 1.0)]:
        d = theory.dilution_sandwich(A, C, a)
        w = cl.dilution_width(a, A, C)
        assert d["upper"] / d["lower_tight"] - 1 <= w and 1 - d["lower_weak"] / d["upper"] <= w
    with pytest.raises(ValueError, match="must be < 1"):
        cl.dilution_width(0.5, 1.0, 3.0)


def test_fit_sensitivity_is_small_at_defaults(sweep):
    M = DEF["M"]
    assert cl.claim_c2("C2", sweep.tilted).details["sens"] < cl.rate_tolerance(M) / 10
    assert cl.claim_c3("C3", sweep.tilted).details["sens"] < cl.rate_tolerance(M) / 10
    assert cl.claim_c2b("C2b", sweep.tilted).details["sens"] < cl.rate_tolerance(M) / 10


def test_fp_claims_show_bounds(sweep):
    """C1's measured values are rounding/quadrature errors: the claims are fp, shown as the bound they met."""
    for c in (cl.claim_c1_identity("a", sweep.tilted), cl.claim_c1_tv("b", sweep.tilted),
              cl.claim_c1_h("c", sweep.tilted)):
        assert c.fp and c.passed


# --------------------------------------------------------------------------------------------------
# R^d: the bound, the chi_d tail moments, the product pair (C7)

PRODUCT_L = [(10, 10), (10, 18), (18, 18), (14, 22)]  # the notebook's pairs


@pytest.fixture(scope="module")
def products():
    m = DEF["M"] / math.sqrt(2)
    return [model_product.measure_product_pair(L1, L2, m, m, panels=DEF["quad_panels"], nodes=DEF["quad_nodes"])
            for L1, L2 in PRODUCT_L]


def test_rd_bound_at_d1_is_the_line_bound():
    """B_{M,1} against Theorem 'upper' written out with 2 Phibar and the series tail moments of C4d."""
    tv = np.logspace(-60, -1, 25)
    for M in (0.5, 1.0, 2.0):
        le, lz = model_float.tail_moments_series(M, 300)
        Ls = np.arange(301)
        log_a = np.logaddexp(2 * Ls + 2 * np.logaddexp(np.log(tv)[:, None], le), 2 * lz).min(axis=1)
        T = M + np.arange(0.0, 30.0 + 1e-12, 0.05)
        log_b = np.logaddexp(math.log(2) + special.log_ndtr(-(T - M))[None, :],
                             math.log(4) + M * T[None, :] + M * M / 2 + log_a[:, None]).min(axis=1)
        assert_allclose(np.log(theory.rd_bound(tv, M, 1)[0]), log_b, rtol=1e-11)
        assert_allclose(theory.thm71_bound(tv, M)[0], theory.rd_bound(tv, M, 1)[0], rtol=0)
        le1, lz1 = theory.eta_zeta(M, 300)
        assert_allclose(le1, le, rtol=1e-11)
        assert_allclose(lz1, lz, rtol=1e-11)


def test_chi_tail_closed_forms():
    t = np.array([0.0, 0.3, 1.0, 2.5, 7.0])
    assert_allclose(theory.log_chi_tail(t, 1), np.log(2 * special.ndtr(-t)), rtol=1e-13, atol=1e-15)
    assert_allclose(theory.log_chi_tail(t, 2), -t**2 / 2, rtol=1e-13, atol=1e-15)
    assert_allclose(theory.log_chi_tail(t, 3), np.log(2 * special.ndtr(-t) + 2 * t * np.exp(-t**2 / 2)
                                                     / math.sqrt(2 * math.pi)), rtol=1e-12, atol=1e-15)


def test_eta_zeta_d2_against_mpmath():
    M, d = 1.0, 2
    le, lz = theory.eta_zeta_d(M, d, 40)
    for L in (0, 5, 20, 40):
        def rho(r, L=L):
            return mpmath.exp(M * r) * mpmath.gammainc(L + 1, 0, M * r, regularized=True)
        with mpmath.workdps(30):
            eta = mpmath.quad(lambda r: rho(r) * r * mpmath.exp(-r * r / 2), mpmath.linspace(0, 60, 61))
            zeta2 = mpmath.quad(lambda r: rho(r) ** 2 * r * mpmath.exp(-r * r / 2), mpmath.linspace(0, 60, 61))
        assert abs(le[L] - float(mpmath.log(eta))) <= 1e-10 * max(1.0, abs(le[L]))
        assert abs(2 * lz[L] - float(mpmath.log(zeta2))) <= 1e-10 * max(1.0, abs(2 * lz[L]))


def test_rd_bound_grows_with_d():
    tv = np.logspace(-40, -5, 8)
    b1, b2, b3 = (theory.h2_bound_rd(tv, 1.0, d) for d in (1, 2, 3))
    assert_array_less(b1, b2)
    assert_array_less(b2, b3)


def test_product_tv_factorizes_on_the_tensor_rule(products):
    for m in products:
        assert abs(m.log_tv - sum(m.log_tv_factors)) <= 1e-12
        assert m.log_tail_bound - 2 * m.log_h < -40  # the cut-off costs nothing


def test_product_factors_match_closed_forms(products):
    for m in products:
        for L, Mi, lt in zip(m.L, m.M, m.log_tv_factors, strict=True):
            assert abs(lt - theory.log_tv_closed(L, Mi)[0]) <= 1e-9


def test_product_pair_in_mp_from_its_2d_atoms():
    """The distributive evaluation equals the 2-D double sum over the product atoms."""
    L1, L2, M1, M2, dps = 4, 6, 0.6, 0.7, 60
    p1, p2 = model.fd_pair_mp(L1, M1, dps=dps), model.fd_pair_mp(L2, M2, dps=dps)
    x = np.array([[0.3, 1.7], [-2.2, 0.9], [3.1, -4.0]])
    with mpmath.workdps(dps):
        a1, a2 = p1.atoms(), p2.atoms()
        for x1, x2 in x:
            f1P, f1Q = (model.mixture_density_mp([x1], a1, w, dps)[0] for w in (p1.w_P, p1.w_Q))
            f2P, f2Q = (model.mixture_density_mp([x2], a2, w, dps)[0] for w in (p2.w_P, p2.w_Q))
            phi = [[mpmath.npdf(x1 - s) * mpmath.npdf(x2 - t) for t in a2] for s in a1]
            fP = mpmath.fsum((p1.w_P[i] * p2.w_P[j] + p1.w_Q[i] * p2.w_Q[j]) * phi[i][j] / 2
                             for i in range(len(a1)) for j in range(len(a2)))
            fQ = mpmath.fsum((p1.w_P[i] * p2.w_Q[j] + p1.w_Q[i] * p2.w_P[j]) * phi[i][j] / 2
                             for i in range(len(a1)) for j in range(len(a2)))
            assert abs(fP - (f1P * f2P + f1Q * f2Q) / 2) < mpmath.mpf(10) ** -50
            assert abs((fP - fQ) - (f1P - f1Q) * (f2P - f2Q) / 2) < mpmath.mpf(10) ** -50


def test_product_remainder_bound_is_small_and_positive():
    m = 1 / math.sqrt(2)
    r10 = theory.product_log_ratio(10, 10, m, m)[1]
    r18 = theory.product_log_ratio(18, 18, m, m)[1]
    assert 0 < r18 < r10 < 1e-15


def test_psi_expansion_remainder_bound():
    """0 <= psi(u) - u/2 - u^2/8 <= 3u^3/8 on [0, 1], with equality at u = 1 (psi(1) = 1)."""
    u = np.linspace(0.0, 1.0, 2001)
    omega = 1 - np.sqrt(1 - u) - u / 2 - u**2 / 8
    assert np.all(omega >= -1e-15)
    assert np.all(omega <= 3 * u**3 / 8 + 1e-15)
    assert abs(omega[-1] - 3 / 8) < 1e-15


def test_product_second_order_term_is_minus_kappa_over_eight():
    """To first order in kappa the correction is -(kappa_1 + kappa_2)/8, kappa_i = E t_i^2 / E t_i."""
    m = 2 / math.sqrt(2)
    full = theory.product_log_ratio(10, 12, m, m)[0]
    first = theory.wrong_product_log_ratio_first_order(10, 12, m, m)[0]
    np.testing.assert_allclose(full - first, theory.product_second_order(10, 12, m, m)[0], rtol=1e-4)
    kappas = [math.exp(theory.log_tilt_moment(L, m, 2) - theory.log_tilt_moment(L, m, 1)) for L in (10, 12)]
    assert kappas[0] > 1e-7
    np.testing.assert_allclose(full - first, -(kappas[0] + kappas[1]) / 8, rtol=1e-5)


def test_product_stirling_form_is_the_limit():
    m = 1 / math.sqrt(2)
    gaps = []
    for L in (20, 40, 80):
        n = L + 1
        gaps.append(abs(theory.product_log_ratio(L, L, m, m)[0] - (n * math.log(2) - math.log(2) - 1 / 3)))
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 5e-3


def test_c7a_product_ratio_holds_and_rejects_wrong_theories(products):
    assert cl.claim_c7_product_ratio("C7a", products).passed
    one = cl.claim_c7_product_ratio("C7a", products,
                                    theory=variant(theory, product_log_ratio=theory.wrong_product_log_ratio_as_1d))
    half = cl.claim_c7_product_ratio("C7a", products,
                                     theory=variant(theory, product_log_ratio=theory.wrong_product_log_ratio_no_sqrt2))
    assert not one.passed and one.measured > 0.1
    assert not half.passed and abs(half.measured - 0.5 * math.log(2)) < 1e-6


def test_c7a_resolves_the_second_order_term_of_the_product_law(products):
    # the first-order law H^2 = 2 H_1^2 H_2^2 misses the smallest pair by ~1.5e-11 > C7_TOL
    first = cl.claim_c7_product_ratio(
        "C7a", products, theory=variant(theory, product_log_ratio=theory.wrong_product_log_ratio_first_order))
    assert not first.passed and first.measured > 10 * cl.C7_TOL


def test_c7a_a_large_stated_remainder_does_not_rescue_a_wrong_law(products):
    """A theory cannot pass C7a by stating a remainder as large as the effect: the allowance is capped."""
    def loose(*args):
        pred, _ = theory.product_log_ratio(*args)
        return pred + 1e-9, 1.0
    claim = cl.claim_c7_product_ratio("C7a", products, theory=variant(theory, product_log_ratio=loose))
    assert not claim.passed and claim.measured > 5e-10
    # the true remainder bound lies far below the cap, so the cap never binds for the proved law
    ok = cl.claim_c7_product_ratio("C7a", products)
    np.testing.assert_array_equal(ok.details["allowances"], ok.details["remainders"])


def test_c7a_fails_on_a_nan_prediction(products):
    def nan_law(*args):
        return float("nan"), 0.0
    assert not cl.claim_c7_product_ratio("C7a", products, theory=variant(theory, product_log_ratio=nan_law)).passed


def test_c7a_rejects_a_second_order_term_off_by_a_fifth(products):
    def scaled(*args):
        pred, rem = theory.product_log_ratio(*args)
        first = theory.wrong_product_log_ratio_first_order(*args)[0]
        return first + 1.2 * (pred - first), rem
    assert not cl.claim_c7_product_ratio("C7a", products, theory=variant(theory, product_log_ratio=scaled)).passed


def test_c1a_fails_on_a_nan_that_does_not_come_first(sweep):
    import mpmath

    def nan_tail(x, L, M, dps):  # right at the first node, NaN at the others
        vals = theory.tilted_difference_mp(x, L, M, dps)
        return [vals[0]] + [mpmath.mpf("nan")] * (len(vals) - 1)
    claim = cl.claim_c1_identity("C1a", sweep.tilted[-1:], theory=variant(theory, tilted_difference_mp=nan_tail))
    assert not claim.passed


def test_c4d_fails_on_a_nan_that_does_not_come_first():
    M, L_top = DEF["M"], 40
    le, lz = theory.eta_zeta(M, L_top)
    bad = variant(theory, eta_zeta=lambda m, n: (theory.eta_zeta(m, n)[0], theory.eta_zeta(m, n)[1] * np.nan))
    assert cl.claim_c4_tail_moments("C4d", le, lz, M).passed
    assert not cl.claim_c4_tail_moments("C4d", le, lz, M, theory=bad).passed


def test_c7b_rd_bound_holds_and_rejects_polylog(products):
    tv = np.array([m.tv for m in products])
    h = np.array([m.h for m in products])
    assert cl.claim_c7_rd_bound("C7b", tv, h, DEF["M"], 2).passed
    wrong = cl.claim_c7_rd_bound("C7b", tv, h, DEF["M"], 2,
                                 theory=variant(theory, h2_bound_rd=theory.wrong_h2_bound_rd_polylog))
    assert not wrong.passed


def test_product_panel_doubling_small(products):
    assert model_product.product_panel_doubling(products[0], panels=DEF["quad_panels"],
                                                nodes=DEF["quad_nodes"]) < 1e-12


@pytest.mark.parametrize("call,match", [
    (lambda: theory.log_chi_tail(-1.0, 2), "t must be"),
    (lambda: theory.log_chi_tail(1.0, 0), "d"),
    (lambda: theory.rd_bound(0.0, 1.0, 2), "tv must lie"),
    (lambda: theory.log_tilt_moment(10, 1.0, 0), "k"),
    (lambda: theory.product_log_ratio(11, 10, 0.7, 0.7), "even"),
    (lambda: model_product.measure_product_pair(10, 10, -1.0, 0.7), "M"),
])
def test_bad_input_rd(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_tilted_f_norms_against_closed_form(sweep):
    from scipy import integrate

    for m in (sweep.tilted[0], sweep.tilted[-1]):
        l1, l2 = model_float.tilted_f_norms(m)
        assert abs(l1 - (math.log(2) + m.log_tv)) <= 1e-12
        n, M = m.n, m.M
        log_s = theory.log_s_tilted(m.L, M)
        # E F^2 = s^2 E (2 sinh(M Z / n))^{2n}, peak of the integrand near z = sqrt(2n)
        zp = math.sqrt(2 * n)

        def g(z, n=n, M=M, zp=zp):
            return math.exp(2 * n * (math.log(2 * math.sinh(M * z / n)) - math.log(2 * math.sinh(M * zp / n)))
                            - 0.5 * (z * z - zp * zp))

        val = integrate.quad(g, 0, zp + 40, points=[zp], epsrel=1e-13, limit=400)[0]
        log_ef2 = (2 * log_s + 2 * n * math.log(2 * math.sinh(M * zp / n)) - 0.5 * zp * zp
                   - 0.5 * math.log(2 * math.pi) + math.log(2 * val))
        assert abs(2 * l2 - log_ef2) <= 1e-9


def test_tail_bounds_hold_on_tilted_pairs_with_slack_n_to_the_n(sweep):
    le, lz = model_float.tail_moments_series(sweep.M, 300)
    for m in sweep.tilted:
        l1, l2 = model_float.tilted_f_norms(m)
        nn = m.n * math.log(m.n) - math.lgamma(m.n + 1)
        for slack in (math.log(2) + le[m.L] - l1, math.log(2) + lz[m.L] - l2):
            assert slack > 0
            assert abs(slack - nn) < 1.0 + 0.05 * nn


def test_c7b_fails_cleanly_on_a_negative_or_nan_bound(products):
    tv = np.array([m.tv for m in products])
    h = np.array([m.h for m in products])
    for bad in (lambda t, M, d: -theory.h2_bound_rd(t, M, d), lambda t, M, d: np.full_like(t, np.nan)):
        c = cl.claim_c7_rd_bound("C7b", tv, h, DEF["M"], 2, theory=variant(theory, h2_bound_rd=bad))
        assert not c.passed


def test_measurements_share_tv_h_and_log_ratio(products):
    m = products[0]
    assert m.tv == math.exp(m.log_tv) and m.h == math.exp(m.log_h)
    assert m.log_ratio == m.log_h - m.log_tv


# --------------------------------------------------------------------------------------------------
# the paper's construction on Chebyshev nodes (C8)

CHEB_N = (11, 15)


@pytest.fixture(scope="module")
def cheb():
    return model_chebyshev.measure_chebyshev_sweep(CHEB_N, DEF["M"], panels=DEF["quad_panels"],
                                                   nodes=DEF["quad_nodes"])


@pytest.mark.parametrize("n", [0, 10, 12, 13.5])
def test_chebyshev_degree_must_be_odd_and_at_least_11(n):
    with pytest.raises((ValueError, TypeError)):
        model_chebyshev.chebyshev_pair_mp(n, 1.0)


def test_chebyshev_degrees_of_the_sweep():
    assert model_chebyshev.chebyshev_degrees(31) == (11, 15, 19, 23, 27, 31)
    assert model_chebyshev.chebyshev_degrees(30) == (11, 15, 19, 23, 27)


@pytest.mark.parametrize("n,M", [(11, 1.0), (19, 0.5), (31, 2.0)])
def test_chebyshev_pair_matches_the_prescribed_moments(n, M):
    pair = model_chebyshev.chebyshev_pair_mp(n, M, dps=60)
    a = min(1.0, M)
    with mpmath.workdps(60):
        c = (a * (mpmath.sqrt(2) - 1)) ** (n + 1)
        for k in range(n + 1):
            dk = mpmath.fsum(w * t**k for w, t in zip(pair.w, pair.atoms, strict=True))
            want = c / mpmath.fac2(n - k) if k % 2 else 0
            assert abs(dk - want) <= mpmath.mpf(10) ** -45 * max(abs(c), 1e-300) + mpmath.mpf(10) ** -50
    # the atoms are the scaled zeros of T_{n+1}, symmetric, inside [-a, a]; the weights are odd
    t = np.array([float(v) for v in pair.atoms])
    w = np.array([float(v) for v in pair.w])
    assert_allclose(np.cos((n + 1) * np.arccos(t / a)), 0.0, atol=1e-12)
    assert_allclose(t, -t[::-1], atol=1e-15)
    assert_allclose(w, -w[::-1], rtol=1e-10, atol=1e-30)
    # the paper's item 1: |w_j| <= 1/(n + 1), so all four measures are probability measures
    assert 0 < pair.spread <= 1


def test_chebyshev_monomial_part_is_the_closed_form(cheb):
    # (a): ||g||^2 = ||q||^2 + ||r||^2 with q = c x^n / n!: the exact double sum, less the Hermite tail, is the
    # closed form of ||q||_2 (an independent route: atoms and moments against (2n - 1)!!)
    for m in cheb:
        q2 = 0.5 * math.log(math.exp(2 * m.log_g_l2) - math.exp(2 * m.log_r_l2))
        assert abs(q2 - theory.chebyshev_log_q_norms(m.n, m.M)[1]) < 1e-10


@pytest.mark.parametrize("n", [11, 15])
def test_chebyshev_q_norms_by_quadrature(n):
    lq1, lq2 = theory.chebyshev_log_q_norms(n, 0.7)
    log_c = (n + 1) * math.log(0.7 * (math.sqrt(2) - 1)) - math.lgamma(n + 1)
    with mpmath.workdps(30):
        e1 = 2 * mpmath.quad(lambda x: x**n * mpmath.npdf(x), [0, 10, 40])
        e2 = 2 * mpmath.quad(lambda x: x ** (2 * n) * mpmath.npdf(x), [0, 10, 40])
    assert abs(lq1 - (log_c + float(mpmath.log(e1)))) < 1e-12
    assert abs(lq2 - (log_c + 0.5 * float(mpmath.log(e2)))) < 1e-12


def test_chebyshev_tv_and_h_against_a_float64_quadrature_on_the_whole_line():
    # no folding: f_pi and f_eta in float64 from the atoms on [-X, X] (at n = 11 the difference keeps ~8 digits)
    n, M = 11, 1.0
    m = model_chebyshev.measure_chebyshev_pair(n, M)
    pair = model_chebyshev.chebyshev_pair_mp(n, M, dps=m.dps)
    t = np.array([float(v) for v in pair.atoms])
    w = np.array([float(v) for v in pair.w])
    lam = float(pair.lam)
    x, wq = model_chebyshev.gauss_legendre_panels(-m.X, m.X, 400, 20)
    phi = np.exp(-0.5 * (x[:, None] - t) ** 2) / math.sqrt(2 * math.pi)
    f_eta = (1 - lam) * np.exp(-0.5 * x**2) / math.sqrt(2 * math.pi) + lam * phi.mean(axis=1)
    d = lam / 4 * phi @ w
    f_pi = f_eta + d
    tv = 0.5 * np.sum(wq * np.abs(d))
    h2 = 0.5 * np.sum(wq * d**2 / (np.sqrt(f_pi) + np.sqrt(f_eta)) ** 2)
    # TV: the book's 40-panel rule is limited by the sign changes of g near 0 (panel doubling 2.4e-5, C8's
    # quadrature slack 1e-3); H has a smooth integrand
    assert abs(math.log(tv) - m.log_tv) < 1e-4
    assert abs(0.5 * math.log(h2) - m.log_h) < 1e-7


def test_chebyshev_gaussian_moments_by_quadrature(cheb):
    # E[g^2 cosh(aZ)] / E[g^2] from the double sums against a direct mp quadrature of g(x)^2 phi(x) cosh(ax)
    m = cheb[0]
    pair = model_chebyshev.chebyshev_pair_mp(m.n, m.M, dps=2 * m.dps)
    with mpmath.workdps(2 * m.dps):
        def g(x):
            return mpmath.fsum(wj * mpmath.exp(tj * x - tj**2 / 2) for wj, tj in zip(pair.w, pair.atoms, strict=True))
        num = mpmath.quad(lambda x: g(x) ** 2 * mpmath.npdf(x) * mpmath.cosh(x), [-30, -10, 0, 10, 30])
        den = mpmath.quad(lambda x: g(x) ** 2 * mpmath.npdf(x), [-30, -10, 0, 10, 30])
        assert abs(float(num / den) / m.cosh_ratio - 1) < 1e-8
        assert abs(0.5 * float(mpmath.log(den)) - m.log_g_l2) < 1e-8


def test_c8_claims_hold_and_reject_each_wrong_theory(cheb):
    assert cl.claim_c8_chebyshev_tv("C8a", cheb).passed
    assert cl.claim_c8_chebyshev_h("C8b", cheb).passed
    for wrong in (theory.wrong_chebyshev_log_tv_undiluted, theory.wrong_chebyshev_log_tv_l2):
        assert not cl.claim_c8_chebyshev_tv("C8a", cheb, theory=variant(theory, chebyshev_log_tv=wrong)).passed
    for wrong in (theory.wrong_chebyshev_log_h_paper_bound, theory.wrong_chebyshev_log_h_chi2):
        assert not cl.claim_c8_chebyshev_h("C8b", cheb, theory=variant(theory, chebyshev_log_h=wrong)).passed


@pytest.mark.parametrize("shift", [0.3, -0.3])
def test_c8a_rejects_a_tv_off_by_more_than_the_tail(cheb, shift):
    # the allowance at n = 11 is -log(1 - rho) ~ 0.27: a constant factor e^{0.3} in TV must fail
    bad = variant(theory, chebyshev_log_tv=lambda n, M: theory.chebyshev_log_tv(n, M) + shift)
    assert not cl.claim_c8_chebyshev_tv("C8a", cheb, theory=bad).passed


@pytest.mark.parametrize("shift", [3e-3, -4e-3])
def test_c8b_resolves_h_to_its_interval(cheb, shift):
    bad = variant(theory, chebyshev_log_h=lambda n, M: theory.chebyshev_log_h(n, M) + shift)
    assert not cl.claim_c8_chebyshev_h("C8b", cheb, theory=bad).passed


def test_c8_fails_cleanly_on_nan(cheb):
    nan = variant(theory, chebyshev_log_tv=lambda n, M: math.nan, chebyshev_log_h=lambda n, M: math.nan)
    assert not cl.claim_c8_chebyshev_tv("C8a", cheb, theory=nan).passed
    assert not cl.claim_c8_chebyshev_h("C8b", cheb, theory=nan).passed


def test_c8_allowance_is_nan_when_the_tail_exceeds_the_l1_norm(cheb):
    import dataclasses
    m = dataclasses.replace(cheb[0], log_r_l2=cheb[0].log_tv - cheb[0].log_lambda + math.log(8.0) + 0.1)
    assert math.isnan(cl.chebyshev_tv_allowance(m))
    assert not cl.claim_c8_chebyshev_tv("C8a", [m]).passed


def test_chebyshev_h_interval_brackets_zero_and_is_narrow(cheb):
    for m in cheb:
        lo, hi = cl.chebyshev_h_interval(m)
        assert lo < 0 < hi and hi - lo < 5e-3


def test_alpha_star_is_the_papers_exponent():
    assert_allclose(theory.alpha_star(np.exp(-np.exp(2.0))), 0.33 / 2.0, rtol=1e-14)
