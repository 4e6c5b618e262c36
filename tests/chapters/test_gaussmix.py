"""Tests of theorylib.gaussmix (chapter 'hellinger-tv-mixtures'): unit tests and one mutation test per claim."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_less
from scipy import special

from theorylib import gaussmix as gm
from theorylib.chapters.hellinger_tv_mixtures import CHAPTER
from theorylib.core import rng_for

DEF = CHAPTER.defaults()


# --------------------------------------------------------------------------------------------------
# the default sweep, computed once as the notebook computes it


@pytest.fixture(scope="module")
def sweep():
    M = DEF["M"]
    L = gm.l_grid(DEF["L_max"], DEF["L_step"])
    quad = {"panels": DEF["quad_panels"], "nodes": DEF["quad_nodes"]}
    tilted = [gm.measure_fd_pair(int(v), M, **quad) for v in L]
    untilted = [gm.measure_fd_pair(int(v), M, tilted=False, **quad) for v in L]
    closed = [gm.tilted_closed_forms(int(v), M) for v in L]
    rp = gm.random_pairs_distances(rng_for(DEF["seed"], "C7.4"), M, DEF["n_random_pairs"])
    return {
        "M": M, "L": L, "tilted": tilted, "untilted": untilted, "closed": closed, "rp": rp,
        "log_tv": np.array([m.log_tv for m in tilted]), "log_h": np.array([m.log_h for m in tilted]),
        "log_tv_u": np.array([m.log_tv for m in untilted]), "log_h_u": np.array([m.log_h for m in untilted]),
    }


def _testbed(sw):
    tv = np.concatenate([np.exp(sw["log_tv"]), np.exp(sw["log_tv_u"]), sw["rp"][:, 0]])
    h = np.concatenate([np.exp(sw["log_h"]), np.exp(sw["log_h_u"]), sw["rp"][:, 1]])
    return tv, h


# --------------------------------------------------------------------------------------------------
# the pairs


@pytest.mark.parametrize("make", [gm.tilted_fd_pair, gm.untilted_fd_pair])
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
    pr = gm.fd_pair_mp(L, M, tilted=tilted, dps=dps)
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
    pr = gm.fd_pair_mp(L, M, tilted=True, dps=dps)
    fP, fQ = gm.equispaced_mixtures_mp(x, pr.theta0, pr.delta, [pr.w_P, pr.w_Q], dps)
    dP = gm.mixture_density_mp(x, pr.atoms(), pr.w_P, dps)  # direct sum: one exp per term
    dQ = gm.mixture_density_mp(x, pr.atoms(), pr.w_Q, dps)
    closed = gm.tilted_difference_mp(x, L, M, dps)
    n = L + 1
    with mpmath.workdps(dps):
        for i, xv in enumerate(x):
            tol = mpmath.mpf(10) ** (-dps + 5) * (fP[i] + fQ[i])
            assert abs(fP[i] - dP[i]) <= tol and abs(fQ[i] - dQ[i]) <= tol
            assert abs((fP[i] - fQ[i]) - closed[i]) <= tol
            cosh_form = pr.s * mpmath.npdf(xv) * (2 * mpmath.cosh(M * mpmath.mpf(xv) / n)) ** n
            assert abs((fP[i] + fQ[i]) - cosh_form) <= tol
    # float64 densities agree with the mp ones
    aP, wP, _, _, _ = gm.tilted_fd_pair(L, M)
    assert_allclose(gm.mixture_density(x, aP, wP), np.array(fP, dtype=float), rtol=1e-12)


def test_untilted_weights_and_float_pair_agree_with_mp():
    pr = gm.fd_pair_mp(8, 0.7, tilted=False, dps=40)
    aP, wP, aQ, wQ, s = gm.untilted_fd_pair(8, 0.7)
    assert_allclose(s, 2.0**-8)
    assert_allclose(wP, [float(w) for w in pr.w_P if w != 0], rtol=1e-14)
    assert_allclose(aQ, [float(t) for a, t in enumerate(pr.atoms()) if a % 2 == 0], atol=1e-15)


# --------------------------------------------------------------------------------------------------
# quadrature and closed forms


def test_panel_doubling_changes_little():
    a = gm.measure_fd_pair(10, 1.0, panels=40, nodes=20, check_identity=False)
    b = gm.measure_fd_pair(10, 1.0, panels=80, nodes=20, check_identity=False)
    assert abs(math.expm1(a.log_tv - b.log_tv)) < 1e-11
    assert abs(math.expm1(a.log_h - b.log_h)) < 1e-11
    assert a.log_tail_bound - 2 * a.log_h < math.log(1e-17)


def test_closed_forms_match_measurement_small_L():
    for L, M in [(6, 0.5), (8, 2.0)]:
        m = gm.measure_fd_pair(L, M)
        c = gm.tilted_closed_forms(L, M)
        assert abs(math.expm1(m.log_tv - c["log_tv"])) < 1e-11
        assert abs(math.expm1(m.log_h - c["log_h"])) < 1e-11
        assert m.identity_digits <= m.identity_bound_digits
        assert c["rel_err_tv"] < 1e-12 and c["rel_err_h2"] < 1e-12


def test_asymptotic_formulas():
    # Stirling form and Gamma form of log(H/TV) differ by O(1/n)
    d = [abs(gm.log_ratio_asymptotic(L, 1.0) - gm.log_ratio_asymptotic(L, 1.0, stirling=True)) for L in (20, 80, 320)]
    assert d[0] > d[1] > d[2] and d[2] * 321 < 2 * d[0] * 21
    assert gm.tv_asymptotic(10, 1.0, order=0) == pytest.approx(gm.tv_leading(10, 1.0))
    assert gm.tv_asymptotic(10, 1.0) - gm.tv_asymptotic(10, 1.0, order=0) == pytest.approx(gm.c1(1.0) / 11)
    # log E|Z|^n against the moment formula for even n
    assert gm.log_abs_moment(6) == pytest.approx(math.log(15.0))
    # log s from the float pair equals log of the mp value
    pr = gm.fd_pair_mp(12, 1.5, dps=40)
    assert gm.log_s_tilted(12, 1.5) == pytest.approx(float(mpmath.log(pr.s)), rel=1e-14)


def test_tv_hellinger_float_two_gaussians():
    for a, b in [(-1.0, 1.0), (0.0, 0.05), (-2.0, 1.5)]:
        tv, h = gm.tv_hellinger_float([a], [1.0], [b], [1.0])
        d = abs(a - b)
        assert tv == pytest.approx(2 * special.ndtr(d / 2) - 1, rel=1e-12)
        assert h**2 == pytest.approx(-math.expm1(-d * d / 8), rel=1e-11)
    assert gm.tv_hellinger_float([0.3], [1.0], [0.3], [1.0]) == (0.0, 0.0)


def test_random_pairs_satisfy_le_cam():
    rp = gm.random_pairs_distances(np.random.default_rng(7), 1.5, 60)
    tv, h = rp[:, 0], rp[:, 1]
    assert np.all(tv >= 1e-6)
    assert_array_less(h**2, tv)
    assert_array_less(tv, h * np.sqrt(2 - h**2))


@pytest.mark.parametrize("alpha", [1e-2, 1e-4])
def test_dilution_sandwich(alpha):
    rng = np.random.default_rng(11)
    for _ in range(3):
        d = gm.dilution_sandwich(*gm.random_pair(rng, 1.0), alpha)
        assert d["lower_spec"] <= d["lower_tight"] <= d["h2"] * (1 + 1e-10)
        assert d["h2"] <= d["upper"] * (1 + 1e-10)


# --------------------------------------------------------------------------------------------------
# Theorem 7.1 pieces


@pytest.mark.parametrize("u,L", [(0.3, 0), (2.0, 5), (40.0, 12), (5.0, 60), (150.0, 300), (1e-3, 3)])
def test_log_rho_tail_against_mpmath(u, L):
    with mpmath.workdps(50):
        ref = mpmath.log(mpmath.nsum(lambda j: mpmath.mpf(u) ** j / mpmath.factorial(j), [L + 1, mpmath.inf]))
    assert float(gm.log_rho_tail(u, L)) == pytest.approx(float(ref), rel=1e-11, abs=1e-11)


def test_thm71_bound_properties():
    M = 1.0
    tv = np.logspace(-40, -0.5, 30)
    B, Lb, Tb = gm.thm71_bound(tv, M)
    assert np.all(np.diff(B) >= 0)  # non-decreasing in TV
    assert np.all(B[tv >= 1e-9] >= 1)  # vacuous at moderate TV (documents the constants)
    assert B[0] < 1e-20
    # the minimizer reproduces B through the un-optimized right side
    i = 10
    assert gm.thm71_rhs(tv[i], M, int(Lb[i]), float(Tb[i])) == pytest.approx(B[i], rel=1e-9)
    assert np.all(Tb >= M)
    # valid on random pairs and on a tilted pair where it is non-vacuous
    rp = gm.random_pairs_distances(np.random.default_rng(2), M, 40)
    assert np.all(rp[:, 1] ** 2 <= gm.thm71_bound(rp[:, 0], M)[0])
    m = gm.measure_fd_pair(18, M, check_identity=False)
    b = gm.thm71_bound(m.tv, M)[0]
    assert m.h**2 <= b < 1


def test_hypercontractive_ratio():
    for L in range(0, 31, 3):
        c = np.zeros(L + 1)
        c[L] = 1.0
        r = gm.hypercontractive_ratio(c)
        log_dfact = L * math.log(2) + math.lgamma(L + 0.5) - 0.5 * math.log(math.pi)
        assert r == pytest.approx(math.exp(0.5 * log_dfact - gm.log_abs_moment(L)), rel=1e-9)
        assert r <= math.exp(L)
    rng = np.random.default_rng(5)
    for deg in (1, 3, 6):
        c = rng.normal(size=deg + 1)
        assert 1.0 <= gm.hypercontractive_ratio(c) <= math.exp(deg)
    # He_4 = x^4 - 6x^2 + 3: ||He_4||_2 = sqrt(24)
    assert gm.hypercontractive_ratio([3.0, 0, -6.0, 0, 1.0]) > 1.0


# --------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("call,match", [
    (lambda: gm.tilted_fd_pair(5, 1.0), "even"),
    (lambda: gm.untilted_fd_pair(-2, 1.0), "non-negative"),
    (lambda: gm.tilted_fd_pair(4, -1.0), "M = -1.0"),
    (lambda: gm.tilted_fd_pair(4, float("nan")), "finite"),
    (lambda: gm.fd_pair_mp(4, 1.0, dps=10), "dps"),
    (lambda: gm.mixture_density_mp([0.0], [0.0], [1.0], 12), "dps"),
    (lambda: gm.measure_fd_pair(7, 1.0), "even"),
    (lambda: gm.l_grid(20, 4), "fewer than 5"),
    (lambda: gm.l_grid(38, 3), "even"),
    (lambda: gm.random_pair(np.random.default_rng(0), 0.0), "M = 0.0"),
    (lambda: gm.tv_hellinger_float([0.0], [0.5], [1.0], [1.0]), "sum to 1"),
    (lambda: gm.tv_hellinger_float([0.0], [-1.0], [1.0], [1.0]), ">= 0"),
    (lambda: gm.mixture_density([0.0], [0.0, 1.0], [1.0]), "equal length"),
    (lambda: gm.thm71_bound([0.0], 1.0), r"\(0, 1\]"),
    (lambda: gm.thm71_rhs(1e-3, 1.0, 2, 0.5), "T = 0.5"),
    (lambda: gm.log_rho_tail(-1.0, 2), "u must be > 0"),
    (lambda: gm.hypercontractive_ratio([0.0, 0.0]), "non-zero"),
    (lambda: gm.dilution_sandwich([0.0], [1.0], [1.0], [1.0], 1.5), "alpha"),
    (lambda: gm.gauss_legendre_panels(1.0, 0.0, 4, 5), "a < b"),
    (lambda: gm.tv_asymptotic(10, 1.0, order=2), "order"),
    (lambda: gm.fit_increments(np.array([6, 10, 14]), np.zeros(3)), "at least 4"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --------------------------------------------------------------------------------------------------
# mutation tests: one per claim, at the default parameters


def test_c71a_identity_rejects_monomial(sweep):
    assert gm.claim_c71_identity(sweep["tilted"]).passed
    L = int(sweep["L"][-1])
    wrong = gm.measure_fd_pair(L, sweep["M"], closed_form=gm.monomial_difference_mp)
    claim = gm.claim_c71_identity([wrong])
    assert not claim.passed and claim.measured > 10


def test_c71b_tv_rejects_monomial_and_untilted(sweep):
    pred = [c["log_tv"] for c in sweep["closed"]]
    assert gm.claim_c71_distance("C7.1b", sweep["log_tv"], pred).passed
    mono = [math.log(gm.monomial_tv_approx(int(L), sweep["M"])) for L in sweep["L"]]
    wrong_a = gm.claim_c71_distance("C7.1b", sweep["log_tv"], mono)
    assert not wrong_a.passed and wrong_a.measured > 0.1
    wrong_b = gm.claim_c71_distance("C7.1b", sweep["log_tv_u"], pred)
    assert not wrong_b.passed and wrong_b.measured > 0.1


def test_c71c_h_rejects_asymptotic_and_untilted(sweep):
    pred = [c["log_h"] for c in sweep["closed"]]
    assert gm.claim_c71_distance("C7.1c", sweep["log_h"], pred).passed
    asym = [c["log_tv"] + gm.log_ratio_asymptotic(int(L), sweep["M"])
            for L, c in zip(sweep["L"], sweep["closed"], strict=True)]
    assert not gm.claim_c71_distance("C7.1c", sweep["log_h"], asym).passed
    assert not gm.claim_c71_distance("C7.1c", sweep["log_h_u"], pred).passed


def test_c72_rejects_untilted_and_wrong_rate(sweep):
    r_t = sweep["log_h"] - sweep["log_tv"]
    r_u = sweep["log_h_u"] - sweep["log_tv_u"]
    assert gm.claim_c72(sweep["L"], r_t, sweep["M"]).passed
    wrong = gm.claim_c72(sweep["L"], r_u, sweep["M"])
    assert not wrong.passed and abs(wrong.measured - 0.5 * math.log(2)) > 0.25
    assert not gm.claim_c72(sweep["L"], r_t, sweep["M"], predicted_b=math.log(2)).passed


def test_c73_rejects_wrong_constants_and_leading_order(sweep):
    M = sweep["M"]
    assert gm.claim_c73(sweep["L"], sweep["log_tv"], M).passed
    assert not gm.claim_c73(sweep["L"], sweep["log_tv"], M, c1_fn=lambda m: -m**2 / 3).passed
    assert not gm.claim_c73(sweep["L"], sweep["log_tv"], M, c1_fn=lambda m: 0.0).passed

    def leading(L, m):
        n = L + 1
        return 0.5 * n * math.log(m * m / (math.e * n))

    assert not gm.claim_c73(sweep["L"], sweep["log_tv"], M, base=leading).passed


def test_c74a_le_cam_lower_rejects_h_le_tv(sweep):
    tv, h = _testbed(sweep)
    assert gm.claim_c74_lower(tv, h).passed
    assert not gm.claim_c74_lower(tv, h, bound=lambda t: t**2).passed


def test_c74b_le_cam_upper_rejects_tv_le_h2(sweep):
    tv, h = _testbed(sweep)
    assert gm.claim_c74_upper(tv, h).passed
    assert not gm.claim_c74_upper(tv, h, bound=lambda x: x**2).passed


def test_c74c_thm71_rejects_polylog(sweep):
    tv, h = _testbed(sweep)
    assert gm.claim_c74_thm71(tv, h, sweep["M"]).passed
    wrong = gm.claim_c74_thm71(tv, h, sweep["M"], bound=gm.polylog_bound)
    assert not wrong.passed and wrong.measured > 1e3


def test_fit_sensitivity_is_small_at_defaults(sweep):
    L, M = sweep["L"], sweep["M"]
    r_t = sweep["log_h"] - sweep["log_tv"]
    s72 = gm.fit_sensitivity(lambda L_, y, **k: gm.fit_increments(L_, y, **k)[0], L, r_t, (2, 3), 4)
    s73 = gm.fit_sensitivity(lambda L_, y, **k: gm.fit_tv_remainder(L_, y, M, **k), L, sweep["log_tv"], (1, 2), 3)
    assert s72 < gm.rate_tolerance(M) / 10 and s73 < gm.rate_tolerance(M) / 10
