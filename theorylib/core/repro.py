"""Reproducibility: seeding, stable per-claim random streams, single-threaded math.

All randomness of a chapter flows from its ``seed`` parameter. Each claim
draws from its own stream :func:`rng_for` ``(seed, "C3")``, so adding or
reordering claims never changes another claim's numbers.
"""

from __future__ import annotations

import os
import zlib

import numpy as np


def _key(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def rng_for(seed: int, *names: str) -> np.random.Generator:
    """A numpy Generator determined by ``seed`` and the stream ``names`` (stable across runs)."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed = {seed!r} must be a non-negative integer")
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=tuple(_key(n) for n in names)))


def limit_threads(n: int = 1) -> None:
    """Run BLAS/OpenMP (and torch, when loaded) on ``n`` threads: one core, run-to-run identical sums."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(n)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)


def deterministic_torch(seed: int, threads: int = 1) -> None:
    """Seed torch, force deterministic kernels and a fixed thread count."""
    import torch

    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(threads)


def setup(seed: int, *, torch: bool = False) -> np.random.Generator:
    """Seed a chapter run: one thread, deterministic torch when asked; returns ``rng_for(seed)``."""
    limit_threads(1)
    if torch:
        deterministic_torch(seed)
    return rng_for(seed)
