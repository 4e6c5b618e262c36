"""Tests of chapter 'generation-mistake-feedback': families, theory, model, and one mutation test per claim."""

import ast
import dataclasses
import functools
import itertools
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import numpy.testing as npt
import pytest

from theorylib.chapters import generation_mistake_feedback as chapter
from theorylib.chapters.generation_mistake_feedback import CHAPTER, claims, families, model, theory, tolerances
from theorylib.chapters.generation_mistake_feedback import model_games as games
from theorylib.chapters.generation_mistake_feedback import model_generators as gens
from theorylib.chapters.generation_mistake_feedback import model_liegame as liegame
from theorylib.chapters.generation_mistake_feedback import model_query as mq
from theorylib.core import rng_for
from theorylib.core.theory import variant

D = CHAPTER.defaults()


# ---------------------------------------------------------------- unit tests: type families and tau


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_tau_disjoint(n):
    assert theory.tau(families.disjoint_family(n)) == n


@pytest.mark.parametrize("n,k", [(4, 2), (5, 3), (6, 1), (6, 6), (7, 3)])
def test_tau_k_subsets(n, k):
    assert theory.tau(families.k_subsets_family(n, k)) == n - k + 1


@pytest.mark.parametrize("n,k", [(5, 1), (9, 3), (10, 3), (12, 5), (7, 7)])
def test_tau_intervals(n, k):
    assert theory.tau(families.interval_family(n, k)) == math.ceil((n - k + 1) / k)


@pytest.mark.parametrize("k", [2, 3])
def test_greedy_trap(k):
    inc = families.greedy_trap_family(k)
    assert inc.shape[0] == 2 ** (k + 1) - 2
    assert len({tuple(r) for r in inc}) == inc.shape[0]  # distinct languages
    assert theory.tau(inc) == 2
    assert theory.greedy_cover(inc).size == k


def test_transversal_returns_a_hitting_set():
    rng = np.random.default_rng(3)
    for _ in range(30):
        inc = model.random_family(rng, 7, 6, 0.3)
        tau, H = families.transversal_number(inc)
        assert H.size == tau == theory.tau(inc)
        assert inc[:, H].any(axis=1).all()
        g = theory.greedy_cover(inc)
        assert inc[:, g].any(axis=1).all() and g.size >= tau


def test_dp_equals_tau_minus_one_on_random_families():
    rng = np.random.default_rng(11)
    for _ in range(50):
        inc = model.random_family(rng, int(rng.integers(3, 8)), int(rng.integers(1, 9)), float(rng.uniform(0.2, 0.6)))
        assert model.minimax_mistakes(inc) == theory.minimax_value(inc)


def test_dp_monotone_under_removing_a_language():
    rng = np.random.default_rng(5)
    for _ in range(20):
        inc = model.random_family(rng, 6, 7, 0.35)
        v = model.minimax_mistakes(inc)
        for i in range(inc.shape[0]):
            assert model.minimax_mistakes(np.delete(inc, i, axis=0)) <= v


def test_union_disjoint_adds_tau_and_overlap_bound():
    rng = np.random.default_rng(7)
    for _ in range(15):
        a, b = model.random_family(rng, 5, 4, 0.4), model.random_family(rng, 4, 5, 0.4)
        u = families.disjoint_union(a, b)
        assert theory.tau(u) == theory.tau(a) + theory.tau(b)
        b5 = np.zeros((b.shape[0], 5), dtype=bool)
        b5[:, :4] = b
        both = np.vstack([a, b5])  # same type set: overlapping supports
        assert model.minimax_mistakes(both) <= model.minimax_mistakes(a) + model.minimax_mistakes(b5) + 1


def test_common_type_iff_tau_one():
    rng = np.random.default_rng(13)
    for _ in range(40):
        inc = model.random_family(rng, 5, int(rng.integers(1, 6)), 0.6)
        assert model.has_common_type(inc) == (theory.tau(inc) == 1) == (theory.max_degree(inc) == inc.shape[0])


# ---------------------------------------------------------------- unit tests: streams, generators, simulator


def test_streams_enumerate():
    s = games.uninformative_stream(3, 12)
    assert {tuple(x) for x in s} == {(f, j) for f in range(3) for j in range(4)}
    c = games.cantor_stream(55)
    assert {tuple(x) for x in c} == {(a, b) for a in range(10) for b in range(10) if a + b < 10}


@pytest.mark.parametrize("make", [gens.HittingSetGen, gens.GreedyGen, lambda: gens.IndexOrderGen(0),
                                  lambda: gens.RandomOrderGen(np.random.default_rng(4))])
def test_feedback_generators_fresh_and_bounded(make):
    rng = np.random.default_rng(2)
    for _ in range(8):
        inc = model.random_family(rng, 6, 5, 0.4)
        fam = gens.TypeFamily(inc)
        T = 30
        stream = games.uninformative_stream(6, T)
        tau = theory.tau(inc)
        for k in range(inc.shape[0]):
            g = make()
            r = games.simulate(fam, g, k, T, stream)
            outs = {tuple(w) for w in r.outputs}
            assert len(outs) == T
            assert all((w[1] * 6 + w[0]) > t for t, w in enumerate(r.outputs))  # not in S_t
            assert np.all(np.diff(r.mistakes) >= 0)
            if isinstance(g, gens.HittingSetGen):
                assert r.total <= tau - 1


def test_random_order_generator_is_deterministic_across_targets():
    g = gens.RandomOrderGen(np.random.default_rng(9))
    fam = gens.TypeFamily(families.interval_family(8, 3))
    g.reset(fam)
    perm = g.perm.copy()
    g.reset(fam)
    npt.assert_array_equal(g.perm, perm)


def test_generators_never_see_target():
    fam = gens.TypeFamily(families.disjoint_family(4))
    g = gens.HittingSetGen()
    g.reset(fam)
    assert not any("target" in k for k in vars(g))


def test_no_feedback_bound_and_simulator_agree():
    inc = families.interval_family(7, 3)
    fam = gens.TypeFamily(inc)
    T = 200
    stream = games.uninformative_stream(7, T)
    for g in gens.no_feedback_zoo():
        M = games.simulate_no_feedback(fam, g, T, stream)
        for k in (0, 2):
            npt.assert_array_equal(M[k], games.simulate(fam, type(g)(), k, T, stream).mistakes)
        assert M[:, -1].max() >= _sharp_lower(inc, T)


def test_adversary_forces_tau_minus_one_and_replays():
    inc = families.k_subsets_family(5, 2)
    fam = gens.TypeFamily(inc)
    for g in gens.feedback_zoo(np.random.default_rng(1)):
        forced, surv = games.always_mistake_adversary(fam, g, 20)
        assert forced >= theory.minimax_value(inc)
        assert games.simulate(fam, g, int(surv[0]), 20, games.uninformative_stream(5, 20)).total == forced


def test_lie_simulator_flips_exactly_scheduled_bits():
    col = gens.CountableDisjoint()
    stream = games.cantor_stream(40)
    truth = games.simulate(col, gens.IndexOrderGen(5), 6, 40, stream)
    r = games.simulate(col, gens.IndexOrderGen(5), 6, 40, stream, games.scheduled_lies([0, 3]))
    # up to the first flip both runs agree; the report differs from the truth exactly at 0 and 3
    npt.assert_array_equal(np.flatnonzero(r.reported != r.true_bits), [0, 3])
    assert r.n_lies == 2 and truth.n_lies == 0


def test_countable_overlapping_bound_and_finite_list_raises():
    col = gens.CountableRandom(np.random.default_rng(3), p=0.4)
    M = model.run_countable(10, col)
    assert np.all(M <= np.arange(10))
    fam = gens.TypeFamily(families.disjoint_family(3))
    with pytest.raises(RuntimeError, match="eliminated"):
        games.simulate(fam, gens.IndexOrderGen(0), 2, 20, games.uninformative_stream(3, 20), games.false_flag_once())


def test_lie_theory_values():
    assert theory.lie_bound(1, 3) == 0 and theory.lie_bound(2, 3) == 7 and theory.lie_bound(5, 0) == 4
    assert theory.early_lie_value(2, 3) == theory.lie_bound(2, 3)
    assert all(theory.early_lie_value(i, e) < theory.lie_bound(i, e) for i in range(3, 8) for e in range(1, 4))


def test_clean_examples_cost_nothing_contaminated_ones_cost_tau_minus_one():
    """Clean streams (every example in K): copying the first example's type makes no mistake, on every
    family and target; on the contaminated uninformative stream the same generator errs in every round
    against a target that avoids type 0, and the minimax value is tau - 1 >= 1."""
    rng = np.random.default_rng(7)
    for inc in [families.interval_family(7, 3), families.k_subsets_family(5, 2), families.disjoint_family(4)]:
        fam = gens.TypeFamily(inc)
        for k in range(fam.n_langs):
            A = np.flatnonzero(inc[k])
            clean = np.array([(int(rng.choice(A)), j) for j in range(30)])
            assert games.simulate(fam, gens.CopyExampleGen(), k, 30, clean).total == 0
        k0 = int(np.flatnonzero(~inc[:, 0])[0])
        r = games.simulate(fam, gens.CopyExampleGen(), k0, 30, games.uninformative_stream(fam.n_types, 30))
        assert r.total == 30 and theory.minimax_value(inc) >= 1


def test_lie_game_search_small_cases():
    """Without lies the least vector is i* - 1; two languages give 2 ell + 1 (the first steps, proved);
    a bound one below the least vector is infeasible, the least vector itself feasible."""
    assert liegame.least_lie_values(4, 0) == [0, 1, 2, 3]
    assert all(liegame.least_lie_values(2, e) == [0, 2 * e + 1] for e in range(4))
    assert liegame.lie_game_feasible([0, 3, 4], 1) and not liegame.lie_game_feasible([0, 3, 3], 1)
    assert not liegame.lie_game_feasible([0, 2], 1)
    assert liegame.lie_game_feasible([5], 2)  # one language: nothing to learn


def test_strategy_worst_case_matches_the_simulator():
    """The game-tree maximum for G_idx^ell is at least what the simulator's constructed adversary forces,
    and a generator that never outputs the target errs forever (the cap)."""
    col = gens.CountableDisjoint()
    worst = liegame.strategy_worst_case(liegame.index_order, 5, 2)
    for k in range(5):
        r = games.simulate(col, gens.IndexOrderGen(2), k, 200, games.cantor_stream(200),
                           games.worst_lie_schedule(k + 1, 2))
        assert r.total == worst[k]
    never = liegame.strategy_worst_case(lambda state, ell: 0, 2, 1, cap=99)
    assert never == [0, 99]


def test_probe_generator_is_fresh_in_its_choices():
    """The probing generator outputs L_0 while it is live, then probes L_2 within target L_1's slack."""
    start = ((0, 0),) * 3
    assert liegame.probe_third(start, 1) == 0
    assert liegame.probe_third(((2, 0), (0, 2), (0, 2)), 1) == 2
    assert liegame.probe_third(((2, 0), (0, 3), (1, 2)), 1) == 1
    assert liegame.probe_third(((2, 0), (2, 0), (2, 0)), 1) == 3


# ---------------------------------------------------------------- unit tests: tau*, the LP generator, beta


def _sharp_lower(inc, T):
    """ceil(T (1 - 1/tau*)), the lower bound of the sharp-rate proposition."""
    return math.ceil(T * theory.no_feedback_rate(inc))


def test_max_degree():
    inc = families.structured("intervals", 9, 3)
    assert theory.max_degree(inc) == 3 and theory.max_degree(families.disjoint_family(4)) == 1
    assert theory.max_degree(families.structured("k-subsets", 5, 2)) == 4


@pytest.mark.parametrize("kind,n,k,expected", [
    ("disjoint", 4, None, Fraction(4)), ("k-subsets", 5, 2, Fraction(5, 2)), ("k-subsets", 6, 4, Fraction(3, 2)),
    ("intervals", 9, 3, Fraction(3)), ("cyclic-intervals", 5, 2, Fraction(5, 2)), ("greedy-trap", 3, None, Fraction(2)),
])
def test_fractional_transversal_closed_forms(kind, n, k, expected):
    """tau* = n/k on k-uniform regular families (weights 1/k, matching 1/Delta); intervals are totally unimodular."""
    inc = families.structured(kind, n, k)
    assert theory.fractional_transversal(inc) == expected


def test_fractional_transversal_sandwich_and_certificate():
    """m/Delta <= tau* <= tau, p* a probability vector with p*(A_i) >= 1/tau*, and min_i p*(A_i) = 1/tau*."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        inc = model.random_family(rng, int(rng.integers(3, 10)), int(rng.integers(2, 11)), 0.4)
        ts, p = theory.fractional_transversal(inc), theory.lp_frequencies(inc)
        assert Fraction(inc.shape[0], theory.max_degree(inc)) <= ts <= theory.tau(inc)
        assert sum(p) == 1 and min(p) >= 0
        hits = [sum(p[f] for f in np.flatnonzero(row)) for row in inc]
        assert min(hits) == 1 / ts
        assert theory.no_feedback_rate(inc) == 1 - 1 / ts
        D = theory.exact_period(inc)
        assert all((D * q).denominator == 1 for q in p)


def test_game_frequencies_are_optimal():
    """The model's own LP (the max-min game) reaches the same value 1/tau* as the theory's certified LP."""
    rng = np.random.default_rng(8)
    for _ in range(40):
        inc = model.random_family(rng, int(rng.integers(3, 10)), int(rng.integers(2, 11)), 0.4)
        w = gens.game_frequencies(inc)
        assert sum(w) == 1 and min(w) >= 0
        assert min(sum(w[f] for f in np.flatnonzero(row)) for row in inc) == 1 / theory.fractional_transversal(inc)


def test_lp_generator_counts_track_frequencies():
    """Largest-deficit rule: c_f(T) >= T p_f - (1 - 1/s) at every T (the lemma behind beta), exact."""
    inc = families.structured("k-subsets", 5, 2)
    fam = gens.TypeFamily(inc)
    g = gens.LPFrequencyGen()
    g.reset(fam)
    s = sum(1 for q in g.weights if q > 0)
    for t in range(1, 400):
        g.step((0, 10**6 + t))
        assert all(g.out[f] - t * g.weights[f] <= 1 - Fraction(1, s) for f in range(5))
        assert sum(g.out) == t


def test_excess_constant_values_and_bad_input():
    inc = families.structured("k-subsets", 4, 2)
    p = (Fraction(1, 4),) * 4
    assert tolerances.excess_constant(inc, p) == Fraction(3, 4) * 2
    assert tolerances.upper_end(Fraction(1, 2), 7, Fraction(3, 2)) == 5
    with pytest.raises(ValueError, match="one weight per type"):
        tolerances.excess_constant(inc, p[:3])
    with pytest.raises(ValueError, match="sum to 1"):
        tolerances.excess_constant(inc, (Fraction(1, 2),) * 4)


def test_lp_generator_within_beta_on_random_families():
    """Prop. (sharp rate) (i)-(ii) through the simulator: ceil(T r) <= M_LP(T) <= floor(T r + beta)."""
    rng = np.random.default_rng(11)
    for _ in range(15):
        inc = model.random_family(rng, int(rng.integers(3, 8)), int(rng.integers(2, 9)), 0.4)
        if model.has_common_type(inc):
            continue
        fam, T = gens.TypeFamily(inc), 120
        g = gens.LPFrequencyGen()
        M = games.simulate_no_feedback(fam, g, T, games.uninformative_stream(inc.shape[1], T)).max(axis=0)
        r, beta = theory.no_feedback_rate(inc), tolerances.excess_constant(inc, g.weights)
        for t in range(1, T + 1):
            assert math.ceil(t * r) <= M[t - 1] <= tolerances.upper_end(r, t, beta)


# ---------------------------------------------------------------- unit tests: the exact no-feedback minimax


class _FixedTypes(gens.BaseGenerator):
    """No feedback: fresh copies of a fixed sequence of types."""

    uses_feedback = False
    name = "fixed-types"

    def __init__(self, types):
        self.types = [int(f) for f in types]

    def reset(self, collection):
        super().reset(collection)
        self.t = 0

    def _choose(self):
        f = self.types[self.t]
        self.t += 1
        return self.fresh_copy(f)


def test_count_vectors():
    C = model.count_vectors(3, 4)
    assert C.shape == (math.comb(7, 3), 3) and (C >= 0).all() and (C.sum(axis=1) <= 4).all()
    assert len({tuple(c) for c in C}) == C.shape[0]


def test_no_feedback_minimax_against_every_type_sequence_through_the_simulator():
    inc = families.k_subsets_family(3, 2)  # {0,1}, {0,2}, {1,2}: no common type
    fam = gens.TypeFamily(inc)
    T = 5
    stream = games.uninformative_stream(3, T)
    best = np.full(T, 10**6)
    for seq in itertools.product(range(3), repeat=T):
        M = games.simulate_no_feedback(fam, _FixedTypes(seq), T, stream).max(axis=0)
        best = np.minimum(best, M)
    npt.assert_array_equal(model.no_feedback_minimax(inc, T)[1:], best)


@pytest.mark.parametrize("kind,n,k", [("k-subsets", 4, 2), ("cyclic-intervals", 5, 2), ("intervals", 6, 2)])
def test_optimal_counts_attain_the_minimax_in_the_simulator(kind, n, k):
    inc = families.structured(kind, n, k)
    fam = gens.TypeFamily(inc)
    V = model.no_feedback_minimax(inc, 3 * n)
    for T in (n, 2 * n + 1, 3 * n):
        c = model.no_feedback_optimal_counts(inc, T)
        assert c.sum() == T
        seq = np.repeat(np.arange(n), c)
        M = games.simulate_no_feedback(fam, _FixedTypes(seq), T, games.uninformative_stream(n, T))
        assert M[:, -1].max() == V[T]


def test_no_feedback_minimax_sandwich_and_tightness():
    """Prop. (no-feedback minimax): the averaging bound ceil(T(m-Delta)/m) everywhere, the transversal-cycling
    value ceil(T (tau-1)/tau) above it, equality on regular families where (T mod n) k < n."""
    rng = np.random.default_rng(17)
    incs = [families.structured(*spec) for spec in families.REGULAR_SMALL]
    incs += [inc for inc in (model.random_family(rng, int(rng.integers(3, 6)), int(rng.integers(2, 8)), 0.4)
                             for _ in range(30)) if not model.has_common_type(inc)]
    for inc in incs:
        n, tau = inc.shape[1], theory.tau(inc)
        V = model.no_feedback_minimax(inc, 3 * n)
        for T in range(1, 3 * n + 1):
            m, dl = inc.shape[0], theory.max_degree(inc)
            assert -(-T * (m - dl) // m) <= _sharp_lower(inc, T) <= V[T] <= -(-T * (tau - 1) // tau)
    for kind, n, k in families.REGULAR_SMALL:
        inc = families.structured(kind, n, k)
        kk = int(inc.sum(axis=1)[0])
        assert (inc.sum(axis=1) == kk).all() and (inc.sum(axis=0) == theory.max_degree(inc)).all()
        assert not model.has_common_type(inc)
        V = model.no_feedback_minimax(inc, 3 * n)
        for T in range(1, 3 * n + 1):
            if (T % n) * kk < n:
                assert V[T] == _sharp_lower(inc, T) == T - kk * (T // n)


def test_cyclic_intervals():
    inc = families.cyclic_interval_family(5, 2)
    assert inc.shape == (5, 5) and (inc.sum(axis=0) == 2).all() and (inc.sum(axis=1) == 2).all()
    assert theory.tau(inc) == 3


def test_exact_slope():
    assert model.exact_slope([1, 2, 3], [0, 1, 2]) == 1
    assert model.exact_slope([1, 2, 3], [5, 5, 5]) == 0


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("call,msg", [
    (lambda: families.incidence([[0], []], 3), "empty"),
    (lambda: families.incidence([[0, 5]], 3), "outside"),
    (lambda: families.check_inc(np.ones(3, dtype=bool)), "2-D"),
    (lambda: families.check_inc(np.ones((2, 2), dtype=int)), "boolean"),
    (lambda: families.check_inc(np.array([[True, False], [False, False]])), "empty"),
    (lambda: families.transversal_number(np.ones((2, 21), dtype=bool)), "n_types <= 20"),
    (lambda: model.minimax_mistakes(np.ones((21, 2), dtype=bool)), "at most"),
    (lambda: gens.IndexOrderGen(-1), r"ell = -1 must be an integer in \[0"),
    (lambda: theory.lie_bound(0, 1), "positive"),
    (lambda: theory.least_lie_value(4, 1), r"i\* <= 3 only"),
    (lambda: liegame.lie_game_feasible([0, -1], 1), "bound"),
    (lambda: games.uninformative_stream(3, 0), "positive"),
    (lambda: games.cantor_stream(-2), "positive"),
    (lambda: families.k_subsets_family(3, 4), r"k = 4 must be an integer in \[1, 3\]"),
    (lambda: families.greedy_trap_family(1), r"k = 1 must be an integer in \[2"),
    (lambda: model.random_family(np.random.default_rng(0), 3, 2, 0.0), "inclusion probability p"),
    (lambda: games.simulate(gens.TypeFamily(families.disjoint_family(2)), gens.GreedyGen(), 2, 5,
                            games.uninformative_stream(2, 5)), "out of range"),
    (lambda: games.simulate(gens.TypeFamily(families.disjoint_family(2)), gens.GreedyGen(), 0, 0,
                            games.uninformative_stream(2, 5)), "positive"),
    (lambda: model.run_no_feedback([model.structured_instance("k-subsets", 4, 4)], 8), "common type"),
    (lambda: model.no_feedback_minimax(np.ones((2, 8), dtype=bool), 3), "at most 7 types"),
    (lambda: model.count_vectors(2, 1001), "S <= 1000"),
    (lambda: families.cyclic_interval_family(4, 4), r"k = 4 must be an integer in \[1, 3\]"),
    (lambda: theory.fractional_transversal(np.zeros((2, 2), dtype=bool)), "empty"),
])
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


# ---------------------------------------------------------------- the measured side never sees the theory


def test_model_never_imports_theory_or_claims():
    pkg = Path(chapter.__file__).parent
    for path in [*pkg.glob("model*.py"), pkg / "families.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any(n.split(".")[-1] in ("theory", "claims") for n in names), (path.name, names)


# ---------------------------------------------------------------- mutation tests (at the defaults)


@pytest.fixture(scope="module")
def c1():
    rnd = model.random_instances(rng_for(D["seed"], "C1"), D["n_instances"], D["n_types_max"],
                                 D["n_langs_max"], D["p_incl"])
    return rnd, rnd + model.structured_instances()


@pytest.fixture(scope="module")
def zoo(c1):
    return model.run_zoo(c1[1], rng_for(D["seed"], "C2"))


@pytest.fixture(scope="module")
def res3(c1):
    return model.run_no_feedback(model.c3_instances(c1[0], D["n_c3"]), D["T_max_pow"])


@pytest.fixture(scope="module")
def res3x(c1):
    return model.run_no_feedback_exact(c1[0])


@pytest.fixture(scope="module")
def liegame_res():
    return liegame.run_lie_game(D["ell_max"])


@pytest.fixture(scope="module")
def lies():
    return model.run_lies(D["n_countable"], D["ell_max"], D["n_random_adversaries"], rng_for(D["seed"], "C4"))


@pytest.mark.parametrize("wrong", ["wrong_minimax_log2_m", "wrong_minimax_tau", "wrong_minimax_m_minus_1",
                                   "wrong_minimax_greedy"])
def test_mutation_c1a(c1, wrong):
    assert claims.claim_minimax("C1a", c1[1]).passed
    assert not claims.claim_minimax("C1a", c1[1], theory=variant(theory, minimax_value=getattr(theory, wrong))).passed


@pytest.mark.parametrize("wrong", [theory.wrong_union_max, theory.wrong_union_sum])
def test_mutation_c1b(wrong):
    pairs = model.union_pairs(rng_for(D["seed"], "C1b"), D["n_union"])
    assert claims.claim_union("C1b", pairs).passed
    assert not claims.claim_union("C1b", pairs, theory=variant(theory, union_value=wrong)).passed


def test_mutation_c1c():
    recs = model.structured_transversals()
    assert claims.claim_closed_forms("C1c", recs).passed
    wrong = variant(theory, tau_closed_form=theory.wrong_tau_closed_form)
    assert not claims.claim_closed_forms("C1c", recs, theory=wrong).passed


def test_mutation_c2a(c1, zoo):
    assert zoo.replay_ok
    assert claims.claim_hitting_set("C2a", c1[1], zoo).passed
    wrong = variant(theory, minimax_value=theory.wrong_minimax_tau)
    assert not claims.claim_hitting_set("C2a", c1[1], zoo, theory=wrong).passed


def test_mutation_c2b(c1, zoo):
    assert claims.claim_no_generator_beats("C2b", c1[1], zoo).passed
    wrong = variant(theory, minimax_value=theory.wrong_minimax_tau)
    assert not claims.claim_no_generator_beats("C2b", c1[1], zoo, theory=wrong).passed


def test_mutation_c2c(c1, zoo):
    c = claims.claim_greedy("C2c", c1[1], zoo)
    assert c.passed and c.details["n_worse"] > 0
    wrong = variant(theory, greedy_worst=theory.wrong_greedy_worst_optimal)  # "greedy is minimax-optimal"
    assert not claims.claim_greedy("C2c", c1[1], zoo, theory=wrong).passed


def test_mutation_c2d():
    M = model.run_countable(D["n_countable"])
    assert claims.claim_countable("C2d", M).passed
    wrong = variant(theory, countable_mistakes=theory.wrong_countable_bounded)  # bounded independently of i*
    assert not claims.claim_countable("C2d", M, theory=wrong).passed
    assert model.exact_slope(list(range(1, D["n_countable"] + 1)), M.tolist()) == 1


@pytest.mark.parametrize("wrong", ["wrong_no_feedback_rate_degree", "wrong_no_feedback_rate_tau",
                                   "wrong_no_feedback_rate_zero"])
def test_mutation_c3a(res3, wrong):
    """Two-sided: the averaging rate (too weak) fails the upper side, 1 - 1/tau (too strong) the lower side."""
    c = claims.claim_sharp_rate("C3a", res3)
    assert c.passed and 0 <= c.details["min_gap"] and c.details["max_gap"] <= c.details["max_room"]
    bad = variant(theory, no_feedback_rate=getattr(theory, wrong))
    assert not claims.claim_sharp_rate("C3a", res3, theory=bad).passed


@pytest.mark.parametrize("wrong", ["wrong_no_feedback_rate_degree", "wrong_no_feedback_rate_tau",
                                   "wrong_no_feedback_rate_zero"])
def test_mutation_c3b(res3x, wrong):
    c = claims.claim_no_feedback_minimax("C3b", res3x)
    assert c.passed and c.details["max_gap"] <= 1 and c.details["n_points"] > 1000
    bad = variant(theory, no_feedback_rate=getattr(theory, wrong))
    assert not claims.claim_no_feedback_minimax("C3b", res3x, theory=bad).passed


@pytest.mark.parametrize("wrong", ["wrong_no_feedback_rate_degree", "wrong_no_feedback_rate_tau", "period"])
def test_mutation_c3c(res3x, wrong):
    c = claims.claim_no_feedback_exact("C3c", res3x)
    assert c.passed and c.predicted >= 100
    if wrong == "period":  # equality claimed at every T, not only at multiples of the period
        bad = variant(theory, exact_period=lambda inc: 1)
    else:
        bad = variant(theory, no_feedback_rate=getattr(theory, wrong))
    assert not claims.claim_no_feedback_exact("C3c", res3x, theory=bad).passed


@pytest.mark.parametrize("wrong", ["wrong_lie_bound_without_ell", "wrong_lie_bound_without_indicator"])
def test_mutation_c4a(lies, wrong):
    assert claims.claim_lies_constructed("C4a", lies).passed
    bad = variant(theory, lie_bound=getattr(theory, wrong))  # without the + ell term; without its 1[i* >= 2]
    assert not claims.claim_lies_constructed("C4a", lies, theory=bad).passed
    assert np.all(lies.constructed_lies == np.array(lies.ells)[:, None] * (np.array(lies.i_stars) >= 2))


def test_mutation_c4b(lies):
    assert claims.claim_lies_truthful("C4b", lies).passed
    wrong = variant(theory, truthful_value=theory.wrong_lie_free)
    assert not claims.claim_lies_truthful("C4b", lies, theory=wrong).passed


def test_mutation_c4c(lies):
    assert claims.claim_lies_early("C4c", lies).passed
    wrong = variant(theory, early_lie_value=theory.wrong_early_is_worst)  # "lying early is the worst case"
    assert not claims.claim_lies_early("C4c", lies, theory=wrong).passed


def test_mutation_c4d(lies):
    assert claims.claim_lies_random("C4d", lies).passed
    wrong = variant(theory, lie_bound=theory.wrong_lie_free)  # the lie-free bound
    assert not claims.claim_lies_random("C4d", lies, theory=wrong).passed
    assert lies.random_max_lies <= D["ell_max"] and lies.late_mistakes == 0


def test_mutation_c4e(lies):
    assert claims.claim_naive("C4e", lies).passed
    wrong = variant(theory, naive_mistakes=theory.wrong_naive_bounded)
    assert not claims.claim_naive("C4e", lies, theory=wrong).passed


@pytest.mark.parametrize("wrong", ["wrong_lie_bound_without_ell", "wrong_lie_bound_without_indicator",
                                   "wrong_lie_free"])
def test_mutation_c4f(liegame_res, wrong):
    assert claims.claim_lies_exhaustive("C4f", liegame_res).passed
    bad = variant(theory, lie_bound=getattr(theory, wrong))
    assert not claims.claim_lies_exhaustive("C4f", liegame_res, theory=bad).passed


def test_mutation_c4g(liegame_res):
    assert claims.claim_least_lies("C4g", liegame_res).passed
    wrong = variant(theory, least_lie_value=theory.wrong_least_is_index_order)  # "G_idx^ell is optimal"
    assert not claims.claim_least_lies("C4g", liegame_res, theory=wrong).passed
    assert liegame_res.least_more[1] == [0, 3, 4, 7, 8]


def test_mutation_c4h(liegame_res):
    assert claims.claim_probe("C4h", liegame_res).passed
    wrong = variant(theory, least_lie_value=theory.wrong_least_is_index_order)
    assert not claims.claim_probe("C4h", liegame_res, theory=wrong).passed


# ---------------------------------------------------------------- the query model (C5)

def _brute_query_mistakes(inc, q):
    """Plain recursion over (consistent languages, queries left), outputs as explicit type sets."""
    inc = np.asarray(inc, dtype=bool)
    m, n = inc.shape
    sets = [S for r in range(1, n + 1) for S in itertools.combinations(range(n), r)]

    @functools.cache
    def val(V, j):
        if inc[list(V)].all(axis=0).any():
            return 0
        best = val(V, j - 1) if j > 0 else 10**6
        if j > 0:
            for f in range(n):
                plus = tuple(i for i in V if inc[i, f])
                minus = tuple(i for i in V if not inc[i, f])
                if plus and minus:
                    best = min(best, max(val(plus, j - 1), val(minus, j - 1)))
            return best
        for S in sets:
            plus = tuple(i for i in V if inc[i, list(S)].all())
            minus = tuple(i for i in V if not inc[i, list(S)].all())
            if minus == V:
                continue
            best = min(best, max(val(plus, q) if plus else -1, 1 + val(minus, q) if minus else -1))
        return best

    return val(tuple(range(m)), q)


def test_output_masks_brute_force():
    rng = np.random.default_rng(11)
    for _ in range(10):
        inc = model.random_family(rng, 5, 6, 0.5)
        want = set()
        for r in range(1, 6):
            for S in itertools.combinations(range(5), r):
                want.add(sum(1 << i for i in range(6) if inc[i, list(S)].all()))
        assert list(mq.output_masks(inc)) == sorted(want)


def test_query_mistakes_matches_plain_recursion():
    rng = np.random.default_rng(5)
    for _ in range(12):
        inc = model.random_family(rng, 5, 5, 0.35)
        for q in (0, 1, 2):
            assert mq.query_mistakes(inc, q) == _brute_query_mistakes(inc, q)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 10])
def test_query_games_disjoint(n):
    inc = families.disjoint_family(n)
    assert mq.query_cost(inc) == n - 1
    assert [mq.query_mistakes(inc, q) for q in (0, 1, 2, 3)] == [(n - 1) // (q + 1) for q in (0, 1, 2, 3)]


def test_query_mistakes_without_queries_is_the_mistake_game():
    rng = np.random.default_rng(8)
    for _ in range(20):
        inc = model.random_family(rng, 6, 7, 0.35)
        assert mq.query_mistakes(inc, 0) == model.minimax_mistakes(inc)
        assert mq.query_cost(inc) >= mq.query_mistakes(inc, 1) >= mq.query_mistakes(inc, 2)


def test_query_games_common_type_cost_nothing():
    inc = families.incidence([[0, 1], [0, 2], [0]], 3)
    assert mq.query_cost(inc) == 0 and mq.query_mistakes(inc, 1) == 0


def test_query_bad_input():
    with pytest.raises(ValueError):
        mq.query_cost(families.disjoint_family(17))
    with pytest.raises(ValueError):
        mq.query_mistakes(families.disjoint_family(3), -1)
    with pytest.raises(ValueError):
        mq.run_query_games([families.disjoint_family(3)], ["a", "b"], (1,))


def test_query_theory():
    inc = families.disjoint_family(6)  # tau = 6
    assert [theory.query_mistakes(inc, q) for q in (0, 1, 2, 4, 5)] == [5, 2, 1, 1, 0]
    assert theory.wrong_query_mistakes_ceil(inc, 1) == 3 and theory.wrong_query_mistakes_ignored(inc, 2) == 5
    with pytest.raises(ValueError):
        theory.query_mistakes(inc, -1)


def test_query_model_never_imports_theory():
    src = Path(mq.__file__).read_text()
    names = {a.name for node in ast.walk(ast.parse(src)) if isinstance(node, ast.ImportFrom) for a in node.names}
    assert "theory" not in names and "import theory" not in src


@pytest.fixture(scope="module")
def qres(c1):
    return mq.run_query_games([i.inc for i in c1[1]], [i.name for i in c1[1]], (1, 2, 3))


def test_query_cost_collapses_to_the_mistake_game(qres, c1):
    # A "yes" ends the search (C(V_f^+) = 0), so C(V) = 1 + min_f C(V_f^-), the recursion of the mistake
    # game: the query cost is C1's value tau - 1 on every family (part (i) of the theorem), not a new check.
    for i, inc in enumerate(qres.incs):
        assert qres.cost[i] == model.minimax_mistakes(inc) == theory.tau(inc) - 1
    assert any(theory.tau(inc) - 1 != math.ceil(math.log2(inc.shape[0])) for inc in qres.incs)


def test_c5_needs_a_searched_family(qres):
    empty = dataclasses.replace(qres, incs=(), names=(), cost=qres.cost[:0], mistakes=qres.mistakes[:, :0])
    with pytest.raises(ValueError, match="at least one searched family"):
        claims.claim_query_mistakes("C5", empty)


@pytest.mark.parametrize("wrong", ["wrong_query_mistakes_ignored", "wrong_query_mistakes_ceil"])
def test_mutation_c5(qres, wrong):
    assert claims.claim_query_mistakes("C5", qres).passed
    bad = variant(theory, query_mistakes=getattr(theory, wrong))
    assert not claims.claim_query_mistakes("C5", qres, theory=bad).passed


def test_run_query_games_skips_large_searches():
    small, big = families.disjoint_family(3), families.k_subsets_family(6, 2)
    res = mq.run_query_games([small, big], ["small", "big"], (1,), max_cells=mq.search_cells(small))
    assert res.names == ("small",) and res.n_skipped == 1 and res.mistakes.shape == (1, 1)
    assert res.cost[0] == 2 and res.mistakes[0, 0] == 1
