"""A MariaDB server benchlib provisions: the system's ``mariadbd``, a fresh one per run
with the target's settings (server options: ``innodb_buffer_pool_size``,
``innodb_flush_log_at_trx_commit`` …; a list is an axis of the matrix, as for the
provisioned PostgreSQL).

    targets:
      - {name: maria, url: mysql-provisioned, settings: {innodb_buffer_pool_size: [128M, 1G]}}

The version's empty data directory is made once (``mariadb-install-db`` into
``<data-dir>/.provisioned/.initdb/mariadb-<version>``, one per ``innodb_page_size``: the
on-disk setting) and copied for each run into ``<data-dir>/.provisioned/<target name>``;
the data is loaded once per version and page size, the shut-down server's data directory
kept and copied for the other configurations (``run/loaded_data.py``, as PostgreSQL's); the server listens on a free port on
127.0.0.1 (its socket in its data directory, or in /tmp when that path is too long for a
socket), its error log ``server.log`` in the run folder, the database ``test`` made at
start; when benchlib is root it runs as the system's ``mysql`` user. It stops after the
run (the data directory goes with it), and by a watchdog (SIGTERM) should benchlib die
first. The settings are checked before anything runs by ``mariadbd --help --verbose``
itself: an unknown one is its ``unknown variable 'innodb_bufer_pool_size=1G'``, a value it
would adjust its warning. meta.json's ``dbms.settings``: every ``SHOW GLOBAL VARIABLES``
value that differs from a fresh server's (one started once per process on a copy of the
empty data directory, its defaults), so its paths and port too.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ..masking import mask_mapping
from . import provisioning
from ..hw.cgroup import own_cgroup, release
from .base import TargetError
from .mysql import MysqlTarget, _connect

MARK, LOG = provisioning.MARK, provisioning.LOG
READY_S = 60.0
ON_DISK = ("innodb_page_size",)   # mariadb-install-db's too: a data directory is of one page size
MANAGED = frozenset({"port", "socket", "datadir", "bind_address", "user", "log_error", "pid_file",
                     "basedir", "skip_networking"})


def _exe(name: str) -> str:
    return provisioning.find_binary(name, ("/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/mysql/bin"))


def _version_of(exe: str) -> str:
    return provisioning.version_of(exe, r"Ver (\d+\.\d+\.\d+)")


def _user() -> list[str]:
    return ["--user=mysql"] if os.geteuid() == 0 else []


def _flag(k: str, v) -> str:
    return f"--{k}={_value(v)}"


@functools.lru_cache(maxsize=128)
def _help(exe: str, flags: tuple) -> tuple[int, str]:
    res = subprocess.run([exe, "--no-defaults", *flags, *_user(), "--verbose", "--help"],
                         capture_output=True, text=True, timeout=30)
    return res.returncode, res.stdout + res.stderr


def _refusal(text: str) -> str | None:
    for line in text.splitlines():
        m = re.search(r"\[(ERROR|Warning)\] (?:mariadbd: )?(.*)", line)
        if m and (m.group(1) == "ERROR" or "adjusted" in m.group(2) or "ignored" in m.group(2)):
            return m.group(2).strip()
    return None


def _read_as(text: str) -> dict[str, str]:
    """``--help --verbose``'s table of the values the server would run with (name → value)."""
    out, started = {}, False
    for line in text.splitlines():
        if line.startswith("-------"):
            started = True
        elif started and len(parts := line.split(None, 1)) == 2:
            out[parts[0].replace("-", "_")] = parts[1].strip()
    return out


def _same(asked, read: str) -> bool:
    """Whether the server reads ``asked`` as ``read`` (sizes with K/M/G/T, booleans, numbers)."""
    a, r = _value(asked).strip(), read.strip()
    onoff = {"on": "1", "true": "1", "yes": "1", "off": "0", "false": "0", "no": "0"}
    if a.lower() in onoff and r.lower() in onoff:
        return onoff[a.lower()] == onoff[r.lower()]
    if m := re.fullmatch(r"(\d+)([KMGTkmgt])?", a):
        a = str(int(m.group(1)) * 1024 ** ("KMGT".index(m.group(2).upper()) + 1 if m.group(2) else 0))
    try:
        return float(a) == float(r)
    except ValueError:
        return a.lower() == r.lower()


def _value(v) -> str:
    if isinstance(v, bool):
        return "ON" if v else "OFF"
    return str(v)


def _settings(options: dict) -> dict:
    return provisioning.check_settings(options, r"[a-z][a-z0-9_\-]*", MANAGED, "server option")


def _chown_mysql(path: Path) -> None:
    if os.geteuid() != 0:
        return
    import pwd
    pw = pwd.getpwnam("mysql")
    for root, dirs, files in os.walk(path):
        for n in (root, *(os.path.join(root, f) for f in dirs + files)):
            os.chown(n, pw.pw_uid, pw.pw_gid)
    for up in Path(path).resolve().parents:
        if not up.stat().st_mode & 0o001:
            up.chmod(up.stat().st_mode | 0o001)


def _tmpdir_path(datadir: Path) -> Path:
    return datadir.with_name(datadir.name + ".tmp")


def _tmpdir(datadir: Path) -> Path:
    """The server's own tmpdir, beside its data directory (made, the server's user's).

    Not the shared /tmp: every mariadbd deletes the ``#sql*`` files of its tmpdir as it
    starts (``mysql_rm_tmp_tables``, under ``--bootstrap`` too), the temporary tables of
    any other server busy with one. Two suites side by side showed it: a
    mariadb-install-db failed with "Unknown table 'mysql.tmp_user_sys'" as another
    provisioned server started, and a run's query using a temporary table on disk would
    have failed the same way."""
    d = _tmpdir_path(datadir)
    d.mkdir(parents=True, exist_ok=True)
    _chown_mysql(d)
    return d


def _server_args(exe: str, datadir: Path, port: int, settings: dict) -> list[str]:
    """mariadbd on ``datadir`` and ``port``, its socket in it (or in /tmp when that path
    is too long for a socket), its tmpdir its own (:func:`_tmpdir`; a ``tmpdir`` setting
    comes later and wins)."""
    sock = datadir / "mysqld.sock"
    sock = sock if len(str(sock)) < 100 else Path(f"/tmp/benchlib-mariadb-{port}.sock")
    return [exe, "--no-defaults", f"--datadir={datadir}", f"--port={port}", "--bind-address=127.0.0.1",
            f"--socket={sock}", f"--pid-file={datadir / 'mariadbd.pid'}", f"--tmpdir={_tmpdir(datadir)}",
            *_user(), *(_flag(k, v) for k, v in settings.items())]


@functools.lru_cache(maxsize=None)
def _fresh_variables(exe: str, template: Path, library: str) -> dict:
    """SHOW GLOBAL VARIABLES of a fresh server of ``exe`` on its defaults (a copy of the
    empty data directory, started once per process and stopped)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="benchlib-mariadb-") as d:
        datadir = Path(d) / "data"
        shutil.copytree(template, datadir, symlinks=True)
        _chown_mysql(Path(d))
        port = provisioning.free_port()
        proc, watchdog = provisioning.spawn(_server_args(exe, datadir, port, {}), Path(d) / "log", Path(d),
                                            signal.SIGTERM)
        try:
            params = {"host": "127.0.0.1", "port": port, "user": "root", "password": "", "database": ""}
            deadline = time.monotonic() + READY_S
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    conn = _connect(params, library)
                except TargetError:
                    time.sleep(0.1)
                    continue
                try:
                    with conn.cursor() as c:
                        c.execute("SHOW GLOBAL VARIABLES")
                        return {k: "" if v is None else str(v) for k, v in c.fetchall()}
                finally:
                    conn.close()
            return {}
        finally:
            provisioning.stop(proc, watchdog, signal.SIGTERM)


class ProvisionedMysqlTarget(provisioning.ProvisionedServer, MysqlTarget):
    option_names = ("version", "settings", "cpus", "engine", "library")
    on_disk = ON_DISK

    @classmethod
    def check_options(cls, url: str, options: dict) -> None:
        super(MysqlTarget, cls).check_options(url, options)   # option names; the URL is benchlib's
        cls.check_cpus(options)
        exe = _exe("mariadbd")
        want, have = options.get("version"), _version_of(exe)
        if want is not None and not (have == str(want) or have.startswith(f"{want}.")):
            raise ValueError(f"version: MariaDB {want} is not installed here (the system's {exe} is {have})")
        settings = _settings(options)
        if settings:
            rc, text = _help(exe, tuple(_flag(k, v) for k, v in settings.items()))
            msg = _refusal(text)
            read = _read_as(text)
            for k, v in settings.items() if not msg and rc == 0 else ():
                shown = read.get(str(k).replace("-", "_"))
                if shown is not None and not _same(v, shown):
                    msg = f"{k}={_value(v)} is read as {shown}"
                    break
            if rc != 0 or msg:
                raise ValueError(f"settings: MariaDB {have} refuses them: {msg or text.strip().splitlines()[-1]}")

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, "mysql://root@127.0.0.1:3306/test", options, data_dir)
        self.url = url
        self.settings = _settings(self.options)
        self.datadir = self.data_dir / ".provisioned" / name
        self.log_path = self.datadir.parent / f"{name}.log"
        self._proc = self._watchdog = None
        self.started_at = None
        self._socket = None
        self._defaults_of = None
        self._loaded_key = self._loaded_from = None   # the kept data this run starts from, or keeps
        self.data_facts: dict = {}    # where the data directory came from, and its copy's seconds

    def set_run_dir(self, run_dir: Path) -> None:
        self.log_path = Path(run_dir) / LOG

    def _template(self, exe: str, tag: str | None = None) -> Path:
        """The version's empty data directory (of this configuration's on-disk settings,
        or of none: ``tag=""``), made once (mariadb-install-db) and copied per run."""
        tag = self.disk_tag() if tag is None else tag
        root = self.data_dir / ".provisioned" / ".initdb"
        tpl = root / f"mariadb-{_version_of(exe)}{tag}"
        if (tpl / "mysql").is_dir():
            return tpl
        tmp = root / f".{tpl.name}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        _chown_mysql(tmp)
        on_disk = [_flag(k, v) for k, v in self.settings.items() if tag and k.replace("-", "_") in ON_DISK]
        own_tmp = _tmpdir(tmp)   # its bootstrap server's, as a server's
        try:
            res = subprocess.run([_exe("mariadb-install-db"), "--no-defaults", f"--datadir={tmp}", *_user(),
                                  f"--tmpdir={own_tmp}",
                                  *on_disk, "--auth-root-authentication-method=normal", "--skip-test-db"],
                                 capture_output=True, text=True, timeout=300)
        finally:
            shutil.rmtree(own_tmp, ignore_errors=True)
        if res.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise TargetError(f"{self.name}: mariadb-install-db failed: {(res.stderr or res.stdout).strip()[-300:]}")
        try:
            tmp.rename(tpl)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
        return tpl

    # --- load once, copy per configuration (run/loaded_data.py), as the provisioned PostgreSQL
    def _loaded_dir(self, key: str) -> Path:
        return self.data_dir / ".provisioned" / ".loaded" / key / f"mariadb-{_version_of(_exe('mariadbd'))}{self.disk_tag()}"

    def use_loaded(self, key: str) -> bool:
        """Start from the data a run before this one loaded under ``key`` (same version and
        on-disk settings): True when there is such data."""
        try:
            d = self._loaded_dir(key)
        except ValueError:
            return False    # start() says it in one line
        self._loaded_key = key
        self._loaded_from = d if provisioning.kept(d, "mysql") else None
        return self._loaded_from is not None

    def keep_loaded(self) -> dict:
        """The server shut down, its data directory kept for the runs after this one, the
        server started again on it: what it took."""
        t0 = time.monotonic()
        self._stop_server()
        provisioning.keep_copy(self.datadir, self._loaded_dir(self._loaded_key), ("mariadbd.pid", "mysqld.sock"))
        copy_s = time.monotonic() - t0
        t1 = time.monotonic()
        self._launch(_exe("mariadbd"))
        return {"kept": self._loaded_key, "stop_and_copy_s": round(copy_s, 3),
                "restart_s": round(time.monotonic() - t1, 3), "restarted": self.started_at.isoformat() + "Z"}

    def start(self):
        try:
            exe = _exe("mariadbd")
        except ValueError as e:
            raise TargetError(f"{self.name}: {e}") from None
        if self.datadir.exists():
            if not (self.datadir / MARK).exists():
                raise TargetError(f"{self.name}: {self.datadir} is not a data directory benchlib made: move it away")
            shutil.rmtree(self.datadir)
        source = self._loaded_from or self._template(exe)
        self.data_facts = provisioning.copy_in(source, self.datadir, self.name,
                                               self._loaded_key if self._loaded_from else None, "install-db")
        _chown_mysql(self.datadir)
        self._defaults_of = (exe, self._template(exe, ""))
        provisioning.on_a_free_port(lambda port: self._launch(exe, port), self._stop_server)

    def _launch(self, exe: str, port: int | None = None) -> None:
        """mariadbd on the data directory (on ``port``, else the one it had), guarded by a
        watchdog, ready."""
        self.params = {**self.params, "port": port or self.params["port"]}
        args = _server_args(exe, self.datadir, self.params["port"], self.settings)
        self._socket = Path(next(a for a in args if a.startswith("--socket="))[len("--socket="):])
        self._proc, self._watchdog = provisioning.spawn(args, self.log_path, self.datadir, signal.SIGTERM,
                                                        cpus=self.server_cpus)
        provisioning.wait_ready(self._proc, self._made_database, self.log_path, f"{self.name}: MariaDB",
                                lambda text: _refusal(text) or provisioning.last_line(text), READY_S)
        super().start()
        self._server_pid = self._proc.pid
        self.own_cgroup = own_cgroup(self.name, self.dbms_pids)
        self.started_at = self._q("SELECT UTC_TIMESTAMP(6)")[0][0]

    def _made_database(self) -> bool:
        """The server answers; the URL's database made if it was not there."""
        try:
            conn = _connect({**self.params, "database": ""}, self.library)   # none yet
        except TargetError:
            return False
        try:
            with conn.cursor() as c:
                c.execute(f"CREATE DATABASE IF NOT EXISTS {self.quote_ident(self.params['database'])}")
        finally:
            conn.close()
        return True

    def stop(self):
        self._stop_server()
        if (self.datadir / MARK).exists():
            shutil.rmtree(self.datadir, ignore_errors=True)
        shutil.rmtree(_tmpdir_path(self.datadir), ignore_errors=True)

    def _stop_server(self) -> None:
        super().stop()
        provisioning.stop(self._proc, self._watchdog, signal.SIGTERM)   # mariadbd's shutdown
        self._proc = self._watchdog = None
        release(self.own_cgroup)
        self.own_cgroup = None
        (self.datadir / provisioning.OWNER_FILE).unlink(missing_ok=True)
        if self._socket is not None and str(self._socket).startswith("/tmp/benchlib-mariadb-"):
            self._socket.unlink(missing_ok=True)

    def dbms_info(self):
        info = super().dbms_info()
        fresh = _fresh_variables(*self._defaults_of, self.library)
        differ = {}
        for k, v in self._q("SHOW GLOBAL VARIABLES"):
            v = "" if v is None else str(v)
            if k in self.settings or k.replace("_", "-") in self.settings or fresh.get(k, v) != v:
                differ[k] = v
        info["settings"] = mask_mapping(differ)
        info["requested"] = mask_mapping({str(k): str(v) for k, v in self.settings.items()})
        info["started"] = self.started_at.isoformat() + "Z" if self.started_at else None
        info["binaries"] = _exe("mariadbd")
        info["log"] = self.log_path.name
        info["data"] = self.data_facts
        if self.cpus_meta():
            info["cpus"] = self.cpus_meta()
        return info

