"""The theory of chapter 'dln-pretrain-finetune': the mirror geometry of a diagonal linear network,
the pretrained weights, the fine-tuning geometry, its Bregman projection, the limits of the leakage law
(the constant C for lam < 0, the limit L_0 for lam > 0), and the named wrong theories.

Pure functions, no random numbers. A wrong theory ``wrong_...`` has the signature of the function it
replaces. Notation: beta = u * v, lam = u^2 - v^2 (conserved by gradient flow), and per feature the
potential phi_lam(b) = (b arcsinh(2b/|lam|) - sqrt(lam^2 + 4b^2)/2) / 2 with mirror map
psi_lam = phi_lam' = arcsinh(2b/|lam|)/2 (Woodworth et al. 2020; Azulay et al. 2021). The potential itself
and its Bregman divergence enter the predictions only through psi; the unit tests define them and check
that the projection minimizes the divergence.
"""

from __future__ import annotations

import numpy as np

from theorylib.core.validation import check_positive

PROTOCOLS = ("inherit", "reset")


def _scale(lam: np.ndarray) -> np.ndarray:
    a = np.abs(np.asarray(lam, dtype=float))
    if not np.all(np.isfinite(a)) or np.any(a < 1e-14):
        raise ValueError("every |lambda| must be finite and >= 1e-14 (lambda = 0 is the singular geometry)")
    return a


def mirror_map(b: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """psi_lam(b) = phi_lam'(b) = arcsinh(2b/|lam|) / 2; phi_lam'' = (lam^2 + 4 b^2)^(-1/2)."""
    return 0.5 * np.arcsinh(2.0 * np.asarray(b, dtype=float) / _scale(lam))


def inverse_mirror_map(z: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """psi_lam^{-1}(z) = (|lam|/2) sinh(2z)."""
    return 0.5 * _scale(lam) * np.sinh(2.0 * np.asarray(z, dtype=float))


def bregman_projection(X: np.ndarray, y: np.ndarray, lam: np.ndarray, b0: np.ndarray,
                       tol: float = 1e-12, max_iter: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """argmin_{X b = y} sum_i D_{lam_i}(b_i, b0_i) and its multiplier nu (Theorem: implicit bias).

    Damped Newton on the dual F(nu) = sum_i (|lam_i|/4) cosh(2 z_i) - y^T nu, z = psi(b0) + X^T nu;
    then b = psi^{-1}(z). X (n, d) must have full row rank; stops when |X b - y|_inf <= tol (1 + |y|_inf).
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    a, b0 = _scale(lam), np.asarray(b0, dtype=float)
    n, d = X.shape
    if y.shape != (n,) or a.shape != (d,) or b0.shape != (d,):
        raise ValueError(f"shapes X {X.shape}, y {y.shape}, lam {a.shape}, b0 {b0.shape} do not match")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y)) and np.all(np.isfinite(b0))):
        raise ValueError("X, y, b0 must be finite")
    if np.linalg.matrix_rank(X) < n:
        raise ValueError("X must have full row rank (n <= d, independent rows)")
    z0 = mirror_map(b0, a)

    def dual(nu: np.ndarray) -> float:
        z = z0 + X.T @ nu
        if np.max(np.abs(z)) > 300.0:
            return np.inf
        return float(np.sum(0.25 * a * np.cosh(2.0 * z)) - y @ nu)

    nu = np.zeros(n)
    for _ in range(max_iter):
        z = z0 + X.T @ nu
        b = inverse_mirror_map(z, a)
        grad = X @ b - y
        if np.max(np.abs(grad)) <= tol * (1.0 + np.max(np.abs(y))):
            return b, nu
        H = (X * (a * np.cosh(2.0 * z))) @ X.T
        step = np.linalg.solve(H, grad)
        f0, t, dec = dual(nu), 1.0, float(grad @ step)
        slack = 1e-13 * abs(f0)  # rounding of f near the optimum must not stop a full Newton step
        while dual(nu - t * step) > f0 - 0.25 * t * dec + slack:
            t *= 0.5
            if t < 1e-12:
                raise RuntimeError("the line search of the Bregman projection failed")
        nu = nu - t * step
    raise RuntimeError("the Bregman projection did not converge")


def pretrained_weights(beta_P: np.ndarray, alpha_u: float, alpha_v: float) -> tuple[np.ndarray, np.ndarray]:
    """Gradient-flow weights after pretraining to the interpolator beta_P from u = alpha_u, v = alpha_v.

    lam = alpha_u^2 - alpha_v^2, s = sqrt(lam^2 + 4 beta^2): u^2 = (lam + s)/2, v^2 = (s - lam)/2;
    lam > 0 keeps u > 0 (v = beta/u), lam < 0 keeps v > 0 (u = beta/v). Unused features: u^2 = max(lam, 0).
    """
    au, av = check_positive("alpha_u", alpha_u), check_positive("alpha_v", alpha_v)
    beta = np.asarray(beta_P, dtype=float)
    lam = au * au - av * av
    _scale(np.array([lam]))
    s = np.sqrt(lam * lam + 4.0 * beta * beta)
    if lam > 0:
        u = np.sqrt(0.5 * (lam + s))
        return u, beta / u
    v = np.sqrt(0.5 * (s - lam))
    return beta / v, v


def wrong_pretrained_weights_balanced(beta_P: np.ndarray, alpha_u: float,
                                      alpha_v: float) -> tuple[np.ndarray, np.ndarray]:
    """Wrong: the balanced (lam = 0) answer u^2 = v^2 = |beta| whatever the layer scales."""
    beta = np.asarray(beta_P, dtype=float)
    u = np.sqrt(np.abs(beta))
    return u, np.sign(beta) * u


def wrong_pretrained_weights_frozen(beta_P: np.ndarray, alpha_u: float,
                                    alpha_v: float) -> tuple[np.ndarray, np.ndarray]:
    """Wrong: unused features keep their initial first layer, u^2 = alpha_u^2 (used ones as derived)."""
    u, v = pretrained_weights(beta_P, alpha_u, alpha_v)
    unused = np.asarray(beta_P) == 0
    return np.where(unused, alpha_u, u), np.where(unused, 0.0, v)


def finetune_geometry(u_P: np.ndarray, v_P: np.ndarray, protocol: str,
                      alpha_h: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(lam', beta'_0) of fine-tuning: inherited head (u_P^2 - v_P^2, u_P v_P) or a head reset to
    alpha_h (u_P^2 - alpha_h^2, alpha_h u_P)."""
    u, v = np.asarray(u_P, dtype=float), np.asarray(v_P, dtype=float)
    if protocol == "inherit":
        return u * u - v * v, u * v
    if protocol == "reset":
        ah = check_positive("alpha_h", alpha_h)
        return u * u - ah * ah, ah * u
    raise ValueError(f"protocol = {protocol!r} must be one of {PROTOCOLS}")


def wrong_finetune_geometry_keep_lambda(u_P: np.ndarray, v_P: np.ndarray, protocol: str,
                                        alpha_h: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Wrong: the head reset moves the start but keeps the pretrained lam = u_P^2 - v_P^2."""
    lam, b0 = finetune_geometry(u_P, v_P, protocol, alpha_h)
    return np.asarray(u_P) ** 2 - np.asarray(v_P) ** 2, b0


def wrong_finetune_geometry_forget(u_P: np.ndarray, v_P: np.ndarray, protocol: str,
                                   alpha_h: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Wrong: fine-tuning forgets pretraining, lam' = u_P^2 - v_P^2 and beta'_0 = 0 (a fresh start)."""
    u, v = np.asarray(u_P, dtype=float), np.asarray(v_P, dtype=float)
    return u * u - v * v, np.zeros_like(u)


def wrong_finetune_geometry_new_scale(u_P: np.ndarray, v_P: np.ndarray, protocol: str,
                                      alpha_h: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Wrong: after a head reset every unused feature (v_P = 0) gets the scale alpha_h^2 and start 0, for
    both signs of lam (true only for lam < 0)."""
    lam, b0 = finetune_geometry(u_P, v_P, protocol, alpha_h)
    unused = np.asarray(v_P) == 0
    if protocol != "reset":
        return lam, b0
    return np.where(unused, alpha_h**2, lam), np.where(unused, 0.0, b0)


def wrong_l2_projection(X: np.ndarray, y: np.ndarray, lam: np.ndarray, b0: np.ndarray) -> tuple[np.ndarray, None]:
    """Wrong (lazy) replacement of the projection: argmin_{Xb=y} |b - b0|_2 (signature of bregman_projection)."""
    X, y, b0 = np.asarray(X, float), np.asarray(y, float), np.asarray(b0, float)
    return b0 + np.linalg.lstsq(X, y - X @ b0, rcond=None)[0], None


def wrong_linearized_projection(X: np.ndarray, y: np.ndarray, lam: np.ndarray,
                          b0: np.ndarray) -> tuple[np.ndarray, None]:
    """Wrong (linearized) replacement: the l2 projection in the metric phi''(b0) = (lam^2 + 4 b0^2)^(-1/2),
    b = b0 + W X^T (X W X^T)^{-1} (y - X b0), W = sqrt(lam^2 + 4 b0^2)."""
    X, y, b0 = np.asarray(X, float), np.asarray(y, float), np.asarray(b0, float)
    w = np.sqrt(np.asarray(lam, float) ** 2 + 4.0 * b0 * b0)
    return b0 + w * (X.T @ np.linalg.solve((X * w) @ X.T, y - X @ b0)), None


def leakage_constant(X: np.ndarray, y: np.ndarray, u2_S: np.ndarray, support: np.ndarray) -> float:
    """C of the leakage law for lam < 0 (Proposition: the leakage law): L(alpha_h) = C alpha_h^2 (1 + O(alpha_h)),
    C = (1/2) sum_{j not in S} |sinh(2 (X^T nu_0)_j)|, nu_0 the multiplier of the projection restricted to S
    with geometry lam_i = u_{P,i}^2 (i in S) and start 0. u2_S: u_P^2 on S, in the order of the columns of S."""
    X, mask = np.asarray(X, dtype=float), np.asarray(support, dtype=bool)
    if mask.shape != (X.shape[1],):
        raise ValueError(f"support of shape {mask.shape} does not match X of shape {X.shape}")
    nu = bregman_projection(X[:, mask], y, u2_S, np.zeros(int(mask.sum())))[1]
    return float(0.5 * np.sum(np.abs(np.sinh(2.0 * (X[:, ~mask].T @ nu)))))


def limit_leakage_positive(X: np.ndarray, y: np.ndarray, u2: np.ndarray, support: np.ndarray) -> float:
    """L_0 of the leakage law for lam > 0: sum_{j not in S} |b_j| for the projection b of 0 with geometry
    lam' = u_P^2 (equal to lam off S), the alpha_h -> 0 limit of the leakage (Proposition: the leakage law)."""
    mask = np.asarray(support, dtype=bool)
    b = bregman_projection(X, y, u2, np.zeros(mask.shape))[0]
    return float(np.sum(np.abs(b[~mask])))


def wrong_leakage_constant_flat(X: np.ndarray, y: np.ndarray, u2_S: np.ndarray, support: np.ndarray) -> float:
    """Wrong: C with nu_0 from the restricted projection in a flat geometry (|lam'| = 1 on S) instead of the
    pretrained u_{P,S}^2: the geometry that pretraining leaves on S forgotten."""
    X, mask = np.asarray(X, dtype=float), np.asarray(support, dtype=bool)
    nu = bregman_projection(X[:, mask], y, np.ones(int(mask.sum())), np.zeros(int(mask.sum())))[1]
    return float(0.5 * np.sum(np.abs(np.sinh(2.0 * (X[:, ~mask].T @ nu)))))


def wrong_limit_leakage_positive_flat(X: np.ndarray, y: np.ndarray, u2: np.ndarray, support: np.ndarray) -> float:
    """Wrong: L_0 with one scale lam for every feature (the pretrained u_{P,S}^2 on S forgotten)."""
    mask = np.asarray(support, dtype=bool)
    lam = float(np.min(np.asarray(u2, dtype=float)[~mask]))
    b = bregman_projection(X, y, np.full(mask.shape, lam), np.zeros(mask.shape))[0]
    return float(np.sum(np.abs(b[~mask])))
