"""The embedded PostgreSQL: a real server process started by benchlib from the
``pgserver`` package (PostgreSQL binaries shipped in a wheel), nothing to install by
hand. Its data folder is ``<data-dir>/.embedded-postgres/<target name>``; it listens
on a Unix socket only.
"""
from __future__ import annotations

from pathlib import Path

from .base import TargetError
from .postgres import PostgresTarget


class EmbeddedPostgresTarget(PostgresTarget):
    kind = "postgres"  # clients talk to it exactly as to any PostgreSQL

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, "postgresql://localhost/postgres", options, data_dir)
        self.url = url
        self.pgdata = Path(self.options.get("pgdata", self.data_dir / ".embedded-postgres" / name))
        self._server = None

    def start(self):
        try:
            import pgserver
        except ImportError:
            raise TargetError(f"{self.name}: embedded-postgres needs the pgserver package: "
                              "pip install 'benchlib[embedded]'") from None
        self.pgdata.mkdir(parents=True, exist_ok=True)
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

    def stop(self):
        super().stop()
        if self._server is not None:
            self._server.cleanup()
            self._server = None

    def dbms_info(self):
        info = super().dbms_info()
        info["name"] = "PostgreSQL (embedded)"
        return info
