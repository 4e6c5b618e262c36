"""Tests of theorylib.generation and mutation tests of the chapter 'generation-mistake-feedback'."""

import math

import numpy as np
import numpy.testing as npt
import pytest

from theorylib import generation as gen
from theorylib.chapters.generation_mistake_feedback import CHAPTER
from theorylib.core import rng_for

D = CHAPTER.defaults()


# ---------------------------------------------------------------- unit tests: type families


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_tau_disjoint(n):
    assert gen.transversal_number(gen.disjoint_family(n))[0] == n


@pytest.mark.parametrize("n,k", [(4, 2), (5, 3), (6, 1), (6, 6), (7, 3)])
def test_tau_k_subsets(n, k):
    assert gen.transversal_number(gen.k_subsets_family(n, k))[0] == n - k + 1


@pytest.mark.parametrize("n,k", [(5, 1), (9, 3), (10, 3), (12, 5), (7, 7)])
def test_tau_intervals(n, k):
    assert gen.transversal_number(gen.interval_family(n, k))[0] == math.ceil((n - k + 1) / k)


@pytest.mark.parametrize("k", [2, 3])
def test_greedy_trap(k):
    inc = gen.greedy_trap_family(k)
    assert inc.shape[0] == 2 ** (k + 1) - 2
    assert len({tuple(r) for r in inc}) == inc.shape[0]  # distinct languages
    assert gen.transversal_number(inc)[0] == 2
    assert gen.greedy_cover(inc).size == k


def test_transversal_returns_a_hitting_set():
    rng = np.random.default_rng(3)
    for _ in range(30):
        inc = gen.random_family(rng, 7, 6, 0.3)
        tau, H = gen.transversal_number(inc)
        assert H.size == tau
        assert inc[:, H].any(axis=1).all()
        g = gen.greedy_cover(inc)
        assert inc[:, g].any(axis=1).all() and g.size >= tau


def test_dp_equals_tau_minus_one_on_random_families():
    rng = np.random.default_rng(11)
    for _ in range(50):
        inc = gen.random_family(rng, int(rng.integers(3, 8)), int(rng.integers(1, 9)), float(rng.uniform(0.2, 0.6)))
        assert gen.minimax_mistakes(inc) == gen.transversal_number(inc)[0] - 1


def test_dp_monotone_under_removing_a_language():
    rng = np.random.default_rng(5)
    for _ in range(20):
        inc = gen.random_family(rng, 6, 7, 0.35)
        v = gen.minimax_mistakes(inc)
        for i in range(inc.shape[0]):
            assert gen.minimax_mistakes(np.delete(inc, i, axis=0)) <= v


def test_union_disjoint_adds_tau_and_overlap_bound():
    rng = np.random.default_rng(7)
    for _ in range(15):
        a, b = gen.random_family(rng, 5, 4, 0.4), gen.random_family(rng, 4, 5, 0.4)
        u = gen.disjoint_union(a, b)
        assert gen.transversal_number(u)[0] == gen.transversal_number(a)[0] + gen.transversal_number(b)[0]
        b5 = np.zeros((b.shape[0], 5), dtype=bool)
        b5[:, :4] = b
        both = np.vstack([a, b5])  # same type set: overlapping supports
        assert gen.minimax_mistakes(both) <= gen.minimax_mistakes(a) + gen.minimax_mistakes(b5) + 1


# ---------------------------------------------------------------- unit tests: streams, generators, simulator


def test_streams_enumerate():
    s = gen.uninformative_stream(3, 12)
    assert {tuple(x) for x in s} == {(f, j) for f in range(3) for j in range(4)}
    c = gen.cantor_stream(55)
    assert {tuple(x) for x in c} == {(a, b) for a in range(10) for b in range(10) if a + b < 10}


@pytest.mark.parametrize("make", [gen.HittingSetGen, gen.GreedyGen, lambda: gen.IndexOrderGen(0),
                                  lambda: gen.RandomOrderGen(4)])
def test_feedback_generators_fresh_and_bounded(make):
    rng = np.random.default_rng(2)
    for _ in range(8):
        inc = gen.random_family(rng, 6, 5, 0.4)
        fam = gen.TypeFamily(inc)
        T = 30
        stream = gen.uninformative_stream(6, T)
        tau = gen.transversal_number(inc)[0]
        for k in range(inc.shape[0]):
            g = make()
            r = gen.simulate(fam, g, k, T, stream)
            outs = {tuple(w) for w in r.outputs}
            assert len(outs) == T
            assert all((w[1] * 6 + w[0]) > t for t, w in enumerate(r.outputs))  # not in S_t
            assert np.all(np.diff(r.mistakes) >= 0)
            if isinstance(g, gen.HittingSetGen):
                assert r.total <= tau - 1


def test_generators_never_see_target():
    fam = gen.TypeFamily(gen.disjoint_family(4))
    g = gen.HittingSetGen()
    g.reset(fam)
    assert not any("target" in k for k in vars(g))


def test_no_feedback_bound_and_simulator_agree():
    inc = gen.interval_family(7, 3)
    fam = gen.TypeFamily(inc)
    T = 200
    stream = gen.uninformative_stream(7, T)
    for g in gen.no_feedback_zoo():
        M = gen.simulate_no_feedback(fam, g, T, stream)
        for k in (0, 2):
            npt.assert_array_equal(M[k], gen.simulate(fam, type(g)(), k, T, stream).mistakes)
        m, d = inc.shape[0], gen.max_degree(inc)
        assert M[:, -1].max() >= gen.no_feedback_lower_bound(T, m, d)


def test_adversary_forces_tau_minus_one_and_replays():
    inc = gen.k_subsets_family(5, 2)
    fam = gen.TypeFamily(inc)
    for g in gen.feedback_zoo(1):
        forced, surv = gen.always_mistake_adversary(fam, g, 20)
        assert forced >= gen.transversal_number(inc)[0] - 1
        assert gen.simulate(fam, g, int(surv[0]), 20, gen.uninformative_stream(5, 20)).total == forced


def test_lie_simulator_flips_exactly_scheduled_bits():
    col = gen.CountableDisjoint()
    stream = gen.cantor_stream(40)
    truth = gen.simulate(col, gen.IndexOrderGen(5), 6, 40, stream)
    r = gen.simulate(col, gen.IndexOrderGen(5), 6, 40, stream, gen.scheduled_lies([0, 3]))
    # up to the first flip both runs agree; the report differs from the truth exactly at 0 and 3
    npt.assert_array_equal(np.flatnonzero(r.reported != r.true_bits), [0, 3])
    assert r.n_lies == 2 and truth.n_lies == 0


def test_countable_overlapping_bound_and_finite_list_raises():
    col = gen.CountableRandom(seed=3, p=0.4)
    M = gen.run_countable(10, col)
    assert np.all(M <= np.arange(10))
    fam = gen.TypeFamily(gen.disjoint_family(3))
    with pytest.raises(RuntimeError, match="eliminated"):
        gen.simulate(fam, gen.IndexOrderGen(0), 2, 20, gen.uninformative_stream(3, 20), gen.false_flag_once())


def test_lie_theory_values():
    assert gen.lie_bound(1, 3) == 0 and gen.lie_bound(2, 3) == 7 and gen.lie_bound(5, 0) == 4
    assert gen.early_lie_value(2, 3) == gen.lie_bound(2, 3)
    assert all(gen.early_lie_value(i, e) < gen.lie_bound(i, e) for i in range(3, 8) for e in range(1, 4))


def test_envelope_kappa_default_grid():
    npt.assert_allclose(gen.envelope_kappa(2.0 ** np.arange(6, 15)), 1 / (6 * math.log(2)), rtol=1e-12)


def test_exact_slope():
    assert gen.exact_slope([1, 2, 3], [0, 1, 2]) == 1
    assert gen.exact_slope([1, 2, 3], [5, 5, 5]) == 0


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("call,msg", [
    (lambda: gen.incidence([[0], []], 3), "empty"),
    (lambda: gen.incidence([[0, 5]], 3), "outside"),
    (lambda: gen.check_inc(np.ones(3, dtype=bool)), "2-D"),
    (lambda: gen.check_inc(np.ones((2, 2), dtype=int)), "boolean"),
    (lambda: gen.check_inc(np.array([[True, False], [False, False]])), "empty"),
    (lambda: gen.transversal_number(np.ones((2, 21), dtype=bool)), "n_types <= 20"),
    (lambda: gen.minimax_mistakes(np.ones((21, 2), dtype=bool)), "at most"),
    (lambda: gen.IndexOrderGen(-1), "non-negative"),
    (lambda: gen.lie_bound(0, 1), "positive"),
    (lambda: gen.uninformative_stream(3, 0), "positive"),
    (lambda: gen.cantor_stream(-2), "positive"),
    (lambda: gen.k_subsets_family(3, 4), "1..n"),
    (lambda: gen.random_family(np.random.default_rng(0), 3, 2, 0.0), "probability"),
    (lambda: gen.simulate(gen.TypeFamily(gen.disjoint_family(2)), gen.GreedyGen(), 2, 5,
                          gen.uninformative_stream(2, 5)), "out of range"),
    (lambda: gen.simulate(gen.TypeFamily(gen.disjoint_family(2)), gen.GreedyGen(), 0, 0,
                          gen.uninformative_stream(2, 5)), "positive"),
])
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


# ---------------------------------------------------------------- mutation tests (at the defaults)


@pytest.fixture(scope="module")
def c1():
    rnd = gen.random_instances(rng_for(D["seed"], "C1"), D["n_instances"], D["n_types_max"], D["n_langs_max"],
                               D["p_incl"])
    return rnd, rnd + gen.structured_instances()


@pytest.fixture(scope="module")
def zoo(c1):
    return gen.run_zoo(c1[1], rng_for(D["seed"], "C2"))


@pytest.fixture(scope="module")
def res3(c1):
    inst = [i for i in c1[0] if i.tau >= 2][: D["n_c3"]]
    inst.append(gen.make_instance("intervals(9,3)", "intervals", gen.interval_family(9, 3)))
    return gen.run_no_feedback(inst, D["T_max_pow"])


@pytest.fixture(scope="module")
def lies():
    return gen.run_lies(D["n_countable"], D["ell_max"], D["n_random_adversaries"], rng_for(D["seed"], "C4"))


@pytest.mark.parametrize("wrong", [gen.theory_log2_m, gen.theory_tau, gen.theory_m_minus_1,
                                   gen.theory_greedy_minus_1])
def test_mutation_c1a(c1, wrong):
    assert gen.claim_c1_minimax(c1[1]).passed
    assert not gen.claim_c1_minimax(c1[1], wrong).passed


@pytest.mark.parametrize("wrong", [max, lambda a, b: a + b])
def test_mutation_c1b(wrong):
    pairs = gen.union_pairs(rng_for(D["seed"], "C1b"), D["n_union"])
    assert gen.claim_c1_union(pairs).passed
    assert not gen.claim_c1_union(pairs, wrong).passed


def test_mutation_c1c():
    recs = gen.structured_taus()
    assert gen.claim_c1_closed_forms(recs).passed

    def wrong(kind, n, k):  # minimax value mistaken for tau on k-subsets, floor instead of ceil on intervals
        if kind == "k-subsets":
            return n - k
        if kind == "intervals":
            return (n - k + 1) // k
        return gen.tau_closed_form(kind, n, k)

    assert not gen.claim_c1_closed_forms(recs, wrong).passed


def test_mutation_c2(c1, zoo):
    inst = c1[1]
    assert zoo.replay_ok
    assert gen.claim_c2_hitting(inst, zoo).passed
    assert not gen.claim_c2_hitting(inst, zoo, gen.theory_tau).passed
    assert gen.claim_c2_lower(inst, zoo).passed
    assert not gen.claim_c2_lower(inst, zoo, gen.theory_tau).passed
    assert gen.claim_c2_greedy(inst, zoo).passed
    assert not gen.claim_c2_greedy(inst, zoo, gen.theory_tau_minus_1).passed  # "greedy is minimax-optimal"


def test_mutation_c2_countable():
    M = gen.run_countable(D["n_countable"])
    assert gen.claim_c2_countable(M).passed
    assert not gen.claim_c2_countable(M, lambda i: min(i - 1, 1)).passed  # bounded independent of i*
    assert gen.exact_slope(list(range(1, D["n_countable"] + 1)), M.tolist()) == 1


def test_mutation_c3(res3):
    assert gen.claim_c3_nofeedback(res3).passed
    assert not gen.claim_c3_nofeedback(res3, gen.envelope_bounded).passed
    assert gen.claim_c3_slope(res3).passed
    assert not gen.claim_c3_slope(res3, 0.0).passed
    assert gen.claim_c3_feedback(res3).passed
    assert not gen.claim_c3_feedback(res3, gen.envelope_no_feedback).passed


def test_mutation_c4(lies):
    assert gen.claim_c4_constructed(lies).passed
    assert not gen.claim_c4_constructed(lies, gen.truthful_value).passed  # bound without the + ell term
    assert gen.claim_c4_truthful(lies).passed
    assert not gen.claim_c4_truthful(lies, lambda i, e: i - 1).passed
    assert gen.claim_c4_early(lies).passed
    assert not gen.claim_c4_early(lies, gen.lie_bound).passed  # "lying early is the worst case"
    assert gen.claim_c4_random(lies).passed
    assert not gen.claim_c4_random(lies, lambda i, e: i - 1).passed  # the lie-free bound
    assert gen.claim_c4_naive(lies).passed
    assert not gen.claim_c4_naive(lies, gen.naive_bounded).passed
    assert lies.random_max_lies <= D["ell_max"]
    assert np.all(lies.constructed_lies == np.array(lies.ells)[:, None] * (np.array(lies.i_stars) >= 2))
