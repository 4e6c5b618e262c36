"""Where a notebook's outputs were made: packages, BLAS kernel, SIMD level, CPU, threads.

:func:`environment` describes this process; the kernels it starts inherit its
environment variables, so they load the same BLAS with the same kernel.
``refresh`` stores the description in the notebook's metadata (not compared by
nbval) and the Verification page shows it.
"""

from __future__ import annotations

import os
import platform
from importlib import metadata
from typing import Any

PACKAGES = ("numpy", "scipy", "torch", "mpmath", "matplotlib")
ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE",
            "NPY_DISABLE_CPU_FEATURES", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def blas() -> list[dict[str, Any]]:
    """The BLAS/OpenMP libraries numpy loads, with their kernel (threadpoolctl)."""
    import numpy  # noqa: F401  (loads its BLAS)
    from threadpoolctl import threadpool_info

    keys = ("internal_api", "version", "architecture", "threading_layer")
    return [{k: lib.get(k) for k in keys if lib.get(k) is not None} for lib in threadpool_info()]


def simd() -> dict[str, list[str]]:
    """numpy's SIMD levels: baseline, found (dispatched) and not found."""
    try:
        from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__
    except ImportError:  # pragma: no cover - older numpy
        return {}
    found = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    return {"baseline": list(__cpu_baseline__), "dispatched": found}


def environment() -> dict[str, Any]:
    """A JSON-ready description of the numeric environment of this process."""
    return {
        "python": platform.python_version(),
        "packages": {p: v for p in PACKAGES if (v := _version(p))},
        "blas": blas(),
        "numpy_simd": simd(),
        "cpu": cpu_model(),
        "machine": platform.machine(),
        "env": {k: os.environ[k] for k in ENV_VARS if k in os.environ},
    }
