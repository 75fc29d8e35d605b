"""The LinkBench workload as benchlib runs it: steps, schema, index, clients.

Steps as the seed runs them: ``l.pre`` the load (primary keys only; one node loader
beside ``loaders`` link/count loaders: 1 + loaders threads, split among
``load.processes`` processes), ``l.post`` the
secondary index on linktable built by the controller, then ``r.L1 … r.Ln`` request
loops of ``run.loop_secs`` each (else ``maxtime`` after the warmup, as LinkBenchRequest's
endTime: ``warmup_time`` + ``maxtime``). Requesters: ``requesters`` when
the properties set it — then ``run.threads`` is it too (workload_params.threads_as_property) —
else ``run.threads``; ``requestrate`` is per requester, as in LinkBench (``run.target_*``
paces when it is 0). ``load.mode java``: the tables made with their index at the load's
setup, and the loaders INSERT as Java's (load.py).
"""
from __future__ import annotations

import os

from ..base import LoadedTable, Workload
from ..stepplan import StepPlan
from ...targets.ownership import TableShape
from ..indexes import ensure_index
from .bindings import BINDINGS, binding
from .bindings.base import INDEX_COLS, TABLE_COLUMNS
from .load import LoadClient
from .loadlog import LoadProgress
from .log import SECOND_COLUMNS, LiveProgress, Progress, linkbench_log, requests_total, time_limit
from .properties import from_properties, read_config
from .requests import REQUEST_OPS, RequestClient


class LinkBenchWorkload(Workload):
    """LinkBench (the social-graph benchmark) on the SQL targets."""

    name = "linkbench"
    threads_property = "requesters"
    threads_from_property = True
    load_modes = ("fast", "java")
    # the seed's order, its letters (l.rt: n9 nx nm …) and its four main transactions
    op_order = ("LOAD_NODE_BULK", "LOAD_LINKS_BULK", "LOAD_COUNTS_BULK", "UPDATE_NODE", "GET_NODE",
                "UPDATE_LINK", "GET_LINKS_LIST", "ADD_NODE", "DELETE_NODE", "ADD_LINK",
                "DELETE_LINK", "COUNT_LINK", "MULTIGET_LINK")
    op_codes = {"LOAD_NODE_BULK": "n", "LOAD_LINKS_BULK": "l", "LOAD_COUNTS_BULK": "c",
                "UPDATE_NODE": "un", "GET_NODE": "gn", "UPDATE_LINK": "ul", "GET_LINKS_LIST": "gl",
                "ADD_NODE": "an", "DELETE_NODE": "dn", "ADD_LINK": "al", "DELETE_LINK": "dl",
                "COUNT_LINK": "cl", "MULTIGET_LINK": "ml"}
    main_ops = ("UPDATE_NODE", "GET_NODE", "UPDATE_LINK", "GET_LINKS_LIST")

    def __init__(self, properties: dict):
        super().__init__(properties)
        self.p = from_properties(properties)
        self.log_facts: dict = {}   # what linkbench.log's first lines say (step_plan sets it)
        limit = str(properties.get("max_failed_requests", "")).strip()
        if limit and (not limit.isdigit() or len(limit) > 18):
            raise ValueError(f"max_failed_requests: a count of operations ≥ 0, got {limit[:40]!r}")
        self.max_failed_ops = int(limit) if limit else None

    @classmethod
    def recognizes(cls, properties: dict) -> bool:
        return "linkstore" in properties or "nodestore" in properties

    @classmethod
    def resembles(cls, properties: dict) -> str | None:
        from .properties import LinkBenchProperties
        if cls.recognizes(properties):
            return None   # read as LinkBench's: its own error says what is wrong
        ours = [k for k in properties if k in LinkBenchProperties.model_fields
                and k not in ("linktable", "nodetable", "counttable")]
        return (f"{', '.join(ours[:3])}: LinkBench keys, but no linkstore key, so the file was "
                "read as the default workload's; a LinkBench config names its store "
                "(a linkstore = com.facebook.LinkBench.LinkStore… line)") if ours else None

    @classmethod
    def native_missing(cls, dialect: str) -> str | None:
        from .cloop import native_missing
        return native_missing(dialect)

    @classmethod
    def own_load_threads(cls, properties: dict) -> int:
        return 1 + from_properties(properties).loaders   # the node loader and the link loaders

    @classmethod
    def read_properties_file(cls, path) -> dict:
        return read_config(path)

    @classmethod
    def check_experiment(cls, exp) -> None:
        """The properties, and a binding for every target's dialect (one line if not)."""
        cls(exp.workload_properties())
        from ...registries.targets import target_class, target_kind
        for t in exp.targets:
            try:
                dialect = target_class(target_kind(t.url)).dialect
            except (ImportError, ValueError):
                continue   # an unknown URL or a missing driver is reported where targets start
            BINDINGS.check(dialect, t.name)

    def step_plan(self, exp, spec) -> StepPlan:
        p = self.p
        # what linkbench.log's first lines say of the run (log.LogWriter.head)
        self.log_facts = {"config_file": exp.workload_file, "load_skipped": exp.load.skip,
                          "run_skipped": exp.run.skip,
                          "workload_file": self.properties.get("workload_file")}
        threads = p.requesters or spec.threads
        procs = min(spec.processes, threads) if p.requesters is None else \
            min(threads, os.cpu_count() or 1)
        # the node loader and the link/count loaders; the index after the load, always;
        # a thread per requester; run.driver c: its requests in C (cloop.py)
        return StepPlan(load_threads=1 + p.loaders, load_paced=False, index=not exp.load.skip,
                        run_threads=threads, run_processes=max(procs, 1),
                        run_rate=p.requestrate * threads if p.requestrate > 0 else None,
                        run_secs=p.maxtime + (exp.run.warmup_secs or p.warmup_time), run_ops=p.requests * threads if p.requests else None,
                        warmup_secs=p.warmup_time, multiplex=False,
                        load_seed=p.load_random_seed, run_seed=p.request_random_seed)

    # ------------------------------------------------------------ controller
    def _exec(self, target, sqls: list[str]) -> None:
        conn = target.connect()
        try:
            cur = conn.cursor()
            for sql in sqls:
                cur.execute(sql)   # autocommit connections: nothing to commit
        finally:
            conn.close()

    def load_tables(self) -> list[TableShape]:
        return [TableShape(getattr(self.p, key), cols, key) for key, cols in TABLE_COLUMNS.items()]

    def setup(self, target, step) -> None:
        if step.phase == "load":
            st = binding(target.dialect, self.p)
            engine = getattr(target, "engine", None)
            index = [st.create_index()] if step.load_mode == "java" else []   # Java's tables: indexed
            self._exec(target, st.drop_tables() + st.create_tables(engine, self.p.link_partitions) + index)

    def after_step(self, target, step, outcome) -> None:
        if step.phase == "load":
            self._exec(target, binding(target.dialect, self.p).after_load())

    def run_in_controller(self, target, step) -> int:
        st = binding(target.dialect, self.p)
        conn = target.connect()
        try:   # a rerun after a kill finds it made: checked, not made twice
            ensure_index(target, conn, self.p.linktable, st.index_plain,
                         [c.strip() for c in INDEX_COLS.split(",")], st.create_index())
            cur = conn.cursor()
            cur.execute(f"SELECT COUNT(*) FROM {st.link}")
            return int(cur.fetchone()[0])
        finally:
            conn.close()

    def loaded_rows(self, target, kept) -> list[LoadedTable]:
        """The node table: the loaded nodes, plus ADD_NODE and less DELETE_NODE that
        returned OK in the kept loops, less the unfinished loop's DELETE_NODE at most. The
        link table: the loaded links and every link inserted since (ADD_LINK OK, UPDATE_LINK
        RETRY: it found none and added it); a DELETE_LINK hides a link, never removes it.
        At most those and what the unfinished loop's ADD_NODE, ADD_LINK and UPDATE_LINK added."""
        st = binding(target.dialect, self.p)
        conn = target.connect()
        try:
            cur = conn.cursor()
            rows = []
            for table in (st.node, st.link):
                cur.execute(f"SELECT COUNT(*) FROM {table}")
                rows.append(int(cur.fetchone()[0]))
        finally:
            conn.close()
        nodes, links = kept.load.get("LOAD_NODE_BULK", 0), kept.load.get("LOAD_LINKS_BULK", 0)
        node_after = nodes + kept.ok("ADD_NODE") - kept.ok("DELETE_NODE")
        link_after = links + kept.ok("ADD_LINK") + kept.runs.get("UPDATE_LINK", {}).get("RETRY", 0)
        more = kept.unfinished.get   # what the unfinished loop may have added
        return [LoadedTable(self.p.nodetable, rows[0], nodes, max(node_after - more("DELETE_NODE", 0), 0),
                            node_after + more("ADD_NODE", 0)),
                LoadedTable(self.p.linktable, rows[1], links, link_after,
                            link_after + more("ADD_LINK", 0) + more("UPDATE_LINK", 0))]

    # ------------------------------------------------------------ clients
    def client(self, step, endpoint, index: int, total: int, seed: int, batch_size: int = 1000):
        st = binding(endpoint.dialect, self.p)
        if step.phase == "load":
            return LoadClient(self.p, st, endpoint, index, total, seed, batch_size, step.load_mode)
        per = None
        if step.ops_total is not None:
            per = step.ops_total // total + (1 if index < step.ops_total % total else 0)
        return RequestClient(self.p, st, endpoint, seed, per, index, step.warmup_secs, step.driver)

    def defined_ops(self, step) -> list[str] | None:
        """The request mix's ops (a share > 0): each has its columns, run or not."""
        return [o for o in REQUEST_OPS if self.p.mix[o] > 0] if step.phase == "run" else None

    # ------------------------------------------------------------ outputs
    def progress(self, step):
        """On the terminal, linkbench.log's progress lines as the step goes: a load's as
        LinkBenchLoad's (loadlog.LoadProgress: the id1s, links and counts written), ``N/M
        requests finished …`` each ``req_progress_interval`` requests and each
        ``progressfreq`` s (log.Progress)."""
        if step.phase == "load":
            return LiveProgress(LoadProgress(self.p))
        if step.phase != "run":
            return None
        return LiveProgress(Progress(self.p, requests_total(step), time_limit(self.p, step)))

    def extra_tables(self, run_id: str, outcomes: list) -> dict:
        """``returns``: per step and operation, how many ended OK, RETRY
        (LinkBench's add_to_upd / upd_to_add), EMPTY (not found) or ERROR."""
        import pandas as pd    # the controller's: a client process never imports pandas for it
        rows = [{"run_id": run_id, "step": o.step.name, "op": r["op"], "status": k, "count": int(v)}
                for o in outcomes for r in o.latency_rows
                if not r["op"].startswith("Intended-") for k, v in (r.get("returns") or {}).items()]
        return {"returns": pd.DataFrame(rows)} if rows else {}

    def text_outputs(self, outcomes: list, intervals=None) -> dict[str, str]:
        """``linkbench.txt``: LinkBench's retry counters and each step's totals;
        ``linkbench.log``: the run in the Java client's log format (log.py)."""
        out = {}
        if (text := linkbench_log(self.p, outcomes, intervals(columns=SECOND_COLUMNS) if intervals else None,
                                  {**self.log_facts, "seed": self.run_seed})):
            out["linkbench.log"] = text
        lines = []
        for o in outcomes:
            ret = {r["op"]: r.get("returns") or {} for r in o.latency_rows}
            add_to_upd = ret.get("ADD_LINK", {}).get("RETRY", 0)
            upd_to_add = ret.get("UPDATE_LINK", {}).get("RETRY", 0)
            lines.append(f"{o.step.name}: {o.ops} operations in {o.secs:.1f} seconds, "
                         f"{o.errors} errors; Graph Link other: {add_to_upd} add_to_upd, "
                         f"{upd_to_add} upd_to_add")
        if lines:
            out["linkbench.txt"] = "\n".join(lines) + "\n"
        return out
