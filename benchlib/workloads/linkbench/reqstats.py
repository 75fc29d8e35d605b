"""One requester's own counts and statistics, as LinkBenchRequest keeps them for its
log lines, measured by the requester itself as Java's thread does:

- its requests (``requestsDone``: each request tried, failed too), MULTIGET_LINK's links
  found and not found (``numfound``: a call that found some adds those; one that found
  none adds all it asked for, ``numnotfound``), its history queries (GET_LINKS_LIST
  paging back into a list's tail) of its GET_LINKS_LIST calls;
- SampledStats per operation: each request's time around its statements (µs, as Java's
  ``endtime - starttime``) and RANGE_SIZE, the links each GET_LINKS_LIST returned: every
  call counted, at most MAXSAMPLES values kept per display window, each call as likely to
  be kept; a window's lines (``ThreadID = i OP totalOps = … 99% = … max = …``, or
  ``totalops = … samples = 0`` when none fell in it) made when it closes, every
  ``displayfreq`` s and at the requester's last request;
- ``Requester #i n/N requests done``: its count each time ``progressfreq`` s have passed;
- a warmup (``warmup_time``): its requests neither counted nor kept, as Java's
  (``recordStats`` false, ``warmupRequests``), its progress lines ``warming up``, the
  windows and progress starting again when it ends (``warmup finished``).

The client process hands them to the controller with its results
(``ClientResult.thread_counters``); linkbench.log prints them per requester (log.py).
"""
from __future__ import annotations

import random
import time

import numpy as np

MAXSAMPLES = 10000   # SampledStats' samples per operation (maxsamples)
RANGE_SIZE = "RANGE_SIZE"
# LinkBenchRequest.displayStats' operations, in its order (DELETE_LINK is not among them)
DISPLAYED = ("MULTIGET_LINK", "GET_LINKS_LIST", "COUNT_LINK", "UPDATE_LINK", "ADD_LINK",
             RANGE_SIZE, "ADD_NODE", "UPDATE_NODE", "DELETE_NODE", "GET_NODE")


def java_decimal(x: float, places: int) -> str:
    """Java's DecimalFormat("#.##…"): at most ``places`` decimals, no trailing zeros."""
    s = f"{x:.{places}f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


def stats_line(op: str, total: int, errors: int, ops: int, dur_ms: int, kept) -> str:
    """SampledStats.displayStats' line: an operation's calls and errors so far, its calls
    since the previous display and the values kept of them (µs or links, Java's longs)."""
    a = np.sort(np.asarray(kept)).astype(np.int64)
    n = len(a)
    head = (f"{op} total{'Ops' if n else 'ops'} = {total} totalErrors = {errors} ops = {ops} "
            f"sampleDuration = {dur_ms}ms samples = {n}")
    if not n:
        return head
    pcts = zip(("25%", "50%", "75%", "90%", "95%", "99%"),
               (a[n // 4], a[n // 2], a[-1 - n // 4], a[-1 - n // 10], a[-1 - n // 20], a[-1 - n // 100]))
    return (f"{head} mean = {java_decimal(float(a.mean()), 2)} min = {a[0]} "
            + " ".join(f"{k} = {v}" for k, v in pcts) + f" max = {a[-1]}")


class Sampled:
    """SampledStats of one operation: its calls and errors, and this window's calls and
    kept values (the first MAXSAMPLES, then the k-th replaces a random one with
    probability MAXSAMPLES / k)."""
    __slots__ = ("total", "errors", "since", "kept")

    def __init__(self):
        self.total = self.errors = self.since = 0
        self.kept: list[int] = []

    def add(self, value: int, error: bool, rng: random.Random) -> None:
        self.total += 1
        self.errors += error
        i, self.since = self.since, self.since + 1
        if i < MAXSAMPLES:
            self.kept.append(value)
        elif rng.random() < MAXSAMPLES / i:
            self.kept[rng.randrange(MAXSAMPLES)] = value

    def close(self, op: str, thread: int, dur_ms: int) -> str:
        line = f"ThreadID = {thread} " + stats_line(op, self.total, self.errors, self.since, dur_ms, self.kept)
        self.since, self.kept = 0, []
        return line


MAX_ERROR_LINES = 100   # a requester's error lines kept (Java logs each: a log of a run
#                         that fails its every request stays readable)


class RequesterStats:
    def __init__(self, thread: int, seed: int, progress_s: float = 300.0, display_s: float = 60.0,
                 warmup_s: float = 0.0):
        self.thread = thread
        self.requests = self.found = self.not_found = 0
        self.history = self.lists = 0
        self.rng = random.Random(seed)   # its own: the request stream's draws stay as they were
        self.ops = {op: Sampled() for op in DISPLAYED}
        self.progress_ns, self.display_ns = int(progress_s * 1e9), int(display_s * 1e9)
        self.wall0, self.perf0 = time.time(), time.perf_counter_ns()
        self.first_ns = self.last_ns = self.updated_ns = self.shown_ns = self.check_ns = None
        self.warmup_ns, self.warm = int(warmup_s * 1e9), warmup_s <= 0
        self.warmup_requests = 0
        self.progress: list[tuple[float, int]] = []     # (wall time, requests done)
        self.warmup: list[tuple[float, int, int]] = []   # (wall time, warmup requests, its seconds)
        self.warmed: tuple[float, int] | None = None     # (wall time, warmup requests) at its end
        self.windows: list[tuple[float, list[str]]] = []   # (wall time, the window's lines)
        self.errors: list[tuple[float, str, str]] = []     # (wall time, op, the server's message)
        self.errors_unsaid = 0   # past MAX_ERROR_LINES: counted, not kept
        self.finished = False

    def wall(self, ns: int) -> float:
        return self.wall0 + (ns - self.perf0) / 1e9

    def done(self, op: str, t0_ns: int, t1_ns: int, error: bool) -> None:
        """A request ended: counted, its time kept (an operation Java does not display
        is counted only), the progress and display windows checked as Java's loop does."""
        if self.first_ns is None:
            self.first_ns = self.updated_ns = self.shown_ns = t0_ns
            self.check_ns = t0_ns + min(self.progress_ns, self.display_ns)
        self.last_ns = t1_ns
        if not self.warm:
            self._warming(t1_ns)
            return
        self.requests += 1
        if (s := self.ops.get(op)) is not None:
            s.add((t1_ns - t0_ns) // 1000, error, self.rng)
        if t1_ns >= self.check_ns:
            if t1_ns > self.updated_ns + self.progress_ns:
                self.progress.append((self.wall(t1_ns), self.requests))
                self.updated_ns = t1_ns
            if t1_ns >= self.shown_ns + self.display_ns:
                self._display(t1_ns)
            self.check_ns = min(self.updated_ns + self.progress_ns + 1, self.shown_ns + self.display_ns)

    def _warming(self, now_ns: int) -> None:
        """A warmup request: counted as one, its progress line each progressfreq s; the
        measured part starts when warmup_time has passed since the first request."""
        self.warmup_requests += 1
        if now_ns > self.updated_ns + self.progress_ns:
            self.warmup.append((self.wall(now_ns), self.warmup_requests, (now_ns - self.first_ns) // 10**9))
            self.updated_ns = now_ns
        if now_ns >= self.first_ns + self.warmup_ns:
            self.warm, self.warmed = True, (self.wall(now_ns), self.warmup_requests)
            self.updated_ns = self.shown_ns = now_ns
            self.check_ns = now_ns + min(self.progress_ns, self.display_ns)

    def _display(self, now_ns: int) -> None:
        ms = (now_ns - self.shown_ns) // 1_000_000
        self.windows.append((self.wall(now_ns), [s.close(op, self.thread, ms) for op, s in self.ops.items()]))
        self.shown_ns = now_ns

    def multiget(self, asked: int, found: int) -> None:   # warmup's too, as Java's numfound
        if found:
            self.found += found
        else:
            self.not_found += asked

    def links_list(self, returned: int, history: bool) -> None:
        self.history += history   # numHistoryQueries: warmup's too
        if self.warm:   # Java's recordStats: the warmup was over when this request began
            self.lists += 1
            self.ops[RANGE_SIZE].add(returned, False, self.rng)

    def error(self, op: str, t1_ns: int, message: str) -> None:
        """A failed request's message (LinkBenchRequest's ``oneRequest error: OP error …``
        line): its first line, the first MAX_ERROR_LINES of them kept."""
        if len(self.errors) < MAX_ERROR_LINES:
            lines = str(message).strip().splitlines()
            self.errors.append((self.wall(t1_ns), op, lines[0] if lines else ""))
        else:
            self.errors_unsaid += 1

    def as_dict(self) -> dict:
        """The counts, the progress and display windows, the last one closed at the
        requester's last request (Java's final displayStats)."""
        if not self.finished and self.first_ns is not None and self.warm:
            self._display(self.last_ns)
        self.finished = True
        rs = self.ops[RANGE_SIZE]
        return {"thread": self.thread, "requests": self.requests, "found": self.found,
                "not_found": self.not_found, "history_queries": self.history,
                "get_links_list": self.lists, "range_size_calls": rs.total,
                "started": self.wall(self.first_ns) if self.first_ns is not None else None,
                "measured": self.warmed[0] if self.warmed else (
                    self.wall(self.first_ns) if self.first_ns is not None else None),
                "ended": self.wall(self.last_ns) if self.last_ns is not None else None,
                "progress": self.progress, "windows": self.windows,
                "warmup": self.warmup, "warmed": self.warmed,
                "errors": self.errors, "errors_unsaid": self.errors_unsaid}
