"""The model of chapter 'diffusion-splits-rmt': spectra, Gaussian datasets (disjoint splits), the learned
linear denoiser and every simulated feature the claims measure.

Everything works in the eigenbasis of Sigma = diag(s): one batched ``eigh`` of Sigma_hat = X^T X / n per
dataset serves every noise level, input and matrix function. Never imports ``theory``: a mutation of the
theory cannot move a measurement. Random functions take an explicit ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from theorylib.core.validation import check_array, check_int, check_positive, check_positive_int, check_real

ArrayLike = np.ndarray | Sequence[float] | float

INPUT_NAMES = ("random", "top", "mid", "flat")


def _spectrum(s: ArrayLike) -> np.ndarray:
    """The population spectrum as a 1-D array, finite and > 0 (Sigma positive definite)."""
    s = check_array("s", s, ndim=1)
    if s.size == 0 or np.any(s <= 0):
        raise ValueError("the spectrum s must be non-empty and > 0 (Sigma positive definite)")
    return s


# --------------------------------------------------------------------------------------------------
# spectra


def logunif_spectrum(d: int, s_max: float = 4.0, s_decay: float = 5.0) -> np.ndarray:
    """s_i = s_max exp(-s_decay u_i), u_i = (i - 1/2)/d: log-uniform over [s_max e^{-s_decay}, s_max]."""
    d = check_positive_int("d", d)
    s_max, s_decay = check_positive("s_max", s_max), check_real("s_decay", s_decay, low=0.0)
    u = (np.arange(1, d + 1) - 0.5) / d
    return s_max * np.exp(-s_decay * u)


def twolevel_spectrum(d: int, s_hi: float = 4.0, s_lo: float = 0.05) -> np.ndarray:
    """The first half of the modes at s_hi, the second half at s_lo (d even)."""
    d = check_int("d", d, low=2)
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


# --------------------------------------------------------------------------------------------------
# datasets and matrix functions: one eigh per dataset


def sample_eigh(s: ArrayLike, n: int, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` datasets X (n x d, rows iid N(0, diag s)); eigen-decompositions of Sigma_hat = X^T X / n.

    Returns (evals (reps, d), evecs (reps, d, d)); columns of evecs are eigenvectors. Eigenvalues are
    clipped at 0 (rank-deficient Sigma_hat when d > n).
    """
    s = _spectrum(s)
    n = check_positive_int("n", n)
    reps = check_positive_int("reps", reps)
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
    sigma2 = check_positive("sigma2", sigma2)
    return apply_matrix_function(evals, evecs, lambda lam: lam / (lam + sigma2), Y)


# --------------------------------------------------------------------------------------------------
# the two sizes P and 2P (claims C1, C2, C4)


@dataclass(frozen=True)
class SplitRun:
    """Per-dataset features of one simulated size (n, d, reps) at spectrum s.

    shrink (reps, L, d): diag sigma^2 R(sigma^2) for each noise level of ``sigma2_list``;
    denoised (reps, k, d): D_hat(y) at ``sigma2_fluct`` for each input row of ``inputs`` (the named inputs);
    bank_denoised (reps, B, d): the same for each row of ``bank`` (B random inputs, for the pooled claim);
    smap (reps, d): diag M_hat, the map of the whole trajectory b -> a; smid (reps, d): the same map stopped at
    the trajectory's midpoint, b -> a_mid (see :func:`trajectory_midpoint`); ssqrt (reps, d): diag Sigma_hat^{1/2};
    centered_shift (reps, d) or None: sigma^2 R(sigma^2) xbar at ``sigma2_fluct`` for an independent
    xbar ~ N(0, Sigma/N), N = n + 1: the centered model's output on N samples is ``denoised[:, k] + centered_shift``
    (see :func:`simulate_splits`).
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
    smid: np.ndarray
    ssqrt: np.ndarray
    bank: np.ndarray
    bank_denoised: np.ndarray
    centered_shift: np.ndarray | None = None

    @property
    def n_centered(self) -> int:
        """N = n + 1: the samples of the centered model whose centered covariance has the law of Sigma_hat."""
        return self.n + 1

    def centered(self, k: int) -> np.ndarray:
        """The centered model's denoiser outputs for named input k on each dataset, (reps, d)."""
        if self.centered_shift is None:
            raise ValueError("the centered model was not simulated (give simulate_splits a mean_rng)")
        return self.denoised[:, k, :] + self.centered_shift

    @property
    def a_mid(self) -> float:
        """The noise variance where the map ``smid`` stops, :func:`trajectory_midpoint` of (a, b)."""
        return trajectory_midpoint(self.a, self.b)


def trajectory_midpoint(a: float, b: float) -> float:
    """sqrt(a b): the noise variance sigma_mid^2 with sigma_mid = sqrt(sigma_min sigma_max), the trajectory's
    geometric midpoint in sigma (a = sigma_min^2, b = sigma_max^2)."""
    _check_ab(a, b)
    return float(np.sqrt(a * b))


def _check_ab(a: float, b: float) -> None:
    if not (np.isfinite(a) and np.isfinite(b) and 0 < a < b):
        raise ValueError(f"need 0 < a < b (a = sigma_min^2, b = sigma_max^2), got a = {a!r}, b = {b!r}")


def simulate_splits(s: ArrayLike, n: int, reps: int, rng: np.random.Generator, *, sigma2_list: Sequence[float],
                    sigma2_fluct: float, inputs: np.ndarray, a: float, b: float, bank: np.ndarray | None = None,
                    mean_rng: np.random.Generator | None = None, chunk: int = 100) -> SplitRun:
    """Simulate ``reps`` independent datasets (disjoint splits) and extract every feature the claims use.

    ``inputs`` (k, d) are the named inputs, ``bank`` (B, d) more inputs (none by default). Datasets are
    processed ``chunk`` at a time (memory); one eigh per dataset.

    With ``mean_rng`` each dataset also serves the centered model (empirical mean) on N = n + 1 samples: its
    centered covariance (1/n) sum_i (x_i - xbar)(x_i - xbar)^T has exactly the law of Sigma_hat from n rows
    (Helmert, :func:`helmert_rows`), and its mean xbar ~ N(0, Sigma/N) is independent of it, so xbar is drawn
    from ``mean_rng`` (a stream of its own: the other features do not change) and the centered denoiser
    xbar + Sigma_hat (Sigma_hat + sigma^2)^{-1} (y - xbar) = D_hat(y) + sigma^2 R xbar is stored as the shift
    sigma^2 R xbar.
    """
    s = _spectrum(s)
    reps = check_int("reps", reps, low=4)
    _check_ab(a, b)
    inputs = np.atleast_2d(np.asarray(inputs, dtype=float))
    bank = np.zeros((0, s.size)) if bank is None else np.atleast_2d(np.asarray(bank, dtype=float))
    if bank.shape[1] != s.size:
        raise ValueError(f"bank inputs must have d = {s.size} columns, got {bank.shape}")
    k = inputs.shape[0]
    sig = tuple(float(v) for v in sigma2_list)
    if any(v <= 0 for v in sig) or sigma2_fluct <= 0:
        raise ValueError("noise levels must be > 0")
    a_mid = trajectory_midpoint(a, b)
    shrink, den, smap, smid, ssqrt, shift = [], [], [], [], [], []
    done = 0
    while done < reps:
        c = min(chunk, reps - done)
        ev, V = sample_eigh(s, n, c, rng)
        shrink.append(np.stack([matrix_function_diag(ev, V, lambda x, t=t: t / (x + t)) for t in sig], axis=1))
        den.append(denoiser_outputs(ev, V, np.vstack([inputs, bank]), sigma2_fluct))
        smap.append(matrix_function_diag(ev, V, lambda x: np.sqrt((x + a) / (x + b))))
        smid.append(matrix_function_diag(ev, V, lambda x: np.sqrt((x + a_mid) / (x + b))))
        ssqrt.append(matrix_function_diag(ev, V, np.sqrt))
        if mean_rng is not None:
            xbar = mean_rng.standard_normal((c, s.size)) * np.sqrt(s / (n + 1))
            z = np.einsum("rd,rdk->rk", xbar, V) * (sigma2_fluct / (ev + sigma2_fluct))
            shift.append(np.einsum("rdk,rk->rd", V, z))
        done += c
    den_all = np.concatenate(den)
    return SplitRun(s, n, sig, float(sigma2_fluct), inputs, float(a), float(b), np.concatenate(shrink),
                    np.ascontiguousarray(den_all[:, :k]), np.concatenate(smap), np.concatenate(smid),
                    np.concatenate(ssqrt), bank,
                    np.ascontiguousarray(den_all[:, k:]), np.concatenate(shift) if shift else None)


def sizes(d: int, gamma: float, reps: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(n, d, reps) at sizes P and 2P; n = d/gamma must be an integer and d a multiple of 10."""
    d, reps = check_positive_int("d", d), check_int("reps", reps, low=8)
    gamma = check_positive("gamma", gamma)
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


def random_inputs(s: ArrayLike, sigma2: float, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` independent random inputs y ~ N(0, Sigma + sigma^2) (rows): the bank of the pooled C2 claim."""
    s = _spectrum(s)
    count = check_int("count", count, low=1)
    return rng.standard_normal((count, s.size)) * np.sqrt(s + sigma2)


@dataclass(frozen=True)
class SplitDesign:
    """The settings of the two simulated sizes (the chapter's parameters of the same names)."""

    d: int
    gamma: float
    reps: int
    sigma2_list: tuple[float, ...]
    sigma2_fluct: float
    spectrum: str
    s_max: float
    s_decay: float
    sigma_min: float
    sigma_max: float
    bank_inputs: int

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SplitDesign:
        """The design read from the chapter's validated parameters (or any mapping with these names)."""
        values = {f.name: params[f.name] for f in fields(cls)}
        values["sigma2_list"] = tuple(float(v) for v in values["sigma2_list"])
        return cls(**values)

    @property
    def a(self) -> float:
        return float(self.sigma_min) ** 2

    @property
    def b(self) -> float:
        return float(self.sigma_max) ** 2

    def sizes(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """(n, d, reps) at P and at 2P, see :func:`sizes`."""
        return sizes(self.d, self.gamma, self.reps)


def run_sizes(design: SplitDesign, *, rngs: Sequence[np.random.Generator],
              input_rngs: Sequence[np.random.Generator],
              mean_rngs: Sequence[np.random.Generator] | None = None) -> tuple[SplitRun, SplitRun]:
    """The chapter's two simulated sizes P and 2P.

    ``rngs`` (two Generators, P then 2P) draw the datasets, ``input_rngs`` (two more) the random input
    of C2 and then the bank of ``bank_inputs`` random inputs; the four streams are independent (the notebook
    passes ``rng_for(seed, "datasets", "P")``, ``rng_for(seed, "datasets", "2P")``,
    ``rng_for(seed, "C2-input", "P")``, ``rng_for(seed, "C2-input", "2P")``). ``mean_rngs`` (two more,
    optional) draw the dataset means of the centered model (see :func:`simulate_splits`).
    """
    if len(rngs) != 2 or len(input_rngs) != 2:
        raise ValueError("run_sizes needs two dataset streams and two input streams (sizes P and 2P)")
    if mean_rngs is not None and len(mean_rngs) != 2:
        raise ValueError("run_sizes needs two mean streams (sizes P and 2P) for the centered model")
    out = []
    means = (None, None) if mean_rngs is None else tuple(mean_rngs)
    for (n_, d_, r_), rng, input_rng, mean_rng in zip(design.sizes(), rngs, input_rngs, means, strict=True):
        s_ = make_spectrum(design.spectrum, d_, design.s_max, design.s_decay)
        Y_ = fluct_inputs(s_, design.sigma2_fluct, input_rng)
        bank_ = random_inputs(s_, design.sigma2_fluct, design.bank_inputs, input_rng)  # drawn after Y_
        out.append(simulate_splits(s_, n_, r_, rng, sigma2_list=design.sigma2_list,
                                   sigma2_fluct=design.sigma2_fluct, inputs=Y_, a=design.a, b=design.b, bank=bank_,
                                   mean_rng=mean_rng))
    return out[0], out[1]


# --------------------------------------------------------------------------------------------------
# C5: generated samples, the sampling map applied to the same input on independent datasets

SAMPLE_MODES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)  # positions of the unit inputs e_j in the spectrum (0 top, 1 bottom)


def sample_inputs(d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The inputs (noise seeds) of C5, rows: e_j for j = round(q (d - 1)), q in ``SAMPLE_MODES`` (top, middle and
    bottom modes of the spectrum, largest variance first), then one random unit vector (a normalized standard
    Gaussian from ``rng``). Returns (inputs (k, d), mode indices (k - 1,))."""
    d = check_int("d", d, low=2)
    modes = np.array([int(round(q * (d - 1))) for q in SAMPLE_MODES])
    Z = np.zeros((modes.size + 1, d))
    Z[np.arange(modes.size), modes] = 1.0
    z = rng.standard_normal(d)
    Z[-1] = z / np.linalg.norm(z)
    return Z, modes


@dataclass(frozen=True)
class SampleRun:
    """Claim C5 at one size: spectrum s, n rows, trajectory (a, b), inputs (k, d) with the mode indices of the unit
    ones, and the generated samples M_hat z (reps, k, d), M_hat = (Sigma_hat + a)^{1/2} (Sigma_hat + b)^{-1/2}, one
    dataset per row (independent datasets: any two rows are two disjoint splits fed the same inputs)."""

    s: np.ndarray
    n: int
    a: float
    b: float
    inputs: np.ndarray
    modes: np.ndarray
    samples: np.ndarray


def generated_samples(s: ArrayLike, n: int, reps: int, rng: np.random.Generator, inputs: np.ndarray, a: float,
                      b: float, chunk: int = 100) -> np.ndarray:
    """M_hat z for ``reps`` independent datasets of n rows and every input row z: (reps, k, d). M_hat is the
    probability-flow map from sigma_max^2 = b to sigma_min^2 = a of the learned linear score (Theorem on
    fractional powers), applied as V f(Lambda) V^T z with f(x) = sqrt((x + a)/(x + b))."""
    s = _spectrum(s)
    reps = check_int("reps", reps, low=4)
    _check_ab(a, b)
    inputs = np.atleast_2d(np.asarray(inputs, dtype=float))
    out, done = [], 0
    while done < reps:
        c = min(chunk, reps - done)
        ev, V = sample_eigh(s, n, c, rng)
        out.append(apply_matrix_function(ev, V, lambda x: np.sqrt((x + a) / (x + b)), inputs))
        done += c
    return np.concatenate(out)


def run_samples(design: SplitDesign, *, rngs: Sequence[np.random.Generator],
                input_rngs: Sequence[np.random.Generator]) -> tuple[SampleRun, SampleRun]:
    """C5 at the sizes P and 2P of ``design`` (its spectrum, trajectory and dataset counts): ``rngs`` (P then 2P)
    draw the datasets, ``input_rngs`` the random unit input at each size (the notebook passes
    ``rng_for(seed, "C5", "P")``, ``rng_for(seed, "C5", "2P")`` and ``rng_for(seed, "C5-input", t)``)."""
    if len(rngs) != 2 or len(input_rngs) != 2:
        raise ValueError("run_samples needs two dataset streams and two input streams (sizes P and 2P)")
    out = []
    for (n_, d_, r_), rng, input_rng in zip(design.sizes(), rngs, input_rngs, strict=True):
        s_ = make_spectrum(design.spectrum, d_, design.s_max, design.s_decay)
        Z, modes = sample_inputs(d_, input_rng)
        out.append(SampleRun(s_, n_, design.a, design.b, Z, modes,
                             generated_samples(s_, n_, r_, rng, Z, design.a, design.b)))
    return out[0], out[1]


# --------------------------------------------------------------------------------------------------
# C3: the pair disagreement at fixed d, for a sweep of n


def pair_disagreements(s: ArrayLike, n: int, pairs: int, y: np.ndarray, sigma2: float,
                       rng: np.random.Generator, chunk: int = 100) -> np.ndarray:
    """|D1(y) - D2(y)|^2 for ``pairs`` independent pairs of disjoint splits of size n: shape (pairs,)."""
    s = _spectrum(s)
    pairs = check_positive_int("pairs", pairs)
    out = []
    done = 0
    while done < pairs:
        c = min(chunk, pairs - done)
        ev, V = sample_eigh(s, n, 2 * c, rng)
        D = denoiser_outputs(ev, V, y, sigma2)[:, 0, :]
        out.append(np.sum((D[0::2] - D[1::2]) ** 2, axis=-1))
        done += c
    return np.concatenate(out)


@dataclass(frozen=True)
class RateData:
    """The C3 sweep at fixed d: spectrum s, input y, sizes ns and disagreements (pairs, len(ns))."""

    s: np.ndarray
    y: np.ndarray
    ns: np.ndarray
    sigma2: float
    disagreements: np.ndarray


def rate_experiment(*, d: int, ns: Sequence[int], pairs: int, sigma2: float, spectrum: str, s_max: float,
                    s_decay: float, input_rng: np.random.Generator,
                    rngs: Sequence[np.random.Generator]) -> RateData:
    """C3 data at fixed d: the random input of :func:`fluct_inputs` (drawn from ``input_rng``) and, for each
    n of ``ns``, ``pairs`` disagreements of independent split pairs drawn from its own stream ``rngs[i]``
    (the notebook passes ``rng_for(seed, "C3", str(n))``, so a size's numbers do not depend on the others)."""
    ns = np.asarray([check_positive_int("n", int(v)) for v in ns], dtype=int)
    if len(rngs) != ns.size:
        raise ValueError(f"give one random stream per size: {ns.size} sizes, {len(rngs)} streams")
    s = make_spectrum(spectrum, d, s_max, s_decay)
    y = fluct_inputs(s, sigma2, input_rng)[0]
    dis = np.stack([pair_disagreements(s, int(n), pairs, y, sigma2, rng) for n, rng in zip(ns, rngs, strict=True)],
                   axis=1)
    return RateData(s, y, ns, float(sigma2), dis)


# --------------------------------------------------------------------------------------------------
# Sigma = I (claim C1, Marchenko-Pastur) and the fixed-d delta method (claim C3, rank-one term)


def isotropic_shrinkage(d: int, n: int, reps: int, sigma2_list: Sequence[float],
                        rng: np.random.Generator) -> np.ndarray:
    """``reps`` datasets of n rows iid N(0, I_d): per dataset and noise level, (sigma^2/d) tr R(sigma^2), the mean
    of sigma^2/(lambda_k + sigma^2) over the eigenvalues of Sigma_hat (zeros included when d > n): (reps, L)."""
    d, n, reps = check_positive_int("d", d), check_positive_int("n", n), check_positive_int("reps", reps)
    sig = np.array([check_positive("sigma2", v) for v in sigma2_list], dtype=float)
    X = rng.standard_normal((reps, n, d))
    ev = np.maximum(np.linalg.eigvalsh(np.matmul(X.transpose(0, 2, 1), X) / n), 0.0)
    return np.mean(sig[None, :, None] / (ev[:, None, :] + sig[None, :, None]), axis=-1)


@dataclass(frozen=True)
class IsoData:
    """Claim C1 at Sigma = I: size (n, d), noise levels and (sigma^2/d) tr R(sigma^2) per dataset (reps, L)."""

    d: int
    n: int
    sigma2_list: tuple[float, ...]
    shrink: np.ndarray


def run_isotropic(design: SplitDesign, reps: int, *, rngs: Sequence[np.random.Generator]) -> tuple[IsoData, IsoData]:
    """Sigma = I datasets at the sizes (n, d) and (2n, 2d) of ``design``, ``reps`` and ``reps // 2`` of them (the
    two streams ``rngs``, P then 2P; the notebook passes ``rng_for(seed, "C1-iso", "P")`` and ``"2P"``)."""
    reps = check_int("reps", reps, low=8)
    if len(rngs) != 2:
        raise ValueError("run_isotropic needs two streams (sizes P and 2P)")
    out = []
    for (n_, d_, _), r_, rng in zip(design.sizes(), (reps, reps // 2), rngs, strict=True):
        out.append(IsoData(d_, n_, design.sigma2_list, isotropic_shrinkage(d_, n_, r_, design.sigma2_list, rng)))
    return out[0], out[1]


def peak_mode_input(s: ArrayLike, sigma2: float) -> np.ndarray:
    """sqrt(s_m + sigma^2) e_m for the mode m whose variance s_m is closest to sigma^2 (on a log scale)."""
    s = _spectrum(s)
    sigma2 = check_positive("sigma2", sigma2)
    m = int(np.argmin(np.abs(np.log(s / sigma2))))
    y = np.zeros(s.size)
    y[m] = np.sqrt(s[m] + sigma2)
    return y


@dataclass(frozen=True)
class FixedDData:
    """Claim C3 at fixed d: spectrum s, input y, noise sigma2, sizes ns and D_hat(y) per size
    (a list of (reps, d) arrays)."""

    s: np.ndarray
    y: np.ndarray
    sigma2: float
    ns: tuple[int, ...]
    denoised: tuple[np.ndarray, ...]


def fixed_d_experiment(*, d: int, ns: Sequence[int], reps: int, sigma2: float, spectrum: str, s_max: float,
                       s_decay: float, rngs: Sequence[np.random.Generator], chunk: int = 500) -> FixedDData:
    """At fixed d, for each n of ``ns`` (own stream ``rngs[i]``), D_hat(y) on ``reps`` datasets for the
    peak-mode input of :func:`peak_mode_input`."""
    ns = tuple(check_positive_int("n", int(v)) for v in ns)
    reps = check_int("reps", reps, low=4)
    if len(rngs) != len(ns):
        raise ValueError(f"give one random stream per size: {len(ns)} sizes, {len(rngs)} streams")
    s = make_spectrum(spectrum, d, s_max, s_decay)
    y = peak_mode_input(s, sigma2)
    out = []
    for n, rng in zip(ns, rngs, strict=True):
        parts, done = [], 0
        while done < reps:
            c = min(chunk, reps - done)
            ev, V = sample_eigh(s, n, c, rng)
            parts.append(denoiser_outputs(ev, V, y, sigma2)[:, 0, :])
            done += c
        out.append(np.concatenate(parts))
    return FixedDData(s, y, float(sigma2), ns, tuple(out))


# --------------------------------------------------------------------------------------------------
# the centered model (estimated mean): part (a) of the proposition


def helmert_rows(n: int) -> np.ndarray:
    """(n-1) x n matrix with orthonormal rows orthogonal to (1,...,1) (Helmert): H^T H = I - 11^T/n."""
    n = check_int("n", n, low=2)
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
