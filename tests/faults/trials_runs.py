"""Issue 28's trials that run workloads for real (trials.py runs them; ``--quick`` leaves
them out): connections killed mid-run on every server pair and under the Dask executor,
concurrent runs, corrupt and truncated run files, signals and full disks for every
workload. Targets and properties are trials_matrix's (databases of the trials' own).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from killing import KILLERS, RUN_STATEMENT, kill_clients_later
from trials import PY, ROOT, Tally, base, cli, exp_file, refused, run_bg
from trials_matrix import PAIRS, PROPS, TARGETS

KIND = {"postgres": "postgres", "mysqldb": "mysql", "pymysql": "mysql", "redis": "redis"}
RUN_PROPS = {"ycsb": {**PROPS["ycsb"], "readproportion": 0.5, "updateproportion": 0.5,
                      "requestdistribution": "uniform"},
             "kv": {**PROPS["kv"], "read": 0.5, "update": 0.5},
             "ybio": {**PROPS["ybio"], "run_duration": 2},
             "linkbench": PROPS["linkbench"]}


def _run_exp(wl: str, url: str, name: str, secs: int = 2, threads: int = 2, **over) -> dict:
    exp = base(url, wl, dict(RUN_PROPS[wl]), experiment=name, **over)
    exp["run"] = {"threads": [threads], "processes": 1, "loops": 1, "status_interval_s": 1,
                  **({} if wl == "ybio" else {"loop_secs": secs})}
    return exp


def _loop_of(data: Path, name: str):
    from benchlib import load_results
    steps = load_results(data / name)["steps"].set_index("step")
    return steps.loc["r.L1"] if "r.L1" in steps.index else None


def kill_one(t: Tally, d: Path, wl: str, tgt: str, executor: str = "local", keep_s: float = 0.0) -> None:
    """The server ends the run loop's connections: the run reconnects within 2 failed
    operations per kill and ends ok (or degraded, when the kills cost the loop its time:
    run/outage.py), or it fails naming why; never ok made of failures."""
    from benchlib.params import validate
    from benchlib.run.experiment import run_experiment
    name = f"kill-{wl}-{tgt}-{executor}{'-keep' if keep_s else ''}"
    over = {"executor": "dask", "dask": {"workers": 1}} if executor == "dask" else {}
    exp = validate(_run_exp(wl, TARGETS[tgt], name, **over), name)
    # LinkBench: any statement of the database's clients (its load's or its requests':
    # both reconnect); the others: their run loop's
    pattern = "" if wl == "linkbench" else RUN_STATEMENT[wl].format(name=PROPS[wl].get("table", ""))
    data = d / "kills"
    if keep_s:
        killer, killed = kill_clients_later(TARGETS[tgt].rsplit("/", 1)[1], pattern=pattern, min_conns=1,
                                            settle_s=0.5, keep_killing_s=keep_s, poll_s=0.01)
    else:
        import threading
        killed: list = []
        killer = threading.Thread(target=lambda: killed.extend(KILLERS[KIND[tgt]](TARGETS[tgt], pattern, 2, 60)))
        killer.start()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            res = run_experiment(exp, data, progress=False, force=True)
            status = list(res.runs.values())[0]
        except Exception as e:  # noqa: BLE001 - counted
            status = f"Traceback: {type(e).__name__}: {e}"
    killer.join(90)
    loop = _loop_of(data, name)
    run_dir = next((data / name).glob("*/meta.json")).parent
    failed = -1 if loop is None else int(loop["failed"])
    good = bool(killed) and (status == "failed" and (run_dir / "error.log").exists()
                             or status in ("ok", "degraded") and 0 <= failed <= 2 * len(killed))
    what = (f"{wl} on {tgt} ({executor}{', kept killing' if keep_s else ''}): {len(killed)} killed, "
            f"{status}, failed {failed}")
    fault = "traceback" if status.startswith("Traceback") else None if good or not killed else "ok_failed"
    t.add("connections killed mid-run", what, good, fault, what)


def kills(t: Tally, d: Path) -> None:
    for wl, tgt in PAIRS:
        if tgt != "sqlite":   # SQLite has no connection to lose
            kill_one(t, d, wl, tgt)
    targets = {tgt for _, tgt in PAIRS}     # trials.py --target: one target's
    for wl in ("kv", "ybio"):
        for tgt in ("mysqldb", "pymysql"):
            if tgt in targets:
                kill_one(t, d, wl, tgt, keep_s=1.0)
    if "mysqldb" in targets:
        kill_one(t, d, "kv", "mysqldb", executor="dask")


def _wait_for(data: Path, pattern: str, secs: float = 120) -> bool:
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if list(data.glob(pattern)):
            return True
        time.sleep(0.2)
    return False


def concurrency(t: Tally, d: Path) -> None:
    """While a run goes: a second run of the experiment is refused naming the first's pid;
    ``list`` and ``show`` read what is there; the first ends ok."""
    cls = "concurrent runs"
    for wl, tgt in (("ycsb", "sqlite"), ("kv", "redis"), ("ybio", "pymysql"), ("linkbench", "postgres")):
        data, name = d / f"conc-{wl}-{tgt}", f"c-{wl}"
        yml = exp_file(d, _run_exp(wl, TARGETS[tgt], name, secs=4, threads=1), f"c-{wl}-{tgt}.yaml")
        p = run_bg(["run", yml, "--data-dir", data, "--no-progress"], d / "conc.out")
        _wait_for(data, f"{name}/*/meta.json")
        refused(t, cls, f"{wl} on {tgt}: a second run at once", ["run", yml, "--data-dir", data,
                                                                  "--no-progress"], str(p.pid))
        for argv in (["list", "--data-dir", data], ["show", data / name]):
            code, text = cli(*argv)
            t.add(cls, f"{wl} on {tgt}: {argv[0]} during the run: exit {code}", code == 0,
                  "traceback" if code == -1 else None, text[-200:])
        code = p.wait(180)
        status = [json.loads(m.read_text())["status"] for m in data.glob(f"{name}/*/meta.json")]
        t.add(cls, f"{wl} on {tgt}: the first run ends ok", code == 0 and status == ["ok"],
              None if code == 0 else "ok_failed" if "ok" in status else None,
              f"exit {code} {status} {(d / 'conc.out').read_text()[-300:]}")


CORRUPT = {"meta.json": lambda b: b[: len(b) // 2], "steps.parquet": lambda b: b"",
           "latency.parquet": lambda b: os.urandom(len(b)), "intervals.parquet": lambda b: b[: len(b) // 3],
           "hw.parquet": lambda b: b"PAR1" + b"\0" * 10}


def corrupt(t: Tally, d: Path) -> None:
    """Two runs of each workload on SQLite, then one file of the second run cut or
    garbled at a time: ``show`` skips it with a line naming it and ``list`` reads the
    catalog (exit 0); a rerun runs it again; a garbled catalog costs no run."""
    cls = "corrupt and truncated files"
    for wl in PROPS:
        data, name = d / f"cor-{wl}", f"cor-{wl}"
        exp = {**_run_exp(wl, "sqlite", name, secs=1, threads=1), "repetitions": 2}
        yml = exp_file(d, exp, f"cor-{wl}.yaml")
        code, text = cli("run", yml, "--data-dir", data, "--no-progress")
        if code != 0:
            t.add(cls, f"{wl}: the runs to corrupt", False, "traceback" if code == -1 else None, text[-300:])
            continue
        runs = sorted(p for p in (data / name).iterdir() if p.is_dir())
        files = {**CORRUPT, **({"benchruns.parquet": CORRUPT["steps.parquet"]} if wl == "ybio" else {})}
        for fname, harm in files.items():
            f = runs[1] / fname
            good_bytes = f.read_bytes()
            f.write_bytes(harm(good_bytes))
            for argv in (["show", data / name], ["list", "--data-dir", data]):
                code, text = cli(*argv)
                named = runs[1].name in text or fname in text or argv[0] == "list"
                ok = code == 0 and named and "Traceback" not in text
                t.add(cls, f"{wl}: {fname} harmed, {argv[0]}: exit {code}", ok,
                      "traceback" if code == -1 else None if ok else "silent", text[-300:])
            f.write_bytes(good_bytes)
        (runs[1] / "meta.json").write_text("{")
        (data / "catalog.sqlite").write_bytes(b"garbage" * 100)
        code, text = cli("run", yml, "--data-dir", data, "--no-progress")
        statuses = [json.loads((r / "meta.json").read_text()).get("status") for r in runs]
        t.add(cls, f"{wl}: rerun over a cut meta.json and a garbled catalog: exit {code}, {statuses}",
              code == 0 and statuses == ["ok"] * 2, "traceback" if code == -1 else None, text[-300:])


def signals(t: Tally, d: Path) -> None:
    """SIGTERM and SIGINT mid-loop, each workload on a server: the run `interrupted`, the
    line names the signal, no traceback; after SIGKILL `list` shows it `abandoned`."""
    cls = "signals"
    cases = [(wl, tgt, sig) for wl, tgt in (("ycsb", "postgres"), ("kv", "redis"), ("ybio", "mysqldb"),
                                             ("linkbench", "pymysql"))
             for sig in (signal.SIGTERM, signal.SIGINT)]
    cases += [("kv", "sqlite", signal.SIGKILL)]
    for wl, tgt, sig in cases:
        data, name = d / f"sig-{wl}-{tgt}-{sig.name}", f"sig-{wl}"
        yml = exp_file(d, _run_exp(wl, TARGETS[tgt], name, secs=30, threads=1), "sig.yaml")
        if wl == "ybio":
            exp = json.loads(json.dumps(_run_exp(wl, TARGETS[tgt], name, threads=1)))
            exp["properties"]["run_duration"] = 30
            yml = exp_file(d, exp, "sig.yaml")
        out = d / "sig.out"
        p = run_bg(["run", yml, "--data-dir", data, "--no-progress"], out)
        _wait_for(data, f"{name}/*/steps.parquet")
        time.sleep(1.0)
        p.send_signal(sig)
        code = p.wait(90)
        listed = subprocess.run([PY, "-m", "benchlib.cli", "list", "--data-dir", str(data)],
                                capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        text = out.read_text()
        word = {"SIGTERM": "SIGTERM", "SIGINT": "interrupted", "SIGKILL": "abandoned"}[sig.name]
        status = [json.loads(m.read_text())["status"] for m in data.glob(f"{name}/*/meta.json")]
        good = (word in text + listed.stdout and "Traceback" not in text + listed.stderr
                and "ok" not in status and (sig == signal.SIGKILL or status == ["interrupted"])
                and (sig != signal.SIGTERM or "Ctrl-C" not in text))
        t.add(cls, f"{sig.name} mid-loop, {wl} on {tgt}: exit {code}, {status}, the line says {word}", good,
              "traceback" if "Traceback" in text else "ok_failed" if "ok" in status else None,
              text[-300:] + listed.stdout[-200:])


def full_disk(t: Tally, d: Path) -> None:
    """Each workload on SQLite, its data folder on a small tmpfs of its own: exit 1, one
    line naming the folder's free space, the run `failed` with its error.log, `list`
    reads the catalog."""
    cls = "a full disk"
    cases = [("quickstart", s) for s in ("2M", "4M")]
    cases += [(wl, s) for wl in ("ycsb", "kv", "ybio", "linkbench") for s in ("2M", "4M")]
    for wl, size in cases:
        mnt = d / f"mnt-{wl}-{size}"
        mnt.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)]).returncode:
            t.add(cls, f"{wl} on a {size} tmpfs", False, None, "cannot mount")
            continue
        try:
            if wl == "quickstart":
                yml = ROOT / "parameters" / "quickstart.yaml"
            else:
                exp = _run_exp(wl, "sqlite", f"disk-{wl}", secs=2, threads=1)
                exp["properties"].update({"ycsb": {"recordcount": 20000}, "kv": {"key_count": 20000},
                                          "ybio": {"tab_rows": 60000}, "linkbench": {"maxid1": 20001}}[wl])
                yml = exp_file(d, exp, "disk.yaml")
            _disk_one(t, cls, wl, size, yml, mnt, d / "disk.out")
        finally:
            subprocess.run(["umount", "-l", str(mnt)])


def _disk_one(t: Tally, cls: str, wl: str, size: str, yml: Path, mnt: Path, out: Path) -> None:
    code = run_bg(["run", yml, "--data-dir", mnt, "--no-progress"], out).wait(300)
    text = out.read_text()
    listed = subprocess.run([PY, "-m", "benchlib.cli", "list", "--data-dir", str(mnt)],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    metas = [(m.parent, json.loads(m.read_text())) for m in mnt.glob("*/*/meta.json")]
    failed = [r for r, m in metas if m["status"] == "failed" and (r / "error.log").exists()]
    ok_runs = [r for r, m in metas if m["status"] == "ok"]
    # a run small enough for the disk may end ok; one that did not fit ends failed, in one line
    good = ("Traceback" not in text and listed.returncode == 0 and
            (code == 1 and failed and "no space left on the device of" in text or code == 0 and not failed))
    t.add(cls, f"{wl} on a {size} tmpfs: exit {code}, {len(failed)} failed, {len(ok_runs)} ok, "
          f"list exit {listed.returncode}", bool(good), "traceback" if "Traceback" in text else None,
          text[-300:])
