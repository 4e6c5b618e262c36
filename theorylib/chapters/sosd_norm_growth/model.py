"""The model of chapter 'sosd-norm-growth': spectra, the aligned model and scale-invariant SGD.

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``. Everything is float64.
"""

from __future__ import annotations

import numpy as np

from theorylib.core.validation import check_array, check_int, check_positive, check_positive_int, check_real

# ---------------------------------------------------------------- spectra


def trace_normalized_spectrum(W: np.ndarray) -> np.ndarray:
    """p(W) = sigma(W)^2 / ||W||_F^2 (sorted decreasingly), batched over leading dimensions."""
    W = np.asarray(W, dtype=float)
    if W.ndim < 2:
        raise ValueError(f"W must be a matrix (or a batch of matrices), got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError("W must be finite")
    s = np.linalg.svd(W, compute_uv=False)
    tot = np.sum(s**2, axis=-1, keepdims=True)
    if np.any(tot == 0):
        raise ValueError("p(W) is undefined for W = 0")
    return s**2 / tot


def sqrt_spectrum(W: np.ndarray) -> np.ndarray:
    """sqrt p(W) = sigma(W) / ||W||_F (a unit vector; sorted decreasingly)."""
    W = np.asarray(W, dtype=float)
    if W.ndim < 2 or not np.all(np.isfinite(W)):
        raise ValueError("W must be a finite matrix (or a batch of matrices)")
    s = np.linalg.svd(W, compute_uv=False)
    nrm = np.linalg.norm(s, axis=-1, keepdims=True)
    if np.any(nrm == 0):
        raise ValueError("p(W) is undefined for W = 0")
    return s / nrm


def hellinger(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """H(p, q) = ||sqrt p - sqrt q||_2 / sqrt 2 (difference form: no cancellation for close p, q)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p.shape != q.shape or np.any(p < 0) or np.any(q < 0):
        raise ValueError("hellinger needs two non-negative arrays of one shape")
    return np.linalg.norm(np.sqrt(p) - np.sqrt(q), axis=-1) / np.sqrt(2.0)


def spectral_variation(W0: np.ndarray, W1: np.ndarray) -> np.ndarray:
    """V(W0, W1) = ||sqrt p(W1) - sqrt p(W0)||_2, batched."""
    return np.linalg.norm(sqrt_spectrum(W1) - sqrt_spectrum(W0), axis=-1)


def angle(W0: np.ndarray, W1: np.ndarray) -> np.ndarray:
    """angle(W0, W1) = atan2(||W1 - <W1, What0> What0||, <W1, What0>), batched over leading dims."""
    W0, W1 = np.asarray(W0, dtype=float), np.asarray(W1, dtype=float)
    if W0.shape != W1.shape or W0.ndim < 2:
        raise ValueError("angle needs two matrices (or batches) of one shape")
    n0 = np.sqrt(np.sum(W0**2, axis=(-2, -1), keepdims=True))
    if np.any(n0 == 0):
        raise ValueError("angle is undefined for W0 = 0")
    u = W0 / n0
    par = np.sum(W1 * u, axis=(-2, -1), keepdims=True)
    perp = np.sqrt(np.sum((W1 - par * u) ** 2, axis=(-2, -1)))
    return np.arctan2(perp, par[..., 0, 0])


def fro(W: np.ndarray) -> np.ndarray:
    """Frobenius norm over the last two axes."""
    return np.sqrt(np.sum(np.asarray(W) ** 2, axis=(-2, -1)))


def random_orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-distributed n x n orthogonal matrix (QR of a Gaussian matrix with the sign fix)."""
    n = check_positive_int("n", n)
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


# ---------------------------------------------------------------- the aligned model


def aligned_problem(s0: np.ndarray, s_star: np.ndarray, kappa: float,
                    rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """Teacher W* = U diag(s*) V^T, start W_0 = U diag(s0) V^T (shared random singular vectors).

    s0, s* positive and sorted decreasingly (so that no singular values cross); alpha = ||W*||_F and the
    step eta = kappa ||W_0||^2 / alpha^2 with kappa in (0, 1] (no overshoot past W*).
    """
    s0 = check_array("s0", s0, ndim=1)
    s_star = check_array("s_star", s_star, ndim=1, shape=s0.shape)
    kappa = check_real("kappa", kappa, low=0.0, high=1.0)
    if kappa <= 0:
        raise ValueError("kappa must be > 0")
    for name, s in (("s0", s0), ("s_star", s_star)):
        if np.any(s <= 0) or np.any(np.diff(s) > 0):
            raise ValueError(f"{name} must be positive and sorted decreasingly")
    r = s0.size
    U, V = random_orthogonal(r, rng), random_orthogonal(r, rng)
    W0 = (U * s0) @ V.T
    W_star = (U * s_star) @ V.T
    alpha = float(np.linalg.norm(s_star))
    eta = kappa * float(np.sum(s0**2)) / alpha**2
    return {"W0": W0, "W_star": W_star, "alpha": alpha, "eta": eta, "s0": s0, "s_star": s_star}


def aligned_loss(W: np.ndarray, W_star: np.ndarray, alpha: float) -> float:
    """L(W) = 1/2 ||alpha W / ||W||_F - W*||_F^2 (whitened inputs: the population loss)."""
    return 0.5 * float(np.sum((alpha * W / fro(W) - W_star) ** 2))


def aligned_grad(W: np.ndarray, W_star: np.ndarray, alpha: float) -> np.ndarray:
    """grad L(W) = -(alpha / ||W||) (W* - <W*, What> What) (chain rule through W / ||W||)."""
    n = fro(W)
    u = W / n
    return -(alpha / n) * (W_star - np.sum(W_star * u) * u)


def aligned_gd(problem: dict, T: int) -> dict[str, np.ndarray]:
    """Full-batch GD W_{t+1} = W_t - eta grad L(W_t) for T steps; every step measured from the matrices.

    Returns sqrt_p (T+1, r) from SVDs, loss (T+1,), norm (T+1,) and H_star (T+1,) = H(p_t, p*).
    """
    T = check_positive_int("T", T)
    W, W_star, alpha, eta = problem["W0"].copy(), problem["W_star"], problem["alpha"], problem["eta"]
    r = W.shape[0]
    sq = np.empty((T + 1, r))
    loss, norm = np.empty(T + 1), np.empty(T + 1)
    for t in range(T + 1):
        sq[t] = sqrt_spectrum(W)
        loss[t] = aligned_loss(W, W_star, alpha)
        norm[t] = fro(W)
        if t < T:
            W = W - eta * aligned_grad(W, W_star, alpha)
    sq_star = sqrt_spectrum(W_star)
    H_star = np.linalg.norm(sq - sq_star, axis=1) / np.sqrt(2.0)
    return {"sqrt_p": sq, "loss": loss, "norm": norm, "H_star": H_star}


def aligned_spectra(r: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random start and teacher singular values, each sorted decreasingly: s0 ~ U(0.5, 1.5), s* ~ Exp(1)."""
    r = check_int("r", r, low=2)
    s0 = np.sort(rng.uniform(0.5, 1.5, r))[::-1].copy()
    s_star = np.sort(rng.exponential(1.0, r))[::-1].copy()
    return s0, s_star


def aligned_start(problem: dict) -> tuple[float, float]:
    """The initial state of the 2-D description: (R_0 = ||W_0||^2, phi_0 = angle(W_0, W*))."""
    W0, W_star = problem["W0"], problem["W_star"]
    return float(fro(W0) ** 2), float(angle(W0, W_star))


# ---------------------------------------------------------------- scale-invariant SGD (noise model)


def unit_point_grad(W: np.ndarray, X: np.ndarray, Y: np.ndarray, alpha: float) -> np.ndarray:
    """The minibatch gradient of L_B(W) = 1/(2B) sum_i ||alpha What x_i - y_i||^2 at the unit point.

    Batched: W (S, d, d), X, Y (S, B, d). Returns G_perp = G - <G, What> What with
    G = (alpha / B) sum_i (alpha What x_i - y_i) x_i^T; the gradient at W itself is G_perp / ||W||.
    """
    n = fro(W)[:, None, None]
    u = W / n
    B = X.shape[1]
    E = alpha * np.einsum("sij,sbj->sbi", u, X) - Y
    G = (alpha / B) * np.einsum("sbi,sbj->sij", E, X)
    return G - np.sum(G * u, axis=(1, 2))[:, None, None] * u


def scale_invariant_sgd(W0: np.ndarray, T: int, eta: float, lam: float, alpha: float, B: int,
                        rng: np.random.Generator, *, muon: bool = False) -> dict[str, np.ndarray]:
    """SGD with decoupled weight decay on the pure-noise normalised regression, S runs at once.

    x ~ N(0, I_d), y ~ N(0, I_d) independent of x (teacher 0): the population loss is constant on the
    sphere and only gradient noise moves What. Update W' = (1 - eta lam) W - eta g, g = G_perp / ||W||
    (or, with ``muon``, W' = (1 - eta lam) W - eta polar(g), polar(g) = U_k V_k^T over the k nonzero
    singular values of g).
    Measured per step t < T and run: R (T+1, S) = ||W_t||^2, ghat2 = ||G_perp||^2,
    tan = tan angle(W_t, W_{t+1}), step = ||W_{t+1} - W_t||_F; V (T, S) spectral variation (only with
    ``muon``); W_final.
    """
    W = check_array("W0", W0, ndim=3).copy()
    T, B = check_positive_int("T", T), check_positive_int("B", B)
    eta, alpha = check_positive("eta", eta), check_positive("alpha", alpha)
    lam = check_real("lam", lam, low=0.0)
    if eta * lam >= 1:
        raise ValueError(f"eta * lam = {eta * lam} must be < 1")
    S, d, _ = W.shape
    c = 1.0 - eta * lam
    R = np.empty((T + 1, S))
    ghat2, tan, step = np.empty((T, S)), np.empty((T, S)), np.empty((T, S))
    V = np.empty((T, S)) if muon else None
    R[0] = fro(W) ** 2
    for t in range(T):
        X = rng.standard_normal((S, B, d))
        Y = rng.standard_normal((S, B, d))
        Gp = unit_point_grad(W, X, Y, alpha)
        ghat2[t] = np.sum(Gp**2, axis=(1, 2))
        g = Gp / np.sqrt(R[t])[:, None, None]
        if muon:
            u, sv, vt = np.linalg.svd(g)
            keep = sv > 1e-8 * sv[:, :1]  # the rank of g (at most B + 1): zero directions stay zero
            g = (u * keep[:, None, :]) @ vt
        W_new = c * W - eta * g
        R[t + 1] = fro(W_new) ** 2
        tan[t] = np.tan(angle(W, W_new))
        step[t] = fro(W_new - W)
        if muon:
            V[t] = spectral_variation(W, W_new)
        W = W_new
    out = {"R": R, "ghat2": ghat2, "tan": tan, "step": step, "W_final": W}
    if muon:
        out["V"] = V
    return out


def gaussian_start(S: int, d: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """S iid Gaussian d x d matrices rescaled to Frobenius norm ``scale`` (a uniform direction on the sphere)."""
    S, d = check_positive_int("S", S), check_int("d", d, low=2)
    scale = check_positive("scale", scale)
    W = rng.standard_normal((S, d, d))
    return scale * W / fro(W)[:, None, None]


def autograd_sgd(W0: np.ndarray, T: int, eta: float, lam: float, alpha: float, B: int,
                 rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The noise model's SGD with every gradient taken by reverse-mode autodiff (torch, float64).

    The minibatch loss L_B(W) = 1/(2B) sum_i ||alpha W x_i / ||W||_F - y_i||^2 is differentiated in the raw
    W, with no use of its scale invariance: orthogonality to W and the 1/||W|| scaling of the gradient are
    not built in. ghat_t^2 is the squared norm of a second autodiff gradient, taken at W_t / ||W_t||.
    Update W' = (1 - eta lam) W - eta g. Measured: R (T+1, S) = ||W_t||^2, ghat2 (T, S),
    tan (T, S) = tan angle(W_t, W_{t+1}), radial (T, S) = |<g_t, W_t>| / (||g_t|| ||W_t||).
    """
    import torch

    W = check_array("W0", W0, ndim=3).copy()
    T, B = check_positive_int("T", T), check_positive_int("B", B)
    eta, alpha = check_positive("eta", eta), check_positive("alpha", alpha)
    lam = check_real("lam", lam, low=0.0)
    if eta * lam >= 1:
        raise ValueError(f"eta * lam = {eta * lam} must be < 1")
    S, d, _ = W.shape

    def grad(Wnp: np.ndarray, X: torch.Tensor, Y: torch.Tensor) -> np.ndarray:
        Wt = torch.tensor(Wnp, dtype=torch.float64, requires_grad=True)
        n = torch.sqrt(torch.sum(Wt**2, dim=(1, 2)))[:, None, None]
        out = alpha * torch.einsum("sij,sbj->sbi", Wt / n, X)
        loss = torch.sum((out - Y) ** 2) / (2 * B)  # runs are independent: their losses add
        (g,) = torch.autograd.grad(loss, Wt)
        return g.numpy()

    c = 1.0 - eta * lam
    R = np.empty((T + 1, S))
    ghat2, tan, radial = np.empty((T, S)), np.empty((T, S)), np.empty((T, S))
    R[0] = fro(W) ** 2
    for t in range(T):
        X = torch.from_numpy(rng.standard_normal((S, B, d)))
        Y = torch.from_numpy(rng.standard_normal((S, B, d)))
        g = grad(W, X, Y)
        ghat2[t] = fro(grad(W / np.sqrt(R[t])[:, None, None], X, Y)) ** 2
        radial[t] = np.abs(np.sum(g * W, axis=(1, 2))) / (fro(g) * np.sqrt(R[t]))
        W_new = c * W - eta * g
        R[t + 1] = fro(W_new) ** 2
        tan[t] = np.tan(angle(W, W_new))
        W = W_new
    return {"R": R, "ghat2": ghat2, "tan": tan, "radial": radial, "W_final": W}
