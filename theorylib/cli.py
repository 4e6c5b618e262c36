"""``python -m theorylib``: list, rerun, sweep, refresh, benchmark and start chapters.

Exit status of ``run``: 0 every claim holds; 1 a claim failed (the table shows
which); 2 a bad parameter or usage (nothing is executed); 3 the execution
failed otherwise (the message names the cell). ``sweep`` (see ``theorylib.sweep``):
0 every claim held at every setting and seed; 1 otherwise; 2 bad usage; 130
interrupted (rerun the same command to resume).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .core.chapters import BOOK_DIR, REPO_ROOT, Chapter, all_chapters, get_chapter
from .core.claims import COLUMNS, render_text, table_rows
from .core.params import ParameterError, parse_pairs
from .core.records import claims_record

EXIT_OK, EXIT_CLAIM_FAILED, EXIT_USAGE, EXIT_EXECUTION = 0, 1, 2, 3
VERIFICATION_NOTEBOOK = BOOK_DIR / "verification.ipynb"
RUNS_DIR = REPO_ROOT / "runs"
TEMPLATE = REPO_ROOT / "templates" / "chapter.md"
TIME_BUDGET_S = 60.0


class UsageError(Exception):
    """A bad command line: reported with exit status 2."""


def _print_err(msg: str) -> None:
    print(f"theorylib: {msg}", file=sys.stderr)


def cmd_list(args: argparse.Namespace) -> int:
    chapters = all_chapters()
    if args.json:
        print(json.dumps([
            {"slug": c.slug, "title": c.title, "paper": c.paper, "notebook": c.notebook,
             "parameters": [{"name": p.name, "default": p.default, "allowed": p.allowed(), "doc": p.doc}
                            for p in c.params],
             "alternatives": {k: dict(v) for k, v in c.alternatives.items()}}
            for c in chapters], indent=2))
        return EXIT_OK
    for c in chapters:
        print(f"{c.slug}  (paper {c.paper}, {c.part})\n  {c.title}\n  notebook: {c.notebook}")
        for p in c.params:
            print(f"    {p.name} = {p.default!r:<24} allowed: {p.allowed()}" + (f"  — {p.doc}" if p.doc else ""))
        for name, values in c.alternatives.items():
            print(f"    alternative {name}: " + ", ".join(f"{k}={v!r}" for k, v in values.items()))
        print()
    return EXIT_OK


def _claims_table(record: dict[str, Any] | None) -> str:
    if not record or not record.get("claims"):
        return "(no claims record in the executed notebook)"
    return render_text(table_rows(record["claims"]), COLUMNS)


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def _run_output(chapter: Chapter, output: str | None) -> Path:
    if output is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return RUNS_DIR / chapter.slug / f"{chapter.slug}-{stamp}.ipynb"
    out = Path(output)
    if out.suffix != ".ipynb":
        raise UsageError(f"-o {output}: the output must be an .ipynb file")
    if _inside(out, BOOK_DIR):
        raise UsageError(f"-o {output}: a rerun never writes into book/ (use 'refresh' to update stored outputs)")
    return out


def cmd_run(args: argparse.Namespace) -> int:
    from papermill.exceptions import PapermillExecutionError

    from .core.execute import execute_papermill

    chapter = get_chapter(args.slug)
    overrides = parse_pairs(args.param or [])
    params = chapter.validate(overrides, strict=True)
    changed = {k: params[k] for k in overrides}
    output = _run_output(chapter, args.output)
    if not args.json:
        print(f"running {chapter.slug} with {changed or 'the defaults'} -> {output}", file=sys.stderr)
    try:
        execute_papermill(chapter.notebook_path, output, changed, progress=not args.no_progress)
    except PapermillExecutionError as e:
        record = claims_record(output) if output.exists() else None
        if e.ename == "ClaimsFailed":
            _report(record, args.json)
            _print_err(f"{chapter.slug}: {e.evalue}")
            return EXIT_CLAIM_FAILED
        _print_err(f"{chapter.slug}: execution failed in cell {e.cell_index} (execution count "
                   f"{e.exec_count}): {e.ename}: {e.evalue}; the executed notebook is {output}")
        return EXIT_EXECUTION
    record = claims_record(output)
    _report(record, args.json)
    if record is None:
        _print_err(f"{chapter.slug}: the run left no claims record")
        return EXIT_EXECUTION
    return EXIT_OK if all(c["passed"] for c in record["claims"]) else EXIT_CLAIM_FAILED


def _report(record: dict[str, Any] | None, as_json: bool) -> None:
    if as_json:
        keys = ("name", "measured", "predicted", "tolerance", "tolerance_text", "rule", "alpha", "passed")
        print(json.dumps([{k: c[k] for k in keys} for c in (record or {}).get("claims", [])], indent=2))
    else:
        print(_claims_table(record))


def cmd_refresh(args: argparse.Namespace) -> int:
    from .core.execute import execute_in_place

    chapters = all_chapters() if args.all or not args.slugs else [get_chapter(s) for s in args.slugs]
    for c in chapters:
        print(f"refreshing {c.slug} ...", file=sys.stderr, flush=True)
        seconds = execute_in_place(c.notebook_path)
        record = claims_record(c.notebook_path)
        print(f"  {seconds:.1f} s; claims:\n{_claims_table(record)}")
    if VERIFICATION_NOTEBOOK.exists() and not args.skip_verification:
        print("refreshing the Verification page ...", file=sys.stderr, flush=True)
        execute_in_place(VERIFICATION_NOTEBOOK)
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from .core.execute import execute_timed

    chapters = [get_chapter(s) for s in args.slugs] if args.slugs else all_chapters()
    total_wall = total_cpu = 0.0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in chapters:
            wall, cpu = execute_timed(c.notebook_path, Path(tmp) / f"{c.slug}.ipynb")
            total_wall, total_cpu = total_wall + wall, total_cpu + cpu
            flag = "ok" if cpu <= TIME_BUDGET_S else f"OVER {TIME_BUDGET_S:.0f} s"
            rows.append([c.slug, f"{cpu:.1f}", f"{wall:.1f}", flag])
            print(f"{c.slug}: {cpu:.1f} s CPU, {wall:.1f} s wall", file=sys.stderr, flush=True)
    rows.append(["total", f"{total_cpu:.1f}", f"{total_wall:.1f}", ""])
    print(render_text(rows, ("chapter", "CPU s (one core, kernel)", "wall s", f"budget {TIME_BUDGET_S:.0f} s")))
    return EXIT_OK


def cmd_new(args: argparse.Namespace) -> int:
    slug, module = args.slug, args.module
    if not module.isidentifier():
        raise UsageError(f"--module {module!r} must be a Python identifier")
    nb = BOOK_DIR / "chapters" / f"{slug}.ipynb"
    twin = nb.parent / "myst" / f"{slug}.md"
    decl = REPO_ROOT / "theorylib" / "chapters" / f"{module}.py"
    for path in (nb, twin, decl):
        if path.exists():
            raise UsageError(f"{path.relative_to(REPO_ROOT)} exists already")
    text = (TEMPLATE.read_text().replace("__SLUG__", slug).replace("__TITLE__", args.title)
            .replace("__PAPER__", str(args.paper)).replace("__MODULE__", module)
            .replace("__CITEKEY__", args.cite or slug))
    twin.parent.mkdir(parents=True, exist_ok=True)
    twin.write_text(text)
    decl.write_text(
        f'"""Declaration of the chapter {slug!r}."""\n\n'
        "from theorylib.core.chapters import Chapter\nfrom theorylib.core.params import Param\n\n"
        f"CHAPTER = Chapter(\n    slug={slug!r},\n    title={args.title!r},\n    paper={args.paper},\n"
        f"    part={args.part!r},\n    notebook={str(nb.relative_to(REPO_ROOT))!r},\n"
        '    params=(Param("seed", 0, "int", "all randomness flows from it", low=0),),\n'
        "    alternatives={},\n)\n"
    )
    from .core.execute import sync_twin

    sync_twin(twin)
    print(f"created {twin.relative_to(REPO_ROOT)}, {nb.relative_to(REPO_ROOT)} and "
          f"{decl.relative_to(REPO_ROOT)}; add the chapter to _toc.yml, write it, then "
          f"'python -m theorylib refresh {slug}'")
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import run_sweep

    return run_sweep(get_chapter(args.slug), args.param or [], args.seeds, output=args.output, jobs=args.jobs,
                     scheduler=args.scheduler, progress=not args.no_progress, plot=args.plot, plot_x=args.x)


def cmd_sweep_plot(args: argparse.Namespace) -> int:
    from .sweep import plot_sweep

    print(plot_sweep(Path(args.dir), args.claim, x=args.x, output=args.output, logx=args.logx, logy=args.logy))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m theorylib", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="every chapter with its parameters, defaults and allowed ranges")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("run", help="rerun a chapter with papermill and print its claims table")
    p.add_argument("slug")
    p.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="override a parameter (VALUE is a Python literal, e.g. 3, 0.1, [1,2], 'x')")
    p.add_argument("-o", "--output", help="executed notebook (default: runs/SLUG/SLUG-TIME.ipynb)")
    p.add_argument("--json", action="store_true", help="print the claims as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("sweep", help="rerun a chapter over a grid of parameter values and seeds, on Dask")
    p.add_argument("slug")
    p.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUES"),
                   help="swept values, Python literals separated by commas (or by ';' when a value holds "
                        "commas outside brackets), e.g. -p size 2,4,8 or -p d_list '[4,8],[8,16]'")
    p.add_argument("--seeds", help="seeds, e.g. 0..9 (inclusive), 3 or 0,5,9 (default: the chapter's default seed)")
    p.add_argument("--jobs", type=int, help="worker processes of the embedded LocalCluster (default: the cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on an existing Dask cluster, e.g. tcp://host:8786")
    p.add_argument("-o", "--output", metavar="DIR", help="results folder (default: runs/SLUG/sweep); "
                   "finished reruns found there are skipped")
    p.add_argument("--plot", metavar="CLAIM", help="also plot this claim against a swept parameter")
    p.add_argument("--x", metavar="NAME", help="the swept parameter on the plot's x axis (default: the first)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("sweep-plot", help="plot a claim of a finished sweep against a swept parameter")
    p.add_argument("dir", help="the sweep's folder (holding sweep.json)")
    p.add_argument("claim", help="the claim's name, e.g. 'C1 count'")
    p.add_argument("--x", metavar="NAME", help="the swept parameter on the x axis (default: the first)")
    p.add_argument("-o", "--output", help="the figure (.png, .svg or .pdf; default: DIR/sweep-CLAIM-vs-X.png)")
    p.add_argument("--logx", action="store_true")
    p.add_argument("--logy", action="store_true")
    p.set_defaults(func=cmd_sweep_plot)

    p = sub.add_parser("refresh", help="re-execute stored chapters in place (maintainers), sync twins")
    p.add_argument("slugs", nargs="*")
    p.add_argument("--all", action="store_true")
    p.add_argument("--skip-verification", action="store_true",
                   help="do not re-execute the Verification page afterwards")
    p.set_defaults(func=cmd_refresh)

    p = sub.add_parser("bench", help="each chapter's execution time at defaults on one core")
    p.add_argument("slugs", nargs="*")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("new", help="start a chapter from the template")
    p.add_argument("slug")
    p.add_argument("--title", required=True)
    p.add_argument("--paper", type=int, required=True)
    p.add_argument("--module", required=True, help="theorylib.chapters.<module> declaration name")
    p.add_argument("--part", default="Learning theory")
    p.add_argument("--cite", help="the paper's key in references.bib")
    p.set_defaults(func=cmd_new)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits 2 on usage errors already
        return int(e.code or 0)
    try:
        return args.func(args)
    except (ParameterError, UsageError) as e:
        _print_err(str(e))
        return EXIT_USAGE
