"""The model of chapter 'heavy-tail-clipped-sgd': noise samplers, (clipped) SGD, every measured value.

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``.

The loss is f(w; z) = (lam/2)||w||^2 - <w, z> on R^d, so grad f(w; z) = lam w - z and the gradient
noise at every w is -(z - mu), mu = E z.
"""

from __future__ import annotations

import numpy as np

from theorylib.core.validation import check_positive, check_positive_int, check_real

# ---------------------------------------------------------------- noise


def student_t(rng: np.random.Generator, shape: tuple[int, ...], nu: float) -> np.ndarray:
    """iid Student-t draws with nu degrees of freedom (unit scale); nu = inf gives N(0, 1)."""
    nu = float(nu)
    if not nu > 0:
        raise ValueError(f"nu = {nu!r} must be > 0")
    if np.isinf(nu):
        return rng.standard_normal(shape)
    return rng.standard_t(nu, size=shape)


def pareto(rng: np.random.Generator, shape: tuple[int, ...], nu: float, xm: float = 1.0) -> np.ndarray:
    """iid Pareto(x_m, nu) draws, P(X > x) = (x_m/x)^nu for x >= x_m, by inversion X = x_m U^(-1/nu)."""
    nu, xm = check_positive("nu", nu), check_positive("xm", xm)
    u = 1.0 - rng.random(shape)  # in (0, 1]
    return xm * u ** (-1.0 / nu)


def sym_pareto(rng: np.random.Generator, shape: tuple[int, ...], nu: float, xm: float = 1.0) -> np.ndarray:
    """iid symmetric Pareto draws S X, S a fair sign independent of X ~ Pareto(x_m, nu)."""
    x = pareto(rng, shape, nu, xm)
    s = rng.integers(0, 2, size=shape) * 2 - 1
    return s * x


NOISES = ("t", "sym_pareto")


def draw_noise(rng: np.random.Generator, shape: tuple[int, ...], noise: str, nu: float) -> np.ndarray:
    """iid noise of the named law: ``"t"`` Student-t(nu) (nu = inf: Gaussian), ``"sym_pareto"`` +-Pareto(1, nu)."""
    if noise == "t":
        return student_t(rng, shape, nu)
    if noise == "sym_pareto":
        return sym_pareto(rng, shape, nu)
    raise ValueError(f"noise = {noise!r} must be one of {NOISES}")


# ---------------------------------------------------------------- SGD


def clip(g: np.ndarray, tau: float) -> np.ndarray:
    """Row-wise norm clipping g min(1, tau/||g||) along the last axis; tau = inf is the identity.

    A zero row stays zero (the division is guarded).
    """
    g = np.asarray(g, dtype=float)
    tau = float(tau)
    if not tau > 0:
        raise ValueError(f"tau = {tau!r} must be > 0")
    if np.isinf(tau):
        return g.copy()
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    scale = np.minimum(1.0, tau / np.maximum(norm, np.finfo(float).tiny))
    return g * scale


def harmonic_schedule(T: int, lam: float) -> np.ndarray:
    """eta_t = 1/(lam (t + 1)), t = 0..T-1 (so eta_0 lam = 1)."""
    T, lam = check_positive_int("T", T), check_positive("lam", lam)
    return 1.0 / (lam * np.arange(1, T + 1))


def constant_schedule(T: int, eta: float) -> np.ndarray:
    """eta_t = eta for t = 0..T-1."""
    T, eta = check_positive_int("T", T), check_positive("eta", eta)
    return np.full(T, eta)


def _check_run(Z: np.ndarray, idx: np.ndarray, etas: np.ndarray, lam: float) -> tuple[np.ndarray, ...]:
    Z = np.asarray(Z, dtype=float)
    idx = np.asarray(idx)
    etas = np.asarray(etas, dtype=float)
    if Z.ndim != 3:
        raise ValueError(f"Z must have shape (R, n, d), got {Z.shape}")
    if idx.ndim != 2 or idx.shape[0] != Z.shape[0]:
        raise ValueError(f"idx must have shape (R, T) with R = {Z.shape[0]}, got {idx.shape}")
    if etas.shape != (idx.shape[1],):
        raise ValueError(f"etas must have shape ({idx.shape[1]},), got {etas.shape}")
    if np.any(idx < 0) or np.any(idx >= Z.shape[1]):
        raise ValueError("idx must index the n samples")
    lam = check_positive("lam", lam)
    if np.any(etas <= 0) or np.any(etas * lam > 2.0):
        raise ValueError("steps must satisfy 0 < eta_t lam <= 2")
    return Z, idx, etas


def sgd_quadratic_linear(Z: np.ndarray, idx: np.ndarray, lam: float, etas: np.ndarray,
                         tau: float = np.inf) -> np.ndarray:
    """w_T of (clipped) SGD with replacement on f(w; z) = (lam/2)||w||^2 - <w, z>, w_0 = 0.

    w_{t+1} = w_t - eta_t clip_tau(lam w_t - z_{i_t}), for each of the R rows at once.
    Z: (R, n, d) samples; idx: (R, T) indices; etas: (T,) steps; returns (R, d).
    """
    Z, idx, etas = _check_run(Z, idx, etas, lam)
    R, _, d = Z.shape
    rows = np.arange(R)
    w = np.zeros((R, d))
    for t, eta in enumerate(etas):
        w = w - eta * clip(lam * w - Z[rows, idx[:, t]], tau)
    return w


def coupled_divergence(Z: np.ndarray, z_rep: np.ndarray, idx: np.ndarray, i: int, lam: float,
                       etas: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """||w_T - w_T^(i)|| for S and S^(i) (z_i replaced by z_rep, same indices), and sum_{t: i_t = i} eta_t.

    Returns (norms, used_steps), both (R,).
    """
    Z, idx, etas = _check_run(Z, idx, etas, lam)
    z_rep = np.asarray(z_rep, dtype=float)
    if z_rep.shape != (Z.shape[0], Z.shape[2]):
        raise ValueError(f"z_rep must have shape {(Z.shape[0], Z.shape[2])}, got {z_rep.shape}")
    i = int(i)
    if not 0 <= i < Z.shape[1]:
        raise ValueError(f"i = {i} must index the n = {Z.shape[1]} samples")
    Z2 = Z.copy()
    Z2[:, i] = z_rep
    w = sgd_quadratic_linear(Z, idx, lam, etas, tau)
    w2 = sgd_quadratic_linear(Z2, idx, lam, etas, tau)
    used = ((idx == i) * etas).sum(axis=1)
    return np.linalg.norm(w - w2, axis=1), used


def sphere(rng: np.random.Generator, shape: tuple[int, ...], d: int) -> np.ndarray:
    """iid points uniform on the sphere of radius sqrt(d) in R^d (so E x x^T = I and ||x||^2 = d): shape + (d,)."""
    d = check_positive_int("d", d)
    g = rng.standard_normal((*shape, d))
    return np.sqrt(d) * g / np.linalg.norm(g, axis=-1, keepdims=True)


def sgd_least_squares(X: np.ndarray, Y: np.ndarray, idx: np.ndarray, etas: np.ndarray,
                      tau: float = np.inf) -> np.ndarray:
    """w_T of (clipped) SGD with replacement on f(w; x, y) = (1/2)(<w, x> - y)^2, w_0 = 0.

    w_{t+1} = w_t - eta_t clip_tau(x_{i_t} (<w_t, x_{i_t}> - y_{i_t})), for the R rows at once.
    X: (R, n, d); Y: (R, n); idx: (R, T); etas: (T,) with eta_t max_i ||x_i||^2 <= 2; returns (R, d).
    """
    X, idx, etas = _check_run(X, idx, etas, 1.0)
    Y = np.asarray(Y, dtype=float)
    if Y.shape != X.shape[:2]:
        raise ValueError(f"Y must have shape {X.shape[:2]}, got {Y.shape}")
    if np.max(etas) * np.max(np.sum(X**2, axis=-1)) > 2.0 * (1 + 1e-12):
        raise ValueError("steps must satisfy eta_t ||x||^2 <= 2")
    R, _, d = X.shape
    rows = np.arange(R)
    w = np.zeros((R, d))
    for t, eta in enumerate(etas):
        x = X[rows, idx[:, t]]
        r = np.einsum("rd,rd->r", x, w) - Y[rows, idx[:, t]]
        w = w - eta * clip(x * r[:, None], tau)
    return w


def ls_pair_run(rng: np.random.Generator, nu: float, R: int, n: int, d: int, etas: np.ndarray,
                tau: float, w_star: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R coupled least-squares pairs: x uniform on the sphere of radius sqrt(d), y = <w*, x> + eps with
    symmetric Pareto(1, nu) noise eps; sample 0 replaced by an independent copy, same indices.

    Returns (sup over test points z = (x, y) of ||grad f(w_T; z) - grad f(w_T'; z)|| = d ||w_T - w_T'||
    (the sup of ||x x^T Delta|| over ||x||^2 = d), sum_{t: i_t = 0} eta_t), both (R,).
    """
    R, n, d = check_positive_int("R", R), check_positive_int("n", n), check_positive_int("d", d)
    w_star = np.asarray(w_star, dtype=float)
    if w_star.shape != (d,):
        raise ValueError(f"w_star must have shape ({d},), got {w_star.shape}")
    X = sphere(rng, (R, n), d)
    Y = X @ w_star + sym_pareto(rng, (R, n), nu)
    X2, Y2 = X.copy(), Y.copy()
    X2[:, 0] = sphere(rng, (R,), d)
    Y2[:, 0] = X2[:, 0] @ w_star + sym_pareto(rng, (R,), nu)
    idx = rng.integers(0, n, size=(R, len(etas)))
    delta = sgd_least_squares(X, Y, idx, etas, tau) - sgd_least_squares(X2, Y2, idx, etas, tau)
    used = ((idx == 0) * np.asarray(etas, dtype=float)).sum(axis=1)
    return d * np.linalg.norm(delta, axis=1), used


def gap_estimates(w_T: np.ndarray, Z: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Per-replicate F(w_T) - F_S(w_T) = <w_T, zbar - mu> (R,)."""
    w_T = np.asarray(w_T, dtype=float)
    Z = np.asarray(Z, dtype=float)
    mu = np.asarray(mu, dtype=float)
    if w_T.shape != (Z.shape[0], Z.shape[2]) or mu.shape != (Z.shape[2],):
        raise ValueError("w_T must be (R, d), Z (R, n, d) and mu (d,)")
    return np.einsum("rd,rd->r", w_T, Z.mean(axis=1) - mu)


# ---------------------------------------------------------------- experiments


def gap_run(rng: np.random.Generator, noise: str, nu: float, R: int, n: int, d: int, lam: float,
            etas: np.ndarray, tau: float = np.inf, mu: float = 0.0, chunk: int = 5000) -> np.ndarray:
    """R replicates of <w_T, zbar - mu>: S = mu + noise (R, n, d), indices uniform, T = len(etas) steps."""
    R, n, d = check_positive_int("R", R), check_positive_int("n", n), check_positive_int("d", d)
    mu_vec = np.full(d, check_real("mu", mu))
    out = []
    for start in range(0, R, chunk):
        r = min(chunk, R - start)
        Z = mu_vec + draw_noise(rng, (r, n, d), noise, nu)
        idx = rng.integers(0, n, size=(r, len(etas)))
        out.append(gap_estimates(sgd_quadratic_linear(Z, idx, lam, etas, tau), Z, mu_vec))
    return np.concatenate(out)


def gap_vs_tau(rng: np.random.Generator, noise: str, nu: float, R: int, n: int, lam: float,
               etas: np.ndarray, taus: np.ndarray, chunk: int = 20000) -> np.ndarray:
    """(R, K) per-replicate gaps <w_T(tau_k), zbar> in d = 1, mu = 0, the same draws for every tau_k."""
    R, n = check_positive_int("R", R), check_positive_int("n", n)
    taus = np.asarray(taus, dtype=float)
    out = []
    for start in range(0, R, chunk):
        r = min(chunk, R - start)
        Z = draw_noise(rng, (r, n, 1), noise, nu)
        idx = rng.integers(0, n, size=(r, len(etas)))
        out.append(np.stack([gap_estimates(sgd_quadratic_linear(Z, idx, lam, etas, tau), Z, np.zeros(1))
                             for tau in taus], axis=1))
    return np.concatenate(out)


def pair_run(rng: np.random.Generator, noise: str, nu: float, R: int, n: int, d: int, lam: float,
             etas: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """R coupled pairs (sample 0 replaced by an independent copy): (divergences, sum of used steps)."""
    R, n, d = check_positive_int("R", R), check_positive_int("n", n), check_positive_int("d", d)
    Z = draw_noise(rng, (R, n, d), noise, nu)
    z_rep = draw_noise(rng, (R, d), noise, nu)
    idx = rng.integers(0, n, size=(R, len(etas)))
    return coupled_divergence(Z, z_rep, idx, 0, lam, etas, tau)


def truncated_moment_samples(rng: np.random.Generator, nu: float, taus: np.ndarray, R: int,
                             chunk: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Sample means and covariance of the 2K bounded variables (min(X, tau_k), min(X, tau_k)^2), X ~ Pareto(1, nu).

    Returns (mean (2K,), covariance of the mean (2K, 2K)).
    """
    R = check_positive_int("R", R)
    taus = np.asarray(taus, dtype=float)
    K = taus.size
    s1 = np.zeros(2 * K)
    s2 = np.zeros((2 * K, 2 * K))
    for start in range(0, R, chunk):
        r = min(chunk, R - start)
        x = pareto(rng, (r,), nu)
        m = np.minimum(x[:, None], taus[None, :])
        v = np.concatenate([m, m**2], axis=1)
        s1 += v.sum(axis=0)
        s2 += v.T @ v
    mean = s1 / R
    cov = (s2 / R - np.outer(mean, mean)) * R / (R - 1) / R
    return mean, cov


def sampling_term(rng: np.random.Generator, nu: float, ns: np.ndarray, R: int, q: float) -> np.ndarray:
    """(R, K) draws of |xibar_n|^q, xibar_n the mean of n iid symmetric Pareto(1, nu) variables, per n in ns."""
    R = check_positive_int("R", R)
    q = check_positive("q", q)
    cols = []
    for n in np.asarray(ns, dtype=int):
        acc = np.zeros(R)
        for start in range(0, int(n), 200):
            m = min(200, int(n) - start)
            acc += sym_pareto(rng, (R, m), nu).sum(axis=1)
        cols.append(np.abs(acc / n) ** q)
    return np.stack(cols, axis=1)


def pareto_mean(nu: float, xm: float = 1.0) -> float:
    """E X = nu x_m / (nu - 1) for X ~ Pareto(x_m, nu), nu > 1 (a property of the sampler)."""
    nu, xm = check_positive("nu", nu), check_positive("xm", xm)
    if nu <= 1:
        raise ValueError(f"nu = {nu!r} must be > 1 for a finite mean")
    return nu * xm / (nu - 1)


def tail_means(mean: np.ndarray, cov: np.ndarray, nu: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    """b(tau_k) = E X - mean of min(X, tau_k) (a bounded variable), with its covariance (K, K)."""
    mean = np.asarray(mean, dtype=float)
    return pareto_mean(nu) - mean[:K], np.asarray(cov, dtype=float)[:K, :K]
