"""The theory of chapter 'statistical-provability-greedy-q': derived formulas, predictions, wrong theories.

Pure functions, no random numbers. Every claim reads its prediction from this module; a wrong theory
``wrong_...`` has the signature of the function it replaces.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import integrate, special, stats


def provable_within(lengths: np.ndarray, H: int) -> np.ndarray:
    """The faithful-abstraction value (H+1, S): V*_h(s) = 1{s has a proof of length <= H - h}."""
    h = np.arange(H + 1)[:, None]
    return (np.asarray(lengths, float)[None, :] <= H - h).astype(float)


def wrong_provable_within(lengths: np.ndarray, H: int) -> np.ndarray:
    """Wrong: the budget index read forwards, 1{proof of length <= h}."""
    h = np.arange(H + 1)[:, None]
    return (np.asarray(lengths, float)[None, :] <= h).astype(float)


def bellman_optimal(P: np.ndarray, goal: np.ndarray, dead: np.ndarray, H: int) -> tuple[np.ndarray, np.ndarray]:
    """V*_h (H+1, S) and Q*_h (H, S, A) of the reachability MDP by the Bellman recursion."""
    live = ~(goal | dead)
    V = np.zeros((H + 1, P.shape[0]))
    V[:, goal] = 1.0
    Q = np.zeros((H,) + P.shape[:2])
    for h in range(H - 1, -1, -1):
        Q[h] = P @ V[h + 1]
        V[h, live] = Q[h, live].max(axis=1)
    return V, Q


def pdl_sum(mdp, pi: np.ndarray, d: np.ndarray) -> float:
    """The occupancy-weighted gap sum_h E_{s ~ d_h}[Delta_h(s, pi_h(s))], Delta = V* - Q*."""
    V, Q = bellman_optimal(mdp.P, mdp.goal, mdp.dead, mdp.H)
    chosen = np.take_along_axis(Q, np.asarray(pi)[..., None], axis=2)[..., 0]
    return float(np.sum(d * (V[:-1] - chosen)))


def wrong_pdl_sum(mdp, pi: np.ndarray, d: np.ndarray) -> float:
    """Wrong: the action gaps weighted with the optimal prover's occupancy instead of the learned one's."""
    V, Q = bellman_optimal(mdp.P, mdp.goal, mdp.dead, mdp.H)
    chosen = np.take_along_axis(Q, np.asarray(pi)[..., None], axis=2)[..., 0]
    live = ~(mdp.goal | mdp.dead)
    rows = np.arange(mdp.P.shape[0])
    pistar = Q.argmax(axis=2)
    ds = np.zeros_like(d)
    ds[0] = d[0]
    for h in range(mdp.H - 1):
        ds[h + 1] = np.where(live, ds[h] @ mdp.P[rows, pistar[h]], 0.0)
    return float(np.sum(ds * (V[:-1] - chosen)))


def decision_bound(eps: np.ndarray) -> np.ndarray:
    """The greedy lemma: Delta_h(s, pi_h(s)) <= 2 eps_h(s)."""
    return 2 * np.asarray(eps, float)


def wrong_decision_bound(eps: np.ndarray) -> np.ndarray:
    """Wrong: a greedy decision loses at most the error itself, Delta <= eps."""
    return np.asarray(eps, float)


def greedy_bound(d: np.ndarray, eps: np.ndarray) -> float:
    """The main theorem: gap <= sum_h E_{s ~ d_h^pi}[2 eps_h(s)] (the greedy lemma summed with the occupancy)."""
    return float(np.sum(np.asarray(d) * decision_bound(eps)))


def wrong_greedy_bound(d: np.ndarray, eps: np.ndarray) -> float:
    """Wrong: the constant 1 instead of 2."""
    return float(np.sum(np.asarray(d) * np.asarray(eps)))


def wrong_greedy_bound_horizon(d: np.ndarray, eps: np.ndarray) -> float:
    """Wrong (valid but loose): the uniform reading with the horizon H as multiplier, 2 max(eps) H."""
    return float(2 * np.max(eps) * np.shape(d)[0])


def binary_flip_prob(sigma: float, K: int) -> float:
    """p_f = P(some fatal tactic outscores the live one) = int phi(z) (1 - Phi(1/sigma + z)^(K-1)) dz."""
    def miss(z: float) -> float:
        return stats.norm.pdf(z) * -np.expm1((K - 1) * stats.norm.logcdf(1 / sigma + z))

    return float(integrate.quad(miss, -np.inf, np.inf, epsabs=0, epsrel=1e-12, limit=200)[0])


def chain_mean_length(p_f: float, L: int) -> float:
    """E_pi[tau ^ L] = sum_{h<L} (1 - p_f)^h = (1 - (1 - p_f)^L) / p_f, for 0 < p_f <= 1."""
    return float(-np.expm1(L * np.log1p(-p_f)) / p_f)


def wrong_chain_mean_length(p_f: float, L: int) -> float:
    """Wrong: the nominal proof length L."""
    return float(L)


def chain_gap(p_f: float, L: int) -> float:
    """The binary chain's gap, p_f E_pi[tau ^ L] (= 1 - (1 - p_f)^L)."""
    return p_f * chain_mean_length(p_f, L)


def wrong_chain_gap_nominal(p_f: float, L: int) -> float:
    """Wrong: the multiplier is the nominal length, p_f L."""
    return p_f * L


def wrong_chain_gap_compounding(p_f: float, L: int) -> float:
    """Wrong: behaviour-cloning compounding, p_f L (L + 1) / 2."""
    return p_f * L * (L + 1) / 2


def mc_flip_prob(m: int, q_right: np.ndarray, q_wrong: np.ndarray, chunk: int = 256) -> np.ndarray:
    """f = P(B_w > B_r) + P(B_w = B_r) / 2 for independent B_a ~ Bin(m, q_a), 0 < q_a < 1: the chance that
    greedy with random ties picks the worse action (binomial laws from log-gamma, tails by cumulative sums)."""
    qr, qw = np.ravel(q_right), np.ravel(q_wrong)
    k = np.arange(m + 1)
    log_binom = special.gammaln(m + 1) - special.gammaln(k + 1) - special.gammaln(m - k + 1)
    out = np.full(qr.size, np.nan)
    for i in range(0, qr.size, chunk):
        r, w = qr[i:i + chunk, None], qw[i:i + chunk, None]
        pmf_r = np.exp(log_binom + k * np.log(r) + (m - k) * np.log1p(-r))
        pmf_w = np.exp(log_binom + k * np.log(w) + (m - k) * np.log1p(-w))
        above = np.cumsum(pmf_w[:, ::-1], axis=1)[:, ::-1] - pmf_w  # P(B_w > k)
        out[i:i + chunk] = np.sum(pmf_r * (above + pmf_w / 2), axis=1)
    return out.reshape(np.shape(q_right))


def chain_q(p: np.ndarray) -> np.ndarray:
    """Q*(j, a) = p_{j,a} V*(j+1) on the stochastic chain (V*(L) = 1).

    The model's ``chain_optimal_q`` runs the same recursion to draw the labels; the theory keeps its own copy
    so that a mutant of the prediction never moves the simulation."""
    Q = np.empty_like(p)
    v = np.ones(p.shape[0])
    for j in range(p.shape[1] - 1, -1, -1):
        Q[:, j] = p[:, j] * v[:, None]
        v = Q[:, j].max(axis=1)
    return Q


def wrong_mc_flip_prob_normal_approx(m: int, q_right: np.ndarray, q_wrong: np.ndarray) -> np.ndarray:
    """Wrong: the normal approximation of f, B_w - B_r ~ N(m (q_w - q_r), m (q_r (1 - q_r) + q_w (1 - q_w))),
    without continuity correction: f ~ Phi((q_w - q_r) sqrt(m) / s). It misses the lattice term, which raises the
    exact f at small m for every q, and the skewness of binomials near q = 1."""
    qr, qw = np.asarray(q_right, float), np.asarray(q_wrong, float)
    s = np.sqrt(qr * (1 - qr) + qw * (1 - qw))
    return stats.norm.cdf((qw - qr) * np.sqrt(m) / s)


FlipProb = Callable[[int, np.ndarray, np.ndarray], np.ndarray]


def _chain_gap_given_flips(p: np.ndarray, m: int, flip: FlipProb) -> float:
    """V* - prod_j (p_r - (p_r - p_w) f_j), averaged over instances, with f_j = flip(m, Q*_r, Q*_w)."""
    Q = chain_q(p)
    r = Q.argmax(axis=2)[..., None]
    qr, qw = np.take_along_axis(Q, r, 2)[..., 0], np.take_along_axis(Q, 1 - r, 2)[..., 0]
    pr, pw = np.take_along_axis(p, r, 2)[..., 0], np.take_along_axis(p, 1 - r, 2)[..., 0]
    f = flip(m, qr, qw)
    return float(np.mean(pr.prod(axis=1) - (pr - (pr - pw) * f).prod(axis=1)))


def expected_gap_mc(p: np.ndarray, m: int) -> float:
    """The exact mean over instances of E_labels[gap] with m labels per action: V* - prod_j (p_r - (p_r - p_w) f_j),
    f_j the exact binomial flip probability (:func:`mc_flip_prob`)."""
    return _chain_gap_given_flips(p, m, mc_flip_prob)


def wrong_expected_gap_mc_normal_approx(p: np.ndarray, m: int) -> float:
    """Wrong: the same product with the normal approximation of the flip probabilities
    (:func:`wrong_mc_flip_prob_normal_approx`), which misses the lattice term and the skewness of binomials
    at small m."""
    return _chain_gap_given_flips(p, m, wrong_mc_flip_prob_normal_approx)


def mc_gap_slope(p: np.ndarray, m_list: list[int]) -> float:
    """The least-squares slope of log E_labels[gap] on log m over the sweep (-> -1, the fast rate)."""
    x = np.log(np.asarray(m_list, float))
    y = np.log([expected_gap_mc(p, int(m)) for m in m_list])
    return float(np.polyfit(x, y, 1)[0])


def wrong_mc_gap_slope(p: np.ndarray, m_list: list[int]) -> float:
    """Wrong: the uniform-error reading, gap ~ eps ~ m^(-1/2)."""
    return -0.5


def worst_case_gap(eps: float, eta: float, L: int) -> float:
    """The worst-case chain: gap = (2 eps - eta) E_pi[tau ^ L] = 1 - (1 - 2 eps + eta)^L."""
    return (2 * eps - eta) * chain_mean_length(2 * eps - eta, L)


def wrong_worst_case_gap(eps: float, eta: float, L: int) -> float:
    """Wrong: the multiplier is the horizon, (2 eps - eta) L."""
    return (2 * eps - eta) * L


def worst_case_ratio(eps: float, eta: float) -> float:
    """gap / (2 eps E_pi[tau ^ H]) in the worst-case chain: 1 - eta / (2 eps), for every L."""
    return 1 - eta / (2 * eps)
