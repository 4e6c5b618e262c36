"""The theory of chapter 'generation-mistake-feedback': exact mistake bounds and their wrong rivals.

Setting (Kleinberg & Mullainathan 2024, with the mistake feedback of "Language Generation with
Feedback: Queries and Mistakes", ICML 2026): a type family ``(A_1..A_m)`` over ``n`` types
(:mod:`.families`) defines the languages ``A_i x N``; ``tau`` is its transversal (hitting-set)
number, ``Delta`` its maximum degree. The results encoded here:

* minimax mistakes under arbitrary contamination ``= tau - 1``; union on disjoint supports adds
  the values plus one; closed forms of ``tau`` for the structured families;
* the greedy generator's worst case ``= |greedy cover| - 1``;
* without feedback the sharp rate: ``ceil(T (1 - 1/tau*)) <= V(T)``, ``tau*`` the fractional
  transversal number (LP duality), with equality at every multiple of the period of the optimal
  LP frequencies, and the LP-frequency generator within a constant of it (its constant, the
  tolerance of C3a and C3b, is in :mod:`.tolerances`);
* countable collections: the index-order generator makes ``i* - 1`` mistakes (disjoint languages);
* ``ell`` lies: the bound ``(ell+1)(i*-1) + ell 1[i* >= 2]`` and the values of the truthful and
  early-lying adversaries; the plain generator after one false flag errs in every round but one;
* the query model with set-based generators: ``tau - 1`` queries before a certainly valid output, and
  ``floor((tau - 1) / (q + 1))`` invalid rounds with ``q`` queries per round and mistake feedback.

Pure functions, no random numbers, no simulation. Every claim reads its predictions from this
module; a wrong theory ``wrong_...`` has the signature of the function it replaces and reaches a
claim as ``theory=variant(theory, minimax_value=theory.wrong_minimax_log2_m)``.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog

from theorylib.core.validation import check_int, check_positive_int

from .families import check_inc, max_degree, transversal_number  # noqa: F401  (max_degree: re-exported)

MAX_LP_DENOMINATOR = 10_000  # vertices of 0/1 LPs with at most 16 rows have small denominators

# ----------------------------------------------------------------------------------------------
# Type families: tau, Delta, the greedy cover
# ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _tau_of(shape: tuple[int, int], packed: bytes) -> int:
    inc = np.unpackbits(np.frombuffer(packed, dtype=np.uint8))[: shape[0] * shape[1]].astype(bool)
    return transversal_number(inc.reshape(shape))[0]


def tau(inc: np.ndarray) -> int:
    """The transversal number ``min{|H| : H meets every A_i}`` (exhaustive search, cached per family)."""
    inc = check_inc(inc)
    return _tau_of(inc.shape, np.packbits(inc).tobytes())


def greedy_cover(inc: np.ndarray) -> np.ndarray:
    """Max-degree greedy transversal: repeatedly take the type meeting most un-hit languages.

    Ties go to the lowest type. Returns the chosen types in the order picked.
    """
    inc = check_inc(inc)
    alive = np.ones(inc.shape[0], dtype=bool)
    picked: list[int] = []
    while alive.any():
        deg = inc[alive].sum(axis=0)
        f = int(np.argmax(deg))
        picked.append(f)
        alive &= ~inc[:, f]
    return np.array(picked, dtype=np.int64)


# ----------------------------------------------------------------------------------------------
# C1: the minimax value, unions, closed forms
# ----------------------------------------------------------------------------------------------


def minimax_value(inc: np.ndarray) -> int:
    """Thm (finite type families): the minimax number of mistakes is ``tau - 1``."""
    return tau(inc) - 1


def wrong_minimax_log2_m(inc: np.ndarray) -> int:
    """Wrong theory (the halving / Littlestone analogy): ``ceil(log2 m)``."""
    return math.ceil(math.log2(check_inc(inc).shape[0]))


def wrong_minimax_tau(inc: np.ndarray) -> int:
    """Wrong theory, off by one: ``tau``."""
    return tau(inc)


def wrong_minimax_m_minus_1(inc: np.ndarray) -> int:
    """Wrong theory (one mistake per eliminated language): ``m - 1``."""
    return check_inc(inc).shape[0] - 1


def wrong_minimax_greedy(inc: np.ndarray) -> int:
    """Wrong theory (greedy is optimal): ``|greedy cover| - 1``."""
    return int(greedy_cover(inc).size) - 1


def union_value(a: int, b: int) -> int:
    """Cor. (union, disjoint supports): ``M*(A u A') = M*(A) + M*(A') + 1``."""
    return a + b + 1


def wrong_union_max(a: int, b: int) -> int:
    """Wrong theory: the union is as hard as the harder part."""
    return max(a, b)


def wrong_union_sum(a: int, b: int) -> int:
    """Wrong theory: the values add, without the extra mistake."""
    return a + b


def tau_closed_form(kind: str, n: int, k: int | None) -> int:
    """tau of the structured families: ``n``; ``n - k + 1``; ``ceil((n - k + 1)/k)``; 2."""
    if kind == "disjoint":
        return n
    if kind == "k-subsets":
        return n - k + 1
    if kind == "intervals":
        return -(-(n - k + 1) // k)
    if kind == "greedy-trap":
        return 2
    raise ValueError(f"unknown structured family {kind!r}")


def wrong_tau_closed_form(kind: str, n: int, k: int | None) -> int:
    """Wrong theory: the minimax value mistaken for tau on k-subsets, floor instead of ceil on intervals."""
    if kind == "k-subsets":
        return n - k
    if kind == "intervals":
        return (n - k + 1) // k
    return tau_closed_form(kind, n, k)


# ----------------------------------------------------------------------------------------------
# C2: generators against every target; countable collections
# ----------------------------------------------------------------------------------------------


def greedy_worst(inc: np.ndarray) -> int:
    """The greedy generator's worst case over targets: ``|greedy cover| - 1``."""
    return int(greedy_cover(inc).size) - 1


def wrong_greedy_worst_optimal(inc: np.ndarray) -> int:
    """Wrong theory: greedy is minimax-optimal, its worst case is ``tau - 1``."""
    return minimax_value(inc)


def countable_mistakes(i_star: int) -> int:
    """Thm (countable, disjoint languages): the index-order generator makes exactly ``i* - 1`` mistakes."""
    return check_positive_int("target position i*", i_star) - 1


def wrong_countable_bounded(i_star: int) -> int:
    """Wrong theory: the mistakes are bounded independently of ``i*`` (here by 1)."""
    return min(check_positive_int("target position i*", i_star) - 1, 1)


# ----------------------------------------------------------------------------------------------
# C3: no feedback against feedback
# ----------------------------------------------------------------------------------------------


def _rational(v: float) -> Fraction:
    """The fraction with denominator at most ``MAX_LP_DENOMINATOR`` nearest to an LP solver's float."""
    return Fraction(float(v)).limit_denominator(MAX_LP_DENOMINATOR)


def _check_lp_certificate(inc: np.ndarray, y: list[Fraction], z: list[Fraction]) -> None:
    """Exact optimality certificate: ``y`` a fractional transversal, ``z`` a fractional matching, equal
    weights (weak duality then proves both optimal); raises ``ValueError`` otherwise."""
    primal_ok = all(v >= 0 for v in y) and all(sum(y[f] for f in np.flatnonzero(row)) >= 1 for row in inc)
    dual_ok = all(v >= 0 for v in z) and all(sum(z[i] for i in np.flatnonzero(col)) <= 1 for col in inc.T)
    if not (primal_ok and dual_ok and sum(y) == sum(z)):
        raise ValueError("could not certify the fractional transversal number in exact arithmetic")


@functools.lru_cache(maxsize=1024)
def _fractional_of(shape: tuple[int, int], packed: bytes) -> tuple[Fraction, tuple[Fraction, ...]]:
    inc = np.unpackbits(np.frombuffer(packed, dtype=np.uint8))[: shape[0] * shape[1]].astype(bool)
    inc = inc.reshape(shape)
    m, n = shape
    res = linprog(np.ones(n), A_ub=-inc.astype(float), b_ub=-np.ones(m), bounds=[(0, None)] * n,
                  method="highs")
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise ValueError(f"fractional transversal LP failed: {res.message}")
    y = [_rational(v) for v in res.x]
    z = [_rational(-v) for v in res.ineqlin.marginals]
    _check_lp_certificate(inc, y, z)
    t = sum(y, Fraction(0))
    return t, tuple(v / t for v in y)


def fractional_transversal(inc: np.ndarray) -> Fraction:
    """``tau* = min{sum_f y_f : y >= 0, y(A_i) >= 1 for all i}``, exact.

    By LP duality it equals the fractional matching number ``max{sum_i z_i : z >= 0,
    sum_{i: f in A_i} z_i <= 1 for all f}``. Solved by HiGHS, rounded to fractions, and certified
    exactly: a primal and a dual feasible solution of equal weight (weak duality) prove optimality.
    ``m/Delta <= tau* <= tau``.
    """
    inc = check_inc(inc)
    return _fractional_of(inc.shape, np.packbits(inc).tobytes())[0]


def lp_frequencies(inc: np.ndarray) -> tuple[Fraction, ...]:
    """Optimal output frequencies ``p* = y*/tau*`` (``sum p* = 1``, ``p*(A_i) >= 1/tau*`` for all ``i``)."""
    inc = check_inc(inc)
    return _fractional_of(inc.shape, np.packbits(inc).tobytes())[1]


def exact_period(inc: np.ndarray) -> int:
    """The least ``D`` with ``D p*`` integral: ``V(T) = T (1 - 1/tau*)`` at every multiple ``T`` of ``D``."""
    return math.lcm(*(q.denominator for q in lp_frequencies(inc)))


def no_feedback_rate(inc: np.ndarray) -> Fraction:
    """Prop. (sharp no-feedback rate): ``V(T) = T (1 - 1/tau*) + O(1)``; the rate ``1 - 1/tau*``."""
    return 1 - 1 / fractional_transversal(inc)


def wrong_no_feedback_rate_degree(inc: np.ndarray) -> Fraction:
    """Wrong theory (the averaging bound taken for the value): rate ``(m - Delta)/m``."""
    inc = check_inc(inc)
    return Fraction(inc.shape[0] - max_degree(inc), inc.shape[0])


def wrong_no_feedback_rate_tau(inc: np.ndarray) -> Fraction:
    """Wrong theory (transversal cycling is optimal): rate ``1 - 1/tau``."""
    return 1 - Fraction(1, tau(inc))


def wrong_no_feedback_rate_zero(inc: np.ndarray) -> Fraction:
    """Wrong theory: contaminated examples still allow generation without feedback, rate ``0``."""
    check_inc(inc)
    return Fraction(0)


# ----------------------------------------------------------------------------------------------
# C4: lies in the feedback
# ----------------------------------------------------------------------------------------------


def _lie_args(i_star: int, ell: int) -> tuple[int, int]:
    return check_positive_int("target position i*", i_star), check_int("lie budget ell", ell, low=0)


def lie_bound(i_star: int, ell: int) -> int:
    """Thm (ell lies): ``(ell+1)(i*-1) + ell 1[i* >= 2]``, attained on disjoint collections."""
    i_star, ell = _lie_args(i_star, ell)
    return (ell + 1) * (i_star - 1) + ell * int(i_star >= 2)


def wrong_lie_bound_without_ell(i_star: int, ell: int) -> int:
    """Wrong theory: the bound without its ``+ ell`` term, ``(ell+1)(i*-1)``."""
    i_star, ell = _lie_args(i_star, ell)
    return (ell + 1) * (i_star - 1)


def wrong_lie_bound_without_indicator(i_star: int, ell: int) -> int:
    """Wrong theory: the bound with its indicator dropped, ``(ell+1)(i*-1) + ell`` (``ell`` mistakes at ``i* = 1``)."""
    i_star, ell = _lie_args(i_star, ell)
    return (ell + 1) * (i_star - 1) + ell


def wrong_lie_free(i_star: int, ell: int) -> int:
    """Wrong theory: lies cost nothing, the lie-free value ``i* - 1``."""
    i_star, ell = _lie_args(i_star, ell)
    return i_star - 1


def truthful_value(i_star: int, ell: int) -> int:
    """Mistakes of ``G_idx^ell`` on a disjoint collection, truthful adversary: ``(ell+1)(i*-1)``."""
    i_star, ell = _lie_args(i_star, ell)
    return (ell + 1) * (i_star - 1)


def early_lie_value(i_star: int, ell: int) -> int:
    """Mistakes with all ``ell`` lies on candidate 1 (disjoint): ``2 ell + i* - 1`` for ``i* >= 2``."""
    i_star, ell = _lie_args(i_star, ell)
    return 2 * ell + i_star - 1 if i_star >= 2 else 0


def wrong_early_is_worst(i_star: int, ell: int) -> int:
    """Wrong theory: lying early is the worst case, it attains the bound."""
    return lie_bound(i_star, ell)


def naive_mistakes(T: int, i_star: int, ell: int) -> int:
    """The ``ell = 0`` generator after one false flag on ``K``: every round but one is a mistake, ``T - 1``."""
    return check_positive_int("horizon T", T) - 1


def wrong_naive_bounded(T: int, i_star: int, ell: int) -> int:
    """Wrong theory: the ``ell = 0`` generator is robust, its mistakes stay at the bound of the lie theorem."""
    return min(check_positive_int("horizon T", T) - 1, lie_bound(i_star, ell))


def least_lie_value(i_star: int, ell: int) -> int:
    """Prop (the least worst case over all generators, ``i* <= 3``): ``0``, ``2 ell + 1``, ``2 ell + 2``,
    i.e. ``(ell+1)(i*-1) + ell 1[i* = 2]``: each entry least given the earlier ones."""
    i_star, ell = _lie_args(i_star, ell)
    if i_star > 3:
        raise ValueError(f"the least worst case is derived for i* <= 3 only, got i* = {i_star}")
    return (ell + 1) * (i_star - 1) + ell * int(i_star == 2)


def wrong_least_is_index_order(i_star: int, ell: int) -> int:
    """Wrong theory: ``G_idx^ell`` is optimal over all generators, its bound is the least worst case."""
    return lie_bound(i_star, ell)


# ----------------------------------------------------------------------------------------------
# C5: the query model with set-based generators
# ----------------------------------------------------------------------------------------------


def query_mistakes(inc: np.ndarray, q: int) -> int:
    """Thm (query model): with ``q`` queries per round and mistake feedback, the least worst-case
    number of invalid rounds is ``floor((tau - 1) / (q + 1))``."""
    q = check_int("queries per round q", q, low=0)
    return (tau(inc) - 1) // (q + 1)


def wrong_query_mistakes_ignored(inc: np.ndarray, q: int) -> int:
    """Wrong theory (queries do not help once there is mistake feedback): ``tau - 1``."""
    check_int("queries per round q", q, low=0)
    return tau(inc) - 1


def wrong_query_mistakes_ceil(inc: np.ndarray, q: int) -> int:
    """Wrong theory (the last, incomplete round also costs a mistake): ``ceil((tau - 1) / (q + 1))``."""
    q = check_int("queries per round q", q, low=0)
    return -(-(tau(inc) - 1) // (q + 1))

