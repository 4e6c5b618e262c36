"""The model of chapter 'data-mixing-skills': skills, data, learners; every measured value.

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``.

Skills are coordinates. The first m0 are fundamental (variance f0 in every domain); then come the
specialized blocks, block k used by domain k only, with Zipf variances p_k(r) = c r^{-(1+alpha)}.
Domain k draws x ~ N(0, diag(var[k])) and y = <theta*, x> + eps, eps ~ N(0, sigma_k^2).
"""

from __future__ import annotations

import numpy as np

from theorylib.core.validation import check_array, check_int, check_positive, check_positive_int

_BATCH_FLOATS = 3_000_000  # floats per batched array: keeps the peak memory near 100 MB


def skill_variances(m0: int, M, f0: float, c: float, alpha: float) -> np.ndarray:
    """(K, P) variances Var_k(x_s), P = m0 + sum_k M_k: f0 on the shared block, Zipf on block k."""
    m0 = check_int("m0", m0, low=0)
    M = [check_positive_int("M_k", m) for m in M]
    f0, c, alpha = check_positive("f0", f0), check_positive("c", c), check_positive("alpha", alpha)
    var = np.zeros((len(M), m0 + sum(M)))
    var[:, :m0] = f0
    start = m0
    for k, m in enumerate(M):
        var[k, start:start + m] = c * np.arange(1, m + 1) ** -(1 + alpha)
        start += m
    return var


def skill_signs(rng: np.random.Generator, P: int) -> np.ndarray:
    """theta*_s = +-1 with independent fair signs (|theta*_s| = 1)."""
    return rng.choice(np.array([-1.0, 1.0]), size=check_positive_int("P", P))


def domain_losses(beta: np.ndarray, theta: np.ndarray, var: np.ndarray) -> np.ndarray:
    """Excess population loss L_k(beta) - sigma_k^2 = (beta - theta)^T diag(var[k]) (beta - theta).

    beta: (..., P); returns (..., K). Exact: x has independent coordinates, eps is independent.
    """
    d2 = (np.asarray(beta, dtype=float) - theta) ** 2
    return d2 @ np.asarray(var, dtype=float).T


def _pool(rng, R: int, n: int, scale: np.ndarray, theta: np.ndarray, sigma: float):
    """R pools of n rows of one domain on its own skills: (X, y)."""
    X = rng.standard_normal((R, n, scale.size)) * scale
    y = X @ theta + sigma * rng.standard_normal((R, n))
    return X, y


def _prefix_stats(X: np.ndarray, y: np.ndarray, cuts: np.ndarray):
    """Gram matrices X[:, :n]^T X[:, :n] and X[:, :n]^T y[:, :n] at each n in the sorted ``cuts``."""
    edges = np.concatenate([[0], cuts])
    G = np.empty((X.shape[0], cuts.size, X.shape[2], X.shape[2]))
    b = np.empty((X.shape[0], cuts.size, X.shape[2]))
    g_acc, b_acc = 0.0, 0.0
    for i in range(cuts.size):
        Xs, ys = X[:, edges[i]:edges[i + 1]], y[:, edges[i]:edges[i + 1]]
        g_acc = g_acc + np.swapaxes(Xs, 1, 2) @ Xs
        b_acc = b_acc + (np.swapaxes(Xs, 1, 2) @ ys[..., None])[..., 0]
        G[:, i], b[:, i] = g_acc, b_acc
    return G, b


def ols_excess(rng: np.random.Generator, pairs, var: np.ndarray, sigma, theta: np.ndarray,
               R: int) -> np.ndarray:
    """Full-capacity least squares on mixed data: per replicate, domain pools of max n_k rows and a
    fit on the first (n_1, n_2) rows for every pair (nested prefixes: common random numbers).

    Returns the excess losses L_k(beta_hat) - sigma_k^2, shape (R, len(pairs), K).
    """
    pairs = check_array("pairs", pairs, ndim=2, dtype=int)
    var = check_array("var", var, ndim=2)
    sigma = check_array("sigma", sigma, ndim=1, shape=(var.shape[0],))
    R = check_positive_int("R", R)
    K, P = var.shape
    if pairs.shape[1] != K:
        raise ValueError(f"pairs must have one column per domain ({K})")
    cols = [np.flatnonzero(var[k] > 0) for k in range(K)]
    own = np.sum((var > 0) & (np.sum(var > 0, axis=0) == 1), axis=1)
    if np.any(pairs < own) or np.any(pairs.sum(axis=1) < P):
        raise ValueError("every domain needs as many samples as its own skills, and the pool as many "
                         "as all skills")
    nmax = pairs.max(axis=0)
    per_rep = max(max(nmax[k] * cols[k].size for k in range(K)), pairs.shape[0] * P * P)
    chunk = max(1, min(R, _BATCH_FLOATS // per_rep))
    out = np.empty((R, pairs.shape[0], K))
    for r0 in range(0, R, chunk):
        rc = min(chunk, R - r0)
        G = np.zeros((rc, pairs.shape[0], P, P))
        b = np.zeros((rc, pairs.shape[0], P))
        for k in range(K):
            X, y = _pool(rng, rc, int(nmax[k]), np.sqrt(var[k, cols[k]]), theta[cols[k]],
                         float(sigma[k]))
            cuts, where = np.unique(pairs[:, k], return_inverse=True)
            Gk, bk = _prefix_stats(X, y, cuts)
            G[:, :, cols[k][:, None], cols[k][None, :]] += Gk[:, where]
            b[:, :, cols[k]] += bk[:, where]
        beta = np.linalg.solve(G, b[..., None])[..., 0]
        out[r0:r0 + rc] = domain_losses(beta, theta, var)
    return out


def capacity_fits(rng: np.random.Generator, configs, var: np.ndarray, sigma, theta: np.ndarray,
                  R: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The capacity-N learner: keep the N skills with the largest empirical mixture second moment
    (1/D) sum_i x_{is}^2 (stable order), least squares on them, 0 elsewhere.

    configs: rows (n_1, n_2, N); per replicate the domain pools are shared by all configs (nested
    prefixes). Returns (counts, excess, unlearned): counts[r, j, k] the number of kept skills of
    domain k's own block, excess[r, j, k] = L_k(beta_hat) - sigma_k^2, and unlearned[r, j, k] =
    sum_{s not kept} Var_k(x_s) theta_s^2, its part from the skills left out; shapes
    (R, len(configs), K).
    """
    configs = check_array("configs", configs, ndim=2, dtype=int)
    var = check_array("var", var, ndim=2)
    sigma = check_array("sigma", sigma, ndim=1, shape=(var.shape[0],))
    R = check_positive_int("R", R)
    K, P = var.shape
    if configs.shape[1] != K + 1:
        raise ValueError("configs rows are (n_1, ..., n_K, N)")
    if np.any(configs[:, K] < 1) or np.any(configs[:, K] > P):
        raise ValueError(f"capacity N must lie in [1, {P}]")
    cols = [np.flatnonzero(var[k] > 0) for k in range(K)]
    own = (var > 0) & (np.sum(var > 0, axis=0) == 1)
    nmax = configs[:, :K].max(axis=0)
    counts = np.zeros((R, configs.shape[0], K), dtype=int)
    excess = np.empty((R, configs.shape[0], K))
    unlearned = np.empty((R, configs.shape[0], K))
    for r in range(R):
        pools = [_pool(rng, 1, int(nmax[k]), np.sqrt(var[k, cols[k]]), theta[cols[k]],
                       float(sigma[k])) for k in range(K)]
        for j, row in enumerate(configs):
            n, N = row[:K], int(row[K])
            second = np.zeros(P)
            for k in range(K):
                second[cols[k]] += np.sum(pools[k][0][0, :n[k]] ** 2, axis=0)
            kept = np.sort(np.argsort(-second, kind="stable")[:N])
            G, rhs = np.zeros((N, N)), np.zeros(N)
            for k in range(K):
                pos = np.flatnonzero(np.isin(kept, cols[k]))
                local = np.searchsorted(cols[k], kept[pos])
                Xs = pools[k][0][0, :n[k]][:, local]
                G[np.ix_(pos, pos)] += Xs.T @ Xs
                rhs[pos] += Xs.T @ pools[k][1][0, :n[k]]
            beta = np.zeros(P)
            beta[kept] = np.linalg.solve(G, rhs)
            excess[r, j] = domain_losses(beta, theta, var)
            counts[r, j] = np.sum(own[:, kept], axis=1)
            left = np.ones(P, dtype=bool)
            left[kept] = False
            unlearned[r, j] = var[:, left] @ theta[left] ** 2
    return counts, excess, unlearned
