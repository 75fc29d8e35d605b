"""The DBMS's cgroup: the CPU a server's processes spent, those that exited included.

A process's CPU stays in the counters of the cgroup it ran in after it exits, so a
cgroup's reading sees what sampling processes cannot: a backend that lived shorter than
a sample (a loader's connection), a process reaped by one the sampler does not track.
Two kinds are read, whichever the host has:

- cgroup v1's ``cpuacct`` controller: ``cpuacct.usage`` (nanoseconds, user + system);
- cgroup v2: ``cpu.stat``'s ``usage_usec`` (present in every v2 cgroup, with or without
  the cpu controller enabled).

Where the cgroup comes from:

- :func:`make` — a cgroup of its own for a server benchlib starts (embedded and
  provisioned servers), under ``benchlib/`` of the first writable hierarchy; the server's
  process tree is moved into it once it runs (:meth:`CpuCgroup.adopt`): every process it
  forks afterwards is born there. None when the host allows none (not root, no hierarchy
  mounted): the sampler then counts the processes;
- :func:`of_process` — the cgroup a server already runs in (a systemd unit's, a
  container's), when it is not the hierarchy's root (the root is the whole host);
- :func:`at` — a path the user names (``hw.dbms_cgroup``).
"""
from __future__ import annotations

import itertools
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

MOUNTS = Path("/proc/self/mounts")
_made = itertools.count()


@dataclass(frozen=True)
class CpuCgroup:
    """A cgroup directory whose CPU can be read."""

    path: Path
    version: int          # 1: cpuacct.usage; 2: cpu.stat usage_usec

    def cpu_s(self) -> float | None:
        """The CPU seconds its processes spent since it was made (None: unreadable, gone)."""
        try:
            if self.version == 1:
                return int((self.path / "cpuacct.usage").read_text()) / 1e9
            for line in (self.path / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
        except (OSError, ValueError):
            return None
        return None

    def pids(self) -> set[int]:
        try:
            return {int(p) for p in (self.path / "cgroup.procs").read_text().split()}
        except (OSError, ValueError):
            return set()

    def adopt(self, tree) -> bool:
        """Move the processes ``tree()`` lists (a server's tree, now) into this cgroup,
        again until none is left outside (a process forked meanwhile); False if it
        could not."""
        for _ in range(5):
            left = [p for p in (tree() or []) if p not in self.pids()]
            if not left:
                return True
            for pid in left:
                try:
                    (self.path / "cgroup.procs").write_text(f"{pid}\n")
                except ProcessLookupError:
                    continue                  # exited meanwhile
                except OSError:
                    return False
        return not [p for p in (tree() or []) if p not in self.pids()]

    def remove(self, wait_s: float = 2.0) -> None:
        """The cgroup gone (after its server stopped: a process just reaped may hold it a
        moment); kept where a process is left in it."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline or self.pids():
                    return
                time.sleep(0.05)

    def __str__(self) -> str:
        return f"cgroup {self.path}"

    def id(self) -> str | None:
        """Its path inside its hierarchy (``/benchlib/pg-123-0``, ``/system.slice/x.service``):
        what cAdvisor labels its series with (``id``); None when no mounted hierarchy holds it."""
        for _, mount in _mounts():
            try:
                rel = str(self.path.relative_to(mount))
            except ValueError:
                continue
            return "/" if rel == "." else "/" + rel
        return None


def _mounts() -> list[tuple[int, Path]]:
    """(version, mount point) of the hierarchies that account CPU: v1 cpuacct first."""
    out = []
    try:
        lines = MOUNTS.read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split()
        if len(parts) < 4:
            continue
        if parts[2] == "cgroup" and "cpuacct" in parts[3].split(","):
            out.append((1, Path(parts[1])))
        elif parts[2] == "cgroup2":
            out.append((2, Path(parts[1])))
    return sorted(out, key=lambda m: m[0])


def at(path: str | os.PathLike) -> CpuCgroup:
    """The cgroup at ``path`` (a directory of a mounted hierarchy); ValueError (one line)."""
    p = Path(path)
    if (p / "cpuacct.usage").is_file():
        return CpuCgroup(p, 1)
    if (p / "cpu.stat").is_file():
        return CpuCgroup(p, 2)
    if not p.is_dir():
        raise ValueError(f"hw.dbms_cgroup: {p} is not a directory (a cgroup's, under /sys/fs/cgroup)")
    raise ValueError(f"hw.dbms_cgroup: {p} has neither cpuacct.usage (cgroup v1) nor cpu.stat (v2): "
                     "not a cgroup that accounts CPU")


def of_process(pid: int | None) -> CpuCgroup | None:
    """The cgroup ``pid`` runs in, when it is not its hierarchy's root (the whole host)."""
    if not pid:
        return None
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    where = {}
    for line in lines:
        num, ctrls, rel = line.split(":", 2)
        if num == "0" and not ctrls:
            where[2] = rel
        elif "cpuacct" in ctrls.split(","):
            where[1] = rel
    for version, mount in _mounts():
        rel = where.get(version, "/")
        if rel not in ("/", "") and "(deleted)" not in rel:
            try:
                return at(mount / rel.lstrip("/"))
            except ValueError:
                continue
    return None


def of_server(pids: list[int] | None) -> CpuCgroup | None:
    """The cgroup the server of ``pids`` (its process tree, now) runs in, when every
    process in it is the server's (a systemd unit's, a container's); else None."""
    if not pids:
        return None
    cg = of_process(pids[0])
    return cg if cg is not None and cg.pids() <= set(pids) else None


def make(name: str) -> CpuCgroup | None:
    """A new cgroup ``benchlib/<name>-<pid>-<n>`` under the first hierarchy this process
    may write (v1 cpuacct, else v2); None when there is none."""
    leaf = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60] or "server"
    for version, mount in _mounts():
        _sweep(mount / "benchlib")
        path = mount / "benchlib" / f"{leaf}-{os.getpid()}-{next(_made)}"
        try:
            path.mkdir(parents=True)
            return at(path)
        except (OSError, ValueError):
            continue
    return None


def _sweep(folder: Path) -> None:
    """Empty cgroups a benchlib process that is gone left behind (killed before it stopped
    its server): removed; rmdir takes only an empty one."""
    try:
        kids = list(folder.iterdir())
    except OSError:
        return
    for d in kids:
        m = re.fullmatch(r".*-(\d+)-\d+", d.name)
        if m and d.is_dir() and not os.path.exists(f"/proc/{m.group(1)}"):
            try:
                d.rmdir()
            except OSError:
                pass


def own_cgroup(name: str, tree) -> CpuCgroup | None:
    """A cgroup of its own for a server benchlib started, its process tree (``tree()``,
    the server's pids now) moved in; None (nothing left behind) where the host allows none."""
    cg = make(name)
    if cg is not None and not cg.adopt(tree):
        release(cg, tree)
        return None
    return cg


def release(cg: CpuCgroup | None, tree=None) -> None:
    """``cg`` removed: what is left of ``tree()`` moved back to the parent first (a server
    still running)."""
    if cg is None:
        return
    for pid in (tree() if tree else None) or cg.pids():
        try:
            (cg.path.parent.parent / "cgroup.procs").write_text(f"{pid}\n")
        except OSError:
            pass
    cg.remove()
