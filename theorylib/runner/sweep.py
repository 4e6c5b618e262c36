"""Parameter sweeps: ``python -m theorylib sweep`` and ``sweep-plot``.

A sweep reruns a chapter with papermill at every point of the Cartesian
product of the swept parameters' values times the seeds. The plan is built and
validated in full first (:func:`plan_sweep`), so a bad value anywhere stops
the sweep before anything runs. The reruns execute on Dask distributed: an
embedded ``LocalCluster`` of single-threaded worker processes, or an existing
cluster (``--scheduler ADDRESS``). Each worker runs :func:`execute_rerun`,
which returns the executed notebook and its claims record to the client; the
client writes them as they arrive::

    DIR/reruns/<key>.ipynb   the executed notebook of one rerun
    DIR/reruns/<key>.json    its record (parameters, status, claims, error, seconds)
    DIR/sweep.csv            one row per rerun and claim
    DIR/sweep.json           the plan, every record and the summary per setting

Every record carries the code it was made with (:func:`chapter_code`: the commit, a hash of the chapter's
notebook code, package and the shared core, the package versions); resuming into a folder whose records
were made by other chapter code is refused, so old and new results never mix.

A rerun's status is ``passed`` (every claim held), ``failed`` (a claim
failed), ``crashed`` (the notebook raised otherwise, or left no claims record)
or ``error`` (the rerun could not finish: a lost worker, a dead kernel, an
interruption).
The first three are final: rerunning the same command skips them (resume).
Records are written atomically, so an interrupted sweep leaves only whole
records behind.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theorylib.core.chapter import package_name
from theorylib.core.claims import render_text
from theorylib.core.params import ParameterError, parse_value

from .environment import environment
from .paths import CORE_DIR, PACKAGES_DIR, REPO_ROOT, RUNS_DIR, BookWriteError, refuse_book
from .records import claims_record
from .registry import BookChapter as Chapter
from .rerun import FINAL

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130
RERUN_DIR = "reruns"
SWEEP_JSON, SWEEP_CSV = "sweep.json", "sweep.csv"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
TABLES_EVERY_S = 2.0
_SAFE = re.compile(r"[^A-Za-z0-9._+,\[\]-]+")


class SweepUsageError(ParameterError):
    """A bad sweep command line (exit status 2, nothing runs)."""


# --------------------------------------------------------------------------- parsing the command line


def split_values(text: str) -> list[str]:
    """Split ``-p NAME VALUES`` into the texts of the values.

    Values are separated by commas outside brackets and quotes, so
    ``"[4,8],[8,16]"`` gives two lists; when ``;`` occurs outside brackets and
    quotes it is the separator instead (``"[4,8];[8,16]"``, ``"a,b;c"``).
    """
    cuts: dict[str, list[int]] = {",": [], ";": []}
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch in ",;" and depth == 0:
            cuts[ch].append(i)
    pieces, start = [], 0
    for cut in cuts[";"] or cuts[","]:
        pieces.append(text[start:cut])
        start = cut + 1
    pieces.append(text[start:])
    return [p.strip() for p in pieces]


def parse_seeds(text: str) -> list[int]:
    """``--seeds``: ``0..9`` (inclusive: ten seeds), ``3``, ``0,5,9`` or ``0..3,10``."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(-?\d+)\.\.(-?\d+)", part)
        if m:
            lo, hi = int(m[1]), int(m[2])
            if hi < lo:
                raise SweepUsageError(f"--seeds {text}: the range {part} is empty (write LOW..HIGH, inclusive)")
            seeds.extend(range(lo, hi + 1))
        elif re.fullmatch(r"-?\d+", part):
            seeds.append(int(part))
        else:
            raise SweepUsageError(f"--seeds {text}: expected integers or ranges such as 0..9 (inclusive), "
                                  "separated by commas")
    if len(set(seeds)) != len(seeds):
        raise SweepUsageError(f"--seeds {text}: a seed is given twice")
    return seeds


def parse_sweep_params(pairs: Iterable[Sequence[str]]) -> dict[str, list[Any]]:
    """``[(name, "v1,v2,..."), ...]`` to ``{name: [parsed values]}`` (values are Python literals)."""
    swept: dict[str, list[Any]] = {}
    for name, text in pairs:
        if name in swept:
            raise SweepUsageError(f"-p {name} is given twice; give all its values at once: -p {name} v1,v2,...")
        swept[name] = [parse_value(t) for t in split_values(text)]
    return swept


# --------------------------------------------------------------------------- the plan


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def value_token(value: Any) -> str:
    """A file-name-safe token for a parameter value (a short hash is added when characters were replaced)."""
    text = value if isinstance(value, str) else _canonical(value)
    safe = _SAFE.sub("_", text).strip("_") or "_"
    if safe != text or len(safe) > 40:
        safe = f"{safe[:40]}~{hashlib.sha1(text.encode()).hexdigest()[:6]}"
    return safe


@dataclass(frozen=True)
class Rerun:
    """One point of the sweep: the swept values (declaration order), the seed and every parameter's value."""

    setting: tuple[tuple[str, Any], ...]
    seed: int
    parameters: Mapping[str, Any]

    @property
    def key(self) -> str:
        """The file stem of this rerun's notebook and record, e.g. ``mode=fail__size=4__seed=3``."""
        return "__".join([f"{k}={value_token(v)}" for k, v in self.setting] + [f"seed={self.seed}"])

    @property
    def overrides(self) -> dict[str, Any]:
        """The values papermill injects: the swept ones and the seed."""
        return {**dict(self.setting), "seed": self.seed}


def plan_sweep(chapter: Chapter, swept: Mapping[str, Sequence[Any]], seeds: Sequence[int]) -> list[Rerun]:
    """Every rerun of the sweep (settings in the order given, seeds innermost), all validated.

    Raises :class:`ParameterError` naming the parameter, the value and the
    allowed range at the first bad value; nothing has run by then.
    """
    names = [p.name for p in chapter.params if p.name in swept]
    for name in swept:
        chapter.param(name)  # unknown names: the message lists the known ones
        if name == "seed":
            raise SweepUsageError("sweep the seed with --seeds (e.g. --seeds 0..9), not with -p seed")
        if not swept[name]:
            raise SweepUsageError(f"-p {name}: no values")
    checked: dict[str, list[Any]] = {}
    for name in names:
        p = chapter.param(name)
        checked[name] = [p.check(v) for v in swept[name]]
        canon = [_canonical(v) for v in checked[name]]
        if len(set(canon)) != len(canon):
            raise SweepUsageError(f"-p {name}: a value is given twice")
    seed_param = chapter.param("seed")
    seeds = [seed_param.check(s) for s in seeds]
    if not seeds:
        raise SweepUsageError("--seeds: no seeds")
    reruns = []
    order = [n for n in swept if n in checked]  # the user's order for the settings' nesting
    for combo in itertools.product(*(checked[n] for n in order)):
        chosen = dict(zip(order, combo, strict=True))
        setting = tuple((n, chosen[n]) for n in names)
        for seed in seeds:
            full = chapter.validate({**chosen, "seed": seed}, strict=True)
            reruns.append(Rerun(setting, seed, full))
    return reruns


# --------------------------------------------------------------------------- one rerun (runs on a Dask worker)


def execute_rerun(notebook: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """Rerun ``notebook`` with papermill; never raises for a failure of the chapter itself.

    Returns ``status``, ``error`` (ename, evalue, cell) or None, ``claims``,
    ``seconds`` (kernel start, papermill and the chapter), ``worker``, ``env``
    (the thread limits the kernel inherited) and ``notebook_text`` (the
    executed notebook as JSON, or None), so the client writes the files and a
    remote cluster needs no shared file system for the results.
    """
    from .rerun import rerun

    with tempfile.TemporaryDirectory(prefix="theorylib-sweep-") as tmp:
        result = rerun(Path(notebook), Path(tmp) / Path(notebook).name, parameters)
        text = result.notebook.read_text() if result.notebook else None
    return {
        "status": result.status, "error": result.error, "claims": result.claims, "seconds": result.seconds,
        "worker": f"{socket.gethostname()}:{os.getpid()}", "env": {k: os.environ.get(k) for k in THREAD_VARS},
        "notebook_text": text,
    }


# --------------------------------------------------------------------------- records on disk


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _git_commit() -> dict[str, Any]:
    """The checkout's commit and whether tracked files differ from it (None outside a git checkout)."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def chapter_code(chapter: Chapter) -> dict[str, Any]:
    """What a rerun's numbers depend on besides its parameters: ``commit`` (and ``dirty``), ``code_hash``
    (sha256 of the notebook's code cells, the chapter package's and the core's ``.py`` files) and
    ``versions`` (Python and the numeric packages). Records with another ``code_hash`` are not resumed."""
    import nbformat

    h = hashlib.sha256()
    nb = nbformat.read(str(chapter.notebook_path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            h.update(b"cell\0" + cell.source.encode() + b"\0")
    folders = [PACKAGES_DIR / package_name(chapter.slug), CORE_DIR]
    for path in sorted(p for folder in folders if folder.is_dir() for p in folder.rglob("*.py")):
        h.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    env = environment()
    return {**_git_commit(), "code_hash": h.hexdigest(),
            "versions": {"python": env["python"], **env["packages"]}}


def make_record(chapter: Chapter, rerun: Rerun, result: Mapping[str, Any],
                code: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON record of one rerun (``result`` from :func:`execute_rerun`, minus the notebook; ``code``
    from :func:`chapter_code`)."""
    return {
        "chapter": chapter.slug, "key": rerun.key, "setting": dict(rerun.setting), "seed": rerun.seed,
        "parameters": dict(rerun.parameters), "status": result["status"], "error": result.get("error"),
        "claims": result.get("claims", []), "seconds": result.get("seconds"), "worker": result.get("worker"),
        "env": result.get("env"), "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "notebook": f"{RERUN_DIR}/{rerun.key}.ipynb" if result.get("notebook_text") else None,
        "code": dict(code) if code is not None else None,
    }


def store_result(out_dir: Path, chapter: Chapter, rerun: Rerun, result: Mapping[str, Any],
                 code: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write the rerun's notebook, then its record (the record's presence marks the rerun done)."""
    folder = out_dir / RERUN_DIR
    folder.mkdir(parents=True, exist_ok=True)
    if result.get("notebook_text"):
        _write_atomic(folder / f"{rerun.key}.ipynb", result["notebook_text"])
    record = make_record(chapter, rerun, result, code)
    _write_atomic(folder / f"{rerun.key}.json", json.dumps(record, indent=1))
    return record


def load_finished(out_dir: Path, chapter: Chapter, reruns: Sequence[Rerun],
                  code: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Records already in ``out_dir`` for these reruns (same chapter and parameters, final status).

    With ``code`` (:func:`chapter_code`), any record of the folder made by other chapter code (another
    ``code_hash``, or none recorded) stops the resume with a :class:`SweepUsageError`."""
    if code is not None:
        other = []
        for path in sorted((out_dir / RERUN_DIR).glob("*.json")):
            try:
                rec = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            made = (rec.get("code") or {}).get("code_hash")
            if rec.get("chapter") == chapter.slug and made != code["code_hash"]:
                other.append(path.stem)
        if other:
            raise SweepUsageError(
                f"{out_dir} holds {_plural(len(other), 'rerun')} made by other code of {chapter.slug} "
                f"(e.g. {other[0]}: the chapter's notebook, package or core changed since); sweep into a fresh "
                "-o DIR, or delete those records to redo them")
    done = {}
    for r in reruns:
        path = out_dir / RERUN_DIR / f"{r.key}.json"
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        same = (rec.get("chapter") == chapter.slug
                and _canonical(rec.get("parameters")) == _canonical(dict(r.parameters)))
        if same and rec.get("status") in FINAL:
            done[r.key] = rec
    return done


# --------------------------------------------------------------------------- summary and tables


def setting_label(setting: Mapping[str, Any]) -> str:
    """``size=4, mode='fail'`` (``defaults`` when nothing is swept)."""
    return ", ".join(f"{k}={v!r}" for k, v in setting.items()) or "defaults"


def _mean_sd(xs: Sequence[float]) -> tuple[float, float]:
    if not xs:
        return math.nan, math.nan
    mean = sum(xs) / len(xs)
    if len(xs) == 1:
        return mean, 0.0
    return mean, math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))


def residual(claim: Mapping[str, Any]) -> tuple[float, str, float] | None:
    """One seed's standardized residual of a claim: ``(value, unit, pass band)``, or None for a one-sided,
    exact or chi-square rule (no residual to standardize).

    A z-score claim gives z = (m - p)/SE with SE = tolerance / z_{1-alpha/2} (unit ``SE``, band z_{1-alpha/2});
    an absolute, relative or interval claim gives (m - p)/tolerance (unit ``tol``, band 1), the tolerance of a
    relative claim being rtol |p|. The claim passes when |value| <= band."""
    from theorylib.core.claims import z_critical

    rule, tol = claim.get("rule"), claim.get("tolerance")
    m, p = float(claim["measured"]), float(claim["predicted"])
    if tol is None or not math.isfinite(m) or not math.isfinite(p):
        return None
    if rule == "zscore" and claim.get("alpha"):
        z = z_critical(float(claim["alpha"]))
        return ((m - p) / (float(tol) / z), "SE", z) if tol > 0 else None
    scale = float(tol) * abs(p) if rule == "relative" else float(tol)
    if rule in ("absolute", "relative", "interval") and scale > 0:
        return (m - p) / scale, "tol", 1.0
    return None


def summarize(reruns: Sequence[Rerun], records: Mapping[str, Mapping[str, Any]]
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per setting: the reruns' statuses, and each claim's pass rate and measured mean and spread over seeds.

    Returns ``(settings, claims)``. A claims row has the setting, the claim,
    ``seeds`` (reruns that measured it), ``passed``, ``pass_rate``,
    ``measured_mean``, ``measured_sd`` (sample standard deviation over seeds),
    ``predicted_mean``, ``predicted_sd``, ``failed_seeds``, ``alpha`` (the false-alarm level the claim was
    built for, None if it has none) and, where the claim has a standardized residual (:func:`residual`),
    ``residual_mean``, ``residual_sd``, ``residual_max_abs``, ``residual_unit`` and ``residual_band``.
    """
    groups: dict[tuple[tuple[str, Any], ...], list[Rerun]] = {}
    for r in reruns:
        groups.setdefault(tuple((k, _canonical(v)) for k, v in r.setting), []).append(r)
    settings, claims = [], []
    for members in groups.values():
        setting = dict(members[0].setting)
        status: dict[str, list[int]] = {s: [] for s in (*FINAL, "error", "missing")}
        per_claim: dict[str, dict[str, list[Any]]] = {}
        errors: list[str] = []
        for r in members:
            rec = records.get(r.key)
            st = rec["status"] if rec else "missing"
            status[st].append(r.seed)
            if rec and rec.get("error") and st != "failed":
                e = rec["error"]
                msg = f"{e['ename']}: {e['evalue']}" + (f" (cell {e['cell']})" if e.get("cell") is not None else "")
                if msg not in errors:
                    errors.append(msg)
            for c in (rec or {}).get("claims", []):
                d = per_claim.setdefault(c["name"], {"m": [], "p": [], "ok": [], "seed": [], "z": [], "alpha": None})
                res = residual(c)
                if res is not None:
                    d["z"].append(res)
                d["alpha"] = c.get("alpha")
                d["m"].append(float(c["measured"]))
                d["p"].append(float(c["predicted"]))
                d["ok"].append(bool(c["passed"]))
                d["seed"].append(r.seed)
        settings.append({"setting": setting, "reruns": len(members),
                         **{s: len(v) for s, v in status.items()},
                         **{f"{s}_seeds": v for s, v in status.items() if s != "passed"},
                         "errors": errors})
        for name, d in per_claim.items():
            mm, ms = _mean_sd(d["m"])
            pm, ps = _mean_sd(d["p"])
            row = {"setting": setting, "claim": name, "seeds": len(d["m"]), "passed": sum(d["ok"]),
                   "pass_rate": sum(d["ok"]) / len(d["ok"]), "measured_mean": mm, "measured_sd": ms,
                   "predicted_mean": pm, "predicted_sd": ps,
                   "failed_seeds": [s for s, ok in zip(d["seed"], d["ok"], strict=True) if not ok],
                   "alpha": d["alpha"]}
            if d["z"] and len(d["z"]) == len(d["m"]) and len({(u, b) for _, u, b in d["z"]}) == 1:
                zs = [z for z, _, _ in d["z"]]
                zm, zsd = _mean_sd(zs)
                row.update(residual_mean=zm, residual_sd=zsd, residual_max_abs=max(abs(z) for z in zs),
                           residual_unit=d["z"][0][1], residual_band=d["z"][0][2])
            claims.append(row)
    return settings, claims


def failures(settings: Sequence[Mapping[str, Any]], claims: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per place where the sweep did not pass: a failed claim, a crash, an error, a missing rerun."""
    lines = []
    for c in claims:
        if c["passed"] < c["seeds"]:
            lines.append(f"claim {c['claim']!r} failed at {setting_label(c['setting'])} for "
                         f"{c['seeds'] - c['passed']} of {c['seeds']} seeds (seeds {_seeds(c['failed_seeds'])})")
    for s in settings:
        for st in ("crashed", "error", "missing"):
            if s[st]:
                why = f": {'; '.join(s['errors'])}" if s["errors"] and st != "missing" else ""
                lines.append(f"{s[st]} of {s['reruns']} reruns {st} at {setting_label(s['setting'])} "
                             f"(seeds {_seeds(s[st + '_seeds'])}){why}")
    return lines


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _seeds(seeds: Sequence[int]) -> str:
    shown = ", ".join(str(s) for s in seeds[:8])
    return shown + (f", ... ({len(seeds)} in all)" if len(seeds) > 8 else "")


def _g(x: float) -> str:
    return "nan" if not math.isfinite(x) else f"{x:.4g}"


def _passed_text(c: Mapping[str, Any]) -> str:
    """``9/10``, with the failures a claim built for level alpha should show (``expected 0.01``)."""
    text = f"{c['passed']}/{c['seeds']}"
    alpha = c.get("alpha")
    if alpha:
        text += f" (expected fails {c['seeds'] * float(alpha):.2g})"
    return text


def _residual_text(c: Mapping[str, Any]) -> str:
    if "residual_mean" not in c:
        return ""
    u = c["residual_unit"]
    return (f"{c['residual_mean']:+.2f} ± {c['residual_sd']:.2f} {u}, max |.| {c['residual_max_abs']:.2f} "
            f"(pass <= {c['residual_band']:.3g})")


def render_summary(settings: Sequence[Mapping[str, Any]], claims: Sequence[Mapping[str, Any]]) -> str:
    """The summary table: per setting and claim, the pass rate (against the failures its false-alarm level
    allows), the measured mean ± sd over seeds and the predicted value; where the prediction varies with the
    random instance, the mean ± sd of the predicted value means little, and the per-seed standardized residual
    (mean ± sd, largest |.|, its pass band) is shown instead."""
    rows = []
    for c in claims:
        varies = bool(c["predicted_sd"])
        predicted = _g(c["predicted_mean"]) + (f" ± {_g(c['predicted_sd'])}" if varies else "")
        res = _residual_text(c) if varies else ""
        rows.append([setting_label(c["setting"]), c["claim"], _passed_text(c),
                     f"{_g(c['measured_mean'])} ± {_g(c['measured_sd'])}", predicted, res])
    for s in settings:
        bad = [f"{s[st]} {st}" for st in ("crashed", "error", "missing") if s[st]]
        if bad:
            rows.append([setting_label(s["setting"]), "(no claims record)", f"0/{s['reruns']}", ", ".join(bad), "",
                         ""])
    return render_text(rows, ("setting", "claim", "passed", "measured (mean ± sd over seeds)", "predicted",
                              "residual per seed (if the prediction varies)"))


def _cell(value: Any) -> Any:
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else _canonical(value)


def csv_text(reruns: Sequence[Rerun], records: Mapping[str, Mapping[str, Any]]) -> str:
    """``sweep.csv``: one row per rerun and claim (one row with an empty claim for a rerun without claims)."""
    names = [k for k, _ in reruns[0].setting] if reruns else []
    header = ["key", *names, "seed", "status", "claim", "measured", "predicted", "tolerance", "passed",
              "seconds", "error"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in reruns:
        rec = records.get(r.key)
        if rec is None:
            continue
        e = rec.get("error")
        base = [r.key, *(_cell(v) for _, v in r.setting), r.seed, rec["status"]]
        tail = [rec.get("seconds"), f"{e['ename']}: {e['evalue']}" if e and rec["status"] != "failed" else ""]
        for c in rec.get("claims") or [None]:
            if c is None:
                w.writerow([*base, "", "", "", "", "", *tail])
            else:
                w.writerow([*base, c["name"], c["measured"], c["predicted"], c["tolerance_text"], c["passed"], *tail])
    return buf.getvalue()


def write_tables(out_dir: Path, chapter: Chapter, swept: Mapping[str, Sequence[Any]], seeds: Sequence[int],
                 reruns: Sequence[Rerun], records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Rewrite ``sweep.csv`` and ``sweep.json`` from the records at hand; returns the JSON document."""
    settings, claims = summarize(reruns, records)
    doc = {
        "chapter": chapter.slug, "notebook": chapter.notebook,
        "swept": {k: [v for v in swept[k]] for k in swept}, "seeds": list(seeds),
        "plan": [{"key": r.key, "setting": dict(r.setting), "seed": r.seed} for r in reruns],
        "reruns_planned": len(reruns), "reruns_recorded": sum(r.key in records for r in reruns),
        "complete": all(r.key in records and records[r.key]["status"] in FINAL for r in reruns),
        "all_passed": all(r.key in records and records[r.key]["status"] == "passed" for r in reruns),
        "failures": failures(settings, claims), "settings": settings, "summary": claims,
        "reruns": [records[r.key] for r in reruns if r.key in records],
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_atomic(out_dir / SWEEP_CSV, csv_text(reruns, records))
    _write_atomic(out_dir / SWEEP_JSON, json.dumps(doc, indent=1))
    return doc


# --------------------------------------------------------------------------- running a sweep on Dask


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def output_dir(chapter: Chapter, output: str | None) -> Path:
    """``-o DIR`` (default ``runs/SLUG/sweep``); never inside ``book/``, never an existing file."""
    out = Path(output) if output else RUNS_DIR / chapter.slug / "sweep"
    try:
        refuse_book(out, "a sweep")
    except BookWriteError as e:
        raise SweepUsageError(f"-o {e}") from None
    if out.exists() and not out.is_dir():
        raise SweepUsageError(f"-o {output}: exists and is not a directory")
    return out


def start_client(jobs: int | None, scheduler: str | None) -> tuple[Any, Any]:
    """A Dask client on ``scheduler``, or on a new LocalCluster of ``jobs`` single-threaded worker processes.

    Returns ``(client, cluster)``; ``cluster`` is None for an existing cluster.
    """
    import logging

    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="20s"), None
        except (OSError, TimeoutError, ValueError) as e:
            raise SweepUsageError(f"--scheduler {scheduler}: cannot connect ({e})") from e
    # Worker processes get OMP/OPENBLAS/MKL_NUM_THREADS=1 from the nanny's pre-spawn environment, and
    # execute_papermill sets them again before it starts each kernel.
    cluster = LocalCluster(n_workers=jobs or default_jobs(), threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run_sweep(chapter: Chapter, pairs: Sequence[Sequence[str]], seeds_text: str | None, *,
              output: str | None = None, jobs: int | None = None, scheduler: str | None = None,
              progress: bool = True, plot: str | None = None, plot_x: str | None = None) -> int:
    """Plan, validate, run (skipping finished reruns), record and summarize a sweep; the exit status."""
    if jobs is not None and jobs < 1:
        raise SweepUsageError(f"--jobs {jobs}: must be >= 1")
    if jobs is not None and scheduler:
        raise SweepUsageError("--jobs sizes the embedded LocalCluster; with --scheduler the cluster is sized already")
    swept = parse_sweep_params(pairs)
    seeds = parse_seeds(seeds_text) if seeds_text is not None else [chapter.param("seed").default]
    reruns = plan_sweep(chapter, swept, seeds)
    out_dir = output_dir(chapter, output)
    swept_checked = {k: list(dict.fromkeys(_canonical(v) for r in reruns for n, v in r.setting if n == k))
                     for k in swept}
    swept_values = {k: [json.loads(v) for v in vs] for k, vs in swept_checked.items()}
    if plot:
        _check_plot_x(swept_values, plot_x)
        # the stored notebook's claims are those every rerun makes (a chapter without stored outputs, such
        # as the tests' toy, is checked when its claims are known, after the reruns)
        stored = [c["name"] for c in (claims_record(chapter.notebook_path) or {}).get("claims", [])]
        if stored:
            plot = resolve_claim(plot, stored, chapter.slug)
    code = chapter_code(chapter)
    records: dict[str, dict[str, Any]] = dict(load_finished(out_dir, chapter, reruns, code))
    todo = [r for r in reruns if r.key not in records]
    n_settings = len(reruns) // len(seeds)
    print(f"sweep {chapter.slug}: {_plural(len(reruns), 'rerun')} ({_plural(n_settings, 'setting')} x "
          f"{_plural(len(seeds), 'seed')}) -> {out_dir}; {len(reruns) - len(todo)} done already, "
          f"{len(todo)} to run", file=sys.stderr)
    write_tables(out_dir, chapter, swept_values, seeds, reruns, records)
    interrupted = False
    if todo:
        interrupted = _execute_all(chapter, todo, records, out_dir, jobs, scheduler, progress,
                                   lambda: write_tables(out_dir, chapter, swept_values, seeds, reruns, records), code)
    doc = write_tables(out_dir, chapter, swept_values, seeds, reruns, records)
    print(render_summary(doc["settings"], doc["summary"]))
    if plot and doc["summary"]:
        path = plot_sweep(out_dir, plot, x=plot_x)  # a SweepUsageError here is a usage error (exit 2)
        print(f"plot: {path}", file=sys.stderr)
    if interrupted:
        print(f"theorylib: interrupted; {doc['reruns_recorded']} of {len(reruns)} reruns recorded in {out_dir}; "
              "run the same command again to finish the others", file=sys.stderr)
        return EXIT_INTERRUPTED
    if doc["all_passed"]:
        print(f"every claim passed at every setting and seed ({len(reruns)} reruns)", file=sys.stderr)
        return EXIT_OK
    print("theorylib: the sweep did not pass everywhere:\n  " + "\n  ".join(doc["failures"]), file=sys.stderr)
    return EXIT_FAILED


def _execute_all(chapter: Chapter, todo: Sequence[Rerun], records: dict[str, dict[str, Any]], out_dir: Path,
                 jobs: int | None, scheduler: str | None, progress: bool, refresh: Any,
                 code: Mapping[str, Any] | None = None) -> bool:
    """Submit ``todo`` to Dask and store each result as it arrives; True when interrupted."""
    from dask.distributed import as_completed
    from tqdm import tqdm

    client, cluster = start_client(jobs, scheduler)
    bar = tqdm(total=len(todo), unit="rerun", disable=not progress, file=sys.stderr, dynamic_ncols=True)
    futures: dict[Any, Rerun] = {}
    last = time.monotonic()
    try:
        notebook = str(chapter.notebook_path)
        for r in todo:
            futures[client.submit(execute_rerun, notebook, r.overrides, pure=False,
                                  key=f"rerun-{chapter.slug}-{r.key}-{os.urandom(4).hex()}")] = r
        bad = 0
        for fut in as_completed(futures):
            r = futures[fut]
            try:
                result = fut.result()
            except Exception as e:  # a lost worker: recorded as 'error', rerun on resume
                result = {"status": "error", "error": {"ename": type(e).__name__, "evalue": str(e), "cell": None}}
            records[r.key] = store_result(out_dir, chapter, r, result, code)
            bad += result["status"] != "passed"
            bar.set_postfix_str(f"{bad} not passed" if bad else "all passed", refresh=False)
            bar.update()
            if time.monotonic() - last > TABLES_EVERY_S:
                refresh()
                last = time.monotonic()
        return False
    except KeyboardInterrupt:
        return True
    finally:
        bar.close()
        client.cancel(list(futures))
        client.close()
        if cluster is not None:
            cluster.close()


# --------------------------------------------------------------------------- the plot


def _check_plot_x(swept: Mapping[str, Sequence[Any]], x: str | None) -> str:
    if not swept:
        raise SweepUsageError("a plot needs a swept parameter (-p NAME v1,v2,...) for its x axis")
    if x is None:
        return next(iter(swept))
    if x not in swept:
        raise SweepUsageError(f"--x {x}: not a swept parameter; swept: {', '.join(swept)}")
    return x


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def resolve_claim(claim: str, known: Sequence[str], where: Path | str = "the sweep") -> str:
    """The claim named ``claim``, or the only one whose name starts with it (``C3`` for ``C3 noisy rate``)."""
    if claim in known:
        return claim
    matches = [k for k in known if k.startswith(claim)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise SweepUsageError(f"claim {claim!r} is ambiguous in {where}; it starts {len(matches)} claims: "
                              f"{', '.join(map(repr, matches))}")
    raise SweepUsageError(f"claim {claim!r} is not in {where}; claims: {', '.join(map(repr, known)) or 'none'}")


def plot_sweep(sweep_dir: Path, claim: str, *, x: str | None = None, output: Path | None = None,
               logx: bool = False, logy: bool = False) -> Path:
    """Plot one claim's measured value (mean ± sd over seeds) and predicted value against a swept parameter.

    Reads ``sweep.json`` in ``sweep_dir``; the other swept parameters give one
    series each. A numeric parameter gives a numeric axis and a predicted curve;
    any other gives categories, each predicted value a horizontal tick. Writes
    ``output`` (default ``sweep_dir/sweep-<claim>-vs-<x>.png``; the suffix picks
    the format) and returns its path.
    """
    from matplotlib.figure import Figure

    from theorylib.core.plotting import MEASURED_COLOR, THEORY_COLOR, use_house_style

    try:
        doc = json.loads((Path(sweep_dir) / SWEEP_JSON).read_text())
    except (OSError, ValueError) as e:
        raise SweepUsageError(f"{sweep_dir}: no readable {SWEEP_JSON} ({e})") from e
    x = _check_plot_x(doc["swept"], x)
    claim = resolve_claim(claim, list(dict.fromkeys(c["claim"] for c in doc["summary"])), sweep_dir)
    rows = [c for c in doc["summary"] if c["claim"] == claim]
    xs_all = doc["swept"][x]
    numeric = _numeric(xs_all)
    position = {_canonical(v): (v if numeric else i) for i, v in enumerate(xs_all)}
    series: dict[str, list[dict[str, Any]]] = {}
    for c in rows:
        others = {k: v for k, v in c["setting"].items() if k != x}
        series.setdefault(setting_label(others) if others else "", []).append(c)
    use_house_style()
    fig = Figure()
    ax = fig.subplots()
    palette = [f"C{i}" for i in range(10)]
    # a prediction that varies with the random instance: plot the per-seed standardized residual instead
    on_residuals = any(c["predicted_sd"] for c in rows) and all("residual_mean" in c for c in rows)
    for i, (label, cs) in enumerate(series.items()):
        cs = sorted(cs, key=lambda c: position[_canonical(c["setting"][x])])
        px = [position[_canonical(c["setting"][x])] for c in cs]
        one = len(series) == 1
        suffix = f" ({label})" if label else ""
        if on_residuals:
            ax.errorbar(px, [c["residual_mean"] for c in cs], yerr=[c["residual_sd"] for c in cs], fmt="o",
                        capsize=3, color=MEASURED_COLOR if one else palette[i % 10],
                        label=f"(measured - predicted) / {cs[0]['residual_unit']}, mean ± sd over seeds{suffix}")
            continue
        ax.plot(px, [c["predicted_mean"] for c in cs], "-" if numeric else "_", markersize=18,
                color=THEORY_COLOR if one else palette[i % 10], label=f"predicted{suffix}")
        ax.errorbar(px, [c["measured_mean"] for c in cs], yerr=[c["measured_sd"] for c in cs], fmt="o",
                    capsize=3, color=MEASURED_COLOR if one else palette[i % 10],
                    label=f"measured, mean ± sd over seeds{suffix}")
    if on_residuals:
        band = rows[0]["residual_band"]
        ax.axhline(0.0, color=THEORY_COLOR, lw=1, label="the theory (residual 0)")
        for sign in (-1, 1):
            ax.axhline(sign * band, color=THEORY_COLOR, lw=1, ls="--",
                       label=f"pass band ±{band:.3g}" if sign > 0 else None)
    if not numeric:
        ax.set_xticks(range(len(xs_all)), [v if isinstance(v, str) else _canonical(v) for v in xs_all])
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    n_seeds = len(doc["seeds"])
    ax.set_xlabel(x)
    ax.set_ylabel(f"{claim}: standardized residual" if on_residuals else claim)
    ax.set_title(f"{doc['chapter']}: {claim} ({n_seeds} seed{'s' if n_seeds != 1 else ''} per point)")
    ax.legend()
    token = re.sub(r"[^A-Za-z0-9]+", "-", claim).strip("-").lower()
    path = Path(output) if output else Path(sweep_dir) / f"sweep-{token}-vs-{x}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, bbox_inches="tight")
    return path
