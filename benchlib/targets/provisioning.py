"""What the servers benchlib provisions share (``*_provisioned.py``): a free port, the
server process started in a session of its own with its log appended to ``server.log`` in
the run folder and a watchdog beside it, its readiness awaited, and its stop.

The provisioning seam is small: a target that starts its own server has ``start`` (a fresh
data directory, the process, ready), ``stop`` (the process, the data directory gone),
``dbms_info`` (what the server was: version, settings that differ from a fresh server's,
start time) and, where its data can be copied while stopped, ``use_loaded`` /
``keep_loaded`` (``run/loaded_data.py``; a kept load is of one version and one value of
each of the target's ``on_disk`` settings, and whole or absent: :func:`keep_copy`). A
provisioner of another place (a Kubernetes StatefulSet per configuration) would keep the
same four and start its pod instead (docs/targets.md, "The seam for other places").
"""
from __future__ import annotations

import errno
import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from . import cpu_sets
from .base import TargetError
from .watchdog import OWNER_FILE, Watchdog, alive

MARK = "benchlib.provisioned"   # in a folder benchlib made: it may replace it, and nothing else
LOG = "server.log"              # the server's log, in the run folder


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT_TAKEN = ("Address already in use", "Failed listening on port")   # the servers' words for it


def on_a_free_port(launch: Callable[[int], None], failed: Callable[[], None], tries: int = 3) -> int:
    """``launch(port)`` on a free port; should another process take that port between
    :func:`free_port` and the server's bind, ``failed()`` (the ended server's watchdog
    released) and again on another port: the port, or the last attempt's TargetError."""
    for attempt in range(tries):
        port = free_port()
        try:
            launch(port)
            return port
        except TargetError as e:
            if attempt == tries - 1 or not any(w in str(e) for w in PORT_TAKEN):
                raise
            failed()
    raise AssertionError("unreachable")


def spawn(args: list[str], log: Path, home: Path, stop_signal: int = signal.SIGINT,
          cpus: frozenset[int] | None = None, **popen) -> tuple[subprocess.Popen, Watchdog]:
    """The server process (its own session: a Ctrl-C to benchlib is not its business),
    stdout and stderr appended to ``log``, pinned to ``cpus`` (every process it forks
    too), and the watchdog that stops it with ``stop_signal`` should benchlib die first;
    benchlib's pid written in ``home``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, start_new_session=True,
                                preexec_fn=cpu_sets.pinning(cpus), **popen)
    finally:
        os.close(fd)
    watchdog = Watchdog(proc.pid, (home / OWNER_FILE,), sig=stop_signal)
    (home / OWNER_FILE).write_text(f"{os.getpid()}\n")
    return proc, watchdog


def wait_ready(proc: subprocess.Popen, ready: Callable[[], bool], log: Path, what: str,
               why: Callable[[str], str], timeout_s: float = 60.0) -> None:
    """Until ``ready()`` (a connection that answers); TargetError with the log's reason
    (``why(text)``) if the process ended, or after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            text = log.read_text(errors="replace") if log.exists() else ""
            raise TargetError(f"{what} did not start (log {log}): {why(text)}")
        if ready():
            return
        if time.monotonic() > deadline:
            raise TargetError(f"{what} not ready in {timeout_s:.0f} s (log {log})")
        time.sleep(0.1)


def stop(proc: subprocess.Popen | None, watchdog: Watchdog | None, stop_signal: int = signal.SIGINT,
         wait_s: float = 60.0) -> None:
    """The server asked to stop (``stop_signal``), killed after ``wait_s``; its watchdog
    told that it need not."""
    if proc is not None:
        try:
            proc.send_signal(stop_signal)
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except ProcessLookupError:
            pass
    if watchdog is not None:
        watchdog.release()


def last_line(text: str) -> str:
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return lines[-1] if lines else "no message"


def check_settings(options: dict, name_pattern: str, managed: frozenset, what: str) -> dict:
    """A target's ``settings`` option (a mapping of one value each; a list is the matrix's,
    expanded before): each name of ``name_pattern``, each value one line (no control
    character: the config files take a line a setting), none of the ``managed`` ones (the
    server's place, benchlib's to set: compared with ``-`` as ``_``); ValueError (one line)."""
    s = options.get("settings") or {}
    if not isinstance(s, dict):
        raise ValueError(f"settings: {s!r}: a mapping of {what}: value")
    for k, v in s.items():
        if not re.fullmatch(name_pattern, str(k)):
            raise ValueError(f"settings: {k!r} is not a {what}'s name")
        if isinstance(v, (dict, list)) or v is None:
            raise ValueError(f"settings: {k}: {v!r}: one value (a list is an axis of the matrix)")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in str(v)):
            # a newline would end the line of the server's config file and start another
            raise ValueError(f"settings: {k}: a value with a control character (a newline?) is not one value")
        if str(k).replace("-", "_") in managed:
            raise ValueError(f"settings: {k}: benchlib sets it for the server it starts")
    return s


def find_binary(name: str, dirs: tuple[str, ...]) -> str:
    """The executable ``name`` in one of ``dirs`` or on PATH; ValueError naming where it looked."""
    for d in dirs:
        if os.access(f"{d}/{name}", os.X_OK):
            return f"{d}/{name}"
    import shutil
    found = shutil.which(name)
    if found is None:
        raise ValueError(f"{name} is not installed here (looked in {', '.join(dirs)} and on PATH)")
    return found


def copy_tree(src: Path, dest: Path, ignore=None) -> None:
    """``src`` copied to ``dest``; a full disk is a TargetError of one line, and no half
    of the copy stays."""
    try:
        shutil.copytree(src, dest, symlinks=True, ignore=ignore)
    except OSError as e:   # shutil.Error gathers each file's: "[Errno 28] No space left on device"
        full = e.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(e) \
            or "Disk quota exceeded" in str(e)
        if not full:
            raise
        shutil.rmtree(dest, ignore_errors=True)
        free = shutil.disk_usage(dest.parent).free if dest.parent.exists() else 0
        raise TargetError(f"no space left on the device of {dest.parent} to copy the data directory {src} "
                          f"({free / 1e9:.1f} GB free): make room, or remove kept loads "
                          "(<data-dir>/.provisioned/.loaded)") from None


def copy_in(source: Path, dest: Path, name: str, loaded_key: str | None, empty: str) -> dict:
    """``source`` (a kept load when ``loaded_key``, else the version's empty data directory,
    made by ``empty``) copied to ``dest`` with benchlib's mark: where it came from and the
    copy's seconds, for meta.json."""
    t0 = time.monotonic()
    copy_tree(source, dest)
    facts = {"from": "loaded" if loaded_key else empty, "copy_s": round(time.monotonic() - t0, 3)}
    if loaded_key:
        facts["loaded"] = loaded_key
    (dest / MARK).write_text(f"{name}\n")
    return facts


def keep_copy(src: Path, keep: Path, ignore: tuple[str, ...]) -> None:
    """The stopped data directory ``src`` copied to ``keep`` whole or not at all (a copy
    under a temporary name, renamed: a kill during the copy leaves nothing a later run
    would take for loaded data); the same experiment's other loads of that version gone."""
    tmp = keep.with_name(f".{keep.name}.{os.getpid()}")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    for half in tmp.parent.glob(f".{keep.name}.*"):   # a copy its process was killed in
        pid = half.name.rsplit(".", 1)[-1]
        if half == tmp or not (pid.isdigit() and alive(int(pid))):
            shutil.rmtree(half, ignore_errors=True)
    copy_tree(src, tmp, shutil.ignore_patterns(*ignore, OWNER_FILE))
    shutil.rmtree(keep, ignore_errors=True)   # an older load of this key and version
    tmp.rename(keep)
    for stale in keep.parent.parent.iterdir():   # the same experiment's other loads of it
        if stale != keep.parent and (stale / keep.name).exists():
            shutil.rmtree(stale / keep.name, ignore_errors=True)


def kept(d: Path, marker: str) -> bool:
    """Whether ``d`` is a whole kept data directory (``marker``: a file the server made)."""
    return (d / marker).exists() and (d / MARK).exists()


@functools.lru_cache(maxsize=None)
def version_of(exe: str, pattern: str) -> str:
    """The version ``exe --version`` prints (``pattern``'s first group), or "unknown"."""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    m = re.search(pattern, out)
    return m.group(1) if m else "unknown"


class ProvisionedServer:
    """What every server benchlib provisions shares, before its DBMS's target class in
    the bases: its URL is its kind (the server is benchlib's own, no address to check),
    and it takes a ``version``, ``settings`` and ``cpus`` (:mod:`.cpu_sets`: the server's
    and the clients' CPUs)."""

    option_names: tuple[str, ...] = ("version", "settings", "cpus")
    # the settings that change what is on disk (set as the empty data directory is made):
    # a kept load is reused only by a configuration of the same version and these
    on_disk: tuple[str, ...] = ()

    def disk_tag(self) -> str:
        """The on-disk settings of this configuration as a folder name's part
        (``-wal_segment_size64MB``), "" with none of them."""
        settings = getattr(self, "settings", {}) or {}
        return "".join(f"-{k}{re.sub(r'[^A-Za-z0-9_.]', '_', str(v))}" for k, v in sorted(settings.items())
                       if str(k).replace("-", "_") in self.on_disk)

    @classmethod
    def check_cpus(cls, options: dict) -> None:
        cpu_sets.split(options)

    @property
    def server_cpus(self) -> frozenset[int] | None:
        return (cpu_sets.split(self.options) or {}).get("server")

    @property
    def client_cpus(self) -> frozenset[int] | None:
        """The CPUs the run's client processes are pinned to (run/experiment.py), or None."""
        return (cpu_sets.split(self.options) or {}).get("clients")

    def cpus_meta(self) -> dict | None:
        return cpu_sets.as_meta(cpu_sets.split(self.options))

    @classmethod
    def check_url(cls, url: str) -> None:
        """Its URL is its kind: the server is benchlib's own."""
