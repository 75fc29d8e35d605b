"""A STAND-IN FOR cAdvisor, not cAdvisor: no real cAdvisor runs on this test machine
(it is no Debian package, and GitHub, where its releases are, cannot be reached), so this
tiny HTTP server, in a thread of the test's own process, exports what cAdvisor exports for
a cgroup's CPU, and the real Prometheus scrapes it as it would scrape cAdvisor.

What it copies from cAdvisor (its docs/storage/prometheus.md and what ``/metrics`` answers):

- the metric ``container_cpu_usage_seconds_total`` (``# TYPE … counter``, "Cumulative cpu
  time consumed in seconds"), one series per cgroup of the host, the root ``/`` included;
- its labels: ``id`` — the cgroup's path inside its hierarchy (``/``,
  ``/system.slice/postgresql.service``, ``/kubepods/burstable/pod…/…``), ``name`` and
  ``image`` (a container's; empty for a raw cgroup, as here), ``cpu="total"`` — plus a
  per-CPU series (``cpu="cpu00"`` …) beside it, as versions with per-CPU stats on give;
- its semantics: the cgroup's CPU accounting as the kernel keeps it (cgroup v1
  ``cpuacct.usage`` in ns, v2 ``cpu.stat``'s ``usage_usec``), in seconds, with the time it
  was read as the sample's timestamp (cAdvisor stamps its container samples).

What it does not copy: cAdvisor reads the cgroups on its own housekeeping tick (1 s by
default) and serves the last reading, so its value can be up to a tick older than its
scrape; this one reads at each scrape. It exports only the cgroups under the ``benchlib/``
folder of the first hierarchy that accounts CPU (the ones benchlib makes for the servers
it starts) and the root, not every cgroup of the host.
"""
from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from benchlib.hw import cgroup

HEAD = ("# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds.\n"
        "# TYPE container_cpu_usage_seconds_total counter\n")


def _usage_s(path: Path) -> tuple[float, list[float]] | None:
    """(the cgroup's CPU seconds, per CPU where v1 gives them), read from the kernel's files."""
    try:
        if (path / "cpuacct.usage").is_file():
            per = [int(x) / 1e9 for x in (path / "cpuacct.usage_percpu").read_text().split()]
            return int((path / "cpuacct.usage").read_text()) / 1e9, per
        for line in (path / "cpu.stat").read_text().splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6, []
    except (OSError, ValueError):
        return None
    return None


def metrics(mount: Path) -> str:
    lines = [HEAD]
    now_ms = int(time.time() * 1000)
    folders = [mount, *sorted(p for p in (mount / "benchlib").glob("*") if p.is_dir())]
    for path in folders:
        got = _usage_s(path)
        if got is None:
            continue
        cid = "/" + str(path.relative_to(mount)) if path != mount else "/"
        total, per = got
        labels = f'id="{cid}",image="",name=""'
        lines.append(f'container_cpu_usage_seconds_total{{cpu="total",{labels}}} {total:.9f} {now_ms}\n')
        lines += [f'container_cpu_usage_seconds_total{{cpu="cpu{i:02d}",{labels}}} {v:.9f} {now_ms}\n'
                  for i, v in enumerate(per)]
    return "".join(lines)


class StandIn:
    """The stand-in's HTTP server on a free loopback port (``port``), serving ``/metrics``."""

    def __init__(self):
        mounts = cgroup._mounts()
        if not mounts:
            raise RuntimeError("no cgroup hierarchy that accounts CPU is mounted")
        mount = mounts[0][1]

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):   # noqa: N802 - http.server's name
                body = metrics(mount).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
