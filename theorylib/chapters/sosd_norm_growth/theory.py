"""The theory of chapter 'sosd-norm-growth': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. Every claim reads its prediction from this module; a wrong
theory ``wrong_...`` has the signature of the function it replaces and is passed to a claim as
``theory=variant(theory, f=theory.wrong_f)``.

Notation: a weight matrix W with R = ||W||_F^2, the unit direction What = W / ||W||_F, scale-invariant
SGD with decoupled weight decay W' = (1 - eta lam) W - eta g, g = grad L_B(W), and ghat = ||g|| ||W||
the gradient norm at the unit-norm point (Zhang et al., 2026, the two-phase analysis).
"""

from __future__ import annotations

import numpy as np

from theorylib.core.validation import check_positive, check_positive_int, check_real

# ---------------------------------------------------------------- scale-invariant SGD (norm growth)


def next_sq_norm(R: np.ndarray, ghat2: np.ndarray, eta: float, lam: float) -> np.ndarray:
    """||W_{t+1}||^2 = (1 - eta lam)^2 ||W_t||^2 + eta^2 ghat_t^2 / ||W_t||^2 (exact; <g, W> = 0)."""
    c = 1.0 - eta * lam
    return c**2 * np.asarray(R) + eta**2 * np.asarray(ghat2) / np.asarray(R)


def wrong_next_sq_norm(R: np.ndarray, ghat2: np.ndarray, eta: float, lam: float) -> np.ndarray:
    """Gradient-flow intuition: the norm is conserved up to weight decay, (1 - eta lam)^2 R."""
    return (1.0 - eta * lam) ** 2 * np.asarray(R) + 0.0 * np.asarray(ghat2)


def wrong_coupled_next_sq_norm(R: np.ndarray, ghat2: np.ndarray, eta: float, lam: float) -> np.ndarray:
    """Coupled-L2 bookkeeping: (1 - 2 eta lam) R + eta^2 ghat^2 / R (drops the (eta lam)^2 R term)."""
    return (1.0 - 2.0 * eta * lam) * np.asarray(R) + eta**2 * np.asarray(ghat2) / np.asarray(R)


def angular_step_tan(R: np.ndarray, ghat2: np.ndarray, eta: float, lam: float) -> np.ndarray:
    """tan(angle(W_t, W_{t+1})) = eta ghat_t / ((1 - eta lam) ||W_t||^2) (exact)."""
    return eta * np.sqrt(np.asarray(ghat2)) / ((1.0 - eta * lam) * np.asarray(R))


def wrong_angular_step_tan(R: np.ndarray, ghat2: np.ndarray, eta: float, lam: float) -> np.ndarray:
    """The step measured against ||W|| instead of ||W||^2: eta ghat / ((1 - eta lam) ||W||)."""
    return eta * np.sqrt(np.asarray(ghat2)) / ((1.0 - eta * lam) * np.sqrt(np.asarray(R)))


def spectral_budget(norm0: float, normT: float) -> float:
    """lam = 0: sum_t V_t^2 <= sum_t ||What_{t+1} - What_t||^2 <= 2 log(||W_T|| / ||W_0||)."""
    return 2.0 * float(np.log(normT / norm0))


def wrong_spectral_budget(norm0: float, normT: float) -> float:
    """The budget without its factor 2: log(||W_T|| / ||W_0||)."""
    return float(np.log(normT / norm0))


def norm_growth_exponent() -> float:
    """lam = 0, stationary noise power: ||W_t||^4 = 2 eta^2 m_g t (1 + o(1)), so ||W_t|| ~ t^{1/4}."""
    return 1.0 / 4.0


def wrong_norm_growth_exponent() -> float:
    """Random-walk growth of unconstrained weights: ||W_t|| ~ t^{1/2}."""
    return 1.0 / 2.0


def equilibrium_log_sec2(eta: float, lam: float) -> float:
    """lam > 0: the time average of log(1 + tan^2 dtheta_t) tends to -2 log(1 - eta lam) (identity (c))."""
    return -2.0 * float(np.log1p(-eta * lam))


def wrong_equilibrium_log_sec2(eta: float, lam: float) -> float:
    """The SoSD scale read as sqrt(eta lam) per step: mean log sec^2 = eta lam (a factor 2 off)."""
    return float(eta * lam)


def invariance_norm_scale(c: float) -> float:
    """(W_0, eta, lam) -> (sqrt(c) W_0, c eta, lam / c) maps W_t to sqrt(c) W_t (same directions)."""
    return float(np.sqrt(c))


def wrong_invariance_norm_scale(c: float) -> float:
    """The norm scales like the learning rate: W_t -> c W_t."""
    return float(c)


# ---------------------------------------------------------------- the aligned model (loss vs spectrum)


def aligned_recursion(R0: float, phi0: float, eta: float, alpha: float, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact 2-D dynamics of full-batch GD on L(W) = 1/2 ||alpha What - W*||^2, alpha = ||W*||_F.

    tan dphi_t = eta alpha^2 sin(phi_t) / R_t, phi_{t+1} = phi_t - dphi_t, R_{t+1} = R_t / cos^2(dphi_t).
    Returns (R, phi), each of length T + 1.
    """
    T = check_positive_int("T", T)
    R = np.empty(T + 1)
    phi = np.empty(T + 1)
    R[0], phi[0] = R0, phi0
    for t in range(T):
        dphi = np.arctan(eta * alpha**2 * np.sin(phi[t]) / R[t])
        phi[t + 1] = phi[t] - dphi
        R[t + 1] = R[t] / np.cos(dphi) ** 2
    return R, phi


def wrong_aligned_recursion(R0: float, phi0: float, eta: float, alpha: float,
                            T: int) -> tuple[np.ndarray, np.ndarray]:
    """Gradient-flow (constant-norm) reading: the same angular steps but R_t = R_0 for ever."""
    T = check_positive_int("T", T)
    R = np.full(T + 1, float(R0))
    phi = np.empty(T + 1)
    phi[0] = phi0
    for t in range(T):
        phi[t + 1] = phi[t] - np.arctan(eta * alpha**2 * np.sin(phi[t]) / R0)
    return R, phi


def aligned_spectral_steps(phi: np.ndarray) -> np.ndarray:
    """V_t^2 = ||sqrt p_{t+1} - sqrt p_t||^2 = 4 sin^2(dphi_t / 2) (shared singular vectors, no crossing)."""
    dphi = -np.diff(np.asarray(phi, dtype=float))
    return 4.0 * np.sin(dphi / 2.0) ** 2


def root_loss_ratio(phi: np.ndarray) -> np.ndarray:
    """rho_t = (sqrt L_t - sqrt L_{t+1}) / (alpha H(p_t, p_{t+1})) = cos((phi_t + phi_{t+1})/4) / cos(dphi_t/4)."""
    phi = np.asarray(phi, dtype=float)
    a, b = phi[:-1], phi[1:]
    return np.cos((a + b) / 4.0) / np.cos((a - b) / 4.0)


def root_loss_step_bound(alpha: float, H: np.ndarray) -> np.ndarray:
    """|sqrt L_{t+1} - sqrt L_t| <= alpha H(p_t, p_{t+1}) (Hellinger triangle inequality)."""
    return alpha * np.asarray(H)


def wrong_root_loss_step_bound(alpha: float, H: np.ndarray) -> np.ndarray:
    """The bound with constant 1/2: alpha H / 2."""
    return alpha * np.asarray(H) / 2.0


def loss_from_spectrum(alpha: float, H_star: np.ndarray) -> np.ndarray:
    """L(W) = alpha^2 (1 - <sqrt p, sqrt p*>) = alpha^2 H^2(p, p*) in the aligned model."""
    check_positive("alpha", alpha)
    return alpha**2 * np.asarray(H_star) ** 2


def wrong_loss_from_spectrum(alpha: float, H_star: np.ndarray) -> np.ndarray:
    """The loss read as the total variation scale alpha^2 * 2 H^2 (a factor 2 off)."""
    return 2.0 * alpha**2 * np.asarray(H_star) ** 2


def muon_spectral_bound(step_fro: np.ndarray, norm0: np.ndarray, norm1: np.ndarray) -> np.ndarray:
    """Any update: V(W, W') <= 2 ||W' - W||_F / max(||W||, ||W'||) (Mirsky on the normalised matrices)."""
    check_real("step_fro", float(np.min(step_fro)), low=0.0)
    return 2.0 * np.asarray(step_fro) / np.maximum(norm0, norm1)


def wrong_muon_spectral_bound(step_fro: np.ndarray, norm0: np.ndarray, norm1: np.ndarray) -> np.ndarray:
    """Orthogonalised updates keep the singular distribution frozen: V_t = 0."""
    return 0.0 * np.asarray(step_fro)
