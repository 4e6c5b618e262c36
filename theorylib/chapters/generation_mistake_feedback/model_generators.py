"""Collections and generators of chapter 'generation-mistake-feedback' (part of the model).

A universe ``U`` is countable, a language is an infinite subset of ``U`` and a collection is a list
``L_0, L_1, ...`` of languages (0-based here; the text counts from 1, so ``i* = k + 1`` for the
target index ``k``). Collections are membership oracles: a generator may query any language, never
the target. Two kinds are implemented:

* :class:`TypeFamily`: the *type model* ``L_i = A_i x N`` of a finite type family (:mod:`.families`);
* :class:`CountableDisjoint` and :class:`CountableRandom`: lazily generated *infinite* collections
  over ``N x N`` (a finite list would leave the index-order generator without a candidate once all
  are eliminated).

The generators see the collection, the stream, their own outputs and the (possibly falsified)
reported bits; never the target. Never imports ``theory``: a mutation of the theory cannot move a
measurement.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog

from theorylib.core.validation import check_int, check_probability

from .families import check_inc, transversal_number

Point = tuple[int, int]

# ----------------------------------------------------------------------------------------------
# Collections (membership oracles)
# ----------------------------------------------------------------------------------------------


class TypeFamily:
    """The finite collection ``L_i = A_i x N`` of a type family (incidence matrix ``inc``)."""

    def __init__(self, inc: np.ndarray) -> None:
        self.inc = check_inc(inc)
        self.n_langs, self.n_types = self.inc.shape
        self._sets = [np.flatnonzero(row) for row in self.inc]
        self._rowsets = [frozenset(int(f) for f in A) for A in self._sets]
        self._transversal: np.ndarray | None = None

    def transversal(self) -> np.ndarray:
        """An optimal transversal (exhaustive search, computed once)."""
        if self._transversal is None:
            self._transversal = transversal_number(self.inc)[1]
        return self._transversal

    def contains(self, i: int, x: Point) -> bool:
        return x[0] in self._rowsets[i]

    def elements(self, i: int) -> Iterator[Point]:
        """``L_i`` in the order (index, type)."""
        for j in itertools.count():
            for f in self._sets[i]:
                yield (int(f), j)


class CountableDisjoint:
    """The infinite collection ``L_i = {i} x N``, ``i = 0, 1, 2, ...`` (lazy)."""

    n_langs = None

    def contains(self, i: int, x: Point) -> bool:
        return x[0] == i

    def elements(self, i: int) -> Iterator[Point]:
        for j in itertools.count():
            yield (i, j)


class CountableRandom:
    """An infinite overlapping collection ``L_i = A_i x N`` with ``A_i = {i} + random subset of 0..i-1``.

    ``A_i`` is drawn lazily from a key taken from ``rng`` at construction and ``i`` (each ``j < i``
    with probability ``p``), so the collection is fixed once built, the languages are distinct
    (``max A_i = i``) and they overlap.
    """

    n_langs = None

    def __init__(self, rng: np.random.Generator, p: float = 0.3) -> None:
        self.p = check_probability("p", p)
        self._key = int(rng.integers(0, 2**63))
        self._cache: dict[int, frozenset[int]] = {}

    def types(self, i: int) -> frozenset[int]:
        if i not in self._cache:
            r = np.random.default_rng([self._key, i])
            extra = np.flatnonzero(r.random(i) < self.p)
            self._cache[i] = frozenset([i, *map(int, extra)])
        return self._cache[i]

    def contains(self, i: int, x: Point) -> bool:
        return x[0] in self.types(i)

    def elements(self, i: int) -> Iterator[Point]:
        A = sorted(self.types(i))
        for j in itertools.count():
            for f in A:
                yield (f, j)


# ----------------------------------------------------------------------------------------------
# Generators: they see the collection, the stream and the reported bits -- never the target
# ----------------------------------------------------------------------------------------------


class BaseGenerator:
    """Base class. ``reset(collection)``, then per round ``step(x_t) -> w_t`` and, for feedback
    generators, ``observe(reported_bit)``. Outputs are fresh: never in ``S_t``, never repeated."""

    uses_feedback = True
    name = "generator"

    def reset(self, collection) -> None:
        self.collection = collection
        self.taken: set[Point] = set()
        self._ptr: dict[int, int] = {}
        self._iters: dict[int, tuple[Iterator[Point], Point]] = {}

    def step(self, x: Point) -> Point:
        """Take the revealed string ``x`` (a tuple of two ints) and return the output."""
        self.taken.add(x)
        w = self._choose()
        self.taken.add(w)
        return w

    def observe(self, bit: int) -> None:  # pragma: no cover - overridden
        pass

    def _choose(self) -> Point:  # pragma: no cover - overridden
        raise NotImplementedError

    def fresh_copy(self, f: int) -> Point:
        """The least fresh copy ``(f, j)`` of type ``f`` (not in the stream, not output before)."""
        j = self._ptr.get(f, 0)
        while (f, j) in self.taken:
            j += 1
        self._ptr[f] = j
        return (f, j)

    def least_fresh(self, i: int) -> Point:
        """The least element of ``L_i`` (in the collection's order) not yet taken."""
        it, head = self._iters.get(i) or (None, None)
        if it is None:
            it = self.collection.elements(i)
            head = next(it)
        while head in self.taken:
            head = next(it)
        self._iters[i] = (it, head)
        return head


class HittingSetGen(BaseGenerator):
    """Optimal-transversal generator: fresh copies of ``h_1`` until flagged, then ``h_2``, ...

    With ``h_1..h_tau`` an optimal transversal, a truthful adversary can flag at most ``tau - 1``.
    """

    name = "hitting-set"

    def reset(self, collection: TypeFamily) -> None:
        super().reset(collection)
        self.H = [int(f) for f in collection.transversal()]
        self.j = 0

    def _choose(self) -> Point:
        return self.fresh_copy(self.H[self.j] if self.j < len(self.H) else self.H[-1])

    def observe(self, bit: int) -> None:
        self.j += int(bit)


class GreedyGen(BaseGenerator):
    """Max-degree greedy: output the type of largest degree among languages avoiding all flagged
    types (ties lowest); keep it until flagged."""

    name = "greedy"

    def reset(self, collection: TypeFamily) -> None:
        super().reset(collection)
        self.alive = np.ones(collection.n_langs, dtype=bool)
        self._pick()

    def _pick(self) -> None:
        self.f = int(np.argmax(self.collection.inc[self.alive].sum(axis=0))) if self.alive.any() else 0

    def _choose(self) -> Point:
        return self.fresh_copy(self.f)

    def observe(self, bit: int) -> None:
        if bit:
            self.alive &= ~self.collection.inc[:, self.f]
            self._pick()


class RandomOrderGen(BaseGenerator):
    """A random order of types, drawn from ``rng`` once per type count and then kept (so the
    generator is deterministic across targets): output the first type (in that order) that is not
    flagged and lies in some language avoiding every flagged type."""

    name = "random-order"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.perm: np.ndarray | None = None

    def reset(self, collection: TypeFamily) -> None:
        super().reset(collection)
        if self.perm is None or self.perm.size != collection.n_types:
            self.perm = self.rng.permutation(collection.n_types)
        self.flagged = np.zeros(collection.n_types, dtype=bool)
        self._pick()

    def _pick(self) -> None:
        inc = self.collection.inc
        alive = ~(inc & self.flagged).any(axis=1)
        ok = inc[alive].any(axis=0) & ~self.flagged if alive.any() else ~self.flagged
        cand = [int(f) for f in self.perm if ok[f]]
        self.f = cand[0] if cand else int(self.perm[0])

    def _choose(self) -> Point:
        return self.fresh_copy(self.f)

    def observe(self, bit: int) -> None:
        if bit:
            self.flagged[self.f] = True
            self._pick()


class IndexOrderGen(BaseGenerator):
    """The index-order generator ``G_idx^ell`` for any (finite or lazy infinite) collection.

    ``inc_i`` counts the rounds whose reported bit contradicts ``L_i`` (a flag on ``w in L_i``, or
    "correct" on ``w not in L_i``); the candidate is ``c = min{i : inc_i <= ell}``; the output is
    the least element of ``L_c`` not in ``S_t`` and not output before. ``ell = 0`` is the plain
    index-order generator. With a finite list and all languages eliminated it raises
    ``RuntimeError`` (which is why the countable experiments use infinite lazy collections).
    """

    def __init__(self, ell: int = 0) -> None:
        self.ell = check_int("lie budget ell", ell, low=0)
        self.name = f"index-order(ell={self.ell})"

    def reset(self, collection) -> None:
        super().reset(collection)
        self.history: list[tuple[Point, int]] = []
        self.c = 0
        self.inc_c = 0
        self._last: Point | None = None

    def _contradictions(self, i: int) -> int:
        col = self.collection
        return sum(int(r != (0 if col.contains(i, w) else 1)) for w, r in self.history)

    def _choose(self) -> Point:
        w = self.least_fresh(self.c)
        self._last = w
        return w

    def observe(self, bit: int) -> None:
        w = self._last
        self.history.append((w, int(bit)))
        self.inc_c += int(int(bit) != (0 if self.collection.contains(self.c, w) else 1))
        while self.inc_c > self.ell:
            self.c += 1
            n = self.collection.n_langs
            if n is not None and self.c >= n:
                raise RuntimeError("index-order generator: every language of the finite list is eliminated")
            self.inc_c = self._contradictions(self.c)


class CopyExampleGen(BaseGenerator):
    """Fresh copies of the type of the first example, forever (feedback unused). On a clean stream
    ``x_1 in K``, so every output is a fresh element of ``K``: no mistake at all."""

    uses_feedback = False
    name = "copy-first-example"

    def reset(self, collection) -> None:
        super().reset(collection)
        self._type: int | None = None

    def step(self, x: Point) -> Point:
        if self._type is None:
            self._type = int(x[0])
        return super().step(x)

    def _choose(self) -> Point:
        return self.fresh_copy(self._type)


class _NoFeedback(BaseGenerator):
    uses_feedback = False

    def reset(self, collection: TypeFamily) -> None:
        super().reset(collection)
        self.count = [0] * collection.n_types
        self.support = [int(f) for f in np.flatnonzero(collection.inc.any(axis=0))]
        self.new_type = False

    def step(self, x: Point) -> Point:
        f = x[0]
        if 0 <= f < len(self.count):
            self.new_type = self.count[f] == 0
            self.count[f] += 1
        return super().step(x)

    def _most_frequent(self) -> int:
        """The support type seen most often in the stream (ties: lowest type)."""
        c = self.count
        return max(self.support, key=lambda f: (c[f], -f))


class MostFrequentGen(_NoFeedback):
    """No feedback: a fresh copy of the most frequent stream type in the collection's support."""

    name = "most-frequent"

    def _choose(self) -> Point:
        return self.fresh_copy(self._most_frequent())


class RoundRobinGen(_NoFeedback):
    """No feedback: cycle through the support types."""

    name = "round-robin"

    def reset(self, collection: TypeFamily) -> None:
        super().reset(collection)
        self.t = 0

    def _choose(self) -> Point:
        f = self.support[self.t % len(self.support)]
        self.t += 1
        return self.fresh_copy(f)


class KMIntersectionGen(_NoFeedback):
    """No feedback, Kleinberg-Mullainathan style: a type common to all languages consistent with
    the stream (``A_i`` holding every type seen), else the most frequent type."""

    name = "KM-intersection"

    def reset(self, collection: TypeFamily) -> None:
        super().reset(collection)
        self.common: int | None = None

    def _choose(self) -> Point:
        if self.new_type:  # the consistent languages change only when a new type shows up
            seen = np.array(self.count) > 0
            inc = self.collection.inc
            consistent = ~(seen[None, :] & ~inc).any(axis=1)
            common = inc[consistent].all(axis=0) if consistent.any() else np.zeros(inc.shape[1], bool)
            self.common = int(np.argmax(common)) if common.any() else None
        if self.common is not None:
            return self.fresh_copy(self.common)
        return self.fresh_copy(self._most_frequent())


def game_frequencies(inc: np.ndarray, max_denominator: int = 10_000) -> tuple[Fraction, ...]:
    """Output frequencies ``p`` maximizing ``min_i p(A_i)`` over the simplex (the no-feedback game).

    Solves ``max v`` s.t. ``p(A_i) >= v``, ``sum p = 1``, ``p >= 0`` with HiGHS and rounds ``p`` to
    fractions with denominator at most ``max_denominator``; negative roundings are clipped and the
    vector renormalized, so the result is an exact probability vector. Optimality is not asserted
    here: the claims measure the generator that uses it.
    """
    inc = check_inc(inc)
    m, n = inc.shape
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_ub = np.column_stack([-inc.astype(float), np.ones(m)])
    A_eq = np.concatenate([np.ones(n), [0.0]])[None, :]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    if res.status != 0:  # pragma: no cover - the game LP is always feasible and bounded
        raise ValueError(f"game LP failed: {res.message}")
    p = [max(Fraction(float(v)).limit_denominator(max_denominator), Fraction(0)) for v in res.x[:n]]
    total = sum(p, Fraction(0))
    return tuple(v / total for v in p)


class LPFrequencyGen(_NoFeedback):
    """No feedback: fresh copies of the types at the frequencies ``p`` of :func:`game_frequencies`.

    Largest-deficit rule: in round ``t`` output the type maximizing ``t p_f - c_f`` (``c_f`` its count
    so far; ties to the lowest type), in exact integer arithmetic. The stream is ignored.
    """

    name = "LP-frequency"

    def reset(self, collection: TypeFamily) -> None:
        super().reset(collection)
        self.weights = game_frequencies(collection.inc)
        self.period = math.lcm(*(q.denominator for q in self.weights))
        self.a = [int(q * self.period) for q in self.weights]
        self.out = [0] * collection.n_types
        self.t = 0

    def _choose(self) -> Point:
        self.t += 1
        t, D = self.t, self.period
        f = max((f for f in range(len(self.a)) if self.a[f] > 0), key=lambda f: (t * self.a[f] - D * self.out[f], -f))
        self.out[f] += 1
        return self.fresh_copy(f)


def feedback_zoo(rng: np.random.Generator) -> list[BaseGenerator]:
    """The feedback generators compared in C2 (the random order is drawn from ``rng``)."""
    return [HittingSetGen(), GreedyGen(), IndexOrderGen(0), RandomOrderGen(rng)]


def no_feedback_zoo() -> list[BaseGenerator]:
    """The no-feedback generators of C3."""
    return [MostFrequentGen(), RoundRobinGen(), KMIntersectionGen()]
