"""The theory of chapter 'diffusion-splits-rmt': deterministic equivalents for linear diffusion models
trained on disjoint data splits, and the named wrong theories (``wrong_...``).

Reference: B. Wang, J. Zavatone-Veth, C. Pehlevan, *A Random Matrix Theory Perspective on the
Consistency of Diffusion Models*, arXiv:2602.02908 (2026); the renormalised-ridge language follows
A. Atanasov, J. Zavatone-Veth, C. Pehlevan, *Scaling and renormalization in high-dimensional
regression*, arXiv:2405.00592.

Setting. Data x_1..x_n iid N(0, Sigma), Sigma = diag(s) (rotation invariance), known zero mean.
Sigma_hat = X^T X / n, R(lam) = (Sigma_hat + lam)^{-1}. The optimal linear denoiser learned at noise
sigma^2 is D_hat(y) = Sigma_hat (Sigma_hat + sigma^2)^{-1} y.

The renormalised noise kappa = kappa(lam) is the unique root kappa > max(lam, kappa_0) of

    kappa = lam + (kappa / n) df1(kappa),   df1(k) = sum_i s_i/(s_i+k),  df2(k) = sum_i s_i^2/(s_i+k)^2,

kappa_0 = 0 if d <= n and df1(kappa_0) = n if d > n. First order: E[lam R(lam)] ~ kappa (Sigma+kappa)^{-1}.
Second order (A fixed, bounded): lam^2 E[R A R] ~ kappa^2 (Sigma+kappa)^{-1} A (Sigma+kappa)^{-1}
+ kappa^2 [tr(A Sigma (Sigma+kappa)^{-2})/n] / (1 - df2/n) (Sigma+kappa)^{-1} Sigma (Sigma+kappa)^{-1}.

Pure functions, no random numbers. Every claim reads its predictions from this module; a wrong theory
has the signature of the function it replaces and reaches a claim as
``theory=variant(theory, kappa=theory.wrong_kappa_unrenormalized)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import integrate, optimize

from theorylib.core.validation import check_array, check_positive, check_positive_int, check_real

ArrayLike = np.ndarray | Sequence[float] | float


def _spectrum(s: ArrayLike) -> np.ndarray:
    """The population spectrum as a 1-D array, finite and > 0 (Sigma positive definite)."""
    s = check_array("s", s, ndim=1)
    if s.size == 0 or np.any(s <= 0):
        raise ValueError("the spectrum s must be non-empty and > 0 (Sigma positive definite)")
    return s


def _check_ab(a: float, b: float) -> None:
    if not (np.isfinite(a) and np.isfinite(b) and 0 < a < b):
        raise ValueError(f"need 0 < a < b (a = sigma_min^2, b = sigma_max^2), got a = {a!r}, b = {b!r}")


# --------------------------------------------------------------------------------------------------
# degrees of freedom and the renormalised noise


def df1(kappa: ArrayLike, s: ArrayLike) -> np.ndarray | float:
    """df1(kappa) = tr Sigma (Sigma + kappa)^{-1} (vectorised over kappa)."""
    s = _spectrum(s)
    k = np.asarray(kappa, dtype=float)
    out = np.sum(s / (s + k[..., None]), axis=-1)
    return float(out) if out.ndim == 0 else out


def df2(kappa: ArrayLike, s: ArrayLike) -> np.ndarray | float:
    """df2(kappa) = tr Sigma^2 (Sigma + kappa)^{-2} (vectorised over kappa)."""
    s = _spectrum(s)
    k = np.asarray(kappa, dtype=float)
    out = np.sum((s / (s + k[..., None])) ** 2, axis=-1)
    return float(out) if out.ndim == 0 else out


def kappa(lam: float, s: ArrayLike, n: int) -> float:
    """The renormalised noise kappa(lam): unique root of kappa = lam + kappa df1(kappa)/n above kappa_0.

    Bracket [lam, lam + tr(Sigma)/n] is exact (kappa s/(s+kappa) <= s). For lam = 0: 0 if d <= n, else
    the root of df1(kappa) = n on (0, tr(Sigma)/n].
    """
    s = _spectrum(s)
    n = check_positive_int("n", n)
    lam = check_real("lam", lam, low=0.0)
    d = s.size
    top = lam + s.sum() / n
    if lam == 0.0:
        if d <= n:
            return 0.0
        return float(optimize.brentq(lambda k: np.sum(s / (s + k)) - n, 1e-300, top, xtol=1e-300, rtol=1e-15,
                                     maxiter=500))
    f = lambda k: k - lam - k * np.sum(s / (s + k)) / n  # noqa: E731
    if f(top) <= 0:  # only when lam dominates to machine precision
        return float(top)
    return float(optimize.brentq(f, lam, top, xtol=1e-300, rtol=1e-15, maxiter=500))


def kappa_vec(lams: ArrayLike, s: ArrayLike, n: int) -> np.ndarray:
    """:func:`kappa` at each lam of ``lams``."""
    lams = np.asarray(lams, dtype=float)
    return np.array([kappa(float(v), s, n) for v in lams.ravel()]).reshape(lams.shape)


def mp_kappa_isotropic(lam: ArrayLike, gamma: float) -> np.ndarray | float:
    """Closed form for Sigma = I (Marchenko-Pastur): kappa = [(lam+gamma-1) + sqrt((1-lam-gamma)^2 + 4 lam)]/2."""
    gamma = check_positive("gamma", gamma)
    lam = np.asarray(lam, dtype=float)
    if np.any(lam < 0):
        raise ValueError("need lam >= 0")
    out = 0.5 * ((lam + gamma - 1) + np.sqrt((1 - lam - gamma) ** 2 + 4 * lam))
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------------------------------
# first and second order


def predicted_mean_shrinkage(s: ArrayLike, kap: ArrayLike) -> np.ndarray:
    """Deterministic equivalent of diag E[lam R(lam)] in the Sigma eigenbasis: kappa/(s + kappa)."""
    s = _spectrum(s)
    return np.asarray(kap, dtype=float) / (s + np.asarray(kap, dtype=float))


def amplification(s: ArrayLike, kap: float, n: int) -> float:
    """The second-order amplification 1/(1 - df2(kappa)/n) (finite at the renormalised noise)."""
    n = check_positive_int("n", n)
    den = 1.0 - df2(kap, s) / n
    if den <= 0:
        raise ValueError("1 - df2/n <= 0: kappa is not the renormalised noise of this (s, n)")
    return 1.0 / den


def _fluct_scale(s: np.ndarray, kap: float, y: ArrayLike, n: int, amplify: bool) -> float:
    y = np.asarray(y, dtype=float)
    if y.shape != s.shape:
        raise ValueError(f"input y must have shape {s.shape}, got {y.shape}")
    n = check_positive_int("n", n)
    q = float(np.sum(s * y**2 / (s + kap) ** 2)) / n
    return kap**2 * q * (amplification(s, kap, n) if amplify else 1.0)


def fluct_scale(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> float:
    """c(y) = kappa^2 (y^T Sigma (Sigma+kappa)^{-2} y / n) / (1 - df2(kappa)/n)."""
    return _fluct_scale(_spectrum(s), kap, y, n, amplify=True)


def predicted_cov_diag(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """diag Cov_data(D_hat(y)) ~ c(y) s/(s+kappa)^2 (Theorem 2 with A = y y^T / |y|^2, c homogeneous)."""
    s = _spectrum(s)
    return fluct_scale(s, kap, y, n) * s / (s + kap) ** 2


def predicted_disagreement(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> float:
    """E|D1(y) - D2(y)|^2 for two independent splits = 2 c(y) tr Sigma (Sigma+kappa)^{-2}."""
    return 2.0 * float(np.sum(predicted_cov_diag(s, kap, y, n)))


def split_pair_disagreement(total_variance: ArrayLike) -> np.ndarray:
    """E|D1(y) - D2(y)|^2 = 2 tr Cov_data D_hat(y) for two independent splits, exactly, at any n."""
    return 2.0 * np.asarray(total_variance, dtype=float)


def ridge_bias_formula(s: ArrayLike, kap: float, n: int) -> np.ndarray:
    """Classical ridge bias matrix (diag): kappa^2 Sigma (Sigma+kappa)^{-2} / (1 - df2/n)."""
    s = _spectrum(s)
    return kap**2 * s / (s + kap) ** 2 / (1 - df2(kap, s) / n)


def second_order_equivalent(s: ArrayLike, kap: float, A: np.ndarray, n: int) -> np.ndarray:
    """lam^2 E[R A R] ~ kappa^2 G A G + kappa^2 [tr(A Sigma G^2)/n]/(1-df2/n) G Sigma G, G = (Sigma+kappa)^{-1}."""
    s = _spectrum(s)
    A = np.asarray(A, dtype=float)
    if A.shape != (s.size, s.size):
        raise ValueError(f"A must be {s.size}x{s.size}, got {A.shape}")
    g = 1.0 / (s + kap)
    t = float(np.sum(np.diag(A) * s * g**2)) / n
    return kap**2 * (g[:, None] * A * g[None, :]) + kap**2 * t / (1 - df2(kap, s) / n) * np.diag(s * g**2)


def rankone_relative(s: ArrayLike, y: ArrayLike, sigma2: float) -> float:
    """Fixed-d delta method: the rank-one term y^T Sigma^2 G^4 y relative to (y^T Sigma G^2 y) tr(Sigma G^2),
    G = (Sigma + sigma^2)^{-1}; the deterministic equivalent drops it (an O(1/d) share of the disagreement)."""
    s = _spectrum(s)
    y = np.asarray(y, dtype=float)
    sigma2 = check_positive("sigma2", sigma2)
    g = 1.0 / (s + sigma2)
    return float(np.sum(s**2 * g**4 * y**2) / (np.sum(s * g**2 * y**2) * np.sum(s * g**2)))


# --------------------------------------------------------------------------------------------------
# fractional powers


def stieltjes_sqrt_ratio(x: ArrayLike, a: float, b: float) -> np.ndarray:
    """sqrt((x+a)/(x+b)) = 1 - (1/pi) int_a^b sqrt((t-a)/(b-t)) dt/(x+t), by quadrature (t = a+(b-a) sin^2 u).

    The Balakrishnan-type integral identity behind :func:`sampling_map_detequiv`; vectorised over x >= 0.
    """
    x = np.asarray(x, dtype=float)
    _check_ab(a, b)

    def f(u: float) -> np.ndarray:
        t = a + (b - a) * np.sin(u) ** 2
        return 2 * (b - a) * np.sin(u) ** 2 / (x + t)

    val, _ = integrate.quad_vec(f, 0.0, np.pi / 2, epsabs=0, epsrel=1e-13)
    return 1.0 - val / np.pi


def sampling_map_detequiv(s: ArrayLike, n: int, a: float, b: float) -> np.ndarray:
    """Deterministic equivalent of diag E[M_hat], M_hat = (Sigma_hat + a)^{1/2} (Sigma_hat + b)^{-1/2}:

    1 - (1/pi) int_a^b sqrt((t-a)/(b-t)) (kappa(t)/t) / (s + kappa(t)) dt   (t = a + (b-a) sin^2 u).
    """
    s = _spectrum(s)
    n = check_positive_int("n", n)
    _check_ab(a, b)

    def f(u: float) -> np.ndarray:
        t = a + (b - a) * np.sin(u) ** 2
        k = kappa(t, s, n)
        return 2 * (b - a) * np.sin(u) ** 2 * (k / t) / (s + k)

    u_knee = float(np.arcsin(np.sqrt(min(1.0, 10 * a / (b - a)))))
    val, _ = integrate.quad_vec(f, 0.0, np.pi / 2, epsabs=0, epsrel=1e-10, points=[u_knee])
    return 1.0 - val / np.pi


def sqrt_detequiv(s: ArrayLike, n: int) -> np.ndarray:
    """Deterministic equivalent of diag E[Sigma_hat^{1/2}] = (2/pi) int_0^inf Sigma (Sigma + kappa(u^2))^{-1} du.

    Computed with u = tan(theta) on [0, pi/2).
    """
    s = _spectrum(s)
    n = check_positive_int("n", n)

    def f(th: float) -> np.ndarray:
        if th >= np.pi / 2:
            return np.zeros_like(s)
        u = np.tan(th)
        k = kappa(u * u, s, n)
        return s / (s + k) / np.cos(th) ** 2

    val, _ = integrate.quad_vec(f, 0.0, np.pi / 2, epsabs=0, epsrel=1e-10)
    return 2.0 / np.pi * val


# --------------------------------------------------------------------------------------------------
# the named wrong theories (each has the signature of the function it replaces)


def wrong_kappa_unrenormalized(lam: float, s: ArrayLike, n: int) -> float:
    """WRONG (C1, C2): kappa = lam (no renormalization; the population denoiser at the nominal noise)."""
    return float(lam)


def wrong_kappa_ridgeless(lam: float, s: ArrayLike, n: int) -> float:
    """WRONG (C1): kappa = lam/(1 - d/n) (the small-lam isotropic answer applied at every lam and spectrum)."""
    d = np.asarray(s).size
    if d >= n:
        raise ValueError("the ridgeless guess needs d < n")
    return float(lam) / (1 - d / n)


def wrong_kappa_naive(lam: float, s: ArrayLike, n: int) -> float:
    """WRONG (C1): kappa = lam + tr(Sigma)/n (the bracket's upper end)."""
    return float(lam) + float(np.sum(s)) / n


def wrong_kappa_per_mode(lam: float, s: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C1): a separate kappa_i per mode, kappa_i = lam + kappa_i s_i/(n(s_i+kappa_i))."""
    s = _spectrum(s)
    lam = check_real("lam", lam, low=0.0)
    # kappa_i^2 + kappa_i (s_i - lam - s_i/n) - lam s_i = 0, positive root
    b = s - lam - s / n
    return 0.5 * (-b + np.sqrt(b * b + 4 * lam * s))


def wrong_cov_diag_no_amplification(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C2): drops the factor 1/(1 - df2/n)."""
    s = _spectrum(s)
    return _fluct_scale(s, kap, y, n, amplify=False) * s / (s + kap) ** 2


def wrong_cov_diag_input_blind(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C2, no inhomogeneity): c(y) with y^T Sigma G^2 y replaced by its isotropic average
    |y|^2 tr(Sigma G^2)/d."""
    s = _spectrum(s)
    y = np.asarray(y, dtype=float)
    y_iso = np.full_like(s, np.sqrt(np.sum(y**2) / s.size))
    return predicted_cov_diag(s, kap, y_iso, n)


def wrong_cov_diag_isotropic_profile(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C2 profile, no anisotropy): the right total variance spread equally over the modes."""
    s = _spectrum(s)
    tot = float(np.sum(predicted_cov_diag(s, kap, y, n)))
    return np.full_like(s, tot / s.size)


def wrong_split_pair_disagreement(total_variance: ArrayLike) -> np.ndarray:
    """WRONG (C2 pairs): two independent splits disagree by V instead of 2V."""
    return np.asarray(total_variance, dtype=float)


def wrong_disagreement_inverse_sqrt_n(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> float:
    """WRONG (C3): fluctuations of order n^{-1/2}, E|D1 - D2|^2 proportional to n^{-1/2} (slope -1/2)."""
    return float(check_positive_int("n", n)) ** -0.5


def wrong_disagreement_inverse_n(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> float:
    """WRONG (C3): the pure 1/n law at fixed d, E|D1 - D2|^2 proportional to 1/n (slope -1, no curvature)."""
    return 1.0 / check_positive_int("n", n)


def wrong_sampling_map_plugin(s: ArrayLike, n: int, a: float, b: float) -> np.ndarray:
    """WRONG (C4): the population map sqrt((s+a)/(s+b)), ignoring kappa."""
    s = _spectrum(s)
    _check_ab(a, b)
    return np.sqrt((s + a) / (s + b))


def wrong_sqrt_plugin(s: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C4): the population square root sqrt(s), ignoring kappa."""
    return np.sqrt(_spectrum(s))
