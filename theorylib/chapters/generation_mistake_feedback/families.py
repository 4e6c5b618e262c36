"""Type families of chapter 'generation-mistake-feedback': the combinatorial objects both sides speak about.

A *type family* ``(A_1..A_m)`` over the types ``F = {0..n-1}`` defines the collection of languages
``L_A = A x N``; it is stored as a boolean incidence matrix ``inc`` of shape ``(m, n)``,
``inc[i, f] = [f in A_i]``. This module holds the deterministic constructors of the structured
families, the input check, and the exhaustive minimum hitting-set (transversal) search. It is pure
combinatorics, with no random numbers and no game: the model uses it to build families and to give
the hitting-set generator its optimal transversal, the theory to define ``tau``. It imports neither
the model nor the theory.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence

import numpy as np

from theorylib.core.validation import check_int, check_positive_int

MAX_TYPES_EXHAUSTIVE = 20

# The structured families: (kind, n, k). Those with at most 16 languages enter the game-value checks;
# the larger ones only the check of the closed forms of tau.
DP_STRUCTURED: tuple[tuple[str, int, int | None], ...] = tuple(
    [("disjoint", n, None) for n in range(2, 15)]
    + [("k-subsets", n, k) for n, k in ((4, 2), (5, 2), (5, 3), (6, 2), (6, 5))]
    + [("intervals", n, k) for k in (2, 3, 4) for n in range(k + 1, 18) if n - k + 1 <= 16]
    + [("greedy-trap", 3, None)]
)
LARGE_STRUCTURED: tuple[tuple[str, int, int | None], ...] = tuple(
    [("disjoint", n, None) for n in (16, 20)]
    + [("k-subsets", n, k) for n, k in ((8, 3), (10, 4), (12, 6), (14, 2))]
    + [("intervals", 20, k) for k in (1, 2, 3, 5)]
)
# The k-uniform, Delta-regular families (every language has k types, every type lies in Delta
# languages) on at most 6 types without a common type: the exact no-feedback minimax of C3b-c.
REGULAR_SMALL: tuple[tuple[str, int, int | None], ...] = tuple(
    [("disjoint", n, None) for n in range(2, 7)]
    + [("k-subsets", n, k) for n in range(4, 7) for k in range(2, n)]
    + [("cyclic-intervals", n, k) for n, k in ((5, 2), (5, 3), (6, 2), (6, 4))]
)


def incidence(families: Sequence[Iterable[int]], n_types: int) -> np.ndarray:
    """The boolean incidence matrix ``inc[i, f] = [f in A_i]`` of a family of type sets.

    Raises ``ValueError`` for an empty family list, an empty set, or a type outside ``0..n-1``.
    """
    n_types = check_positive_int("n_types", n_types)
    rows = [sorted(set(int(f) for f in A)) for A in families]
    if not rows:
        raise ValueError("a family needs at least one language")
    inc = np.zeros((len(rows), n_types), dtype=bool)
    for i, A in enumerate(rows):
        if not A:
            raise ValueError(f"language {i} is empty: every A_i must be a nonempty set of types")
        if A[0] < 0 or A[-1] >= n_types:
            raise ValueError(f"language {i} has a type outside 0..{n_types - 1}: {A}")
        inc[i, A] = True
    return inc


def check_inc(inc: np.ndarray) -> np.ndarray:
    """Validate an incidence matrix: 2-D, boolean, no empty language row; returns it."""
    inc = np.asarray(inc)
    if inc.ndim != 2:
        raise ValueError(f"incidence matrix must be 2-D (languages x types), got shape {inc.shape}")
    if inc.dtype != bool:
        raise ValueError(f"incidence matrix must be boolean, got dtype {inc.dtype}")
    if inc.shape[0] < 1 or inc.shape[1] < 1:
        raise ValueError(f"incidence matrix must be nonempty, got shape {inc.shape}")
    empty = np.flatnonzero(~inc.any(axis=1))
    if empty.size:
        raise ValueError(f"language row {int(empty[0])} is empty: every language needs a type")
    return inc


def max_degree(inc: np.ndarray) -> int:
    """``Delta = max_f #{i : f in A_i}``, the largest number of languages sharing a type; ``Delta = m`` iff
    some type is common to all languages (``tau = 1``)."""
    return int(check_inc(inc).sum(axis=0).max())


def popcount(x: np.ndarray) -> np.ndarray:
    """The number of set bits of each entry of an integer array."""
    x = np.asarray(x).astype(np.int64)
    c = np.zeros_like(x)
    while np.any(x):
        c += x & 1
        x = x >> 1
    return c


@functools.lru_cache(maxsize=4)
def _masks_by_popcount(n: int) -> np.ndarray:
    """All subsets of ``n`` types as bitmasks, sorted by (size, value)."""
    masks = np.arange(1 << n, dtype=np.int64)
    out = masks[np.lexsort((masks, popcount(masks)))]
    out.flags.writeable = False
    return out


def transversal_number(inc: np.ndarray) -> tuple[int, np.ndarray]:
    """Exhaustive minimum hitting set: ``tau = min{|H| : H meets every A_i}`` and one optimal ``H``.

    Scans all subsets of the types by increasing size (ties: smallest bitmask), so the returned
    ``H`` (sorted types) is deterministic. Exhaustive, hence limited to ``n_types <= 20``.
    """
    inc = check_inc(inc)
    m, n = inc.shape
    if n > MAX_TYPES_EXHAUSTIVE:
        raise ValueError(f"exhaustive hitting-set search needs n_types <= {MAX_TYPES_EXHAUSTIVE}, got {n}")
    lang = (inc.astype(np.int64) << np.arange(n, dtype=np.int64)).sum(axis=1)
    masks = _masks_by_popcount(n)
    for start in range(0, masks.size, 1 << 15):
        chunk = masks[start:start + (1 << 15)]
        hit = np.all((chunk[:, None] & lang[None, :]) != 0, axis=1)
        if hit.any():
            h = int(chunk[np.argmax(hit)])
            H = np.array([f for f in range(n) if h >> f & 1], dtype=np.int64)
            return int(H.size), H
    raise AssertionError("the full type set always hits every nonempty language")  # pragma: no cover


def disjoint_family(n: int) -> np.ndarray:
    """``n`` disjoint singletons ``{0}, .., {n-1}``: ``tau = n``."""
    n = check_positive_int("n", n)
    return np.eye(n, dtype=bool)


def k_subsets_family(n: int, k: int) -> np.ndarray:
    """All ``k``-subsets of ``n`` types (lexicographic): ``tau = n - k + 1``."""
    n = check_positive_int("n", n)
    k = check_int("k", k, low=1, high=n)
    return incidence(list(itertools.combinations(range(n), k)), n)


def interval_family(n: int, k: int) -> np.ndarray:
    """Length-``k`` intervals ``{i..i+k-1}`` of a path on ``n`` types: ``tau = ceil((n-k+1)/k)``."""
    n = check_positive_int("n", n)
    k = check_int("k", k, low=1, high=n)
    return incidence([range(i, i + k) for i in range(n - k + 1)], n)


def cyclic_interval_family(n: int, k: int) -> np.ndarray:
    """The ``n`` cyclic intervals ``{i, i+1, .., i+k-1} mod n`` of length ``k < n``: ``k``-uniform, ``k``-regular."""
    n = check_positive_int("n", n)
    k = check_int("k", k, low=1, high=n - 1)
    return incidence([[(i + j) % n for j in range(k)] for i in range(n)], n)


def greedy_trap_family(k: int) -> np.ndarray:
    """The classical greedy set-cover trap, with ``m = 2^(k+1) - 2`` distinct languages.

    Types: ``a = 0``, ``b = 1``, group types ``g_j = 1 + j`` (``j = 1..k``), then one private type
    per language. Group ``j`` holds ``2^j`` languages ``{g_j, a or b, private}`` (half with ``a``,
    half with ``b``). ``{a, b}`` is a transversal (``tau = 2``), but ``g_j`` meets ``2^j`` languages,
    more than the ``2^j - 1`` that ``a`` or ``b`` meet among groups ``<= j``, so max-degree greedy
    takes ``g_k, .., g_1``: ``k`` types. The private types (degree 1) keep languages distinct.
    """
    k = check_int("k", k, low=2)
    m = 2 ** (k + 1) - 2
    rows: list[set[int]] = []
    for j in range(1, k + 1):
        for r in range(2 ** j):
            rows.append({1 + j, 0 if r < 2 ** (j - 1) else 1, 2 + k + len(rows)})
    return incidence(rows, 2 + k + m)


def structured(kind: str, n: int, k: int | None) -> np.ndarray:
    """The structured family ``kind`` ("disjoint", "k-subsets", "intervals", "cyclic-intervals",
    "greedy-trap") at ``(n, k)``."""
    if kind == "disjoint":
        return disjoint_family(n)
    if kind == "k-subsets":
        return k_subsets_family(n, k)
    if kind == "intervals":
        return interval_family(n, k)
    if kind == "cyclic-intervals":
        return cyclic_interval_family(n, k)
    if kind == "greedy-trap":
        return greedy_trap_family(n)
    raise ValueError(f"unknown structured family {kind!r}")


def disjoint_union(inc1: np.ndarray, inc2: np.ndarray) -> np.ndarray:
    """The union of two families on disjoint type supports (types of ``inc2`` shifted)."""
    inc1, inc2 = check_inc(inc1), check_inc(inc2)
    m1, n1 = inc1.shape
    m2, n2 = inc2.shape
    out = np.zeros((m1 + m2, n1 + n2), dtype=bool)
    out[:m1, :n1] = inc1
    out[m1:, n1:] = inc2
    return out
