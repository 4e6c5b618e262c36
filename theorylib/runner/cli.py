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

from theorylib.core.claims import COLUMNS, render_text, table_rows
from theorylib.core.params import ParameterError, parse_pairs

from .paths import RUNS_DIR, VERIFICATION_NOTEBOOK, BookWriteError, refuse_book
from .records import claims_record
from .registry import BookChapter, LayoutError, all_chapters, get_chapter

EXIT_OK, EXIT_CLAIM_FAILED, EXIT_USAGE, EXIT_EXECUTION = 0, 1, 2, 3
TIME_BUDGET_S = 60.0


class UsageError(Exception):
    """A bad command line: reported with exit status 2."""


def _print_err(msg: str) -> None:
    print(f"theorylib: {msg}", file=sys.stderr)


def _last_run_seconds(chapter: BookChapter) -> float | None:
    """The wall time of the stored notebook's last execution at the defaults (recorded by ``refresh``)."""
    from .verification import made_on

    if not chapter.notebook_path.exists():
        return None
    wall = made_on(chapter.notebook_path).get("wall_s")
    return float(wall) if wall is not None else None


def cmd_list(args: argparse.Namespace) -> int:
    chapters = all_chapters()
    if args.json:
        print(json.dumps([
            {"slug": c.slug, "title": c.title, "paper": c.paper, "part": c.part, "notebook": c.notebook,
             "parameters": [{"name": p.name, "default": p.default, "allowed": p.allowed(), "doc": p.doc}
                            for p in c.params],
             "relations": [r.rule for r in c.relations], "last_run_s": _last_run_seconds(c),
             "alternatives": {k: dict(v) for k, v in c.alternatives.items()}}
            for c in chapters], indent=2))
        return EXIT_OK
    for c in chapters:
        wall = _last_run_seconds(c)
        took = f"; last run {wall:.0f} s at the defaults" if wall is not None else ""
        print(f"{c.slug}  (paper {c.paper}, {c.part}{took})\n  {c.title}\n  notebook: {c.notebook}")
        w_name = max(len(p.name) for p in c.params)
        w_default = max(len(repr(p.default)) for p in c.params)
        for p in c.params:
            print(f"    {p.name:<{w_name}} = {p.default!r:<{w_default}}  allowed: {p.allowed()}"
                  + (f"  — {p.doc}" if p.doc else ""))
        for rel in c.relations:
            print(f"    rule: {rel.rule}")
        for name, values in c.alternatives.items():
            print(f"    alternative {name}: " + ", ".join(f"{k}={v!r}" for k, v in values.items()))
        print()
    return EXIT_OK


def _claims_table(record: dict[str, Any] | None) -> str:
    if not record or not record.get("claims"):
        return "(no claims record in the executed notebook)"
    return render_text(table_rows(record["claims"]), COLUMNS)


def _run_output(chapter: BookChapter, output: str | None) -> Path:
    if output is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return RUNS_DIR / chapter.slug / f"{chapter.slug}-{stamp}.ipynb"
    out = Path(output)
    if out.suffix != ".ipynb":
        raise UsageError(f"-o {output}: the output must be an .ipynb file")
    try:
        return refuse_book(out)
    except BookWriteError as e:
        raise UsageError(f"-o {e}") from None


def cmd_run(args: argparse.Namespace) -> int:
    from .rerun import rerun

    chapter = get_chapter(args.slug)
    overrides = parse_pairs(args.param or [])
    params = chapter.validate(overrides, strict=True)
    changed = {k: params[k] for k in overrides}
    output = _run_output(chapter, args.output)
    if not args.json:
        print(f"running {chapter.slug} with {changed or 'the defaults'} -> {output}", file=sys.stderr)
    start = time.perf_counter()
    result = rerun(chapter.notebook_path, output, changed, progress=not args.no_progress)
    seconds = time.perf_counter() - start
    if result.status in ("passed", "failed"):
        _report({"claims": result.claims}, args.json)
        held = sum(bool(c["passed"]) for c in result.claims)
        print(f"{held}/{len(result.claims)} claims hold; notebook at {output}; {seconds:.1f} s", file=sys.stderr)
    if args.html and result.notebook:
        print(f"html: {write_html(result.notebook)}", file=sys.stderr)
    if result.status == "passed":
        return EXIT_OK
    if result.status == "failed":
        _print_err(f"{chapter.slug}: {(result.error or {}).get('evalue') or 'a claim failed'}")
        return EXIT_CLAIM_FAILED
    e = result.error or {}
    where = f"in cell {e['cell']}" if e.get("cell") is not None else "before any cell finished"
    _print_err(f"{chapter.slug}: execution failed {where}: {e.get('ename')}: {e.get('evalue')}"
               + (f"; the executed notebook is {output}" if result.notebook else ""))
    return EXIT_EXECUTION


def write_html(notebook: Path) -> Path:
    """The executed notebook as a self-contained HTML page beside it (figures embedded), to open in a browser."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(embed_images=True).from_notebook_node(nbformat.read(str(notebook), as_version=4))
    path = notebook.with_suffix(".html")
    path.write_text(body, encoding="utf-8")
    return path


def _report(record: dict[str, Any] | None, as_json: bool) -> None:
    if as_json:
        keys = ("name", "measured", "predicted", "tolerance", "tolerance_text", "rule", "alpha", "passed")
        print(json.dumps([{k: c[k] for k in keys} for c in (record or {}).get("claims", [])], indent=2))
    else:
        print(_claims_table(record))


def cmd_refresh(args: argparse.Namespace) -> int:
    from .execute import execute_in_place

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
    from .execute import execute_timed

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
    from .scaffold import ScaffoldError, new_chapter

    try:
        written = new_chapter(args.slug, title=args.title, paper=args.paper, part=args.part, cite=args.cite)
    except ScaffoldError as e:
        raise UsageError(str(e)) from None
    print("created " + ", ".join(written) + f"; write the chapter, then 'python -m theorylib refresh {args.slug}' "
          f"and 'python -m theorylib mutate {args.slug}'")
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import run_sweep

    return run_sweep(get_chapter(args.slug), args.param or [], args.seeds, output=args.output, jobs=args.jobs,
                     scheduler=args.scheduler, progress=not args.no_progress, plot=args.plot, plot_x=args.x)


def cmd_mutate(args: argparse.Namespace) -> int:
    from .mutation.report import TARGET, MutationUsageError, renote, run_mutation, summary_text

    chapters = all_chapters() if args.all or not args.slugs else [get_chapter(s) for s in args.slugs]
    ok = True
    for chapter in chapters:
        print(f"mutating {chapter.slug} ...", file=sys.stderr, flush=True)
        try:
            if args.renote:
                report = renote(chapter)
            else:
                report = run_mutation(chapter, jobs=args.jobs, scheduler=args.scheduler,
                                      progress=not args.no_progress, only=args.only)
        except MutationUsageError as e:
            raise UsageError(str(e)) from None
        print(summary_text(report))
        ok &= report["score"] >= TARGET and not report["moved_measurements"]
    return EXIT_OK if ok else EXIT_CLAIM_FAILED


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
    p.add_argument("--html", action="store_true", help="also write the executed notebook as HTML beside it")
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

    p = sub.add_parser("mutate", help="mutate a chapter's theory and count the mutants its claims kill (Dask)")
    p.add_argument("slugs", nargs="*")
    p.add_argument("--all", action="store_true")
    p.add_argument("--jobs", type=int, help="worker processes of the embedded LocalCluster (default: the cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on an existing Dask cluster, e.g. tcp://host:8786")
    p.add_argument("--only", metavar="TEXT", help="only the mutants whose id contains TEXT (e.g. a function "
                   "name); the report is printed, not stored")
    p.add_argument("--no-progress", action="store_true", help="no progress counter")
    p.add_argument("--renote", action="store_true", help="re-apply an edited mutation.toml to the stored report "
                   "without running the mutants again (refused once the theory, claims or notebook code changed)")
    p.set_defaults(func=cmd_mutate)

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
    p.add_argument("--part", default="Learning theory", help="the _toc.yml caption to add the chapter under "
                   "(created at the end of the chapters when new)")
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
    except (ParameterError, UsageError, LayoutError) as e:
        _print_err(str(e))
        return EXIT_USAGE
