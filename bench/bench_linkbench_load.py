"""LinkBench's load rate on the machine's PostgreSQL (or MariaDB), each load mode in turn
on a database of its own: benchlib's ``LOAD PHASE COMPLETED`` line, and its Links/s
recomputed by hand from the rows counted in the database (linktable's rows over the load
step's seconds, steps.parquet), for ``load.mode fast`` (COPY, the index after: its time
and the rate with it, the index step's) and ``java`` (LinkBenchLoad's multi-row INSERTs of
``bulk_insert_count`` rows into indexed tables: comparable with a Java run's Links/s).

    .venv/bin/python bench/bench_linkbench_load.py [--url postgresql://postgres@127.0.0.1:5432/test]
        [--maxid1 100001] [--data-file PATH] [--modes fast,java] [--db lbload]

The loaders are LinkBench's default (``loaders``); ``--data-file`` an out-degree
distribution (the default: the 2017 one, whose giant node gives 4.2 M links at any
maxid1; tests/data/linkbench/Distribution_small.dat: ~3 links an id1).
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from benchlib.params import validate
from benchlib.run.experiment import run_experiment
from benchlib.store.folders import load_results
from benchlib.targets.base import make_target

DONE = re.compile(r"LOAD PHASE COMPLETED\. Loaded (\d+) nodes .*?, (\d+) links .*?, (\d+) counts .*?\. "
                  r"([\d.]+) seconds, (\d+) Links/s")


def _on_server(url: str, *statements: str):
    """The statements run on the server of ``url`` (the target's own connection, started
    and stopped here); the last one's first row."""
    t = make_target("b", url)
    t.start()
    try:
        conn = t.connect()
        cur = conn.cursor()
        for sql in statements:
            cur.execute(sql)
        row = cur.fetchone() if cur.description else None
        conn.close()
        return row
    finally:
        t.stop()


def _own_db(url: str, db: str) -> str:
    """A fresh database ``db`` on the server of ``url``; its url."""
    q = make_target("b", url).dialect.quote_ident(db)
    _on_server(url, f"DROP DATABASE IF EXISTS {q}", f"CREATE DATABASE {q}")
    return url.rsplit("/", 1)[0] + "/" + db


def _count(url: str, table: str) -> int:
    (n,) = _on_server(url, f"SELECT count(*) FROM {make_target('b', url).dialect.quote_ident(table)}")
    return int(n)


def one(url: str, mode: str, maxid1: int, data_file: str | None, out: Path) -> None:
    props = {"maxid1": maxid1, **({"data_file": data_file} if data_file else {})}
    exp = {"experiment": f"lbload{mode}", "workload": "linkbench", "load": {"mode": mode},
           "properties": props, "targets": [{"name": "t", "url": url}], "run": {"skip": True}}
    res = run_experiment(validate(exp, "bench"), out, progress=False)
    (run_id,) = res.runs
    rd = out / f"lbload{mode}" / run_id
    log = (rd / "linkbench.log").read_text()
    line = next(x for x in log.splitlines() if "LOAD PHASE COMPLETED" in x)
    extra = [x.split("]: ", 1)[1] for x in log.splitlines() if "Load mode" in x]
    steps = load_results(rd)["steps"].set_index("step")
    secs, index_s = float(steps.loc["l.pre", "secs"]), float(steps.loc["l.post", "secs"])
    links = _count(url, "linktable")
    nodes, llinks, counts, _, rate = (float(x) for x in DONE.search(line).groups())
    print(f"[{mode}] {line.split(']: ', 1)[1]}")
    for x in extra:
        print(f"[{mode}] {x}")
    print(f"[{mode}] by hand: linktable {links} rows (line {int(llinks)}), load step {secs:.3f} s -> "
          f"{links / secs:.0f} Links/s (line {int(rate)}); index step {index_s:.3f} s -> "
          f"{links / (secs + index_s):.0f} Links/s with it")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--maxid1", type=int, default=100001)
    ap.add_argument("--data-file", default=None)
    ap.add_argument("--modes", default="fast,java")
    ap.add_argument("--db", default="lbload")
    a = ap.parse_args(argv)
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    if not modes or any(m not in ("fast", "java") for m in modes):
        print(f"--modes {a.modes}: fast, java or both", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            one(_own_db(a.url, f"{a.db}_{mode}"), mode, a.maxid1, a.data_file, Path(tmp) / mode)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
