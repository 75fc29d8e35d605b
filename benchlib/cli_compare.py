"""``benchlib compare``: B against A per paired point, or B C … each against A, the base.

Points pair by DBMS configuration (:mod:`.summaries.pairing`): the same target, or the
targets ``--pair NAME_A=NAME_B`` names (``--config-a X --config-b Y`` pairs X with Y);
nothing paired is one line and exit 2.
"""
from __future__ import annotations

import sys
from pathlib import Path

from .cli_output import emit as _emit

EXIT_OK = 0


def add_compare(sub) -> None:
    p = sub.add_parser("compare", help="B/A per paired point: throughput, p99, CPU/op, 95%% intervals; "
                       "A B C …: each against A, the base")
    p.add_argument("a", help="experiment (or run) folder A, the reference")
    p.add_argument("b", nargs="*", help="experiment (or run) folder B (default: A again, "
                   "with --config-a/--config-b naming two configurations of one experiment); "
                   "several: each against A (relative throughput, p99, CPU and I/O per op)")
    p.add_argument("--config-a", help="only the runs of this configuration (cnf) in A")
    p.add_argument("--config-b", help="only the runs of this configuration (cnf) in B")
    p.add_argument("--pair", action="append", default=[], metavar="A=B",
                   help="pair A's target A with B's target B (pg=pg16); points pair only with "
                        "the same DBMS configuration (target, DBMS, version, options) otherwise")
    p.add_argument("--format", default="text", choices=["text", "csv", "json"])
    p.add_argument("--force", action="store_true", help="compare runs of different workloads all the same")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args) -> int:
    from .store.folders import load_results
    from .summaries import pairing, uncertainty
    pairs = pairing.parse_pairs(args.pair)
    if len(args.b) > 1:
        return _compare_against_base(args, pairs)
    b_path = args.b[0] if args.b else args.a
    a = pairing.only_config(load_results(args.a), args.config_a)
    b = pairing.only_config(load_results(b_path), args.config_b)
    if args.config_a and args.config_b and not pairs:   # two configurations named: their pair
        pairs = [(args.config_a, args.config_b)]
    _same_workload(a, b, args.a, b_path, args.force)
    df = pairing.compare(a, b, pairs)
    if args.format != "text":
        _emit(df, args.format)
        return EXIT_OK
    name_a = Path(args.a).name + (f":{args.config_a}" if args.config_a else "")
    name_b = Path(b_path).name + (f":{args.config_b}" if args.config_b else "")
    print(pairing.format_compare(df, name_a, name_b))
    for name, res in ((name_a, a), (name_b, b)):
        st = uncertainty.steady_state(res)
        for r in st[~st["steady"]].itertuples() if len(st) else ():
            print(f"warning: {name} {r.run_id} {r.step}: not steady, throughput drifts "
                  f"{r.drift:+.0%} over the loop (t = {r.t:.1f})")
    return EXIT_OK


def _compare_against_base(args, pairs) -> int:
    """``compare BASE B C …``: one relative table (summaries/against_base.py)."""
    from .store.folders import load_results
    from .summaries import against_base as ab
    base = load_results(args.a)
    names = [Path(p).name for p in args.b]
    names = names if len(set(names)) == len(names) else list(args.b)   # two run1: their paths
    others = [(n, load_results(p)) for n, p in zip(names, args.b)]
    for path, (_, res) in zip(args.b, others):
        _same_workload(base, res, args.a, path, args.force)
    df = ab.against_base(base, others, pairs)
    if args.format != "text":
        _emit(df, args.format)
    else:
        print(ab.format_against_base(df, Path(args.a).name, [n for n, _ in others]))
    return EXIT_OK


def _same_workload(a: dict, b: dict, name_a: str, name_b: str, force: bool) -> None:
    """A ratio of two workloads' figures means nothing (ybio's READ is a row, kv's a call):
    refused in one line unless --force, then said in one warning."""
    def workloads(res):
        return sorted({str(m.get("workload")) for m in res["runs"].get("meta", [])} - {"None"})
    wa, wb = workloads(a), workloads(b)
    if wa and wb and wa != wb:
        what = f"{name_a} ran {', '.join(wa)} and {name_b} ran {', '.join(wb)}"
        if not force:
            from .params import ParameterError
            raise ParameterError(f"compare: {what}: their figures do not compare (--force to go on)")
        print(f"warning: {what}: ratios of different workloads", file=sys.stderr)
