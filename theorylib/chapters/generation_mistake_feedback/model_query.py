"""The query model of chapter 'generation-mistake-feedback': exact values by exhaustive game-tree search.

On a type family (:mod:`.families`) a membership query "is the string ``w`` in ``K``?" about a
string of type ``f`` reveals ``[f in A_K]``, and a *set-based* generator outputs, each round, a
nonempty finite set of fresh strings, valid iff all their types lie in ``A_K``. The state of every
game below is the set ``V`` of languages consistent with the answers so far (a bitmask over the
``m`` languages), as the stream carries no information under arbitrary contamination. Two games:

* :func:`query_cost`: the least worst-case number of queries after which a set-based generator can
  output a set that is valid for every language still consistent (so that it never outputs an
  invalid set): ``C(V) = 0`` if the languages of ``V`` share a type, otherwise
  ``C(V) = 1 + min_f max(C(V_f^+), C(V_f^-))``.
* :func:`query_mistakes`: ``q`` adaptive queries per round, then an output set, then the mistake bit
  of that set; the least worst-case number of invalid rounds. Every nonempty set of types is an
  allowed output (the search is over set-based generators, not only single strings).

Both are bitmask dynamic programs over the ``2^m`` subsets by popcount layers; they never compute a
transversal. Never imports ``theory``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from theorylib.core.validation import check_int

from .families import check_inc, popcount

MAX_LANGS_QUERY = 16
MAX_SEARCH_CELLS = 1 << 23  # states x output masks: bounds the memory and time of one search
_BIG = np.int32(10**6)


def _holders(inc: np.ndarray) -> np.ndarray:
    """``H[f]``: the bitmask of the languages that contain type ``f``."""
    m = inc.shape[0]
    return (inc.T.astype(np.int64) << np.arange(m, dtype=np.int64)).sum(axis=1)


def output_masks(inc: np.ndarray) -> np.ndarray:
    """The distinct bitmasks ``{i : S subset of A_i}`` over all nonempty type sets ``S`` (sorted).

    An output set of types ``S`` is valid for exactly the languages in its mask; the games need no
    more about ``S`` than this mask, so the search over every set-based output runs over these.
    """
    inc = check_inc(inc)
    m, n = inc.shape
    H = _holders(inc)
    full = (1 << m) - 1
    sub = np.full(1 << n, full, dtype=np.int64)  # sub[S] = languages containing every type of S
    for f in range(n):
        bit = 1 << f
        sub[bit:2 * bit] = sub[:bit] & H[f]
    return np.unique(sub[1:])


def _setup(inc: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    inc = check_inc(inc)
    m = inc.shape[0]
    if m > MAX_LANGS_QUERY:
        raise ValueError(f"the query search needs at most {MAX_LANGS_QUERY} languages, got {m}")
    masks = np.arange(1 << m, dtype=np.int64)
    return m, _holders(inc), masks, popcount(masks)


def search_cells(inc: np.ndarray) -> int:
    """The size ``2^m x |output masks|`` of the search of :func:`query_mistakes` on this family."""
    inc = check_inc(inc)
    return (1 << inc.shape[0]) * int(output_masks(inc).size)


def query_cost(inc: np.ndarray) -> int:
    """Least worst-case number of membership queries before a certainly valid set-based output.

    ``C(V) = 0`` if some type lies in every language of ``V`` (output fresh strings of it: valid
    whatever the target in ``V``); otherwise ``C(V) = 1 + min_f max(C(V_f^+), C(V_f^-))`` over the
    types ``f`` that lie in some but not all languages of ``V`` (a query on another type is answered
    before it is asked). Returns ``C(all)``.
    """
    m, H, masks, pc = _setup(inc)
    C = np.zeros(1 << m, dtype=np.int32)
    for p in range(1, m + 1):
        V = masks[pc == p]
        plus = V[:, None] & H[None, :]
        minus = V[:, None] & ~H[None, :]
        common = np.any(minus == 0, axis=1)
        val = 1 + np.maximum(C[plus], C[minus])
        val = np.where((plus == 0) | (minus == 0), _BIG, val)
        C[V] = np.where(common, 0, val.min(axis=1))
    return int(C[-1])


def query_mistakes(inc: np.ndarray, q: int) -> int:
    """Least worst-case number of invalid rounds with ``q`` queries per round and mistake feedback.

    A round: up to ``q`` adaptive membership queries, then a nonempty output set ``S`` of types
    (fresh strings), then the bit ``[S not subset of A_K]``. With ``A_j(V)`` the value with ``j``
    queries left in the round: ``A_j(V) = 0`` if the languages of ``V`` share a type; otherwise
    ``A_0(V) = min_S max(A_q(V_S^+), 1 + A_q(V_S^-))`` over the output masks of
    :func:`output_masks` (``V_S^+`` the languages of ``V`` containing ``S``, ``V_S^-`` the others;
    a branch the answer cannot take is dropped; an output with ``V_S^- = V`` is an invalid round
    that teaches nothing and is dominated), and ``A_j(V) = min(A_{j-1}(V),
    min_f max(A_{j-1}(V_f^+), A_{j-1}(V_f^-)))`` (ask a splitting query, or none). Returns
    ``A_q(all)``.
    """
    q = check_int("queries per round q", q, low=0)
    m, H, masks, pc = _setup(inc)
    O = output_masks(inc)
    A = np.zeros((q + 1, 1 << m), dtype=np.int32)
    for p in range(1, m + 1):
        V = masks[pc == p]
        common = np.any((V[:, None] & ~H[None, :]) == 0, axis=1)
        plus = V[:, None] & O[None, :]
        minus = V[:, None] & ~O[None, :]
        right = np.where(plus == 0, -_BIG, A[q][plus])
        wrong = np.where(minus == 0, -_BIG, 1 + A[q][minus])
        val = np.maximum(right, wrong)
        val = np.where(minus == V[:, None], _BIG, val)
        A[0][V] = np.where(common, 0, val.min(axis=1))
        qp = V[:, None] & H[None, :]
        qm = V[:, None] & ~H[None, :]
        for j in range(1, q + 1):
            split = np.maximum(A[j - 1][qp], A[j - 1][qm])
            split = np.where((qp == 0) | (qm == 0), _BIG, split)
            best = np.minimum(A[j - 1][V], split.min(axis=1))
            A[j][V] = np.where(common, 0, best)
    return int(A[q][-1])


@dataclass(frozen=True)
class QueryResult:
    """Search values on the families searched: ``cost[i]`` (:func:`query_cost`) and
    ``mistakes[a, i]`` (:func:`query_mistakes` with ``qs[a]`` queries per round); ``n_skipped``
    families were too large for the search (more than ``MAX_SEARCH_CELLS`` cells)."""

    names: tuple[str, ...]
    incs: tuple[np.ndarray, ...]
    qs: tuple[int, ...]
    cost: np.ndarray
    mistakes: np.ndarray
    n_skipped: int


def run_query_games(incs: Sequence[np.ndarray], names: Sequence[str], qs: Sequence[int],
                    max_cells: int = MAX_SEARCH_CELLS) -> QueryResult:
    """Both searches on every family whose search has at most ``max_cells`` cells (the families,
    ``qs`` and the size limit come from the caller; the limit reads the family, never a value)."""
    if len(incs) != len(names):
        raise ValueError(f"need one name per family, got {len(names)} names for {len(incs)} families")
    qs = tuple(check_int("queries per round q", q, low=0) for q in qs)
    max_cells = check_int("max_cells", max_cells, low=1)
    keep = [(name, check_inc(inc)) for inc, name in zip(incs, names, strict=True)
            if (check_inc(inc).shape[0] <= MAX_LANGS_QUERY and search_cells(inc) <= max_cells)]
    cost = np.array([query_cost(inc) for _, inc in keep], dtype=np.int64)
    mistakes = np.array([[query_mistakes(inc, q) for _, inc in keep] for q in qs], dtype=np.int64)
    return QueryResult(tuple(n for n, _ in keep), tuple(i for _, i in keep), qs, cost,
                       mistakes.reshape(len(qs), len(keep)), len(incs) - len(keep))
