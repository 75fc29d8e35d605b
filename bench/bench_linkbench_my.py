"""LinkBench's two request loops on the machine's MariaDB, alternating on one database and
graph: ``run.driver: python`` (RequestClient over mysqlclient or PyMySQL) and ``c``
(``_lbmyloop`` over libmariadb), each ``--secs``, ``--rounds`` times, 2 requesters in 2
processes; req/s and client CPU µs per request (the step's client_cpu_s / ops), as
``bench_linkbench_pg.py --drivers`` measures them on PostgreSQL (its steps are reused).

    .venv/bin/python bench/bench_linkbench_my.py [--url mysql://root@127.0.0.1:3306/test]
        [--maxid1 20001] [--secs 30] [--rounds 3] [--db lbmy_bench]

``--db`` names the database it creates and drops (its own: another on the server is left
alone).
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pymysql

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_linkbench_pg import benchlib_step, drivers_rounds  # noqa: E402


def _admin(url: str):
    u = urlsplit(url)
    return pymysql.connect(host=u.hostname or "127.0.0.1", port=u.port or 3306, user=u.username or "root",
                           password=u.password or "", autocommit=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="mysql://root@127.0.0.1:3306/test")
    ap.add_argument("--maxid1", type=int, default=20_001)
    ap.add_argument("--secs", type=float, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--db", default="lbmy_bench", help="the database it creates and drops")
    a = ap.parse_args()
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", a.db):
        ap.error(f"--db {a.db!r}: a plain lower-case name (letters, digits, _)")
    conn = _admin(a.url)
    with conn.cursor() as c:
        c.execute(f"DROP DATABASE IF EXISTS `{a.db}`")
        c.execute(f"CREATE DATABASE `{a.db}`")
    url = a.url.rsplit("/", 1)[0] + "/" + a.db
    data = Path(tempfile.mkdtemp(prefix="bench-linkbench-my-"))
    try:
        load = benchlib_step(url, data, "load", a.maxid1, True, None)
        with conn.cursor() as c:
            c.execute(f"SELECT COUNT(*) FROM `{a.db}`.linktable")
            links = c.fetchone()[0]
        print(f"load: {links:,} links in {load['secs']:.1f} s", file=sys.stderr)
        drivers_rounds(url, data, a)
    finally:
        with conn.cursor() as c:
            c.execute(f"DROP DATABASE IF EXISTS `{a.db}`")
        conn.close()
        shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
