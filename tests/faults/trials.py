"""Issue 28's trials, rerunnable:
``PYTHONPATH=. python tests/faults/trials.py [--quick] [--only f,g] [--target T]``.

Each trial is a command a careful (or careless) user types and the outcome that must
follow; the script counts, per class, the trials that held and the four faults the issue
names: a traceback, a failed run recorded ``ok``, a write outside the named database,
a silent acceptance (bad input that ran). It prints one table (RELIABILITY.md's) and
exits 1 when any trial fell. The classes over every workload × target pair are in
trials_matrix.py, those that run workloads hard (kills, concurrency, corrupt files,
signals, full disks) in trials_runs.py; ``--quick`` leaves the latter out. Needs
MariaDB, Redis and PostgreSQL on loopback as the suite does (the trials make databases
``trials_m``, ``trials_p`` and use Redis db 12 of their own); root for the tmpfs of
the full-disk class.
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "faults")]
PY = sys.executable
BIG = "99999999999999999999999"
KV = {"read": 1.0, "key_count": 100}


class Tally:
    def __init__(self):
        self.rows: dict[str, dict] = {}

    def add(self, cls: str, what: str, ok: bool, fault: str | None = None, note: str = ""):
        r = self.rows.setdefault(cls, {"n": 0, "held": 0, "traceback": 0, "ok_failed": 0,
                                       "outside": 0, "silent": 0, "example": what, "fell": []})
        r["n"] += 1
        r["held"] += ok
        if fault:
            r[fault] += 1
        if not ok:
            r["fell"].append(f"{what}: {note}"[:300])
        print(f"{'held' if ok else 'FELL'} | {cls} | {what}", file=sys.stderr, flush=True)


def cli(*argv) -> tuple[int, str]:
    """benchlib's command line in this process: (exit code, stdout + stderr); an
    exception that escapes it is a traceback."""
    from benchlib import cli as c
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = c.main([str(a) for a in argv])
        except BaseException as e:  # noqa: BLE001 - that is what is counted
            return -1, f"Traceback: {type(e).__name__}: {e}"
    return code, out.getvalue() + err.getvalue()


def refused(t: Tally, cls: str, what: str, argv: list, *words: str) -> None:
    """Bad input: exit 2, one line naming it, nothing run."""
    code, text = cli(*argv)
    lines = [ln for ln in text.strip().splitlines() if ln.startswith("benchlib:")]
    if code == -1 or "Traceback" in text:
        t.add(cls, what, False, "traceback", text)
    elif code != 2:
        t.add(cls, what, False, "silent", f"exit {code}: {text[-200:]}")
    else:
        good = len(lines) == 1 and all(w in lines[0] for w in words)
        t.add(cls, what, good, None if good else "silent", text.strip()[:200])


def exp_file(d: Path, exp: dict, name="e.yaml") -> Path:
    p = d / name
    p.write_text(yaml.safe_dump(exp))
    return p


def base(url: str, workload="kv", props=None, **over) -> dict:
    return {"experiment": "trial", "workload": workload, "properties": props or dict(KV),
            "targets": [{"name": "t", "url": url}], "load": {"threads": 1},
            "run": {"threads": [1], "loops": 1, "loop_secs": 1}, "seed": 1, **over}


def urls(t: Tally, d: Path) -> None:
    bad = {
        "redis://127.0.0.1:6379/abc": "database number", "redis://127.0.0.1:6379": "database number",
        "redis://127.0.0.1:6379/": "database number", "redis://127.0.0.1:6379/-1": "database number",
        "redis://127.0.0.1:6379/1.5": "database number", "redis://127.0.0.1:6379/0/1": "database number",
        "redis://127.0.0.1:6379/9999999": "database number", "redis://127.0.0.1:6379/0?db=2": "?db=",
        "redis://127.0.0.1:999999/9": "port", "redis://127.0.0.1:65536/9": "port",
        "redis://127.0.0.1:6379/0?fooo=1": "fooo", "redis://127.0.0.1:6379/0?timeout=1": "timeout",
        "unix:///tmp/r.sock": "?db=", "unix:///tmp/r.sock?db=x": "?db=", "unix://?db=0": "socket",
        "mysql://root@127.0.0.1:3306": "no database", "mysql://root@127.0.0.1:3306/": "no database",
        "mysql+pymysql://root@127.0.0.1:3306": "no database",
        "mysql+mysqldb://root@127.0.0.1": "no database",
        "mysql://root@127.0.0.1:3306/test?charset=utf8": "charset",
        "mysql://root@127.0.0.1:3306/test?ssl=1": "ssl", "mysql://root@127.0.0.1:99999/test": "port",
        "mariadb://root@127.0.0.1:3306/test?fooo=1": "fooo",
        "postgresql://postgres@127.0.0.1:5432": "no database",
        "postgresql://postgres@127.0.0.1:5432/": "no database",
        "postgresql://postgres@127.0.0.1:5432/test?fooo=1": "fooo",
        "postgresql://postgres@127.0.0.1:123456/test": "port",
    }
    for url, word in bad.items():
        refused(t, "a URL names one place", url, ["run", exp_file(d, base(url)), "--dry-run"], word)
    for url in ("mysql://root@127.0.0.1:3306/test?password=x", "redis://127.0.0.1:6379/9?password=x"):
        code, text = cli("run", exp_file(d, base(url)), "--dry-run")   # used: accepted
        t.add("a URL names one place", url, code == 0, None if code == 0 else "silent", text[-200:])


def options(t: Tally, d: Path) -> None:
    cases = [("redis://127.0.0.1:6379/9", {"fooo": 1}, "none"),
             ("redis://127.0.0.1:6379/9", {"engine": "x"}, "none"),
             ("mysql://root@127.0.0.1:3306/test", {"fooo": 1}, "engine"),
             ("mysql://root@127.0.0.1:3306/test", {"enigne": "MyISAM"}, "did you mean engine"),
             ("mysql://root@127.0.0.1:3306/test", {"libary": "pymysql"}, "did you mean library"),
             ("postgresql://postgres@127.0.0.1:5432/test", {"fooo": 1}, "none"),
             ("sqlite", {"pth": "/tmp/x"}, "did you mean path"),
             ("sqlite", {"pragma": {}}, "did you mean pragmas"),
             ("basic", {"verbos": True}, "did you mean verbose"),
             ("embedded-postgres", {"pgdat": "/tmp/x"}, "did you mean pgdata")]
    for url, opts, word in cases:
        exp = base(url, workload="ycsb" if url == "basic" else "kv",
                   props={"recordcount": 10, "operationcount": 10} if url == "basic" else None)
        exp["targets"][0]["options"] = opts
        refused(t, "unknown target options", f"{url} options {opts}",
                ["run", exp_file(d, exp), "--dry-run"], word)


def overflows(t: Tally, d: Path) -> None:
    lb = ROOT / "parameters" / "linkbench.yaml"
    for key in ("maxid1", "startid1", "requests", "nlinks_config", "range_limit", "nlinks_default"):
        refused(t, "values past what the workload holds", f"linkbench -p {key}={BIG}",
                ["run", lb, "-p", f"{key}={BIG}", "--dry-run"], key)
    for key in ("recordcount", "operationcount", "fieldcount", "maxscanlength", "fieldlength",
                "insertcount", "zeropadding"):
        refused(t, "values past what the workload holds", f"ycsb -p {key}={BIG}",
                ["run", ROOT / "parameters" / "ycsb-a.yaml", "-p", f"{key}={BIG}", "--dry-run"], key)
    for key in ("op_count", "key_count", "value_size"):
        refused(t, "values past what the workload holds", f"kv -p {key}={BIG}",
                ["run", ROOT / "parameters" / "kv-get.yaml", "-p", f"{key}={BIG}", "--dry-run"], key)
    for key in ("tab_rows", "batch_size"):
        refused(t, "values past what the workload holds", f"ybio -p {key}={BIG}",
                ["run", ROOT / "parameters" / "ybio.yaml", "-p", f"{key}={BIG}", "--dry-run"], key)
    for key, val in (("run.max_error_ratio", "2"), ("run.max_error_ratio", "-1")):
        refused(t, "values past what the workload holds", f"-p {key}={val}",
                ["run", ROOT / "parameters" / "quickstart.yaml", "-p", f"{key}={val}", "--dry-run"],
                "max_error_ratio")


def files(t: Tally, d: Path) -> None:
    cls = "files, folders and outputs"
    deep = d / "deep.yaml"
    deep.write_text("experiment: x\nproperties: " + "[" * 5000 + "]" * 5000 + "\n")
    refused(t, cls, "YAML lists nested 5,000 deep", ["run", deep], "nested too deep")
    deep2 = d / "deep2.yaml"
    deep2.write_text("experiment: x\nproperties:\n" + "".join(" " * (i + 1) + "k:\n" for i in range(5000)))
    refused(t, cls, "YAML mappings nested 5,000 deep", ["run", deep2], "nested too deep")
    deep3 = d / "deep3.yaml"
    deep3.write_text("experiment: x\nproperties: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n")
    refused(t, cls, "YAML flow mappings nested 3,000 deep", ["run", deep3], "nested too deep")
    (d / "w.properties").mkdir(exist_ok=True)
    refused(t, cls, "a folder as a .properties file", ["run", d / "w.properties"], "a folder")
    (d / "w.yaml").mkdir(exist_ok=True)
    refused(t, cls, "a folder as a .yaml file", ["run", d / "w.yaml"], "a folder")
    for body in ("maxid1 = 1000\nrequesters = 2\n", "requesters = 4\n", "loaders = 2\nmaxtime = 5\n"):
        p = d / "lb.properties"
        p.write_text(body)
        refused(t, cls, f"LinkBench keys, no linkstore: {body.strip()!r}", ["run", p, "--dry-run"],
                "no linkstore")
    (d / "note.txt").write_text("x")
    refused(t, cls, "show FILE", ["show", d / "note.txt"], "a file")
    (d / "empty").mkdir(exist_ok=True)
    refused(t, cls, "show of a folder with no run", ["show", d / "empty"], "no run folder")
    refused(t, cls, "list --data-dir missing", ["list", "--data-dir", d / "missing"], "no such folder")
    for wl, target in (("ybio", "redis://127.0.0.1:6379/9"), ("ybio", "basic"),
                       ("ycsb", "redis://127.0.0.1:6379/9"), ("linkbench", "redis://127.0.0.1:6379/9")):
        props = {"ybio": {"tab_rows": 100000, "batch_size": 10, "run_duration": 1},
                 "ycsb": {"recordcount": 100, "operationcount": 100}, "linkbench": {"maxid1": 1000}}[wl]
        refused(t, "workloads refuse the targets they cannot run", f"{wl} on {target}",
                ["run", exp_file(d, base(target, wl, props)), "--dry-run"],
                "does not run on")


def outputs(t: Tally, d: Path) -> None:
    """Runs on SQLite: show and compare of what is there, a missing table named."""
    cls = "files, folders and outputs"
    data = d / "out"
    for wl, props in (("kv", {"read": 1.0, "key_count": 500}),
                      ("ybio", {"tab_rows": 2000, "batch_size": 10, "run_duration": 1})):
        exp = {**base("sqlite", wl, props, experiment=f"o-{wl}"), "repetitions": 3}
        code, text = cli("run", exp_file(d, exp), "--data-dir", data, "--no-progress")
        t.add(cls, f"a {wl} run on SQLite", code == 0, "traceback" if code == -1 else None, text[-300:])
    runs = sorted((data / "o-ybio").glob("t-*"))
    (runs[1] / "benchruns.parquet").unlink()
    code, text = cli("show", data / "o-ybio", "--table", "benchruns")
    named = f"run {runs[1].name} has no benchruns.parquet" in text and "2 of 3 run folders" in text
    t.add(cls, "show --table benchruns, one run's file deleted", code == 0 and named,
          None if named else "silent", text[-300:])
    refused(t, cls, "compare kv against ybio", ["compare", data / "o-kv", data / "o-ybio"], "--force")
    code, text = cli("compare", data / "o-kv", data / "o-ybio", "--force")
    t.add(cls, "compare kv against ybio --force", code == 0 and "warning:" in text,
          "traceback" if code == -1 else None, text[-200:])


def run_bg(args: list, out: Path, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([PY, "-m", "benchlib.cli", *map(str, args)], stdout=out.open("w"),
                            stderr=subprocess.STDOUT, env=env, **kw)


def redis_db(t: Tally, d: Path) -> None:
    import redis
    exp = base("redis://127.0.0.1:6379/11", props={"read": 1.0, "key_count": 300, "table": "trial11"},
               experiment="r11")
    code, text = cli("run", exp_file(d, exp), "--data-dir", d / "r", "--no-progress")
    ours = {n: sum(1 for _ in redis.Redis.from_url(f"redis://127.0.0.1:6379/{n}").scan_iter("trial11:*"))
            for n in range(16)}
    good = code == 0 and ours[11] > 0 and not any(v for n, v in ours.items() if n != 11)
    t.add("a URL names one place", "kv on redis db 11: its keys there, none elsewhere", good,
          None if good else "outside", f"exit {code}, keys by db {ours}")
    r11 = redis.Redis.from_url("redis://127.0.0.1:6379/11")
    for k in r11.scan_iter("trial11:*"):
        r11.delete(k)


def timed(fn, t: Tally, d: Path) -> None:
    start, n = time.monotonic(), sum(r["n"] for r in t.rows.values())
    fn(t, d)
    print(f"{fn.__module__}.{fn.__name__}: {sum(r['n'] for r in t.rows.values()) - n} trials in "
          f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)


def main() -> int:
    """``--quick``: leave out trials_runs' classes; ``--only f,g``: only the class
    functions named (e.g. ``--only kills --target mysqldb``: the MariaDB kills through
    mysqlclient); ``--target T``: only the pairs on target T where a class runs pairs."""
    import trials_inputs as inputs
    import trials_matrix as matrix
    import trials_runs as runs
    args = sys.argv[1:]
    quick = "--quick" in args
    only = args[args.index("--only") + 1].split(",") if "--only" in args else None
    if "--target" in args:
        matrix.only_target(args[args.index("--target") + 1])
    t = Tally()
    fns = [urls, options, overflows, files, outputs, redis_db, matrix.names, matrix.bad_values,
           matrix.secrets, matrix.dead, matrix.dask_settings, inputs.bounded, inputs.numbers_and_places,
           inputs.silent]
    fns += [] if quick else [runs.kills, runs.concurrency, runs.corrupt, runs.signals, runs.full_disk]
    with tempfile.TemporaryDirectory(prefix="trials-") as tmp:
        d = Path(tmp)
        matrix.setup()
        for fn in fns:
            if only is None or fn.__name__ in only:
                timed(fn, t, d)
        matrix.outside(t)
        matrix.teardown()
    total = {k: sum(r[k] for r in t.rows.values()) for k in ("n", "held", "traceback", "ok_failed",
                                                              "outside", "silent")}
    print("| class | trials | held | tracebacks | failed runs ok | writes outside | silent | e.g. |")
    print("|---|---|---|---|---|---|---|---|")
    for cls, r in t.rows.items():
        print(f"| {cls} | {r['n']} | {r['held']} | {r['traceback']} | {r['ok_failed']} | "
              f"{r['outside']} | {r['silent']} | `{r['example']}` |")
    print(f"| all | {total['n']} | {total['held']} | {total['traceback']} | {total['ok_failed']} | "
          f"{total['outside']} | {total['silent']} | |")
    for cls, r in t.rows.items():
        for f in r["fell"]:
            print(f"FELL {cls}: {f}", file=sys.stderr)
    return 0 if total["held"] == total["n"] else 1


if __name__ == "__main__":
    sys.exit(main())
