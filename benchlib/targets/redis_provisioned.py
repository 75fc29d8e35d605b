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
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ..masking import mask_mapping
from .base import TargetError
from .redis import RedisTarget
from .watchdog import OWNER_FILE, Watchdog

MARK = "benchlib.provisioned"
LOG = "server.log"
READY_S = 30.0
# benchlib sets these itself: the server's place and how clients reach it
MANAGED = frozenset({"port", "bind", "unixsocket", "dir", "daemonize", "logfile", "pidfile", "include"})


def _binary() -> str:
    exe = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK)
                                           else None)
    if exe is None:
        raise ValueError("redis-server is not installed here (looked on PATH and in /usr/bin)")
    return exe


@functools.lru_cache(maxsize=None)
def _version_of(exe: str) -> str:
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20).stdout
    m = re.search(r"v=(\d+(?:\.\d+)*)", out)
    return m.group(1) if m else "unknown"


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
    s = options.get("settings") or {}
    if not isinstance(s, dict):
        raise ValueError(f"settings: {s!r}: a mapping of directive: value")
    for k, v in s.items():
        if not re.fullmatch(r"[a-z][a-z0-9-]*", str(k)):
            raise ValueError(f"settings: {k!r} is not a Redis directive's name")
        if isinstance(v, (dict, list)) or v is None:
            raise ValueError(f"settings: {k}: {v!r}: one value (a list is an axis of the matrix)")
        if str(k) in MANAGED:
            raise ValueError(f"settings: {k}: benchlib sets it for the server it starts")
    return s


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ProvisionedRedisTarget(RedisTarget):
    kind = "redis"   # clients talk to it exactly as to any Redis
    option_names = ("version", "settings")

    @classmethod
    def check_url(cls, url: str) -> None:
        """Its URL is its kind: the server is benchlib's own."""

    @classmethod
    def check_options(cls, url: str, options: dict) -> None:
        super().check_options(url, options)
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
        port = _free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            self._proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(self.home),
                                           "--save", "", "--daemonize", "no", "--logfile", "",
                                           *_args(self.settings)],
                                          stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, start_new_session=True)
        finally:
            os.close(fd)
        self._watchdog = Watchdog(self._proc.pid, (self.home / OWNER_FILE,))
        (self.home / OWNER_FILE).write_text(f"{os.getpid()}\n")
        self.url = f"redis://127.0.0.1:{port}/0"
        self._wait_ready()
        super().start()
        self._pid = self._proc.pid
        self.started_at = time.time()
        self._defaults = _fresh_config(exe)

    def _wait_ready(self) -> None:
        import redis
        deadline = time.monotonic() + READY_S
        while True:
            if self._proc.poll() is not None:
                text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
                lines = [x for x in text.splitlines() if x.strip()]
                raise TargetError(f"{self.name}: Redis did not start (log {self.log_path}): "
                                  f"{lines[-1].strip() if lines else 'no message'}")
            try:
                redis.Redis.from_url(self.url, socket_connect_timeout=1).ping()
                return
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise TargetError(f"{self.name}: Redis not ready in {READY_S:.0f} s") from None
                time.sleep(0.05)

    def stop(self) -> None:
        super().stop()
        if self._proc is not None:
            try:
                self._proc.send_signal(signal.SIGTERM)   # Redis' shutdown (no save: save "")
                self._proc.wait(30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            except ProcessLookupError:
                pass
            self._proc = None
        if self._watchdog is not None:
            self._watchdog.release()
            self._watchdog = None
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
        return info


@functools.lru_cache(maxsize=None)
def _fresh_config(exe: str) -> dict:
    """``CONFIG GET *`` of a fresh server of ``exe`` on its defaults (started once, stopped)."""
    import redis
    port = _free_port()
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
