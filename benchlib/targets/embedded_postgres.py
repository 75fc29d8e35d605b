"""The embedded PostgreSQL: a real server process started by benchlib from the
``pgserver`` package (PostgreSQL binaries shipped in a wheel), nothing to install by
hand. Its data folder is ``<data-dir>/.embedded-postgres/<target name>``; it listens
on a Unix socket only. It does not outlive the benchlib process that started it: a
watchdog process (:mod:`.watchdog`) stops it when that process dies without stopping it
(a SIGKILL); should even that fail, the next start stops it first, with one line.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..hw.cgroup import own_cgroup, release
from .base import TargetError
from .postgres import PostgresTarget
from .watchdog import OWNER_FILE, Watchdog
from .watchdog import stop_leftover as _stop_leftover


class EmbeddedPostgresTarget(PostgresTarget):
    kind = "postgres"  # clients talk to it exactly as to any PostgreSQL
    option_names = ("pgdata",)

    @classmethod
    def check_url(cls, url: str) -> None:
        """Its URL is its name: the server is benchlib's own."""

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, "postgresql://localhost/postgres", options, data_dir)
        self.url = url
        self.pgdata = Path(self.options.get("pgdata", self.data_dir / ".embedded-postgres" / name))
        self._server = None
        self._watchdog = None

    def start(self):
        try:
            import pgserver
        except ImportError:
            raise TargetError(f"{self.name}: embedded-postgres needs the pgserver package: "
                              "pip install 'benchlib[embedded]'") from None
        self.pgdata.mkdir(parents=True, exist_ok=True)
        stop_leftover(self.pgdata)
        try:
            # 'stop' shuts the server down when this process releases it
            self._server = pgserver.get_server(self.pgdata, cleanup_mode="stop")
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise TargetError(f"{self.name}: embedded PostgreSQL did not start in {self.pgdata}: {first}") from None
        self.conninfo = self._server.get_uri()
        super().start()
        pid_file = self.pgdata / "postmaster.pid"
        if pid_file.exists():
            self._postmaster = int(pid_file.read_text().split()[0])
            # stops the server should this process die without stopping it (SIGKILL)
            self._watchdog = Watchdog(self._postmaster, (self.pgdata / OWNER_FILE,
                                                         self.pgdata / PGSERVER_HANDLES))
        (self.pgdata / OWNER_FILE).write_text(f"{os.getpid()}\n")
        self.own_cgroup = own_cgroup(self.name, self.dbms_pids)   # its CPU, exited backends' too

    def stop(self):
        super().stop()
        if self._server is not None:
            self._server.cleanup()
            self._server = None
        if self._watchdog is not None:
            self._watchdog.release()
            self._watchdog = None
        release(self.own_cgroup)
        self.own_cgroup = None
        (self.pgdata / OWNER_FILE).unlink(missing_ok=True)

    def dbms_info(self):
        info = super().dbms_info()
        info["name"] = "PostgreSQL (embedded)"
        return info


PGSERVER_HANDLES = ".handle_pids.json"


def stop_leftover(pgdata: Path, wait_s: float = 30.0) -> None:
    """A server left running by a killed benchlib process is stopped first (watchdog's
    :func:`.watchdog.stop_leftover`); pgserver's list of the processes using the server
    still names the killed one, so the next run's cleanup would think the server shared
    and leave it running: that list goes too."""
    _stop_leftover(pgdata, "the embedded PostgreSQL", (pgdata / PGSERVER_HANDLES,), wait_s)
