"""The workload interface the driver runs: steps, and per client thread a stream of
operations prepared in chunks before they are timed.

A workload names its operations (codes 0..n-1 index ``op_names``) and, per client
thread, returns a :class:`WorkloadClient` whose ``fns[code](*args)`` performs one
operation and returns a status (``schema.OK``, ``NOT_FOUND``, ``ERROR``, as YCSB's
Status; ``RETRY`` and ``EMPTY`` are outcomes, not errors: see ``schema.NOT_ERRORS``). Everything that can be computed before the run — keys, values, scan
lengths, the choice of the operation — is in the chunk: the driver's hot loop only
calls, times and appends.

The shape fits the workloads to come without change: a social graph's
multi-statement transactions are one ``fn`` each; a row-I/O benchmark's range scan
or batched update is one ``fn`` with its range in ``args``; a key-value mix on Redis
is a binding with get/set/… fns. Batched operations (a multi-row insert) set
``batch_units`` so that the driver counts records, not batches.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .stepplan import StepPlan, StepSpec, build_steps

# what an integer property may hold: counts, ids and sizes live in 64-bit columns and numpy
# arrays (int64), with room for the arithmetic on them (an id plus the nodes added)
INT_LIMIT = 2**62
# a load's chunk: about this many records generated at once (fewer when they are large,
# whole batches, at least one), then written, then dropped: a load's memory is its
# chunk's, whatever the data's size
LOAD_CHUNK_RECORDS = 10_000
LOAD_CHUNK_BYTES = 16 << 20


def check_int_limits(model) -> None:
    """ValueError naming the first integer field of a pydantic ``model`` past INT_LIMIT:
    refused at validation, never an OverflowError inside a step."""
    for key, value in model:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > INT_LIMIT:
            raise ValueError(f"{key}: at most {INT_LIMIT:,} (a 64-bit count or id), got {value}")


def load_chunk_records(max_ops: int, batch_size: int, left: int, record_bytes: int = 0) -> int:
    """How many of the ``left`` records a load generates for its next chunk: whole
    batches of ``batch_size`` (at most ``max_ops`` of them), about
    :data:`LOAD_CHUNK_RECORDS` records of ``record_bytes`` and no more than
    :data:`LOAD_CHUNK_BYTES`, but never less than one batch."""
    b = max(1, batch_size)
    records = min(LOAD_CHUNK_RECORDS, LOAD_CHUNK_BYTES // max(1, record_bytes))
    batches = max(1, min(max_ops, records // b))
    return max(0, min(left, batches * b))


@dataclass
class KeptCounts:
    """What a resumed run's kept steps did, for :meth:`Workload.loaded_rows`: the load
    step's count per op (records, a batch's units), the kept run loops' counts per op and
    status (``returns``), and for the loop that did not finish an upper bound of each op's
    count (its logged seconds and a margin for those not logged) and its number."""

    load_ops: int
    load: dict[str, int]
    runs: dict[str, dict[str, int]]
    unfinished: dict[str, int]
    unfinished_loop: int | None = None

    def ok(self, op: str) -> int:
        """The kept run loops' ``op`` that returned OK (an insert that inserted)."""
        return int(self.runs.get(op, {}).get("OK", 0))


@dataclass(frozen=True)
class LoadedTable:
    """One loaded table as a rerun finds it (:meth:`Workload.loaded_rows`)."""

    name: str
    rows: int            # what it holds now
    counted: int         # what the load step counted
    floor: int           # the fewest it may hold after the kept steps and the unfinished one
    ceiling: int | None = None   # the most (None: run loops may insert without bound)

    def why_not(self) -> str | None:
        """One line when the table is not the one the kept steps left, else None."""
        if self.floor <= self.rows and (self.ceiling is None or self.rows <= self.ceiling):
            return None
        line = f"the loaded table {self.name} holds {self.rows:,} rows, the load counted {self.counted:,}"
        if self.rows < self.floor != self.counted:
            line += f" (the kept steps leave at least {self.floor:,})"
        elif self.ceiling is not None and self.rows > self.ceiling != self.counted:
            line += f" (the kept steps leave at most {self.ceiling:,}: another run used it?)"
        return line


@dataclass
class Chunk:
    codes: Sequence[int]           # operation codes, in the order they run
    args: Sequence[tuple]          # the arguments of each operation
    units: Sequence[int] | None = None  # records per operation when batched, else None



class WorkloadClient:
    """One client thread's view of a workload. Subclasses set ``op_names``, ``fns``."""

    op_names: list[str]
    fns: list[Callable[..., int]]
    # batched ops are counted in records: e.g. {"INSERT-BATCH": "INSERT"} records each
    # batch's latency under INSERT-BATCH and count × (latency / count) under INSERT;
    # {"LOAD_LINKS_BULK": None} keeps only the batch's latency and counts its records
    # as the step's operations (LinkBench's LOAD_*_BULK)
    batch_units: dict[str, str] = {}
    # True when next_chunk draws from the client's own streams alone (nothing its
    # operations change meanwhile, such as the acknowledged-insert counter): the driver
    # then makes each chunk while the previous one runs (run/chunk_ahead.py)
    chunks_ahead: bool = False

    def next_chunk(self, max_ops: int) -> Chunk | None:
        """The next operations, at most ``max_ops``; None when the client is done."""
        raise NotImplementedError

    def is_broken(self) -> bool:
        """True when the connection is gone (the DBMS died or dropped us)."""
        return False

    def reconnect(self) -> None:
        """Open a new connection and rebind ``fns``."""

    def close(self) -> None:
        pass

    # a client may also have ``counters() -> dict``: its own counts over the step (JSON
    # values), which its process hands to the controller (ClientResult.thread_counters)


class Workload:
    """A workload as the runner drives it; one folder in ``workloads/`` and one
    registry line (:mod:`benchlib.registries.workloads`). Built from the experiment's resolved properties
    (``properties`` of the YAML over those of ``workload_file``); the constructor
    raises ValueError with one line naming the property on a bad value, which params
    reports before anything runs.

    Steps whose ``phase`` is in :attr:`controller_phases` (an index build) run in the
    controlling process through :meth:`run_in_controller`; the others run on the
    client processes, each thread with its :meth:`client`.
    """

    name: str = ""
    # the property of a file run as it is that gives the run's client threads
    threads_property: str = "threadcount"
    # that property, when the properties set it, is the run's threads in a YAML too
    # (LinkBench's requesters): run.threads follows it (workload_params.threads_as_property)
    threads_from_property: bool = False
    # the load modes it has (load.mode): fast, its own; java, the reference client's
    load_modes: tuple[str, ...] = ("fast",)
    # the run's seed (meta.json's), set by the runner before the steps: a workload's
    # text outputs may say it (linkbench.log's "Using random seed …")
    run_seed: int | None = None
    controller_phases: frozenset[str] = frozenset({"index"})
    # analysis notebooks (notebooks/<name>.ipynb) the report runs for this workload,
    # after summary, heatmaps and timeseries
    report_notebooks: tuple[str, ...] = ()
    # its ops' roles, which the runner and the summaries ask for instead of knowing op names:
    # compound ops, whose inner operations the client also times under their own names
    # (YCSB's READ-MODIFY-WRITE: its READ and UPDATE), with how many each has — the step's
    # operation count takes the compound op once, not its parts again, and the seed's
    # table shows its operations, no Return= line —; insert ops, each claiming a key from
    # the run's acknowledged counter (insert_counter_start): a resumed run skips past as
    # many as the killed step may have made
    compound_ops: dict[str, int] = {}
    insert_ops: tuple[str, ...] = ()
    # the most failed operations a step may have whatever its length (LinkBench's
    # max_failed_requests); None: run.max_error_ratio alone decides
    max_failed_ops: int | None = None
    # properties a list of values makes a matrix of: one run per combination
    # (params.plan expands them; the run's properties hold one value of each)
    matrix_properties: tuple[str, ...] = ()
    # properties that shape the run loops only, never what the load writes (YCSB's mix):
    # the load-once key (run/loaded_data.py) leaves them out, so their points share a load
    load_free_properties: tuple[str, ...] = ()
    # the prefixes of its dotted properties (a binding's ``db.``): ``-p`` passes only these
    # (benchlib/overrides.py); another dotted key near a section is refused
    property_prefixes: tuple[str, ...] = ()
    # how the summaries show its ops (summaries/response.py): in this order, with these
    # short codes (the seeds' ``gn``, ``rd``: p99 ``gn``, triple ``gn9 gnx gnm``), and the
    # transaction line's main ops (empty: a run's most frequent)
    op_order: tuple[str, ...] = ()
    op_codes: dict[str, str] = {}
    main_ops: tuple[str, ...] = ()
    # its own tables and plots beside the shared ones: modules of its folder, by name, that
    # the layers above import (summaries.own_tables, plots.own), never this class: tables
    # (functions of load_results' dict → DataFrame or text), matplotlib plots, and plotly
    # ones with the same names and arguments (plots*.py sit on the plots layer); "": none
    summary_tables: str = ""
    plots: str = ""
    interactive_plots: str = ""

    def __init__(self, properties: dict):
        self.properties = dict(properties)

    # --- parameters
    @classmethod
    def recognizes(cls, properties: dict) -> bool:
        """True when a property file given to ``benchlib run`` as it is belongs to this
        workload (LinkBench's configs name ``linkstore``); YCSB is the default."""
        return False

    @classmethod
    def native_missing(cls, dialect: str) -> str | None:
        """Why the run clients cannot hand the driver ``native`` ops (a chunk run in C) on
        ``dialect`` (None: they can; run.driver c is refused otherwise)."""
        return f"workload {cls.name} has no C loop"

    @classmethod
    def read_properties_file(cls, path) -> dict:
        """The properties of a ``workload_file`` (Java .properties by default)."""
        from .properties_file import read_property_file
        return read_property_file(path)

    @classmethod
    def check_experiment(cls, exp) -> None:
        """Checks that need the whole experiment (bounds of the run loops …); ValueError
        with a message that starts with the key it names."""
        for point in matrix_points(exp.workload_properties(), cls.matrix_properties):
            cls({**exp.workload_properties(), **point})

    @classmethod
    def resembles(cls, properties: dict) -> str | None:
        """For a property file no workload claimed: a line saying which of its keys are
        this workload's, and what would make it claim the file; None when none is."""
        return None

    def defined_ops(self, step: StepSpec) -> list[str] | None:
        """The ops a step of this workload can run (a share > 0 of its mix): every one
        has a latency row, a blank one where the dice gave it no turn, so that summary
        lines have the same columns whatever ran; None: those that ran."""
        return None

    def insert_counter_start(self) -> int | None:
        """The first key run-phase inserts claim from the run's shared acknowledged
        counter (:mod:`.keycounter`); None: the workload has none."""
        return None

    def loaded_rows(self, target, kept: KeptCounts) -> list[LoadedTable] | None:
        """Each loaded table's rows now beside what the load step counted and the fewest
        (and most, where that is known) it may hold after the steps ``kept`` and the one
        that did not finish: a rerun resumes only when every table is within them.
        None: it cannot tell (no table to count), and the run goes again."""
        return None

    def steps(self, exp, spec) -> list[StepSpec]:
        """The run's steps, in order (load ``l.pre``, index ``l.post``, loops ``r.L1`` …):
        the runner's, made of :meth:`step_plan` (``stepplan.build_steps``)."""
        return build_steps(exp, spec, self.step_plan(exp, spec))

    @classmethod
    def own_load_threads(cls, properties: dict) -> int | None:
        """Its load's threads when its properties decide them (LinkBench's loaders), else
        None (``load.threads``): ``load.processes: auto`` takes no more processes."""
        return None

    def step_plan(self, exp, spec) -> StepPlan:
        """What it loads, whether it indexes, what a loop runs and its defaults: a
        ``stepplan.StepPlan`` (keyword-only facts) for this run point."""
        raise NotImplementedError

    # --- schema and controller-side steps (the controlling process)
    def load_tables(self) -> list:
        """The tables its load makes (``targets.ownership.TableShape``: name, columns, the
        property naming it), known once :meth:`steps` ran: the runner refuses a load into
        one benchlib did not make, before anything is written, and marks them once made."""
        return []

    def setup(self, target, step: StepSpec) -> None:
        """Before a load step: create the schema (the runner has checked it may)."""

    def after_step(self, target, step: StepSpec, outcome) -> None:
        """After a step ended ok (e.g. ANALYZE after the load)."""

    def run_in_controller(self, target, step: StepSpec) -> int:
        """A controller step (an index build); returns the rows it processed."""
        raise NotImplementedError

    # --- client side (each client process builds its own Workload)
    def client(self, step: StepSpec, endpoint, index: int, total: int, seed: int,
               batch_size: int = 1000) -> WorkloadClient:
        raise NotImplementedError

    # --- outputs
    def progress(self, step: StepSpec) -> Callable[[list[dict], float, bool], list[str]] | None:
        """The workload's own progress lines on the terminal during ``step``, in place of
        the status lines: a function the step's controller calls with each batch of the
        step's interval rows (in order, before they are stored: a batch's ``_records``
        still there), the seconds since the step started and whether they are the step's
        last, which returns the lines to print. None (the default): the status lines
        every ``status_interval_s``."""
        return None

    def text_outputs(self, outcomes: list, intervals=None) -> dict[str, str]:
        """Files in the workload's own text format, written into the run folder
        (``intervals(columns=None)``: the run's interval rows, each with its ``step``, read
        from disk only by a workload that asks, ``columns`` only if given: the controller
        holds no second once written)."""
        return {}

    def extra_tables(self, run_id: str, outcomes: list) -> dict:
        """Tables of the workload's own (name -> DataFrame), written into the run folder."""
        return {}


def returns_table(run_id: str, outcomes: list) -> dict:
    """``{"returns": frame}``: per step and op, how many operations ended in each
    status (OK, EMPTY, RETRY, NOT_FOUND, ERROR), from the steps' latency rows."""
    import pandas as pd
    rows = [{"run_id": run_id, "step": o.step.name, "op": r["op"], "status": k, "count": int(v)}
            for o in outcomes for r in o.latency_rows
            if not r["op"].startswith("Intended-") for k, v in (r.get("returns") or {}).items()]
    return {"returns": pd.DataFrame(rows)} if rows else {}


def matrix_points(properties: dict, names: Sequence[str]) -> list[dict[str, Any]]:
    """The points of a workload's own matrix: every combination of the values of the
    ``names`` whose property is a list, in the order given ([{}] when none is)."""
    from itertools import product
    axes = [(n, properties[n]) for n in names if isinstance(properties.get(n), list)]
    if any(not values for _, values in axes):
        empty = next(n for n, values in axes if not values)
        raise ValueError(f"{empty}: an empty list")
    for name, values in axes:   # a value twice would plan one run twice
        if (dup := next((v for i, v in enumerate(values) if v in values[:i]), None)) is not None:
            raise ValueError(f"{name}: {dup!r} given twice: each value makes its own runs")
    return [dict(zip([n for n, _ in axes], combo)) for combo in product(*(v for _, v in axes))]


@dataclass(frozen=True)
class WorkloadSpec:
    """A picklable description from which a client process builds its workload:
    ``ref`` is a ``module:Class`` reference (see :func:`benchlib.registries.workloads.ref_of`)."""

    ref: str
    properties: dict[str, Any]

    def build(self) -> Workload:
        from ..registries.workloads import workload_class
        return workload_class(self.ref)(self.properties)
