"""The model of chapter 'adversarial-vit-benign-overfitting': data, the simplified ViT, adversarial GD, attacks.

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``.

Data (signal-noise patch model): X in R^{P x d}, patch 0 = y mu with mu = ||mu|| e_1, patches p >= 1 are
xi_p ~ N(0, sigma^2 (I - e_1 e_1^T)); y ~ Unif{+-1}; the observed label is -y with probability rho.
Model (positional attention): f(X) = sum_p a_p <v, x_p>, a = softmax(s).
"""

from __future__ import annotations

import numpy as np

from theorylib.core.validation import check_int, check_positive, check_positive_int, check_real


def _check_sizes(d: int, P: int) -> tuple[int, int]:
    return check_int("d", d, low=2), check_int("P", P, low=2)


def _check_rho(rho: float) -> float:
    rho = check_real("rho", rho, low=0.0)
    if rho >= 0.5:
        raise ValueError(f"rho = {rho!r} must lie in [0, 0.5)")
    return rho


def _check_model(X: np.ndarray, v: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, v, s = np.asarray(X, dtype=float), np.asarray(v, dtype=float), np.asarray(s, dtype=float)
    if X.ndim != 3 or v.shape != (X.shape[2],) or s.shape != (X.shape[1],):
        raise ValueError(f"shapes X {X.shape}, v {v.shape}, s {s.shape} must be (N, P, d), (d,), (P,)")
    return X, v, s


def make_patch_data(N: int, d: int, P: int, mu_norm: float, sigma: float, rho: float,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """N samples (X (N, P, d), clean labels y, observed labels y_obs) of the signal-noise patch model."""
    N = check_positive_int("N", N)
    d, P = _check_sizes(d, P)
    mu_norm = check_real("mu_norm", mu_norm, low=0.0)
    sigma, rho = check_positive("sigma", sigma), _check_rho(rho)
    y = rng.choice(np.array([-1.0, 1.0]), size=N)
    flip = rng.random(N) < rho
    y_obs = np.where(flip, -y, y)
    X = np.zeros((N, P, d))
    X[:, 0, 0] = y * mu_norm
    X[:, 1:, 1:] = sigma * rng.standard_normal((N, P - 1, d - 1))
    return X, y, y_obs


def attention(s: np.ndarray) -> np.ndarray:
    """a = softmax(s), computed with the maximum subtracted."""
    s = np.asarray(s, dtype=float)
    e = np.exp(s - s.max())
    return e / e.sum()


def forward(X: np.ndarray, v: np.ndarray, s: np.ndarray) -> np.ndarray:
    """f(X_i) = sum_p a_p <v, x_ip> for every sample."""
    X, v, s = _check_model(X, v, s)
    return (X @ v) @ attention(s)


def worst_case_perturbation(X: np.ndarray, y: np.ndarray, v: np.ndarray, s: np.ndarray,
                            eps: float) -> np.ndarray:
    """The perturbation of Frobenius norm eps that lowers y f(X + Delta) most: f is linear in X with
    gradient a v^T, so Delta* = -y eps a v^T / (||a|| ||v||) (zero when v = 0)."""
    X, v, s = _check_model(X, v, s)
    eps = check_real("eps", eps, low=0.0)
    a, nv = attention(s), float(np.linalg.norm(v))
    if nv == 0.0:
        return np.zeros_like(X)
    direction = np.outer(a, v) / (np.linalg.norm(a) * nv)
    return -eps * np.asarray(y, dtype=float)[:, None, None] * direction[None]


def pgd_attack_margin(X: np.ndarray, y: np.ndarray, v: np.ndarray, s: np.ndarray, eps: float,
                      rng: np.random.Generator, steps: int = 200, restarts: int = 5) -> np.ndarray:
    """The smallest margin y f(X + Delta), ||Delta||_F <= eps, that projected normalized-gradient descent
    finds from random feasible starts (step eps, projection onto the ball), per sample. The gradient of the
    margin in Delta is read off the model on the P d unit inputs (f is linear in X)."""
    X, v, s = _check_model(X, v, s)
    eps = check_real("eps", eps, low=0.0)
    y = np.asarray(y, dtype=float)
    N, P, d = X.shape
    basis = np.eye(P * d).reshape(P * d, P, d)           # f is linear in X: its gradient is f(basis)
    grad = y[:, None, None] * forward(basis, v, s).reshape(1, P, d)
    gnorm = np.maximum(np.linalg.norm(grad, axis=(1, 2), keepdims=True), 1e-300)
    best = np.full(N, np.inf)
    for _ in range(restarts):
        delta = rng.standard_normal(X.shape)
        delta *= eps * rng.random((N, 1, 1)) / np.linalg.norm(delta, axis=(1, 2), keepdims=True)
        for _ in range(steps):
            delta = delta - eps * grad / gnorm
            norms = np.linalg.norm(delta, axis=(1, 2), keepdims=True)
            delta *= np.minimum(1.0, eps / np.maximum(norms, 1e-300))
        best = np.minimum(best, y * forward(X + delta, v, s))
    return best


def robust_loss_grad(X: np.ndarray, y_obs: np.ndarray, v: np.ndarray, s: np.ndarray,
                     eps: float) -> tuple[float, np.ndarray, np.ndarray]:
    """The robust logistic loss L = mean_i log(1 + exp(-m_i)), m_i = y_i f(X_i) - eps ||v|| ||a||
    (the margin under the exact worst-case attack), and its gradients in v and s.

    The subgradient of ||v|| at v = 0 is taken as 0.
    """
    X, v, s = _check_model(X, v, s)
    eps = check_real("eps", eps, low=0.0)
    y_obs = np.asarray(y_obs, dtype=float)
    if y_obs.shape != (X.shape[0],):
        raise ValueError(f"y_obs has shape {y_obs.shape}, expected ({X.shape[0]},)")
    N, P, d = X.shape
    a = attention(s)
    na, nv = float(np.linalg.norm(a)), float(np.linalg.norm(v))
    z = X @ v                                            # (N, P): <v, x_ip>
    m = y_obs * (z @ a) - eps * nv * na
    loss = float(np.mean(np.logaddexp(0.0, -m)))
    w = -0.5 * (1.0 - np.tanh(0.5 * m)) / N              # l'(m_i) / N, l'(m) = -1 / (1 + e^m)
    unit_v = v / nv if nv > 0 else np.zeros(d)
    gv = np.outer(w * y_obs, a).ravel() @ X.reshape(N * P, d) - w.sum() * eps * na * unit_v
    u = y_obs[:, None] * z - (eps * nv / na) * a[None, :]  # dm_i / da
    ju = a[None, :] * (u - (u @ a)[:, None])             # (diag(a) - a a^T) u_i
    gs = w @ ju
    return loss, gv, gs


def train_adversarial(X: np.ndarray, y_obs: np.ndarray, eps: float, T: int, lr_v: float, lr_s: float,
                      freeze_attention: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """T steps of GD on the robust loss from v_0 = 0, s_0 = 0 (both updated at once).

    Returns (v, s, loss history of length T + 1).
    """
    X = np.asarray(X, dtype=float)
    T = check_int("T", T, low=0)
    lr_v, lr_s = check_positive("lr_v", lr_v), check_real("lr_s", lr_s, low=0.0)
    v, s = np.zeros(X.shape[2]), np.zeros(X.shape[1])
    hist = np.empty(T + 1)
    for t in range(T + 1):
        loss, gv, gs = robust_loss_grad(X, y_obs, v, s, eps)
        hist[t] = loss
        if t == T:
            break
        v = v - lr_v * gv
        if not freeze_attention:
            s = s - lr_s * gs
    return v, s, hist


def robust_margins(X: np.ndarray, y: np.ndarray, v: np.ndarray, s: np.ndarray, eps: float) -> np.ndarray:
    """y f(X + Delta*) with the worst-case perturbation applied explicitly."""
    return np.asarray(y, dtype=float) * forward(X + worst_case_perturbation(X, y, v, s, eps), v, s)


def mc_robust_test_error(v: np.ndarray, s: np.ndarray, mu_norm: float, sigma: float, eps: float, M: int,
                         rng: np.random.Generator, chunk: int = 4000) -> tuple[float, float]:
    """Monte-Carlo robust test error on M fresh clean points, each attacked by Delta*: the fraction with
    y f(X + Delta*) <= 0, and its binomial standard error."""
    M = check_positive_int("M", M)
    v, s = np.asarray(v, dtype=float), np.asarray(s, dtype=float)
    errors, done = 0, 0
    while done < M:
        n = min(chunk, M - done)
        X, y, _ = make_patch_data(n, v.size, s.size, mu_norm, sigma, 0.0, rng)
        errors += int(np.sum(robust_margins(X, y, v, s, eps) <= 0))
        done += n
    p = errors / M
    return p, float(np.sqrt(max(p * (1 - p), 1.0 / M) / M))


def one_step_errors(N: int, d: int, P: int, mu_norm: float, sigma: float, eps: float, rho: float, R: int,
                    K: int, rng: np.random.Generator) -> np.ndarray:
    """For R independent training sets: one actual adversarial-GD step from v_0 = 0, s_0 = 0 (exactly),
    then the robust error on K fresh attacked test points; returns the R per-set error fractions.

    The step size cancels in the sign of the margin, so it is fixed to 1.
    """
    R, K = check_positive_int("R", R), check_positive_int("K", K)
    eps = check_real("eps", eps, low=0.0)
    out = np.empty(R)
    zero_v, zero_s = np.zeros(d), np.zeros(P)
    for r in range(R):
        X, _, y_obs = make_patch_data(N, d, P, mu_norm, sigma, rho, rng)
        _, gv, gs = robust_loss_grad(X, y_obs, zero_v, zero_s, eps)
        v1, s1 = -gv, -gs
        Xt, yt, _ = make_patch_data(K, d, P, mu_norm, sigma, 0.0, rng)
        out[r] = np.mean(robust_margins(Xt, yt, v1, s1, eps) <= 0)
    return out


def step2_attention_increment(N: int, d: int, P: int, mu_norm: float, sigma: float, eps: float, rho: float,
                              lr_v: float, lr_s: float, R: int, rng: np.random.Generator) -> np.ndarray:
    """For R training sets: two GD steps from v_0 = 0, s_0 = 0; returns the step-2 increment of
    s_0 - mean_{p >= 1} s_p divided by lr_v lr_s (the quantity is first order in lr_v)."""
    R = check_positive_int("R", R)
    lr_v, lr_s = check_positive("lr_v", lr_v), check_positive("lr_s", lr_s)
    out = np.empty(R)
    for r in range(R):
        X, _, y_obs = make_patch_data(N, d, P, mu_norm, sigma, rho, rng)
        v, s = np.zeros(d), np.zeros(P)
        for _ in range(2):
            _, gv, gs = robust_loss_grad(X, y_obs, v, s, eps)
            v, s_new = v - lr_v * gv, s - lr_s * gs
            gap_before = s[0] - s[1:].mean()
            s = s_new
        out[r] = (s[0] - s[1:].mean() - gap_before) / (lr_v * lr_s)
    return out


def crossing(x: np.ndarray, y: np.ndarray, w: np.ndarray, cov_out: bool = False):
    """Weighted least squares of y on x (weights w = 1/SE^2); returns the zero crossing sqrt(-b0/b1) of the
    line in x = ||mu||^2 and its delta-method standard error."""
    x, y, w = (np.asarray(t, dtype=float) for t in (x, y, w))
    A = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.inv(A.T @ (w[:, None] * A))
    b0, b1 = cov @ (A.T @ (w * y))
    if not (b1 > 0 and b0 < 0):
        raise ValueError(f"the fitted line ({b0:.3g} + {b1:.3g} x) has no crossing at positive ||mu||^2")
    root = float(np.sqrt(-b0 / b1))
    grad = np.array([-1.0 / b1, b0 / b1**2]) / (2 * root)   # d root / d (b0, b1)
    return root, float(np.sqrt(grad @ cov @ grad))


# ---- batched forms: many independent training sets at once ------------------------------------------------

def make_patch_data_batch(B: int, N: int, d: int, P: int, mu_norm: float, sigma: float, rho: float,
                          rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """B independent training sets of the patch model at once: X (B, N, P, d), y (B, N), y_obs (B, N)."""
    B, N = check_positive_int("B", B), check_positive_int("N", N)
    d, P = _check_sizes(d, P)
    mu_norm = check_real("mu_norm", mu_norm, low=0.0)
    sigma, rho = check_positive("sigma", sigma), _check_rho(rho)
    y = rng.choice(np.array([-1.0, 1.0]), size=(B, N))
    y_obs = np.where(rng.random((B, N)) < rho, -y, y)
    X = np.zeros((B, N, P, d))
    X[:, :, 0, 0] = y * mu_norm
    X[:, :, 1:, 1:] = sigma * rng.standard_normal((B, N, P - 1, d - 1))
    return X, y, y_obs


def robust_loss_grad_batch(X: np.ndarray, y_obs: np.ndarray, v: np.ndarray, s: np.ndarray,
                           eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``robust_loss_grad`` for B independent training sets at once: X (B, N, P, d), y_obs (B, N),
    v (B, d), s (B, P); returns (loss (B,), gv (B, d), gs (B, P)), the same formulas set by set."""
    X, y_obs = np.asarray(X, dtype=float), np.asarray(y_obs, dtype=float)
    v, s = np.asarray(v, dtype=float), np.asarray(s, dtype=float)
    B, N, P, d = X.shape
    if y_obs.shape != (B, N) or v.shape != (B, d) or s.shape != (B, P):
        raise ValueError(f"shapes X {X.shape}, y_obs {y_obs.shape}, v {v.shape}, s {s.shape} do not match")
    e = np.exp(s - s.max(axis=1, keepdims=True))
    a = e / e.sum(axis=1, keepdims=True)
    na, nv = np.linalg.norm(a, axis=1), np.linalg.norm(v, axis=1)
    Xf = X.reshape(B, N * P, d)
    z = np.matmul(Xf, v[:, :, None]).reshape(B, N, P)
    m = y_obs * np.einsum("bnp,bp->bn", z, a) - (eps * nv * na)[:, None]
    loss = np.mean(np.logaddexp(0.0, -m), axis=1)
    w = -0.5 * (1.0 - np.tanh(0.5 * m)) / N
    unit_v = np.divide(v, nv[:, None], out=np.zeros_like(v), where=nv[:, None] > 0)
    coef = ((w * y_obs)[:, :, None] * a[:, None, :]).reshape(B, 1, N * P)
    gv = np.matmul(coef, Xf)[:, 0, :] - (w.sum(axis=1) * eps * na)[:, None] * unit_v
    u = y_obs[:, :, None] * z - (eps * nv / na)[:, None, None] * a[:, None, :]
    ju = a[:, None, :] * (u - np.einsum("bnp,bp->bn", u, a)[:, :, None])
    gs = np.einsum("bn,bnp->bp", w, ju)
    return loss, gv, gs


def step2_increments_batch(N: int, d: int, P: int, mu_norm: float, sigma: float, eps: float, rho: float,
                           lr_v: float, lr_s: float, R: int, rng: np.random.Generator,
                           chunk: int = 1000) -> np.ndarray:
    """``step2_attention_increment`` for R training sets, run in batches of ``chunk`` sets: two GD steps
    from v_0 = 0, s_0 = 0 on each, returning the step-2 increment of s_0 - mean_{p >= 1} s_p divided by
    lr_v lr_s."""
    R, chunk = check_positive_int("R", R), check_positive_int("chunk", chunk)
    lr_v, lr_s = check_positive("lr_v", lr_v), check_positive("lr_s", lr_s)
    eps = check_real("eps", eps, low=0.0)
    out = np.empty(R)
    for start in range(0, R, chunk):
        B = min(chunk, R - start)
        X, _, y_obs = make_patch_data_batch(B, N, d, P, mu_norm, sigma, rho, rng)
        v, s = np.zeros((B, d)), np.zeros((B, P))
        gap = np.zeros(B)
        for _ in range(2):
            _, gv, gs = robust_loss_grad_batch(X, y_obs, v, s, eps)
            gap = s[:, 0] - s[:, 1:].mean(axis=1)
            v, s = v - lr_v * gv, s - lr_s * gs
        out[start:start + B] = (s[:, 0] - s[:, 1:].mean(axis=1) - gap) / (lr_v * lr_s)
    return out


# ---- the phase boundary: training on a grid of signal norms with shared noise ----------------------------

def train_adversarial_grid(noise: np.ndarray, y_obs: np.ndarray, mu_norms: np.ndarray, eps: float, T: int,
                           lr_v: float, lr_s: float,
                           freeze_attention: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``train_adversarial`` on S training sets at every signal norm of a grid at once (common random
    numbers): the training set (s, g) has noise patches noise[s] (S, N, P - 1, d), zero in coordinate 0,
    labels y = y_obs (no label noise) and signal patch y_i mu_norms[g] e_1. T GD steps from v = 0, s = 0.

    Returns V (S, G, d) and the scores (S, G, P). The gradient is the one of ``robust_loss_grad``, written
    with the signal patch apart so that each step costs two batched matrix products.
    """
    noise, y = np.asarray(noise, dtype=float), np.asarray(y_obs, dtype=float)
    mu = np.asarray(mu_norms, dtype=float)
    S, N, Pm1, d = noise.shape
    if y.shape != (S, N) or mu.ndim != 1:
        raise ValueError(f"shapes noise {noise.shape}, y_obs {y.shape}, mu_norms {mu.shape} do not match")
    T = check_int("T", T, low=0)
    eps, lr_v, lr_s = check_real("eps", eps, low=0.0), check_positive("lr_v", lr_v), check_real("lr_s", lr_s,
                                                                                                 low=0.0)
    G, P = mu.size, Pm1 + 1
    Xi = noise.reshape(S, N * Pm1, d)                      # noise rows (i, p >= 1)
    XiT = np.ascontiguousarray(Xi.transpose(0, 2, 1))
    V, sc = np.zeros((S, G, d)), np.zeros((S, G, P))
    for _ in range(T):
        e = np.exp(sc - sc.max(axis=2, keepdims=True))
        a = e / e.sum(axis=2, keepdims=True)               # (S, G, P)
        na, nv = np.linalg.norm(a, axis=2), np.linalg.norm(V, axis=2)
        zn = np.matmul(V, XiT).reshape(S, G, N, Pm1)       # <v_g, xi_ip>
        z0 = y[:, None, :] * (mu[None, :, None] * V[:, :, :1])   # <v_g, y_i mu_g e_1>, (S, G, N)
        f = a[:, :, :1] * z0 + np.einsum("sgnp,sgp->sgn", zn, a[:, :, 1:])
        m = y[:, None, :] * f - (eps * nv * na)[:, :, None]
        w = -0.5 * (1.0 - np.tanh(0.5 * m)) / N           # (S, G, N)
        wy = w * y[:, None, :]
        unit_v = np.divide(V, nv[:, :, None], out=np.zeros_like(V), where=nv[:, :, None] > 0)
        coef = (wy[:, :, :, None] * a[:, :, None, 1:]).reshape(S, G, N * Pm1)
        gv = np.matmul(coef, Xi) - (w.sum(axis=2) * eps * na)[:, :, None] * unit_v
        gv[:, :, 0] += np.sum(wy * y[:, None, :], axis=2) * a[:, :, 0] * mu[None, :]
        if not freeze_attention:
            z = np.concatenate([z0[..., None], zn], axis=3)   # (S, G, N, P)
            u = y[:, None, :, None] * z - (eps * nv / na)[:, :, None, None] * a[:, :, None, :]
            ju = a[:, :, None, :] * (u - np.einsum("sgnp,sgp->sgn", u, a)[..., None])
            sc = sc - lr_s * np.einsum("sgn,sgnp->sgp", w, ju)
        V = V - lr_v * gv
    return V, sc


def exact_robust_errors(V: np.ndarray, scores: np.ndarray, mu_norms: np.ndarray, sigma: float,
                        eps: float) -> np.ndarray:
    """The robust test error of many models (V (..., G, d), scores (..., G, P)) at their signal norms, by
    the closed form Phi(-(a_0 v_0 ||mu|| - eps ||v|| ||a||) / (sigma ||v_{1:}|| ||a_{1:}||)) of the robust
    risk (the lemma checked against Monte Carlo in the first experiment); a measuring instrument here."""
    from scipy.special import ndtr

    V, sc = np.asarray(V, dtype=float), np.asarray(scores, dtype=float)
    e = np.exp(sc - sc.max(axis=-1, keepdims=True))
    a = e / e.sum(axis=-1, keepdims=True)
    signal = a[..., 0] * V[..., 0] * np.asarray(mu_norms, dtype=float) - eps * np.linalg.norm(V, axis=-1) \
        * np.linalg.norm(a, axis=-1)
    spread = sigma * np.linalg.norm(V[..., 1:], axis=-1) * np.linalg.norm(a[..., 1:], axis=-1)
    return ndtr(-signal / spread)


def error_crossing(log_mu: np.ndarray, errors: np.ndarray, level: float = 0.25) -> float:
    """The crossing of the robust-error curve with ``level``: linear interpolation in log ||mu|| between
    the last grid point with error above the level and the next one. Raises ValueError when the curve does
    not cross inside the grid (never extrapolated)."""
    x, e = np.asarray(log_mu, dtype=float), np.asarray(errors, dtype=float)
    above = np.flatnonzero(e > level)
    if above.size == 0 or above[-1] == e.size - 1:
        raise ValueError("the robust error does not cross the level inside the grid")
    k = int(above[-1])
    t = (e[k] - level) / (e[k] - e[k + 1])
    return float(x[k] + t * (x[k + 1] - x[k]))
