"""Issue 28's trials, rerunnable: ``PYTHONPATH=. python tests/faults/trials.py [--quick]``.

Each trial is a command a careful (or careless) user types and the outcome that must
follow; the script counts, per class, the trials that held and the four faults the issue
names: a traceback, a failed run recorded ``ok``, a write outside the named database,
a silent acceptance (bad input that ran). It prints one table (RELIABILITY.md's) and
exits 1 when any trial fell. ``--quick`` leaves out the classes that run servers hard
(kills, full disks, signals). Needs MariaDB, Redis and PostgreSQL on loopback as the
suite does; root for the tmpfs of the full-disk class.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
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
                "cannot run linkbench" if wl == "linkbench" else "does not run on")


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


def meta_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "meta.json").read_text())


def kills(t: Tally, d: Path, rounds: int) -> None:
    """KILL CONNECTION of kv and ybio clients mid-loop through both libraries."""
    import pymysql
    from killing import kill_clients_later

    from benchlib import load_results, run_experiment
    from benchlib.params import validate
    from test_failed_ops import workload_experiment
    c = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
    for i in range(rounds):
        for wl in ("kv", "ybio"):
            for lib in ("mysqldb", "pymysql"):
                db = f"trial_kill_{wl}_{lib}"
                with c.cursor() as cur:
                    cur.execute(f"DROP DATABASE IF EXISTS {db}")
                    cur.execute(f"CREATE DATABASE {db}")
                spec = workload_experiment(wl, f"mysql+{lib}://root@127.0.0.1:3306/{db}")
                spec["properties"]["table" if wl == "kv" else "tab_prefix"] = "trial"   # ours alone
                exp = validate(spec, "t")
                killer, killed = kill_clients_later(db, min_conns=2, settle_s=2.5,
                                                    keep_killing_s=1.0 if i % 2 else 0.0)
                with contextlib.redirect_stdout(io.StringIO()):
                    res = run_experiment(exp, d / f"k{i}", progress=False, force=True)
                killer.join(60)
                status = list(res.runs.values())[0]
                loop = load_results(d / f"k{i}" / f"kill-{wl}")["steps"].set_index("step").loc["r.L1"]
                run_dir = next((d / f"k{i}" / f"kill-{wl}").glob("m-*"))
                good = killed and (status == "failed" and (run_dir / "error.log").exists()
                                   # ok: each kill cost at most 2 failed operations, a reconnect
                                   or status == "ok" and loop["failed"] <= 2 * len(killed))
                what = (f"{wl} via {lib}, round {i + 1}: {len(killed)} connections killed, {status}, "
                        f"failed {loop['failed']} of {loop['ops'] + loop['failed']}")
                t.add("a killed connection never makes an ok run", what, bool(good),
                      None if good else "ok_failed", what)
                with c.cursor() as cur:
                    cur.execute(f"DROP DATABASE {db}")
    with c.cursor() as cur:   # the runs' tables are named trial…: none outside their databases
        cur.execute("SELECT table_schema, table_name FROM information_schema.tables WHERE "
                    "table_name LIKE 'trial%' AND table_schema NOT LIKE 'trial_kill_%'")
        outside = cur.fetchall()
    t.add("a killed connection never makes an ok run", "no table of the runs outside their databases",
          not outside, "outside" if outside else None, f"{outside}")


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


def full_disk(t: Tally, d: Path) -> None:
    cls = "a full disk"
    for size in ("2M", "3M", "4M", "6M"):
        mnt = d / f"mnt{size}"
        mnt.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)]).returncode:
            t.add(cls, f"quickstart on a {size} tmpfs", False, None, "cannot mount")
            continue
        try:
            out = d / f"disk{size}.out"
            p = run_bg(["run", ROOT / "parameters" / "quickstart.yaml", "--data-dir", mnt,
                        "--no-progress"], out)
            code = p.wait(300)
            text = out.read_text()
            listed = subprocess.run([PY, "-m", "benchlib.cli", "list", "--data-dir", str(mnt)],
                                    capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            metas = [meta_of(m.parent) for m in mnt.glob("quickstart/*/meta.json")]
            failed = [m for m in metas if m["status"] == "failed"
                      and (mnt / "quickstart" / m["run_id"] / "error.log").exists()]
            good = (code == 1 and "Traceback" not in text and "no space left on the device of" in text
                    and listed.returncode == 0 and failed and all(m["status"] != "ok" or m.get("error") is None
                                                                  for m in metas))
            t.add(cls, f"quickstart on a {size} tmpfs: exit {code}, {len(failed)} failed, list "
                  f"exit {listed.returncode}", bool(good),
                  "traceback" if "Traceback" in text else None, text[-300:])
        finally:
            subprocess.run(["umount", "-l", str(mnt)])


def signals(t: Tally, d: Path) -> None:
    cls = "signals"
    for sig, word in ((signal.SIGTERM, "SIGTERM"), (signal.SIGKILL, "abandoned"),
                      (signal.SIGTERM, "SIGTERM"), (signal.SIGKILL, "abandoned")):
        data = d / f"sig{time.monotonic_ns()}"
        out = d / "sig.out"
        p = run_bg(["run", ROOT / "parameters" / "quickstart.yaml", "-p", "run.loop_secs=20",
                    "-p", "run.threads=[1]", "--data-dir", data, "--no-progress"], out)
        end = time.monotonic() + 120
        while time.monotonic() < end and not list(data.glob("quickstart/*/steps.parquet")):
            time.sleep(0.2)
        time.sleep(1.5)
        p.send_signal(sig)
        p.wait(60)
        listed = subprocess.run([PY, "-m", "benchlib.cli", "list", "--data-dir", str(data)],
                                capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        text = out.read_text() + listed.stdout
        good = word in text and "Ctrl-C" not in text and "Traceback" not in text
        t.add(cls, f"{sig.name} mid-loop: the line says {word}", good,
              "traceback" if "Traceback" in text else None, text[-300:])


def main() -> int:
    quick = "--quick" in sys.argv
    t = Tally()
    with tempfile.TemporaryDirectory(prefix="trials-") as tmp:
        d = Path(tmp)
        for fn in (urls, options, overflows, files, outputs, redis_db):
            fn(t, d)
        if not quick:
            kills(t, d, rounds=3)
            full_disk(t, d)
            signals(t, d)
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
