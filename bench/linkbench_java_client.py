"""The maintained Java LinkBench client (mdcallag/linkbench) for a bench to run beside
benchlib: found or built offline, run for its request phase, its stdout read to figures.

- The client's home is a checkout of the repository (``config/``, ``src/main/java``):
  ``--java-home DIR``, else ``~/.cache/benchlib/linkbench-java/src`` (cloned there once
  when the network allows it). Its classes are compiled with ``javac`` against the jars
  of ``~/.m2/repository`` (the newest version there of each of its four dependencies:
  pgjdbc, commons-cli, commons-math3, HdrHistogram; the MongoDB stores, whose driver
  the PostgreSQL run does not load, are left out) into
  ``~/.cache/benchlib/linkbench-java/<source hash>/FacebookLinkBench.jar``; or
  ``--java-jar PATH`` gives the jar. What is missing is said in one line that starts
  with "Java absent" (:class:`JavaAbsent`).
- The request phase's figures are read from the client's stdout as it comes
  (:func:`watch`): the JVM's CPU (``/proc/<pid>/stat``, all its threads) when the first
  "Requester thread #i started" line arrives and when "REQUEST PHASE COMPLETED" does,
  the wall time between them, and that line's requests (:func:`request_figures` reads
  a whole log the same way, for the tests).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from benchlib.importers.linkbench import _REQ_DONE

CACHE = Path.home() / ".cache" / "benchlib" / "linkbench-java"
REPO = "https://github.com/mdcallag/linkbench"
M2 = Path.home() / ".m2" / "repository"
# (folder under ~/.m2/repository, artifact): what LinkStorePgsql and the driver import
DEPENDENCIES = [("org/postgresql", "postgresql"), ("commons-cli", "commons-cli"),
                ("org/apache/commons", "commons-math3"), ("org/hdrhistogram", "HdrHistogram")]
MAIN = "com.facebook.LinkBench.LinkBenchDriver"
STARTED = re.compile(r"Requester thread #\d+ started")
# a requester's end: its time limit, or its requests all done
STOPPED = re.compile(r"Requester #\d+: time limit of \S+ elapsed|REQUEST PHASE COMPLETED")
_TICKS = os.sysconf("SC_CLK_TCK")


class JavaAbsent(Exception):
    """What the Java client lacks here, in one line."""


def _version_key(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.\-]", v))


def m2_jar(group: str, artifact: str, m2: Path = M2) -> Path:
    """The newest ``artifact-<version>.jar`` under ``m2/group/artifact``."""
    found = [(d.name, d / f"{artifact}-{d.name}.jar") for d in (m2 / group / artifact).glob("*")]
    found = [(v, j) for v, j in found if j.is_file()]
    if not found:
        raise JavaAbsent(f"Java absent: no {artifact} jar in {m2 / group / artifact} "
                         f"(the Java client needs it; mvn dependency:get it, or give --java-jar)")
    return max(found, key=lambda vj: _version_key(vj[0]))[1]


def dependencies(m2: Path = M2) -> list[Path]:
    return [m2_jar(g, a, m2) for g, a in DEPENDENCIES]


def home(java_home: str | None) -> Path:
    """The client's checkout (its ``config/`` is what both clients read)."""
    if java_home:
        h = Path(java_home).expanduser()
    else:
        h = CACHE / "src"
        if not (h / "config").is_dir() and shutil.which("git"):
            try:
                subprocess.run(["git", "clone", "-q", "--depth", "1", REPO, str(h)],
                               capture_output=True, timeout=120, check=False)
            except subprocess.TimeoutExpired:
                pass   # offline: said below, as no checkout
    if not (h / "config" / "LinkConfigPgsql.properties").is_file():
        raise JavaAbsent(f"Java absent: no LinkBench checkout at {h} (git clone {REPO} there, "
                         f"or give --java-home DIR)")
    return h


def _sources(h: Path) -> list[Path]:
    return sorted(p for p in (h / "src" / "main" / "java").rglob("*.java") if "Mongo" not in p.name)


def build(h: Path, deps: list[Path], cache: Path = CACHE) -> Path:
    """The client's jar, compiled from ``h``'s sources once per source hash."""
    for tool in ("java", "javac", "jar"):
        if shutil.which(tool) is None:
            raise JavaAbsent(f"Java absent: {tool} not on PATH (a JDK 11+ is needed)")
    src = _sources(h)
    if not src:
        raise JavaAbsent(f"Java absent: no Java sources under {h / 'src/main/java'}")
    digest = hashlib.sha256()
    for p in src:
        digest.update(p.read_bytes())
    out = cache / digest.hexdigest()[:16]
    jar = out / "FacebookLinkBench.jar"
    if jar.is_file():
        return jar
    classes = out / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(classes), "-cp",
                        os.pathsep.join(map(str, deps)), *map(str, src)], capture_output=True, text=True)
    if r.returncode:
        raise JavaAbsent(f"Java absent: javac failed: {(r.stderr.strip().splitlines() or ['?'])[0]}")
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True)
    return jar


def command(jar: Path, deps: list[Path], config: str, overrides: dict, csvstats: Path | None = None) -> list[str]:
    """LinkBenchDriver's request phase (``-r``) on ``config`` with ``-D key=value`` overrides."""
    cmd = ["java", "-cp", os.pathsep.join(map(str, [jar, *deps])), MAIN, "-c", config, "-r"]
    for k, v in overrides.items():
        cmd += ["-D", f"{k}={v}"]
    if csvstats is not None:
        cmd += ["-csvstats", str(csvstats)]
    return cmd


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and all its threads so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def request_figures(text: str) -> dict:
    """The request phase's figures in a client log: requests, Java's own Requests/second,
    its rounded seconds, the requesters that started. ValueError: no summary line."""
    m = _REQ_DONE.search(text)
    if m is None:
        raise ValueError("no 'REQUEST PHASE COMPLETED' line: the Java client did not finish")
    return {"requests": int(m.group(1)), "java_secs": float(m.group(2)),
            "java_rps": float(m.group(3)), "requesters": len(STARTED.findall(text))}


def watch(cmd: list[str], cwd: Path, log: Path) -> dict:
    """Run the client, its stdout and stderr into ``log``; :func:`request_figures` plus
    ``secs`` (the first requester's start → the last one's end, as read here: its
    "time limit … elapsed", else the summary line) and ``cpu_s`` (the JVM's CPU over that
    span: the requests and the JIT and GC threads beside them, not the startup nor the
    final statistics), ``total_cpu_s`` (the JVM's, start to exit) and ``wall_s``."""
    t_start = time.perf_counter()
    before = os.times()
    t0 = t1 = c0 = c1 = None
    with open(log, "w") as out:
        p = subprocess.Popen(cmd, cwd=cwd, env={**os.environ, "LINKBENCH_HOME": str(cwd)},
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in p.stdout:
            out.write(line)
            if t0 is None and STARTED.search(line):
                t0, c0 = time.perf_counter(), proc_cpu_s(p.pid)
            elif STOPPED.search(line) and (t1 is None or "Requester #" in line):
                t1, c1 = time.perf_counter(), proc_cpu_s(p.pid)   # the last requester's end
        rc = p.wait()
    after = os.times()
    text = log.read_text()
    if rc or t0 is None or t1 is None:
        tail = " | ".join(text.strip().splitlines()[-3:])
        raise RuntimeError(f"the Java client exited {rc} without a request phase: {tail}")
    fig = request_figures(text)
    fig.update(secs=t1 - t0, cpu_s=c1 - c0, wall_s=time.perf_counter() - t_start,
               total_cpu_s=(after.children_user + after.children_system)
               - (before.children_user + before.children_system))
    return fig
