"""Experiments: the YAML (or a YCSB property file) → a validated model → a plan of runs.

An experiment is a workload with its properties, one or more targets (a DBMS
configuration each: the seed's ``cnf``), and a matrix like the seed's:
targets × loader processes × run threads × target-throughput factors × repetitions.
Each point of the matrix is a :class:`RunSpec`: one run folder, with a load step,
an optional index step and ``loops`` run loops.

Everything is validated before anything runs: an unknown key, a proportion sum ≠ 1,
a bad URL each give one line naming the file, the key and what is allowed
(:class:`ParameterError`; the CLI exits 2).
"""
from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from . import loaders
from .inputfiles import load_yaml
from .overrides import ParameterError, parse_override  # noqa: F401 - params' own names
from .matrix import MAX_RATE, MAX_SECONDS, Factors, check_run_ids, distinct, target_configurations
from .overrides import apply_overrides as _apply_overrides
from .param_errors import one_line
from .workload_params import check_load_mode, threads_as_property
from .hw.spec import HwSpec
from .masking import mask_text, mask_url
from .registries import executors as executor_registry
from .registries.targets import check_options, target_class, target_kind
from .registries import workloads as workload_registry
from .workloads.properties_file import PropertyFileError, read_text_file

IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"   # a plain SQL name: quoted, never pasted raw
MAX_THREADS = 4096          # client connections of one run
MAX_PROCESSES = 256
THREAD_MEMORY_MB = 8        # what one client thread with its connection and chunk costs, about


class Strict(BaseModel):
    # one rule for every number of an experiment: finite (inf and nan are no duration,
    # rate or share); durations and rates are bounded too (MAX_SECONDS, MAX_RATE)
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


class TargetSpec(Strict):
    """One DBMS configuration: a name (the summaries' ``cnf``) and where it is."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    options: dict[str, Any] = Field(default_factory=dict)   # before url: its check reads them
    url: str

    @field_validator("url")
    @classmethod
    def _url(cls, v: str, info) -> str:
        mask_url(v)   # its secrets known from now on: a driver's message quoting one is masked
        try:
            check_options(v, info.data.get("options") or {})  # kind, then e.g. MariaDB's driver
        except ValueError as e:
            raise ValueError(mask_text(str(e))) from None
        return v

    @property
    def kind(self) -> str:
        return target_kind(self.url)


class LoadSpec(Strict):
    """The load step (``l.pre``)."""

    skip: bool = False      # no load: run against the tables there (their columns checked)
    # replace an existing table of the name the load creates that benchlib did not make
    # (without: refused in one line, targets/ownership.py); benchlib's own are replaced anyway
    replace: bool = False
    # a target that starts its own server from a data directory loads once per version and
    # copies the data for the other runs (run/loaded_data.py); fresh: every run loads
    fresh: bool = False
    # the load's connections, split among its loader processes; auto: one per loader process
    threads: Annotated[int, Field(ge=1, le=MAX_THREADS)] | Literal["auto"] = "auto"
    # loader processes, a matrix list, as the seed splits into pods; auto: one per core
    # (loaders.py: at most 32, the target's client processes and the load's threads)
    processes: Annotated[list[int | Literal["auto"]], AfterValidator(distinct)] = \
        Field(default_factory=lambda: [loaders.AUTO])
    batch_size: int = Field(1000, ge=1, le=100_000)
    target_factors: Factors = Field(default_factory=lambda: [0.0])  # 0 = unthrottled
    # fast: benchlib's (bulk batches, secondary indexes after); java: as the reference
    # client loads (LinkBench's: INSERT batches into tables with their index), where the
    # workload has it (Workload.load_modes)
    mode: Literal["fast", "java"] = "fast"

    _procs = field_validator("processes", mode="before")(
        lambda cls, v: loaders.check_processes(v, MAX_PROCESSES))
    _threads = field_validator("threads", mode="before")(lambda cls, v: loaders.check_threads(v, MAX_THREADS))

    @model_validator(mode="after")
    def _skip_or_replace(self):
        if self.skip and self.replace:
            raise ValueError("skip and replace: one runs against the table there, the other "
                             "loads a new one in its place; choose one")
        return self


class IndexSpec(Strict):
    """The optional index step (``l.post``): a secondary index created after the load."""

    enabled: bool = False
    column: str = Field("field0", pattern=IDENTIFIER)


class RunLoopSpec(Strict):
    """The run loops (``r.L1`` … ``r.Ln``)."""

    skip: bool = False
    threads: Annotated[list[int], AfterValidator(distinct)] = Field(default_factory=lambda: [1])
    processes: Annotated[int, Field(ge=1, le=MAX_PROCESSES)] | Literal["auto"] = "auto"  # threads split among them
    target_base: float = Field(16384, gt=0, le=MAX_RATE)
    target_factors: Factors = Field(default_factory=lambda: [0.0])  # 0 = unthrottled
    loops: int = Field(1, ge=1, le=1000)
    loop_secs: float | None = Field(None, gt=0, le=MAX_SECONDS)  # each loop runs this long (else operationcount)
    warmup_secs: float = Field(0.0, ge=0, le=MAX_SECONDS)        # excluded from the loop's latency summary
    status_interval_s: float = Field(10.0, gt=0, le=MAX_SECONDS)
    max_error_ratio: float = Field(0.01, ge=0, le=1)   # a step fails past this share of failed ops
    # one thread per client process drives all its connections (unpaced loops: the C
    # loops over libpq, libmariadb and hiredis, the Python loop over psycopg's async API),
    # as pgbench -j does; else a thread per connection.
    # auto: where it measured faster (BENCHMARKS.md): the C loop from 2 connections per
    # process on, the Python loop from 4
    multiplex: bool | Literal["auto"] = "auto"
    # the run loops' hot path: c (chunks in C over libpq, libmariadb or hiredis: YCSB on
    # PostgreSQL and MariaDB, kv on Redis, the extension built), python, or auto (C where
    # it can); see driver_path
    driver: Literal["auto", "c", "python"] = "auto"

    @field_validator("threads")
    @classmethod
    def _threads(cls, v):
        if not v or any(t < 1 for t in v):
            raise ValueError("a non-empty list of thread counts ≥ 1")
        if (big := max(v)) > MAX_THREADS:
            raise ValueError(f"{big} threads: at most {MAX_THREADS} (each client thread holds a "
                             f"connection and its prepared operations, ~{THREAD_MEMORY_MB} MB: "
                             f"{big} would take ~{big * THREAD_MEMORY_MB / 1024:.0f} GB)")
        return v

    @model_validator(mode="after")
    def _warmup(self):
        if self.loop_secs is not None and self.warmup_secs >= self.loop_secs:
            raise ValueError(f"warmup_secs {self.warmup_secs:g} ≥ loop_secs {self.loop_secs:g}: "
                             "nothing of the loop would be measured")
        return self


class DaskSpec(Strict):
    """A running scheduler (``dask scheduler``, a deployer's), or else a local cluster."""
    scheduler: str | None = Field(None, pattern=r"^([a-z]+://)?[A-Za-z0-9_.\-\[\]:]+:\d{1,5}$")  # tcp://host:8786
    workers: int = Field(2, ge=1, le=MAX_PROCESSES)   # also what run.processes: auto means
    dbms_worker: str | None = None   # the worker (its name) that samples the DBMS host (hw.dbms: dask)


class Experiment(Strict):
    """A validated experiment (see parameters/*.yaml)."""

    experiment: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    workload: str = Field(default_factory=workload_registry.default)  # a registered name
    workload_file: str | None = None   # the workload's own property file, relative to the YAML
    properties: dict[str, Any] = Field(default_factory=dict)
    targets: list[TargetSpec]
    load: LoadSpec = Field(default_factory=LoadSpec)
    index: IndexSpec = Field(default_factory=IndexSpec)
    run: RunLoopSpec = Field(default_factory=RunLoopSpec)
    repetitions: int = Field(1, ge=1, le=100)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)   # the run's streams derive from it (seeds.py)
    # how a step's client processes start: here (local) or as tasks on a Dask cluster
    executor: str = Field(default_factory=executor_registry.default)  # run/registry.py's names
    dask: DaskSpec = Field(default_factory=DaskSpec)
    hw: HwSpec = Field(default_factory=HwSpec)   # where the DBMS host's figures come from
    base: str | None = None   # the target (configuration) the others are set against: summary --kind configs
    source: str | None = None          # the file it was read from (set by the loader)

    @field_validator("workload")
    @classmethod
    def _workload(cls, v: str) -> str:
        workload_registry.workload_class(v)  # ValueError naming the known workloads
        return v

    _executor = field_validator("executor")(lambda cls, v: executor_registry.check(v))

    @model_validator(mode="before")
    @classmethod
    def _configurations(cls, data):
        # a target's version and settings lists: one target (DBMS configuration) per combination
        if isinstance(data, dict) and "targets" in data:
            data = {**data, "targets": target_configurations(data["targets"])}
        return data

    @model_validator(mode="after")
    def _check(self):
        names = [t.name for t in self.targets]
        if not names:
            raise ValueError("targets: at least one target")
        if len(set(names)) != len(names):
            raise ValueError(f"targets: names must be unique, got {names}")
        if self.base is not None and self.base not in names:
            raise ValueError(f"base: {self.base!r} is no target (targets: {', '.join(names)})")
        for t in self.targets:
            _check_processes(t, self.run.processes, self.load.processes)
        for t in self.targets if self.run.driver == "c" else ():
            if m := self.workload_class().native_missing(target_class(t.kind).dialect.name):
                raise ValueError(f"run.driver: c: target {t.name}: {m}")
        return self

    def workload_class(self) -> type:
        return workload_registry.workload_class(self.workload)

    def workload_properties(self) -> dict[str, Any]:
        """The workload's properties: the workload file's, overridden by ``properties``."""
        props: dict[str, Any] = {}
        if self.workload_file:
            base = Path(self.source).parent if self.source else Path.cwd()
            path = Path(self.workload_file)
            if not path.is_absolute():
                path = base / path
            props.update(self.workload_class().read_properties_file(path))
        props.update(self.properties)
        return props


class RunSpec(BaseModel):
    """One point of the matrix: one run folder."""

    model_config = ConfigDict(frozen=True)
    run_id: str
    target: TargetSpec
    load_processes: int
    load_processes_auto: int | None = None   # what load.processes auto is for this target here
    load_target_ops_per_s: float | None
    threads: int
    processes: int
    target_ops_per_s: float | None
    repetition: int
    # this run's values of the workload's matrix properties (Workload.matrix_properties)
    workload_point: dict[str, Any] = Field(default_factory=dict)


def _process_cap(t: TargetSpec, attr: str = "client_processes") -> int | None:
    """The most client processes a step on ``t`` may have (None: any; a target whose
    driver is missing is told where it is made); ``load_writers``: load.processes auto's."""
    try:
        return getattr(target_class(t.kind), attr)
    except ImportError:
        return None


def _check_processes(t: TargetSpec, run_processes, load_processes: list[int]) -> None:
    cap = _process_cap(t)
    if cap is None:
        return
    for key, n in (("run.processes", run_processes if run_processes != "auto" else 1),
                   ("load.processes", max((p for p in load_processes if p != loaders.AUTO), default=1))):
        if n > cap:
            raise ValueError(f"{key}: {n}: target {t.name} ({t.kind}) is opened by at most {cap} "
                             "client process (its threads share it): give the threads alone")


def _point_suffix(point: dict[str, Any]) -> str:
    """``-batch_size100-pct_update10``: a run's workload point in its run_id."""
    return "".join(f"-{k}{re.sub(r'[^A-Za-z0-9_.]', '_', str(v))}" for k, v in point.items())


def plan(exp: Experiment) -> list[RunSpec]:
    """Expand the matrix into runs, in the order they execute: targets × loader
    processes × load factors × threads × run factors × the workload's own matrix
    (its list-valued ``matrix_properties``) × repetitions."""
    from .workloads.base import matrix_points
    points = matrix_points(exp.workload_properties(), exp.workload_class().matrix_properties)
    runs = [r for point in points for r in _plan_point(exp, point)]
    order = [t.name for t in exp.targets]  # a target's runs together, as without a point
    return check_run_ids(sorted(runs, key=lambda r: order.index(r.target.name)), exp.source or exp.experiment)


def _plan_point(exp: Experiment, point: dict[str, Any]) -> list[RunSpec]:
    cpus = exp.dask.workers if exp.executor == "dask" else os.cpu_count() or 1  # "auto": per core/worker
    runs, base = [], exp.run.target_base
    own = exp.workload_class().own_load_threads({**exp.workload_properties(), **point})
    for target in exp.targets:
        cap = _process_cap(target)
        lps, auto = loaders.loader_counts(exp.load, own, cpus, cap, _process_cap(target, "load_writers"))
        for lp, lf, threads, rf, rep in itertools.product(
                lps, exp.load.target_factors, exp.run.threads, exp.run.target_factors,
                range(1, exp.repetitions + 1)):
            procs = min(threads, cpus) if exp.run.processes == "auto" else min(int(exp.run.processes), threads)
            procs = min(procs, cap or procs)
            tgt, ltgt = (rf * base if rf > 0 else None), (lf * base if lf > 0 else None)
            rid = f"{target.name}-t{threads}-p{procs}-l{lp}-tgt{int(tgt or 0)}{_point_suffix(point)}-r{rep}"
            runs.append(RunSpec(run_id=rid, target=target, load_processes=lp, load_processes_auto=auto,
                                load_target_ops_per_s=ltgt, threads=threads, processes=procs,
                                target_ops_per_s=tgt, repetition=rep, workload_point=point))
    return runs


# ---------------------------------------------------------------- loading

def apply_overrides(data: dict, overrides: list[str]) -> dict:
    """Apply ``-p key=value`` (:mod:`.overrides`): a section's key, or a workload property
    (a dotted one only under a prefix the workload declares)."""
    name = data.get("workload") or workload_registry.default()
    try:   # a malformed workload name is validation's to refuse, in its one line
        prefixes = workload_registry.workload_class(name).property_prefixes if isinstance(name, str) else ()
    except (ValueError, AttributeError):
        prefixes = ()
    return _apply_overrides(data, overrides, Experiment.model_fields, tuple(prefixes))


def load_experiment(path: str | Path, overrides: list[str] | None = None) -> Experiment:
    """Read, override and fully validate an experiment YAML; ParameterError on any fault."""
    path = Path(path)
    try:
        data = load_yaml(read_text_file(path))
    except PropertyFileError as e:
        raise ParameterError(str(e)) from None
    except RecursionError:
        raise ParameterError(f"{path}: nested too deep to be an experiment") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise ParameterError(f"{path}{where}: not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(data, dict):
        raise ParameterError(f"{path}: expected a mapping of keys (experiment, workload, targets, …)")
    data = apply_overrides(data, overrides or [])
    data["source"] = str(path)
    return validate(data, str(path))


def validate(data: dict, source: str) -> Experiment:
    try:
        exp = Experiment.model_validate(data)
    except ValidationError as e:
        raise ParameterError(one_line(source, e, Experiment)) from None
    except RecursionError:
        raise ParameterError(f"{source}: nested too deep to be an experiment") from None
    # the workload's own properties are checked now too, not when the run starts
    try:
        exp = threads_as_property(exp)
        check_load_mode(exp)
        exp.workload_class().check_experiment(exp)
        plan(exp)   # each run id planned once (matrix.check_run_ids)
    except (ValueError, OSError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ParameterError(f"{source}: properties: {msg}") from None
    return exp


def target_kind_safe(url: str) -> str:
    try:
        return target_kind(url)
    except ValueError:
        return "target"
