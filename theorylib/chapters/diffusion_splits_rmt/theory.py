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
Two noise levels (lemma): lam mu E[R(lam) A R(mu)] ~ kappa_l kappa_m [G_l A G_m + T_A G_l Sigma G_m],
T_A = (tr(A G_m Sigma G_l)/n) / (1 - tr(Sigma G_l Sigma G_m)/n); its A = I case, integrated twice along the sampling
trajectory, is the disagreement E|M1 z - M2 z|^2 of the samples two independent splits generate from the same z.

Pure functions, no random numbers. Every claim reads its predictions from this module; a wrong theory
has the signature of the function it replaces and reaches a claim as
``theory=variant(theory, kappa=theory.wrong_kappa_unrenormalized)``. Root finding and quadrature (the
numerical method, not the mathematics) are in :mod:`.numerics`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from theorylib.core.validation import check_array, check_positive, check_positive_int, check_real

from . import numerics

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


def df1(kap: float, s: ArrayLike) -> float:
    """df1(kappa) = tr Sigma (Sigma + kappa)^{-1} (no input check: called inside the root finder)."""
    s = np.asarray(s, dtype=float)
    return float(np.sum(s / (s + kap)))


def df2(kap: float, s: ArrayLike) -> float:
    """df2(kappa) = tr Sigma^2 (Sigma + kappa)^{-2} (no input check)."""
    s = np.asarray(s, dtype=float)
    return float(np.sum((s / (s + kap)) ** 2))


def kappa(lam: float, s: ArrayLike, n: int) -> float:
    """The renormalised noise kappa(lam): the unique root above kappa_0 of kappa = lam + kappa df1(kappa)/n.

    Divided by kappa, the equation reads 1 - lam/kappa - df1(kappa)/n = 0, whose left side increases strictly
    on (0, inf); the bracket [lam, lam + tr(Sigma)/n] is exact (kappa s/(s+kappa) <= s). For lam = 0 the
    left side is 1 - df1/n: >= 0 at 0+ when d <= n (then kappa = 0), else its root kappa_0.
    """
    s = _spectrum(s)
    n = check_positive_int("n", n)
    lam = check_real("lam", lam, low=0.0)
    return numerics.increasing_root(lambda k: 1.0 - lam / k - df1(k, s) / n, lam, lam + float(np.sum(s)) / n)


def mp_kappa_isotropic(lam: float, gamma: float) -> float:
    """Closed form for Sigma = I (Marchenko-Pastur): kappa = [(lam+gamma-1) + sqrt((1-lam-gamma)^2 + 4 lam)]/2."""
    gamma = check_positive("gamma", gamma)
    lam = check_real("lam", lam, low=0.0)
    return 0.5 * ((lam + gamma - 1) + float(np.sqrt((1 - lam - gamma) ** 2 + 4 * lam)))


# --------------------------------------------------------------------------------------------------
# first and second order


def predicted_mean_shrinkage(s: ArrayLike, kap: float) -> np.ndarray:
    """Deterministic equivalent of diag E[lam R(lam)] in the Sigma eigenbasis: kappa/(s + kappa)."""
    s = _spectrum(s)
    return kap / (s + kap)


def amplification(s: ArrayLike, kap: float, n: int) -> float:
    """The second-order amplification 1/(1 - df2(kappa)/n) (finite at the renormalised noise)."""
    n = check_positive_int("n", n)
    den = 1.0 - df2(kap, s) / n
    if den <= 0:
        raise ValueError("1 - df2/n <= 0: kappa is not the renormalised noise of this (s, n)")
    return 1.0 / den


def second_order_equivalent(s: ArrayLike, kap: float, A: np.ndarray, n: int) -> np.ndarray:
    """lam^2 E[R A R] ~ kappa^2 G A G + kappa^2 [tr(A Sigma G^2)/n]/(1-df2/n) G Sigma G, G = (Sigma+kappa)^{-1}."""
    s = _spectrum(s)
    A = np.asarray(A, dtype=float)
    if A.shape != (s.size, s.size):
        raise ValueError(f"A must be {s.size}x{s.size}, got {A.shape}")
    g = 1.0 / (s + kap)
    t = float(np.sum(np.diag(A) * s * g**2)) / n
    return kap**2 * (g[:, None] * A * g[None, :]) + kap**2 * t * amplification(s, kap, n) * np.diag(s * g**2)


def predicted_cov_diag(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """diag Cov_data(D_hat(y)) = diag sigma^4 E[R y y^T R] - (sigma^2 E[R] y)^2 (Theorem 2 with A = y y^T minus
    the square of Theorem 1); it is c(y) s/(s+kappa)^2, c(y) = kappa^2 (y^T Sigma G^2 y/n)/(1 - df2/n)."""
    s = _spectrum(s)
    y = np.asarray(y, dtype=float)
    if y.shape != s.shape:
        raise ValueError(f"input y must have shape {s.shape}, got {y.shape}")
    second = np.diag(second_order_equivalent(s, kap, np.outer(y, y), n))
    return second - (predicted_mean_shrinkage(s, kap) * y) ** 2


def rankone_term(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """The rank-one part of Cov_data(D_hat(y)) (Theorem 2): kappa^2 u u^T / (n (1 - df2/n)), u = Sigma G^2 y,
    returned as the vector w with w w^T equal to it.

    It is invisible in the trace (O(1/d) of c(y) tr Sigma G^2) but along the input v = y/|y| it equals the bulk
    term c(y) v^T G Sigma G v, so the variance there is twice the bulk's. At fixed d it is sigma^4 u u^T/n."""
    s = _spectrum(s)
    y = np.asarray(y, dtype=float)
    if y.shape != s.shape:
        raise ValueError(f"input y must have shape {s.shape}, got {y.shape}")
    g = 1.0 / (s + check_positive("kappa", kap))
    return kap * s * g**2 * y * np.sqrt(amplification(s, kap, n) / n)


def centered_mean_term(s: ArrayLike, kap: float, n: int, n_samples: int) -> np.ndarray:
    """diag of the centered model's extra covariance sigma^4 E[R Sigma R]/N: the dataset mean xbar ~ N(0, Sigma/N) of
    N samples enters the learned denoiser as sigma^2 R xbar, R the resolvent of the centered covariance (the law of
    Sigma_hat from n = N - 1 rows). By Theorem 2 with A = Sigma it is kappa^2 s (s+kappa)^{-2} / (N (1 - df2/n))."""
    n_samples = check_positive_int("n_samples", n_samples)
    return np.diag(second_order_equivalent(s, kap, np.diag(_spectrum(s)), n)) / n_samples


def split_pair_disagreement(total_variance: ArrayLike) -> np.ndarray:
    """E|D1(y) - D2(y)|^2 = 2 tr Cov_data D_hat(y) for two independent splits, exactly, at any n."""
    return 2.0 * np.asarray(total_variance, dtype=float)


def predicted_disagreement(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> float:
    """E|D1(y) - D2(y)|^2 for two independent splits = 2 c(y) tr Sigma (Sigma+kappa)^{-2}."""
    return float(split_pair_disagreement(np.sum(predicted_cov_diag(s, kap, y, n))))


def delta_method_variance(s: ArrayLike, y: ArrayLike, sigma2: float) -> float:
    """Fixed d, n -> inf: n tr Cov D_hat(y) -> sigma^4 [(y^T Sigma G^2 y) tr(Sigma G^2) + y^T Sigma^2 G^4 y],
    G = (Sigma + sigma^2)^{-1} (delta method with Isserlis); the second, rank-one term is the O(1/d) share that
    the deterministic equivalent drops."""
    s = _spectrum(s)
    y = np.asarray(y, dtype=float)
    sigma2 = check_positive("sigma2", sigma2)
    g = 1.0 / (s + sigma2)
    return sigma2**2 * (float(np.sum(s * g**2 * y**2)) * float(np.sum(s * g**2)) + float(np.sum(s**2 * g**4 * y**2)))


# --------------------------------------------------------------------------------------------------
# fractional powers


def sqrt_ratio_integral(resolvent: Callable[[float], np.ndarray], a: float, b: float) -> np.ndarray:
    """1 - (1/pi) int_a^b sqrt((t-a)/(b-t)) r(t) dt for r = ``resolvent``, after t = a + (b-a) sin^2 u, where
    the weight times dt is 2 (b-a) sin^2 u du. With r(t) = 1/(x+t) it is sqrt((x+a)/(x+b)) (the scalar
    Balakrishnan-type identity; unit-tested); with r(t) = E R(t) it is E[M_hat]."""
    _check_ab(a, b)

    def f(u: float) -> np.ndarray:
        t = a + (b - a) * np.sin(u) ** 2
        return 2 * (b - a) * np.sin(u) ** 2 * resolvent(t)

    return 1.0 - numerics.quad_sin2(f, a, b) / np.pi


def sampling_map_detequiv(s: ArrayLike, n: int, a: float, b: float) -> np.ndarray:
    """Deterministic equivalent of diag E[M_hat], M_hat = (Sigma_hat + a)^{1/2} (Sigma_hat + b)^{-1/2}:

    1 - (1/pi) int_a^b sqrt((t-a)/(b-t)) (kappa(t)/t) / (s + kappa(t)) dt.
    """
    s = _spectrum(s)
    n = check_positive_int("n", n)

    def mean_resolvent(t: float) -> np.ndarray:
        k = kappa(t, s, n)
        return (k / t) / (s + k)

    return sqrt_ratio_integral(mean_resolvent, a, b)


def sqrt_integral(shrink: Callable[[float], np.ndarray], like: np.ndarray) -> np.ndarray:
    """(2/pi) int_0^inf h(u^2) du for h = ``shrink``; with h(lam) = x/(x+lam) it is sqrt(x) (unit-tested), with
    h(lam) = E[Sigma_hat R(lam)] it is E[Sigma_hat^{1/2}]."""
    return 2.0 / np.pi * numerics.quad_half_line(lambda u: shrink(u * u), like)


def sqrt_detequiv(s: ArrayLike, n: int) -> np.ndarray:
    """Deterministic equivalent of diag E[Sigma_hat^{1/2}] = (2/pi) int_0^inf Sigma (Sigma + kappa(u^2))^{-1} du."""
    s = _spectrum(s)
    n = check_positive_int("n", n)
    return sqrt_integral(lambda lam: s / (s + kappa(lam, s, n)), s)


# --------------------------------------------------------------------------------------------------
# two resolvents at different noise levels, and the disagreement of generated samples


def _kappas(kap_l: ArrayLike, kap_m: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """kappa(lam), kappa(mu) as arrays with a trailing mode axis (they broadcast against each other)."""
    return np.asarray(kap_l, dtype=float)[..., None], np.asarray(kap_m, dtype=float)[..., None]


def cross_amplification(s: ArrayLike, kap_l: ArrayLike, kap_m: ArrayLike, n: int) -> np.ndarray:
    """1/(1 - tr(Sigma G_l Sigma G_m)/n), G_l = (Sigma + kappa(lam))^{-1}, G_m = (Sigma + kappa(mu))^{-1}; kappas
    broadcast. By Cauchy-Schwarz tr(Sigma G_l Sigma G_m) <= sqrt(df2(kappa_l) df2(kappa_m)) < n, so it is finite;
    at lam = mu it is :func:`amplification`."""
    s = _spectrum(s)
    n = check_positive_int("n", n)
    kl, km = _kappas(kap_l, kap_m)
    den = 1.0 - np.sum(s**2 / ((s + kl) * (s + km)), axis=-1) / n
    if np.any(den <= 0):
        raise ValueError("1 - tr(Sigma G_l Sigma G_m)/n <= 0: not the renormalised noises of this (s, n)")
    return 1.0 / den


def two_resolvent_equivalent(s: ArrayLike, kap_l: ArrayLike, kap_m: ArrayLike, a: ArrayLike, n: int) -> np.ndarray:
    """diag of lam mu E[R(lam) A R(mu)] for a diagonal A = diag(a) (the two-resolvent lemma):

    kappa_l kappa_m [G_l A G_m + (tr(A G_m Sigma G_l)/n) / (1 - tr(Sigma G_l Sigma G_m)/n) G_l Sigma G_m].

    The kappas broadcast (a grid of (lam, mu) pairs at once); the result has a trailing mode axis. At lam = mu it
    is the diagonal of :func:`second_order_equivalent`; for A = I it is the divided difference
    lam mu (E_l - E_m)/(mu - lam) of the first-order equivalents E_l = (kappa_l/lam) G_l (unit-tested)."""
    s = _spectrum(s)
    n = check_positive_int("n", n)
    a = np.broadcast_to(np.asarray(a, dtype=float), s.shape)
    kl, km = _kappas(kap_l, kap_m)
    gl, gm = 1.0 / (s + kl), 1.0 / (s + km)
    t = np.sum(a * s * gl * gm, axis=-1, keepdims=True) / n
    amp = cross_amplification(s, kap_l, kap_m, n)[..., None]
    return kl * km * (gl * a * gm + t * amp * s * gl * gm)


def resolvent_covariance(s: ArrayLike, kap_l: ArrayLike, kap_m: ArrayLike, n: int) -> np.ndarray:
    """diag of lam mu (E[R(lam) R(mu)] - E[R(lam)] E[R(mu)]): the lemma with A = I minus the product of the
    first-order equivalents; what is left is the lemma's second term, kappa_l kappa_m T(lam, mu) G_l Sigma G_m."""
    kl, km = _kappas(kap_l, kap_m)
    first = predicted_mean_shrinkage(s, kl) * predicted_mean_shrinkage(s, km)
    return two_resolvent_equivalent(s, kap_l, kap_m, 1.0, n) - first


def sample_disagreement_profile(s: ArrayLike, n: int, a: float, b: float,
                                covariance: Callable[..., np.ndarray] | None = None) -> np.ndarray:
    """E|M1 e_j - M2 e_j|^2 for every mode j, two independent splits, M = (Sigma_hat + a)^{1/2} (Sigma_hat + b)^{-1/2}:

    2 (1/pi^2) int_a^b int_a^b w(lam) w(mu) [lam mu Cov(R(lam), R(mu))]_jj dlam dmu / (lam mu),

    w(t) = sqrt((t-a)/(b-t)) (the weight of :func:`sqrt_ratio_integral`), after t = a + (b-a) sin^2 u in both
    variables (w(t) dt = 2 (b-a) sin^2 u du), by a fixed Gauss-Legendre rule; kappa(t) by Brent at each node.
    ``covariance`` (default :func:`resolvent_covariance`) is the hook through which the wrong theories change the
    integrand."""
    s = _spectrum(s)
    n = check_positive_int("n", n)
    _check_ab(a, b)
    u, wu = numerics.gauss_sin2(a, b)
    t = a + (b - a) * np.sin(u) ** 2
    weight = 2 * (b - a) * np.sin(u) ** 2 * wu / t
    k = np.array([kappa(v, s, n) for v in t])
    cov = (covariance or resolvent_covariance)(s, k[:, None], k[None, :], n)
    return split_pair_disagreement(np.einsum("k,l,kld->d", weight, weight, cov) / np.pi**2)


def sample_disagreement(s: ArrayLike, n: int, a: float, b: float, Z: ArrayLike) -> np.ndarray:
    """E|M1 z - M2 z|^2 for each input row z of Z: sum_j z_j^2 D_j with D_j of :func:`sample_disagreement_profile`
    (for diagonal Sigma, E[M^2] and E[M] are diagonal, so the input enters through z_j^2 only)."""
    s = _spectrum(s)
    Z = np.atleast_2d(np.asarray(Z, dtype=float))
    if Z.shape[1] != s.size:
        raise ValueError(f"inputs must have d = {s.size} columns, got {Z.shape}")
    return Z**2 @ sample_disagreement_profile(s, n, a, b)


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


def wrong_mp_kappa_other_root(lam: float, gamma: float) -> float:
    """WRONG (C1 isotropic): the other root of the Marchenko-Pastur quadratic kappa^2 - (lam+gamma-1) kappa - lam = 0,
    [(lam+gamma-1) - sqrt((1-lam-gamma)^2 + 4 lam)]/2 (negative for lam > 0)."""
    return 0.5 * ((lam + gamma - 1) - float(np.sqrt((1 - lam - gamma) ** 2 + 4 * lam)))


def wrong_cov_diag_no_amplification(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C2): drops the factor 1/(1 - df2/n)."""
    s = _spectrum(s)
    y = np.asarray(y, dtype=float)
    g = 1.0 / (s + kap)
    return kap**2 * float(np.sum(s * g**2 * y**2)) / n * s * g**2


def wrong_cov_diag_amplification_at_sigma2(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C2): the amplification 1/(1 - df2(sigma^2)/n) at the nominal noise instead of at kappa
    (sigma^2 = kappa (1 - df1(kappa)/n) recovered from kappa); NaN where 1 - df2(sigma^2)/n <= 0."""
    s = _spectrum(s)
    sigma2 = kap * (1.0 - df1(kap, s) / n)
    den = 1.0 - df2(sigma2, s) / n
    right = predicted_cov_diag(s, kap, y, n) / amplification(s, kap, n)
    return right / den if den > 0 else np.full_like(right, np.nan)


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


def wrong_rankone_unamplified(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """Wrong: the rank-one term with the fixed-d coefficient kappa^2 u u^T/n, without the amplification
    1/(1 - df2/n) that the bulk term carries."""
    s = _spectrum(s)
    g = 1.0 / (s + kap)
    return kap * s * g**2 * np.asarray(y, dtype=float) / np.sqrt(check_positive_int("n", n))


def wrong_rankone_dropped(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """Wrong: the covariance is c(y) G Sigma G alone, no rank-one term along Sigma G^2 y; right in the trace
    to O(1/d), off by a factor 2 along the input."""
    return np.zeros_like(_spectrum(s))


def wrong_centered_mean_ignored(s: ArrayLike, kap: float, n: int, n_samples: int) -> np.ndarray:
    """WRONG (C2, centered model): the known-mean formula, as if the dataset mean were exact (no sigma^4 E[R Sigma R]/N
    term)."""
    return np.zeros_like(_spectrum(s))


def wrong_centered_mean_unamplified(s: ArrayLike, kap: float, n: int, n_samples: int) -> np.ndarray:
    """WRONG (C2, centered model): the mean's term without the amplification, kappa^2 s (s+kappa)^{-2}/N (the plug-in
    sigma^4 R Sigma R with E[R] replaced by its first-order equivalent)."""
    s = _spectrum(s)
    return kap**2 * s / (s + kap) ** 2 / check_positive_int("n_samples", n_samples)


def wrong_disagreement_inverse_sqrt_n(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> float:
    """WRONG (C3): fluctuations of order n^{-1/2}, E|D1 - D2|^2 proportional to n^{-1/2} (slope -1/2)."""
    return float(check_positive_int("n", n)) ** -0.5


def wrong_disagreement_inverse_n(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> float:
    """WRONG (C3): the pure 1/n law at fixed d, E|D1 - D2|^2 proportional to 1/n (slope -1, no curvature)."""
    return 1.0 / check_positive_int("n", n)


def wrong_delta_method_no_rankone(s: ArrayLike, y: ArrayLike, sigma2: float) -> float:
    """WRONG (C3 fixed d): the deterministic equivalent's fixed-d limit sigma^4 (y^T Sigma G^2 y) tr(Sigma G^2),
    without the rank-one term y^T Sigma^2 G^4 y."""
    s = _spectrum(s)
    y = np.asarray(y, dtype=float)
    g = 1.0 / (s + sigma2)
    return sigma2**2 * float(np.sum(s * g**2 * y**2)) * float(np.sum(s * g**2))


def wrong_sampling_map_plugin(s: ArrayLike, n: int, a: float, b: float) -> np.ndarray:
    """WRONG (C4): the population map sqrt((s+a)/(s+b)), ignoring kappa."""
    s = _spectrum(s)
    _check_ab(a, b)
    return np.sqrt((s + a) / (s + b))


def wrong_sqrt_plugin(s: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C4): the population square root sqrt(s), ignoring kappa."""
    return np.sqrt(_spectrum(s))


def wrong_sample_disagreement_flat(s: ArrayLike, n: int, a: float, b: float, Z: ArrayLike) -> np.ndarray:
    """WRONG (C5, no anisotropy): every unit input disagrees alike, |z|^2 times the mean of D_j over the modes
    (the plug-in/isotropic picture: the disagreement does not depend on which mode the input excites)."""
    Z = np.atleast_2d(np.asarray(Z, dtype=float))
    return np.sum(Z**2, axis=1) * float(np.mean(sample_disagreement_profile(s, n, a, b)))


def wrong_resolvent_covariance_unamplified(s: ArrayLike, kap_l: ArrayLike, kap_m: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C5): the lemma's second term without its amplification 1/(1 - tr(Sigma G_l Sigma G_m)/n),
    kappa_l kappa_m (tr(Sigma G_l G_m)/n) G_l Sigma G_m."""
    s = _spectrum(s)
    kl, km = _kappas(kap_l, kap_m)
    gl, gm = 1.0 / (s + kl), 1.0 / (s + km)
    return kl * km * np.sum(s * gl * gm, axis=-1, keepdims=True) / n * s * gl * gm


def wrong_resolvent_covariance_single_kappa(s: ArrayLike, kap_l: ArrayLike, kap_m: ArrayLike, n: int) -> np.ndarray:
    """WRONG (C5): one renormalised noise for both resolvents, the geometric mean sqrt(kappa_l kappa_m) (the
    equal-argument formula of Theorem 2 applied off the diagonal)."""
    kl, km = _kappas(kap_l, kap_m)
    k = np.sqrt(kl * km)[..., 0]
    return resolvent_covariance(s, k, k, n)


def wrong_sample_disagreement_unamplified(s: ArrayLike, n: int, a: float, b: float, Z: ArrayLike) -> np.ndarray:
    """WRONG (C5): the double integral of the lemma's second term without the amplification."""
    Z = np.atleast_2d(np.asarray(Z, dtype=float))
    return Z**2 @ sample_disagreement_profile(s, n, a, b, covariance=wrong_resolvent_covariance_unamplified)


def wrong_sample_disagreement_single_kappa(s: ArrayLike, n: int, a: float, b: float, Z: ArrayLike) -> np.ndarray:
    """WRONG (C5): the double integral with one kappa, sqrt(kappa(lam) kappa(mu)), for both resolvents."""
    Z = np.atleast_2d(np.asarray(Z, dtype=float))
    return Z**2 @ sample_disagreement_profile(s, n, a, b, covariance=wrong_resolvent_covariance_single_kappa)
