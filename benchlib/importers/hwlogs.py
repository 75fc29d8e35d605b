"""Hardware logs of other tools into the ``hw`` table: vmstat, iostat, mpstat, ps.

:func:`read_hw_log` turns one log into rows of :data:`benchlib.schema.HW`, one per
sample interval, ``second`` = 0, 1, 2 … (the interval's index, as the tools were run
at 1 s); ``ts`` is the time the tool printed for the sample (the end of its interval)
where the log has one, read as UTC unless the log gives an offset (the tools print
local time). ``run_id``/``step`` stay NA: the caller fills them.
:func:`merge_hw_logs` lines up several logs of the same run into one table.

What each log gives (units as in :mod:`benchlib.schema`):

- ``vmstat 1`` (also -w, -t, -a): cpu_user = us (which includes nice), cpu_sys = sy,
  cpu_iowait = wa, cpu_idle = id, ctx_switches = cs. The first line (averages since
  boot) is dropped. bi/bo are left out: iostat gives the disks.
- ``iostat -x`` / ``-dx`` / plain ``iostat`` of sysstat 9 to 12, with -k, -m (MB/s →
  KiB/s) or sectors (rsec/s → KiB/s), with or without -t: disk_reads = r/s,
  disk_writes = w/s, disk_read_kb = rkB/s, disk_write_kb = wkB/s, summed over the
  devices ``devices=`` selects (default: whole disks, see
  :func:`benchlib.hw.disks.is_whole_disk`; partitions and dm/md/loop devices would
  count the same I/O twice). The avg-cpu block gives cpu_user = %user + %nice,
  cpu_sys = %system (sysstat includes irq and softirq), cpu_iowait, cpu_idle. The
  first report (since boot) is dropped.
- ``mpstat 1`` (the ``all`` rows; ``Average:`` lines ignored): made to mean what
  vmstat's columns mean: cpu_user = %usr + %nice + %guest + %gnice, cpu_sys = %sys +
  %irq + %soft, cpu_iowait = %iowait, cpu_idle = %idle (steal stays out, as in
  vmstat). mpstat has no since-boot line when run with an interval.
- periodic ``ps -o pid,vsz,rss,cputime,etimes …`` blocks, each starting with the
  header: dbms_vsz_gb / dbms_rss_gb = VSZ / RSS summed (KiB / 1024**2: GB = 2**30
  bytes, as the live sampler), dbms_cpu_s = the increase of TIME summed over the
  processes since the previous block: a pid already seen adds its increase, a new pid
  adds all its TIME when ELAPSED shows it started within the interval (a backend
  forked mid-interval), otherwise only sets its baseline; a pid that vanished loses
  its CPU since the last block (ps cannot see it). TIME has 1 s resolution, so
  per-row values are coarse; their sum over a step is right to about a second per
  process. The first block is the baseline (no row); when ELAPSED is present it
  places the blocks in time (the loop `ps; sleep 1` drifts): a block that covers 2 s
  makes 2 rows, the CPU split evenly, VSZ/RSS on the last.

A truncated final line / report / block (cut off mid-write) is dropped; anything else
that does not parse raises :class:`ImportFormatError` with the line number. A log
taken with ``-y`` (no since-boot report) loses its first real sample: the content
does not tell.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from .. import schema
from ..hw.disks import disk_selector
from ..schema import conform_hw
from .base import ImportFormatError
from .hwlog_formats import KINDS, SIGNATURE, detect, parse
from .text import read_text

_CPU_COLS = ("cpu_user", "cpu_sys", "cpu_iowait", "cpu_idle")


def read_hw_log(path: str | Path, kind: str | None = None,
                devices: Iterable[str] | Callable[[str], bool] | None = None) -> pd.DataFrame:
    """One log → hw rows (conformed; ``df.attrs["hw_kind"]`` names the tool).

    ``kind``: "vmstat" | "iostat" | "mpstat" | "ps", or None to tell from the content.
    ``devices`` (iostat only): None = whole disks, or the device names to sum, or a
    predicate on the name.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    text = read_text(path)   # a regular file of a bounded size
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    if not lines:
        raise ImportFormatError(path, 1, f"expected {kind or 'vmstat, iostat, mpstat or ps'} output, "
                                "found an empty file")
    found, at = detect(lines)
    if kind is None and found is None:
        raise ImportFormatError(path, at, "expected output of vmstat, iostat, mpstat or ps")
    if kind is not None and found != kind:
        seen = f", found what looks like {found} output" if found else ""
        raise ImportFormatError(path, at, f"expected {kind} output: {SIGNATURE[kind]}{seen}")
    kind = kind or found
    rows = parse(kind, path, lines, not text.endswith("\n"), disk_selector(devices))
    df = pd.DataFrame(rows)
    if len(df) and "second" not in df:
        df.insert(0, "second", range(len(df)))
    out = conform_hw(df)
    out.attrs["hw_kind"] = kind
    return out


def merge_hw_logs(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Logs of one run (tools started together) → one hw table.

    Rows line up by ``second``; when every log has timestamps, each log is first
    shifted by its start time (whole seconds) so logs started at different times
    still line up. Each column comes from one log only, never mixed row by row: CPU
    from vmstat, else mpstat, else iostat's avg-cpu (the schema's CPU is vmstat's);
    context switches from vmstat; disks from iostat; the DBMS from ps. A figure no
    log has stays NA.
    """
    order = {"vmstat": 0, "mpstat": 1, "iostat": 2, "ps": 3}
    frames = sorted((f for f in frames if f is not None and len(f)),
                    key=lambda f: order.get(f.attrs.get("hw_kind"), 9))
    if not frames:
        return conform_hw(None)
    frames = [f.set_index(f["second"].astype("int64")) for f in frames]
    if all(f["ts"].notna().all() for f in frames):
        t0 = min(f["ts"].iloc[0] for f in frames)
        frames = [f.set_axis(f.index + round((f["ts"].iloc[0] - t0).total_seconds()))
                  for f in frames]
    seconds = sorted(set().union(*(f.index for f in frames)))
    out = pd.DataFrame({"second": seconds}, index=seconds)
    for col in schema.HW:
        if col in ("run_id", "step", "second"):
            continue
        src = next((f for f in frames if f[col].notna().any()), None)
        if col in _CPU_COLS:   # the four CPU figures always from the same tool
            src = next((f for f in frames if f["cpu_idle"].notna().any()), None)
        if src is not None:
            out[col] = src[col].reindex(seconds)
    return conform_hw(out.reset_index(drop=True))
