"""PostgreSQL's binaries of a major version, found offline, and the settings they accept.

Where a version is looked for, in order: the system's packages
(``/usr/lib/postgresql/<N>/bin``, Debian's; ``/usr/pgsql-<N>/bin``, the PGDG RPMs'), then
the ``pgserver`` package's bundled binaries (the embedded target's, one version: its
``postgres --version`` says which), then the cache of fetched ones (:mod:`.postgres_fetch`:
``~/.cache/benchlib/postgresql/<N>``); :func:`obtain` fetches a version found nowhere. No version asked: pgserver's when installed, else
the newest the system has. A version found nowhere is one line naming where it looked.

A server never runs as root: when benchlib is root, its PostgreSQL commands run as the
system's ``postgres`` user (else ``pgserver``'s, the user that package makes), and every
folder above a data directory is made traversable for it (``o+x``, as pgserver does).

:func:`check_settings` asks the server itself whether it takes a target's settings
(``postgres -C … -c name=value``, on a configuration folder of an empty
``postgresql.conf``, nothing started): a misspelled name or a refused value is the
server's own message (``unrecognized configuration parameter "shared_bufers"``) before
anything runs.
"""
from __future__ import annotations

import functools
import os
import re
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import fetching
from . import postgres_fetch as pgfetch

SYSTEM_DIRS = ("/usr/lib/postgresql/{v}/bin", "/usr/pgsql-{v}/bin")
USERS = ("postgres", "pgserver")   # who runs a server when benchlib is root


@dataclass(frozen=True)
class Binaries:
    bin_dir: Path
    major: int
    version: str      # postgres --version's number: 15.14

    def exe(self, name: str) -> str:
        return str(self.bin_dir / name)


@functools.lru_cache(maxsize=None)
def _version_of(bin_dir: str) -> str | None:
    exe = Path(bin_dir) / "postgres"
    if not os.access(exe, os.X_OK):
        return None
    try:
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"(\d+)(\.\d+)?", out)
    return m.group(0) if m else None


def _bundled_dir() -> str | None:
    """pgserver's bin folder (without importing it: its import creates a runtime folder)."""
    import importlib.util
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin")


def _candidates(version: int | None) -> list[str]:
    if version is not None:
        dirs = [d.format(v=version) for d in SYSTEM_DIRS]
    else:
        found = sorted((p for p in Path("/usr/lib/postgresql").glob("*/bin") if p.parent.name.isdigit()),
                       key=lambda p: int(p.parent.name), reverse=True)
        dirs = [str(p) for p in found]
    bundled = _bundled_dir()
    cached = pgfetch.cached_dirs(version) if version is not None else []
    return ([bundled] if bundled and version is None else []) + dirs + ([bundled] if bundled and version else []) \
        + cached


def find(version: int | None) -> Binaries:
    """The binaries of major ``version`` (None: the default above); ValueError (one line
    naming where it looked) when none is here."""
    looked = _candidates(version)
    for d in looked:
        v = _version_of(d)
        if v and (version is None or int(v.split(".")[0]) == version):
            return Binaries(Path(d), int(v.split(".")[0]), v)
    what = f"PostgreSQL {version}" if version is not None else "PostgreSQL"
    bundled = _bundled_dir()
    has = (f"pgserver's bundled binaries are {_version_of(bundled)}" if bundled and _version_of(bundled)
           else "pgserver's bundled binaries: pip install pgserver")
    where = ", ".join(d for d in looked if d != bundled and d not in pgfetch.cached_dirs(version or 0))
    cache = f", the cache {pgfetch.cache_root() / str(version)}" if version is not None else ""
    raise ValueError(f"version: {what} is not installed here (looked in "
                     f"{where or '/usr/lib/postgresql/<N>/bin'}{cache}; {has})")


def obtain(version: int | None) -> Binaries | None:
    """:func:`find`, else the version fetched into the cache (one line on stderr says so);
    None in a dry run, where it would be fetched; ValueError (one line: where it looked,
    why it could not fetch, and how to fetch it offline)."""
    try:
        return find(version)
    except ValueError as e:
        if version is None:
            raise
        if pgfetch.offline():
            raise ValueError(f"{e}; not fetched (BENCHLIB_OFFLINE is set): {pgfetch.offline_hint(version)}") from None
        if fetching.is_planning():   # a dry run fetches nothing: it says what it would fetch
            if version in pgfetch.MAJORS:
                pgfetch.would_fetch(version)
                return None
            raise ValueError(f"{e}; PyPI's {pgfetch.PACKAGE} has had majors "
                             f"{pgfetch.MAJORS[0]}–{pgfetch.MAJORS[-1]}") from None
        try:
            pgfetch.fetch(version)
        except ValueError as f:
            raise ValueError(f"{e}; fetching it failed ({f}): {pgfetch.offline_hint(version)}") from None
        _version_of.cache_clear()
        return find(version)


@functools.lru_cache(maxsize=None)
def server_user() -> str | None:
    """The user a server runs as: None (benchlib's own) unless benchlib is root."""
    if os.geteuid() != 0:
        return None
    import pwd
    for name in USERS:
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise ValueError("benchlib runs as root and PostgreSQL will not: make a system user "
                     f"{USERS[0]} (useradd {USERS[0]})")


def as_server() -> dict:
    """subprocess' keywords that run a command as the server's user, with its own group
    alone (root's group kept would make a folder of mode 0701 closed to it); {} unless
    benchlib is root."""
    user = server_user()
    if user is None:
        return {}
    import pwd
    return {"user": user, "group": pwd.getpwnam(user).pw_gid, "extra_groups": []}


def hand_over(path: Path) -> None:
    """``path`` (a folder benchlib made) owned by the server's user, and every folder above
    it traversable to it; nothing to do unless benchlib is root."""
    user = server_user()
    if user is None:
        return
    import pwd
    pw = pwd.getpwnam(user)
    for root, dirs, files in os.walk(path):
        for n in (root, *(os.path.join(root, f) for f in dirs + files)):
            os.chown(n, pw.pw_uid, pw.pw_gid)
    for up in Path(path).resolve().parents:
        mode = up.stat().st_mode
        if not mode & stat.S_IXOTH:
            up.chmod(mode | stat.S_IXOTH)


def readable(binaries: Binaries) -> None:
    """The binaries' folders usable by the server's user (pgserver's bundled ones sit in a
    virtual environment that may be root's alone)."""
    if server_user() is None:
        return
    top = binaries.bin_dir.parent
    for up in top.resolve().parents:
        if not up.stat().st_mode & stat.S_IXOTH:
            up.chmod(up.stat().st_mode | stat.S_IXOTH)
    for root, dirs, files in os.walk(top):
        for n in (root, *(os.path.join(root, d) for d in dirs)):
            if not os.stat(n).st_mode & stat.S_IXOTH:
                os.chmod(n, os.stat(n).st_mode | stat.S_IROTH | stat.S_IXOTH)
        for f in files:
            p = os.path.join(root, f)
            if not os.stat(p).st_mode & stat.S_IROTH:
                os.chmod(p, os.stat(p).st_mode | stat.S_IROTH)


def conf_value(value) -> str:
    """A setting's value as ``postgresql.conf`` and ``-c`` take it (booleans as on/off)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def server_message(text: str) -> str:
    """The server's FATAL (or ERROR) line of ``text``, without its log prefix (its LOG
    line of a port another process holds, rather than the FATAL after it)."""
    for line in text.splitlines():
        if "Address already in use" in line:
            return re.sub(r"^.*?\b(?:LOG|FATAL):\s+", "", line).strip()
    for line in text.splitlines():
        m = re.search(r"\b(?:FATAL|ERROR|PANIC|error):\s+(.*)", line)
        if m:
            return m.group(1).strip()
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return lines[-1] if lines else "no message"


@functools.lru_cache(maxsize=256)
def _check(bin_dir: str, version: str, settings: tuple) -> str | None:
    binaries = Binaries(Path(bin_dir), int(version.split(".")[0]), version)
    if not settings:
        return None
    readable(binaries)
    with tempfile.TemporaryDirectory(prefix="benchlib-pgconf-") as d:
        (Path(d) / "postgresql.conf").write_text("")
        hand_over(Path(d))
        args = [binaries.exe("postgres"), "-D", d, "-C", settings[0][0]]
        for name, value in settings:
            args += ["-c", f"{name}={value}"]
        try:
            res = subprocess.run(args, capture_output=True, text=True, timeout=30, **as_server())
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"{binaries.exe('postgres')} did not answer: {e}"
    return None if res.returncode == 0 else server_message(res.stderr)


def check_settings(binaries: Binaries, settings: dict) -> None:
    """ValueError (the server's own line) for a setting the server does not know or a value
    it refuses."""
    for name in settings:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", str(name)):
            raise ValueError(f"settings: {name!r} is not a setting's name")
    pairs = tuple((str(k), conf_value(v)) for k, v in settings.items())
    msg = _check(str(binaries.bin_dir), binaries.version, pairs)
    if msg:
        raise ValueError(f"settings: PostgreSQL {binaries.version} refuses them: {msg}")


def fetch_server(major: int, say=print) -> None:
    """``benchlib fetch-server postgres MAJOR``: the version's binaries here, fetched when
    neither the system nor the cache has them; ValueError (one line) when they cannot be had."""
    try:
        found = find(major)
        say(f"PostgreSQL {major}: {found.version} is here already ({found.bin_dir})")
        return
    except ValueError:
        pass
    pgfetch.fetch(major, say=say)
