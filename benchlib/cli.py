"""``benchlib`` — the command line: parses arguments, calls the API, nothing else.

Exit codes: 0 done, 1 a run failed (its folder says why), 2 bad input (parameters,
a file, an unreachable database: one line on stderr), 130 interrupted.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cli_output import emit as _emit

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


class _Names:
    """A registry's names, read when argparse first needs them (a check, the help), so
    that building the parser imports no summary or parser module."""

    def __init__(self, names):
        self.names = names

    def __iter__(self):
        return iter(self.names())

    def __contains__(self, name) -> bool:
        return name in self.names()


def _summary_kinds() -> tuple[str, ...]:
    from .summaries import ALL_KINDS
    return ALL_KINDS


def _add_run(sub):
    from .registries import targets, workloads
    p = sub.add_parser("run", help="run an experiment (YAML), or a workload's own property file "
                                   "as it is")
    p.add_argument("params", help="parameters/*.yaml, or a property file of a workload that "
                                  f"recognizes its own ({', '.join(workloads.names())}; "
                                  f"else {workloads.default()})")
    p.add_argument("-p", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a parameter (run.threads=[1,4]) or a workload property (recordcount=1000)")
    p.add_argument("--data-dir", default="data", help="where run folders go (default: data)")
    p.add_argument("--force", action="store_true", help="run again the runs that finished before")
    p.add_argument("--target", default=None,
                   help=f"for a property file: {' | '.join(targets.embedded_names())} | URL "
                        f"(default {targets.default()})")
    p.add_argument("--threads", type=int, default=None, help="for a property file: client threads")
    p.add_argument("--report", action="store_true", help="render the HTML report afterwards")
    p.add_argument("--dry-run", action="store_true",
                   help="validate everything and print the runs and steps it would make; run nothing")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar, nor a workload's own progress lines")
    p.set_defaults(func=cmd_run)


def _add_show(sub):
    p = sub.add_parser("show", help="print a tidy table of a run or an experiment")
    p.add_argument("path")
    p.add_argument("--table", default="steps",
                   help="steps | latency | intervals | hw | runs, or a workload's own table "
                        "the run folders hold")
    p.add_argument("--format", default="text", choices=["text", "csv", "json"])
    p.set_defaults(func=cmd_show)


def _add_list(sub):
    p = sub.add_parser("list", help="list the runs in the catalog")
    p.add_argument("--data-dir", default="data")
    p.add_argument("--rebuild", action="store_true", help="rebuild the catalog from the run folders first")
    p.set_defaults(func=cmd_list)


def _add_summary(sub):
    p = sub.add_parser("summary", help="one-line summaries of a run or an experiment")
    p.add_argument("path")
    p.add_argument("--kind", default="eff.op", choices=_Names(_summary_kinds), metavar="KIND",
                   help="%(choices)s (default %(default)s); points: per matrix point, mean and "
                        "95%% interval of ops/s, p99, CPU/op; configs: each configuration against a base")
    p.add_argument("--base", metavar="NAME", help="--kind configs: the configuration the others are "
                   "set against (default: the experiment's base:, else the first)")
    p.add_argument("--format", default="text", choices=["text", "csv", "json"])
    p.set_defaults(func=cmd_summary)


def _add_import(sub):
    from .registries import importers
    p = sub.add_parser("import", help="import another tool's output into a run folder")
    p.add_argument("kind", help=" | ".join([*importers.kinds(), "auto", "prometheus"]))
    p.add_argument("files", nargs="+", help="the tool's files; for prometheus: run folders")
    p.add_argument("--into", help="the run folder to create")
    p.add_argument("--url", help="prometheus: its URL; --instance: node_exporter's instance label")
    p.add_argument("--instance")
    p.add_argument("--query", action="append", default=[], help="prometheus: COLUMN=PROMQL over the shipped")
    p.add_argument("--name", default=None, help="the configuration name (cnf)")
    p.add_argument("--hw", nargs="*", default=[], help="vmstat / iostat / mpstat / ps logs of the run")
    p.set_defaults(func=cmd_import)


def _add_report(sub):
    p = sub.add_parser("report", help="render an experiment's HTML report (summary, heatmaps, time series); "
                       "of several, each one's and a compare page")
    p.add_argument("experiment_dir", nargs="+", help="the experiment's folder, data/<experiment>; several "
                   "(or a data folder of several): each one's report, then a page comparing them")
    p.add_argument("--compare", action="store_true",
                   help="only the page comparing the experiments given (not each one's report)")
    p.add_argument("--base", metavar="NAME", help="the compare page's base configuration (default: the "
                   "first experiment's base:, else its first)")
    p.add_argument("--open", action="store_true", help="open the report in a browser")
    p.add_argument("--static", action="store_true",
                   help="plots as PNG images (default: interactive, one plotly.js file beside the pages)")
    p.add_argument("--runs", action="append", default=[], metavar="PATTERN",
                   help="the runs the time series page draws: a run id or a pattern (*t4*), "
                        "again for more (default: every run, the best first, at most 8)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_report)


def cmd_report(args) -> int:
    from . import reports
    exps = list(dict.fromkeys(e for d in args.experiment_dir for e in reports.experiments_in(d)))
    progress = False if args.no_progress else None
    try:
        for exp in exps if not args.compare else ():
            path = reports.report(exp, open_browser=args.open and len(exps) == 1, base=args.base,
                                  static=args.static, progress=progress, runs=args.runs or None)
            print(f"report: {path}")
        if len(exps) > 1 or args.compare:
            path = reports.compare_report(exps, base=args.base, runs=args.runs or None, static=args.static,
                                          progress=progress, open_browser=args.open)
            print(f"compare: {path}")
    except reports.ReportError as e:
        print(f"benchlib: {e}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def cmd_run(args) -> int:
    from . import params
    src = Path(args.params)
    if src.suffix in (".yaml", ".yml"):
        if args.threads is not None or args.target is not None:
            raise params.ParameterError(
                f"{src}: --threads and --target are for a workload's property file; in a YAML "
                "use -p run.threads=[N] or -p 'targets=[{name: x, url: URL}]'")
        with _planning(args.dry_run) as fetches:
            exp = params.load_experiment(src, args.overrides)
    else:
        from .property_run import experiment_from_property_file
        from .registries.targets import default
        with _planning(args.dry_run) as fetches:
            exp = experiment_from_property_file(src, args.target or default(), args.threads, args.overrides)
    keys = list(dict.fromkeys(params.parse_override(i)[0] for i in args.overrides))
    if keys and "description" not in keys and exp.description:
        # written for the file's values: which ones -p changed (names only: a value may hold a password)
        exp = exp.model_copy(update={"description": f"{exp.description} (as written for the file; "
                                                    f"-p changed {', '.join(keys)})"})
    if args.dry_run:
        return _print_plan(exp, fetches)
    from . import run_experiment
    res = run_experiment(exp, args.data_dir, force=args.force,
                         progress=False if args.no_progress else None)
    degraded = sum(s == "degraded" for s in res.runs.values())   # an outage: docs/reliability.md "Run status"
    print(f"experiment {exp.experiment}: {sum(s in ('ok', 'skipped') for s in res.runs.values())}"
          f"/{len(res.runs)} runs ok{f', {degraded} degraded' if degraded else ''}; "
          f"run folders in {res.path}")
    if args.report:
        from . import reports
        try:
            print(f"report: {reports.report(res.path, progress=False if args.no_progress else None)}")
        except reports.ReportError as e:  # the runs are kept; only the report failed
            print(f"benchlib: {e}", file=sys.stderr)
            return EXIT_FAILED
    return EXIT_OK if res.ok else EXIT_FAILED


def _planning(dry_run: bool):
    """A dry run fetches no server: the versions it would fetch are gathered instead."""
    import contextlib

    from .targets import fetching
    return fetching.planning() if dry_run else contextlib.nullcontext(None)


def _print_plan(exp, fetches: dict | None = None) -> int:
    """``run --dry-run``: the validated experiment's runs and their steps; writes nothing."""
    from .params import plan
    specs = plan(exp)
    print(f"experiment {exp.experiment}: workload {exp.workload}, {len(specs)} runs")
    if fetches:
        from .targets.fetching import describe
        print(f"  fetches {describe(fetches)} before it runs")
    for spec in specs:
        # the run's own point of the workload's matrix (ybio's batch_size …)
        workload = exp.workload_class()({**exp.workload_properties(), **spec.workload_point})
        steps = " ".join(s.name for s in workload.steps(exp, spec))
        print(f"  {spec.run_id}: {steps}")
    return EXIT_OK


def cmd_show(args) -> int:
    from .params import ParameterError
    from .store import folders as results
    known = ["runs", *results.TABLE_NAMES]
    extra = sorted({t for rd in results.find_runs(args.path) for t in results.extra_table_names(rd)})
    if args.table not in known + extra:
        raise ParameterError(f"--table {args.table}: not a table of {args.path} "
                             f"(tables: {', '.join(known + extra)})")
    tables = [args.table] if args.table != "runs" else []
    runs = results.find_runs(args.path)
    if not runs:
        raise results.ResultsError(f"{args.path}: no run folder there")
    res = results.load_results(args.path, tables=tables, extra_tables=False)
    df = res[args.table]
    _say_what_was_shown(args.table, runs, res)
    if args.table == "latency" and "hdr" in df:
        df = df.drop(columns=["hdr"])
    if args.table == "runs" and "meta" in df:   # each run's whole meta.json: not a column to print
        df = df.drop(columns=["meta"])
    _emit(df, args.format)
    return EXIT_OK


def _say_what_was_shown(table: str, runs: list[Path], res: dict) -> None:
    """On stderr: the runs the table came from, and each run left out (its file missing)."""
    read = set(res["runs"]["path"].astype(str)) if len(res["runs"]) and "path" in res["runs"] else set()
    missing = [rd for rd in runs if str(rd) in read and table not in ("runs", "intervals")
               and not (rd / f"{table}.parquet").exists()]
    for rd in missing:
        print(f"benchlib: run {rd.name} has no {table}.parquet: not in the table", file=sys.stderr)
    print(f"benchlib: {table} of {len(read) - len(missing)} of {len(runs)} run folders "
          f"under {runs[0].parent if len(runs) > 1 else runs[0]}", file=sys.stderr)


def cmd_list(args) -> int:
    from .store import catalog
    from .store.folders import ResultsError
    if not Path(args.data_dir).is_dir():  # a read-only command creates nothing
        raise ResultsError(f"{args.data_dir}: no such folder (--data-dir)")
    if args.rebuild:
        from .store.place import writable_folder
        writable_folder(Path(args.data_dir), "--data-dir: the catalog is made there", make=False)
        catalog.rebuild(args.data_dir)
    df = catalog.list_runs(args.data_dir)
    _emit(df.drop(columns=["path"]) if len(df) else df, "text")
    print(f"benchlib: {len(df)} runs in the catalog of {args.data_dir}", file=sys.stderr)
    return EXIT_OK


def cmd_summary(args) -> int:
    from . import summaries
    from .store import folders as results
    if args.base is not None and args.kind != "configs":
        from .params import ParameterError
        raise ParameterError("--base: only --kind configs sets configurations against a base")
    res = results.load_results(args.path)
    base = {"base": args.base} if args.kind == "configs" else {}
    if args.format == "text" and args.kind in summaries.KINDS:
        print(summaries.summarize(res, args.kind, **base))
    elif args.kind in summaries.FRAMES:
        _emit(summaries.FRAMES[args.kind](res, **base), args.format)
    else:
        raise SystemExit(f"benchlib: --kind {args.kind} prints as text only")
    return EXIT_OK


def cmd_import(args) -> int:
    from .importers import import_output
    from .store.folders import ResultsError
    if args.kind == "prometheus":   # a database host's metrics, into existing run folders
        from .importers.prometheus import attach
        if not (args.url and args.instance) or any("=" not in q for q in args.query):
            raise ResultsError("import prometheus RUN --url URL --instance HOST:PORT [--query COLUMN=PROMQL]")
        for f in args.files:
            print(*(f"attached Prometheus to {p}" for p in attach(f, args.url, args.instance,
                  dict(q.split("=", 1) for q in args.query))), sep="\n")
        return EXIT_OK
    if not args.into:
        raise ResultsError("import: --into RUN_FOLDER is needed")
    path = import_output(args.kind, args.files, into=args.into, name=args.name, hw=args.hw or None)
    print(f"imported into {path}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    from .version import __version__
    parser = argparse.ArgumentParser(prog="benchlib", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"benchlib {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    from .cli_compare import add_compare
    from .cli_fetch import add_fetch_server
    for add in (_add_run, _add_show, _add_list, _add_summary, add_compare, _add_import, _add_report,
                add_fetch_server):
        add(sub)
    return parser


def _input_errors() -> tuple[type[BaseException], ...]:
    from .params import ParameterError
    from .store.folders import ResultsError
    from .summaries.uncertainty import CompareError
    from .targets.base import TargetError
    errors: list[type[BaseException]] = [ParameterError, ResultsError, TargetError, CompareError]
    try:
        from .importers.base import ImportFormatError
        errors.append(ImportFormatError)
    except ImportError:
        pass
    return tuple(errors)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C: the run in progress is marked interrupted."""


_terminated: list[bool] = []


def _on_sigterm(signum, frame):
    _terminated.append(True)  # the interrupt may be caught and re-raised as a plain one
    raise Terminated("SIGTERM")


def main(argv: list[str] | None = None) -> int:
    import signal
    args = build_parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return args.func(args)
    except _input_errors() as e:
        from .masking import mask_text
        one = " ".join(part.strip() for part in str(e).splitlines() if part.strip())
        if len(one) > 400:  # a garbage line quoted in full would flood the terminal
            one = one[:300] + f" … ({len(one) - 300:,} more characters)"
        print(f"benchlib: {mask_text(one)}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # `benchlib … | head`: the reader has what it wanted
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        term = bool(_terminated)
        print(f"benchlib: interrupted{' by SIGTERM' if term else ''}; "
              "completed runs and intervals are kept, run the same command again to resume",
              file=sys.stderr)
        return EXIT_TERMINATED if term else EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
