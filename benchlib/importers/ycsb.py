"""YCSB outputs (Java YCSB 0.17/0.18, go-ycsb) into the tidy tables.

Java YCSB writes, per run (one ``bin/ycsb load|run`` process):

- stdout: the summary ``[OP], Metric, value`` at the end (:mod:`.ycsb_summary`: per
  measurement type histogram, hdrhistogram, timeseries rows or raw data points),
  ``Return=STATUS`` counts, ``[CLEANUP]`` (one per thread), JVM GC totals;
- stderr: ``Command line:``, the version banner and, with ``-s``, a status line per
  ``status.interval`` (:mod:`.ycsb_status`; ``timeseries`` prints them to stdout too);
- with ``hdrhistogram.fileoutput``: one HdrHistogram log per operation (:mod:`.ycsb_hdrlog`).

go-ycsb's output is told apart by its rows (:mod:`.go_ycsb`).

This module reads each file with the scanner its content asks for, groups the files
of one process (they share a name stem: ``x.out``/``x.err``/``x-READ.hdr``) and makes
a step of each group. A process run with ``-load`` (or, without a command line, one
whose operations are INSERT only) is the load ``l.pre``; the others are run loops
``r.L1``, ``r.L2`` … in the order of their start. Where several sources give a
second of an operation, the finest wins: raw data points, timeseries rows, hdrhistogram
status blocks, .hdr logs, then the other status blocks.

Speed (``bench/bench_import.py``): the status and summary lines of an ASCII file are
cut from its bytes by a scanner in C (:mod:`.linescan`), the two kinds in two
threads; a file with a line that is not plain is read by regular expressions over
its whole text, which also name a line that looks like a YCSB line but does not
parse (:class:`ImportFormatError` with its number).
"""
from __future__ import annotations

import gc
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..schema import INTENDED_PREFIX
from .base import Imported, ImportFormatError, stack_steps
from .go_ycsb import go_step, scan_go
from .sources import op_source, pick_sources
from .text import FileText, float_or_none, int_or_none, stem_of
from .ycsb_hdrlog import fill_latency, hdr_intervals, scan_hdr
from .ycsb_status import fold_failed, scan_status, status_intervals
from .ycsb_summary import (
    JVM_OPS,
    latency_from_summary,
    measurement_type,
    raw_intervals,
    scan_raw,
    scan_summary,
    timeseries_intervals,
)


@contextmanager
def _no_gc():
    # a regular expression over a file that is not plain makes millions of small tuples,
    # over which the cyclic GC would run again and again
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# ----------------------------------------------------------------- one file

@dataclass
class _Part:
    path: Path
    kind: str = "java"                        # java | go | hdr | empty
    summary: dict = field(default_factory=dict)   # op -> {metric: value}
    ts: pd.DataFrame | None = None            # timeseries rows: op, t_ms, mean_us
    heads: pd.DataFrame | None = None         # status lines
    blocks: pd.DataFrame | None = None        # their per-operation blocks
    raw: pd.DataFrame | None = None           # raw data points
    command: str | None = None
    version: str | None = None
    hdr: dict | None = None                   # an HdrHistogram log
    go: dict | None = None                    # go-ycsb rows
    src: FileText | None = None               # the file's content

    @property
    def has_summary(self) -> bool:
        return "OVERALL" in self.summary


def _scan(path: Path) -> _Part:
    src = FileText.read(path)
    part = _Part(path, src=src)
    if src.blank():
        part.kind = "empty"
        return part
    head = src.head(4096)
    if path.suffix == ".hdr" or head.lstrip().startswith("#[Logging for:") \
            or "#[Histogram log format version" in head:
        part.kind, part.hdr = "hdr", scan_hdr(path, src.text)
        return part
    with _no_gc(), ThreadPoolExecutor(1) as pool:
        # the status lines are read beside the rest: the C scanner lets go of the GIL,
        # so the two share the CPU cores
        status = pool.submit(scan_status, path, src) if src.ascii else None
        if " - Takes(s): " in src.head(65536):   # go-ycsb prints such rows from its first second
            part.kind, part.go = "go", scan_go(path, src.w)
            return part
        part.summary, part.ts, raw_header = scan_summary(path, src)
        try:   # while the status lines are still being read; their error comes first
            part.raw, raw_error = scan_raw(path, src, raw_header), None
        except ImportFormatError as e:
            raw_error = e
        part.heads, part.blocks = status.result() if status is not None else scan_status(path, src)
        if raw_error is not None:
            raise raw_error
    # the launcher prints both before anything else: in the first MiB, or not there
    part.command = src.line_after("Command line: ", within=1 << 20) or None
    part.version = (src.line_after("YCSB Client ", within=1 << 20).split() or [None])[0]
    if not (part.summary or part.heads is not None or part.raw is not None or part.ts is not None):
        raise ImportFormatError(path, None, "expected YCSB output: [OVERALL] summary lines, "
                                            "status lines (-s) or raw data lines")
    return part


# ----------------------------------------------------------------- one process run

def _command(cmd: str | None) -> dict:
    out = {"props": {}, "load": None, "threads": None, "target": None, "workload": []}
    if not cmd:
        return out
    tok = cmd.split()
    for i, t in enumerate(tok):
        nxt = tok[i + 1] if i + 1 < len(tok) else None
        if t == "-load":
            out["load"] = True
        elif t == "-t":
            out["load"] = False
        elif t == "-threads":
            out["threads"] = int_or_none(nxt)
        elif t == "-target":
            out["target"] = float_or_none(nxt)
        elif t == "-P" and nxt:
            out["workload"].append(Path(nxt).name)
        elif t == "-p" and nxt and "=" in nxt:
            k, v = nxt.split("=", 1)
            out["props"][k] = v
    p = out["props"]
    if out["load"] is None and p.get("dotransactions") in ("true", "false"):
        out["load"] = p["dotransactions"] == "false"
    out["threads"] = out["threads"] or int_or_none(p.get("threadcount"))
    out["target"] = out["target"] or float_or_none(p.get("target"))
    return out


def _java_step(group: list[_Part]) -> dict:
    parts = [p for p in group if p.kind == "java"]
    summary: dict = {}
    for p in parts:
        for op, m in p.summary.items():
            summary.setdefault(op, {}).update(m)
    command = next((p.command for p in parts if p.command), None)
    version = next((p.version for p in parts if p.version), None)
    cmd = _command(command)
    mtype = measurement_type(cmd["props"], summary, any(p.ts is not None for p in parts),
                             any(p.raw is not None for p in parts))

    files = [(p.path, p.src, p.heads, p.blocks) for p in parts if p.heads is not None]
    total = status = t0 = max_ops = None
    if files:
        total, status, t0, max_ops = status_intervals(files, gauges=JVM_OPS)
    raw = [p.raw for p in parts if p.raw is not None]
    raw = pd.concat(raw, ignore_index=True) if raw else None
    picked, picked_ops, hists = _java_intervals(group, cmd, raw, status, t0)
    frames = ([total] if total is not None else []) + picked
    intervals = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0] if frames else None
    intervals = fold_failed(intervals, picked_ops)

    lat = pd.DataFrame(latency_from_summary(summary, mtype))
    lat = fill_latency(lat, hists, raw, intervals, picked_ops)
    for c in ("op", "count", "errors"):
        if c not in lat:
            lat[c] = pd.Series(dtype=object if c == "op" else float)
    step = _java_step_row(summary, cmd, lat, total, max_ops, t0)
    key = min((stem_of(p.path) for p in parts), default=None) or stem_of(group[0].path)
    return {"step": step, "latency": lat, "intervals": intervals, "t0": t0, "key": key,
            "gauges": status.gauges() if status is not None else None,
            "meta": _java_meta(summary, mtype, version, command, cmd)}


def _java_intervals(group: list[_Part], cmd: dict, raw, status, t0) -> tuple[list, set, dict]:
    """The per-second rows of each op from the finest source that has them (a lower
    rank wins): raw measurements, timeseries, the status lines' HDR figures, the HDR
    interval logs, the status lines' other figures. Returns (frames, the ops they
    cover, {op: the HDR log's whole histogram})."""
    t0_s = (t0 - pd.Timestamp(0, tz="UTC")).total_seconds() if t0 is not None else None
    sources = []   # (rank, ops, rows(ops or None))
    if raw is not None:
        sources.append(op_source(0, raw_intervals(raw, t0_s * 1000 if t0_s is not None else raw["ts_ms"].min())))
    ts = [p.ts for p in group if p.kind == "java" and p.ts is not None]
    if ts:
        gran = float_or_none(cmd["props"].get("timeseries.granularity"))
        sources.append(op_source(1, timeseries_intervals(ts, gran)))
    if status is not None:
        sources.append((2, status.ops(hdr=True), lambda ops: status.rows(hdr=True, ops=ops)))
    hists = {}
    for log in (p.hdr for p in group if p.kind == "hdr"):
        rows, hist = hdr_intervals(log, t0_s)
        hists[log["op"]] = hist
        sources.append(op_source(3, rows))
    if status is not None:
        sources.append((4, status.ops(hdr=False), lambda ops: status.rows(hdr=False, ops=ops)))
    picked, picked_ops = pick_sources(sources)
    return picked, picked_ops, hists


def _java_step_row(summary: dict, cmd: dict, lat: pd.DataFrame, total, max_ops, t0) -> dict:
    """The steps row: YCSB's [OVERALL] figures, else what the status lines and the
    ops' counts give; a load when the command line says -load or only INSERT ran."""
    ops_main = lat[~lat["op"].str.startswith(INTENDED_PREFIX) & (lat["op"] != "CLEANUP")
                   & ~lat["op"].str.endswith("-FAILED")] if len(lat) else lat
    overall = summary.get("OVERALL", {})
    runtime, thr = overall.get("RunTime(ms)"), overall.get("Throughput(ops/sec)")
    secs = runtime / 1000.0 if runtime is not None else None
    if thr is not None and secs is not None:
        ops = float(round(thr * secs))   # YCSB: throughput = opsDone / runtime, exactly
    elif max_ops is not None:
        ops = max_ops
    else:
        ops = float(ops_main["count"].sum()) if len(ops_main) else np.nan
    if secs is None and total is not None:
        secs = float(total["interval_s"].sum())
    load = cmd["load"]
    if load is None:
        names = set(ops_main["op"]) if len(ops_main) else set()
        load = names == {"INSERT"}
    errors = ops_main["errors"].sum(min_count=1) if len(ops_main) else np.nan
    return {"phase": "load" if load else "run", "secs": secs, "ops": ops, "errors": errors,
            "ops_per_s": thr if thr is not None else (ops / secs if secs else np.nan),
            "threads": cmd["threads"], "target_ops_per_s": cmd["target"],
            "status": "ok" if overall else "interrupted",
            "started": t0, "ended": t0 + pd.to_timedelta(secs, unit="s") if t0 is not None and secs else None}


def _java_meta(summary: dict, mtype: str, version, command, cmd: dict) -> dict:
    """What the run's meta keeps of YCSB's output: tool, version, command line and
    properties, workload, GC and JVM figures."""
    meta = {"tool": "ycsb", "measurementtype": mtype}
    if version:
        meta["tool_version"] = version
    if command:
        meta["command_line"] = command
        meta["properties"] = cmd["props"]
        meta["workload"] = "ycsb"   # the workload benchlib runs as YCSB's; its file beside
        if cmd["workload"]:
            meta["workload_file"] = cmd["workload"][0]
    gcs = {op: m for op, m in summary.items() if op.startswith("TOTAL_GC")}
    jvm = {op: m for op, m in summary.items() if op in JVM_OPS}
    if gcs:
        meta["gc"] = gcs
    if jvm:
        meta["jvm"] = jvm
    return meta


# ----------------------------------------------------------------- grouping and steps

def _groups(parts: list[_Part]) -> list[list[_Part]]:
    """Files of one YCSB process together: by name stem, status-only files to the run
    with a summary, .hdr logs to the run whose stem starts their name."""
    java = [p for p in parts if p.kind in ("java", "go")]
    by_stem: dict[str, list[_Part]] = {}
    for p in java:
        by_stem.setdefault(stem_of(p.path), []).append(p)
    with_summary = [s for s, ps in by_stem.items() if any(p.has_summary or p.kind == "go" for p in ps)]
    if len(with_summary) <= 1:
        groups = {with_summary[0] if with_summary else "": java} if java else {}
    else:
        groups = {s: list(by_stem[s]) for s in with_summary}
        for s, ps in by_stem.items():
            if s in groups:
                continue
            home = [g for g in groups if s.startswith(g) or g.startswith(s)]
            if len(home) != 1:
                raise ImportFormatError(ps[0].path, None, "expected to tell which run this file belongs "
                                                          "to (by its name stem); import the runs separately")
            groups[home[0]].extend(ps)
    for p in parts:
        if p.kind != "hdr":
            continue
        home = [g for g in groups if g and p.path.name.startswith(g + "-")]
        if len(home) != 1:
            home = list(groups) if len(groups) == 1 else []
        if not home and not groups:
            groups[""] = []
            home = [""]
        if len(home) != 1:
            raise ImportFormatError(p.path, None, "expected a name '<stem of its run>-<OP>.hdr'")
        groups[home[0]].append(p)
    return [g for g in groups.values() if g]


def _import(paths: list[Path], go_only: bool) -> Imported:
    parts = []
    for p in paths:
        parts.append(_scan(p))
        if parts[-1].src is not None:
            parts[-1].src.release()   # what the scanners made holds no part of it
    live = [p for p in parts if p.kind != "empty"]
    if not live:
        raise ImportFormatError(paths[0], None, "expected YCSB output, found empty files")
    kinds = {p.kind for p in live} - {"hdr"}
    if kinds == {"go", "java"}:
        raise ImportFormatError(live[0].path, None, "expected either Java YCSB or go-ycsb files, not both")
    if go_only and kinds != {"go"}:
        raise ImportFormatError(live[0].path, None, "expected go-ycsb rows 'OP - Takes(s): …'")
    steps = []
    for g in _groups(live):
        if any(p.kind == "go" for p in g):
            for p in g:
                if p.kind == "go":  # an .hdr log beside go-ycsb output has no go rows
                    steps.append(go_step(p.path, p.go))
        else:
            steps.append(_java_step(g))
    return _combine(steps)


def _combine(steps: list[dict]) -> Imported:
    """Name the steps (l.pre, r.L1, r.L2 … by start) and stack their tables."""
    def order(s):
        t0 = s["t0"]
        return (s["step"]["phase"] != "load", t0.value if t0 is not None else 0, s["key"])
    steps = sorted(steps, key=order)
    steps_df, latency, intervals = stack_steps(steps)
    gauges = [s["gauges"].assign(step=name) for name, s in zip(steps_df["step"], steps)
              if s.get("gauges") is not None]
    metas = [{"step": name, "files_stem": s["key"], **s["meta"]} for name, s in zip(steps_df["step"], steps)]
    meta = {k: v for k, v in metas[0].items() if k not in ("step", "files_stem")} if len(metas) == 1 \
        else {"steps": metas, "tool": metas[0].get("tool")}
    for k in ("tool_version", "command_line", "workload", "workload_file"):
        vals = [m[k] for m in metas if k in m]
        if vals and len(metas) > 1:
            meta[k] = vals[-1] if k != "command_line" else vals
    if metas[0].get("tool") == "go-ycsb":
        meta["source"] = "go-ycsb"
    return Imported(steps=steps_df, latency=latency, intervals=intervals, meta=meta,
                    extra={"gauges": pd.concat(gauges, ignore_index=True)} if gauges else {})


def import_ycsb(paths: list[Path]) -> Imported:
    """Java YCSB files (and go-ycsb ones, told apart by their rows)."""
    return _import(paths, go_only=False)


def import_go_ycsb(paths: list[Path]) -> Imported:
    """go-ycsb's periodic (cumulative) and final ``OP - Takes(s): …`` rows."""
    return _import(paths, go_only=True)
