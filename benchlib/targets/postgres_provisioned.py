"""A PostgreSQL server benchlib provisions: a fresh server of the version and settings the
target asks for, started for each run and stopped after it.

    targets:
      - name: pg
        url: postgres-provisioned
        version: [15, 16]                          # a major version, or a list: an axis
        settings: {shared_buffers: [128MB, 1GB]}   # postgresql.conf; a list: an axis

Each configuration (one version, one value of each setting) is a target of its own
(``matrix.target_configurations`` names it, ``pg-v16-shared_buffers1GB``), so it is a
point of its own in every summary. Its binaries: :mod:`.postgres_binaries` (the system's,
else pgserver's bundled ones). A version's empty cluster is made once (``initdb`` into
``<data-dir>/.provisioned/.initdb/<version>``) and copied for each run into
``<data-dir>/.provisioned/<target name>`` (benchlib's mark in it: a folder without it is
never replaced), the settings appended to its ``postgresql.conf``, a free port on
127.0.0.1, no Unix socket. The server's log is ``server.log`` in the run folder; meta.json's
``dbms`` holds its exact ``version()``, every setting not at its default (``pg_settings``),
its start time and where its binaries are. A watchdog (:mod:`.watchdog`) stops the server
should benchlib die without stopping it; the data directory goes when the run ends.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from . import postgres_binaries as pgbin
from . import provisioning
from ..hw.cgroup import own_cgroup, release
from .base import TargetError
from .postgres import PostgresTarget
from ..masking import mask_mapping
from .watchdog import OWNER_FILE, alive, stop_leftover

MARK, LOG = provisioning.MARK, provisioning.LOG
INITDB_CONF = "postgresql.conf.initdb"   # initdb's postgresql.conf, before benchlib's lines
READY_S = 60.0
# benchlib sets these itself: the server's place and how clients reach it
ON_DISK = ("wal_segment_size",)   # initdb's: --wal-segsize (MB, a power of 2 from 1 to 1024)
MANAGED = frozenset({"port", "listen_addresses", "unix_socket_directories", "data_directory",
                     "config_file", "hba_file", "ident_file", "logging_collector"})


def _version(options: dict) -> int | None:
    v = options.get("version")
    if v is None:
        return None
    if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, str) and v.isdigit())):
        raise ValueError(f"version: {v!r}: a major version of PostgreSQL (15, 16, …)")
    return int(v)


def _settings(options: dict) -> dict:
    settings = provisioning.check_settings(options, r"[A-Za-z_][A-Za-z0-9_.]*", MANAGED, "setting")
    _wal_segsize_mb(settings)
    return settings


def _wal_segsize_mb(settings: dict) -> int | None:
    """wal_segment_size in MB (initdb's --wal-segsize), None when not set; ValueError (one
    line) for a size initdb refuses."""
    v = settings.get("wal_segment_size")
    if v is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*(MB|GB)?\s*", str(v)) if not isinstance(v, bool) else None
    mb = int(m.group(1)) * (1024 if m.group(2) == "GB" else 1) if m else 0
    if not mb or mb > 1024 or mb & (mb - 1):
        raise ValueError(f"settings: wal_segment_size: {v!r}: a power of 2 from 1MB to 1GB "
                         "(initdb's --wal-segsize)")
    return mb


def _owner(pgdata: Path) -> int | None:
    """The pid of the benchlib process whose server runs in ``pgdata``, if one said so."""
    try:
        return int((pgdata / OWNER_FILE).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _quote(value) -> str:
    return "'" + pgbin.conf_value(value).replace("'", "''") + "'"


class ProvisionedPostgresTarget(provisioning.ProvisionedServer, PostgresTarget):
    kind = "postgres"  # clients talk to it exactly as to any PostgreSQL
    on_disk = ON_DISK

    @classmethod
    def check_options(cls, url: str, options: dict) -> None:
        """The version found here and the settings the server takes, else one line."""
        super().check_options(url, options)
        cls.check_cpus(options)
        binaries = pgbin.obtain(_version(options))   # fetched into the cache if need be
        if binaries is not None:   # None: a dry run, which would fetch it
            pgbin.check_settings(binaries, {k: v for k, v in _settings(options).items() if k not in ON_DISK})
        else:
            _settings(options)

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, "postgresql://127.0.0.1/postgres", options, data_dir)
        self.url = url
        self.settings = _settings(self.options)
        self.version = _version(self.options)
        self.pgdata = self.data_dir / ".provisioned" / name
        self.log_path = self.pgdata.parent / f"{name}.log"
        self.binaries = None
        self._proc = None
        self._watchdog = None
        self.started_at = None
        self._port = None
        self._loaded_key = None     # the kept data this run starts from, or keeps
        self._loaded_from = None    # that data's folder, when this run starts from it
        self.data_facts: dict = {}  # where the data directory came from, and its copy's seconds

    def set_run_dir(self, run_dir: Path) -> None:
        self.log_path = Path(run_dir) / LOG

    # --- the cluster
    def _template(self) -> Path:
        """The version's empty cluster, made once (initdb) and copied per run."""
        root = self.data_dir / ".provisioned" / ".initdb"
        tpl = root / f"{self.binaries.version}{self.disk_tag()}"
        if (tpl / "PG_VERSION").exists():
            return tpl
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f".{tpl.name}.{os.getpid()}"
        segsize = _wal_segsize_mb(self.settings)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        pgbin.hand_over(tmp)
        res = subprocess.run([self.binaries.exe("initdb"), "-D", str(tmp), "-U", "postgres", "--auth=trust",
                              "--encoding=UTF8", "--no-sync",
                              *([f"--wal-segsize={segsize}"] if segsize else [])], capture_output=True, text=True,
                             timeout=120, **pgbin.as_server())
        if res.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise TargetError(f"{self.name}: initdb of PostgreSQL {self.binaries.version} failed: "
                              f"{pgbin.server_message(res.stderr)}")
        try:
            tmp.rename(tpl)
        except OSError:   # another process made it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
        return tpl

    # --- load once, copy per configuration (run/loaded_data.py)
    def _loaded_dir(self, key: str) -> Path:
        return self.data_dir / ".provisioned" / ".loaded" / key / f"{self.binaries.version}{self.disk_tag()}"

    def use_loaded(self, key: str) -> bool:
        """Start from the data a run before this one loaded under ``key`` (same version):
        True when there is such data."""
        try:
            self.binaries = pgbin.find(self.version)
        except ValueError:
            return False    # start() says it in one line
        self._loaded_key = key
        d = self._loaded_dir(key)
        self._loaded_from = d if provisioning.kept(d, "PG_VERSION") else None
        return self._loaded_from is not None

    def _spare_wal(self) -> list[str]:
        """The WAL segments a cleanly shut-down cluster does not need (all but the one of
        its last checkpoint: older ones done with, later ones recycled for reuse, made
        again when missing): about half of a freshly loaded data directory, not copied."""
        try:
            out = subprocess.run([self.binaries.exe("pg_controldata"), str(self.pgdata)], capture_output=True,
                                 text=True, timeout=30, env={**os.environ, "LC_ALL": "C"}).stdout
        except (OSError, subprocess.TimeoutExpired):
            return []
        redo = re.search(r"REDO WAL file:\s+([0-9A-F]{24})", out)
        if "cluster state:" not in out or not re.search(r"cluster state:\s+shut down\n", out) or not redo:
            return []    # not cleanly shut down: every segment may be needed
        return [f.name for f in (self.pgdata / "pg_wal").iterdir()
                if re.fullmatch(r"[0-9A-F]{24}", f.name) and f.name != redo.group(1)]

    def keep_loaded(self) -> dict:
        """The server stopped, its data directory kept for the runs after this one (the
        version's other configurations), the server started again on it: what it took."""
        keep = self._loaded_dir(self._loaded_key)
        t0 = time.monotonic()
        self._stop_server()
        provisioning.keep_copy(self.pgdata, keep, ("postmaster.pid", "postmaster.opts", *self._spare_wal()))
        copy_s = time.monotonic() - t0
        t1 = time.monotonic()
        self._launch()
        return {"kept": self._loaded_key, "stop_and_copy_s": round(copy_s, 3),
                "restart_s": round(time.monotonic() - t1, 3), "restarted": self.started_at.isoformat()}

    def _fresh_data_dir(self, port: int) -> None:
        stop_leftover(self.pgdata, "a provisioned PostgreSQL")
        owner = _owner(self.pgdata)
        if owner is not None and owner != os.getpid() and alive(owner):
            raise TargetError(f"{self.name}: {self.pgdata} is in use by benchlib process {owner} (a target of "
                              "the same name in another experiment running now): give this target another name")
        if self.pgdata.exists():
            if not (self.pgdata / MARK).exists():
                raise TargetError(f"{self.name}: {self.pgdata} is not a data directory benchlib made: "
                                  "move it away (benchlib replaces only its own)")
            shutil.rmtree(self.pgdata)
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        source = self._loaded_from or self._template()
        self.data_facts = provisioning.copy_in(source, self.pgdata, self.name,
                                               self._loaded_key if self._loaded_from else None, "initdb")
        # the template's own postgresql.conf and benchlib's lines after it (a copied
        # directory's earlier lines are replaced: postgresql.conf.initdb keeps initdb's)
        conf = self.pgdata / "postgresql.conf"
        if not (self.pgdata / INITDB_CONF).exists():
            shutil.copyfile(conf, self.pgdata / INITDB_CONF)
        lines = [(self.pgdata / INITDB_CONF).read_text(), "# benchlib: the server's place", f"port = {port}",
                 "listen_addresses = '127.0.0.1'", "unix_socket_directories = ''",
                 "# benchlib: the target's settings"]
        lines += [f"{k} = {_quote(v)}" for k, v in self.settings.items() if k not in ON_DISK]
        conf.write_text("\n".join(lines) + "\n")
        pgbin.hand_over(self.pgdata)
        self.pgdata.chmod(0o700)

    # --- lifecycle
    def start(self):
        try:
            self.binaries = pgbin.find(self.version)
            pgbin.readable(self.binaries)
        except ValueError as e:
            raise TargetError(f"{self.name}: {e}") from None
        t0 = time.monotonic()
        provisioning.on_a_free_port(self._start_on, self._stop_server)
        self.data_facts["ready_s"] = round(time.monotonic() - t0, 3)   # the copy and the start, ready

    def _start_on(self, port: int) -> None:
        self._port = port
        self._fresh_data_dir(port)
        self._launch()

    def _launch(self) -> None:
        """The postmaster on the data directory, guarded by a watchdog, ready."""
        self._proc, self._watchdog = provisioning.spawn([self.binaries.exe("postgres"), "-D", str(self.pgdata)],
                                                        self.log_path, self.pgdata, cpus=self.server_cpus,
                                                        **pgbin.as_server())
        self._postmaster = self._proc.pid
        self.conninfo = f"postgresql://postgres@127.0.0.1:{self._port}/postgres"
        provisioning.wait_ready(self._proc, self._answers, self.log_path,
                                f"{self.name}: PostgreSQL {self.binaries.version}", pgbin.server_message, READY_S)
        super().start()
        self._postmaster = self._proc.pid
        self.own_cgroup = own_cgroup(self.name, self.dbms_pids)   # its CPU, exited backends' too
        self.started_at = self.admin().execute("SELECT pg_postmaster_start_time()").fetchone()[0]

    def _answers(self) -> bool:
        import psycopg
        try:
            psycopg.connect(self.conninfo, connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            return False

    def stop(self):
        self._stop_server()
        if (self.pgdata / MARK).exists():
            shutil.rmtree(self.pgdata, ignore_errors=True)   # the run's data: its log stays

    def _stop_server(self) -> None:
        super().stop()
        provisioning.stop(self._proc, self._watchdog)   # SIGINT: PostgreSQL's fast shutdown
        self._proc = self._watchdog = None
        release(self.own_cgroup)
        self.own_cgroup = None
        (self.pgdata / OWNER_FILE).unlink(missing_ok=True)

    def dbms_info(self):
        info = super().dbms_info()
        conn = self.admin()
        info["version_string"] = conn.execute("SELECT version()").fetchone()[0]
        # and every requested one, as the server reads it (an on-disk one is initdb's: its
        # source is no file's)
        rows = conn.execute("SELECT name, current_setting(name) FROM pg_settings "
                            "WHERE source NOT IN ('default', 'client', 'session') OR name = ANY(%s) ORDER BY name",
                            [[str(k) for k in self.settings]]).fetchall()
        # a setting holding a connection string (primary_conninfo) keeps no password
        info["settings"] = mask_mapping({k: v for k, v in rows})
        info["requested"] = mask_mapping({str(k): pgbin.conf_value(v) for k, v in self.settings.items()})
        info["started"] = self.started_at.isoformat() if self.started_at else None
        info["binaries"] = str(self.binaries.bin_dir)
        info["log"] = self.log_path.name
        info["data"] = self.data_facts
        if self.cpus_meta():
            info["cpus"] = self.cpus_meta()
        return info
