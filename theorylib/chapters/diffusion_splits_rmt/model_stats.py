"""The per-dataset features of chapter 'diffusion-splits-rmt' (measured side): the features behind the
variance and split-pair statistics.

The estimators that turn these features into statistics with covariances (jackknife, Richardson,
whitening) are the claims' error analysis, in :mod:`.estimators`. Like the model, this module never
imports ``theory``.
"""

from __future__ import annotations

import numpy as np

from .model import SplitRun


def var_features(D: np.ndarray) -> np.ndarray:
    """Per-dataset features (D, D^2) for variance statistics: (reps, 2, ...)."""
    return np.stack([D, D * D], axis=1)


def pair_features(run: SplitRun) -> np.ndarray:
    """One row per disjoint pair j of datasets (2j, 2j+1): |D1 - D2|^2 per named input, then D1 + D2 and
    D1^2 + D2^2 (flattened); the means of these rows give both the pair disagreement and V_hat."""
    D = run.denoised
    G = D.shape[0] // 2
    D1, D2 = D[0:2 * G:2], D[1:2 * G:2]
    dis = np.sum((D1 - D2) ** 2, axis=-1)  # (G, k)
    return np.concatenate([dis, (D1 + D2).reshape(G, -1), (D1 * D1 + D2 * D2).reshape(G, -1)], axis=1)
