"""ybio (pgio / SLOB for rows) on benchlib's driver: the seed's setup() as the load step,
runit() as the run loops, its ``benchruns`` table in the run folder.

The schema and the checks run in the controlling process (``target.connect()``); the
inserts and the sessions' calls run on the client processes (:mod:`.load`,
:mod:`.clients`), so every target benchlib drives gets the same workload with its
hardware metrics, intervals and reports.
"""
from __future__ import annotations

from datetime import timedelta

from ...targets.base import TargetError
from ..base import LoadedTable, Workload, matrix_points
from ..stepplan import StepPlan
from .clients import YbioRunClient
from .load import YbioLoadClient, batch_count
from .parameters import MATRIX_PROPERTIES, parse_parameters
from .bindings import BINDINGS, binding, native_missing
from ...targets.ownership import TableShape
from ..indexes import ensure_index, index_name
from .sql import COLUMNS, INDEX_WHAT, table_statements

BENCHRUNS_COLUMNS = [
    "job_id", "start_time", "end_time", "num_batches", "num_rows", "pct_update", "max_scratch",
    "prepared", "index_only", "tab_rows", "batch_size", "table_name", "table_rows",
    "table_scratch", "duration_s", "riops", "pct_scratch", "coverage", "coverage_ratio",
    "num_updated", "sessions", "errors", "run_id", "step"]


def _query(conn, sql: str, fetch: bool = False):
    """A statement on a driver connection of any dialect (psycopg, sqlite3, PyMySQL)."""
    cur = conn.cursor()
    try:
        cur.execute(sql)
        return cur.fetchone() if fetch else None
    finally:
        cur.close()


def _statements(target, table: str, params):
    """A table's statements in the target's dialect, through the dialect's binding."""
    return table_statements(binding(target.dialect), target.dialect, table, params)


def _index(target, conn, table: str, st) -> None:
    """The table's index on mykey, created if absent, checked if present."""
    ensure_index(target, conn, table, index_name(table, INDEX_WHAT), ["mykey"], st.index)


class YbioWorkload(Workload):
    """Row I/O: random ranges of ``batch_size`` keys read (or updated) through an index."""

    name = "ybio"
    matrix_properties = MATRIX_PROPERTIES
    report_notebooks = ("ybio",)
    summary_tables = "benchlib.workloads.ybio.summary"
    plots = "benchlib.workloads.ybio.plots"
    interactive_plots = "benchlib.workloads.ybio.plots_interactive"

    def __init__(self, properties: dict):
        super().__init__(properties)
        self.params = parse_parameters(properties)
        self.sessions = 1
        self.index_step = False
        self.table_info: dict[str, tuple] = {}   # step -> (table_rows, table_scratch)
        self.max_scratch: dict[str, int] = {}    # step -> max(scratch) after it

    @classmethod
    def check_experiment(cls, exp) -> None:
        super().check_experiment(exp)
        BINDINGS.check_targets(exp.targets)
        props = exp.workload_properties()
        first = cls({**props, **matrix_points(props, cls.matrix_properties)[0]}).params
        if exp.load.replace and not first.recreate:
            raise ValueError("recreate: false keeps the tables there, load.replace: true replaces "
                             "them; choose one")
        prepared = props.get("prepared", True)
        if exp.run.driver == "c" and (prepared is False or isinstance(prepared, list) and False in prepared):
            raise ValueError("prepared: false runs in Python; run.driver c sends prepared statements only")

    @classmethod
    def native_missing(cls, dialect: str) -> str | None:
        return native_missing(dialect)

    def step_plan(self, exp, spec) -> StepPlan:
        p = self.params
        self.sessions = spec.threads
        self.index_step = exp.index.enabled and not p.index_as_pk
        self.load_batch_rows = exp.load.batch_size
        tables = p.table_names(self.sessions)
        return StepPlan(load_records=p.tab_rows * len(tables), index=self.index_step,
                        run_secs=p.run_duration)

    def tables(self) -> list[str]:
        return self.params.table_names(self.sessions)

    def load_tables(self) -> list[TableShape]:
        return [TableShape(t, COLUMNS, "tab_prefix") for t in self.tables()]

    # --- the controlling process
    def setup(self, target, step) -> None:
        if step.phase == "load":
            self._create(target)
        elif step.phase == "run" and self.params.initial_count:
            rows, scratch, _ = self.count(target)
            if rows < self.params.tab_rows:
                raise TargetError(f"initial_count: cannot read {self.params.tab_rows} rows from "
                                  f"{', '.join(self.tables())} holding {rows}")
            self.table_info[step.name] = (rows, scratch)

    def _create(self, target) -> None:
        p = self.params
        nb = batch_count(p.tab_rows, getattr(self, "load_batch_rows", 1000))
        print(f"Inserting {p.tab_rows} rows in {nb} batches of {-(-p.tab_rows // nb)}"
              + (f" into each of {len(self.tables())} tables" if len(self.tables()) > 1 else ""),
              flush=True)
        if p.tab_tablets or p.ind_tablets:
            print("tab_tablets, ind_tablets: YugabyteDB's tablet splits, ignored on "
                  f"{target.dialect.name}", flush=True)
        conn = target.connect()
        try:
            for table in self.tables():
                st = _statements(target, table, p)
                if p.recreate:
                    _query(conn, st.drop)
                    _query(conn, st.create)
                    if st.index and not self.index_step:
                        _index(target, conn, table, st)   # before the inserts, as the seed does
                    continue
                _query(conn, st.create)
                rows = _query(conn, st.count, fetch=True)[0] or 0
                if 0 < rows < p.tab_rows:
                    raise TargetError(f"recreate: {table} holds {rows} rows, fewer than tab_rows "
                                      f"({p.tab_rows}); set recreate: true to load it again")
                if st.index and not self.index_step and not rows:
                    _index(target, conn, table, st)
        finally:
            conn.close()

    def run_in_controller(self, target, step) -> int:
        conn = target.connect()
        try:
            for table in self.tables():
                _index(target, conn, table, _statements(target, table, self.params))
        finally:
            conn.close()
        return step.ops_total or 0

    def after_step(self, target, step, outcome) -> None:
        if step.phase == "load":
            self._analyze(target)
        elif step.phase == "run":
            self.max_scratch[step.name] = self.count(target)[1]

    def _analyze(self, target) -> None:
        """Fresh statistics (and PostgreSQL's visibility map, which index-only scans need)."""
        conn = target.connect()
        try:
            for table in self.tables():
                for sql in _statements(target, table, self.params).analyze:
                    _query(conn, sql)
        finally:
            conn.close()

    def count(self, target) -> tuple[int, int, int]:
        """count(*), max(scratch), sum(scratch) over the workload's tables."""
        conn = target.connect()
        rows = scratch = total = 0
        try:
            for table in self.tables():
                n, mx, sm = _query(conn, _statements(target, table, self.params).count,
                                   fetch=True)
                rows, total = rows + int(n or 0), total + int(sm or 0)
                scratch = max(scratch, int(mx or 0))
        finally:
            conn.close()
        return rows, scratch, total

    def loaded_rows(self, target, kept) -> list[LoadedTable]:
        """The run loops read and update rows, never insert or delete one: the tables hold
        what the load counted (at least that when it loaded into tables kept, recreate: false)."""
        names, n = self.tables(), kept.load_ops
        name = names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"
        return [LoadedTable(name, self.count(target)[0], n, n, n if self.params.recreate else None)]

    # --- the client processes
    def client(self, step, endpoint, index, total, seed, batch_size=1000):
        params = self.params.model_copy(update={"status_every_s": 0}) if step.quiet else self.params
        if step.phase == "load":
            n_tables = max(1, (step.ops_total or params.tab_rows) // params.tab_rows)
            tables = [params.table_name(i) for i in range(n_tables)] \
                if params.table_per_session else [params.table_name(0)]
            return YbioLoadClient(params, endpoint, tables, index, total, seed, batch_size)
        return YbioRunClient(params, endpoint, index, seed, f"{step.name}/{index + 1}", step.driver)

    # --- outputs
    def extra_tables(self, run_id, outcomes) -> dict:
        import pandas as pd    # the controller's: a client process never imports pandas for it
        rows = [self.benchruns_row(run_id, o) for o in outcomes if o.step.phase == "run"]
        return {"benchruns": pd.DataFrame(rows, columns=BENCHRUNS_COLUMNS)} if rows else {}

    def benchruns_row(self, run_id: str, o) -> dict:
        """One row of the seed's ``benchruns`` per run loop (all its sessions), with the
        seed's query's figures: riops = num_rows / duration, coverage of the table."""
        p = self.params
        counts = {r["op"]: int(r["count"]) for r in o.latency_rows}
        errors = {r["op"]: int(r["errors"]) for r in o.latency_rows}
        num_rows = counts.get("READ", 0) + counts.get("UPDATE", 0)
        table_rows, table_scratch = self.table_info.get(o.step.name, (None, None))
        base = table_rows or p.tab_rows * len(self.tables())
        ratio = num_rows / base
        coverage = f"x{ratio:.1f}" if num_rows > base else f"{100 * num_rows // base} %"
        max_scratch = self.max_scratch.get(o.step.name)
        names = self.tables()
        return {
            "job_id": o.step.loop, "start_time": o.started,
            "end_time": o.started + timedelta(seconds=o.secs),
            "num_batches": counts.get("READ-BATCH", 0) + counts.get("UPDATE-BATCH", 0),
            "num_rows": num_rows, "pct_update": p.pct_update, "max_scratch": max_scratch,
            "prepared": p.prepared, "index_only": p.index_only, "tab_rows": p.tab_rows,
            "batch_size": p.batch_size,
            "table_name": names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}",
            "table_rows": table_rows, "table_scratch": table_scratch, "duration_s": o.secs,
            "riops": num_rows / o.secs if o.secs else None,
            "pct_scratch": (round(100 * max_scratch / table_scratch)
                            if max_scratch is not None and table_scratch else None),
            "coverage": coverage, "coverage_ratio": ratio,
            "num_updated": counts.get("UPDATE", 0), "sessions": o.step.threads,
            "errors": errors.get("READ-BATCH", 0) + errors.get("UPDATE-BATCH", 0),
            "run_id": run_id, "step": o.step.name}
