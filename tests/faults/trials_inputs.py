"""Issue 41's input trials (10, 13, 14; trials.py runs them): files that are no file or
too large read without bound, numbers that are no duration or rate, places results
cannot go, and input that was accepted in silence — each one line, exit 2, and nothing
left behind (no data folder, no experiment.json or .lock, no import folder)."""
from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

from trials import ROOT, Tally, base, cli, exp_file, refused

SMOKE = ROOT / "parameters" / "smoke.yaml"
LB = ROOT / "parameters" / "linkbench.yaml"


def _clean(t: Tally, cls: str, what: str, argv: list, leftover: Path, *words: str) -> None:
    """refused(), and then nothing at ``leftover``."""
    code, text = cli(*argv)
    lines = [ln for ln in text.strip().splitlines() if ln.startswith("benchlib:")]
    good = code == 2 and len(lines) == 1 and all(w in lines[0] for w in words) and not leftover.exists()
    fault = None if good else "traceback" if code == -1 or "Traceback" in text else "silent"
    t.add(cls, what, good, fault, f"exit {code}, left {leftover.exists()}: {text.strip()[-200:]}")


def bounded(t: Tally, d: Path) -> None:
    cls = "input files read with a bound"
    refused(t, cls, "run /dev/zero", ["run", "/dev/zero"], "a device")
    refused(t, cls, "run /dev/urandom --dry-run", ["run", "/dev/urandom", "--dry-run"], "a device")
    wf = {**base("sqlite", "ycsb", {"recordcount": 10}), "workload_file": "/dev/urandom"}
    refused(t, cls, "workload_file: /dev/urandom --dry-run", ["run", exp_file(d, wf), "--dry-run"], "a device")
    fifo = d / "fifo.yaml"
    if not fifo.exists():
        os.mkfifo(fifo)
    refused(t, cls, "a FIFO as the YAML", ["run", fifo], "a pipe")
    big = d / "big.yaml"
    with big.open("wb") as fh:
        fh.truncate(17 << 20)
    refused(t, cls, "a 17 MB YAML", ["run", big], "larger than a parameter file")
    refused(t, cls, "LinkBench data_file=/dev/urandom", ["run", LB, "-p", "data_file=/dev/urandom",
                                                          "--dry-run"], "data_file", "a device")
    bomb = d / "bomb.dat.gz"
    bomb.write_bytes(gzip.compress(b"\0" * (80 << 20)))
    refused(t, cls, "LinkBench data_file: a .gz unpacking to 80 MB", ["run", LB, "-p", f"data_file={bomb}",
                                                                      "--dry-run"], "unpacks past")
    _clean(t, cls, "import ycsb /dev/zero", ["import", "ycsb", "/dev/zero", "--into", d / "imp0" / "r"],
           d / "imp0", "a device")


INF = ["run.loop_secs=inf", "run.target_base=inf", "run.loop_secs=.nan", "run.target_factors=[inf]",
       "load.target_factors=[.inf]", "run.status_interval_s=inf", "run.target_base=1e308",
       "run.loop_secs=1e12"]


def numbers_and_places(t: Tally, d: Path) -> None:
    cls = "numbers and places"
    for p in INF:
        refused(t, cls, f"-p {p} --dry-run", ["run", SMOKE, "-p", p, "--dry-run"], p.split("=")[0])
        _clean(t, cls, f"-p {p}, a real run", ["run", SMOKE, "-p", p, "--data-dir", d / "inf"], d / "inf",
               p.split("=")[0])
    bad = Path(os.fsdecode(bytes(d) + b"/d\xff"))
    _clean(t, cls, "--data-dir not UTF-8", ["run", SMOKE, "--data-dir", bad], bad, "not UTF-8")
    refused(t, cls, "--data-dir /proc/self", ["run", SMOKE, "--data-dir", "/proc/self"], "cannot write")
    data = d / "places"
    code, text = cli("run", SMOKE, "--data-dir", data, "--no-progress")
    t.add(cls, "a smoke run to harm", code == 0, None if code == 0 else "traceback", text[-200:])
    run = next((data / "smoke").glob("sqlite-*"))
    shutil.move(run, d / "moved")
    run.write_text("x")
    for force in ([], ["--force"]):
        refused(t, cls, f"a run folder replaced by a file {force}", ["run", SMOKE, "--data-dir", data, *force],
                "a file where the run folder")
    run.unlink()
    shutil.move(d / "moved", run)
    (data / "smoke" / ".lock").unlink()
    (data / "smoke" / ".lock").mkdir()
    refused(t, cls, ".lock made a folder", ["run", SMOKE, "--data-dir", data, "--force"], ".lock")
    (data / "smoke" / ".lock").rmdir()
    _read_only(t, cls, d, data)


def _read_only(t: Tally, cls: str, d: Path, data: Path) -> None:
    ro = d / "ro"
    ro.mkdir(exist_ok=True)
    r = subprocess.run(["mount", "--bind", "-o", "ro", str(data), str(ro)], capture_output=True, text=True)
    if r.returncode:
        t.add(cls, "a read-only data folder (not tried: no mount)", True)
        return
    try:
        refused(t, cls, "run into a read-only data folder", ["run", SMOKE, "--data-dir", ro, "--force"],
                "Read-only")
        refused(t, cls, "list --rebuild of a read-only one", ["list", "--rebuild", "--data-dir", ro], "Read-only")
        refused(t, cls, "report of a read-only one", ["report", ro / "smoke", "--no-progress"], "Read-only")
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


def silent(t: Tally, d: Path) -> None:
    cls = "accepted in silence"
    dup = d / "dup.yaml"
    dup.write_text(SMOKE.read_text() + "seed: 8\n")
    refused(t, cls, "a YAML key given twice", ["run", dup, "--dry-run"], "'seed' given twice")
    refused(t, cls, "-p with a key given twice", ["run", SMOKE, "--dry-run", "-p",
                                                  "targets=[{name: a, name: b, url: sqlite}]"], "given twice")
    for p in ("run.threads=[1,1]", "load.processes=[2,2]", "run.target_factors=[1.00001,1.00002]"):
        _clean(t, cls, f"-p {p} --force", ["run", SMOKE, "-p", p, "--force", "--data-dir", d / "dupm"],
               d / "dupm", "twice" if "factors" not in p else "planned 2 times")
    refused(t, cls, "ybio -p batch_size=[10,10]", ["run", ROOT / "parameters" / "ybio.yaml", "-p",
                                                   "batch_size=[10,10]", "--dry-run"], "given twice")
    one = d / "one.out"
    one.write_text("[OVERALL], RunTime(ms), 5\n")
    _clean(t, cls, "import ycsb of one [OVERALL] line", ["import", "ycsb", one, "--into", d / "i1" / "r"],
           d / "i1", "no operation")
    digits = d / "digits.out"
    with digits.open("w") as fh:
        fh.write("[OVERALL], RunTime(ms), " + "1" * (80 << 20) + "\n")
    _clean(t, cls, "import ycsb of an 80 MB line of digits", ["import", "ycsb", digits, "--into", d / "i2" / "r"],
           d / "i2", "no operation")
    digits.unlink()
    for engine in ("InnoDB; DROP TABLE victim", "InnoDB) -- "):
        exp = base("mysql://root@127.0.0.1:3306/test", "ycsb", {"recordcount": 10})
        exp["targets"][0]["options"] = {"engine": engine}
        _clean(t, cls, f"MariaDB engine {engine!r}", ["run", exp_file(d, exp), "--data-dir", d / "eng"],
               d / "eng", "not a storage engine")
