"""``linkbench.log``: a run in the maintained Java client's log format (its log4j lines,
``LatencyStats.displayLatencyStats``, LinkBenchDriver's summaries), so that the helper
scripts that parse the client's log, and ``benchlib import linkbench``, read benchlib's
own runs.

Per load step: ``Starting loaders``, the loader threads, LoadProgress's lines
(loadlog.py: the id1s whose counts are written, from the step's seconds), the retry
lines, one line per batch operation, ``LOAD PHASE COMPLETED`` (rows counted) and the
load's mode. Per request loop: a ``Requester thread #i started`` line per requester, a
progress line each ``req_progress_interval`` requests and each ``progressfreq`` seconds
(:class:`Progress`, which the terminal prints too as the step goes, with the
``displayfreq`` statistics: :class:`LiveProgress`), each requester's last lines (its
RANGE_SIZE statistics, ``ThreadID = i total requests = … found = … not found = …
history queries = …``: reqstats.py), the retry lines (``Graph Link total retry``, ``max
retry``, ``other: … add_to_upd, … upd_to_add``, ``Graph Node …``), one line per operation with its
percentiles as the Java client's buckets (latencystats.py: ``p99 = [1,2]ms``), ``max``,
``mean`` and ``threads``, then ``REQUEST PHASE COMPLETED``. Each step's streams' master
seed (``Using random seed …``), ID2Chooser's warning, a failed request's ``oneRequest
error: OP error <the server's message>`` (reqstats.py keeps them) as Java prints them.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from ...schema import is_intended
from .latencystats import OP_ORDER, final_line
from .loadlog import COUNTS, LINKS, LoadProgress, completed_line, mode_line, nodes_done_at, stored_updates
from .reqstats import MAXSAMPLES, stats_line


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def log_line(t: datetime, who: str, msg: str, level: str = "INFO") -> str:
    """One line as the Java client's log4j layout prints it."""
    return f"{level} {_stamp(t)} [{who}]: {msg}"


# what linkbench.log reads of the run's interval rows
SECOND_COLUMNS = ("step", "second", "op", "ops", "interval_s")


def step_seconds(rows: list[dict], count_of, end_s: float | None = None) -> list[tuple]:
    """(seconds from the step's start where each second ends, its length, what
    ``count_of`` counts in it), in order: the step's last second ends with the step."""
    per: dict[int, list] = {}
    for r in rows:
        x = per.setdefault(r["second"], [0.0, 1.0])
        x[0] += count_of(r)
        if r.get("interval_s") is not None and r["interval_s"] == r["interval_s"]:
            x[1] = min(x[1], float(r["interval_s"]))
    out = []
    for sec in sorted(per):
        end = sec + per[sec][1] if end_s is None else min(sec + per[sec][1], max(end_s, 1e-3))
        out.append((end, max(end - sec, 0.0), per[sec][0]))
    return out


class Progress:
    """The request phase's progress lines, fed its seconds in order, as LinkBench prints
    them: a line each time the step's requests pass a multiple of ``req_progress_interval``
    (RequestProgress, counted over all threads) and one each ``progressfreq`` seconds at
    the count reached (where the Java requesters print their own ``Requester #i n/N
    requests done``: benchlib's controller sees its requesters' seconds merged).
    linkbench.log and the terminal both print these; a load's: loadlog.LoadProgress."""

    def __init__(self, p, total: int | None, limit: float):
        self.p, self.total, self.limit = p, total, limit
        self.every = p.req_progress_interval
        self.done, self.mark, self.next_at = 0.0, self.every, p.progressfreq

    def second(self, at: float, length: float, n: float) -> list[tuple[float, str]]:
        """The lines of a second ending ``at`` s into the step, ``length`` s long, that did
        ``n`` more: a count's line at the time it was passed, the second's pace assumed even."""
        self.done, out = self.done + n, []
        while self.done + 1e-6 >= self.mark:
            t = min(max(at - length * (self.done - self.mark) / max(n, 1e-9), at - length), at)
            out.append((t, self.line(int(self.mark), t)))
            self.mark += self.every
        if at >= self.next_at:
            line = self.line(int(self.done), at)
            if not out or out[-1][1] != line:
                out.append((at, line))
            while self.next_at <= at:
                self.next_at += self.p.progressfreq
        return out

    def line(self, done: int, sec: float) -> str:
        sec = max(sec, 1e-3)
        limit = max(self.limit, 1e-9)   # no request count given: the limit's, at this rate
        total = self.total if self.total is not None else max(done, round(done * limit / sec))
        return (f"{done}/{total} requests finished: "
                f"{100 * done / max(total, 1):.1f}% complete at {done / sec:.1f} ops/sec "
                f"{sec:.1f}/{int(self.limit)} secs elapsed: {100 * sec / limit:.1f}% of time "
                "limit used")


def requests_total(step) -> int | None:
    """The step's requests over all requesters, when the loop ends at a count (else None:
    the progress lines project the time limit's at the rate so far). ``requests`` with
    ``run.loop_secs`` set is no count: the loop's seconds win (workloads/stepplan.py), and
    "will do 2500 ops" was printed over a 120-s loop of 358,440."""
    return step.ops_total or None


def time_limit(p, step) -> float:
    """LinkBenchRequest's maxTime: the loop's seconds after its warmup (Java's requesters
    run warmup_time, then maxtime: benchlib's loop is their sum, workload.step_plan)."""
    return (step.loop_secs or p.maxtime + step.warmup_secs) - step.warmup_secs


def requests_of(r: dict) -> float:
    return 0 if is_intended(r["op"]) else r["ops"]


def requester_line(c: dict, ms: int) -> str:
    """LinkBenchRequest's last line of a requester (its counts: reqstats.py)."""
    return (f"ThreadID = {c['thread']} total requests = {c['requests']} requests/second = "
            f"{1000 * c['requests'] // max(ms, 1)} found = {c['found']} not found = {c['not_found']} "
            f"history queries = {c['history_queries']}/{c['get_links_list']}")


class Display:
    """Every ``displayfreq`` seconds, each operation's statistics since the previous
    display, as each Java thread's SampledStats prints its own: at most ``MAXSAMPLES``
    latencies kept per operation (its reservoir: each call as likely to be kept), the
    percentiles theirs. Here one set for all the step's threads, as ``ThreadID = 0``
    (the controller has their seconds merged). From the live rows' latencies: the
    interval rows stored keep no quartiles, so linkbench.log has none of these lines."""

    def __init__(self, every: float):
        self.every, self.next_at, self.last_at = every, every, 0.0
        self.total: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.seen: dict[str, int] = {}          # calls since the previous display
        self.kept: dict[str, np.ndarray] = {}   # the reservoir of their latencies
        self.rng = np.random.default_rng()

    def keep(self, op: str, svc: np.ndarray) -> None:
        """SampledStats.addStats, a second at a time: the first MAXSAMPLES kept, then the
        k-th call replaces a random one with probability MAXSAMPLES / k."""
        have, seen = self.kept.get(op, np.empty(0)), self.seen.get(op, 0)
        room = max(MAXSAMPLES - len(have), 0)
        have, rest = np.concatenate([have, svc[:room]]), svc[room:]
        if len(rest):
            k = seen + room + np.arange(len(rest))
            take = self.rng.random(len(rest)) < MAXSAMPLES / np.maximum(k, 1)
            have[self.rng.integers(0, MAXSAMPLES, int(take.sum()))] = rest[take]
        self.kept[op], self.seen[op] = have, seen + len(svc)

    def second(self, rows: list[dict], at: float, last: bool = False) -> list[tuple[float, str]]:
        """The statistics lines after this second's rows: when a display is due, or at the
        step's ``last`` second (each Java thread displays its own when it ends)."""
        for r in rows:
            if r.get("_svc") is not None and not r.get("_unit"):
                op = r["op"]
                self.total[op] = self.total.get(op, 0) + len(r["_svc"])   # calls, failed too
                self.errors[op] = self.errors.get(op, 0) + r.get("_failed", 0)
                self.keep(op, np.asarray(r["_svc"], dtype=float))
        if at < self.next_at and not last:
            return []
        dur_ms = int(round((at - self.last_at) * 1000))
        ops = [o for o in OP_ORDER if o in self.total] + sorted(set(self.total) - set(OP_ORDER))
        out = [(at, "ThreadID = 0 " + stats_line(op, self.total[op], self.errors[op], self.seen.get(op, 0),
                                                 dur_ms, self.kept.get(op, np.empty(0))))
               for op in ops]
        self.seen, self.kept, self.last_at = {}, {}, at
        while self.next_at <= at:
            self.next_at += self.every
        return out


class LiveProgress:
    """The terminal's lines during a step (``Workload.progress``): fed the controller's
    interval rows as they come, with the seconds since the step started; the progress
    lines are linkbench.log's (a load's from its batches' rows: loadlog.LoadProgress),
    then the statistics every ``displayfreq`` seconds (:class:`Display`)."""

    def __init__(self, prog):
        self.prog, self.display, self.started = prog, Display(prog.p.displayfreq), None
        self.load = isinstance(prog, LoadProgress)

    def __call__(self, rows: list[dict], elapsed_s: float, last: bool = False) -> list[str]:
        if self.started is None:
            self.started = datetime.now(timezone.utc) - timedelta(seconds=elapsed_s)
        out, secs = [], sorted({r["second"] for r in rows})
        for sec in secs:
            mine = [r for r in rows if r["second"] == sec]
            for end, length, n in step_seconds(mine, requests_of):
                if self.load:
                    out += self.prog.update(end, *(sum(r.get("_records", 0) for r in mine if r["op"] == op)
                                                   for op in (LINKS, COUNTS)))
                else:
                    out += self.prog.second(end, length, n)
                out += self.display.second(mine, end, last and sec == secs[-1])
        return [log_line(self.started + timedelta(seconds=at), "Thread-0", msg) for at, msg in out]


class LogWriter:
    """The lines of one run's linkbench.log."""

    def __init__(self, p, facts: dict | None = None):
        self.p, self.lines, self.facts = p, [], facts or {}

    def add(self, t: datetime, who: str, msg: str, level: str = "INFO") -> None:
        self.lines.append(log_line(t, who, msg, level))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n" if self.lines else ""

    def retries(self, o, add_to_upd: int, upd_to_add: int) -> None:
        """LinkStoreSql's retry counters: benchlib retries no statement (a failed one is
        the request's ERROR), so its retries are 0; the add/update switches counted."""
        link = "0 add, 0 update, 0 delete, 0 get, 0 multiget, 0 get_link_list, 0 count, " \
               "0 add_bulk_links, 0 add_bulk_counts"
        node = "0 add, 0 add_bulk, 0 get, 0 update, 0 delete"
        for msg in (f"Graph Link total retry: {link}", f"Graph Link max retry: {link}",
                    f"Graph Link other: {add_to_upd} add_to_upd, {upd_to_add} upd_to_add, 0 commit_failed",
                    f"Graph Node total retry: {node}", f"Graph Node max retry: {node}"):
            self.add(o.ended, "main", msg)

    def finals(self, o, threads: int) -> None:
        rows = {r["op"]: r for r in o.latency_rows if not is_intended(r["op"]) and r.get("hdr")
                and r["count"]}
        for op in [x for x in OP_ORDER if x in rows]:
            self.add(o.ended, "main", final_line(op, rows[op], threads))

    def streams(self, o, key: str, choosers: int) -> None:
        """LinkBenchDriver's createMasterRNG line, of the master seed the step's streams
        derive from (:mod:`...seeds`): the step's own (``load_random_seed`` /
        ``request_random_seed``) or the run's (meta.json's ``seed``); then ID2Chooser's
        warning, once per chooser Java makes (a link loader's, a requester's)."""
        if o.step.seed is not None:
            self.add(o.started, "main", f"Using configured random seed {key}={o.step.seed}")
        elif self.facts.get("seed") is not None:
            self.add(o.started, "main", f"Using random seed {self.facts['seed']} since {key} not specified")
        for _ in range(choosers):   # benchlib's id2s are neverChange=false's, whatever the key says
            self.add(o.started, "main", "ID2Chooser run with neverChange=false", "WARN")
        if self.p.never_change:
            self.add(o.started, "main", "never_change = true is not followed: benchlib's id2s "
                     "are ID2Chooser's with neverChange=false", "WARN")

    # ------------------------------------------------------------ the phases
    def head(self, t: datetime, facts: dict) -> None:
        """LinkBenchDriver's first lines, where they are facts of this run: the config file
        it ran (a property file's, or the YAML's workload_file) and the workload file that
        one names, a phase the run skips (load.skip, run.skip: Java's -r, -l), the
        out-degree distribution's file read (nlinks_func = real)."""
        if facts.get("config_file"):
            self.add(t, "main", f"Config file: {facts['config_file']}")
            self.add(t, "main", f"Workload config file: {facts.get('workload_file') or 'null'}")
        if facts.get("load_skipped"):
            self.add(t, "main", "Skipping load data per the cmdline arg")
        if facts.get("run_skipped"):
            self.add(t, "main", "Skipping request phase per the cmdline arg")
        if self.p.nlinks_func == "real":
            from .realdist import resolve
            self.add(t, "main", f"Loading real distribution data from {resolve(self.p.data_file)}")

    def load(self, o, seconds: list[dict], index_s: float | None) -> None:
        """A load step: its loaders, LoadProgress's lines (loadlog.py), one line per batch
        operation, ``LOAD PHASE COMPLETED`` with the rows counted and the load's kind."""
        p = self.p
        self.add(o.started, "main", f"Starting loaders {p.loaders}")
        self.streams(o, "load_random_seed", p.loaders)
        for i in range(p.loaders):   # LinkBenchLoad's numbers: the link loaders, then the node loader
            self.add(o.started, f"Thread-{i}", f"Starting loader thread  #{i} loading links")
        self.add(o.started, f"Thread-{p.loaders}", f"Starting loader thread  #{p.loaders} loading nodes")
        if (at := nodes_done_at(seconds)) is not None and o.status == "ok":
            self.add(o.started + timedelta(seconds=min(at, o.secs)), f"Thread-{p.loaders}",
                     f"Loading of nodes [{p.startid1},{p.maxid1}) done")
        prog = LoadProgress(p)
        for at, links, counts in stored_updates(p, o, seconds):
            for t, msg in prog.update(at, links, counts):
                self.add(o.started + timedelta(seconds=t), "Thread-0", msg)
        self.retries(o, 0, 0)
        self.finals(o, o.step.threads)
        self.add(o.ended, "main", completed_line(p, o))
        self.add(o.ended, "main", mode_line(p, o, index_s))

    def requests(self, o, seconds: list[dict]) -> None:
        """A request loop: its requesters, progress (the step's and each requester's own),
        each requester's statistics windows and last lines (reqstats.py), in time order;
        then the retry counters, finals, totals."""
        p, threads = self.p, o.step.threads
        self.streams(o, "request_random_seed", threads)
        total, limit = requests_total(o.step), time_limit(p, o.step)
        per = total // threads if total else -(-o.ops // threads)   # none given: about what each did
        counters = sorted((c for r in o.client_results for c in r.thread_counters), key=lambda c: c["thread"])
        began = {c["thread"]: _at(c.get("started"), o.started) for c in counters}
        events = [(began.get(i, o.started), f"Thread-{i}", f"Requester thread #{i} started: will do {per} "
                   f"ops after {o.step.warmup_secs:g} second warmup") for i in range(threads)]
        prog = Progress(p, total, limit)
        for end, length, n in step_seconds(seconds, requests_of, o.secs):
            events += [(o.started + timedelta(seconds=at), "Thread-0", msg) for at, msg in prog.second(end, length, n)]
        for c in counters:
            i, who = c["thread"], f"Thread-{c['thread']}"
            end = _at(c.get("ended"), o.ended)
            events += [(_at(w), who, f"Requester #{i} warming up.  {n} warmup requests done. "
                        f"{secs}/{o.step.warmup_secs:g} seconds of warmup done") for w, n, secs in c.get("warmup", ())]
            if c.get("warmed"):
                events.append((_at(c["warmed"][0]), who, f"Requester #{i} warmup finished  after "
                               f"{c['warmed'][1]} warmup requests.  0/{per} requests done"))
            events += [(_at(w), who, f"Requester #{i} {n}/{per} requests done") for w, n in c.get("progress", ())]
            events += [(_at(w), who, f"oneRequest error: {op} error {msg}", "ERROR") for w, op, msg in c.get("errors", ())]
            if c.get("errors_unsaid"):
                events.append((end, who, f"Requester #{i}: {c['errors_unsaid']} more failed requests, "
                               f"their errors not logged (the first {len(c['errors'])} are)", "WARN"))
            windows = list(c.get("windows", ()))
            last = windows.pop() if windows else (None, [])
            events += [(_at(w), who, line) for w, lines in windows for line in lines]
            if o.step.loop_secs or not total:
                events.append((end, who, f"Requester #{i}: time limit of {int(limit)}s elapsed, shutting down."))
            events += [(end, who, line) for line in last[1]]
            ms = int((end - _at(c["measured"])).total_seconds() * 1000) if c.get("measured") else int(o.secs * 1000)
            events.append((end, who, requester_line(c, ms)))
        for t, who, msg, *level in sorted(events, key=lambda e: e[0]):   # stable: a thread's lines in order
            self.add(t, who, msg, *level)
        # LinkBenchDriver's: the requesters' requestsDone (no warmup request) over the
        # time since the warmup ended (the step's ops and seconds hold the warmup's too)
        done = sum(c["requests"] for c in counters) if counters else o.ops
        ms = max(int((o.secs - (o.step.warmup_secs if counters else 0)) * 1000), 1)
        ret = {r["op"]: r.get("returns") or {} for r in o.latency_rows}
        self.retries(o, ret.get("ADD_LINK", {}).get("RETRY", 0), ret.get("UPDATE_LINK", {}).get("RETRY", 0))
        self.finals(o, threads)
        self.add(o.ended, "main", f"REQUEST PHASE COMPLETED. {done} requests done in "
                 f"{ms // 1000} seconds. Requests/second = {1000 * done // ms}")


def _at(wall: float | None, default: datetime | None = None) -> datetime:
    """A requester's wall-clock time (time.time()) as the log's UTC datetime."""
    return default if wall is None else datetime.fromtimestamp(wall, timezone.utc)


def linkbench_log(p, outcomes: list, intervals: list[dict] | None, facts: dict | None = None) -> str:
    """The run's linkbench.log text ('' when no load or request step ran)."""
    w = LogWriter(p, facts)
    if (first := next((o for o in outcomes if o.step.phase in ("load", "run")), None)) is not None:
        w.head(first.started, facts or {})
    index_s = next((x.secs for x in outcomes if x.step.phase == "index" and x.status == "ok"), None)
    for o in outcomes:
        seconds = [r for r in intervals or [] if r.get("step") == o.step.name]
        if o.step.phase == "load":
            w.load(o, seconds, index_s)
        elif o.step.phase == "run":
            w.requests(o, seconds)
    return w.text()
