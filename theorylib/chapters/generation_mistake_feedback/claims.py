"""The claims of chapter 'generation-mistake-feedback': one function per claim, one shape for all.

``claim_x(name, measured data..., *, theory=theory) -> Claim``: the name first, then the measured
data (from :mod:`.model`), then the wrong-theory hook ``theory=``, from which every prediction is
read. Every claim is exact: a count of instances on which measured and predicted integers agree,
a count of violations, or an extreme slack of integer mistake counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np

from theorylib.core.claims import Claim, check_exact, check_lower, check_upper

from . import theory as _theory
from . import tolerances
from .model import ExactNoFeedbackResult, Instance, LieResult, NoFeedbackResult, ZooResult
from .model_liegame import LieGameResult
from .model_query import QueryResult

Theory = ModuleType | SimpleNamespace

# ----------------------------------------------------------------------------------------------
# C1: the minimax value, unions, closed forms
# ----------------------------------------------------------------------------------------------


def claim_minimax(name: str, instances: Sequence[Instance], *, theory: Theory = _theory) -> Claim:
    """The number of families whose game value (DP) equals ``theory.minimax_value``, against their number."""
    hits = sum(int(inst.dp == theory.minimax_value(inst.inc)) for inst in instances)
    return check_exact(name, hits, len(instances),
                       "integer identity on every instance: two independent exact code paths")


def claim_union(name: str, pairs: Sequence[tuple[int, int, int]], *, theory: Theory = _theory) -> Claim:
    """The number of disjoint-support pairs ``(M1, M2, M_union)`` with ``M_union = theory.union_value(M1, M2)``."""
    hits = sum(int(u == theory.union_value(a, b)) for a, b, u in pairs)
    return check_exact(name, hits, len(pairs), "integer identity (the union corollary, equality case) on every pair")


def claim_closed_forms(name: str, records: Sequence[tuple[str, int, int | None, int]], *,
                       theory: Theory = _theory) -> Claim:
    """The number of structured families whose exhaustive ``tau`` equals ``theory.tau_closed_form``."""
    hits = sum(int(tau == theory.tau_closed_form(kind, n, k)) for kind, n, k, tau in records)
    return check_exact(name, hits, len(records), "integer identity, exhaustive hitting-set search on every family")


# ----------------------------------------------------------------------------------------------
# C2: generators against every target and the adaptive adversary; countable collections
# ----------------------------------------------------------------------------------------------


def claim_hitting_set(name: str, instances: Sequence[Instance], zoo: ZooResult, *,
                      theory: Theory = _theory) -> Claim:
    """The number of families on which the hitting-set generator's worst case is ``theory.minimax_value``."""
    col = zoo.names.index("hitting-set")
    hits = sum(int(zoo.worst[i, col] == theory.minimax_value(inst.inc)) for i, inst in enumerate(instances))
    return check_exact(name, hits, len(instances), "exact mistake counts of a deterministic simulation, every instance")


def claim_no_generator_beats(name: str, instances: Sequence[Instance], zoo: ZooResult, *,
                             theory: Theory = _theory) -> Claim:
    """min over (instance, generator) of [mistakes forced - ``theory.minimax_value``]; must be >= 0.

    Both the worst target found by simulation and the adaptive adversary (whose transcript is
    replayed against a surviving target) count; a failed replay fails the claim."""
    forced = np.minimum(zoo.worst, zoo.adversary) if zoo.replay_ok else np.full_like(zoo.worst, -10**6)
    slack = min(int(forced[i].min()) - theory.minimax_value(inst.inc) for i, inst in enumerate(instances))
    return check_lower(name, slack, 0, "proved lower bound, exact integer counts (adversary replay verified)")


def claim_greedy(name: str, instances: Sequence[Instance], zoo: ZooResult, *, theory: Theory = _theory) -> Claim:
    """The number of families on which the greedy generator's worst case is ``theory.greedy_worst``.

    Details: ``n_worse``, the families on which greedy is worse than ``theory.minimax_value``."""
    col = zoo.names.index("greedy")
    worst = zoo.worst[:, col]
    hits = sum(int(worst[i] == theory.greedy_worst(inst.inc)) for i, inst in enumerate(instances))
    n_worse = sum(int(worst[i] > theory.minimax_value(inst.inc)) for i, inst in enumerate(instances))
    return check_exact(name, hits, len(instances),
                       "exact mistake counts; rejects 'greedy is minimax-optimal' on the trap").with_details(
                           n_worse=n_worse)


def claim_countable(name: str, M: Sequence[int], *, theory: Theory = _theory) -> Claim:
    """max over ``i* = 1..len(M)`` of ``|M(i*) - theory.countable_mistakes(i*)|``; must be 0."""
    dev = max(abs(int(v) - theory.countable_mistakes(i + 1)) for i, v in enumerate(M))
    return check_exact(name, dev, 0, "exact mistake counts; the countable-collection bound is attained for every i*")


# ----------------------------------------------------------------------------------------------
# C3: no feedback against feedback
# ----------------------------------------------------------------------------------------------


def claim_sharp_rate(name: str, res: NoFeedbackResult, *, theory: Theory = _theory) -> Claim:
    """Violations of the two-sided sharp-rate statement at every (instance, T); must be 0.

    With ``r = theory.no_feedback_rate(inc)``: every generator (the zoo and the LP-frequency
    generator) has ``M(T) >= ceil(T r)``, and the LP-frequency generator has
    ``M(T) <= floor(T r + beta)``, ``beta`` the proved excess constant of the frequencies it used
    (:func:`.tolerances.excess_constant`). Details: ``max_gap``, the largest ``M_LP(T) - ceil(T r)``,
    ``max_room``, the largest ``floor(T r + beta) - ceil(T r)``, and ``zoo_slack``, the least margin of
    a zoo generator above ``ceil(T r)``."""
    bad, gaps, rooms, slacks = 0, [], [], []
    for inst, M, M_lp, w in zip(res.instances, res.nofb, res.lp, res.lp_weights, strict=True):
        r = theory.no_feedback_rate(inst.inc)
        beta = tolerances.excess_constant(inst.inc, w)
        for j, T in enumerate(res.Ts):
            lo, hi = math.ceil(int(T) * r), tolerances.upper_end(r, int(T), beta)
            bad += int(np.sum(M[:, j] < lo)) + int(not lo <= M_lp[j] <= hi)
            gaps.append(int(M_lp[j]) - lo)
            rooms.append(hi - lo)
            slacks.append(int(M[:, j].min()) - lo)
    return check_exact(name, bad, 0, "exact integers: proved lower bound for every generator, proved upper "
                       "bound (excess constant beta) for the LP-frequency generator, every (instance, T)"
                       ).with_details(max_gap=max(gaps), min_gap=min(gaps), max_room=max(rooms),
                                      zoo_slack=min(slacks))


def claim_no_feedback_minimax(name: str, res: ExactNoFeedbackResult, *, theory: Theory = _theory) -> Claim:
    """Violations of ``ceil(T r) <= V(T) <= floor(T r + beta*)`` at every (family, T) with ``T`` not a
    multiple of ``theory.exact_period(inc)``; must be 0.

    ``V(T)`` is the exact minimax over all no-feedback generators (exhaustive search), ``r =
    theory.no_feedback_rate(inc)`` and ``beta*`` the excess constant of ``theory.lp_frequencies(inc)``
    (the LP-frequency generator with those frequencies is one of the generators ``V`` minimizes
    over). The multiples of the period are left to :func:`claim_no_feedback_exact`, whose equality is
    stronger there, so that no point is checked twice. Details: ``n_points``, ``max_gap`` (the
    largest ``V - ceil(T r)``) and ``n_positive`` (the points with ``V > ceil(T r)``)."""
    bad, points, gaps = 0, 0, []
    for inc, V in zip(res.incs, res.V, strict=True):
        r, D = theory.no_feedback_rate(inc), theory.exact_period(inc)
        beta = tolerances.excess_constant(inc, theory.lp_frequencies(inc))
        for j, v in enumerate(V):
            if (j + 1) % D == 0:
                continue
            lo, hi = math.ceil((j + 1) * r), tolerances.upper_end(r, j + 1, beta)
            bad += int(not lo <= v <= hi)
            gaps.append(int(v) - lo)
            points += 1
    return check_exact(name, bad, 0, "exact integers: exhaustive minimax over every generator, every T off the "
                       "period").with_details(n_points=points, max_gap=max(gaps), n_positive=sum(g > 0 for g in gaps))


def claim_no_feedback_exact(name: str, res: ExactNoFeedbackResult, *, theory: Theory = _theory) -> Claim:
    """The number of (family, ``T``) with ``T`` a multiple of ``theory.exact_period(inc)`` at which the exact
    minimax ``V(T)`` equals ``T theory.no_feedback_rate(inc)``, against their number."""
    hits = total = 0
    for inc, V in zip(res.incs, res.V, strict=True):
        r, D = theory.no_feedback_rate(inc), theory.exact_period(inc)
        for T in range(D, len(V) + 1, D):
            total += 1
            hits += int(V[T - 1] == T * r)
    return check_exact(name, hits, total, "exact integers: V(T) = T (1 - 1/tau*) wherever T p* is integral")


# ----------------------------------------------------------------------------------------------
# C4: lies in the feedback
# ----------------------------------------------------------------------------------------------


def _count_pairs(name: str, measured: np.ndarray, res: LieResult, predict, why: str, ell_min: int = 0) -> Claim:
    hits = total = 0
    for a, ell in enumerate(res.ells):
        if ell < ell_min:
            continue
        for b, i_star in enumerate(res.i_stars):
            total += 1
            hits += int(measured[a, b] == predict(a, b, i_star, ell))
    return check_exact(name, hits, total, why)


def claim_lies_constructed(name: str, res: LieResult, *, theory: Theory = _theory) -> Claim:
    """The number of ``(ell, i*)`` where the constructed adversary's count equals ``theory.lie_bound``."""
    return _count_pairs(name, res.constructed, res, lambda a, b, i, e: theory.lie_bound(i, e),
                        "exact mistake counts for every (ell, i*): the bound is attained")


def claim_lies_truthful(name: str, res: LieResult, *, theory: Theory = _theory) -> Claim:
    """The number of ``(ell, i*)`` where the truthful adversary's count equals ``theory.truthful_value``."""
    return _count_pairs(name, res.truthful, res, lambda a, b, i, e: theory.truthful_value(i, e),
                        "exact mistake counts for every (ell, i*)")


def claim_lies_early(name: str, res: LieResult, *, theory: Theory = _theory) -> Claim:
    """The number of ``(ell, i*)`` where the early-lying adversary's count equals ``theory.early_lie_value``."""
    return _count_pairs(name, res.early, res, lambda a, b, i, e: theory.early_lie_value(i, e),
                        "exact counts; rejects 'lying early is the worst case'")


def claim_lies_random(name: str, res: LieResult, *, theory: Theory = _theory) -> Claim:
    """max over ``(ell, i*)`` and the random schedules of ``M - theory.lie_bound(i*, ell)``; must be <= 0."""
    worst = max(int(res.random_max[a, b]) - theory.lie_bound(i_star, ell)
                for a, ell in enumerate(res.ells) for b, i_star in enumerate(res.i_stars))
    return check_upper(name, worst, 0, "proved upper bound, exact integer counts")


def claim_naive(name: str, res: LieResult, *, theory: Theory = _theory) -> Claim:
    """The number of ``(ell >= 1, i*)`` where the naive generator's ``M(T)`` equals ``theory.naive_mistakes``."""
    return _count_pairs(name, res.naive, res,
                        lambda a, b, i, e: theory.naive_mistakes(int(res.naive_horizon[a, b]), i, e),
                        "exact counts: linear growth, exceeds the bound for every (ell >= 1, i*)", ell_min=1)


def _count_table(name: str, table: np.ndarray, ells: Sequence[int], predict, why: str) -> Claim:
    """The number of entries ``table[a, i* - 1]`` equal to ``predict(i*, ell)``, against their number."""
    hits = sum(int(table[a, b] == predict(b + 1, ell)) for a, ell in enumerate(ells) for b in range(table.shape[1]))
    return check_exact(name, hits, table.size, why)


def claim_lies_exhaustive(name: str, res: LieGameResult, *, theory: Theory = _theory) -> Claim:
    """The number of ``(ell, i*)`` where ``G_idx^ell``'s worst case over every adversary equals ``theory.lie_bound``."""
    return _count_table(name, res.index_worst, res.ells, theory.lie_bound,
                        "exact worst case over every adversary (game-tree maximum), every (ell, i*)")


def claim_least_lies(name: str, res: LieGameResult, *, theory: Theory = _theory) -> Claim:
    """The number of ``(ell, i* <= 3)`` where the least worst case over all generators (exhaustive search)
    equals ``theory.least_lie_value``."""
    return _count_table(name, res.least, res.ells, theory.least_lie_value,
                        "exact game values from the exhaustive search, every (ell, i* <= 3)")


def claim_probe(name: str, res: LieGameResult, *, theory: Theory = _theory) -> Claim:
    """The number of ``(ell, i* <= 3)`` where the probing generator's worst case over every adversary equals
    ``theory.least_lie_value``."""
    return _count_table(name, res.probe, res.ells, theory.least_lie_value,
                        "exact worst case over every adversary (game-tree maximum), every (ell, i* <= 3)")


# ----------------------------------------------------------------------------------------------
# C5: the query model with set-based generators
# ----------------------------------------------------------------------------------------------


def claim_query_mistakes(name: str, res: QueryResult, *, theory: Theory = _theory) -> Claim:
    """The number of (q, family) pairs whose searched value equals ``theory.query_mistakes``, against their number.

    The query cost (part (i) of the theorem) is not a claim: its recursion collapses to the mistake game's, so
    its search value is C1's measured value again (a unit test checks the collapse)."""
    if not len(res.incs) or not len(res.qs):
        raise ValueError("C5 needs at least one searched family and one q (every family was too large?)")
    hits = sum(int(res.mistakes[a, i] == theory.query_mistakes(inc, q))
               for a, q in enumerate(res.qs) for i, inc in enumerate(res.incs))
    return check_exact(name, hits, len(res.qs) * len(res.incs),
                       "integer identity for every q and family: exhaustive game-tree search against the closed form")
