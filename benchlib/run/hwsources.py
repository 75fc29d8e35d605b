"""Each step's hw rows from every source the experiment's ``hw:`` names.

- the controller's own sampler (always: its clients' CPU, its host's figures), which
  counts the server's processes and asks the database size only when it may
  (``hw.dbms`` has ``local``, ``hw.remote`` is false) and sees them (a loopback URL):
  its rows' role is then ``both``, else ``client``;
- ``dask``: the sampler on the database host (:mod:`.remote_sampler`), role ``dbms``;
- ``prometheus``: after the step, its window queried (:mod:`benchlib.hw.prometheus`),
  role ``dbms``; a figure without series is blank, said once per run in one line; a
  figure whose samples leave gaps, once per step (which exporter, which seconds).
"""
from __future__ import annotations

import sys
from datetime import datetime
from functools import partial
from urllib.parse import urlsplit

from ..hw import prometheus
from ..hw.roles import BOTH, CLIENT, DBMS, tag
from ..params import ParameterError


def check(exp) -> None:
    """Before anything runs: a Prometheus the experiment needs answers, a cgroup it names
    is one on this host (ParameterError)."""
    if exp.hw.dbms_cgroup:
        from ..hw.cgroup import at
        try:
            at(exp.hw.dbms_cgroup)
        except ValueError as e:
            raise ParameterError(str(e)) from None
    if "prometheus" in exp.hw.dbms:
        try:
            prometheus.check(exp.hw.prometheus)
        except prometheus.PrometheusError as e:
            raise ParameterError(f"hw.prometheus: {e}") from None


class HwSources:
    """The sources of an experiment, opened once (a Dask client, a checked Prometheus)."""

    def __init__(self, exp, executor=None):
        self.spec = exp.hw
        check(exp)
        self.dask = None
        if "dask" in self.spec.dbms:
            from .remote_sampler import DaskDbmsSampler
            self.dask = DaskDbmsSampler.open(exp, executor)
        self.warned: set[str] = set()
        if "prometheus" in self.spec.dbms:
            line = prometheus.short_loops(self.spec.prometheus, getattr(getattr(exp, "run", None), "loop_secs", None))
            if line:
                print(f"warning: {line}", file=sys.stderr, flush=True)

    def step(self, target, run_id: str, step: str, client_pids: list[int], out=sys.stderr) -> StepSampling:
        return StepSampling(self, target, run_id, step, client_pids, out)

    def close(self) -> None:
        if self.dask is not None:
            self.dask.close()


def sources_for(exp, executor) -> tuple[HwSources, bool]:
    """The executor's sources (opened with it by run_experiment), or new ones that the
    caller owns (closes)."""
    src = getattr(executor, "hw_sources", None)
    return (src, False) if src is not None else (HwSources(exp, executor), True)


def _visible(target) -> bool:
    try:
        return target.dbms_pids() is not None
    except Exception:  # noqa: BLE001 - a server this host cannot look into is not this host's
        return False


def _note(target) -> str | None:
    try:
        return target.session_note()
    except Exception:  # noqa: BLE001 - a note that cannot be had is no note
        return None


def cgroup_of(spec, target):
    """The server's cgroup the local sampler reads: ``hw.dbms_cgroup``, else the target's
    (:meth:`~benchlib.targets.base.Target.dbms_cgroup`); None: its processes are summed."""
    if spec.dbms_cgroup:
        from ..hw.cgroup import at
        return at(spec.dbms_cgroup)
    return target.dbms_cgroup()


def labels(target) -> dict[str, str]:
    """The Prometheus queries' ``$datname`` and ``$port`` for ``target`` (``$process_group``:
    :func:`benchlib.hw.prometheus.process_group` finds it)."""
    try:
        parts = urlsplit(target.url)
        db, port = parts.path.strip("/"), parts.port
    except ValueError:
        db, port = "", None
    port = port or getattr(target, "default_port", None)
    return {"datname": db or ".+", "port": str(port) if port else "[0-9]+"}


def marks(target) -> list[str]:
    """What names the target's server among its host's (its data directory, ``:port``)."""
    try:
        return list(target.server_marks())
    except Exception:  # noqa: BLE001 - a mark that cannot be had is no mark
        return []


def cgroup_label(hw, target) -> dict[str, str]:
    """``$cgroup`` for the Prometheus queries: the id (path in its hierarchy) of the server's
    cgroup on this host (:func:`cgroup_of`), written inside a PromQL string; {} when none."""
    try:
        cg = cgroup_of(hw, target)
    except (ValueError, OSError):
        return {}
    cid = cg.id() if cg is not None else None
    return {"cgroup": cid.replace("\\", "\\\\").replace('"', '\\"')} if cid else {}


def fetch_prometheus(spec, target, started: datetime, ended: datetime, wait: bool = True,
                     cgroup: dict[str, str] | None = None):
    """A step's Prometheus rows for ``target`` (:func:`benchlib.hw.prometheus.fetch`);
    ``cgroup``: :func:`cgroup_label` (the server's cgroup series chosen where it exists)."""
    return prometheus.fetch(spec, started, ended, target.prometheus_queries, {**labels(target), **(cgroup or {})},
                            hints=marks(target), names=list(target.server_names), wait=wait)


def coverage_figures(coverage: dict[str, float]) -> dict[str, float]:
    """The steps table's ``dbms_cpu_coverage`` and ``hw_coverage`` (the least of the other
    figures') from a fetch's coverage per hw column."""
    rest = [v for c, v in coverage.items() if c not in ("dbms_cpu_s", "cpu_total")]
    out = {"hw_coverage": min(rest)} if rest else {}
    if "dbms_cpu_s" in coverage:
        out["dbms_cpu_coverage"] = coverage["dbms_cpu_s"]
    return out


class StepSampling:
    """One step's samplers: ``start()`` before it, ``stop(outcome)`` -> its frames."""

    def __init__(self, src: HwSources, target, run_id, step, client_pids, out):
        self.src, self.target, self.run_id, self.step, self.out = src, target, run_id, step, out
        spec = src.spec
        eic = target.engine_in_clients
        sees = eic or (spec.local_reads_dbms() and _visible(target))
        self.role = BOTH if sees else CLIENT
        from ..hw.sampler import Sampler
        own = sees and not eic   # the server's own work: its sessions', its other databases'
        self.local = Sampler(1.0, dbms_pids=target.dbms_pids if sees else None, engine_in_clients=eic,
                             client_pids=lambda: list(client_pids),
                             db_size_bytes=None if spec.remote else target.db_size_bytes,
                             sessions=target.session_tasks if own else None,
                             session_scope=target.session_scope,
                             other_work=target.other_work if own else None,
                             dbms_cgroup=partial(cgroup_of, spec, target) if own else None)
        self.window_figures: dict = {}
        if own and (note := _note(target)):
            self._warn(note)

    def window(self, edge: str) -> None:
        """The step's window: ``start`` as its clients start, ``end`` as its last
        operation returned (run_step's on_window); the figures in ``window_figures``."""
        if edge == "start":
            self.local.window_begin()
        else:
            self.window_figures = self.local.window_end()

    def start(self) -> StepSampling:
        if self.src.dask is not None:
            t = self.target
            self.src.dask.start(self.run_id, self.step, {
                "port": t.server_port(), "names": list(t.server_names),
                "target": (t.name, t.url, t.options)})
        self.local.start(self.run_id, self.step)
        return self

    def stop(self, outcome=None) -> list:
        local = self.local.stop()
        frames = [tag(local, self.role, "local")]
        if self.src.dask is not None:
            from .remote_sampler import StreamedOnly
            try:
                df = self.src.dask.stop()
            except StreamedOnly as e:   # a lost sampler worker costs its last rows, not the run
                df = e.rows
                self._warn(f"the DBMS host's Dask sampler was lost: {len(df)} rows it streamed kept ({e})")
            if df is not None and len(df):
                frames.append(tag(df.assign(run_id=self.run_id, step=self.step), DBMS, "dask"))
        if "prometheus" in self.src.spec.dbms and outcome is not None:
            frames.extend(self._prometheus(*prometheus.window(local, outcome.started, outcome.ended), outcome))
        return frames

    def _prometheus(self, started: datetime, ended: datetime, outcome) -> list:
        spec = self.src.spec.prometheus
        try:   # it waits for the scrape after the step's end
            got = fetch_prometheus(spec, self.target, started, ended,
                                   cgroup=None if self.src.spec.remote or self.target.engine_in_clients
                                   else cgroup_label(self.src.spec, self.target))
        except prometheus.PrometheusError as e:
            self._warn(str(e))
            return []
        if got.missing:
            self._warn(f"Prometheus has no series for {', '.join(got.missing)}: blank "
                       "(hw.prometheus.queries sets each; docs/hardware.md: Prometheus)")
        for line in got.lines:
            self._warn(f"Prometheus, {self.step}: {line}" if "step" in line or "covered" in line else
                       f"Prometheus: {line}")
        outcome.dbms_window = {**outcome.dbms_window, **coverage_figures(got.coverage)}
        df = got.rows
        df.insert(0, "run_id", self.run_id)
        df.insert(1, "step", self.step)
        df.insert(2, "host", prometheus.host_of(spec))
        return [tag(df, DBMS, "prometheus")]

    def _warn(self, line: str) -> None:
        if line not in self.src.warned:
            self.src.warned.add(line)
            print(f"warning: {line}", file=self.out, flush=True)
