"""The importer registry: a foreign format's kind → how its files are recognized and the
function that reads them, one :func:`register` call each.

Functions are ``"module:function"`` strings, imported when first used, so that listing
the kinds (the CLI's help, ``detect``) costs no parser. A new format is a module in
``importers/`` and one :func:`register` call below (or from a plugin or a test module).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from .core import Registry, UnknownName, import_module, import_ref


@dataclass(frozen=True)
class Importer:
    kind: str
    ref: str                      # "module:function", (paths: list[Path]) -> Imported
    reads: str                    # what it reads, in a line (errors, the CLI's help)
    # text in a file's first 64 KiB that says it is this tool's output; ``weak_signatures``
    # are tried only after every kind's ``signatures`` (a line shape another tool prints too)
    signatures: tuple[str, ...] = ()
    weak_signatures: tuple[str, ...] = ()
    suffix_signatures: tuple[tuple[str, str], ...] = ()  # (file suffix, text in it)
    covers: tuple[str, ...] = ()  # other kinds whose files this one reads and tells apart
    # "module" with applies(paths) and read_streamed(path, run_id, folder): a long file read
    # in pieces; None: read whole
    streamer: str | None = None

    def function(self) -> Callable:
        return import_ref(self.ref)

    def streamer_module(self) -> ModuleType | None:
        return import_module(self.streamer) if self.streamer else None


IMPORTERS = Registry("importer kind")
HOLDS = "benchlib.importers"     # where its entries' readers live (tests/test_layers.py)
# what imports an entry (tests/test_layers.py: whoever calls one sits on HOLDS' layer or above)
LOADERS = ("function", "streamer_module")


def register(importer: Importer) -> None:
    """Make ``importer.kind`` a kind ``benchlib import`` reads (a kind again: replaced)."""
    IMPORTERS.register(importer.kind, importer)


kinds = IMPORTERS.names
importer = IMPORTERS.get      # the Importer of a kind; UnknownName for another


def _all() -> list[Importer]:
    return [e.ref for e in IMPORTERS]


def detect(head: str, suffix: str) -> str | None:
    """The kind whose signature ``head`` (a file's beginning) shows, or None."""
    for attr in ("signatures", "weak_signatures"):
        for imp in _all():
            if any(mark in head for mark in getattr(imp, attr)):
                return imp.kind
    for imp in _all():
        if any(suffix == s and mark in head for s, mark in imp.suffix_signatures):
            return imp.kind
    return None


def one_kind(found: set[str]) -> str | None:
    """The kind that reads all the kinds ``found`` (one, or one that covers the others)."""
    for kind in found:
        if kind in IMPORTERS and found <= {kind, *importer(kind).covers}:
            return kind
    return None


_PKG = "benchlib.importers"
# go-ycsb before ycsb: its rows are the surer sign; ycsb's " sec: " status line is weak
register(Importer(
    "go-ycsb", f"{_PKG}.ycsb:import_go_ycsb", "go-ycsb (pingcap) periodic and final OP - Takes(s): … rows",
    signatures=(" - Takes(s): ",)))
register(Importer(
    "ycsb", f"{_PKG}.ycsb:import_ycsb",
    "Java YCSB 0.17/0.18 stdout/stderr (summary, -s status, timeseries, raw), HdrHistogram "
    ".hdr logs; go-ycsb output is recognised too",
    signatures=("[OVERALL], RunTime(ms)", "#[Histogram log format version", "YCSB Client ",
                "site.ycsb.Client", " current ops/sec; ",
                "latency raw data: op, timestamp(ms), latency(us)"),
    weak_signatures=(" sec: ",), suffix_signatures=((".hdr", "HISTF"),), covers=("go-ycsb",),
    streamer=f"{_PKG}.ycsb_stream"))
register(Importer(
    "linkbench", f"{_PKG}.linkbench:import_linkbench",
    "LinkBench client log, -csvstats final CSV, -csvstream stream CSV",
    signatures=("PHASE COMPLETED", "requests finished: ", "op,count,p25_low,p25_high",
                "threadID,timestamp,op,totalops", "[main]: Config file: ")))
register(Importer(
    "pgbench", f"{_PKG}.pgbench:import_pgbench", "pgbench summary (PostgreSQL 10-17) and -P progress lines",
    signatures=("transaction type: ", "progress: ", "pgbench (")))
register(Importer(
    "sysbench", f"{_PKG}.sysbench:import_sysbench",
    "sysbench 1.0 report lines, SQL/general/latency statistics, --histogram",
    signatures=("sysbench ", "] thds: ", "SQL statistics:")))

__all__ = ["IMPORTERS", "Importer", "UnknownName", "detect", "importer", "kinds", "one_kind", "register"]
