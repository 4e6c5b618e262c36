"""The model of chapter 'dln-pretrain-finetune': tasks, gradient descent on (u, v), measured quantities.

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``. Everything is float64 and batched on
the leading axis (one row per design, sign of lambda, protocol, ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from theorylib.core.validation import check_positive, check_positive_int

TASKS = ("subset", "new")


def sample_pretraining(d: int, k_P: int, n_P: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A pretraining task: beta*_P with k_P nonzero entries (support S uniform, each a random sign
    times U(0.5, 1.5)), a design X_P with N(0, 1) entries (n_P x d), noiseless labels y_P = X_P beta*_P."""
    d, k_P, n_P = (check_positive_int(n, v) for n, v in (("d", d), ("k_P", k_P), ("n_P", n_P)))
    if k_P > d:
        raise ValueError(f"k_P = {k_P} must be <= d = {d}")
    S = np.sort(rng.permutation(d)[:k_P])
    beta = np.zeros(d)
    beta[S] = rng.choice([-1.0, 1.0], size=k_P) * rng.uniform(0.5, 1.5, size=k_P)
    X = rng.standard_normal((n_P, d))
    return {"X": X, "y": X @ beta, "beta": beta, "support": beta != 0}


def sample_finetuning(support: np.ndarray, k_F: int, n_F: int, task: str,
                      rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A fine-tuning task: beta*_F with k_F nonzero entries inside the pretraining support ("subset")
    or outside it ("new"), entries as in pretraining; X_F (n_F x d) with N(0, 1) entries; y_F = X_F beta*_F."""
    mask = np.asarray(support, dtype=bool)
    k_F, n_F = check_positive_int("k_F", k_F), check_positive_int("n_F", n_F)
    if task not in TASKS:
        raise ValueError(f"task = {task!r} must be one of {TASKS}")
    pool = np.flatnonzero(mask if task == "subset" else ~mask)
    if k_F > pool.size:
        raise ValueError(f"k_F = {k_F} features do not fit in the {pool.size} of the {task} task")
    SF = rng.choice(pool, size=k_F, replace=False)
    beta = np.zeros(mask.size)
    beta[SF] = rng.choice([-1.0, 1.0], size=k_F) * rng.uniform(0.5, 1.5, size=k_F)
    X = rng.standard_normal((n_F, mask.size))
    return {"X": X, "y": X @ beta, "beta": beta}


def loss(X: np.ndarray, y: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """L(beta) = |X beta - y|^2 / (2 n), batched: X (B, n, d), y (B, n), beta (B, d) -> (B,)."""
    r = np.einsum("bnd,bd->bn", X, beta) - y
    return 0.5 * np.mean(r * r, axis=-1)


def gd_step(X: np.ndarray, y: np.ndarray, u: np.ndarray, v: np.ndarray,
            eta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One simultaneous gradient step on (u, v): u' = u - eta g v, v' = v - eta g u, g = X^T(X(u v) - y)/n.

    Returns (u', v', g). Both updates read the old (u, v), which makes the step symmetric under u <-> v.
    """
    n = X.shape[-2]
    r = np.einsum("bnd,bd->bn", X, u * v) - y
    g = np.einsum("bnd,bn->bd", X, r) / n
    return u - eta * g * v, v - eta * g * u, g


def train_gd(X: np.ndarray, y: np.ndarray, u0: np.ndarray, v0: np.ndarray, eta: float,
             max_steps: int, loss_tol: float, check_every: int = 50) -> dict[str, Any]:
    """Batched gradient descent on f(x) = sum_i u_i v_i x_i from (u0, v0), run until every row has
    loss <= loss_tol (checked every ``check_every`` steps) or ``max_steps`` steps are done.

    X (B, n, d), y (B, n), u0, v0 (B, d). Returns u, v, beta = u v, the number of steps, the final
    losses and ``converged`` (all rows below loss_tol).
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    u, v = np.array(u0, dtype=float), np.array(v0, dtype=float)
    if X.ndim != 3 or y.shape != X.shape[:2] or u.shape != (X.shape[0], X.shape[2]) or v.shape != u.shape:
        raise ValueError(f"shapes X {X.shape}, y {y.shape}, u0 {u.shape}, v0 {v.shape} do not match")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y)) and np.all(np.isfinite(u))
            and np.all(np.isfinite(v))):
        raise ValueError("X, y, u0, v0 must be finite")
    eta = check_positive("eta", eta)
    max_steps, check_every = check_positive_int("max_steps", max_steps), check_positive_int("check_every",
                                                                                             check_every)
    loss_tol = check_positive("loss_tol", loss_tol)
    Xt = np.ascontiguousarray(np.swapaxes(X, 1, 2))
    n = X.shape[1]
    steps = 0
    while steps < max_steps:
        for _ in range(min(check_every, max_steps - steps)):
            r = np.matmul(X, (u * v)[..., None])[..., 0] - y
            g = np.matmul(Xt, r[..., None])[..., 0] / n
            u, v = u - eta * g * v, v - eta * g * u
            steps += 1
        if np.max(loss(X, y, u * v)) <= loss_tol:
            break
    final = loss(X, y, u * v)
    return {"u": u, "v": v, "beta": u * v, "steps": steps, "loss": final,
            "converged": bool(np.max(final) <= loss_tol)}


def leakage(beta: np.ndarray, b0: np.ndarray, support: np.ndarray) -> np.ndarray:
    """L = sum_{j not in S} |beta_j - b0_j| (batched on the leading axis; support: a boolean mask)."""
    beta, b0, mask = np.asarray(beta, float), np.asarray(b0, float), np.asarray(support, bool)
    return np.sum(np.abs(beta - b0) * ~mask, axis=-1)


def excess_risk(beta: np.ndarray, beta_star: np.ndarray) -> np.ndarray:
    """Excess square risk for x ~ N(0, I): E(x^T beta - x^T beta*)^2 = |beta - beta*|^2 (batched)."""
    diff = np.asarray(beta, float) - np.asarray(beta_star, float)
    return np.sum(diff * diff, axis=-1)


def pretrain(X_P: np.ndarray, y_P: np.ndarray, alpha_small: float, alpha_large: float, eta: float,
             max_steps: int, loss_tol: float) -> dict[str, Any]:
    """Pretrain every design (X_P: (S, n_P, d)) from both layer orders at once.

    Row block 0 starts at u = alpha_small, v = alpha_large (lam < 0), block 1 at u = alpha_large,
    v = alpha_small (lam > 0). Returns u, v of shape (2, S, d) and the run's steps, loss, converged.
    """
    X_P, y_P = np.asarray(X_P, dtype=float), np.asarray(y_P, dtype=float)
    a, b = check_positive("alpha_small", alpha_small), check_positive("alpha_large", alpha_large)
    S, _, d = X_P.shape
    u0 = np.concatenate([np.full((S, d), a), np.full((S, d), b)])
    v0 = np.concatenate([np.full((S, d), b), np.full((S, d), a)])
    run = train_gd(np.concatenate([X_P, X_P]), np.concatenate([y_P, y_P]), u0, v0, eta, max_steps, loss_tol)
    run["u"], run["v"] = run["u"].reshape(2, S, d), run["v"].reshape(2, S, d)
    return run


def finetune(X_F: np.ndarray, y_F: np.ndarray, u_P: np.ndarray, v_P: np.ndarray, protocol: str,
             alpha_h: float, eta: float, max_steps: int, loss_tol: float) -> dict[str, Any]:
    """Fine-tune from pretrained weights u_P, v_P (shape (..., S, d), designs X_F (S, n_F, d)).

    protocol "inherit" starts at (u_P, v_P); "reset" at (u_P, alpha_h). Returns beta (shape of u_P), the
    start beta0 = u(0) v(0), steps, loss and converged.
    """
    u_P, v_P = np.asarray(u_P, dtype=float), np.asarray(v_P, dtype=float)
    if protocol == "inherit":
        v0 = v_P
    elif protocol == "reset":
        v0 = np.full_like(u_P, check_positive("alpha_h", alpha_h))
    else:
        raise ValueError(f"protocol = {protocol!r} must be 'inherit' or 'reset'")
    shape = u_P.shape
    X_F, y_F = np.asarray(X_F, dtype=float), np.asarray(y_F, dtype=float)
    reps = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    X = np.concatenate([X_F] * reps)
    y = np.concatenate([y_F] * reps)
    run = train_gd(X, y, u_P.reshape(-1, shape[-1]), v0.reshape(-1, shape[-1]), eta, max_steps, loss_tol)
    run["beta"] = run["beta"].reshape(shape)
    run["beta0"] = u_P * v0
    return run
