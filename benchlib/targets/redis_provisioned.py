"""A Redis server benchlib provisions: the system's ``redis-server``, a fresh one per run
with the target's settings (``redis.conf`` directives: ``appendonly``, ``io-threads`` …;
a list is an axis of the matrix, as for the provisioned PostgreSQL).

    targets:
      - {name: r, url: redis-provisioned, settings: {appendonly: [no, yes]}}

Each run's server: its own folder ``<data-dir>/.provisioned/<target name>`` (its ``dir``:
AOF and RDB files), a free port on 127.0.0.1, no RDB snapshots unless the settings ask,
its log ``server.log`` in the run folder; stopped after the run (the folder goes with it),
and by a watchdog should benchlib die first. The settings are checked before anything runs
by Redis itself (a server started with ``--port 0`` reads them and exits): a misspelled
directive is its own ``Bad directive or wrong number of arguments``. meta.json's ``dbms``
holds ``INFO server``'s version, every ``CONFIG GET *`` value that differs from a fresh
server's of the same binary, and the start time. ``version``: the major version the
system's ``redis-server`` must be (one binary: no other is looked for).
"""
from __future__ import annotations

import functools
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ..masking import mask_mapping
from . import provisioning
from ..hw.cgroup import own_cgroup, release
from .base import TargetError
from .redis import RedisTarget

MARK, LOG = provisioning.MARK, provisioning.LOG
READY_S = 30.0
# benchlib sets these itself: the server's place and how clients reach it
MANAGED = frozenset({"port", "bind", "unixsocket", "dir", "daemonize", "logfile", "pidfile", "include"})


def _binary() -> str:
    return provisioning.find_binary("redis-server", ("/usr/bin", "/usr/local/bin"))


def _version_of(exe: str) -> str:
    return provisioning.version_of(exe, r"v=(\d+(?:\.\d+)*)")


def _value(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _args(settings: dict) -> list[str]:
    out = []
    for k, v in settings.items():
        out += [f"--{k}", *_value(v).split()]   # `save "3600 1"` takes its words apart
    return out


@functools.lru_cache(maxsize=128)
def _check(exe: str, pairs: tuple) -> str | None:
    """Redis' own complaint about ``pairs``, or None: a server started on no port reads its
    configuration and exits."""
    try:
        res = subprocess.run([exe, "--port", "0", "--save", "", *_args(dict(pairs))],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{exe} did not answer: {e}"
    text = res.stdout + res.stderr
    if "FATAL CONFIG" not in text:
        return None
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    at = next((i for i, x in enumerate(lines) if x.startswith(">>>")), None)
    return f"{lines[at][4:]}: {lines[at + 1]}" if at is not None and at + 1 < len(lines) else lines[-1]


def _settings(options: dict) -> dict:
    return provisioning.check_settings(options, r"[a-z][a-z0-9-]*", MANAGED, "Redis directive")


class ProvisionedRedisTarget(provisioning.ProvisionedServer, RedisTarget):
    kind = "redis"   # clients talk to it exactly as to any Redis

    @classmethod
    def check_options(cls, url: str, options: dict) -> None:
        super().check_options(url, options)
        cls.check_cpus(options)
        exe = _binary()
        want, have = options.get("version"), _version_of(exe)
        if want is not None and str(want) != have.split(".")[0] and str(want) != have:
            raise ValueError(f"version: Redis {want} is not installed here (the system's {exe} is {have})")
        settings = _settings(options)
        msg = _check(exe, tuple((str(k), _value(v)) for k, v in settings.items())) if settings else None
        if msg:
            raise ValueError(f"settings: Redis {have} refuses them: {msg}")

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, "redis://127.0.0.1:6379/0", options, data_dir)
        self.settings = _settings(self.options)
        self.home = self.data_dir / ".provisioned" / name
        self.log_path = self.home.parent / f"{name}.log"
        self._proc = self._watchdog = None
        self._defaults: dict = {}
        self.started_at = None

    def set_run_dir(self, run_dir: Path) -> None:
        self.log_path = Path(run_dir) / LOG

    def start(self) -> None:
        try:
            exe = _binary()
        except ValueError as e:
            raise TargetError(f"{self.name}: {e}") from None
        if self.home.exists():
            if not (self.home / MARK).exists():
                raise TargetError(f"{self.name}: {self.home} is not a folder benchlib made: move it away")
            shutil.rmtree(self.home)
        self.home.mkdir(parents=True)
        (self.home / MARK).write_text(f"{self.name}\n")
        provisioning.on_a_free_port(lambda port: self._launch(exe, port), self._release)
        super().start()
        self._pid = self._proc.pid
        self.own_cgroup = own_cgroup(self.name, self.dbms_pids)
        self.started_at = time.time()
        self._defaults = _fresh_config(exe)

    def _launch(self, exe: str, port: int) -> None:
        self._proc, self._watchdog = provisioning.spawn(
            [exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(self.home), "--save", "",
             "--daemonize", "no", "--logfile", "", *_args(self.settings)], self.log_path, self.home,
            cpus=self.server_cpus)
        self.url = f"redis://127.0.0.1:{port}/0"
        provisioning.wait_ready(self._proc, self._answers, self.log_path, f"{self.name}: Redis",
                                provisioning.last_line, READY_S)

    def _release(self) -> None:
        """The server that did not start: its watchdog released."""
        provisioning.stop(self._proc, self._watchdog)
        self._proc = self._watchdog = None

    def _answers(self) -> bool:
        import redis
        try:
            return bool(redis.Redis.from_url(self.url, socket_connect_timeout=1).ping())
        except redis.RedisError:
            return False

    def stop(self) -> None:
        super().stop()
        provisioning.stop(self._proc, self._watchdog, signal.SIGTERM, 30)   # no save: save ""
        self._proc = self._watchdog = None
        release(self.own_cgroup)
        self.own_cgroup = None
        if (self.home / MARK).exists():
            shutil.rmtree(self.home, ignore_errors=True)

    def dbms_info(self) -> dict:
        info = super().dbms_info()
        conf = _text(self.admin().config_get("*"))
        differ = {k: v for k, v in sorted(conf.items()) if self._defaults.get(k) != v}
        info["settings"] = mask_mapping(differ)   # masterauth, requirepass: never in a file
        info["requested"] = mask_mapping({str(k): _value(v) for k, v in self.settings.items()})
        info["started"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started_at))
        info["binaries"] = _binary()
        info["log"] = self.log_path.name
        if self.cpus_meta():
            info["cpus"] = self.cpus_meta()
        return info


@functools.lru_cache(maxsize=None)
def _fresh_config(exe: str) -> dict:
    """``CONFIG GET *`` of a fresh server of ``exe`` on its defaults (started once, stopped)."""
    import redis
    port = provisioning.free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--daemonize", "no",
                             "--logfile", "", "--dir", "/tmp"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + READY_S
        while True:
            try:
                return _text(redis.Redis.from_url(f"redis://127.0.0.1:{port}/0", socket_connect_timeout=1)
                             .config_get("*"))
            except redis.RedisError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    return {}
                time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait(10)


def _text(conf: dict) -> dict:
    """CONFIG GET's answer as text (redis-py gives bytes unless told otherwise)."""
    def t(x):
        return x.decode(errors="replace") if isinstance(x, bytes) else str(x)
    return {t(k): t(v) for k, v in conf.items()}
