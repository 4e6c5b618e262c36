"""Deterministic equivalents for linear diffusion models trained on disjoint data splits.

Reference: B. Wang, J. Zavatone-Veth, C. Pehlevan, *A Random Matrix Theory Perspective on the
Consistency of Diffusion Models*, arXiv:2602.02908 (2026); the renormalised-ridge language follows
A. Atanasov, J. Zavatone-Veth, C. Pehlevan, *Scaling and renormalization in high-dimensional
regression*, arXiv:2405.00592.

Setting. Data x_1..x_n iid N(0, Sigma), Sigma = diag(s) (rotation invariance), known zero mean.
Sigma_hat = X^T X / n, R(lam) = (Sigma_hat + lam)^{-1}. The optimal linear denoiser learned at noise
sigma^2 is D_hat(y) = Sigma_hat (Sigma_hat + sigma^2)^{-1} y. Everything below works in the eigenbasis of
Sigma: one batched ``eigh`` of Sigma_hat per dataset serves every noise level, input and matrix function.

The renormalised noise kappa = kappa(lam) is the unique root kappa > max(lam, kappa_0) of

    kappa = lam + (kappa / n) df1(kappa),   df1(k) = sum_i s_i/(s_i+k),  df2(k) = sum_i s_i^2/(s_i+k)^2,

kappa_0 = 0 if d <= n and df1(kappa_0) = n if d > n. First order: E[lam R(lam)] ~ kappa (Sigma+kappa)^{-1}.
Second order (A fixed, bounded): lam^2 E[R A R] ~ kappa^2 (Sigma+kappa)^{-1} A (Sigma+kappa)^{-1}
+ kappa^2 [tr(A Sigma (Sigma+kappa)^{-2})/n] / (1 - df2/n) (Sigma+kappa)^{-1} Sigma (Sigma+kappa)^{-1}.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize

from theorylib.core.claims import Claim, check_chi2, check_zscore
from theorylib.core.rates import LogLogFit, fit_loglog, ols_slope

ArrayLike = np.ndarray | Sequence[float] | float
KappaFn = Callable[[float, np.ndarray, int], "float | np.ndarray"]

# --------------------------------------------------------------------------------------------------
# input validation


def _spectrum(s: ArrayLike) -> np.ndarray:
    s = np.asarray(s, dtype=float)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"the spectrum s must be a non-empty 1-D array, got shape {s.shape}")
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError("the spectrum s must be finite and > 0 (Sigma positive definite)")
    return s


def _pos_int(name: str, v: int, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise ValueError(f"{name} = {v!r} must be an integer >= {low}")
    return int(v)


def _nonneg(name: str, v: float) -> float:
    v = float(v)
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} = {v!r} must be finite and >= 0")
    return v


# --------------------------------------------------------------------------------------------------
# spectra and degrees of freedom


def logunif_spectrum(d: int, s_max: float = 4.0, s_decay: float = 5.0) -> np.ndarray:
    """s_i = s_max exp(-s_decay u_i), u_i = (i - 1/2)/d: log-uniform over [s_max e^{-s_decay}, s_max]."""
    d = _pos_int("d", d)
    if not (s_max > 0 and s_decay >= 0):
        raise ValueError(f"need s_max > 0 and s_decay >= 0, got {s_max!r}, {s_decay!r}")
    u = (np.arange(1, d + 1) - 0.5) / d
    return s_max * np.exp(-s_decay * u)


def twolevel_spectrum(d: int, s_hi: float = 4.0, s_lo: float = 0.05) -> np.ndarray:
    """The first half of the modes at s_hi, the second half at s_lo (d even)."""
    d = _pos_int("d", d, 2)
    if d % 2:
        raise ValueError(f"a two-level spectrum needs an even d, got {d}")
    return np.where(np.arange(d) < d // 2, float(s_hi), float(s_lo))


def make_spectrum(kind: str, d: int, s_max: float = 4.0, s_decay: float = 5.0) -> np.ndarray:
    """``"logunif"`` (see :func:`logunif_spectrum`) or ``"twolevel"`` (s in {s_max, 0.05})."""
    if kind == "logunif":
        return logunif_spectrum(d, s_max, s_decay)
    if kind == "twolevel":
        return twolevel_spectrum(d, s_max, 0.05)
    raise ValueError(f"unknown spectrum kind {kind!r}; use 'logunif' or 'twolevel'")


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
    n = _pos_int("n", n)
    lam = _nonneg("lam", lam)
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
    lam = np.asarray(lam, dtype=float)
    if np.any(lam < 0) or gamma <= 0:
        raise ValueError("need lam >= 0 and gamma > 0")
    out = 0.5 * ((lam + gamma - 1) + np.sqrt((1 - lam - gamma) ** 2 + 4 * lam))
    return float(out) if out.ndim == 0 else out


def kappa_per_mode(lam: float, s: ArrayLike, n: int) -> np.ndarray:
    """A WRONG theory (mutation of C1): a separate kappa_i per mode, kappa_i = lam + kappa_i s_i/(n(s_i+kappa_i))."""
    s = _spectrum(s)
    lam = _nonneg("lam", lam)
    # kappa_i^2 + kappa_i (s_i - lam - s_i/n) - lam s_i = 0, positive root
    b = s - lam - s / n
    return 0.5 * (-b + np.sqrt(b * b + 4 * lam * s))


# --------------------------------------------------------------------------------------------------
# predictions


def predicted_mean_shrinkage(s: ArrayLike, kap: ArrayLike) -> np.ndarray:
    """Deterministic equivalent of diag E[lam R(lam)] in the Sigma eigenbasis: kappa/(s + kappa)."""
    s = _spectrum(s)
    return np.asarray(kap, dtype=float) / (s + np.asarray(kap, dtype=float))


def fluct_scale(s: ArrayLike, kap: float, y: ArrayLike, n: int, *, amplify: bool = True) -> float:
    """c(y) = kappa^2 (y^T Sigma (Sigma+kappa)^{-2} y / n) / (1 - df2(kappa)/n).

    ``amplify=False`` drops the factor 1/(1 - df2/n) (a wrong theory, used by a mutation test).
    """
    s = _spectrum(s)
    y = np.asarray(y, dtype=float)
    if y.shape != s.shape:
        raise ValueError(f"input y must have shape {s.shape}, got {y.shape}")
    n = _pos_int("n", n)
    q = float(np.sum(s * y**2 / (s + kap) ** 2)) / n
    den = 1.0 - df2(kap, s) / n if amplify else 1.0
    if den <= 0:
        raise ValueError("1 - df2/n <= 0: kappa is not the renormalised noise of this (s, n)")
    return kap**2 * q / den


def predicted_cov_diag(s: ArrayLike, kap: float, y: ArrayLike, n: int, *, amplify: bool = True) -> np.ndarray:
    """diag Cov_data(D_hat(y)) ~ c(y) s/(s+kappa)^2 (Theorem 2 with A = y y^T / |y|^2, c homogeneous)."""
    s = _spectrum(s)
    return fluct_scale(s, kap, y, n, amplify=amplify) * s / (s + kap) ** 2


def predicted_disagreement(s: ArrayLike, kap: float, y: ArrayLike, n: int, *, amplify: bool = True) -> float:
    """E|D1(y) - D2(y)|^2 for two independent splits = 2 c(y) tr Sigma (Sigma+kappa)^{-2}."""
    return 2.0 * float(np.sum(predicted_cov_diag(s, kap, y, n, amplify=amplify)))


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


def _check_ab(a: float, b: float) -> None:
    if not (np.isfinite(a) and np.isfinite(b) and 0 < a < b):
        raise ValueError(f"need 0 < a < b (a = sigma_min^2, b = sigma_max^2), got a = {a!r}, b = {b!r}")


def sampling_map_detequiv(s: ArrayLike, n: int, a: float, b: float) -> np.ndarray:
    """Deterministic equivalent of diag E[M_hat], M_hat = (Sigma_hat + a)^{1/2} (Sigma_hat + b)^{-1/2}:

    1 - (1/pi) int_a^b sqrt((t-a)/(b-t)) (kappa(t)/t) / (s + kappa(t)) dt   (t = a + (b-a) sin^2 u).
    """
    s = _spectrum(s)
    n = _pos_int("n", n)
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
    n = _pos_int("n", n)

    def f(th: float) -> np.ndarray:
        if th >= np.pi / 2:
            return np.zeros_like(s)
        u = np.tan(th)
        k = kappa(u * u, s, n)
        return s / (s + k) / np.cos(th) ** 2

    val, _ = integrate.quad_vec(f, 0.0, np.pi / 2, epsabs=0, epsrel=1e-10)
    return 2.0 / np.pi * val


def plugin_sampling_map(s: ArrayLike, a: float, b: float) -> np.ndarray:
    """A WRONG theory (mutation of C4): the population map sqrt((s+a)/(s+b)), ignoring kappa."""
    s = _spectrum(s)
    _check_ab(a, b)
    return np.sqrt((s + a) / (s + b))


# --------------------------------------------------------------------------------------------------
# simulation: one eigh per dataset


def sample_eigh(s: ArrayLike, n: int, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` datasets X (n x d, rows iid N(0, diag s)); eigen-decompositions of Sigma_hat = X^T X / n.

    Returns (evals (reps, d), evecs (reps, d, d)); columns of evecs are eigenvectors. Eigenvalues are
    clipped at 0 (rank-deficient Sigma_hat when d > n).
    """
    s = _spectrum(s)
    n = _pos_int("n", n)
    reps = _pos_int("reps", reps)
    X = rng.standard_normal((reps, n, s.size)) * np.sqrt(s)
    S = np.matmul(X.transpose(0, 2, 1), X) / n
    evals, evecs = np.linalg.eigh(S)
    return np.maximum(evals, 0.0), evecs


def matrix_function_diag(evals: np.ndarray, evecs: np.ndarray, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """diag(V fn(Lambda) V^T) for each dataset, shape (reps, d): sum_k V_ik^2 fn(lambda_k)."""
    if evecs.ndim != 3 or evals.shape != evecs.shape[:2]:
        raise ValueError(f"evals (reps, d) and evecs (reps, d, d) mismatch: {evals.shape}, {evecs.shape}")
    return np.matmul(evecs**2, fn(evals)[..., None])[..., 0]


def apply_matrix_function(evals: np.ndarray, evecs: np.ndarray, fn: Callable[[np.ndarray], np.ndarray],
                          Y: np.ndarray) -> np.ndarray:
    """V fn(Lambda) V^T y for every input row y of Y (k, d) and every dataset: shape (reps, k, d).

    Computes V^T y first, then V (fn(Lambda) * .): O(reps k d^2), never a 4-operand contraction.
    """
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    if Y.shape[1] != evecs.shape[1]:
        raise ValueError(f"inputs must have d = {evecs.shape[1]} columns, got {Y.shape}")
    Z = np.matmul(Y[None], evecs)  # (reps, k, d): z_rki = sum_j y_kj V_rji
    Z *= fn(evals)[:, None, :]
    return np.matmul(Z, evecs.transpose(0, 2, 1))


def denoiser_outputs(evals: np.ndarray, evecs: np.ndarray, Y: np.ndarray, sigma2: float) -> np.ndarray:
    """D_hat(y) = Sigma_hat (Sigma_hat + sigma^2)^{-1} y for each dataset and input: (reps, k, d)."""
    sigma2 = _nonneg("sigma2", sigma2)
    if sigma2 == 0:
        raise ValueError("sigma2 must be > 0")
    return apply_matrix_function(evals, evecs, lambda lam: lam / (lam + sigma2), Y)


@dataclass(frozen=True)
class SplitRun:
    """Per-dataset features of one simulated size (n, d, reps) at spectrum s.

    shrink (reps, L, d): diag sigma^2 R(sigma^2) for each noise level of ``sigma2_list``;
    denoised (reps, k, d): D_hat(y) at ``sigma2_fluct`` for each input row;
    smap (reps, d): diag M_hat; ssqrt (reps, d): diag Sigma_hat^{1/2}.
    """

    s: np.ndarray
    n: int
    sigma2_list: tuple[float, ...]
    sigma2_fluct: float
    inputs: np.ndarray
    a: float
    b: float
    shrink: np.ndarray
    denoised: np.ndarray
    smap: np.ndarray
    ssqrt: np.ndarray


def simulate_splits(s: ArrayLike, n: int, reps: int, rng: np.random.Generator, *, sigma2_list: Sequence[float],
                    sigma2_fluct: float, inputs: np.ndarray, a: float, b: float, chunk: int = 100) -> SplitRun:
    """Simulate ``reps`` independent datasets (disjoint splits) and extract every feature the claims use.

    Datasets are processed ``chunk`` at a time (memory); one eigh per dataset.
    """
    s = _spectrum(s)
    reps = _pos_int("reps", reps, 4)
    _check_ab(a, b)
    inputs = np.atleast_2d(np.asarray(inputs, dtype=float))
    sig = tuple(float(v) for v in sigma2_list)
    if any(v <= 0 for v in sig) or sigma2_fluct <= 0:
        raise ValueError("noise levels must be > 0")
    shrink, den, smap, ssqrt = [], [], [], []
    done = 0
    while done < reps:
        c = min(chunk, reps - done)
        ev, V = sample_eigh(s, n, c, rng)
        shrink.append(np.stack([matrix_function_diag(ev, V, lambda x, t=t: t / (x + t)) for t in sig], axis=1))
        den.append(denoiser_outputs(ev, V, inputs, sigma2_fluct))
        smap.append(matrix_function_diag(ev, V, lambda x: np.sqrt((x + a) / (x + b))))
        ssqrt.append(matrix_function_diag(ev, V, np.sqrt))
        done += c
    return SplitRun(s, n, sig, float(sigma2_fluct), inputs, float(a), float(b), np.concatenate(shrink),
                    np.concatenate(den), np.concatenate(smap), np.concatenate(ssqrt))


# --------------------------------------------------------------------------------------------------
# statistics: delete-one jackknife, Richardson, whitening


def jackknife(features: np.ndarray, stat: Callable[[np.ndarray, int], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Delete-one-unit jackknife of a smooth function of feature means.

    features (G, ...): one row per independent unit; ``stat(means, count)`` maps a mean (...), or a stack
    of leave-one-out means (G, ...), and the number of units averaged, to a statistic vector (k,) or (G, k).
    Returns (estimate (k,), covariance (k, k)).
    """
    F = np.asarray(features, dtype=float)
    G = F.shape[0]
    if G < 3:
        raise ValueError(f"the jackknife needs at least 3 units, got {G}")
    total = F.sum(axis=0)
    est = np.atleast_1d(stat(total / G, G))
    loo = np.atleast_2d(stat((total[None] - F) / (G - 1), G - 1).reshape(G, -1))
    dev = loo - loo.mean(axis=0)
    cov = (G - 1) / G * dev.T @ dev
    return est, cov


def richardson(r_n: ArrayLike, cov_n: ArrayLike, r_2n: ArrayLike, cov_2n: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """r_inf = 2 r(2n) - r(n), cov_inf = 4 cov(2n) + cov(n) (independent runs; error a/n + O(n^-2)).

    Accepts scalars with variances (SE^2) or vectors with covariance matrices.
    """
    r_n, r_2n = np.asarray(r_n, dtype=float), np.asarray(r_2n, dtype=float)
    if r_n.shape != r_2n.shape:
        raise ValueError(f"shapes differ: {r_n.shape} vs {r_2n.shape}")
    return 2 * r_2n - r_n, 4 * np.asarray(cov_2n, dtype=float) + np.asarray(cov_n, dtype=float)


def whiten(r: ArrayLike, cov: ArrayLike) -> np.ndarray:
    """Standardised residuals z = L^{-1} r with cov = L L^T, so that sum z^2 = r^T cov^{-1} r."""
    r = np.atleast_1d(np.asarray(r, dtype=float))
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    if cov.shape != (r.size, r.size):
        raise ValueError(f"covariance must be {r.size}x{r.size}, got {cov.shape}")
    L = np.linalg.cholesky(cov)
    return np.linalg.solve(L, r)


def bins(d: int, nbins: int) -> np.ndarray:
    """Bin index of each mode: nbins consecutive equal blocks of the (decreasing) spectrum."""
    d, nbins = _pos_int("d", d), _pos_int("nbins", nbins)
    if d % nbins:
        raise ValueError(f"d = {d} must be a multiple of nbins = {nbins}")
    return np.repeat(np.arange(nbins), d // nbins)


def _bin_mean(x: np.ndarray, nbins: int) -> np.ndarray:
    return x.reshape(*x.shape[:-1], nbins, x.shape[-1] // nbins).mean(axis=-1)


def _bin_sum(x: np.ndarray, nbins: int) -> np.ndarray:
    return x.reshape(*x.shape[:-1], nbins, x.shape[-1] // nbins).sum(axis=-1)


# --------------------------------------------------------------------------------------------------
# claims (shared by the notebook and the mutation tests)


@dataclass(frozen=True)
class Extrapolated:
    """Per-size values, their covariances and the Richardson limit."""

    r_p: np.ndarray
    cov_p: np.ndarray
    r_2p: np.ndarray
    cov_2p: np.ndarray
    r_inf: np.ndarray
    cov_inf: np.ndarray

    @property
    def se_inf(self) -> np.ndarray:
        return np.sqrt(np.diag(self.cov_inf))


def kappa_bin_stat(run: SplitRun, j: int, kappa_fn: KappaFn = kappa, nbins: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """r_b = mean_{i in bin b}(kappa_hat_i / kappa) - 1, kappa_hat_i = s_i m_i/(1-m_i), m = dataset mean of
    diag sigma^2 R(sigma^2) (noise level index j); delete-one jackknife over datasets. (r (nbins,), cov)."""
    s, t = run.s, run.sigma2_list[j]
    kap = np.asarray(kappa_fn(t, s, run.n), dtype=float)

    def stat(m: np.ndarray, _c: int) -> np.ndarray:
        return _bin_mean(s * m / (1 - m) / kap, nbins) - 1.0

    return jackknife(run.shrink[:, j, :], stat)


def claim_kappa(name: str, run_P: SplitRun, run_2P: SplitRun, j: int, kappa_fn: KappaFn = kappa,
                nbins: int = 5) -> tuple[Claim, Extrapolated]:
    """C1: Richardson-extrapolated bin statistics jointly consistent with 0 (whitened chi2_nbins)."""
    rP, cP = kappa_bin_stat(run_P, j, kappa_fn, nbins)
    r2, c2 = kappa_bin_stat(run_2P, j, kappa_fn, nbins)
    ri, ci = richardson(rP, cP, r2, c2)
    why = (f"kappa_hat/kappa - 1 in {nbins} spectral bins, Richardson n->2n, delete-one jackknife "
           "covariance; joint chi2 at alpha = 1e-3 (kappa right AND the same for every mode)")
    return check_chi2(name, whiten(ri, ci), why), Extrapolated(rP, cP, r2, c2, ri, ci)


Predictor = Callable[[np.ndarray, float, np.ndarray, int], np.ndarray]


def _var_features(D: np.ndarray) -> np.ndarray:
    """Per-dataset features (D, D^2) for variance statistics: (reps, 2, ...)."""
    return np.stack([D, D * D], axis=1)


def _unbiased_var(means: np.ndarray, count: int) -> np.ndarray:
    m1, m2 = means[..., 0, :], means[..., 1, :]
    return (m2 - m1 * m1) * count / (count - 1)


def variance_ratio(run: SplitRun, k: int, predictor: Predictor = predicted_cov_diag,
                   kappa_fn: KappaFn = kappa, nbins: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Measured/predicted - 1 for the total variance V(y) = sum_i Var_data D_hat_i(y) of input k (nbins None),
    or per spectral bin. Delete-one jackknife over datasets. Returns (r, cov)."""
    s, y = run.s, run.inputs[k]
    kap = float(kappa_fn(run.sigma2_fluct, s, run.n))
    pred = np.asarray(predictor(s, kap, y, run.n), dtype=float)

    def stat(means: np.ndarray, count: int) -> np.ndarray:
        v = _unbiased_var(means, count)
        if nbins is None:
            return (v.sum(axis=-1) / pred.sum() - 1.0)[..., None]
        return _bin_sum(v, nbins) / _bin_sum(pred, nbins) - 1.0

    return jackknife(_var_features(run.denoised[:, k, :]), stat)


def extrapolate_variance(run_P: SplitRun, run_2P: SplitRun, k: int, predictor: Predictor = predicted_cov_diag,
                         kappa_fn: KappaFn = kappa, nbins: int | None = None) -> Extrapolated:
    """Richardson limit of :func:`variance_ratio` from sizes P and 2P."""
    rP, cP = variance_ratio(run_P, k, predictor, kappa_fn, nbins)
    r2, c2 = variance_ratio(run_2P, k, predictor, kappa_fn, nbins)
    ri, ci = richardson(rP, cP, r2, c2)
    return Extrapolated(rP, cP, r2, c2, ri, ci)


def claim_variance(name: str, run_P: SplitRun, run_2P: SplitRun, k: int, predictor: Predictor = predicted_cov_diag,
                   kappa_fn: KappaFn = kappa) -> tuple[Claim, Extrapolated]:
    """C2 (per input): Richardson ratio V_measured/V_formula within 3.29 SE_inf of 1."""
    ex = extrapolate_variance(run_P, run_2P, k, predictor, kappa_fn)
    why = ("total cross-dataset variance / c(y) tr Sigma(Sigma+kappa)^-2, Richardson n->2n; "
           "SE_inf from delete-one jackknifes at P and 2P (4th moments), 3.29 SE_inf")
    return check_zscore(name, float(1 + ex.r_inf[0]), 1.0, float(ex.se_inf[0]), why), ex


def claim_profile(name: str, run_P: SplitRun, run_2P: SplitRun, k: int, predictor: Predictor = predicted_cov_diag,
                  kappa_fn: KappaFn = kappa, nbins: int = 5) -> tuple[Claim, Extrapolated]:
    """C2 profile: per-bin variance ratios (Richardson) jointly consistent with 1 (whitened chi2)."""
    ex = extrapolate_variance(run_P, run_2P, k, predictor, kappa_fn, nbins)
    why = (f"per-bin variance / c(y) sum_bin s/(s+kappa)^2 in {nbins} bins, Richardson n->2n; "
           "whitened by the jackknife covariance; chi2 at alpha = 1e-3")
    return check_chi2(name, whiten(ex.r_inf, ex.cov_inf), why), ex


def pair_minus_variance(run: SplitRun, factor: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """Delta_k = mean over disjoint pairs of |D1(y_k) - D2(y_k)|^2 - factor * V_hat(y_k), for every input.

    Datasets (2j, 2j+1) form pair j; V_hat uses all datasets (unbiased). The covariance of Delta is the
    delete-one-pair jackknife (both estimates share datasets, so it is estimated jointly)."""
    D = run.denoised
    G = D.shape[0] // 2
    D1, D2 = D[0:2 * G:2], D[1:2 * G:2]
    dis = np.sum((D1 - D2) ** 2, axis=-1)  # (G, k)
    feats = np.concatenate([dis, (D1 + D2).reshape(G, -1), (D1 * D1 + D2 * D2).reshape(G, -1)], axis=1)
    k, d = D.shape[1], D.shape[2]

    def stat(m: np.ndarray, count: int) -> np.ndarray:
        m = np.atleast_2d(m)
        pair = m[:, :k]
        s1 = m[:, k:k + k * d].reshape(-1, k, d) / 2  # per-dataset mean of D
        s2 = m[:, k + k * d:].reshape(-1, k, d) / 2
        N = 2 * count
        v = ((s2 - s1 * s1) * N / (N - 1)).sum(axis=-1)
        out = pair - factor * v
        return out if out.shape[0] > 1 else out[0]

    return jackknife(feats, stat)


def claim_pairs(name: str, run: SplitRun, factor: float = 2.0) -> tuple[Claim, np.ndarray, np.ndarray]:
    """C2 pairs: E|D1 - D2|^2 = 2 V for disjoint splits, jointly over the inputs (whitened chi2_k)."""
    delta, cov = pair_minus_variance(run, factor)
    why = ("mean split-pair disagreement minus 2 V_hat for every input; covariance by a delete-one-pair "
           "jackknife (shared datasets); whitened chi2 at alpha = 1e-3")
    return check_chi2(name, whiten(delta, cov), why), delta, cov


# C3: rate at fixed d


def pair_disagreements(s: ArrayLike, n: int, pairs: int, y: np.ndarray, sigma2: float,
                       rng: np.random.Generator, chunk: int = 100) -> np.ndarray:
    """|D1(y) - D2(y)|^2 for ``pairs`` independent pairs of disjoint splits of size n: shape (pairs,)."""
    s = _spectrum(s)
    pairs = _pos_int("pairs", pairs)
    out = []
    done = 0
    while done < pairs:
        c = min(chunk, pairs - done)
        ev, V = sample_eigh(s, n, 2 * c, rng)
        D = denoiser_outputs(ev, V, y, sigma2)[:, 0, :]
        out.append(np.sum((D[0::2] - D[1::2]) ** 2, axis=-1))
        done += c
    return np.concatenate(out)


def formula_slope(s: ArrayLike, ns: Sequence[int], y: np.ndarray, sigma2: float,
                  predictor: Callable[[np.ndarray, float, np.ndarray, int], float] = predicted_disagreement) -> float:
    """OLS slope of log predicted disagreement on log n over the grid ``ns``."""
    s = _spectrum(s)
    vals = np.array([predictor(s, kappa(sigma2, s, int(n)), y, int(n)) for n in ns])
    slope, _ = ols_slope(np.log(np.asarray(ns, dtype=float)), np.log(vals))
    return float(slope)


def claim_rate(name: str, ns: Sequence[int], disagreements: np.ndarray, predicted_slope: float,
               rng: np.random.Generator, n_boot: int = 2000) -> tuple[Claim, LogLogFit]:
    """C3: fitted log-log slope of the pair disagreement vs n within 3.29 SE_boot of the formula's slope."""
    fit = fit_loglog(np.asarray(ns, dtype=float), replicates=disagreements, paired=False, n_boot=n_boot, rng=rng)
    why = ("OLS slope of log E|D1-D2|^2 on log n (window where the O(1/n) bias is negligible), "
           "bootstrap SE over pairs, 3.29 SE_boot")
    return check_zscore(name, fit.slope, predicted_slope, fit.slope_se, why), fit


# C4: fractional powers


def fractional_stat(run: SplitRun, which: str, pred: np.ndarray, nbins: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin relative error mean(measured)/pred - 1 of diag E[M_hat] (``"smap"``) or diag E[Sigma_hat^1/2]."""
    if which not in ("smap", "ssqrt"):
        raise ValueError(f"which must be 'smap' or 'ssqrt', got {which!r}")
    X = getattr(run, which)
    pred = np.asarray(pred, dtype=float)

    def stat(m: np.ndarray, _c: int) -> np.ndarray:
        return _bin_sum(m, nbins) / _bin_sum(pred, nbins) - 1.0

    return jackknife(X, stat)


def claim_fractional(name: str, run_P: SplitRun, run_2P: SplitRun, which: str,
                     predictor: Callable[[SplitRun], np.ndarray], nbins: int = 5) -> tuple[Claim, Extrapolated]:
    """C4: per-bin Richardson relative errors of a fractional matrix power jointly consistent with 0."""
    rP, cP = fractional_stat(run_P, which, predictor(run_P), nbins)
    r2, c2 = fractional_stat(run_2P, which, predictor(run_2P), nbins)
    ri, ci = richardson(rP, cP, r2, c2)
    why = (f"per-bin relative error of the deterministic equivalent in {nbins} bins, Richardson n->2n, "
           "whitened by the jackknife covariance; chi2 at alpha = 1e-3")
    return check_chi2(name, whiten(ri, ci), why), Extrapolated(rP, cP, r2, c2, ri, ci)


# --------------------------------------------------------------------------------------------------
# wrong theories used by the mutation tests (and named in the chapter)


def cov_diag_input_blind(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """WRONG (no inhomogeneity): c(y) with y^T Sigma G^2 y replaced by its isotropic average |y|^2 tr(Sigma G^2)/d."""
    s = _spectrum(s)
    y = np.asarray(y, dtype=float)
    y_iso = np.full_like(s, np.sqrt(np.sum(y**2) / s.size))
    return predicted_cov_diag(s, kap, y_iso, n)


def cov_diag_isotropic_profile(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """WRONG (no anisotropy): the right total variance spread equally over the modes."""
    s = _spectrum(s)
    tot = float(np.sum(predicted_cov_diag(s, kap, y, n)))
    return np.full_like(s, tot / s.size)


def cov_diag_no_amplification(s: ArrayLike, kap: float, y: ArrayLike, n: int) -> np.ndarray:
    """WRONG: drops the factor 1/(1 - df2/n)."""
    return predicted_cov_diag(s, kap, y, n, amplify=False)


def kappa_unrenormalized(lam: float, s: ArrayLike, n: int) -> float:
    """WRONG: kappa = lam (no renormalization; the population denoiser at the nominal noise)."""
    return float(lam)


def kappa_ridgeless(lam: float, s: ArrayLike, n: int) -> float:
    """WRONG: kappa = lam/(1 - d/n) (the small-lam isotropic answer applied at every lam and spectrum)."""
    d = np.asarray(s).size
    if d >= n:
        raise ValueError("the ridgeless guess needs d < n")
    return float(lam) / (1 - d / n)


def kappa_naive(lam: float, s: ArrayLike, n: int) -> float:
    """WRONG: kappa = lam + tr(Sigma)/n (the bracket's upper end)."""
    return float(lam) + float(np.sum(s)) / n


# --------------------------------------------------------------------------------------------------
# experiment set-up shared by the notebook and the tests

INPUT_NAMES = ("random", "top", "mid", "flat")


def sizes(d: int, gamma: float, reps: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(n, d, reps) at sizes P and 2P; n = d/gamma must be an integer and d a multiple of 10."""
    d, reps = _pos_int("d", d), _pos_int("reps", reps, 8)
    if d % 10:
        raise ValueError(f"d = {d} must be a multiple of 10 (5 spectral bins at P and 2P)")
    n = d / gamma
    if abs(n - round(n)) > 1e-9 or round(n) < 2:
        raise ValueError(f"n = d/gamma = {n!r} must be an integer >= 2")
    n = int(round(n))
    return (n, d, reps), (2 * n, 2 * d, reps // 2)


def fluct_inputs(s: ArrayLike, sigma2: float, rng: np.random.Generator) -> np.ndarray:
    """The four inputs of C2, rows: random ~ N(0, Sigma + sigma^2), 3 sqrt(s_1+sigma^2) e_1 (top mode),
    3 sqrt(s_m+sigma^2) e_m with m = d/3 (mid mode), 3 (1,...,1)/sqrt(d) (flat)."""
    s = _spectrum(s)
    d = s.size
    Y = np.zeros((4, d))
    Y[0] = rng.standard_normal(d) * np.sqrt(s + sigma2)
    Y[1, 0] = 3 * np.sqrt(s[0] + sigma2)
    m = d // 3
    Y[2, m] = 3 * np.sqrt(s[m] + sigma2)
    Y[3] = 3 / np.sqrt(d)
    return Y


def run_sizes(seed: int, d: int, gamma: float, reps: int, sigma2_list: Sequence[float], sigma2_fluct: float,
              spectrum: str, s_max: float, s_decay: float, sigma_min: float, sigma_max: float,
              ) -> tuple[SplitRun, SplitRun]:
    """The chapter's two simulated sizes P and 2P (streams ``rng_for(seed, "datasets", tag)``; the C2 inputs
    from ``rng_for(seed, "C2-input", tag)``)."""
    from theorylib.core.repro import rng_for

    a, b = sigma_min**2, sigma_max**2
    out = []
    for tag, (n_, d_, r_) in zip(("P", "2P"), sizes(d, gamma, reps), strict=True):
        s_ = make_spectrum(spectrum, d_, s_max, s_decay)
        Y_ = fluct_inputs(s_, sigma2_fluct, rng_for(seed, "C2-input", tag))
        out.append(simulate_splits(s_, n_, r_, rng_for(seed, "datasets", tag), sigma2_list=sigma2_list,
                                   sigma2_fluct=sigma2_fluct, inputs=Y_, a=a, b=b))
    return out[0], out[1]


def rate_experiment(seed: int, rate_d: int, rate_n: Sequence[int], rate_pairs: int, sigma2: float, spectrum: str,
                    s_max: float, s_decay: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """C3 data: (s, y, ns, disagreements (pairs, len(ns))) at fixed d; streams ``rng_for(seed, "C3", str(n))``."""
    from theorylib.core.repro import rng_for

    s = make_spectrum(spectrum, rate_d, s_max, s_decay)
    y = fluct_inputs(s, sigma2, rng_for(seed, "C3-input"))[0]
    ns = np.asarray(rate_n, dtype=int)
    dis = np.stack([pair_disagreements(s, int(n), rate_pairs, y, sigma2, rng_for(seed, "C3", str(int(n))))
                    for n in ns], axis=1)
    return s, y, ns, dis


def helmert_rows(n: int) -> np.ndarray:
    """(n-1) x n matrix with orthonormal rows orthogonal to (1,...,1) (Helmert): H^T H = I - 11^T/n."""
    n = _pos_int("n", n, 2)
    H = np.zeros((n - 1, n))
    for k in range(1, n):
        H[k - 1, :k] = 1.0
        H[k - 1, k] = -k
        H[k - 1] /= np.sqrt(k * (k + 1))
    return H


def centered_covariance(X: np.ndarray) -> np.ndarray:
    """(1/(n-1)) sum_i (x_i - xbar)(x_i - xbar)^T; equals Z^T Z/(n-1) with Z = H X, n-1 iid rows when X is."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"X must be (n >= 2, d), got {X.shape}")
    Xc = X - X.mean(axis=0)
    return Xc.T @ Xc / (X.shape[0] - 1)
