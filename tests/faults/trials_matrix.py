"""Issue 28's trials over every workload × target pair (trials.py runs them): hostile
names, bad values, a password in the URL, dead servers and missing databases, the Dask
executor's bad settings. Each pair runs against databases of the trials' own
(``trials_m`` on MariaDB, ``trials_p`` on PostgreSQL, Redis db 12); :func:`outside`
checks at the end that nothing the trials named landed anywhere else.
"""
from __future__ import annotations

from pathlib import Path

from leaks import encoded, leaks
from trials import Tally, base, cli, exp_file, refused

PG, MY, REDIS = "postgresql://postgres@127.0.0.1:5432", "127.0.0.1:3306", "redis://127.0.0.1:6379"
TARGETS = {"sqlite": "sqlite", "postgres": f"{PG}/trials_p",
           "mysqldb": f"mysql+mysqldb://root@{MY}/trials_m",
           "pymysql": f"mysql+pymysql://root@{MY}/trials_m", "redis": f"{REDIS}/12"}
PROPS = {"ycsb": {"recordcount": 200, "operationcount": 0, "table": "trials_y"},
         "kv": {"read": 1.0, "key_count": 200, "table": "trials_k"},
         "ybio": {"tab_rows": 1000, "batch_size": 10, "run_duration": 1, "tab_prefix": "trials_b"},
         "linkbench": {"maxid1": 1001, "linktable": "trials_ll", "counttable": "trials_lc",
                       "nodetable": "trials_ln"}}
PAIRS = [(w, t) for w in PROPS for t in TARGETS if t != "redis" or w == "kv"]
NAME_KEYS = {"ycsb": ("table", "fieldnameprefix"), "kv": ("table",), "ybio": ("tab_prefix",),
             "linkbench": ("linktable", "counttable", "nodetable")}
HOSTILE = ("t; drop table victim", 't"; DROP TABLE victim; --', "t`; drop table victim", "x" * 64)
# per workload: (property, a value it cannot take)
BAD = {"ycsb": [("recordcount", -1), ("readproportion", 1.5), ("requestdistribution", "zipfain")],
       "kv": [("key_count", -5), ("read", -0.5), ("value_size", "big")],
       "ybio": [("batch_size", 0), ("tab_rows", -5), ("pct_update", 150)],
       "linkbench": [("maxid1", 0), ("requesters", -1), ("nlinks_default", "many")]}


def only_target(target: str) -> None:
    """Run the pair classes on one target only (``trials.py --target mysqldb``)."""
    if target not in TARGETS:
        raise SystemExit(f"trials: --target {target}: one of {', '.join(TARGETS)}")
    PAIRS[:] = [(w, t) for w, t in PAIRS if t == target]


def setup() -> None:
    """The trials' own databases, empty, and a victim table in each."""
    import psycopg
    import pymysql
    import redis
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS trials_p WITH (FORCE)")
        c.execute("CREATE DATABASE trials_p")
    with psycopg.connect(TARGETS["postgres"], autocommit=True) as c:
        c.execute("CREATE TABLE victim (x int)")
        c.execute("INSERT INTO victim VALUES (1)")
    m = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
    with m.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS trials_m")
        cur.execute("CREATE DATABASE trials_m")
        cur.execute("CREATE TABLE trials_m.victim (x int)")
        cur.execute("INSERT INTO trials_m.victim VALUES (1)")
    m.close()
    r = redis.Redis.from_url(TARGETS["redis"])
    r.flushdb()
    r.set("victim", "1")


def teardown() -> None:
    """The trials' databases dropped, their Redis db emptied: nothing left behind."""
    import psycopg
    import pymysql
    import redis
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS trials_p WITH (FORCE)")
    m = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
    with m.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS trials_m")
    m.close()
    redis.Redis.from_url(TARGETS["redis"]).flushdb()


def names(t: Tally, d: Path) -> None:
    """A name carrying SQL (or too long) in each name property, each pair: one line, exit 2."""
    for wl, tgt in PAIRS:
        for i, bad in enumerate(HOSTILE):
            key = NAME_KEYS[wl][i % len(NAME_KEYS[wl])]
            exp = base(TARGETS[tgt], wl, {**PROPS[wl], key: bad}, experiment=f"n-{wl}")
            refused(t, "hostile names", f"{wl} on {tgt}: {key}={bad[:24]!r}",
                    ["run", exp_file(d, exp), "--data-dir", d / "names", "--no-progress"], key)


def bad_values(t: Tally, d: Path) -> None:
    """Values a workload cannot take, and a loop of no threads, each pair: one line, exit 2."""
    for wl, tgt in PAIRS:
        for key, val in BAD[wl]:
            exp = base(TARGETS[tgt], wl, {**PROPS[wl], key: val}, experiment=f"b-{wl}")
            refused(t, "bad values", f"{wl} on {tgt}: {key}={val!r}",
                    ["run", exp_file(d, exp), "--data-dir", d / "bad", "--no-progress"], key)
        exp = base(TARGETS[tgt], wl, PROPS[wl], experiment=f"b-{wl}")
        exp["run"]["threads"] = [0]
        refused(t, "bad values", f"{wl} on {tgt}: run.threads [0]",
                ["run", exp_file(d, exp), "--data-dir", d / "bad", "--no-progress"], "threads")


def secrets(t: Tally, d: Path) -> None:
    """A password in the URL of every server pair: the run ends ok (PostgreSQL trusts any)
    or is refused in one line (MariaDB's root and Redis take none) — and the password is in
    no file of the data folder and on no line printed."""
    cls = "a password reaches no file"
    for wl, tgt in PAIRS:
        if tgt == "sqlite":
            continue
        scheme, rest = TARGETS[tgt].split("://", 1)
        url = f"{scheme}://{'' if tgt == 'redis' else 'root' if 'mysql' in scheme else 'postgres'}" \
              f":{encoded()}@{rest.split('@', 1)[-1]}"   # every printable character
        data = d / f"sec-{wl}-{tgt}"
        code, text = cli("run", exp_file(d, base(url, wl, PROPS[wl], experiment=f"s-{wl}")),
                         "--data-dir", data, "--no-progress")
        found = leaks(data, text)
        statuses = _statuses(data)
        good = (code in (0, 1, 2) and not found and "Traceback" not in text
                and (code != 0 or statuses == ["ok"]) and (code == 0 or "ok" not in statuses))
        fault = "traceback" if code == -1 or "Traceback" in text else (
            "ok_failed" if code and "ok" in statuses else None if good else "silent")
        t.add(cls, f"{wl} on {tgt} with a password: exit {code}, {statuses or 'no run'}", good,
              fault, f"leaks {found} {text[-300:]}")


def _statuses(data: Path) -> list[str]:
    import json
    return [json.loads(m.read_text()).get("status") for m in sorted(data.glob("*/*/meta.json"))]


def dead(t: Tally, d: Path) -> None:
    """A server nobody listens on, a database that does not exist: one line naming the
    URL, exit 2, no run recorded ok."""
    cls = "dead servers, missing databases"
    gone = {"postgres": f"{PG[:-4]}5999/trials_p", "mysqldb": "mysql+mysqldb://root@127.0.0.1:3999/trials_m",
            "pymysql": "mysql+pymysql://root@127.0.0.1:3999/trials_m", "redis": f"{REDIS[:-4]}6999/12"}
    missing = {"postgres": f"{PG}/trials_nodb", "mysqldb": f"mysql+mysqldb://root@{MY}/trials_nodb",
               "pymysql": f"mysql+pymysql://root@{MY}/trials_nodb", "redis": f"{REDIS}/16"}
    for wl, tgt in PAIRS:
        if tgt == "sqlite":
            continue
        for what, url, word in (("dead server", gone[tgt], "cannot connect"),
                                ("missing database", missing[tgt], "trials_nodb" if tgt != "redis" else "out of range")):
            data = d / f"dead-{wl}-{tgt}"
            refused(t, cls, f"{wl}, {what}: {url}", ["run", exp_file(d, base(url, wl, PROPS[wl])),
                                                      "--data-dir", data, "--no-progress"], word)
            if "ok" in _statuses(data):
                t.add(cls, f"{wl}, {what}: no run ok", False, "ok_failed", str(_statuses(data)))


def dask_settings(t: Tally, d: Path) -> None:
    """The Dask executor's bad settings, each workload: one line, exit 2, nothing run."""
    cls = "the Dask executor"
    bad = [({"executor": "daks"}, "known: local, dask"), ({"executor": "dask", "dask": {"workers": 0}}, "workers"),
           ({"executor": "dask", "dask": {"workers": 10**6}}, "workers"),
           ({"executor": "dask", "dask": {"scheduler": "tcp://a b:1"}}, "scheduler"),
           ({"executor": "dask", "dask": {"sheduler": "tcp://127.0.0.1:8786"}}, "sheduler")]
    for wl in PROPS:
        for over, word in bad:
            exp = {**base(TARGETS["sqlite"], wl, PROPS[wl]), **over}
            refused(t, cls, f"{wl}: {over}", ["run", exp_file(d, exp), "--dry-run"], word)


def outside(t: Tally) -> None:
    """No table or key of the trials outside the trials' own databases; the victims whole."""
    import psycopg
    import pymysql
    import redis
    cls = "writes only where the user said"
    m = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
    with m.cursor() as cur:
        cur.execute("SELECT table_schema, table_name FROM information_schema.tables WHERE "
                    "table_name LIKE 'trials%%' AND table_schema NOT LIKE 'trial%%'")
        out_my = cur.fetchall()
        cur.execute("SELECT count(*) FROM trials_m.victim")
        victim_my = cur.fetchone()[0]
    m.close()
    with psycopg.connect(f"{PG}/test") as c:
        out_pg = c.execute("SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'trials%'").fetchall()
    with psycopg.connect(TARGETS["postgres"]) as c:
        victim_pg = c.execute("SELECT count(*) FROM victim").fetchone()[0]
    out_redis = {n: sum(1 for _ in redis.Redis.from_url(f"{REDIS}/{n}").scan_iter("trials_*"))
                 for n in range(16) if n != 12}
    for what, bad in (("MariaDB: no trials table outside trials_m", out_my),
                      ("PostgreSQL: no trials table in test", out_pg),
                      ("Redis: no trials key outside db 12", {n: v for n, v in out_redis.items() if v}),
                      ("the victim tables and key whole", (victim_my, victim_pg,
                                                           redis.Redis.from_url(TARGETS["redis"]).get("victim"))
                       != (1, 1, b"1"))):
        t.add(cls, what, not bad, "outside" if bad else None, str(bad))
