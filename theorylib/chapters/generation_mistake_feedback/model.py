"""The model of chapter 'generation-mistake-feedback': every measured value, from families to mistake counts.

This module holds the measured side of every claim and the experiment pipelines the notebook and
the tests share: random type families, the value of the game by the version-space recursion (a
bitmask DP that never computes a transversal), the exhaustive transversals of the structured
families, and the runs of C2-C4 (generators of :mod:`.model_generators` played in the game of
:mod:`.model_games`), with their fits. Horizons, windows and sample sizes come from the parameters
or from other measured values, never from a law under test.

Never imports ``theory``: a mutation of the theory cannot move a measurement. Random functions
take an explicit ``rng``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from theorylib.core.validation import check_int, check_positive_int, check_real

from .families import (
    DP_STRUCTURED,
    LARGE_STRUCTURED,
    REGULAR_SMALL,
    check_inc,
    disjoint_union,
    popcount,
    structured,
    transversal_number,
)
from .model_games import (
    always_mistake_adversary,
    cantor_stream,
    early_lie_schedule,
    false_flag_once,
    random_lie_schedule,
    simulate,
    simulate_no_feedback,
    uninformative_stream,
    worst_case_mistakes,
    worst_lie_schedule,
)
from .model_generators import (
    CountableDisjoint,
    HittingSetGen,
    IndexOrderGen,
    LPFrequencyGen,
    TypeFamily,
    feedback_zoo,
    no_feedback_zoo,
)

MAX_LANGS_DP = 20
MAX_TYPES_EXACT = 7  # the exhaustive no-feedback search enumerates C(T_max + n, n) count vectors

# ----------------------------------------------------------------------------------------------
# Families and the value of the game
# ----------------------------------------------------------------------------------------------


def random_family(rng: np.random.Generator, n_types: int, m: int, p: float) -> np.ndarray:
    """``m`` random languages over ``n_types`` types, each type included with probability ``p``.

    Empty rows are resampled (so every language is nonempty).
    """
    n_types, m = check_positive_int("n_types", n_types), check_positive_int("m", m)
    p = check_real("inclusion probability p", p, 0.0, 1.0, open_low=True)
    inc = rng.random((m, n_types)) < p
    while True:
        empty = ~inc.any(axis=1)
        if not empty.any():
            return inc
        inc[empty] = rng.random((int(empty.sum()), n_types)) < p


def has_common_type(inc: np.ndarray) -> bool:
    """Whether some type lies in every language (then a no-feedback generator never errs)."""
    return bool(check_inc(inc).all(axis=0).any())


def minimax_mistakes(inc: np.ndarray) -> int:
    """Minimax worst-case number of mistakes with mistake feedback, by the version-space recursion.

    ``M(V) = 0`` if the languages in ``V`` share a type; otherwise
    ``M(V) = min_f max(1 + M(V_f^-), M(V_f^+))`` over types ``f`` lying in some but not all
    languages of ``V`` (``V_f^+`` those containing ``f``, ``V_f^-`` the others). Returns ``M(all)``.
    Bitmask DP over the ``2^m`` language subsets, processed by popcount layers (both ``V_f^+-`` are
    proper subsets). It never computes a transversal: an independent code path for ``tau - 1``.
    """
    inc = check_inc(inc)
    m, n = inc.shape
    if m > MAX_LANGS_DP:
        raise ValueError(f"the version-space DP needs at most {MAX_LANGS_DP} languages, got {m}")
    big = np.int32(10**6)
    S = (inc.T.astype(np.int64) << np.arange(m, dtype=np.int64)).sum(axis=1)  # languages holding f
    masks = np.arange(1 << m, dtype=np.int64)
    pc = popcount(masks)
    M = np.zeros(1 << m, dtype=np.int32)
    M[0] = -big  # M(empty) = -infinity: never reached below
    for p in range(1, m + 1):
        V = masks[pc == p]
        minus = V[:, None] & ~S[None, :]
        plus = V[:, None] & S[None, :]
        common = np.any(minus == 0, axis=1)
        val = np.maximum(1 + M[minus], M[plus])
        val = np.where((plus == 0) | (minus == 0), big, val)
        M[V] = np.where(common, 0, val.min(axis=1))
    return int(M[-1])


@dataclass(frozen=True)
class Instance:
    """A type family with its measured game value ``dp`` (``n``, ``k``: the size parameters)."""

    name: str
    kind: str
    inc: np.ndarray
    n: int
    k: int | None
    dp: int

    @property
    def m(self) -> int:
        return int(self.inc.shape[0])


def make_instance(name: str, kind: str, inc: np.ndarray, n: int, k: int | None = None) -> Instance:
    inc = check_inc(inc)
    return Instance(name, kind, inc, int(n), k, minimax_mistakes(inc))


def structured_instance(kind: str, n: int, k: int | None = None) -> Instance:
    """The structured family ``kind(n, k)`` of :mod:`.families` with its game value."""
    name = f"{kind}({n}{'' if k is None else f',{k}'})"
    return make_instance(name, kind, structured(kind, n, k), n, k)


def random_instances(rng: np.random.Generator, n_instances: int, n_types_max: int, n_langs_max: int,
                     p_incl: float) -> list[Instance]:
    """Random families: ``n_types`` uniform in ``5..n_types_max``, ``m`` in ``3..n_langs_max``."""
    out = []
    for r in range(check_positive_int("n_instances", n_instances)):
        n = int(rng.integers(5, n_types_max + 1))
        m = int(rng.integers(3, n_langs_max + 1))
        out.append(make_instance(f"random-{r}", "random", random_family(rng, n, m, p_incl), n))
    return out


def structured_instances() -> list[Instance]:
    """The structured families with ``m <= 16`` languages, with their game values."""
    return [structured_instance(kind, n, k) for kind, n, k in DP_STRUCTURED]


def structured_transversals(kinds: Sequence[tuple[str, int, int | None]] = DP_STRUCTURED + LARGE_STRUCTURED
                            ) -> list[tuple[str, int, int | None, int]]:
    """``(kind, n, k, tau)`` with ``tau`` from the exhaustive hitting-set search, for the structured families."""
    return [(kind, n, k, transversal_number(structured(kind, n, k))[0]) for kind, n, k in kinds]


def union_pairs(rng: np.random.Generator, n_pairs: int) -> list[tuple[int, int, int]]:
    """Game values ``(M(A), M(A'), M(A u A'))`` of random families on disjoint type supports."""
    out = []
    for _ in range(check_positive_int("n_pairs", n_pairs)):
        fams = [random_family(rng, int(rng.integers(3, 7)), int(rng.integers(2, 8)), 0.4) for _ in range(2)]
        out.append((minimax_mistakes(fams[0]), minimax_mistakes(fams[1]),
                    minimax_mistakes(disjoint_union(*fams))))
    return out


# ----------------------------------------------------------------------------------------------
# Fits of measured counts
# ----------------------------------------------------------------------------------------------


def exact_slope(x: Sequence[int], y: Sequence[int]) -> Fraction:
    """Least-squares slope of integer data as an exact rational."""
    n = len(x)
    xb, yb = Fraction(sum(x), n), Fraction(sum(y), n)
    sxx = sum((Fraction(a) - xb) ** 2 for a in x)
    return sum((Fraction(a) - xb) * (Fraction(b) - yb) for a, b in zip(x, y, strict=True)) / sxx


# ----------------------------------------------------------------------------------------------
# C2: the feedback zoo against every target and against the adaptive adversary
# ----------------------------------------------------------------------------------------------


@dataclass
class ZooResult:
    """Worst-case mistakes over targets, per instance and generator (C2)."""

    names: list[str]
    worst: np.ndarray  # (n_instances, n_generators) max_K M_K(T)
    adversary: np.ndarray  # (n_instances, n_generators) mistakes forced by the adaptive adversary
    replay_ok: bool


def run_zoo(instances: Sequence[Instance], rng: np.random.Generator, horizon_factor: int = 4) -> ZooResult:
    """Simulate every feedback generator against every target for ``T = 4 m`` rounds."""
    horizon_factor = check_positive_int("horizon_factor", horizon_factor)
    keys = rng.integers(0, 2**31, size=len(instances))
    worst, adv = [], []
    replay_ok = True
    names: list[str] = []
    for inst, key in zip(instances, keys, strict=True):
        fam = TypeFamily(inst.inc)
        T = horizon_factor * inst.m
        row_w, row_a = [], []
        zoo = feedback_zoo(np.random.default_rng(int(key)))
        names = [g.name for g in zoo]
        for gen in zoo:
            M = worst_case_mistakes(fam, gen, T)
            row_w.append(int(M[:, -1].max()))
            forced, survivors = always_mistake_adversary(fam, gen, T)
            row_a.append(forced)
            replay = simulate(fam, gen, int(survivors[0]), T, uninformative_stream(fam.n_types, T)).total
            replay_ok &= replay == forced
        worst.append(row_w)
        adv.append(row_a)
    return ZooResult(names, np.array(worst), np.array(adv), bool(replay_ok))


def run_countable(n_countable: int, collection=None) -> np.ndarray:
    """Mistakes of ``G_idx`` (ell = 0) on an infinite collection for ``i* = 1..n_countable``.

    Cantor stream (all of N x N: maximal contamination), horizon ``T = 4 n_countable``."""
    n_countable = check_positive_int("n_countable", n_countable)
    col = CountableDisjoint() if collection is None else collection
    T = 4 * n_countable
    stream = cantor_stream(T)
    return np.array([simulate(col, IndexOrderGen(0), k, T, stream).total for k in range(n_countable)])


# ----------------------------------------------------------------------------------------------
# C3: no feedback against feedback
# ----------------------------------------------------------------------------------------------


@dataclass
class NoFeedbackResult:
    """C3: per instance, worst-case mistakes on the T grid of each no-feedback generator of the zoo,
    of the LP-frequency generator (with the frequencies it used), and of the feedback (hitting-set)
    generator."""

    names: list[str]
    Ts: np.ndarray
    nofb: list[np.ndarray]  # per instance, (n_generators, len(Ts)) max_K M_K(T) of the zoo
    lp: list[np.ndarray]  # per instance, (len(Ts),) max_K M_K(T) of the LP-frequency generator
    lp_weights: list[tuple[Fraction, ...]]  # per instance, the frequencies the LP generator used
    fb: list[np.ndarray]  # per instance, (len(Ts),) max_K M_K(T) of the hitting-set generator
    instances: list[Instance]


def c3_instances(random_inst: Sequence[Instance], n_c3: int) -> list[Instance]:
    """The first ``n_c3`` random families with no type common to all languages, plus intervals(9, 3)."""
    n_c3 = check_positive_int("n_c3", n_c3)
    chosen = [i for i in random_inst if not has_common_type(i.inc)][:n_c3]
    return chosen + [structured_instance("intervals", 9, 3)]


def run_no_feedback(instances: Sequence[Instance], T_max_pow: int) -> NoFeedbackResult:
    """The no-feedback zoo, the LP-frequency generator and the hitting-set generator on
    ``T = 2^6 .. 2^T_max_pow``."""
    T_max_pow = check_int("T_max_pow", T_max_pow, low=7, high=30)
    Ts = 2 ** np.arange(6, T_max_pow + 1)
    T = int(Ts[-1])
    nofb, lp, weights, fb = [], [], [], []
    names: list[str] = []
    for inst in instances:
        if has_common_type(inst.inc):
            raise ValueError(f"C3 needs families without a common type (instance {inst.name} has one)")
        fam = TypeFamily(inst.inc)
        stream = uninformative_stream(fam.n_types, T)
        zoo = no_feedback_zoo()
        names = [g.name for g in zoo]
        nofb.append(np.stack([simulate_no_feedback(fam, g, T, stream).max(axis=0)[Ts - 1] for g in zoo]))
        gen = LPFrequencyGen()
        lp.append(simulate_no_feedback(fam, gen, T, stream).max(axis=0)[Ts - 1])
        weights.append(gen.weights)
        fb.append(worst_case_mistakes(fam, HittingSetGen(), T).max(axis=0)[Ts - 1])
    return NoFeedbackResult(names, Ts, nofb, lp, weights, fb, list(instances))


# ----------------------------------------------------------------------------------------------
# C3b-c: the exact no-feedback minimax, by exhaustive search over all generators
# ----------------------------------------------------------------------------------------------


def count_vectors(n: int, S: int) -> np.ndarray:
    """Every ``c`` in ``N^n`` with ``sum(c) <= S``, shape ``(C(S + n, n), n)`` (int64)."""
    return _count_vectors_t(check_positive_int("n", n), check_int("S", S, low=0)).T.astype(np.int64)


@functools.lru_cache(maxsize=16)
def _count_vectors_t(n: int, S: int) -> np.ndarray:
    """:func:`count_vectors` transposed, int16 (exact: every entry and sum is at most ``S <= 1000``), read-only."""
    if S > 1000:
        raise ValueError(f"count vectors need S <= 1000, got {S}")
    vecs = np.zeros((1, 0), dtype=np.int64)
    rem = np.array([S], dtype=np.int64)
    for _ in range(n):
        reps = rem + 1
        row = np.repeat(np.arange(vecs.shape[0]), reps)
        val = np.arange(int(reps.sum()), dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps)
        vecs = np.column_stack([vecs[row], val])
        rem = rem[row] - val
    out = np.ascontiguousarray(vecs.T.astype(np.int16))
    out.flags.writeable = False
    return out


def no_feedback_minimax(inc: np.ndarray, T_max: int) -> np.ndarray:
    """``V(T)``, ``T = 0..T_max``: the least worst-case mistakes of any no-feedback generator.

    Without feedback on a fixed stream a deterministic generator's outputs are the same for every
    target, and a fresh output of type ``f`` is a mistake for ``K = L_i`` iff ``f`` is not in
    ``A_i``; so after ``T`` rounds only the counts ``c_f`` of the output types matter and
    ``M_i(T) = T - c(A_i)``. The search runs over *every* count vector with ``sum(c) = T`` (every
    generator up to the order of its outputs): ``V(T) = T - max_c min_i c(A_i)``. Exact integer
    arithmetic; it never uses ``Delta``, ``m`` or ``tau``.
    """
    inc = check_inc(inc)
    n = inc.shape[1]
    if n > MAX_TYPES_EXACT:
        raise ValueError(f"the exhaustive no-feedback search needs at most {MAX_TYPES_EXACT} types, got {n}")
    CT = _count_vectors_t(n, check_int("T_max", T_max, low=0))
    worst_hit = None  # min_i c(A_i) for every count vector c, one language at a time
    for row in inc:
        types = np.flatnonzero(row)
        hit = CT[types[0]].copy()
        for f in types[1:]:
            hit += CT[f]
        worst_hit = hit if worst_hit is None else np.minimum(worst_hit, hit, out=worst_hit)
    best = np.full(T_max + 1, -1, dtype=np.int64)
    np.maximum.at(best, CT.sum(axis=0, dtype=np.int64), worst_hit.astype(np.int64))
    return np.arange(T_max + 1, dtype=np.int64) - best


def no_feedback_optimal_counts(inc: np.ndarray, T: int) -> np.ndarray:
    """A count vector ``c`` with ``sum(c) = T`` attaining ``V(T)`` (the first one found)."""
    inc = check_inc(inc)
    C = count_vectors(inc.shape[1], check_int("T", T, low=0))
    C = C[C.sum(axis=1) == T]
    return C[int(np.argmax((C @ inc.T.astype(np.int64)).min(axis=1)))].copy()


@dataclass
class ExactNoFeedbackResult:
    """C3b-c: per family, its name, incidence matrix, whether it is regular, and ``V(T)`` for
    ``T = 1..3 n`` (entry ``T - 1``; ``n`` its number of types)."""

    names: list[str]
    incs: list[np.ndarray]
    regular: list[bool]  # from REGULAR_SMALL: k-uniform and Delta-regular
    V: list[np.ndarray]


def run_no_feedback_exact(random_inst: Sequence[Instance]) -> ExactNoFeedbackResult:
    """``V(T)`` for ``T = 1..3 n`` on the regular families of :data:`.families.REGULAR_SMALL`, then on
    the random families with at most 6 types and no common type, then on the path intervals on at most
    6 types without a common type (neither of the last two kinds is regular)."""
    fams = [(f"{kind}({n}{'' if k is None else f',{k}'})", structured(kind, n, k), True)
            for kind, n, k in REGULAR_SMALL]
    fams += [(i.name, i.inc, False) for i in random_inst if i.inc.shape[1] <= 6 and not has_common_type(i.inc)]
    fams += [(f"intervals({n},{k})", inc, False) for n in range(4, 7) for k in (2, 3)
             if n > k + 1 and not has_common_type(inc := structured("intervals", n, k))]
    V = [no_feedback_minimax(inc, 3 * inc.shape[1])[1:] for _, inc, _ in fams]
    return ExactNoFeedbackResult([f[0] for f in fams], [f[1] for f in fams], [f[2] for f in fams], V)


# ----------------------------------------------------------------------------------------------
# C4: lies in the feedback
# ----------------------------------------------------------------------------------------------


@dataclass
class LieResult:
    """C4 on the infinite disjoint collection; arrays of shape ``(len(ells), len(i_stars))``."""

    ells: list[int]
    i_stars: list[int]
    horizon: int  # T0 of the constructed, truthful and early runs
    constructed: np.ndarray  # M_a: lies at candidate i* - 1
    constructed_lies: np.ndarray
    truthful: np.ndarray
    early: np.ndarray
    random_max: np.ndarray  # max over the random schedules of M
    random_max_lies: int
    random_horizon: np.ndarray  # 4 (M_a + 1); the lies fall in its first half
    naive: np.ndarray  # M(T) of G_idx^0 under one false flag, T = naive_horizon (ell >= 1 only)
    naive_horizon: np.ndarray
    late_mistakes: int  # runs (naive excepted) with a mistake in the second half of their horizon


def _late(mistakes: np.ndarray) -> int:
    """1 if the cumulative count still rises in the second half of the horizon, else 0."""
    return int(mistakes[-1] > mistakes[len(mistakes) // 2 - 1]) if len(mistakes) > 1 else 0


def run_lies(n_countable: int, ell_max: int, n_random_adversaries: int, rng: np.random.Generator) -> LieResult:
    """The lie theorem on the infinite disjoint collection with the Cantor stream.

    ``G_idx^ell`` for ``ell = 0..ell_max`` and ``i* = 1..n_countable``: the constructed, truthful and
    early adversaries run for ``T0 = 4 (ell_max + 1)(n_countable + 1)`` rounds (set by the
    parameters alone). With ``M_a`` the count measured for the constructed adversary, each random
    schedule places its lies in the first ``2 (M_a + 1)`` rounds and runs for ``4 (M_a + 1)``; the
    ``ell = 0`` generator under one false flag also runs for ``4 (M_a + 1)`` rounds.
    """
    n_countable = check_positive_int("n_countable", n_countable)
    ell_max = check_int("ell_max", ell_max, low=0)
    per_pair = check_positive_int("n_random_adversaries", n_random_adversaries)
    col = CountableDisjoint()
    ells = list(range(ell_max + 1))
    istars = list(range(1, n_countable + 1))
    shape = (len(ells), len(istars))
    cons, nlies, truth, early, rmax, rhor, naive, nhor = (np.zeros(shape, dtype=np.int64) for _ in range(8))
    T0 = 4 * (ell_max + 1) * (n_countable + 1)
    stream0 = cantor_stream(T0)
    max_lies = late = 0
    for a, ell in enumerate(ells):
        for b, i_star in enumerate(istars):
            k = i_star - 1
            r = simulate(col, IndexOrderGen(ell), k, T0, stream0, worst_lie_schedule(i_star, ell))
            cons[a, b], nlies[a, b] = r.total, r.n_lies
            rt = simulate(col, IndexOrderGen(ell), k, T0, stream0)
            re = simulate(col, IndexOrderGen(ell), k, T0, stream0, early_lie_schedule(ell))
            truth[a, b], early[a, b] = rt.total, re.total
            late += _late(r.mistakes) + _late(rt.mistakes) + _late(re.mistakes)
            window = 2 * (r.total + 1)
            Tr = 2 * window
            stream = cantor_stream(Tr)
            worst = -1
            for _ in range(per_pair):
                rr = simulate(col, IndexOrderGen(ell), k, Tr, stream, random_lie_schedule(rng, window, ell))
                max_lies = max(max_lies, rr.n_lies)
                if rr.n_lies > ell:  # pragma: no cover - the schedule never exceeds the budget
                    raise AssertionError("random schedule exceeded the lie budget")
                worst = max(worst, rr.total)
                late += _late(rr.mistakes)
            rmax[a, b], rhor[a, b] = worst, Tr
            if ell >= 1:
                nhor[a, b] = Tr
                naive[a, b] = simulate(col, IndexOrderGen(0), k, Tr, stream, false_flag_once()).total
    return LieResult(ells, istars, T0, cons, nlies, truth, early, rmax, max_lies, rhor, naive, nhor, late)
