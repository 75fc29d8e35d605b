"""The formats of the hardware logs :mod:`.hwlogs` reads: how each tool's log is
told from the others and parsed, line by line, into rows of hw figures (see
:mod:`.hwlogs` for what each figure is made of). A row has the tool's time stamp
``ts`` where the log has one, and ``second`` only where the samples are placed in
time (ps with ELAPSED); :func:`parse` is the one entry.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import pandas as pd

from .base import ImportFormatError
from .text import number_at

KINDS = ("vmstat", "iostat", "mpstat", "ps")
SIGNATURE = {
    "vmstat": "a vmstat header ' r  b  swpd …  us sy id wa'",
    "iostat": "iostat reports ('avg-cpu:' / 'Device …' headers)",
    "mpstat": "an mpstat header 'HH:MM:SS CPU %usr … %idle'",
    "ps": "a ps header 'PID VSZ RSS TIME ELAPSED' before each sample",
}
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})|(\d{2})/(\d{2})/(\d{2,4})")
_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}|\d{2}/\d{2}/\d{2,4})[T ](\d{1,2}:\d{2}:\d{2})(?: ?([AP]M))?"
                    r"\s*([+-]\d{2}:?\d{2}|Z|UTC)?$")
_TIME = re.compile(r"^\d{1,2}:\d{2}:\d{2}$")


def parse(kind: str, path, lines: list[tuple[int, str]], cut: bool,
          select: Callable[[str], bool]) -> list[dict]:
    """The rows of one log of ``kind``: its non-blank ``(line number, line)``s, ``cut``
    when the file does not end with a newline (the tool was stopped mid-write);
    ``select`` picks iostat's devices."""
    src = _Source(path, lines, cut)
    if kind == "iostat":
        return _iostat(src, select)
    return {"vmstat": _vmstat, "mpstat": _mpstat, "ps": _ps}[kind](src)


# ---------------------------------------------------------------- the source file

class _Source:
    """The non-blank lines of a log and how to fail on one of them."""

    def __init__(self, path, lines: list[tuple[int, str]], cut: bool):
        self.path, self.lines, self.cut = path, lines, cut
        self.last = lines[-1][0]   # line number of the last non-blank line

    def fail(self, lineno: int, expected: str):
        raise ImportFormatError(self.path, lineno, expected)

    def is_tail(self, lineno: int) -> bool:
        """A bad line that is the file's last: a sample cut off by the tool's end."""
        return lineno == self.last


def detect(lines) -> tuple[str | None, int]:
    """The tool a log's first lines look like (None: none of them) and the line looked at."""
    for lineno, ln in lines[:12]:
        toks = ln.split()
        if ln.startswith(("procs", "--procs--")) or toks[:2] == ["r", "b"]:
            return "vmstat", lineno
        if ln.startswith("avg-cpu:") or toks[0] in ("Device", "Device:"):
            return "iostat", lineno
        if "CPU" in toks and "%idle" in toks:
            return "mpstat", lineno
        if "PID" in toks and ({"VSZ", "RSS", "TIME", "ELAPSED"} & set(toks)):
            return "ps", lineno
    return None, lines[0][0]


def _stamp(date: str, clock: str, ampm: str | None = None, zone: str | None = None):
    """A sysstat/vmstat date and time → Timestamp; read as UTC unless ``zone`` is an
    offset (+0100): a zone name (CET) cannot be resolved reliably."""
    m = _DATE.fullmatch(date)
    if not m:
        return None
    if m.group(1):
        y, mo, d = (int(x) for x in m.group(1).split("-"))
    else:   # sysstat in the C/en_US locale prints MM/DD/YY
        mo, d, y = int(m.group(2)), int(m.group(3)), int(m.group(4))
        y += 2000 if y < 100 else 0
    h, mi, s = (int(x) for x in clock.split(":"))
    if ampm:
        h = h % 12 + (12 if ampm == "PM" else 0)
    ts = pd.Timestamp(year=y, month=mo, day=d, hour=h, minute=mi, second=s)
    if zone and re.fullmatch(r"[+-]\d{2}:?\d{2}", zone):
        return ts.tz_localize(pd.Timestamp(f"2000-01-01T00:00{zone}").tz).tz_convert("UTC")
    return ts.tz_localize("UTC")


def _sysstat_date(src: _Source) -> str | None:
    """The date of sysstat's first line 'Linux … (host) \\t11/22/26 \\t_x86_64_ …'."""
    ln = src.lines[0][1]
    if ln.startswith("Linux"):
        for tok in ln.split():
            if _DATE.fullmatch(tok):
                return tok
    return None


# ---------------------------------------------------------------- vmstat

def _vmstat(src: _Source) -> list[dict]:
    names, stamped, rows, first = None, False, [], True
    for lineno, ln in src.lines:
        toks = ln.split()
        if ln.startswith(("procs", "--procs--")):
            stamped = "timestamp" in ln
            continue
        if toks[:2] == ["r", "b"]:
            names = toks[:-1] if stamped else toks    # -t: the last label is the zone
            zone = toks[-1] if stamped else None
            if not {"us", "sy", "id", "wa", "cs"} <= set(names):
                src.fail(lineno, "expected vmstat columns us sy id wa cs")
            continue
        if names is None:
            src.fail(lineno, f"expected {SIGNATURE['vmstat']}")
        want = len(names) + (2 if stamped else 0)
        if len(toks) != want or (src.cut and lineno == src.last):
            if src.is_tail(lineno):
                break
            src.fail(lineno, f"expected {want} fields as in the vmstat header, found {len(toks)}")
        v = dict(zip(names, (number_at(src.path, lineno, t) for t in toks[:len(names)])))
        if first:            # averages since boot
            first = False
            continue
        rows.append({"ts": _stamp(toks[-2], toks[-1], zone=zone) if stamped else None,
                     "cpu_user": v["us"], "cpu_sys": v["sy"], "cpu_iowait": v["wa"],
                     "cpu_idle": v["id"], "ctx_switches": v["cs"]})
    return rows


# ---------------------------------------------------------------- iostat

# column → (hw column, factor to the schema's unit)
_IOSTAT_DEV = {
    "r/s": ("disk_reads", 1), "w/s": ("disk_writes", 1),
    "rkb/s": ("disk_read_kb", 1), "rmb/s": ("disk_read_kb", 1024), "rsec/s": ("disk_read_kb", 0.5),
    "kb_read/s": ("disk_read_kb", 1), "mb_read/s": ("disk_read_kb", 1024),
    "blk_read/s": ("disk_read_kb", 0.5),
    "wkb/s": ("disk_write_kb", 1), "wmb/s": ("disk_write_kb", 1024), "wsec/s": ("disk_write_kb", 0.5),
    "kb_wrtn/s": ("disk_write_kb", 1), "mb_wrtn/s": ("disk_write_kb", 1024),
    "blk_wrtn/s": ("disk_write_kb", 0.5),
}


def _iostat(src: _Source, select: Callable[[str], bool]) -> list[dict]:
    reports = _iostat_reports(src)
    if not reports:
        return []
    if len(reports) > 1 and (reports[-1].get("cut") or _shape(reports[-1]) != _shape(reports[0])):
        reports.pop()     # the last report was cut off
    rows, used = [], set()
    for rep in reports[1:]:   # the first report holds the averages since boot
        row = {"ts": rep["ts"]}
        if rep["cpu"]:
            c = rep["cpu"]
            if "%idle" not in c:
                src.fail(rep["line"], "expected %user %nice %system %iowait %idle in avg-cpu")
            row.update(cpu_user=c.get("%user", 0) + c.get("%nice", 0), cpu_sys=c.get("%system"),
                       cpu_iowait=c.get("%iowait"), cpu_idle=c["%idle"])
        if rep["dev"]:
            chosen = [d for d in rep["dev"] if select(d)]
            used.update(chosen)
            for name, (col, factor) in _IOSTAT_DEV.items():
                if chosen and name in next(iter(rep["dev"].values())):
                    row[col] = sum(rep["dev"][d][name] for d in chosen) * factor
        rows.append(row)
    all_devs = {d for rep in reports for d in (rep["dev"] or {})}
    if all_devs and not used:
        src.fail(reports[0]["line"],
                 f"expected the selected devices among {', '.join(sorted(all_devs))}: pass devices=[...]")
    return rows


def _iostat_reports(src: _Source) -> list[dict]:
    """The reports of an iostat log: {"ts", "cpu": {figure: value} | None, "dev":
    {device: {figure: value}} | None, "line"}; a report cut off at the file's end is
    marked "cut"."""
    reports: list[dict] = []
    cur, state, cpu_names, dev_names = None, None, [], []

    def new(ts=None):
        reports.append({"ts": ts, "cpu": None, "dev": None, "line": lineno})
        return reports[-1]

    for lineno, ln in src.lines:
        toks = ln.split()
        if lineno == src.lines[0][0] and ln.startswith("Linux"):
            continue
        m = _STAMP.match(ln.strip())
        try:
            if m:
                cur, state = new(_stamp(m.group(1), m.group(2), m.group(3), m.group(4))), None
            elif ln.startswith("avg-cpu:"):
                if cur is None or cur["cpu"] is not None or cur["dev"] is not None:
                    cur = new()
                cpu_names, state = toks[1:], "cpu"
            elif toks[0] in ("Device", "Device:"):
                if cur is None or cur["dev"] is not None:
                    cur = new()
                cur["dev"], dev_names, state = {}, [n.lower() for n in toks[1:]], "dev"
            elif state == "cpu":
                if len(toks) != len(cpu_names) or (src.cut and lineno == src.last):
                    raise ValueError(f"expected {len(cpu_names)} avg-cpu figures")
                cur["cpu"], state = dict(zip(cpu_names, (number_at(src.path, lineno, t) for t in toks))), None
            elif state == "dev":
                if len(toks) != len(dev_names) + 1 or (src.cut and lineno == src.last):
                    raise ValueError(f"expected a device name and {len(dev_names)} figures")
                vals = [number_at(src.path, lineno, t) for t in toks[1:]]
                cur["dev"][toks[0]] = dict(zip(dev_names, vals))
            else:
                raise ValueError(f"expected {SIGNATURE['iostat']} or a report's figures")
        except ValueError as e:
            if src.is_tail(lineno) and reports:
                reports[-1]["cut"] = True
                break
            src.fail(lineno, str(e))
    return reports


def _shape(rep: dict) -> tuple:
    return rep["cpu"] is not None, len(rep["dev"] or {})


# ---------------------------------------------------------------- mpstat

def _mpstat(src: _Source) -> list[dict]:
    date = _sysstat_date(src)
    names, rows, prev = None, [], None
    for lineno, ln in src.lines:
        toks = ln.split()
        if lineno == src.lines[0][0] and ln.startswith("Linux"):
            continue
        if toks[0].startswith("Average"):
            continue
        ampm = toks[1] if len(toks) > 1 and toks[1] in ("AM", "PM") else None
        body = toks[2:] if ampm else toks[1:]
        if not _TIME.match(toks[0]):
            if src.is_tail(lineno):
                break
            src.fail(lineno, f"expected {SIGNATURE['mpstat']} or an 'HH:MM:SS all …' line")
        if body and body[0] == "CPU":
            names = body[1:]
            continue
        if names is None:
            src.fail(lineno, f"expected {SIGNATURE['mpstat']}")
        if not body or body[0] != "all" or "%idle" not in names:
            continue     # per-CPU rows (-P ALL) or other blocks (-I)
        if len(body) != len(names) + 1 or (src.cut and lineno == src.last):
            if src.is_tail(lineno):
                break
            src.fail(lineno, f"expected 'all' and {len(names)} figures as in the mpstat header")
        v = dict(zip(names, (number_at(src.path, lineno, t) for t in body[1:])))
        ts = _stamp(date, toks[0], ampm) if date else None
        if ts is not None and prev is not None:
            while ts < prev:      # the clock passed midnight
                ts += pd.Timedelta(days=1)
        prev = ts
        g = v.get
        rows.append({"ts": ts,
                     "cpu_user": g("%usr", g("%user", 0)) + g("%nice", 0) + g("%guest", 0) + g("%gnice", 0),
                     "cpu_sys": g("%sys", 0) + g("%irq", 0) + g("%soft", 0),
                     "cpu_iowait": g("%iowait"), "cpu_idle": v["%idle"]})
    return rows


# ---------------------------------------------------------------- ps

def _clock_s(s: str) -> int:
    """ps TIME / ELAPSED: [[DD-]HH:]MM:SS or plain seconds."""
    days, _, rest = s.rpartition("-")
    secs = 0
    for part in rest.split(":"):
        secs = secs * 60 + int(part)
    return secs + int(days or 0) * 86400


def _ps(src: _Source) -> list[dict]:
    blocks: list[tuple[int, dict]] = []     # (header line, {pid: (vsz, rss, cpu, etime)})
    names = None
    for lineno, ln in src.lines:
        toks = ln.split()
        if "PID" in toks:
            names = toks
            blocks.append((lineno, {}))
            continue
        if names is None:
            src.fail(lineno, f"expected {SIGNATURE['ps']}")
        try:
            if len(toks) < len(names) - (1 if names[-1] in ("COMMAND", "CMD", "ARGS") else 0):
                raise ValueError
            v = dict(zip(names, toks))
            blocks[-1][1][int(v["PID"])] = (
                int(v["VSZ"]) if "VSZ" in v else None, int(v["RSS"]) if "RSS" in v else None,
                _clock_s(v["TIME"]) if "TIME" in v else None,
                _clock_s(v["ELAPSED"]) if "ELAPSED" in v else None)
        except ValueError:
            if src.is_tail(lineno):
                blocks.pop()
                break
            src.fail(lineno, "expected a process line 'PID VSZ RSS [DD-]HH:MM:SS ELAPSED' "
                             "under the ps header")
    else:
        if src.cut and blocks:
            blocks.pop()      # the last block may have lost processes with its last line
    rows: list[dict] = []
    for (_, prev), (lineno, cur) in itertools.pairwise(blocks):
        span = _span(prev, cur)
        cpu = 0.0 if cur else None
        for pid, (_, _, t, age) in cur.items():
            if t is None:
                cpu = None
                break
            before = prev.get(pid)
            if before is not None and before[2] <= t:
                cpu += t - before[2]
            elif age is None or age <= max(span, 1):
                cpu += t      # started within the interval (or no ELAPSED to tell)
        vsz = sum(p[0] for p in cur.values()) if cur and None not in (p[0] for p in cur.values()) else None
        rss = sum(p[1] for p in cur.values()) if cur and None not in (p[1] for p in cur.values()) else None
        last = {"dbms_vsz_gb": None if vsz is None else vsz / 1024 ** 2,
                "dbms_rss_gb": None if rss is None else rss / 1024 ** 2}
        if span == 0 and rows:    # two blocks in one second: one row
            rows[-1].update(last, dbms_cpu_s=_plus(rows[-1]["dbms_cpu_s"], cpu))
            continue
        n = max(span, 1)
        for i in range(n):
            rows.append({"dbms_cpu_s": None if cpu is None else cpu / n,
                         **(last if i == n - 1 else {})})
    return rows


def _span(prev: dict, cur: dict) -> int:
    """Seconds between two blocks from the ELAPSED of the oldest process in both
    (1 when there is none)."""
    both = [p for p in cur if p in prev and cur[p][3] is not None and prev[p][3] is not None]
    if not both:
        return 1
    oldest = max(both, key=lambda p: cur[p][3])
    return cur[oldest][3] - prev[oldest][3]


def _plus(a, b):
    return None if a is None or b is None else a + b
