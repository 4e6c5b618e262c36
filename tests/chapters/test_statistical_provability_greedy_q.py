"""Tests of chapter 'statistical-provability-greedy-q': the theory, the model, and one mutation test per claim."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from theorylib.chapters.statistical_provability_greedy_q import CHAPTER, model, theory
from theorylib.chapters.statistical_provability_greedy_q import claims as cl
from theorylib.core import rng_for
from theorylib.core.theory import nan_after_first, variant

DEF = CHAPTER.defaults()
M_ALL = [*DEF["m_small"], *DEF["m_list"]]  # C4a's grid; C4b fits the slope over m_list only


# --------------------------------------------------------------------------------------------------
# the roles of the modules


# --------------------------------------------------------------------------------------------------
# MDPs, values, occupancy


def three_state_mdp(H: int = 2) -> model.ReachMDP:
    """Live state 0, goal 1, dead 2. Tactic 0: goal w.p. 0.5, else stay; tactic 1: goal w.p. 0.8, else dead."""
    P = np.zeros((3, 2, 3))
    P[0, 0] = [0.5, 0.5, 0.0]
    P[0, 1] = [0.0, 0.8, 0.2]
    P[1, :, 1] = P[2, :, 2] = 1.0
    return model.ReachMDP(P, np.array([False, True, False]), np.array([False, False, True]), H)


def test_hand_computed_values_and_pdl():
    mdp = three_state_mdp()
    V, Q = model.optimal_values(mdp)
    # depth 1: Q = (0.5, 0.8), V = 0.8; depth 0: Q = (0.5 + 0.5 * 0.8, 0.8) = (0.9, 0.8), V = 0.9
    np.testing.assert_allclose(Q[1, 0], [0.5, 0.8], atol=1e-15)
    np.testing.assert_allclose(Q[0, 0], [0.9, 0.8], atol=1e-15)
    assert V[0, 0] == pytest.approx(0.9) and V[0, 1] == 1 and V[0, 2] == 0
    pi = np.array([[1, 0, 0], [0, 0, 0]])  # risky first, then the slow tactic: 0.8 + 0 = 0.8 success
    Vpi = model.policy_values(mdp, pi)
    assert Vpi[0, 0] == pytest.approx(0.8)
    rho0 = np.array([1.0, 0.0, 0.0])
    d = model.occupancy(mdp, pi, rho0)
    np.testing.assert_allclose(d, [[1, 0, 0], [0, 0, 0]], atol=1e-15)  # no mass stays live after step 1
    # gap 0.1 = d_0(0) Delta_0(0, 1) = 0.9 - 0.8
    assert theory.pdl_sum(mdp, pi, d) == pytest.approx(0.1, abs=1e-14)
    assert V[0, 0] - Vpi[0, 0] == pytest.approx(0.1, abs=1e-14)
    # the other order: slow tactic first, then the risky one: 0.5 + 0.5 * 0.8 = 0.9, optimal
    pi2 = np.array([[0, 0, 0], [1, 0, 0]])
    assert model.policy_values(mdp, pi2)[0, 0] == pytest.approx(0.9)
    assert theory.pdl_sum(mdp, pi2, model.occupancy(mdp, pi2, rho0)) == pytest.approx(0.0, abs=1e-15)


def test_theory_and_model_bellman_agree():
    mdp = model.random_reach_mdp(15, 3, 6, rng_for(0, "test-bellman"))
    V, Q = model.optimal_values(mdp)
    Vt, Qt = theory.bellman_optimal(mdp.P, mdp.goal, mdp.dead, mdp.H)
    np.testing.assert_allclose(V, Vt, atol=1e-15)
    np.testing.assert_allclose(Q[:, mdp.live], Qt[:, mdp.live], atol=1e-15)


def test_optimal_prover_has_zero_gap():
    rng = rng_for(0, "test-opt")
    for _ in range(5):
        mdp = model.random_reach_mdp(20, 3, 8, rng)
        V, Q = model.optimal_values(mdp)
        pi = model.greedy_policy(Q)
        np.testing.assert_allclose(model.policy_values(mdp, pi), V, atol=1e-14)


def test_occupancy_sum_is_mean_truncated_length_by_simulation():
    """The occupancy lemma against Monte-Carlo episodes of a random prover."""
    rng = rng_for(0, "test-occ")
    mdp = model.random_reach_mdp(12, 3, 7, rng)
    pi = rng.integers(0, mdp.A, size=(mdp.H, mdp.S))
    rho0 = model.live_uniform_start(mdp)
    d = model.occupancy(mdp, pi, rho0)
    n = 40_000
    s = rng.choice(mdp.S, size=n, p=rho0)
    lengths = np.full(n, mdp.H)
    alive = np.ones(n, bool)
    cdf = np.cumsum(mdp.P, axis=2)
    for h in range(mdp.H):
        idx = np.flatnonzero(alive)
        u = rng.random(idx.size)
        s[idx] = np.minimum((u[:, None] > cdf[s[idx], pi[h, s[idx]]]).sum(axis=1), mdp.S - 1)
        absorbed = ~mdp.live[s[idx]]
        lengths[idx[absorbed]] = h + 1
        alive[idx[absorbed]] = False
    se = lengths.std() / np.sqrt(n)
    assert abs(lengths.mean() - d.sum()) < 4 * se


def test_faithful_abstraction_unit():
    for V, lengths in model.faithful_abstraction_runs(10, 20, 3, 6, rng_for(0, "test-faithful")):
        np.testing.assert_array_equal(V, theory.provable_within(lengths, 6))
        np.testing.assert_array_equal(V[-1], (lengths == 0).astype(float))


def test_shortest_proof_lengths_refuses_stochastic_dynamics():
    with pytest.raises(ValueError, match="deterministic"):
        model.shortest_proof_lengths(model.random_reach_mdp(10, 2, 3, rng_for(0, "x")))


def test_hard_margin_deterministic_mdp_eps_below_half_gives_zero_gap():
    rng = rng_for(0, "test-hard")
    for _ in range(10):
        mdp = model.random_reach_mdp(30, 4, 10, rng, deterministic=True)
        V, Q = model.optimal_values(mdp)
        Qhat = Q + rng.uniform(-0.49, 0.49, Q.shape)
        pi = model.greedy_policy(Qhat)
        rho0 = model.live_uniform_start(mdp)
        assert rho0 @ V[0] - rho0 @ model.policy_values(mdp, pi)[0] == pytest.approx(0.0, abs=1e-15)


def test_greedy_bound_holds_on_random_mdps():
    for r in model.noisy_greedy_runs(10, 30, 4, 10, 0.3, rng_for(0, "test-bound")):
        assert r.gap <= theory.greedy_bound(r.d, r.eps) + 1e-12
        assert theory.greedy_bound(r.d, r.eps) <= 2 * r.eps[:, r.mdp.live].max() * r.mean_len + 1e-12


def test_greedy_policy_breaks_ties_uniformly():
    Qhat = np.zeros((20_000, 3))
    counts = np.bincount(model.greedy_policy(Qhat, rng_for(0, "ties")), minlength=3)
    assert np.all(np.abs(counts / 20_000 - 1 / 3) < 4 * np.sqrt(2 / 9 / 20_000))
    assert np.all(model.greedy_policy(Qhat) == 0)


@pytest.mark.parametrize("bad", ["rows", "negative", "H"])
def test_mdp_validation(bad):
    mdp = three_state_mdp()
    P, H = mdp.P.copy(), 2
    if bad == "rows":
        P[0, 0, 0] += 1e-6
    elif bad == "negative":
        P[0, 0] = [1.2, -0.2, 0.0]
    else:
        H = 0
    with pytest.raises(ValueError):
        model.ReachMDP(P, mdp.goal, mdp.dead, H)


# --------------------------------------------------------------------------------------------------
# the binary chain


def test_binary_flip_prob_two_tactics_closed_form():
    for sigma in (0.2, 0.35, 1.0):
        assert theory.binary_flip_prob(sigma, 2) == pytest.approx(stats.norm.sf(1 / (sigma * np.sqrt(2))),
                                                                  rel=1e-9)


def test_binary_flip_prob_against_a_trapezoid_rule():
    """p_f to 1e-9 relative against a fine trapezoid rule on [-12, 12] (exponentially accurate for this smooth,
    Gaussian-decaying integrand): pins the quadrature's accuracy, which C3 cannot resolve."""
    z = np.linspace(-12.0, 12.0, 48_001)
    for sigma, K in [(0.35, 4), (0.3, 3), (0.4, 6), (1.0, 10)]:
        y = stats.norm.pdf(z) * -np.expm1((K - 1) * stats.norm.logcdf(1 / sigma + z))
        ref = float(np.sum(y[1:] + y[:-1]) * (z[1] - z[0]) / 2)
        assert theory.binary_flip_prob(sigma, K) == pytest.approx(ref, rel=1e-9)


def test_binary_flip_prob_values_and_monotonicity():
    assert theory.binary_flip_prob(0.35, 4) == pytest.approx(0.054933, abs=1e-6)
    assert theory.binary_flip_prob(0.3, 3) == pytest.approx(0.01727, abs=1e-5)
    assert theory.binary_flip_prob(0.4, 6) == pytest.approx(0.13335, abs=1e-5)
    assert theory.binary_flip_prob(0.35, 5) > theory.binary_flip_prob(0.35, 4)


def test_chain_closed_forms():
    assert theory.chain_mean_length(1e-12, 20) == pytest.approx(20, rel=1e-9)
    assert theory.chain_mean_length(0.999999, 20) == pytest.approx(1.0, rel=1e-5)
    for p_f, L in [(0.05, 64), (0.3, 5)]:
        assert theory.chain_gap(p_f, L) == pytest.approx(1 - (1 - p_f) ** L, rel=1e-13)


def test_binary_chain_simulation_matches_closed_forms():
    p_f = theory.binary_flip_prob(0.5, 3)
    success, lengths = model.simulate_binary_chain(10, 3, 0.5, 50_000, rng_for(0, "test-chain"))
    g = 1 - success.mean()
    assert abs(g - theory.chain_gap(p_f, 10)) < 4 * np.sqrt(g * (1 - g) / success.size)
    assert abs(lengths.mean() - theory.chain_mean_length(p_f, 10)) < 4 * lengths.std() / np.sqrt(lengths.size)
    assert lengths.min() >= 1 and lengths.max() == 10


@pytest.mark.parametrize("kw", [{"sigma": -0.1}, {"K": 1}, {"L": 0}])
def test_binary_chain_validation(kw):
    args = {"L": 3, "K": 3, "sigma": 0.3, "n_episodes": 10, "rng": rng_for(0, "v")} | kw
    with pytest.raises(ValueError):
        model.simulate_binary_chain(**args)


# --------------------------------------------------------------------------------------------------
# Monte-Carlo labels


def test_mc_flip_prob_properties():
    q = np.array([0.1, 0.5, 0.93])
    np.testing.assert_allclose(theory.mc_flip_prob(200, q, q), 0.5, atol=1e-10)
    f = [float(theory.mc_flip_prob(m, np.array([0.6]), np.array([0.55]))[0]) for m in (16, 64, 256, 1024)]
    assert all(b < a for a, b in zip(f, f[1:], strict=False))


def test_mc_flip_prob_matches_scipy_and_monte_carlo():
    m, qr, qw = 100, np.array([0.4, 0.97]), np.array([0.35, 0.95])
    k = np.arange(m + 1)
    ref = [np.sum(stats.binom.pmf(k, m, r) * (stats.binom.sf(k, m, w) + stats.binom.pmf(k, m, w) / 2))
           for r, w in zip(qr, qw, strict=True)]
    np.testing.assert_allclose(theory.mc_flip_prob(m, qr, qw), ref, atol=1e-12)
    rng = rng_for(0, "test-flip")
    n = 200_000
    br, bw = rng.binomial(m, qr[0], n), rng.binomial(m, qw[0], n)
    mc = np.mean(bw > br) + np.mean(bw == br) / 2
    assert abs(mc - ref[0]) < 4 * np.sqrt(ref[0] * (1 - ref[0]) / n)


def test_normal_approximation_of_the_flip_probability():
    """The wrong theory of C4a is a sensible approximation: 1/2 at equal means, close at large m, off at small m
    (it has no continuity correction)."""
    q = np.array([0.3, 0.8])
    np.testing.assert_allclose(theory.wrong_mc_flip_prob_normal_approx(16, q, q), 0.5, atol=1e-15)
    qr, qw = np.array([0.8, 0.6]), np.array([0.79, 0.59])
    exact, approx = theory.mc_flip_prob(4096, qr, qw), theory.wrong_mc_flip_prob_normal_approx(4096, qr, qw)
    np.testing.assert_allclose(approx, exact, rtol=1e-3)
    qr, qw = np.array([0.97]), np.array([0.9])
    exact, approx = theory.mc_flip_prob(8, qr, qw), theory.wrong_mc_flip_prob_normal_approx(8, qr, qw)
    assert abs(approx[0] / exact[0] - 1) > 0.05


def test_expected_gap_against_a_long_pipeline_run():
    p = model.stochastic_chain(50, 4, 0.5, rng_for(0, "test-mc"))
    sims = model.simulate_mc_pipeline(p, 64, 400, rng_for(1, "test-mc"))
    assert abs(sims.mean() - theory.expected_gap_mc(p, 64)) < 4 * sims.std(ddof=1) / np.sqrt(sims.size)


def test_hoeffding_and_fast_rate_bounds_hold():
    """The soft margin: the exact gap <= sum_j Vbar_j Delta_j exp(-m Delta_j^2 / 2) <= sum_j C_j / m."""
    L, p_low = 8, 0.5
    p = model.stochastic_chain(400, L, p_low, rng_for(0, "test-soft"))
    Q = theory.chain_q(p)
    delta = np.abs(Q[..., 0] - Q[..., 1])
    live = np.concatenate([np.ones((p.shape[0], 1)), np.cumprod(p.max(axis=2), axis=1)[:, :-1]], axis=1)
    c_sum = sum(2 / ((1 - p_low) * p_low ** (L - 1 - j)) for j in range(L))
    for m in (64, 512, 4096):
        exact = theory.expected_gap_mc(p, m)
        hoeffding = float(np.mean(np.sum(live * delta * np.exp(-m * delta**2 / 2), axis=1)))
        assert exact <= hoeffding <= c_sum / m
        assert hoeffding <= (2 - 1) / np.sqrt(np.e * m) * L  # the uniform reading, (A-1)(em)^(-1/2) E[tau ^ H]


@pytest.mark.parametrize("kw", [{"p_low": 1.0}, {"p_low": -0.1}, {"L": 0}])
def test_stochastic_chain_validation(kw):
    args = {"n_inst": 5, "L": 3, "p_low": 0.5, "rng": rng_for(0, "v")} | kw
    with pytest.raises(ValueError):
        model.stochastic_chain(**args)


def test_mc_pipeline_needs_m_at_least_one():
    with pytest.raises(ValueError):
        model.simulate_mc_pipeline(np.full((2, 2, 2), 0.7), 0, 3, rng_for(0, "v"))


# --------------------------------------------------------------------------------------------------
# the worst-case chain


def test_worst_case_chain_closed_form_and_choice():
    mdp, Qhat = model.worst_case_chain(5, 0.05, 0.01)
    assert np.all(model.greedy_policy(Qhat)[:, mdp.live] == 1)
    (r,) = model.worst_case_runs([5], 0.05, 0.01)
    assert r.gap == pytest.approx(1 - 0.91**5, rel=1e-13)
    assert r.mean_len == pytest.approx((1 - 0.91**5) / 0.09, rel=1e-13)
    assert theory.worst_case_ratio(0.05, 0.01) == pytest.approx(0.9)


def test_worst_case_chain_validation():
    with pytest.raises(ValueError):
        model.worst_case_chain(4, 0.05, 0.2)


# --------------------------------------------------------------------------------------------------
# the claims at the defaults, and one mutation test per claim


@pytest.fixture(scope="module")
def data():
    s = DEF["seed"]
    faithful = model.faithful_abstraction_runs(DEF["n_mdps"], DEF["S"], DEF["A"], DEF["H"], rng_for(s, "C1"))
    runs = model.noisy_greedy_runs(DEF["n_mdps"], DEF["S"], DEF["A"], DEF["H"], DEF["q_noise"], rng_for(s, "C2"))
    chain = [model.simulate_binary_chain(L, DEF["K"], DEF["sigma_q"], DEF["n_episodes"], rng_for(s, "C3", str(L)))
             for L in DEF["L_list"]]
    p = model.stochastic_chain(DEF["n_inst"], DEF["L_chain"], DEF["p_low"], rng_for(s, "C4"))
    mc = np.column_stack([model.simulate_mc_pipeline(p, m, DEF["R_rep"], rng_for(s, "C4", str(m)))
                          for m in M_ALL])
    wc = model.worst_case_runs(DEF["L_wc"], DEF["eps_wc"], DEF["eta_wc"])
    return {"faithful": faithful, "runs": runs, "success": [c[0] for c in chain],
            "lengths": [c[1] for c in chain], "p": p, "mc": mc, "wc": wc}


def _claims(d, th=theory):
    chain_args = (DEF["L_list"], DEF["K"], DEF["sigma_q"])
    return {
        "C1": cl.claim_faithful("C1", d["faithful"], DEF["H"], theory=th),
        "C2a": cl.claim_pdl("C2a", d["runs"], theory=th),
        "C2b": cl.claim_greedy_lemma("C2b", d["runs"], theory=th),
        "C3a": cl.claim_chain_gap("C3a", d["success"], *chain_args, theory=th),
        "C3b": cl.claim_chain_length("C3b", d["lengths"], *chain_args, theory=th),
        "C4a": cl.claim_mc_gap("C4a", d["mc"], d["p"], M_ALL, theory=th),
        "C4b": cl.claim_mc_slope("C4b", d["mc"][:, len(DEF["m_small"]):], d["p"], DEF["m_list"], DEF["n_boot"],
                                 rng_for(0, "C4boot"), theory=th),
        "C5a": cl.claim_worst_gap("C5a", d["wc"], DEF["eps_wc"], DEF["eta_wc"], theory=th),
        "C5b": cl.claim_bound_holds("C5b", d["wc"], theory=th),
        "C5c": cl.claim_bound_tight("C5c", d["wc"], DEF["eps_wc"], DEF["eta_wc"], theory=th),
    }


def test_every_claim_holds_at_the_defaults(data):
    failed = [k for k, c in _claims(data).items() if not c.passed]
    assert not failed


WRONG = [
    ("C1", {"provable_within": "wrong_provable_within"}),
    ("C2a", {"pdl_sum": "wrong_pdl_sum"}),
    ("C2b", {"decision_bound": "wrong_decision_bound"}),
    ("C3a", {"chain_gap": "wrong_chain_gap_nominal"}),
    ("C3a", {"chain_gap": "wrong_chain_gap_compounding"}),
    ("C3b", {"chain_mean_length": "wrong_chain_mean_length"}),
    ("C4a", {"expected_gap_mc": "wrong_expected_gap_mc_normal_approx"}),
    ("C4b", {"mc_gap_slope": "wrong_mc_gap_slope"}),
    ("C5a", {"worst_case_gap": "wrong_worst_case_gap"}),
    ("C5b", {"greedy_bound": "wrong_greedy_bound"}),
    ("C5c", {"greedy_bound": "wrong_greedy_bound_horizon"}),
]


@pytest.mark.parametrize("name,replaced", WRONG, ids=[f"{n}-{list(r.values())[0]}" for n, r in WRONG])
def test_claim_rejects_its_wrong_theory(data, name, replaced):
    wrong = variant(theory, **{k: getattr(theory, v) for k, v in replaced.items()})
    assert not _claims(data, wrong)[name].passed


def test_horizon_bound_is_valid_but_not_tight(data):
    """2 eps H is a valid bound: C5b passes with it, only C5c rejects it."""
    wrong = variant(theory, greedy_bound=theory.wrong_greedy_bound_horizon)
    assert cl.claim_bound_holds("C5b", data["wc"], theory=wrong).passed


def test_optimal_occupancy_misses_in_most_instances(data):
    miss = [abs(theory.wrong_pdl_sum(r.mdp, r.pi, r.d) - r.gap) > 1e-6 for r in data["runs"]]
    assert np.mean(miss) >= 0.9


def test_c4a_rejects_an_exact_gap_off_by_ten_percent(data):
    wrong = variant(theory, expected_gap_mc=lambda p, m: 1.1 * theory.expected_gap_mc(p, m))
    assert not cl.claim_mc_gap("C4a", data["mc"], data["p"], M_ALL, theory=wrong).passed


def test_c4a_needs_the_small_budgets_to_reject_the_normal_approximation(data):
    """At m_list alone the normal approximation of the flip probabilities is not rejected: only m_small separates
    it from the exact binomial law."""
    normal = variant(theory, expected_gap_mc=theory.wrong_expected_gap_mc_normal_approx)
    big = data["mc"][:, len(DEF["m_small"]):]
    assert cl.claim_mc_gap("C4a", big, data["p"], DEF["m_list"], theory=normal).passed
    assert not cl.claim_mc_gap("C4a", data["mc"], data["p"], M_ALL, theory=normal).passed


def test_a_nan_prediction_on_a_later_run_fails_the_claim(data):
    def nan(fn):
        return variant(theory, **{fn: nan_after_first(getattr(theory, fn))})
    assert not cl.claim_pdl("C2a", data["runs"], theory=nan("pdl_sum")).passed
    assert not cl.claim_worst_gap("C5a", data["wc"], DEF["eps_wc"], DEF["eta_wc"], theory=nan("worst_case_gap")).passed
    assert not cl.claim_bound_holds("C5b", data["wc"], theory=nan("greedy_bound")).passed
