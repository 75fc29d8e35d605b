"""CoreWorkload's wiring of the generators: one client's stream of operations.

:class:`CoreWorkloadPlan` is one client's stream of CoreWorkload operations
(``doTransaction*``: operation, key, scan length, fields), produced in chunks;
:func:`load_range` is one loader's share of the load phase. The generators
themselves are shared, in :mod:`benchlib.workloads.generators`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import seeds
from ..generators import (
    MAX_REDRAW_ROUNDS,
    Constant,
    Discrete,
    Exponential,
    Histogram,
    Hotspot,
    ScrambledZipfian,
    Sequential,
    SkewedLatest,
    UniformLong,
    Zipfian,
    build_key_names,
)
from .. import keycounter
from .properties import PROPORTIONS, CoreWorkloadProperties

READ, UPDATE, INSERT, SCAN, READMODIFYWRITE = range(5)  # CoreWorkload's operations, as op codes

# ------------------------------------------------------------ CoreWorkload wiring

def field_length_generator(props: CoreWorkloadProperties, rng: np.random.Generator):
    """``CoreWorkload.getFieldLengthGenerator``: lengths (bytes) of the values to write."""
    d = props.fieldlengthdistribution
    if d == "constant":
        return Constant(props.fieldlength)
    if d == "uniform":
        return UniformLong(props.minfieldlength, props.fieldlength, rng)
    if d == "zipfian":
        return Zipfian(props.minfieldlength, props.fieldlength, rng)
    return Histogram.from_file(props.fieldlengthhistogram, rng)


def key_chooser(props: CoreWorkloadProperties, rng: np.random.Generator,
                client_index: int = 0, n_clients: int = 1):
    """``CoreWorkload.init``'s keychooser for ``requestdistribution``."""
    lo, count, d = props.insertstart, props.insertcount, props.requestdistribution
    if d == "uniform":
        return UniformLong(lo, lo + count - 1, rng)
    if d == "exponential":
        return Exponential(props.exponential_percentile, props.recordcount * props.exponential_frac, rng)
    if d == "sequential":
        return Sequential(lo, lo + count - 1, client_index, n_clients)
    if d == "zipfian":
        # room for the keys the run will insert, so inserts do not shift the popular keys
        expectednewkeys = int(props.operationcount * props.insertproportion * 2.0)
        return ScrambledZipfian(lo, lo + count + expectednewkeys, rng, props.zipfianconstant)
    if d == "latest":
        return SkewedLatest(props.recordcount - 1, rng, props.zipfianconstant)
    return Hotspot(lo, lo + count - 1, props.hotspotdatafraction, props.hotspotopnfraction, rng)


@dataclass
class OpChunk:
    """A chunk of one client's operations, in the order they run."""

    op: np.ndarray           # uint8: READ, UPDATE, INSERT, SCAN, READMODIFYWRITE = 0..4
    keynum: np.ndarray       # int64: the record (scan start); for INSERT the new keynum
    scan_len: np.ndarray     # int32: records to scan (SCAN), else 0
    field: np.ndarray        # int16: field read (READ/SCAN/RMW) or written (UPDATE); -1 = all
    write_field: np.ndarray  # int16: field written by UPDATE/RMW; -1 = all (or no write)
    n_values: np.ndarray     # int16: field values the op writes (INSERT: fieldcount)

    def __len__(self) -> int:
        return len(self.op)


class CoreWorkloadPlan:
    """One client's CoreWorkload transaction stream, produced in chunks.

    Run-phase inserts, as YCSB's ``transactioninsertkeysequence``: one acknowledged
    counter (:mod:`..keycounter`) shared by the host's client threads and processes,
    starting at recordcount. A chunk claims the keys of its inserts from it, and
    draws every other op's key up to its ``last_value`` at draw time (the highest key
    below which every insert returned: stale by the time the chunk runs, which is
    safe, it only grows); the client acknowledges its inserts as they return
    (:meth:`acknowledge`). So no read, update, scan or read-modify-write asks for a key
    whose insert has not returned, whatever the distribution or the clients' pace.
    """

    def __init__(self, props: CoreWorkloadProperties, client_index: int = 0, n_clients: int = 1,
                 seed: int | None = None, counter=None):
        if not 0 <= client_index < n_clients:
            raise ValueError(f"client_index {client_index} not in [0, {n_clients})")
        self.props, self.client_index, self.n_clients = props, client_index, n_clients
        # a stream of its own: not the one the client's values draw from (seeds.py)
        ss = seeds.sequence(seed, f"ycsb plan {client_index}")
        r_op, r_key, r_scan, r_field, r_len = (np.random.default_rng(s) for s in ss.spawn(5))
        self.ops = Discrete([getattr(props, p) for p in PROPORTIONS], r_op)
        keyed = props.readproportion + props.updateproportion + props.scanproportion \
            + props.readmodifywriteproportion > 0
        self.keys = key_chooser(props, r_key, client_index, n_clients) if keyed else None
        scan_gen = Zipfian if props.scanlengthdistribution == "zipfian" else UniformLong
        self.scan_lengths = scan_gen(props.minscanlength, props.maxscanlength, r_scan)
        self.fields = UniformLong(0, props.fieldcount - 1, r_field)
        self.field_length = field_length_generator(props, r_len)
        self.counter = counter if counter is not None else keycounter.private(props.recordcount, n_clients)
        self.holes = self.counter.holes()   # claimed by an earlier step, never inserted
        self.inserts_done = 0

    @property
    def last_keynum(self) -> int:
        """The acknowledged last inserted key (YCSB: transactioninsertkeysequence.lastValue())."""
        return self.counter.last_value()

    def acknowledge(self, n: int = 1) -> None:
        """This client's next ``n`` planned inserts returned (in the order planned)."""
        if n:
            self.counter.ack(self.client_index, n)

    def field_lengths(self, n: int) -> np.ndarray:
        """Lengths in bytes of ``n`` field values (e.g. ``chunk.n_values.sum()`` of them)."""
        return self.field_length.next_batch(n)

    def key_names(self, keynums) -> list[str]:
        """Key strings of keynums, per ``insertorder`` and ``zeropadding``."""
        return build_key_names(keynums, self.props.insertorder == "hashed", self.props.zeropadding)

    def next_chunk(self, n: int) -> OpChunk:
        """The next ``n`` operations of this client."""
        p = self.props
        op = self.ops.next_batch(n).astype(np.uint8)
        is_insert = op == INSERT
        m = int(is_insert.sum())
        keynum = np.empty(n, dtype=np.int64)
        start = self.counter.claim(self.client_index, m)
        keynum[is_insert] = self.counter.keynums(np.arange(start, start + m, dtype=np.int64))
        keyed = ~is_insert
        last = np.full(int(keyed.sum()), self.counter.last_value(), dtype=np.int64)
        keynum[keyed] = self.counter.keynums(self._next_keynums(last))
        self.inserts_done += m

        scan_len = np.zeros(n, dtype=np.int32)
        is_scan = op == SCAN
        scan_len[is_scan] = self.scan_lengths.next_batch(int(is_scan.sum()))
        field = np.full(n, -1, dtype=np.int16)
        write_field = np.full(n, -1, dtype=np.int16)
        reads = is_scan | (op == READ) | (op == READMODIFYWRITE)
        writes = (op == UPDATE) | (op == READMODIFYWRITE)
        if not p.readallfields:
            field[reads] = self.fields.next_batch(int(reads.sum()))
        if not p.writeallfields:  # RMW reads one field and writes another, independently drawn
            write_field[writes] = self.fields.next_batch(int(writes.sum()))
        field[op == UPDATE] = write_field[op == UPDATE]
        n_values = np.zeros(n, dtype=np.int16)
        n_values[writes] = p.fieldcount if p.writeallfields else 1
        n_values[is_insert] = p.fieldcount
        return OpChunk(op, keynum, scan_len, field, write_field, n_values)

    def _next_keynums(self, last: np.ndarray) -> np.ndarray:
        """``CoreWorkload.nextKeynum`` for each draw, with its own last-inserted bound."""
        d = self.props.requestdistribution
        if len(last) == 0:
            return np.empty(0, dtype=np.int64)
        if d == "latest":
            out = self.keys.next_for(last)  # ≤ last by construction
            for _ in range(MAX_REDRAW_ROUNDS):
                bad = np.flatnonzero(self._in_holes(out))
                if len(bad) == 0:
                    return out
                out[bad] = self.keys.next_for(last[bad])
            raise RuntimeError("latest: keys keep falling in never-inserted keys")
        exponential = d == "exponential"
        out = (last - self.keys.next_batch(len(last))) if exponential else self.keys.next_batch(len(last))
        for _ in range(MAX_REDRAW_ROUNDS):
            bad = np.flatnonzero((out < 0) | self._in_holes(out) if exponential
                                 else (out > last) | self._in_holes(out))
            if len(bad) == 0:
                return out
            draw = self.keys.next_batch(len(bad))
            out[bad] = last[bad] - draw if exponential else draw
        raise RuntimeError(f"{d}: keys keep falling outside [0, last inserted keynum] "
                           f"after {MAX_REDRAW_ROUNDS} redraws")

    def _in_holes(self, keys: np.ndarray) -> np.ndarray:
        """Keys claimed by an earlier step whose inserts never ran (redrawn, as YCSB
        redraws a key past lastValue)."""
        return keycounter.in_holes(keys, self.holes)


def load_range(props: CoreWorkloadProperties, loader_index: int = 0,
               n_loaders: int = 1) -> tuple[int, int]:
    """The keynums [start, stop) loader ``loader_index`` of ``n_loaders`` inserts, in order.

    [insertstart, insertstart + insertcount) cut into contiguous parts, the first
    ``insertcount % n_loaders`` parts one longer, like YCSB's split loading with
    insertstart/insertcount per instance (and its per-thread operation counts). Two
    numbers, not the keys: the loader makes each chunk's keys as it comes to them.
    """
    if not 0 <= loader_index < n_loaders:
        raise ValueError(f"loader_index {loader_index} not in [0, {n_loaders})")
    base, extra = divmod(props.insertcount, n_loaders)
    start = props.insertstart + loader_index * base + min(loader_index, extra)
    return start, start + base + (loader_index < extra)


def load_keynums(props: CoreWorkloadProperties, loader_index: int = 0,
                 n_loaders: int = 1) -> np.ndarray:
    """The keynums of :func:`load_range`, as an array."""
    return np.arange(*load_range(props, loader_index, n_loaders), dtype=np.int64)
