"""``python -m theorylib mutate SLUG``: the chapter's mutation score, computed on Dask and stored.

Every mutant of the chapter's ``theory.py`` (:mod:`.sites`) is run against the
chapter's claims at its defaults (:mod:`.replay`), one Dask task per mutant, on
an embedded ``LocalCluster`` of single-threaded workers or on ``--scheduler``.
A mutant is *killed* when a claim fails (or, noted separately, when the run
raises or times out), *survives* otherwise. ``mutation.toml`` beside the theory
may list survivors by id as ``[equivalent]`` (the same function on the inputs the
chapter allows; they leave the score's denominator) or ``[untested]`` (a part of
the theory the numbers do not test, with the reason; the chapter's closing
section lists them). The score is killed / (mutants - equivalent). A model
function that a mutant run calls with inputs the unmutated run never gave it is
a measurement that moved with the theory, a defect, unless ``[evaluates_theory]``
names the function with the reason (a claim whose prediction is an object, such
as a constructed model, that the measured side must evaluate).

The report, ``theorylib/chapters/<a_b_c>/mutation-report.json``, carries a hash
of what the score depends on (theory, claims, the notebook's code, the notes);
the tests fail when it is stale.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import nbformat

from theorylib.core.chapter import package_name
from theorylib.core.claims import render_text

from ..paths import PACKAGES_DIR
from ..records import claims_record
from ..registry import BookChapter
from .operators import COSMIC_RAY, FORMULA
from .sites import Mutant, enumerate_mutants

REPORT_NAME = "mutation-report.json"
NOTES_NAME = "mutation.toml"
TARGET = 0.90
MUTANT_TIMEOUT_S = 120.0  # the most a mutant may take; less for a fast chapter (see mutant_timeout)
MIN_TIMEOUT_S = 10.0


def mutant_timeout(recording_s: float, cap: float = MUTANT_TIMEOUT_S) -> float:
    """A mutant may take 3 times the unmutated run (which also simulates), at least 10 s and at most ``cap``."""
    return min(cap, max(MIN_TIMEOUT_S, 3.0 * recording_s))
KILLED = ("killed", "error", "timeout")


class MutationUsageError(ValueError):
    """Bad notes or a chapter that cannot be mutated (exit status 2)."""


def package_dir(chapter: BookChapter) -> Path:
    return PACKAGES_DIR / package_name(chapter.slug)


def code_hash(chapter: BookChapter, *, notes: bool = True) -> str:
    """sha256 of what the score depends on: theory.py, claims.py, the notebook's code cells, the notes.

    ``notes=False`` leaves the notes out: the hash of what the mutant runs depend on (``run_hash`` of the report),
    so that :func:`renote` can re-apply changed notes to stored runs without running the mutants again.
    """
    folder = package_dir(chapter)
    h = hashlib.sha256()
    for name in ("theory.py", "claims.py", NOTES_NAME):
        path = folder / name
        content = path.read_bytes() if path.exists() and (notes or name != NOTES_NAME) else b""
        h.update(name.encode() + b"\0" + content + b"\0")
    nb = nbformat.read(str(chapter.notebook_path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            h.update(cell.source.encode() + b"\0")
    return h.hexdigest()


def read_evaluates_theory(chapter: BookChapter) -> dict[str, str]:
    """``[evaluates_theory]`` of mutation.toml: model functions allowed to see theory-built inputs."""
    path = package_dir(chapter) / NOTES_NAME
    return dict(tomllib.loads(path.read_text()).get("evaluates_theory", {})) if path.exists() else {}


def read_notes(chapter: BookChapter, mutants: list[Mutant]) -> tuple[dict[str, str], dict[str, str]]:
    """``[equivalent]`` and ``[untested]`` of mutation.toml; an id that names no mutant is an error."""
    path = package_dir(chapter) / NOTES_NAME
    if not path.exists():
        return {}, {}
    data = tomllib.loads(path.read_text())
    equivalent, untested = dict(data.get("equivalent", {})), dict(data.get("untested", {}))
    ids = {m.id for m in mutants}
    stale = sorted((set(equivalent) | set(untested)) - ids)
    if stale:
        raise MutationUsageError(f"{path.name} lists mutants that the theory no longer has: {', '.join(stale)}")
    both = sorted(set(equivalent) & set(untested))
    if both:
        raise MutationUsageError(f"{path.name}: {both[0]} is listed as both equivalent and untested")
    return equivalent, untested


# --------------------------------------------------------------------------- the Dask task

_REPLAYERS: dict[str, Any] = {}


def mutant_task(slug: str, notebook: str, defaults: dict[str, Any], stored: list[dict[str, Any]],
                source: str | None, function: str | None, timeout: float) -> dict[str, Any]:
    """Run one mutant (its source, the function it changes) in this worker (the first task of a chapter in a
    worker also runs its baseline; ``source`` None is the unmutated theory)."""
    from .replay import Replayer

    key = f"{slug}:{hashlib.sha1((notebook + json.dumps(defaults, sort_keys=True)).encode()).hexdigest()}"
    replayer = _REPLAYERS.get(key)
    if replayer is None:
        replayer = Replayer(slug, Path(notebook), defaults)
        replayer.baseline(stored)
        _REPLAYERS[key] = replayer
    out = replayer.run(source, mutated=function, timeout=mutant_timeout(replayer.recording_seconds, timeout))
    return {"status": out.status, "failed": out.failed, "error": out.error, "misses": out.misses,
            "seconds": out.seconds}


# --------------------------------------------------------------------------- running and reporting


def run_mutation(chapter: BookChapter, *, jobs: int | None = None, scheduler: str | None = None,
                 progress: bool = True, timeout: float = MUTANT_TIMEOUT_S, only: str | None = None) -> dict[str, Any]:
    """Mutate the chapter's theory, run every mutant, write and return the report.

    ``only`` (a substring of mutant ids, e.g. a function name) runs a subset, for working on survivors: the
    result is printed but not stored (a stored report always covers every mutant).
    """
    from ..sweep import start_client

    folder = package_dir(chapter)
    theory = folder / "theory.py"
    if not theory.exists():
        raise MutationUsageError(f"{chapter.slug}: no theory module {theory}")
    mutants = enumerate_mutants(theory.read_text(), f"theorylib/chapters/{folder.name}/theory.py")
    read_notes(chapter, mutants)  # bad notes stop the run before it starts
    if only:
        mutants = [m for m in mutants if only in m.id]
        if not mutants:
            raise MutationUsageError(f"--only {only!r}: no mutant id contains it")
    record = claims_record(chapter.notebook_path)
    stored = (record or {}).get("claims")
    start = time.perf_counter()
    client, cluster = start_client(jobs, scheduler)
    try:
        from distributed import as_completed

        args = (chapter.slug, str(chapter.notebook_path), chapter.defaults(), stored)
        # The unmutated theory first, on every worker: the baseline check, and the memo each worker reuses.
        workers = list(client.scheduler_info()["workers"])
        baseline = [client.submit(mutant_task, *args, None, None, timeout, workers=[w], pure=False) for w in workers]
        base = [f.result() for f in baseline]
        if any(b["status"] != "survived" for b in base):
            raise MutationUsageError(f"{chapter.slug}: the unmutated theory fails its claims: {base}")
        futures = {client.submit(mutant_task, *args, m.source, m.function, timeout, pure=False,
                                 key=f"mutant-{i}-{m.id}"): m for i, m in enumerate(mutants)}
        results: dict[str, dict[str, Any]] = {}
        for n, future in enumerate(as_completed(futures), 1):
            m = futures[future]
            results[m.id] = future.result()
            if progress:
                print(f"\r{n}/{len(mutants)} mutants", end="", file=sys.stderr, flush=True)
        if progress:
            print(file=sys.stderr)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    seconds = time.perf_counter() - start
    report = _assemble(chapter, mutants, results, seconds, len(workers))
    if not only:
        (folder / REPORT_NAME).write_text(json.dumps(report, indent=1) + "\n")
    return report


def _assemble(chapter: BookChapter, mutants: list[Mutant], results: dict[str, dict[str, Any]], seconds: float,
              workers: int) -> dict[str, Any]:
    """The report of the mutants' run results under the chapter's current notes."""
    folder = package_dir(chapter)
    equivalent, untested = read_notes(chapter, mutants)
    allowed_misses = read_evaluates_theory(chapter)
    rows = []
    for m in mutants:
        res = results[m.id]
        status = res["status"]
        if status == "survived" and m.id in equivalent:
            status = "equivalent"
        rows.append({"id": m.id, "operator": m.operator, "line": m.line, "function": m.function, "status": status,
                     "failed_claims": res["failed"], "error": res["error"],
                     "moved_measurements": [f for f in res["misses"] if f not in allowed_misses],
                     "diff": m.diff, "reason": equivalent.get(m.id) or untested.get(m.id)})
    counts = {s: sum(r["status"] == s for r in rows) for s in (*KILLED, "survived", "equivalent")}
    killed = sum(counts[s] for s in KILLED)
    denominator = len(rows) - counts["equivalent"]
    return {
        "chapter": chapter.slug, "code_hash": code_hash(chapter), "run_hash": code_hash(chapter, notes=False),
        "theory": f"theorylib/chapters/{folder.name}/theory.py",
        "engine": f"cosmic-ray {_version('cosmic-ray')} operators {sorted(COSMIC_RAY)} + formula operators "
                  f"{sorted(FORMULA)}",
        "mutants": len(rows), "killed": killed, "counts": counts,
        "score": round(killed / denominator, 4) if denominator else 1.0,
        "untested": sorted(r["id"] for r in rows if r["status"] == "survived" and r["id"] in untested),
        "unexplained_survivors": sorted(r["id"] for r in rows if r["status"] == "survived" and r["id"] not in untested),
        "moved_measurements": sorted({f for r in rows for f in r["moved_measurements"]}),
        "evaluates_theory": allowed_misses,
        "seconds": round(seconds, 1), "workers": workers,
        "results": rows,
    }


def renote(chapter: BookChapter) -> dict[str, Any]:
    """Re-apply the chapter's current ``mutation.toml`` to its stored report, without running the mutants again.

    Allowed only while what the runs depend on (theory, claims, the notebook's code) is unchanged since the
    report was made (its ``run_hash``); otherwise the mutants must be run again.
    """
    report = load_report(chapter)
    if report is None or "run_hash" not in report:
        raise MutationUsageError(f"{chapter.slug}: no stored report with a run hash; run the mutants first")
    if report["run_hash"] != code_hash(chapter, notes=False):
        raise MutationUsageError(f"{chapter.slug}: the theory, the claims or the notebook's code changed since the "
                                 "report was made; run the mutants again")
    folder = package_dir(chapter)
    mutants = enumerate_mutants((folder / "theory.py").read_text(), f"theorylib/chapters/{folder.name}/theory.py")
    stored = {r["id"]: r for r in report["results"]}
    if set(stored) != {m.id for m in mutants}:
        raise MutationUsageError(f"{chapter.slug}: the stored report's mutants are not the theory's")
    allowed = read_evaluates_theory(chapter)
    results = {i: {"status": "survived" if r["status"] == "equivalent" else r["status"], "failed": r["failed_claims"],
                   "error": r["error"], "misses": r["moved_measurements"]} for i, r in stored.items()}
    if not set(report["evaluates_theory"]) <= set(allowed):  # the stored runs no longer hold what it allowed
        raise MutationUsageError(f"{chapter.slug}: [evaluates_theory] lost entries; run the mutants again")
    new = _assemble(chapter, mutants, results, report["seconds"], report["workers"])
    (folder / REPORT_NAME).write_text(json.dumps(new, indent=1) + "\n")
    return new


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def load_report(chapter: BookChapter) -> dict[str, Any] | None:
    path = package_dir(chapter) / REPORT_NAME
    return json.loads(path.read_text()) if path.exists() else None


def summary_text(report: dict[str, Any]) -> str:
    c = report["counts"]
    lines = [f"{report['chapter']}: {report['killed']} of {report['mutants'] - c['equivalent']} non-equivalent "
             f"mutants killed (score {report['score']:.0%}; {c['killed']} by a claim, {c['error']} by an error, "
             f"{c['timeout']} by a timeout; {c['equivalent']} equivalent; {c['survived']} survived) "
             f"in {report['seconds']:.0f} s on {report['workers']} workers"]
    surv = [r for r in report["results"] if r["status"] == "survived"]
    if surv:
        rows = [[r["id"], str(r["line"]), (r["diff"].splitlines() or [""])[-1].strip()[:70],
                 "untested: " + r["reason"][:40] if r["reason"] else "UNEXPLAINED"] for r in surv]
        lines.append(render_text(rows, ("survivor", "line", "mutated line", "note")))
    if report["moved_measurements"]:
        moved = ", ".join(report["moved_measurements"])
        lines.append(f"measured values that moved with the theory (a defect): {moved}")
    return "\n".join(lines)
