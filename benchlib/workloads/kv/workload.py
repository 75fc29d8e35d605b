"""``workload: kv`` — the seed's key-value microbenchmark on benchlib's driver.

Steps: the prepare is the load step ``l.pre`` (``key_count`` keys less the
``prepare_insert_ratio`` share, in batches of ``load.batch_size``; then the
``prepare_remove_ratio`` share removed again); the client is the run loops
``r.L1…``, each ``run.loop_secs`` long or ``op_count`` operations over all clients.

Operations, as the latency table names them, and the seed's words for them:

=========  ==============  ==========================================
op         seed            what it does
=========  ==============  ==========================================
READ       GET (``-a``)    the value of a key (EMPTY, a miss, if absent)
INSERT     INSERT (``-b``) a fresh key and its value
DELETE     DEL (``-c``)    an existing key (remove)
UPDATE     UPDATE (``-d``) a new value for a key (EMPTY if absent)
SCAN       SCAN (``-e``)   ``scan_length`` keys and values from a key on
=========  ==============  ==========================================

One client thread (``run.threads: [1]``) is the seed's latency mode: its op/s is
1/latency, and :func:`benchlib.workloads.kv.summary.kv_table` shows both side by side.
"""
from __future__ import annotations

import numpy as np

from ... import schema, seeds
from .. import keycounter
from ..base import Chunk, LoadedTable, Workload, WorkloadClient, load_chunk_records, returns_table
from ..stepplan import StepPlan
from ..generators import ValuePool
from ..reconnect import Reconnecting, ReconnectingClient
from ...targets.ownership import TableShape
from .bindings import BINDINGS, COLUMNS, binding, native_missing, open_binding, prepare_args
from .parameters import KvParameters, parse
from .plan import (
    DELETE,
    INSERT,
    PREPARE_REMOVE_PERIOD,
    SCAN,
    KeyStreams,
    OpMix,
    RequestKeys,
    key_parts,
    key_strings,
    removed_in_prepare,
)

RUN_OPS = ["READ", "INSERT", "DELETE", "UPDATE", "SCAN"]


class KvWorkload(Workload):
    name = "kv"
    report_notebooks = ("kv",)
    summary_tables = "benchlib.workloads.kv.summary"
    insert_ops = ("INSERT",)          # a run's inserts claim fresh keys (insert_counter_start)

    def __init__(self, properties: dict):
        super().__init__(properties)
        # "_loops" is set by steps() for the client processes, not by the user
        self.p: KvParameters = parse({k: v for k, v in properties.items() if k != "_loops"})
        self.loops = 1

    @classmethod
    def check_experiment(cls, exp) -> None:
        p = cls(exp.workload_properties()).p
        if not exp.run.skip and not exp.run.loop_secs and p.op_count <= 0:
            raise ValueError("op_count: required (> 0) unless run.loop_secs bounds the run loops")
        BINDINGS.check_targets(exp.targets)

    def step_plan(self, exp, spec) -> StepPlan:
        self.loops = exp.run.loops
        # client processes build their own workload from the properties: they need loops
        self.properties["_loops"] = exp.run.loops
        return StepPlan(load_records=self.p.keys_loaded, run_ops=self.p.op_count)

    @classmethod
    def native_missing(cls, dialect: str) -> str | None:
        return native_missing(dialect)

    def load_tables(self) -> list[TableShape]:
        return [TableShape(self.p.table, COLUMNS, "table")]   # on Redis: its key prefix

    def setup(self, target, step) -> None:
        if step.phase == "load":
            binding(target.dialect).clear(target, self.p.table, self.p.key_size)

    def after_step(self, target, step, outcome) -> None:
        if step.phase == "load":
            binding(target.dialect).after_load(target, self.p.table)

    def client(self, step, endpoint, index, total, seed, batch_size=1000) -> WorkloadClient:
        loops = int(self.properties.get("_loops", 1))
        if step.phase == "load":
            return KvLoadClient(self.p, endpoint, index, total, seed, batch_size)
        per = None
        if step.ops_total is not None:
            per = step.ops_total // total + (1 if index < step.ops_total % total else 0)
        counter = keycounter.attach(step.key_counter, self.p.keys_loaded, total, index, step.loop)
        return KvRunClient(self.p, endpoint, index, total, seed, step.loop or 1, loops, per, counter,
                           step.driver)

    def defined_ops(self, step) -> list[str]:
        if step.phase != "run":
            ops = KvLoadClient.op_names
            return ops if self.p.prepare_remove_ratio > 0 else ops[:2]
        return [op for op, x in zip(RUN_OPS, self.p.mix) if x > 0]

    def insert_counter_start(self) -> int:
        """Run inserts claim fresh keys from keys_loaded on (the share the prepare left out first)."""
        return self.p.keys_loaded

    def loaded_rows(self, target, kept) -> list[LoadedTable] | None:
        """The store holds the prepare's inserts less its removes, plus the kept loops'
        inserts less their removes that returned OK; the loop that did not finish may have
        removed at most its logged removes (and a margin) and at most its stream of loaded
        keys (:mod:`.plan`: its removes take those, then only keys it inserted itself), and
        inserted at most its logged inserts (and a margin)."""
        rows = binding(target.dialect).count_keys(target, self.p.table)
        if rows is None:
            return None
        counted = kept.load.get("INSERT", 0) - kept.load.get("DELETE", 0)
        removed = kept.unfinished.get("DELETE", 0)
        if kept.unfinished_loop:
            removed = min(removed, len(range(kept.unfinished_loop - 1, self.p.keys_loaded, self.loops)))
        after = counted + kept.ok("INSERT") - kept.ok("DELETE")
        return [LoadedTable(self.p.table, rows, counted, max(after - removed, 0),
                            after + kept.unfinished.get("INSERT", 0))]

    def extra_tables(self, run_id: str, outcomes: list) -> dict:
        """``returns``: per step and op, how many found their key (OK) and how many
        missed it (EMPTY: a key a remove took away), and any ERROR."""
        return returns_table(run_id, outcomes)


class _KvClient(ReconnectingClient, WorkloadClient):
    driver = "python"   # a run client's binding may run chunks in C (run.driver)

    def __init__(self, p: KvParameters, endpoint, seed: int, index: int):
        self.p = p
        self.rng = seeds.generator(seed, "kv client")
        kind = binding(endpoint.dialect)
        self.prefix = kind.key_prefix(p.table)
        self.pool = ValuePool(self.rng, p.value_size)
        self.link = Reconnecting(lambda: open_binding(endpoint, p.table, self.driver),
                                 f"kv client {index + 1} ({endpoint.dialect.name})",
                                 endpoint.target_class())
        self._bind()

    @property
    def binding(self):
        return self.link.session

    def _keys(self, keynums) -> list[str]:
        return key_strings(keynums, self.p.key_size, self.prefix)

    def _values(self, n: int) -> list[str]:
        return self.pool.values(np.full(n, self.p.value_size, dtype=np.int64))


class KvLoadClient(_KvClient):
    """The prepare: this thread's share of the loaded keys (every ``total``-th from
    ``index``), in batches; then the ``prepare_remove_ratio`` share of them removed, in
    batches. A chunk of about ``LOAD_CHUNK_RECORDS`` keys at a time, made when the driver
    asks for it: the loader holds positions in its share, never its keys."""

    op_names = ["INSERT" + schema.BATCH_SUFFIX, "INSERT", "DELETE" + schema.BATCH_SUFFIX, "DELETE"]
    batch_units = {"INSERT" + schema.BATCH_SUFFIX: "INSERT", "DELETE" + schema.BATCH_SUFFIX: "DELETE"}

    def __init__(self, p, endpoint, index, total, seed, batch_size):
        super().__init__(p, endpoint, seed, index)
        self.index, self.total = index, total
        self.count = len(range(index, p.keys_loaded, total))   # this loader's keys
        self.pos = self.rpos = 0     # positions in the share: next to load, next to look at for removal
        self.batch_size = batch_size

    def _bind(self):
        self.fns = [self.binding.load, self.binding.insert, self.binding.remove,
                    self.binding.delete]

    def _keynums(self, lo: int, hi: int) -> np.ndarray:
        return self.index + np.arange(lo, hi, dtype=np.int64) * self.total

    def _removed(self, n: int) -> np.ndarray:
        """The next (at most) ``n`` keys of the share the prepare removes, in order."""
        out, got, ratio = [], 0, self.p.prepare_remove_ratio
        while got < n and self.rpos < self.count and ratio > 0:
            hi = min(self.count, self.rpos + max(2 * n, PREPARE_REMOVE_PERIOD))
            nums = self._keynums(self.rpos, hi)
            hit = np.flatnonzero(removed_in_prepare(nums, ratio))[:n - got]
            self.rpos = self.rpos + int(hit[-1]) + 1 if len(hit) == n - got else hi
            out.append(nums[hit])
            got += len(hit)
        return np.concatenate(out) if out else np.empty(0, dtype=np.int64)

    def next_chunk(self, max_ops):
        b = self.batch_size
        n = load_chunk_records(max_ops, b, self.count - self.pos, self.p.key_size + self.p.value_size)
        if n:
            keys = self._keys(self._keynums(self.pos, self.pos + n))
            self.pos += n
            pairs = list(zip(keys, self._values(n)))
            batches = [(pairs[i:i + b],) for i in range(0, n, b)]
            return Chunk([0] * len(batches), batches, [len(x[0]) for x in batches])
        keys = self._keys(self._removed(load_chunk_records(max_ops, b, self.count)))
        if not keys:
            return None
        batches = [(keys[i:i + b],) for i in range(0, len(keys), b)]
        return Chunk([2] * len(batches), batches, [len(x[0]) for x in batches])


class KvRunClient(_KvClient):
    """The run loop: the mix for one client thread (see :mod:`.plan`)."""

    op_names = RUN_OPS

    def __init__(self, p, endpoint, index, total, seed, loop, loops, ops_limit, counter=None,
                 driver: str = "python"):
        self.driver = driver
        counter = counter if counter is not None else keycounter.private(p.keys_loaded, total)
        self.streams = KeyStreams(p, index, total, loop, loops, counter)
        super().__init__(p, endpoint, seed, index)
        self.mix = OpMix(p.mix, self.rng)
        # no inserts in the mix: the counter stays where it is and a chunk draws from
        # this client's streams alone, made ahead by the driver (run/chunk_ahead.py)
        self.chunks_ahead = not p.mix[INSERT]
        self.requests = RequestKeys(p, self.rng, counter)
        self.remaining = ops_limit

    def _bind(self):
        b = self.binding
        self._ins = b.insert
        self.fns = [b.read, self._insert, b.delete, b.update, b.scan]
        # the whole chunk in C, where the binding can (Redis over hiredis, run.driver c/auto)
        self.native = b.native(self.op_names) if hasattr(b, "native") else None

    def ops_done(self, codes: np.ndarray) -> None:
        """The C loop ran these operations of the chunk (in order): acknowledge its inserts."""
        n = int(np.count_nonzero(codes == INSERT))
        if n:
            self.streams.counter.ack(self.streams.slot, n)

    def _insert(self, *args):
        try:
            return self._ins(*args)
        finally:   # returned, whatever its status: the key may be read (YCSB's rule)
            self.streams.counter.ack(self.streams.slot)

    def next_chunk(self, max_ops):
        n = max_ops if self.remaining is None else min(max_ops, self.remaining)
        if n <= 0:
            return None
        if self.remaining is not None:
            self.remaining -= n
        codes = self.mix.next_codes(n)
        ins, dels = self.streams.plan(codes)
        keynums = self.requests.next_batch(n)
        keynums[codes == INSERT] = ins
        keynums[codes == DELETE] = dels
        if self.native is not None:   # the C loop makes the keys itself (key_parts)
            parts = key_parts(keynums, self.p.key_size, self.prefix)
            return Chunk(codes.tolist(), (parts, self._values(n), self.p.scan_length))
        keys = self._keys(keynums)
        vals = self._values(n)
        scan_n = self.p.scan_length
        codes = codes.tolist()
        args = [(k,) if c in (0, 2) else (k, scan_n) if c == SCAN else (k, v)
                for c, k, v in zip(codes, keys, vals)]
        return Chunk(codes, prepare_args(self.binding, codes, args))
