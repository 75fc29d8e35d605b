"""YCSB's CoreWorkload on benchlib's driver: load and transaction clients.

The generators (:mod:`..generators`) decide, per client thread and chunk, which
operation runs on which key; this module turns a chunk into ready argument tuples
(key strings, field values) for the target's YCSB binding, before any of them is
timed. Field values come from the shared :class:`..generators.ValuePool`: slices of one
random alphanumeric string, so a value costs a slice, not a random draw per byte (YCSB's
RandomByteIterator draws printable ASCII; ours are alphanumeric so that COPY and
multi-row INSERT need no escaping).
"""
from __future__ import annotations

import difflib
import time

import numpy as np

from ... import schema, seeds
from .. import keycounter
from ..base import Chunk, LoadedTable, Workload, WorkloadClient, load_chunk_records, matrix_points
from ..stepplan import StepPlan
from ..generators import ValuePool, build_key_names
from ...targets.ownership import TableShape
from .bindings import BINDINGS, KEY_COLUMN, binding_class, native_missing, open_binding
from ..reconnect import Reconnecting, ReconnectingClient
from .mixes import KEY as MIX, LOAD_FREE, apply_mix
from .columns import MAX_PADDING, ChunkColumns
from .plan import CoreWorkloadPlan, field_length_generator, load_range
from .properties import (
    BINDING_PREFIXES,
    CLIENT_KEYS,
    CORE_KEYS,
    CoreWorkloadProperties,
    likely_misspellings,
    split_properties,
)

RUN_OPS = ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"]
READ, UPDATE, INSERT, SCAN, RMW = range(5)
MIXED_CHUNK_OPS = 1000   # see YcsbRunClient: a chunk's inserts wait for the chunk's turn


class YcsbConfig:
    """What a YCSB binding needs: table, field names and the non-core properties."""

    def __init__(self, core: CoreWorkloadProperties, extra: dict):
        self.core = core
        self.extra = extra
        self.table = core.table
        self.field_names = list(core.field_names)


def check_unknown_keys(props: dict, top_level: tuple[str, ...] = ()) -> None:
    """A key YCSB would ignore without a word is an error here, with the key meant:
    ``requestdistrbution`` runs uniform in YCSB, ``-p executr=dask`` meant the
    experiment's ``executor`` (``top_level``: its keys). Dotted keys (``db.url``,
    ``postgrenosql.*``, ``basicdb.verbose``) are a binding's and pass through."""
    _, other = split_properties(props)
    for k, meant in likely_misspellings(other).items():
        raise ValueError(f"{k}: unknown property (did you mean {meant}?)")
    for k in other:
        if not k or ("." not in k and k not in CLIENT_KEYS):
            near = difflib.get_close_matches(k, [*CORE_KEYS, *CLIENT_KEYS, MIX, *top_level], n=1, cutoff=0.6)
            where = " (an experiment key)" if near and near[0] in top_level else ""
            hint = f" (did you mean {near[0]}{where}?)" if near else ""
            raise ValueError(f"{k or '(empty key)'}: unknown property{hint}; a binding's "
                             "own keys are dotted (db.url, basicdb.verbose)")


def config_from(props: dict) -> YcsbConfig:
    core, extra = split_properties(props)
    return YcsbConfig(CoreWorkloadProperties.from_properties(core), extra)


class YcsbWorkload(Workload):
    """CoreWorkload: builds load and run clients for the driver."""

    name = "ycsb"
    # YCSB times RMW's inner read and update as READ and UPDATE too
    compound_ops = {"READ-MODIFY-WRITE": 2}
    insert_ops = ("INSERT",)
    property_prefixes = BINDING_PREFIXES   # the bindings' own dotted keys (db.url …)
    matrix_properties = (MIX,)          # mix: [a, c]: YCSB's core workloads, one run each
    load_free_properties = LOAD_FREE    # a mix changes the run loops, not the load
    op_order = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE")
    op_codes = {"READ": "rd", "UPDATE": "up", "INSERT": "in", "SCAN": "sc",
                "READ-MODIFY-WRITE": "rmw", "DELETE": "de"}

    def __init__(self, properties: dict):
        super().__init__(properties)
        self.cfg = config_from(apply_mix(properties))
        self.core = self.cfg.core

    @classmethod
    def check_experiment(cls, exp) -> None:
        given = exp.workload_properties()
        for point in matrix_points(given, cls.matrix_properties):   # each mix, its own check
            props = apply_mix({**given, **point})
            core = cls(props).core
            check_unknown_keys(props, tuple(type(exp).model_fields))
        from ...registries.targets import target_class
        for t in exp.targets:   # a dialect without a binding (redis: no tables of fields)
            BINDINGS.check(target_class(t.kind).dialect, t.name)
        if int(props.get("recordcount", 0) or 0) <= 0:
            # YCSB reads 0 as 2^31 records: never what anyone meant on this scale
            raise ValueError("recordcount: required, a number of records > 0")
        if not exp.run.skip and not exp.run.loop_secs and int(core.operationcount) <= 0 \
                and not float(core.maxexecutiontime or 0):
            raise ValueError("operationcount: required (> 0) unless run.loop_secs or "
                             "maxexecutiontime bounds the run loops")
        if core.fieldlengthdistribution == "histogram":   # its file read now, not in the clients
            import numpy as np

            from .plan import field_length_generator
            field_length_generator(core, np.random.default_rng(0))

    def step_plan(self, exp, spec) -> StepPlan:
        self.index_column = exp.index.column
        return StepPlan(load_records=self.records(), index=exp.index.enabled,
                        run_secs=float(self.core.maxexecutiontime) or None,
                        run_ops=int(self.core.operationcount))

    @classmethod
    def native_missing(cls, dialect: str) -> str | None:
        return native_missing(dialect)

    def load_tables(self) -> list[TableShape]:
        return [TableShape(self.cfg.table, (KEY_COLUMN, *self.cfg.field_names), "table")]

    def setup(self, target, step) -> None:
        if step.phase == "load":
            binding_class(target.dialect).create_table(target, self.cfg)

    def after_step(self, target, step, outcome) -> None:
        if step.phase == "load":
            binding_class(target.dialect).after_load(target, self.cfg.table)

    def run_in_controller(self, target, step) -> int:
        binding_class(target.dialect).create_index(target, self.cfg.table,
                                                        getattr(self, "index_column", "field0"))
        return step.ops_total or 0

    def records(self) -> int:
        return int(self.core.insertcount)

    def client(self, step, endpoint, index: int, total: int, seed: int, batch_size: int = 1000):
        if step.phase == "load":
            return YcsbLoadClient(self.cfg, endpoint, index, total, seed, batch_size)
        per = None
        if step.ops_total is not None:  # YCSB: operationcount split evenly, remainder first
            per = step.ops_total // total + (1 if index < step.ops_total % total else 0)
        counter = keycounter.attach(step.key_counter, int(self.core.recordcount), total, index, step.loop)
        return YcsbRunClient(self.cfg, endpoint, index, total, seed, per, step.driver, counter)

    def defined_ops(self, step) -> list[str]:
        if step.phase != "run":
            return YcsbLoadClient.op_names
        p = self.core
        shares = [p.readproportion, p.updateproportion, p.insertproportion, p.scanproportion,
                  p.readmodifywriteproportion]
        inner = {"READ", "UPDATE"} if p.readmodifywriteproportion > 0 else set()  # RMW's parts
        return [op for op, x in zip(RUN_OPS, shares) if x > 0 or op in inner]

    def insert_counter_start(self) -> int:
        """Run-phase inserts claim keys from recordcount on (YCSB's transaction counter)."""
        return int(self.core.recordcount)

    def loaded_rows(self, target, kept) -> list[LoadedTable] | None:
        """The table holds the loaded records and every insert that returned OK since
        (no op removes one), and at most the kept loops' and the unfinished loop's inserts
        more (more: another run used the table)."""
        rows = binding_class(target.dialect).count_rows(target, self.cfg.table)
        if rows is None:
            return None
        n, tried = kept.load_ops, sum(kept.runs.get("INSERT", {}).values())
        return [LoadedTable(self.cfg.table, rows, n, n + kept.ok("INSERT"),
                            n + tried + kept.unfinished.get("INSERT", 0))]

    def text_outputs(self, outcomes, intervals=None) -> dict[str, str]:
        """Each step in YCSB's own text format, for existing YCSB scripts. Its throughput
        counts YCSB's opsDone: in a run every transaction, failed or not (CoreWorkload's
        doTransaction is true whatever the DB said); in a load the inserts that did not
        fail (doInsert is false for a failed one)."""
        from .text import format_step
        return {("ycsb-load.txt" if o.step.phase == "load" else f"ycsb-{o.step.name}.txt"):
                format_step(o.secs, o.ops + (o.failed if o.step.phase == "run" else 0), o.latency_rows)
                for o in outcomes if o.latency_rows}


class _YcsbClient(ReconnectingClient, WorkloadClient):
    driver = "python"   # the run clients' binding may run chunks in C (run.driver)

    def __init__(self, cfg: YcsbConfig, endpoint, seed: int):
        self.cfg, self.core, self.endpoint = cfg, cfg.core, endpoint
        self.rng = seeds.generator(seed, "ycsb values")
        self.link = Reconnecting(self._open, f"ycsb client (seed {seed})", endpoint.target_class())
        self.as_bytes = bool(getattr(self.binding, "bytes_args", False))
        self.pool = ValuePool(self.rng, int(self.core.fieldlength), as_bytes=self.as_bytes)
        self.lengths = field_length_generator(self.core, self.rng)
        self._bind()

    def _bind(self):
        raise NotImplementedError

    def _keys(self, keynums: np.ndarray) -> list:
        keys = build_key_names(keynums, self.core.insertorder == "hashed", int(self.core.zeropadding))
        return [k.encode() for k in keys] if self.as_bytes else keys

    def _rows(self, keys: list, lengths=None) -> list[tuple]:
        """The records of ``keys``: (key, field values …); ``lengths``: their values'
        lengths, drawn already."""
        nf = len(self.cfg.field_names)
        flat = self.pool.values(self.lengths.next_batch(len(keys) * nf) if lengths is None else lengths)
        return [(k, *flat[i:i + nf]) for k, i in zip(keys, range(0, len(flat), nf))]

    def _open(self):
        """The binding on a new connection (the reconnection policy's ``open``)."""
        return open_binding(self.endpoint, self.cfg, self.driver)

    @property
    def binding(self):
        return self.link.session


class YcsbLoadClient(_YcsbClient):
    """Inserts this thread's share of [insertstart, insertstart+insertcount) in batches,
    a chunk of about ``LOAD_CHUNK_RECORDS`` records at a time: its keys and values are
    made when the driver asks for it and dropped once written, so the loader's memory
    is one chunk's, whatever ``recordcount``."""

    op_names = ["INSERT" + schema.BATCH_SUFFIX, "INSERT"]
    batch_units = {"INSERT" + schema.BATCH_SUFFIX: "INSERT"}

    def __init__(self, cfg, endpoint, index, total, seed, batch_size):
        super().__init__(cfg, endpoint, seed)
        self.pos, self.stop = load_range(self.core, index, total)
        self.record_bytes = int(self.core.fieldcount) * int(self.core.fieldlength)
        self.batch_size = batch_size

    def _bind(self):
        # a dialect whose bulk load takes COPY's text (PostgreSQL's): the batches made as
        # that text at once (ValuePool.copy_text), no tuple or string per value
        self.copy = getattr(getattr(self.binding, "dialect", None), "copy_text", False)
        self.fns = [self.binding.insert_copy if self.copy else self.binding.insert_batch, self.binding.insert]

    def next_chunk(self, max_ops):
        b = self.batch_size
        n_rec = load_chunk_records(max_ops, b, self.stop - self.pos, self.record_bytes)
        if n_rec <= 0:
            return None
        keys = self._keys(np.arange(self.pos, self.pos + n_rec, dtype=np.int64))
        self.pos += n_rec
        nf = len(self.cfg.field_names)
        lengths = self.lengths.next_batch(n_rec * nf)
        units = [min(b, n_rec - i) for i in range(0, n_rec, b)]
        if self.copy and nf and lengths[0] > 0 and (lengths == lengths[0]).all():
            # the values _rows would cut (the same offsets drawn), as COPY's text
            offs, n = self.pool.offsets(len(lengths)), int(lengths[0])
            keys = keys if self.as_bytes else [k.encode() for k in keys]
            text = [(self.pool.copy_text(keys[i:i + b], offs[i * nf:(i + b) * nf], n),)
                    for i in range(0, n_rec, b)]
            return Chunk([0] * len(text), text, units)
        rows = self._rows(keys, lengths)
        return Chunk([0] * len(units), [(rows[i:i + b],) for i in range(0, n_rec, b)], units)


class YcsbRunClient(_YcsbClient):
    """The transaction phase: CoreWorkload's operation mix for one client thread."""

    op_names = RUN_OPS

    def __init__(self, cfg, endpoint, index, total, seed, ops_limit, driver: str = "python",
                 counter=None):
        self.driver = driver
        self.plan = CoreWorkloadPlan(cfg.core, index, total, seed, counter)
        super().__init__(cfg, endpoint, seed)
        # inserts beside keyed ops: smaller chunks, so that a chunk's claimed keys (read
        # by others only once acknowledged) run soon after they are claimed
        p = self.core
        self.chunk_cap = MIXED_CHUNK_OPS if p.insertproportion and p.insertproportion < 1 else None
        # no inserts: the counter the keys are drawn under stays where it is, so a chunk
        # draws from this client's streams alone and the driver makes it ahead
        # (run/chunk_ahead.py); with inserts, a chunk claims keys and reads the
        # acknowledged ones when it is made: made when needed, as YCSB draws them
        self.chunks_ahead = not p.insertproportion
        self.remaining = ops_limit
        self.record = lambda code, dt_ns: None  # the driver sets this (RMW's inner ops)

    def _bind(self):
        b = self.binding
        self.fns = [b.read, b.update, self._insert, b.scan, self._rmw]
        self._read, self._update, self._ins = b.read, b.update, b.insert
        # generator versions for the multiplexed client, where the binding has them
        self.afns = ([b.a_read, b.a_update, self._a_insert, b.a_scan, self._a_rmw]
                     if hasattr(b, "a_read") else None)
        self.conn = getattr(b, "pg", None)
        # the whole chunk in C, where the binding can (PostgreSQL's, run.driver c/auto)
        self.native = b.native(self.op_names) if hasattr(b, "native") else None

    def _insert(self, key, values):
        try:
            return self._ins(key, values)
        finally:   # returned, whatever its status (YCSB's finally): acknowledged
            self.plan.acknowledge(1)

    def _a_insert(self, key, values):
        try:
            return (yield from self.binding.a_insert(key, values))
        finally:
            self.plan.acknowledge(1)

    def ops_done(self, codes: np.ndarray) -> None:
        """The C loop ran these operations of the chunk (in order): acknowledge its inserts."""
        self.plan.acknowledge(int(np.count_nonzero(codes == INSERT)))

    def _a_rmw(self, key, read_field, write_field, values):
        ns = time.perf_counter_ns
        t0 = ns()
        s1 = yield from self.binding.a_read(key, read_field)
        t1 = ns()
        self.record(READ, t1 - t0)
        s2 = yield from self.binding.a_update(key, write_field, values)
        self.record(UPDATE, ns() - t1)
        return s1 or s2

    def _rmw(self, key, read_field, write_field, values):
        # YCSB times the read and the update of a read-modify-write as READ and UPDATE too
        ns = time.perf_counter_ns
        t0 = ns()
        s1 = self._read(key, read_field)
        t1 = ns()
        self.record(READ, t1 - t0)
        s2 = self._update(key, write_field, values)
        self.record(UPDATE, ns() - t1)
        return s1 or s2

    def next_chunk(self, max_ops):
        n = max_ops if self.remaining is None else min(max_ops, self.remaining)
        n = min(n, self.chunk_cap or n)
        if n <= 0:
            return None
        if self.remaining is not None:
            self.remaining -= n
        c = self.plan.next_chunk(n)
        if self.native is not None and self.as_bytes and int(self.core.zeropadding) <= MAX_PADDING:
            # the C loop writes the keys and values itself (columns.py): no tuple per operation
            lengths = self.plan.field_lengths(int(c.n_values.sum()))
            cols = ChunkColumns(c, self.core.insertorder == "hashed", int(self.core.zeropadding),
                                self.pool.text, self.pool.offsets(len(lengths)), lengths)
            return Chunk(c.op.tolist(), cols)
        ops = c.op.tolist()
        keys = self._keys(c.keynum)
        field, wfield, scan_len = c.field.tolist(), c.write_field.tolist(), c.scan_len.tolist()
        nvals = c.n_values.tolist()
        vals = self.pool.values(self.plan.field_lengths(int(c.n_values.sum())))
        args, v = [], 0
        for i, o in enumerate(ops):
            if o == READ:
                args.append((keys[i], field[i]))
            elif o == SCAN:
                args.append((keys[i], scan_len[i], field[i]))
            else:
                k = nvals[i]
                values = vals[v:v + k]
                v += k
                if o == INSERT:
                    args.append((keys[i], values))
                elif o == UPDATE:
                    args.append((keys[i], wfield[i], values))
                else:  # RMW
                    args.append((keys[i], field[i], wfield[i], values))
        return Chunk(ops, args)
