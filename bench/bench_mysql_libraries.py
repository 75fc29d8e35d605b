"""Which C client for MariaDB: one connection's point reads through each library, in
one session — the choice behind ``targets/mysql_driver.py`` (BENCHMARKS.md).

A table like YCSB's (a VARCHAR key, ten 100-byte TEXT fields; 20k rows), then
``--ops`` reads of a random key through: PyMySQL's cursor; mysqlclient's cursor;
mysqlclient's connection (query, store_result, fetch_row: what benchlib's YCSB reads
use); the MariaDB Connector/Python (``mariadb``) text protocol and binary protocol
(server-side prepared), when it is installed. Each in turn, ``--rounds`` times.
Prints ops/s and this process's CPU µs per read (the client's cost, kernel included).

    .venv/bin/python bench/bench_mysql_libraries.py [--ops 30000] [--rounds 2]
"""
from __future__ import annotations

import argparse
import random
import sys
import time

from reference_tools import need

P = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": "", "database": "test"}
TABLE = "bench_mysql_libraries"
SQL = f"SELECT * FROM {TABLE} WHERE YCSB_KEY = %s"


def make_table(rows: int) -> list[str]:
    import pymysql
    with pymysql.connect(**P, autocommit=True) as c, c.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cur.execute(f"CREATE TABLE {TABLE} (YCSB_KEY VARCHAR(255) PRIMARY KEY, "
                    + ", ".join(f"FIELD{i} TEXT" for i in range(10)) + ")")
        keys = [f"user{i:08d}" for i in range(rows)]
        cur.executemany(f"INSERT INTO {TABLE} VALUES ({', '.join(['%s'] * 11)})",
                        [(k, *["x" * 100] * 10) for k in keys])
    return keys


def readers() -> dict:
    """name -> read(key), each on its own connection."""
    import MySQLdb
    import pymysql
    out = {}
    pc = pymysql.connect(**P, autocommit=True, charset="utf8mb4").cursor()
    out["PyMySQL cursor"] = lambda k: (pc.execute(SQL, (k,)), pc.fetchall())
    mconn = MySQLdb.connect(**P, autocommit=True, charset="utf8mb4")
    mc = mconn.cursor()
    out["mysqlclient cursor"] = lambda k: (mc.execute(SQL, (k,)), mc.fetchall())
    raw = MySQLdb.connect(**P, autocommit=True, charset="utf8mb4")
    q, store, lit, sql_b = raw.query, raw.store_result, raw.string_literal, SQL.encode()
    out["mysqlclient query/store_result"] = lambda k: (q(sql_b % (lit(k.encode()),)),
                                                        store().fetch_row(0))
    try:
        import mariadb
    except ImportError:
        print("mariadb (Connector/Python) not installed: left out", file=sys.stderr)
        return out
    qmark = SQL.replace("%s", "?")
    ma = mariadb.connect(**P, autocommit=True)
    text, binary = ma.cursor(), ma.cursor(binary=True)
    out["mariadb text"] = lambda k: (text.execute(qmark, (k,)), text.fetchall())
    out["mariadb binary (prepared)"] = lambda k: (binary.execute(qmark, (k,)), binary.fetchall())
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=30_000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    need(modules={"MySQLdb": "make install (mysqlclient)", "pymysql": "pip install pymysql"})
    keys = make_table(20_000)
    todo = [random.choice(keys) for _ in range(a.ops)]
    print("| library | ops/s | client CPU µs/op |\n|---|---:|---:|")
    for _ in range(a.rounds):
        for name, read in readers().items():
            t0, c0 = time.perf_counter(), time.process_time()
            for k in todo:
                read(k)
            t, c = time.perf_counter() - t0, time.process_time() - c0
            print(f"| {name} | {a.ops / t:,.0f} | {c / a.ops * 1e6:.1f} |")
    import pymysql
    with pymysql.connect(**P, autocommit=True) as c, c.cursor() as cur:
        cur.execute(f"DROP TABLE {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
