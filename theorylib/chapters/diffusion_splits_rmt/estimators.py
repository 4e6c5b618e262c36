"""The estimators of chapter 'diffusion-splits-rmt' (the error analysis of its claims): delete-one jackknife,
Richardson extrapolation, whitening, spectral-bin reductions and the moments behind the variance and
split-pair statistics.

They turn the per-dataset features of the model (:mod:`.model`, :mod:`.model_stats`) into statistics with
their covariances; the claims (:mod:`.claims`) apply them to measured/predicted ratios, so their inputs may
depend on the theory (they are part of a claim's test statistic, not measurements). Like the model, this
module never imports ``theory``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

ArrayLike = np.ndarray | Sequence[float] | float


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


def bin_mean(x: np.ndarray, nbins: int) -> np.ndarray:
    """Mean over each of ``nbins`` consecutive equal blocks of the last axis."""
    return x.reshape(*x.shape[:-1], nbins, x.shape[-1] // nbins).mean(axis=-1)


def bin_sum(x: np.ndarray, nbins: int) -> np.ndarray:
    """Sum over each of ``nbins`` consecutive equal blocks of the last axis."""
    return x.reshape(*x.shape[:-1], nbins, x.shape[-1] // nbins).sum(axis=-1)


def unbiased_var(means: np.ndarray, count: int) -> np.ndarray:
    """The unbiased variance from the means of :func:`~.model_stats.var_features` over ``count`` datasets."""
    m1, m2 = means[..., 0, :], means[..., 1, :]
    return (m2 - m1 * m1) * count / (count - 1)


def pair_moments(means: np.ndarray, count: int, k: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(mean pair disagreement, unbiased total variance V_hat) per input, from the means of
    :func:`~.model_stats.pair_features` over ``count`` pairs (means (F,) or a stack (G, F)); both (m, k)."""
    m = np.atleast_2d(means)
    pair = m[:, :k]
    s1 = m[:, k:k + k * d].reshape(-1, k, d) / 2  # per-dataset mean of D
    s2 = m[:, k + k * d:].reshape(-1, k, d) / 2
    N = 2 * count
    v = ((s2 - s1 * s1) * N / (N - 1)).sum(axis=-1)
    return pair, v


def mean_pair_disagreement(means: np.ndarray, count: int, k: int) -> np.ndarray:
    """The mean of |O_r - O_q|^2 over all ordered pairs r != q of ``count`` independent datasets, from the means of
    :func:`~.model_stats.var_features` of the outputs O flattened to k inputs x d coordinates (..., 2, k d):
    exactly 2 x the unbiased total variance (the U-statistic identity), per input (..., k)."""
    v = unbiased_var(means, count)
    return 2.0 * v.reshape(*v.shape[:-1], k, -1).sum(axis=-1)
