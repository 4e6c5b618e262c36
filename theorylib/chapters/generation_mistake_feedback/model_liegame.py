"""Exhaustive game-tree search for generation with at most ``ell`` lies on ``n`` disjoint languages.

The languages are ``L_j = {j} x N`` (``j = 0..n-1``); a fresh output has a *type* ``a``: a language
index, or ``n`` for a string outside every language. The whole history that matters is the state
``((inc_j, m_j))_j``: ``inc_j`` counts the reports that contradict ``L_j`` (a flag on type ``j``, or
"correct" on any other type), ``m_j`` the rounds whose output is not of type ``j`` (the mistakes if
``K = L_j``). A target is *live* while ``inc_j <= ell``; the adversary's report must leave one live.
Once one language is live the game is over (output it forever). Every move with two live languages
raises the ``m`` of a live one, and the searches cut a branch once a live target exceeds its bound, so
they are finite and exact (the raw game tree is not: outputs outside every language can go on forever).

* :func:`lie_game_feasible`: is there a generator with ``M_j <= bounds[j]`` against every adversary
  and every target ``j``? (AND-OR search over the finite tree, memoized.)
* :func:`least_lie_values`: the lexicographically least achievable worst-case vector, found by
  raising each entry from ``0`` until feasible (never from a formula).
* :func:`strategy_worst_case`: the worst case of a fixed generator against every adversary, target
  by target (a max over the tree).

Never imports ``theory``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from theorylib.core.validation import check_int, check_positive_int

State = tuple[tuple[int, int], ...]
Strategy = Callable[[State, int], int]


def _step(state: State, a: int, report: int, ell: int) -> State:
    """The state after output type ``a`` and report ``report`` (1 = flagged as a mistake)."""
    new = []
    for j, (inc, m) in enumerate(state):
        if inc > ell:
            new.append((ell + 1, 0))  # dead: its counters no longer matter
            continue
        m += int(j != a)
        inc += int(j == a) if report == 1 else int(j != a)
        new.append((ell + 1, 0) if inc > ell else (inc, m))
    return tuple(new)


def _live(state: State, ell: int) -> list[int]:
    return [j for j, (inc, _) in enumerate(state) if inc <= ell]


def _start(n: int) -> State:
    return tuple((0, 0) for _ in range(n))


def lie_game_feasible(bounds: Sequence[int], ell: int) -> bool:
    """True iff some generator keeps ``M_j <= bounds[j]`` for every target ``j`` and every adversary with
    at most ``ell`` lies (exhaustive AND-OR search over outputs ``a = 0..n`` and reports ``0, 1``)."""
    b = tuple(check_int("bound", int(x), low=0) for x in bounds)
    ell = check_int("lie budget ell", ell, low=0)
    n = check_positive_int("number of languages", len(b))

    @functools.cache
    def win(state: State) -> bool:
        if len(_live(state, ell)) <= 1:
            return True
        return any(_safe_move(state, a) for a in range(n + 1))

    def _safe_move(state: State, a: int) -> bool:
        for report in (0, 1):
            new = _step(state, a, report, ell)
            live = _live(new, ell)
            if not live:
                continue  # a report that no target allows
            if any(new[j][1] > b[j] for j in live) or not win(new):
                return False
        return True

    return win(_start(n))


def least_lie_values(n: int, ell: int) -> list[int]:
    """The lexicographically least worst-case vector on ``n`` disjoint languages: entry ``k`` is the least
    ``v`` such that the first ``k`` least entries and ``v`` are achievable together on ``k + 1`` languages."""
    n = check_positive_int("number of languages", n)
    values: list[int] = []
    for _ in range(n):
        v = 0
        while not lie_game_feasible([*values, v], ell):
            v += 1
        values.append(v)
    return values


def strategy_worst_case(strategy: Strategy, n: int, ell: int, cap: int = 10_000) -> list[int]:
    """``max`` over every adversary with at most ``ell`` lies of the mistakes of ``strategy`` against each
    target ``j = 0..n-1``. ``strategy(state, ell)`` returns the output type; a generator that would err
    forever against a target gets ``cap``. Exact for strategies that always output a live language and stay
    on the last live one (the generators of this chapter); a strategy that outputs strings outside every
    language can recurse without end, and one that leaves the last live language is mis-scored."""
    n = check_positive_int("number of languages", n)
    ell = check_int("lie budget ell", ell, low=0)

    def worst(j: int) -> int:
        @functools.cache
        def value(state: State) -> int:
            a = strategy(state, ell)
            live = _live(state, ell)
            if live == [j]:
                return state[j][1] if a == j else cap
            best = state[j][1]
            for report in (0, 1):
                new = _step(state, a, report, ell)
                if new[j][0] <= ell and new != state:
                    best = max(best, value(new))
            return best

        return value(_start(n))

    return [worst(j) for j in range(n)]


def index_order(state: State, ell: int) -> int:
    """``G_idx^ell``: the least live language (a string outside every language if none is live)."""
    live = _live(state, ell)
    return live[0] if live else len(state)


def probe_third(state: State, ell: int) -> int:
    """The probing generator on three languages: ``L_0`` while it is live; then ``L_2`` while ``L_1`` and
    ``L_2`` are live and ``m_1 < 2 ell + 1`` (the slack of target ``L_1`` spent on probing ``L_2``); then
    ``L_1`` while it is live; then the least live language."""
    live = _live(state, ell)
    if not live:
        return len(state)
    if live[0] == 0:
        return 0
    if 1 in live and 2 in live and state[1][1] < 2 * ell + 1:
        return 2
    return live[0]


@dataclass
class LieGameResult:
    """The exhaustive searches of C4f-C4h; rows ``ell = 0..ell_max``, columns targets ``i* = 1, 2, ...``."""

    ells: list[int]
    index_worst: np.ndarray  # G_idx^ell against every adversary, i* = 1..N_INDEX
    least: np.ndarray  # the lexicographically least worst case over all generators, i* = 1..3
    probe: np.ndarray  # the probing generator against every adversary, i* = 1..3
    least_more: dict[int, list[int]]  # the least vector on N_MORE languages, for ell <= ELL_MORE


N_INDEX = 8  # languages of the exhaustive check of G_idx^ell (targets i* = 1..8)
N_LEAST = 3  # languages of the search that the claims use
N_MORE = 5  # languages of the search that the text reports as an observation
ELL_MORE = 3  # largest lie budget of that observation (its cost grows fast with ell)


def run_lie_game(ell_max: int) -> LieGameResult:
    """Exhaustive searches for ``ell = 0..ell_max``: ``G_idx^ell``'s worst case on ``N_INDEX`` disjoint
    languages; the least worst-case vector over all generators and the probing generator's worst case
    on three; the least vector on five languages for ``ell <= 3``."""
    ells = list(range(check_int("ell_max", ell_max, low=0) + 1))
    index_worst = np.array([strategy_worst_case(index_order, N_INDEX, e) for e in ells], dtype=np.int64)
    least = np.array([least_lie_values(N_LEAST, e) for e in ells], dtype=np.int64)
    probe = np.array([strategy_worst_case(probe_third, N_LEAST, e) for e in ells], dtype=np.int64)
    more = {e: least_lie_values(N_MORE, e) for e in ells if e <= ELL_MORE}
    return LieGameResult(ells, index_worst, least, probe, more)
