"""The model of chapter 'statistical-provability-greedy-q': every measured value.

Reachability MDPs, their exact dynamic programs (backward for values, forward for occupancies), the
greedy prover, and the three simulated pipelines: random MDPs with noisy action values, the binary chain
with Gaussian score noise (simulated episodes) and the stochastic chain with Monte-Carlo labels (labels
drawn, values fitted, greedy actions taken, and only then an exact evaluation).

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from theorylib.core.validation import (
    check_array,
    check_int,
    check_positive_int,
    check_real,
)

ROW_TOL = 1e-9  # a transition row must sum to 1 within this


@dataclass(frozen=True)
class ReachMDP:
    """A finite-horizon reachability MDP: P (S, A, S) row-stochastic, absorbing goal and dead masks, H."""

    P: np.ndarray
    goal: np.ndarray
    dead: np.ndarray
    H: int

    def __post_init__(self) -> None:
        P = check_array("P", self.P, ndim=3)
        S, A, S2 = P.shape
        if S != S2 or S < 1 or A < 1:
            raise ValueError(f"P must have shape (S, A, S); got {P.shape}")
        if np.any(P < 0):
            raise ValueError("P has a negative transition probability")
        if np.max(np.abs(P.sum(axis=2) - 1.0)) > ROW_TOL:
            raise ValueError(f"every row of P must sum to 1 (within {ROW_TOL:g})")
        goal = check_array("goal", self.goal, shape=(S,), dtype=bool)
        dead = check_array("dead", self.dead, shape=(S,), dtype=bool)
        if np.any(goal & dead):
            raise ValueError("a state cannot be both a goal and a dead state")
        object.__setattr__(self, "P", P)
        object.__setattr__(self, "goal", goal)
        object.__setattr__(self, "dead", dead)
        object.__setattr__(self, "H", check_positive_int("H", self.H))

    @property
    def S(self) -> int:
        return self.P.shape[0]

    @property
    def A(self) -> int:
        return self.P.shape[1]

    @property
    def live(self) -> np.ndarray:
        """The states that are not absorbed (neither goal nor dead)."""
        return ~(self.goal | self.dead)


def optimal_values(mdp: ReachMDP) -> tuple[np.ndarray, np.ndarray]:
    """Backward induction: V (H+1, S) and Q (H, S, A); V = 1 on goals, 0 on dead states, V_H = 0 elsewhere."""
    V = np.zeros((mdp.H + 1, mdp.S))
    V[:, mdp.goal] = 1.0
    Q = np.zeros((mdp.H, mdp.S, mdp.A))
    for h in range(mdp.H - 1, -1, -1):
        Q[h] = mdp.P @ V[h + 1]
        Q[h][~mdp.live] = V[h][~mdp.live, None]
        V[h, mdp.live] = Q[h][mdp.live].max(axis=1)
    return V, Q


def policy_values(mdp: ReachMDP, pi: np.ndarray) -> np.ndarray:
    """V^pi (H+1, S): the probability of reaching a goal within the remaining steps under pi (H, S)."""
    pi = check_array("pi", pi, shape=(mdp.H, mdp.S), dtype=int)
    V = np.zeros((mdp.H + 1, mdp.S))
    V[:, mdp.goal] = 1.0
    rows = np.arange(mdp.S)
    for h in range(mdp.H - 1, -1, -1):
        Vh = mdp.P[rows, pi[h]] @ V[h + 1]
        V[h, mdp.live] = Vh[mdp.live]
    return V


def occupancy(mdp: ReachMDP, pi: np.ndarray, rho0: np.ndarray) -> np.ndarray:
    """d (H, S): d_h(s) = P(s_h = s and not yet absorbed) under pi from rho0 (forward recursion)."""
    pi = check_array("pi", pi, shape=(mdp.H, mdp.S), dtype=int)
    rho0 = check_array("rho0", rho0, shape=(mdp.S,))
    if np.any(rho0 < 0) or abs(rho0.sum() - 1.0) > ROW_TOL:
        raise ValueError("rho0 must be a probability vector")
    d = np.zeros((mdp.H, mdp.S))
    d[0] = np.where(mdp.live, rho0, 0.0)
    rows = np.arange(mdp.S)
    for h in range(mdp.H - 1):
        d[h + 1] = np.where(mdp.live, d[h] @ mdp.P[rows, pi[h]], 0.0)
    return d


def greedy_policy(Qhat: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """argmax over the last axis; with ``rng``, ties are broken uniformly at random, else the first wins."""
    Qhat = check_array("Qhat", Qhat)
    if rng is None:
        return np.argmax(Qhat, axis=-1)
    best = Qhat == Qhat.max(axis=-1, keepdims=True)
    keys = np.where(best, rng.random(Qhat.shape), -1.0)
    return np.argmax(keys, axis=-1)


def uniform_errors(Qhat: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """eps_h(s) = max_a |Qhat_h(s, a) - Q*_h(s, a)|, shape (H, S)."""
    return np.abs(np.asarray(Qhat, float) - np.asarray(Q, float)).max(axis=-1)


def random_reach_mdp(S: int, A: int, H: int, rng: np.random.Generator, *, deterministic: bool = False,
                     concentration: float = 0.2) -> ReachMDP:
    """A random MDP: state 0 the goal, state 1 dead, the others live with Dirichlet(concentration) rows
    (or, deterministic, one uniformly drawn successor per state and action)."""
    S = check_int("S", S, low=3)
    A = check_int("A", A, low=1)
    concentration = check_real("concentration", concentration, low=0.0, open_low=True)
    if deterministic:
        nxt = rng.integers(0, S, size=(S, A))
        P = np.zeros((S, A, S))
        P[np.arange(S)[:, None], np.arange(A)[None, :], nxt] = 1.0
    else:
        P = rng.dirichlet(np.full(S, concentration), size=(S, A))
        P /= P.sum(axis=2, keepdims=True)
    for s in (0, 1):  # absorbing
        P[s] = 0.0
        P[s, :, s] = 1.0
    goal = np.zeros(S, bool)
    dead = np.zeros(S, bool)
    goal[0] = dead[1] = True
    return ReachMDP(P, goal, dead, H)


def live_uniform_start(mdp: ReachMDP) -> np.ndarray:
    """rho0: uniform over the live states."""
    return mdp.live / mdp.live.sum()


def shortest_proof_lengths(mdp: ReachMDP) -> np.ndarray:
    """For deterministic P: the least number of steps from each state to a goal (BFS; inf if none).

    Goals have length 0; dead states are absorbing and never reach a goal."""
    if not np.all((mdp.P == 0) | (mdp.P == 1)):
        raise ValueError("shortest proof lengths need deterministic transitions")
    succ = mdp.P.argmax(axis=2)
    preds: list[list[int]] = [[] for _ in range(mdp.S)]
    for s in np.flatnonzero(mdp.live):
        for t in set(succ[s].tolist()):
            preds[t].append(int(s))
    dist = np.full(mdp.S, np.inf)
    queue = deque(int(s) for s in np.flatnonzero(mdp.goal))
    dist[mdp.goal] = 0
    while queue:
        t = queue.popleft()
        for s in preds[t]:
            if dist[s] == np.inf:
                dist[s] = dist[t] + 1
                queue.append(s)
    return dist


# --------------------------------------------------------------------------------------------------
# the random-MDP experiment


@dataclass(frozen=True)
class MDPRun:
    """One random MDP with a noisy greedy prover: what the DPs measured."""

    mdp: ReachMDP
    rho0: np.ndarray
    Qhat: np.ndarray
    pi: np.ndarray
    gap: float  # V*_0(rho0) - V^pi_0(rho0), both by backward induction
    d: np.ndarray  # the prover's occupancy (forward recursion)
    eps: np.ndarray  # eps_h(s)
    delta: np.ndarray  # Delta_h(s, pi_h(s)) = V*_h(s) - Q*_h(s, pi_h(s))
    mean_len: float  # E_pi[tau ^ H] = sum of the occupancy


def noisy_greedy_runs(n_mdps: int, S: int, A: int, H: int, noise: float,
                      rng: np.random.Generator) -> list[MDPRun]:
    """``n_mdps`` random MDPs, Qhat = Q* + N(0, noise^2) entrywise, the greedy prover and its measurements."""
    n_mdps = check_positive_int("n_mdps", n_mdps)
    noise = check_real("noise", noise, low=0.0)
    runs = []
    for _ in range(n_mdps):
        mdp = random_reach_mdp(S, A, H, rng)
        V, Q = optimal_values(mdp)
        Qhat = Q + noise * rng.standard_normal(Q.shape)
        pi = greedy_policy(Qhat)
        rho0 = live_uniform_start(mdp)
        Vpi = policy_values(mdp, pi)
        d = occupancy(mdp, pi, rho0)
        delta = V[:-1] - np.take_along_axis(Q, pi[..., None], axis=2)[..., 0]
        runs.append(MDPRun(mdp, rho0, Qhat, pi, float(rho0 @ V[0] - rho0 @ Vpi[0]), d,
                           uniform_errors(Qhat, Q), delta, float(d.sum())))
    return runs


def faithful_abstraction_runs(n_mdps: int, S: int, A: int, H: int,
                              rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """Deterministic random MDPs: (V* (H+1, S) by backward induction, shortest proof lengths by BFS)."""
    out = []
    for _ in range(check_positive_int("n_mdps", n_mdps)):
        mdp = random_reach_mdp(S, A, H, rng, deterministic=True)
        out.append((optimal_values(mdp)[0], shortest_proof_lengths(mdp)))
    return out


# --------------------------------------------------------------------------------------------------
# the binary chain: one tactic keeps the proof alive, K - 1 kill it; Gaussian score noise


def simulate_binary_chain(L: int, K: int, sigma: float, n_episodes: int,
                          rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Episodes of the greedy prover on the chain of length L with fresh noise at every visited state.

    Q* is 1 for the live tactic (index 0) and 0 for the K - 1 fatal ones; Qhat = Q* + sigma Z. Returns
    (success (n,) bool, truncated lengths tau ^ L (n,) int)."""
    L, n = check_positive_int("L", L), check_positive_int("n_episodes", n_episodes)
    K = check_int("K", K, low=2)
    sigma = check_real("sigma", sigma, low=0.0)
    length = np.full(n, L)
    alive = np.ones(n, bool)
    q_star = np.zeros(K)
    q_star[0] = 1.0
    for h in range(L):
        idx = np.flatnonzero(alive)
        if idx.size == 0:
            break
        scores = q_star + sigma * rng.standard_normal((idx.size, K))
        wrong = greedy_policy(scores) != 0
        length[idx[wrong]] = h + 1
        alive[idx[wrong]] = False
    return alive, length


# --------------------------------------------------------------------------------------------------
# the stochastic chain: two tactics per step, success probabilities p, Monte-Carlo labels


def stochastic_chain(n_inst: int, L: int, p_low: float, rng: np.random.Generator) -> np.ndarray:
    """p (n_inst, L, 2): success probabilities of the two tactics at each step, iid U(p_low, 1)."""
    n_inst, L = check_positive_int("n_inst", n_inst), check_positive_int("L", L)
    p_low = check_real("p_low", p_low, low=0.0, high=1.0, open_high=True)
    return rng.uniform(p_low, 1.0, size=(n_inst, L, 2))


def chain_optimal_q(p: np.ndarray) -> np.ndarray:
    """Q*(j, a) = p_{j,a} V*(j+1), V*(L) = 1, V*(j) = max_a Q*(j, a), shape of p."""
    p = check_array("p", p, ndim=3)
    Q = np.empty_like(p)
    v = np.ones(p.shape[0])
    for j in range(p.shape[1] - 1, -1, -1):
        Q[:, j] = p[:, j] * v[:, None]
        v = Q[:, j].max(axis=1)
    return Q


def simulate_mc_pipeline(p: np.ndarray, m: int, R: int, rng: np.random.Generator) -> np.ndarray:
    """R independent label sets: Qhat = Bin(m, Q*)/m per state and tactic, the greedy prover (random ties),
    then its exact success probability prod_j p_{j, pi(j)}. Returns the mean gap over instances, (R,)."""
    m, R = check_positive_int("m", m), check_positive_int("R", R)
    p = check_array("p", p, ndim=3)
    if p.shape[2] != 2 or np.any(p < 0) or np.any(p > 1):
        raise ValueError("p must have shape (n, L, 2) with entries in [0, 1]")
    Q = chain_optimal_q(p)
    v_star = Q[:, 0].max(axis=1)
    out = np.empty(R)
    for r in range(R):
        Qhat = rng.binomial(m, Q) / m
        pi = greedy_policy(Qhat, rng)
        v_pi = np.take_along_axis(p, pi[..., None], axis=2)[..., 0].prod(axis=1)
        out[r] = float(np.mean(v_star - v_pi))
    return out


# --------------------------------------------------------------------------------------------------
# the worst-case chain: a sure tactic and a risky one whose score is overstated


def worst_case_chain(L: int, eps: float, eta: float) -> tuple[ReachMDP, np.ndarray]:
    """The chain of L live states (then the goal, state L; dead, state L + 1) with H = L: tactic 0 moves on
    surely, tactic 1 with probability 1 - 2 eps + eta (else dead); Qhat = Q* - eps on tactic 0 and
    Q* + eps on tactic 1. Returns (mdp, Qhat)."""
    L = check_positive_int("L", L)
    eps = check_real("eps", eps, low=0.0, high=0.5, open_low=True)
    eta = check_real("eta", eta, low=0.0, high=2 * eps, open_low=True, open_high=True)
    S = L + 2
    P = np.zeros((S, 2, S))
    for j in range(L):
        P[j, 0, j + 1] = 1.0
        P[j, 1, j + 1] = 1.0 - 2 * eps + eta
        P[j, 1, L + 1] = 2 * eps - eta
    P[L, :, L] = P[L + 1, :, L + 1] = 1.0
    goal = np.zeros(S, bool)
    dead = np.zeros(S, bool)
    goal[L] = dead[L + 1] = True
    mdp = ReachMDP(P, goal, dead, L)
    Q = optimal_values(mdp)[1]
    return mdp, Q + np.array([-eps, eps])


@dataclass(frozen=True)
class WorstCaseRun:
    L: int
    gap: float
    mean_len: float  # E_pi[tau ^ H]
    d: np.ndarray  # the prover's occupancy (H, S)
    eps: np.ndarray  # eps_h(s) (H, S)


def worst_case_runs(L_list: list[int], eps: float, eta: float) -> list[WorstCaseRun]:
    """The greedy prover on each worst-case chain, started at state 0: gap, E[tau ^ H], the largest error."""
    runs = []
    for L in L_list:
        mdp, Qhat = worst_case_chain(L, eps, eta)
        V, Q = optimal_values(mdp)
        pi = greedy_policy(Qhat)
        rho0 = np.zeros(mdp.S)
        rho0[0] = 1.0
        d = occupancy(mdp, pi, rho0)
        gap = float(V[0, 0] - policy_values(mdp, pi)[0, 0])
        runs.append(WorstCaseRun(int(L), gap, float(d.sum()), d, uniform_errors(Qhat, Q)))
    return runs

