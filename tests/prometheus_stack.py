"""A real Prometheus with node_exporter, process-exporter and postgres_exporter, each
on a loopback port of its own (never 9090/9100: other servers may use them), scraping
every second: the tests' database-host metrics (issue 24). Debian's packages
(prometheus, prometheus-node-exporter, prometheus-process-exporter,
prometheus-postgres-exporter; .ci/run installs them); :func:`start` says why it
cannot run where they are missing."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

PROGRAMS = ("prometheus", "prometheus-node-exporter", "prometheus-process-exporter",
            "prometheus-postgres-exporter")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Stack:
    url: str
    instance: str                  # node_exporter's target, as Prometheus labels it
    procs: list = field(default_factory=list)
    workdir: Path | None = None
    env: dict = field(default_factory=dict)

    def restart(self, i: int, down_s: float) -> None:
        """Kill program ``i`` (0 node, 1 process, 2 postgres exporter, 3 Prometheus), start it
        again ``down_s`` later, as it was."""
        p = self.procs[i]
        p.kill()
        p.wait(timeout=10)
        time.sleep(down_s)
        self.procs[i] = subprocess.Popen(p.args, stdout=self._log(), stderr=subprocess.STDOUT, env=self.env)

    def add_job(self, job: str, args: list[str]) -> None:
        """Start one more exporter (``{port}`` in ``args``: a free loopback port) and have
        Prometheus scrape it (its configuration reloaded)."""
        port = _free_port()
        self.procs.insert(len(self.procs) - 1, subprocess.Popen(
            [a.format(port=port) for a in args], stdout=self._log(), stderr=subprocess.STDOUT, env=self.env))
        self.scrape(job, port)

    def scrape(self, job: str, port: int | None) -> None:
        """Have Prometheus scrape ``127.0.0.1:port`` every second as ``job`` (None: no
        more), its configuration reloaded."""
        path = self.workdir / "prometheus.yml"
        config = json.loads(path.read_text())
        config["scrape_configs"] = [c for c in config["scrape_configs"] if c["job_name"] != job]
        if port is not None:
            config["scrape_configs"].append({"job_name": job, "scrape_interval": "1s", "scrape_timeout": "1s",
                                             "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]})
        path.write_text(json.dumps(config))
        self.procs[-1].send_signal(signal.SIGHUP)

    def scraped(self, job: str, timeout_s: float = 20.0) -> None:
        """Wait until Prometheus has scraped ``job`` up."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/api/v1/query?query=up{{job=%22{job}%22}}", timeout=2) as r:
                    if any(x["value"][1] == "1" for x in json.loads(r.read())["data"]["result"]):
                        return
            except OSError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"Prometheus at {self.url}: job {job} not up after {timeout_s:.0f} s")

    def _log(self):
        return open(self.workdir / "exporters.log", "ab")

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def missing() -> str | None:
    """Why the stack cannot start here, or None."""
    absent = [p for p in PROGRAMS if shutil.which(p) is None]
    return f"not installed: {', '.join(absent)} (apt-get install -y {' '.join(absent)})" if absent else None


def start(workdir: Path, pg_dsn: str) -> Stack:
    """Start the exporters and Prometheus; wait until every job was scraped up."""
    ports = {k: _free_port() for k in ("prom", "node", "proc", "pg")}
    log = open(workdir / "exporters.log", "wb")
    env = {**os.environ, "DATA_SOURCE_NAME": pg_dsn}
    cmds = [
        ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{ports['node']}",
         "--collector.disable-defaults", "--collector.cpu", "--collector.stat", "--collector.diskstats"],
        ["prometheus-process-exporter", "-config.path", str(_process_config(workdir, pg_dsn)), "-threads=false",
         "-web.listen-address", f"127.0.0.1:{ports['proc']}"],
        ["prometheus-postgres-exporter", f"--web.listen-address=127.0.0.1:{ports['pg']}",
         "--disable-settings-metrics"],
    ]
    jobs = {"node": ports["node"], "process": ports["proc"], "postgres": ports["pg"]}
    config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
              "scrape_configs": [{"job_name": j, "scrape_interval": "1s", "scrape_timeout": "1s",
                                  "static_configs": [{"targets": [f"127.0.0.1:{p}"]}]}
                                 for j, p in jobs.items()]}
    (workdir / "prometheus.yml").write_text(json.dumps(config))   # JSON is YAML
    cmds.append(["prometheus", f"--config.file={workdir / 'prometheus.yml'}",
                 f"--storage.tsdb.path={workdir / 'tsdb'}", f"--web.listen-address=127.0.0.1:{ports['prom']}"])
    stack = Stack(f"http://127.0.0.1:{ports['prom']}", f"127.0.0.1:{ports['node']}", workdir=workdir, env=env)
    for c in cmds:
        stack.procs.append(subprocess.Popen(c, stdout=log, stderr=log, env=env))
    try:
        _wait_up(stack.url, len(jobs))
    except Exception:
        stack.stop()
        raise
    return stack


def _process_config(workdir: Path, pg_dsn: str) -> Path:
    """process-exporter's group ``postgres <data directory>``: the postmaster of the DSN's
    cluster (its data directory on its command line) and its children, not every ``postgres``
    of the host (the suite starts embedded clusters beside it: ``-procnames postgres`` summed
    them all); the name holds the data directory, by which benchlib finds the group."""
    import re

    import psycopg
    with psycopg.connect(pg_dsn) as c:
        datadir = c.execute("SHOW data_directory").fetchone()[0]
    path = workdir / "process-exporter.yml"
    path.write_text(json.dumps({"process_names": [
        {"name": f"postgres {datadir}", "comm": ["postgres"], "cmdline": [re.escape(datadir) + r"(\s|$)"]},
        # the host's other clusters (their postmasters, -D on the command line; backends follow
        # their parent), as a host-wide setup groups them: "postgres"
        {"name": "{{.Comm}}", "comm": ["postgres"], "cmdline": [r"\s-D\s"]}]}))
    return path


def _wait_up(url: str, n: int, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/api/v1/query?query=sum(up)", timeout=2) as r:
                res = json.loads(r.read())["data"]["result"]
            last = float(res[0]["value"][1]) if res else 0
            if last >= n:
                time.sleep(3)      # a few scrapes of each before the first step
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"Prometheus at {url}: {last} of {n} jobs up after {timeout_s:.0f} s")
