"""The claims of chapter 'statistical-provability-greedy-q': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then the
measured data (from ``model``), then the wrong-theory hook ``theory=``, from which every prediction is read.
Tolerances and error models live here, not in the theory.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np
from scipy import stats

from theorylib.core.claims import (
    DEFAULT_ALPHA,
    Claim,
    check_absolute,
    check_chi2,
    check_exact,
    check_upper,
    check_zscore,
    strict_max,
)
from theorylib.core.rates import fit_loglog

from . import theory as _theory
from .model import MDPRun, WorstCaseRun

Theory = ModuleType | SimpleNamespace

UNIT_ROUNDOFF = float(np.finfo(float).eps)


def dp_rounding_tol(H: int, S: int) -> float:
    """16 (H + 1) S u: a sum of H S products of numbers in [0, 1], each from an H-step recursion of
    probability-weighted sums, loses at most a few units of roundoff per term (about 1.7e-12 at H = 12, S = 40)."""
    return 16 * (H + 1) * S * UNIT_ROUNDOFF


# --------------------------------------------------------------------------------------------------
# the faithful abstraction


def claim_faithful(name: str, runs: Sequence[tuple[np.ndarray, np.ndarray]], H: int, *,
                   theory: Theory = _theory) -> Claim:
    """Deterministic MDPs: the number of (instance, h, s) where the backward-induction V*_h(s) differs from
    ``theory.provable_within`` (BFS proof lengths), which must be 0."""
    mismatches = sum(int(np.sum(V != theory.provable_within(lengths, H))) for V, lengths in runs)
    cells = sum(V.size for V, _ in runs)
    provable = sum(int(np.sum(V[0] == 1)) for V, _ in runs)
    return check_exact(name, mismatches, 0, "both sides are exact 0/1 values: every entry must agree").with_details(
        cells=cells, provable=provable)


# --------------------------------------------------------------------------------------------------
# the occupancy identity and the greedy lemma on random MDPs


def claim_pdl(name: str, runs: Sequence[MDPRun], *, theory: Theory = _theory) -> Claim:
    """The gap from two backward inductions against ``theory.pdl_sum`` (forward occupancy times action
    gaps), the largest absolute difference over the instances, within rounding."""
    res = [abs(r.gap - theory.pdl_sum(r.mdp, r.pi, r.d)) for r in runs]
    tol = max(dp_rounding_tol(r.mdp.H, r.mdp.S) for r in runs)
    return check_absolute(name, strict_max(res), 0.0, tol, fp=True,
                          why="an exact identity: only rounding, 16 (H+1) S u").with_details(residuals=res)


def claim_greedy_lemma(name: str, runs: Sequence[MDPRun], *, theory: Theory = _theory) -> Claim:
    """At every decision the prover reaches (d > 0) and gets wrong (Delta > 0): Delta_h(s, pi(s)) against
    ``theory.decision_bound(eps_h(s))``; the largest ratio must be <= 1 (up to rounding)."""
    ratios = []
    for r in runs:
        sel = (r.d > 0) & (r.delta > 0)
        ratios.append(r.delta[sel] / theory.decision_bound(r.eps[sel]))
    allr = np.concatenate(ratios)
    worst = float(allr.max()) if allr.size else 0.0  # no wrong decision reached: the lemma holds vacuously
    return check_upper(name, worst, 1.0, tol=1e-12, fp=True,
                       why="a proved inequality: only rounding of values in [0, 1]").with_details(
        n_wrong=int(allr.size), max_ratio=worst)


# --------------------------------------------------------------------------------------------------
# the binary chain


def _chi2_claim(name: str, means: np.ndarray, ses: np.ndarray, predicted: np.ndarray, why: str,
                alpha: float = DEFAULT_ALPHA) -> Claim:
    """chi^2 of the z-scores (measured - predicted) / SE over the sweep."""
    z = (means - predicted) / ses
    return check_chi2(name, z, why, alpha).with_details(z=z, means=means, ses=ses, predicted=predicted)


def floored_se(var: np.ndarray, n: np.ndarray) -> np.ndarray:
    """sqrt((var + 1/n) / n): the SE of a mean of n draws, kept positive when a sample is degenerate (no
    episode fails, or every length is L); the floor moves a nondegenerate SE by a relative 1/(2 n var)."""
    return np.sqrt((np.asarray(var, float) + 1 / np.asarray(n, float)) / np.asarray(n, float))


def claim_chain_gap(name: str, success: Sequence[np.ndarray], L_list: Sequence[int], K: int, sigma: float, *,
                    theory: Theory = _theory) -> Claim:
    """1 - success rate at each L against ``theory.chain_gap(p_f, L)``, p_f = ``theory.binary_flip_prob``;
    binomial SE from the measured rate (:func:`floored_se`)."""
    g = np.array([1 - np.mean(s) for s in success])
    n = np.array([len(s) for s in success])
    se = floored_se(g * (1 - g), n)
    p_f = theory.binary_flip_prob(sigma, K)
    pred = np.array([theory.chain_gap(p_f, L) for L in L_list])
    return _chi2_claim(name, g, se, pred, "CLT per L, independent streams: chi^2 of the binomial z-scores")


def claim_chain_length(name: str, lengths: Sequence[np.ndarray], L_list: Sequence[int], K: int, sigma: float, *,
                       theory: Theory = _theory) -> Claim:
    """The mean truncated proof length at each L against ``theory.chain_mean_length(p_f, L)``; sample SE
    (:func:`floored_se`)."""
    means = np.array([np.mean(x) for x in lengths])
    ses = floored_se([np.var(x, ddof=1) for x in lengths], [len(x) for x in lengths])
    p_f = theory.binary_flip_prob(sigma, K)
    pred = np.array([theory.chain_mean_length(p_f, L) for L in L_list])
    return _chi2_claim(name, means, ses, pred, "CLT per L, independent streams: chi^2 of the z-scores")


# --------------------------------------------------------------------------------------------------
# Monte-Carlo labels


def claim_mc_gap(name: str, gaps: np.ndarray, p: np.ndarray, m_list: Sequence[int], *,
                 theory: Theory = _theory) -> Claim:
    """gaps (R, len(m_list)): the pipeline's mean gap per label draw; its mean over draws against
    ``theory.expected_gap_mc(p, m)``. Each Student t with R - 1 dof is mapped to a normal score, then chi^2."""
    gaps = np.asarray(gaps, float)
    R = gaps.shape[0]
    mean = gaps.mean(axis=0)
    se = gaps.std(axis=0, ddof=1) / np.sqrt(R)
    pred = np.array([theory.expected_gap_mc(p, int(m)) for m in m_list])
    t = (mean - pred) / se
    z = stats.norm.ppf(stats.t.cdf(t, R - 1))
    return check_chi2(name, z, "R label draws per m: t scores (R-1 dof) as normal scores, chi^2").with_details(
        mean=mean, se=se, predicted=pred, z=z)


def claim_mc_slope(name: str, gaps: np.ndarray, p: np.ndarray, m_list: Sequence[int], n_boot: int,
                   rng: np.random.Generator, *, theory: Theory = _theory) -> Claim:
    """The log-log slope of the measured mean gap in m (bootstrap over label draws) against the slope of
    ``theory.mc_gap_slope`` (the exact curve) within 3.29 bootstrap SE."""
    fit = fit_loglog(np.asarray(m_list, float), replicates=np.asarray(gaps, float), n_boot=n_boot, rng=rng)
    pred = theory.mc_gap_slope(p, list(m_list))
    return check_zscore(name, fit.slope, pred, fit.slope_se,
                        "bootstrap SE of the OLS slope over the label draws").with_details(fit=fit)


# --------------------------------------------------------------------------------------------------
# the worst-case chain


def claim_worst_gap(name: str, runs: Sequence[WorstCaseRun], eps: float, eta: float, *,
                    theory: Theory = _theory) -> Claim:
    """The DP gap at each L against ``theory.worst_case_gap``: the largest relative deviation, within rounding."""
    dev = strict_max(abs(r.gap / theory.worst_case_gap(eps, eta, r.L) - 1) for r in runs)
    tol = 16 * max(r.L for r in runs) * UNIT_ROUNDOFF
    return check_absolute(name, dev, 0.0, tol, fp=True, why="exact: rounding of an L-step product, 16 L u")


def claim_bound_holds(name: str, runs: Sequence[WorstCaseRun], *, theory: Theory = _theory) -> Claim:
    """gap / ``theory.greedy_bound(d, eps)`` at each L; the largest must be <= 1 (up to rounding)."""
    ratio = strict_max(r.gap / theory.greedy_bound(r.d, r.eps) for r in runs)
    return check_upper(name, ratio, 1.0, tol=1e-12, fp=True, why="a proved inequality: only rounding")


def claim_bound_tight(name: str, runs: Sequence[WorstCaseRun], eps: float, eta: float, *,
                      theory: Theory = _theory) -> Claim:
    """gap / ``theory.greedy_bound(d, eps)`` equals ``theory.worst_case_ratio(eps, eta)`` at every L."""
    pred = theory.worst_case_ratio(eps, eta)
    ratios = np.array([r.gap / theory.greedy_bound(r.d, r.eps) for r in runs])
    worst = ratios[np.argmax(np.abs(ratios - pred))]
    tol = 16 * max(r.L for r in runs) * UNIT_ROUNDOFF
    return check_absolute(name, float(worst), pred, tol, fp=True,
                          why="exact at every L: rounding of an L-step product, 16 L u").with_details(ratios=ratios)
