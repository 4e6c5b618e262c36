"""Executing chapters: papermill reruns, in-place refresh, text-twin sync.

Every execution runs the kernel single-threaded (BLAS and OpenMP limited to one
thread through the environment), so stored outputs are reproducible and the
timings are one-core timings. Kernels talk to this process over local IPC
sockets (:class:`IPCKernelManager`), not TCP: the kernel then has no reason to
warn about unencrypted TCP traffic on stderr, and nothing listens on a port.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.manager import AsyncKernelManager
from traitlets import Unicode, default

from .environment import environment
from .registry import twin_path

ONE_CORE_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                "PYTHONWARNINGS": "default", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
KERNEL = "python3"
CELL_TIMEOUT_S = 1800


class IPCKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels use IPC transport (Unix sockets in the Jupyter runtime folder).

    The socket path is absolute, so the kernel (started in the notebook's folder)
    and this process (anywhere) find the same sockets.
    """

    transport = Unicode("ipc")

    @default("ip")
    def _ip_default(self) -> str:
        import uuid

        from jupyter_core.paths import jupyter_runtime_dir

        folder = Path(jupyter_runtime_dir())
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder / f"kernel-{uuid.uuid4().hex[:12]}-ipc")


METADATA_KEY = "theorylib"


def one_core_env() -> None:
    """Limit the kernels this process starts to one BLAS/OpenMP thread."""
    os.environ.update({k: v for k, v in ONE_CORE_ENV.items() if k != "PYTHONWARNINGS"})


def sync_twin(nb_path: Path) -> None:
    """``jupytext --sync``: the newer of the pair updates the other."""
    from jupytext.cli import jupytext as jupytext_cli

    jupytext_cli(["--sync", "--quiet", str(nb_path)])


def execute_papermill(
    nb_path: Path, output: Path, parameters: Mapping[str, Any], *, progress: bool = True
) -> nbformat.NotebookNode:
    """Rerun a chapter with papermill (parameters injected after the ``parameters`` cell)."""
    import papermill as pm

    one_core_env()
    output.parent.mkdir(parents=True, exist_ok=True)
    return pm.execute_notebook(
        str(nb_path), str(output), parameters=dict(parameters), kernel_name=KERNEL,
        cwd=str(nb_path.parent), progress_bar=progress, request_save_on_cell_execute=False,
        execution_timeout=CELL_TIMEOUT_S, kernel_manager_class=IPCKernelManager,
    )


def _execute(nb_path: Path) -> tuple[nbformat.NotebookNode, float]:
    """Execute a notebook at its stored parameters with nbclient; (notebook, wall seconds)."""
    from nbclient import NotebookClient

    one_core_env()
    nb = nbformat.read(str(nb_path), as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name=KERNEL, record_timing=False,
                            kernel_manager_class=IPCKernelManager,
                            resources={"metadata": {"path": str(nb_path.parent)}})
    start = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - start


def execute_in_place(nb_path: Path) -> float:
    """Re-execute a stored notebook in place (its own defaults), then sync its text twin.

    Returns the execution's wall time in seconds. The twin is synced first, so
    edits made to either file are what runs. The notebook's metadata records
    where its outputs were made (``metadata.theorylib.made_on``: packages, BLAS
    kernel, CPU, threads, wall time); nbval does not compare metadata.
    """
    if twin_path(nb_path).exists():
        sync_twin(nb_path)
    nb, elapsed = _execute(nb_path)
    nb.metadata.setdefault(METADATA_KEY, {})["made_on"] = {**environment(), "wall_s": round(elapsed, 1)}
    nbformat.write(nb, str(nb_path))
    if twin_path(nb_path).exists():
        sync_twin(nb_path)
    return elapsed


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def execute_timed(nb_path: Path, output: Path) -> tuple[float, float]:
    """Execute a notebook at its defaults into ``output`` (the stored one is untouched).

    Returns (wall seconds of the execution, CPU seconds of the kernel process).
    The kernel is this process's child and is reaped on shutdown, so its CPU
    time is the growth of RUSAGE_CHILDREN: a one-core figure that other load
    on the machine does not inflate (kernel start-up included).
    """
    cpu0 = _children_cpu_seconds()
    nb, elapsed = _execute(nb_path)
    cpu = _children_cpu_seconds() - cpu0
    output.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(output))
    return elapsed, cpu
