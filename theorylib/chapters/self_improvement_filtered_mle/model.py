"""The model of chapter 'self-improvement-filtered-mle': the self-improvement loop itself, every measured value.

A linear-Gaussian policy p_theta(y|x) = N(theta^T x, sigma^2) on prompts x ~ N(0, I_d) answers tasks;
a soft verifier accepts an answer with probability exp(-(y - theta*^T x)^2 / (2 tau^2)) (a Bernoulli
draw), a task of difficulty k is accepted when all its k answers are, and the next policy is the maximum
likelihood fit (least squares) to the pooled accepted pairs when there are at least ``n_min`` of them.

Never imports ``theory``: a mutation of the theory cannot move a measurement. Random functions take an
explicit ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from theorylib.core.validation import check_array, check_int, check_positive, check_positive_int, check_real

# Prompt-floats per chunk of replicates (memory bound of the batched least squares); a fixed constant,
# so that the random stream is consumed identically on every machine.
_CHUNK_FLOATS = 4_000_000
SCHEDULES = ("hard", "easy", "mixture", "greedy")


def _check_counts(counts: Mapping[int, int]) -> dict[int, int]:
    if not isinstance(counts, Mapping) or not counts:
        raise ValueError(f"counts = {counts!r} must be a non-empty mapping {{k: n_k}}")
    out = {}
    for k, nk in sorted(counts.items()):
        out[check_positive_int("k", k)] = check_int(f"n_{k}", nk, low=0)
    if sum(out.values()) < 1:
        raise ValueError(f"counts = {counts!r} must hold at least one task")
    return out


def random_direction_state(R: int, d: int, e: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(theta, theta_star), each (R, d): theta_star ~ N(0, I_d) and theta - theta_star of squared norm e
    in a uniformly random direction (a fixed axis would hide bugs that break rotation invariance)."""
    R, d = check_positive_int("R", R), check_positive_int("d", d)
    e = check_real("e", e, low=0.0)
    theta_star = rng.standard_normal((R, d))
    u = rng.standard_normal((R, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return theta_star + np.sqrt(e) * u, theta_star


def _verify(theta: np.ndarray, theta_star: np.ndarray, counts: dict[int, int], sigma: float, tau: float,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, np.ndarray]]:
    """Draw every task's prompts and answers and run the verifier on one chunk of replicates.

    Returns X (r, P, d), y (r, P), the pair weights w (r, P) (1 when the pair's task was accepted) and
    the accepted-task counts per difficulty.
    """
    r, d = theta.shape
    P = sum(k * nk for k, nk in counts.items())
    X = rng.standard_normal((r, P, d))
    mu = np.einsum("rpd,rd->rp", X, theta)
    mu_star = np.einsum("rpd,rd->rp", X, theta_star)
    y = mu + sigma * rng.standard_normal((r, P))
    ok = rng.random((r, P)) < np.exp(-((y - mu_star) ** 2) / (2 * tau**2))
    w = np.zeros((r, P))
    M = {}
    start = 0
    for k, nk in counts.items():
        block = ok[:, start:start + k * nk].reshape(r, nk, k).all(axis=2)
        M[k] = block.sum(axis=1)
        w[:, start:start + k * nk] = np.repeat(block, k, axis=1)
        start += k * nk
    return X, y, w, M


def _chunks(R: int, P: int, d: int) -> list[slice]:
    step = max(1, _CHUNK_FLOATS // max(1, P * d))
    return [slice(i, min(R, i + step)) for i in range(0, R, step)]


def accepted_tasks(theta: np.ndarray, theta_star: np.ndarray, k: int, n_tasks: int, sigma: float, tau: float,
                   rng: np.random.Generator) -> np.ndarray:
    """Number of accepted difficulty-k tasks among ``n_tasks`` fresh ones, per replicate (R,)."""
    theta, theta_star = _check_state(theta, theta_star)
    sigma, tau = check_positive("sigma", sigma), check_positive("tau", tau)
    k, n_tasks = check_positive_int("k", k), check_positive_int("n_tasks", n_tasks)
    out = np.empty(theta.shape[0], dtype=np.int64)
    for sl in _chunks(theta.shape[0], k * n_tasks, theta.shape[1]):
        out[sl] = _verify(theta[sl], theta_star[sl], {k: n_tasks}, sigma, tau, rng)[3][k]
    return out


def _check_state(theta: np.ndarray, theta_star: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    theta = check_array("theta", theta, ndim=2)
    theta_star = check_array("theta_star", theta_star, shape=theta.shape)
    return theta, theta_star


def simulate_round(theta: np.ndarray, theta_star: np.ndarray, counts: Mapping[int, int], sigma: float,
                   tau: float, n_min: int, rng: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
    """One round of self-improvement for R independent replicates.

    Draws n_k tasks of each difficulty k, k prompts each, answers them with the current policy, keeps
    the accepted tasks (Bernoulli verifier) and refits theta by least squares (the Gaussian MLE) on the
    N pooled pairs, ``np.linalg.solve`` on X^T X; a replicate with N < n_min keeps its theta (skip rule).
    Returns (new theta (R, d), N (R,), {k: accepted tasks (R,)}).
    """
    theta, theta_star = _check_state(theta, theta_star)
    sigma, tau = check_positive("sigma", sigma), check_positive("tau", tau)
    counts = _check_counts(counts)
    R, d = theta.shape
    n_min = check_int("n_min", n_min, low=d + 1)
    P = sum(k * nk for k, nk in counts.items())
    new = theta.copy()
    N = np.zeros(R, dtype=np.int64)
    M = {k: np.zeros(R, dtype=np.int64) for k in counts}
    for sl in _chunks(R, P, d):
        X, y, w, Mc = _verify(theta[sl], theta_star[sl], counts, sigma, tau, rng)
        Nc = w.sum(axis=1).astype(np.int64)
        Xw = X * w[:, :, None]
        A = np.matmul(Xw.transpose(0, 2, 1), X)
        b = np.einsum("rpd,rp->rd", Xw, y)
        upd = Nc >= n_min
        if upd.any():
            sol = np.linalg.solve(A[upd], b[upd][:, :, None])[:, :, 0]
            block = new[sl]
            block[upd] = sol
            new[sl] = block
        N[sl] = Nc
        for k in counts:
            M[k][sl] = Mc[k]
    return new, N, M


def greedy_difficulty(M: np.ndarray, k_used: np.ndarray, n: int, ks: tuple[int, ...]) -> np.ndarray:
    """The plug-in rule: J_hat = (M / n)^(1/k_used) from last round's acceptance, next k = argmax_k k J_hat^k
    (ties to the smaller k). Arrays over replicates."""
    J = (np.asarray(M, dtype=float) / n) ** (1.0 / np.asarray(k_used, dtype=float))
    ks_arr = np.asarray(sorted(ks), dtype=float)
    score = ks_arr[None, :] * J[:, None] ** ks_arr[None, :]
    # exact ties (e.g. J_hat = 1/2 between k = 1 and 2) are computed through pow and may differ in the last
    # bit between machines: a relative margin of 1e-9 resolves them to the smaller k everywhere
    best = score.max(axis=1, keepdims=True)
    return ks_arr.astype(np.int64)[np.argmax(score >= best * (1 - 1e-9), axis=1)]


def mixture_counts(n: int, ks: tuple[int, ...]) -> dict[int, int]:
    """n tasks split as evenly as possible over ks (the first difficulties get the remainder)."""
    n = check_positive_int("n", n)
    q, rem = divmod(n, len(ks))
    return {k: q + (i < rem) for i, k in enumerate(sorted(ks))}


def run_schedule(theta0: np.ndarray, theta_star: np.ndarray, schedule: str | Callable[[int], Mapping[int, int]],
                 T: int, n: int, ks: tuple[int, ...], sigma: float, tau: float, n_min: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """T rounds of self-improvement with n tasks per round.

    schedule: 'hard' (all tasks of difficulty max ks), 'easy' (min ks), 'mixture' (n split evenly),
    'greedy' (pure difficulty min ks in round 0, then per replicate argmax_k k J_hat^k), or a callable
    t -> counts. Returns (theta (T+1, R, d), updates per replicate (R,), difficulty used (T, R)).
    """
    theta, theta_star = _check_state(theta0, theta_star)
    T, n = check_positive_int("T", T), check_positive_int("n", n)
    if not ks or any(check_positive_int("k", k) != k for k in ks):
        raise ValueError(f"ks = {ks!r} must be a non-empty tuple of positive integers")
    if not callable(schedule) and schedule not in SCHEDULES:
        raise ValueError(f"schedule = {schedule!r} must be one of {SCHEDULES} or a callable")
    R = theta.shape[0]
    path = np.empty((T + 1,) + theta.shape)
    path[0] = theta
    updates = np.zeros(R, dtype=np.int64)
    used = np.zeros((T, R), dtype=np.int64)
    k_next = np.full(R, min(ks), dtype=np.int64)
    for t in range(T):
        if schedule == "greedy":
            new = theta.copy()
            for k in sorted(ks):
                idx = np.flatnonzero(k_next == k)
                if idx.size == 0:
                    continue
                new[idx], N, M = simulate_round(theta[idx], theta_star[idx], {k: n}, sigma, tau, n_min, rng)
                updates[idx] += N >= n_min
                used[t, idx] = k
                k_next[idx] = greedy_difficulty(M[k], np.full(idx.size, k), n, ks)
            theta = new
        else:
            if callable(schedule):
                counts = schedule(t)
            elif schedule == "hard":
                counts = {max(ks): n}
            elif schedule == "easy":
                counts = {min(ks): n}
            else:
                counts = mixture_counts(n, ks)
            theta, N, _ = simulate_round(theta, theta_star, counts, sigma, tau, n_min, rng)
            updates += N >= n_min
            used[t] = max(counts, key=lambda k: counts[k])
        path[t + 1] = theta
    return path, updates, used


def plateau_errors(n: int, T: int, R: int, d: int, sigma: float, tau: float, n_min: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Easy-only (k = 1) self-improvement from theta = theta* for T rounds: the errors e_t (T+1, R)."""
    theta, theta_star = random_direction_state(R, d, 0.0, rng)
    path, _, _ = run_schedule(theta, theta_star, "easy", T, n, (1,), sigma, tau, n_min, rng)
    return np.sum((path - theta_star[None]) ** 2, axis=2)
