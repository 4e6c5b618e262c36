"""The claims of chapter 'generation-mistake-feedback': one function per claim, one shape for all.

``claim_x(name, measured data..., *, theory=theory) -> Claim``: the name first, then the measured
data (from :mod:`.model`), then the wrong-theory hook ``theory=``, from which every prediction is
read. Every claim is exact: a count of instances on which measured and predicted integers agree,
a count of violations, or an extreme slack of integer mistake counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np

from theorylib.core.claims import Claim, check_exact, check_lower, check_upper

from . import theory as _theory
from . import tolerances
from .model import ExactNoFeedbackResult, Instance, LieResult, NoFeedbackResult, ZooResult

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


def claim_no_feedback_envelope(name: str, res: NoFeedbackResult, *, theory: Theory = _theory) -> Claim:
    """Violations of ``theory.no_feedback_envelope`` at every (instance, generator, T); must be 0.

    Details: ``slack``, the smallest margin of a measured count above the envelope's lower end."""
    bad, slack = 0, None
    for inst, M in zip(res.instances, res.nofb, strict=True):
        for j, T in enumerate(res.Ts):
            lo, hi = theory.no_feedback_envelope(inst.inc, int(T))
            bad += int(np.sum((M[:, j] < lo) | (M[:, j] > hi)))
            s = int(M[:, j].min()) - lo
            slack = s if slack is None else min(slack, s)
    return check_exact(name, bad, 0, "exact integer bound at every (instance, generator, T)").with_details(
        slack=slack)


def claim_no_feedback_slope(name: str, res: NoFeedbackResult, *, theory: Theory = _theory) -> Claim:
    """max over (instance, generator) of ``|slope - theory.no_feedback_slope()| / theory.slope_half_width``.

    Must be <= 1. The half-width is the claim's tolerance (:func:`.tolerances.slope_half_width`, the
    proved slope envelope). Details: the fitted ``slopes`` and envelope half-widths ``half``,
    flattened over (instance, generator)."""
    slopes, half = [], []
    for inst, s in zip(res.instances, res.slopes, strict=True):
        slopes.extend(float(v) for v in s)
        half.extend([tolerances.slope_half_width(res.Ts.tolist(), inst.inc)] * len(s))
    slopes_a, half_a = np.array(slopes), np.array(half)
    worst = float(np.max(np.abs(slopes_a - theory.no_feedback_slope()) / half_a))
    return check_upper(name, worst, 1.0,
                       "deterministic envelope 1 +- kappa log(m/(m-Delta)) implied by the proved bounds"
                       ).with_details(slopes=slopes_a, half=half_a)


def claim_feedback_constant(name: str, res: NoFeedbackResult, *, theory: Theory = _theory) -> Claim:
    """Violations of ``theory.feedback_envelope`` by the hitting-set generator at every (instance, T); must be 0."""
    bad = 0
    for inst, M in zip(res.instances, res.fb, strict=True):
        for j, T in enumerate(res.Ts):
            lo, hi = theory.feedback_envelope(inst.inc, int(T))
            bad += int(not lo <= M[j] <= hi)
    return check_exact(name, bad, 0, "exact integer counts at every (instance, T)")


def _tight_points(inc: np.ndarray, n_T: int) -> np.ndarray:
    """The horizons ``T = 1..n_T`` at which part (iii) of the exact no-feedback minimax proposition asserts
    that the lower bound is attained on a k-uniform, Delta-regular family: ``(T mod n) k < n``."""
    k_row, deg = inc.sum(axis=1), inc.sum(axis=0)
    if np.any(k_row != k_row[0]) or np.any(deg != deg[0]):
        raise ValueError("the tightness statement needs a k-uniform, Delta-regular family")
    n, k = inc.shape[1], int(k_row[0])
    T = np.arange(1, n_T + 1)
    return (T % n) * k < n


def claim_no_feedback_minimax(name: str, res: ExactNoFeedbackResult, *, theory: Theory = _theory) -> Claim:
    """Violations of ``V(T) >= theory.no_feedback_envelope(inc, T)[0]`` at every (family, T); must be 0.

    ``V(T)`` is the exact minimax over all no-feedback generators (exhaustive search), so this tests
    the bound for every generator, not only for a zoo. Details: ``slack`` (the least ``V - bound``)
    and ``n_points``."""
    bad, slack, points = 0, None, 0
    for inc, V in zip(res.incs, res.V, strict=True):
        for j, v in enumerate(V):
            lo = theory.no_feedback_envelope(inc, j + 1)[0]
            bad += int(v < lo)
            slack = int(v) - lo if slack is None else min(slack, int(v) - lo)
            points += 1
    return check_exact(name, bad, 0, "exact integers: exhaustive minimax over every generator, every T").with_details(
        slack=slack, n_points=points)


def claim_no_feedback_tight(name: str, res: ExactNoFeedbackResult, *, theory: Theory = _theory) -> Claim:
    """The number of (regular family, ``T``) with ``(T mod n) k < n`` where the exact minimax ``V(T)``
    equals ``theory.no_feedback_envelope(inc, T)[0]``, against their number."""
    hits = total = 0
    for inc, V, regular in zip(res.incs, res.V, res.regular, strict=True):
        if not regular:
            continue
        for j in np.flatnonzero(_tight_points(inc, len(V))):
            total += 1
            hits += int(V[j] == theory.no_feedback_envelope(inc, int(j) + 1)[0])
    return check_exact(name, hits, total, "exact integers: on regular families the no-feedback lower bound is "
                       "attained at every such point")


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
