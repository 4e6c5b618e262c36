"""The game of chapter 'generation-mistake-feedback' (part of the model): streams, lies, the simulator.

In round ``t`` the adversary reveals ``x_t`` (``S_t = {x_1..x_t}``), the generator outputs ``w_t``
and then sees the mistake bit ``b_t = 1[w_t not in K \\ S_t]``. Under *arbitrary contamination*
the stream may hold any strings, as long as it enumerates ``K``. The simulator alone computes the
mistake bit from the target ``K``; generators receive only the stream, their own outputs and the
(possibly falsified) reported bits. Never imports ``theory``: a mutation of the theory cannot move
a measurement. Random functions take an explicit ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from theorylib.core.validation import check_int, check_positive_int

from .model_generators import BaseGenerator, Point, TypeFamily

# ----------------------------------------------------------------------------------------------
# Streams
# ----------------------------------------------------------------------------------------------


def _horizon(T: object) -> int:
    return check_positive_int("horizon T", T)


def uninformative_stream(n_types: int, T: int) -> np.ndarray:
    """Round-robin enumeration of ``U = F x N``: ``x_t = (t mod n, t div n)``, shape ``(T, 2)``.

    It enumerates every language of every type family on ``F``: maximal contamination, the same
    stream for every target, so it carries no information.
    """
    n_types, T = check_positive_int("n_types", n_types), _horizon(T)
    t = np.arange(T, dtype=np.int64)
    return np.stack([t % n_types, t // n_types], axis=1)


def cantor_stream(T: int) -> np.ndarray:
    """The Cantor (diagonal) enumeration of ``N x N``, shape ``(T, 2)``: every string eventually."""
    T = _horizon(T)
    t = np.arange(T, dtype=np.int64)
    w = ((np.sqrt(8 * t + 1) - 1) // 2).astype(np.int64)
    w -= (w * (w + 1) // 2 > t)  # exact integer corrections of the float square root
    w += ((w + 1) * (w + 2) // 2 <= t)
    y = t - w * (w + 1) // 2
    return np.stack([w - y, y], axis=1)


# ----------------------------------------------------------------------------------------------
# Lies
# ----------------------------------------------------------------------------------------------

LiePolicy = Callable[[int, Point, int, int], bool]
"""``policy(t, w_t, true_bit, lies_so_far) -> flip?``; the simulator applies it."""


def _lie_budget(ell: object) -> int:
    return check_int("lie budget ell", ell, low=0)


def scheduled_lies(rounds: Iterable[int]) -> LiePolicy:
    """Flip the reported bit exactly at the given rounds (0-based)."""
    rs = frozenset(int(r) for r in rounds)
    return lambda t, w, b, used: t in rs


def random_lie_schedule(rng: np.random.Generator, window: int, ell: int) -> LiePolicy:
    """At most ``ell`` lies at uniformly random distinct rounds of ``0..window-1`` (either kind of lie:
    a flipped bit is a false flag on a correct output or a false "correct" on a mistake)."""
    window, ell = _horizon(window), _lie_budget(ell)
    k = int(rng.integers(0, ell + 1))
    return scheduled_lies(rng.choice(window, size=min(k, window), replace=False))


def worst_lie_schedule(i_star: int, ell: int) -> LiePolicy:
    """For a disjoint collection with target position ``i*`` (1-based): report ``ell`` false
    "correct" bits on the mistakes made at candidate ``i* - 1`` (type ``i* - 2``), truthful
    otherwise (the adversary of the lie theorem's attainment proof)."""
    i_star, ell = check_positive_int("target position i*", i_star), _lie_budget(ell)
    return lambda t, w, b, used: bool(b == 1 and w[0] == i_star - 2 and used < ell)


def early_lie_schedule(ell: int) -> LiePolicy:
    """``ell`` false "correct" bits on the mistakes at candidate 1 (type 0): lying early."""
    ell = _lie_budget(ell)
    return lambda t, w, b, used: bool(b == 1 and w[0] == 0 and used < ell)


def false_flag_once() -> LiePolicy:
    """One lie: a false flag on the first correct output (breaks the ``ell = 0`` generator)."""
    return lambda t, w, b, used: bool(b == 0 and used < 1)


# ----------------------------------------------------------------------------------------------
# The simulator and the adaptive adversary
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimResult:
    """A run: cumulative true mistakes ``M(t)`` (shape ``(T,)``), outputs, true and reported bits."""

    mistakes: np.ndarray
    outputs: np.ndarray
    true_bits: np.ndarray
    reported: np.ndarray
    n_lies: int

    @property
    def total(self) -> int:
        return int(self.mistakes[-1])


def simulate(collection, gen: BaseGenerator, target: int, T: int, stream: np.ndarray,
             lies: LiePolicy | None = None) -> SimResult:
    """Run ``gen`` for ``T`` rounds against target ``K = L_target`` on ``stream``.

    The simulator alone computes ``b_t = 1[w_t not in K \\ S_t]`` from ``K``; a lie policy may flip
    the *reported* bit, which is what the generator observes; mistakes count the *true* bits.
    A repeated output is a ``ValueError`` (generators must be fresh).
    """
    T = _horizon(T)
    n = collection.n_langs
    if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or target < 0 \
            or (n is not None and target >= n):
        raise ValueError(f"target index {target!r} out of range for a collection of {n} languages")
    stream = np.asarray(stream)
    if stream.ndim != 2 or stream.shape[1] != 2 or stream.shape[0] < T:
        raise ValueError(f"stream must have shape (>= T, 2) with T = {T}, got {stream.shape}")
    gen.reset(collection)
    seen: set[Point] = set()
    outs: set[Point] = set()
    true_bits: list[int] = []
    reported: list[int] = []
    outputs: list[Point] = []
    used = 0
    contains, k, feedback = collection.contains, int(target), gen.uses_feedback
    for t, x in enumerate(map(tuple, stream[:T].tolist())):
        seen.add(x)
        w = gen.step(x)
        if w in outs:
            raise ValueError(f"generator {gen.name!r} repeated output {w} at round {t}")
        outs.add(w)
        b = int(w in seen or not contains(k, w))
        r = b
        if lies is not None and lies(t, w, b, used):
            r = 1 - b
            used += 1
        true_bits.append(b)
        reported.append(r)
        outputs.append(w)
        if feedback:
            gen.observe(r)
    bits, rep = np.array(true_bits, dtype=np.int64), np.array(reported, dtype=np.int64)
    return SimResult(np.cumsum(bits), np.array(outputs, dtype=np.int64).reshape(T, 2), bits, rep, used)


def simulate_no_feedback(family: TypeFamily, gen: BaseGenerator, T: int, stream: np.ndarray) -> np.ndarray:
    """Cumulative mistakes of a no-feedback generator against *every* target, shape ``(m, T)``.

    The generator never observes a bit, so on a fixed stream its outputs do not depend on ``K``:
    it is run once and the simulator scores the outputs against each ``K``.
    """
    if gen.uses_feedback:
        raise ValueError("simulate_no_feedback needs a generator that ignores feedback")
    T = _horizon(T)
    stream = np.asarray(stream)
    gen.reset(family)
    seen: set[Point] = set()
    outs = np.zeros((T, 2), dtype=np.int64)
    in_seen = np.zeros(T, dtype=bool)
    for t in range(T):
        x = (int(stream[t, 0]), int(stream[t, 1]))
        seen.add(x)
        w = gen.step(x)
        outs[t] = w
        in_seen[t] = (int(w[0]), int(w[1])) in seen
    if len({(int(a), int(b)) for a, b in outs}) != T:
        raise ValueError(f"generator {gen.name!r} repeated an output")
    bits = ~family.inc[:, outs[:, 0]] | in_seen[None, :]
    return np.cumsum(bits, axis=1)


def always_mistake_adversary(family: TypeFamily, gen: BaseGenerator, T: int,
                             stream: np.ndarray | None = None) -> tuple[int, np.ndarray]:
    """The adaptive lower-bound adversary of the minimax theorem on the uninformative stream.

    It answers "mistake" whenever some surviving language avoids the output's type (and then keeps
    only those), "correct" otherwise. Returns (mistakes, surviving language indices); any survivor
    is a target consistent with every answer, so replaying ``gen`` against it reproduces the run.
    """
    T = _horizon(T)
    if stream is None:
        stream = uninformative_stream(family.n_types, T)
    gen.reset(family)
    alive = np.ones(family.n_langs, dtype=bool)
    seen: set[Point] = set()
    mistakes = 0
    for t in range(T):
        x = (int(stream[t, 0]), int(stream[t, 1]))
        seen.add(x)
        w = gen.step(x)
        f = int(w[0])
        avoid = alive & ~family.inc[:, f] if 0 <= f < family.n_types else alive.copy()
        if (int(w[0]), int(w[1])) in seen:
            bit = 1
        elif avoid.any():
            bit, alive = 1, avoid
        else:
            bit = 0
        mistakes += bit
        if gen.uses_feedback:
            gen.observe(bit)
    survivors = np.flatnonzero(alive)
    assert survivors.size > 0, "the adversary must keep a consistent target"
    return mistakes, survivors


def worst_case_mistakes(family: TypeFamily, gen: BaseGenerator, T: int) -> np.ndarray:
    """``M_K(t)`` for every target ``K`` on the uninformative stream, shape ``(m, T)``."""
    stream = uninformative_stream(family.n_types, T)
    return np.stack([simulate(family, gen, k, T, stream).mistakes for k in range(family.n_langs)])
