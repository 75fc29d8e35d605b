"""The experiment summary of the seed's "Show Summary" (ycsb-experiments.md).

Sections, each a DataFrame in :attr:`ExperimentSummary.sections` and a part of
:attr:`ExperimentSummary.text`:

- ``### Workload``    what the runs' meta says about the workload and the matrix;
- ``### Connections`` per configuration: DBMS name and version, host CPU/cores/RAM/kernel;
- ``### Loading`` / ``### Execution``  per load step / per run loop, YCSB's figures:
  repetition, threads, target (ops/s), processes, errors,
  ``[OVERALL].Throughput(ops/sec)`` (ops / secs), ``[OVERALL].RunTime(ms)`` (secs ×
  1000), and per operation ``[OP].Return=OK`` (operations that returned OK) and
  ``[OP].99thPercentileLatency(us)``;
- ``### Workflow``    planned vs actual runs (see :mod:`.checks`);
- ``### Ingestion - SUT`` / ``Loader``, ``### Execution - SUT`` / ``Benchmarker``
  when the hw table has the figures: ``CPU [CPUs]`` = CPU seconds over the step
  (Σ dbms_cpu_s for the SUT, Σ client_cpu_s for loader/benchmarker), ``Max CPU`` =
  CPUs busy in the busiest 1-s sample, ``Max RAM [Gb]`` = the DBMS's largest RSS;
  loader/benchmarker one row per host that ran the step's drivers (the drivers table:
  Σ their CPU seconds and RSS there; blank RAM for a run without one);
- ``### Tests``       the seed's checks as ``TEST passed: …`` / ``TEST failed: …``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..schema import BATCH_SUFFIX, conform
from . import checks, metainfo
from .hwroles import blank_reasons
from .response import compound_ops, op_latency, op_order
from .stepstats import step_stats, table

OVERALL_TPUT = "[OVERALL].Throughput(ops/sec)"
OVERALL_TIME = "[OVERALL].RunTime(ms)"
# (section key, title, phases, hw columns: CPU seconds, busiest sample, RAM)
RESOURCE_SECTIONS = [
    ("ingestion_sut", "Ingestion - SUT", ("load",), ("dsec", "dsec_max", "rss_max_gb")),
    ("ingestion_loader", "Ingestion - Loader", ("load",), ("csec", "csec_max", None)),
    ("execution_sut", "Execution - SUT", ("run",), ("dsec", "dsec_max", "rss_max_gb")),
    ("execution_benchmarker", "Execution - Benchmarker", ("run",), ("csec", "csec_max", None)),
]


@dataclass
class ExperimentSummary:
    """The seed's summary of an experiment: ``text`` to print, ``sections`` to render."""

    text: str
    sections: dict[str, pd.DataFrame] = field(default_factory=dict)
    tests: list[tuple[bool, str]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when every test passed."""
        return all(ok for ok, _ in self.tests)

    def __str__(self) -> str:
        return self.text

    def _repr_pretty_(self, p, cycle) -> None:  # a notebook cell shows the text
        p.text(self.text)


def _labels(st: pd.DataFrame) -> list[str]:
    """Row labels: the run_id, with the step when a run has several rows (loops)."""
    per_run = st.groupby(st["run_id"].astype("object"))["step"].transform("size")
    return [r if n == 1 else f"{r} {s}" for r, s, n in zip(st["run_id"], st["step"], per_run)]


def _counts(values) -> pd.api.extensions.ExtensionArray:
    """Whole numbers as nullable integers (2000, not 2000.0; blank when unknown)."""
    v = pd.to_numeric(pd.Series(np.asarray(values, dtype="object")), errors="coerce")
    return pd.array(v.round(), dtype="Int64")


def phase_table(results: dict, st: pd.DataFrame, metas: dict[str, dict]) -> pd.DataFrame:
    """The seed's Loading/Execution table for the steps in ``st``."""
    if len(st) == 0:
        return pd.DataFrame()
    out = pd.DataFrame(index=pd.Index(_labels(st), name="run"))
    out["repetition"] = _counts([metas.get(r, {}).get("repetition") for r in st["run_id"]])
    out["threads"] = _counts(st["threads"])
    out["target"] = pd.to_numeric(st["target_ops_per_s"], errors="coerce").to_numpy()
    out["processes"] = _counts(st["processes"])
    out["errors"] = _counts(st["errors"])
    out[OVERALL_TPUT] = st["rate"].to_numpy()             # ops / secs
    out[OVERALL_TIME] = (st["secs"] * 1000.0).to_numpy()  # secs × 1000
    lat = op_latency(results)
    if len(lat):
        ops = lat["op"].astype("object")
        lat = lat[~ops.str.endswith(BATCH_SUFFIX)]
        keys = list(zip(st["run_id"], st["step"]))
        lat = lat[[k in set(keys) for k in zip(lat["run_id"], lat["step"])]]
        compound = compound_ops()
        for op in op_order(lat):
            one = lat[lat["op"] == op].drop_duplicates(["run_id", "step"], keep="last")
            one = one.set_index([one["run_id"].astype("object"), one["step"].astype("object")])
            idx = pd.MultiIndex.from_tuples(keys)
            count = pd.to_numeric(one["count"], errors="coerce").reindex(idx).to_numpy(dtype=float)
            errs = pd.to_numeric(one["errors"], errors="coerce").reindex(idx).fillna(0).to_numpy(dtype=float)
            if op in compound:  # a compound op has no Return= lines of its own (YCSB's RMW)
                out[f"[{op}].Operations"] = _counts(count)
            else:
                out[f"[{op}].Return=OK"] = _counts(count - errs)
            p99 = pd.to_numeric(one["p99_us"], errors="coerce").reindex(idx)
            out[f"[{op}].99thPercentileLatency(us)"] = p99.to_numpy(dtype=float)
    return out


def resource_table(st: pd.DataFrame, cols: tuple) -> pd.DataFrame | None:
    """CPU seconds, busiest sample and max RAM of one component; None without figures."""
    cpu, peak, ram = cols
    if len(st) == 0 or st[cpu].isna().all():
        return None
    out = pd.DataFrame(index=pd.Index(_labels(st), name="run"))
    out["CPU [CPUs]"] = st[cpu].to_numpy()
    out["Max CPU"] = st[peak].to_numpy()
    out["Max RAM [Gb]"] = st[ram].to_numpy() if ram else np.nan
    return out


def host_resource_table(results: dict, st: pd.DataFrame, cols: tuple) -> pd.DataFrame | None:
    """Loader/Benchmarker: one row per host that ran the step's drivers (the drivers
    table): ``CPU [CPUs]`` Σ their own CPU seconds, ``Max CPU`` their busiest 1-s sample
    on that host (hw client_cpu_s), ``Max RAM [Gb]`` Σ their RSS at the step's end.
    Steps without driver rows (older runs, imports) keep :func:`resource_table`'s row."""
    drv = conform("drivers", table(results, "drivers"))
    if len(drv) == 0 or len(st) == 0:
        return resource_table(st, cols)
    hw = table(results, "hw")
    hw = hw if "host" in hw else hw.assign(host=pd.NA)
    rows = []
    for i, (run_id, step, label) in enumerate(zip(st["run_id"], st["step"], _labels(st))):
        mine = drv[(drv["run_id"] == run_id) & (drv["step"] == step)]
        if len(mine) == 0:
            classic = resource_table(st.iloc[[i]].reset_index(drop=True), cols)
            rows += [] if classic is None else [{"run": label, "host": pd.NA, **classic.iloc[0].to_dict()}]
        for host, d in mine.groupby(mine["host"].astype("object"), sort=True, dropna=False):
            peak = hw[(hw["run_id"] == run_id) & (hw["step"] == step) & (hw["host"] == host)]
            rows.append({"run": label, "host": host,
                         "CPU [CPUs]": pd.to_numeric(d["cpu_s"]).sum(min_count=1),
                         "Max CPU": pd.to_numeric(peak["client_cpu_s"]).max() if len(peak) else np.nan,
                         "Max RAM [Gb]": pd.to_numeric(d["rss_gb"]).sum(min_count=1)})
    return pd.DataFrame(rows).set_index("run") if rows else None


def driver_lines(results: dict, st: pd.DataFrame) -> list[str]:
    """Planned vs actual client processes per step (the seed's loader and driver pods),
    from the drivers table: how many ran, on how many hosts, how many finished."""
    drv = conform("drivers", table(results, "drivers"))
    if len(drv) == 0 or len(st) == 0:
        return []
    lines = ["", "#### Drivers"]
    for run_id, step, planned in zip(st["run_id"], st["step"], st["processes"]):
        d = drv[(drv["run_id"] == run_id) & (drv["step"] == step)]
        if len(d):
            lines.append(f"Run {run_id} {step} - planned {planned} processes, ran {len(d)} "
                         f"({d['executor'].iloc[0]}) on {d['host'].nunique()} host(s), "
                         f"{int(d['error'].isna().sum())} finished")
    return lines


def _table_text(df: pd.DataFrame) -> str:
    if df is None or len(df) == 0:
        return "(none)"
    df = df.copy()
    for c in df.columns:  # nullable integers print <NA> whatever na_rep says
        if isinstance(df[c].dtype, pd.Int64Dtype):
            df[c] = [("" if pd.isna(v) else str(v)) for v in df[c]]
    with pd.option_context("display.max_columns", 100, "display.width", 400,
                           "display.max_colwidth", 80):
        return df.to_string(na_rep="", index_names=False)


def experiment_summary(results: dict) -> ExperimentSummary:
    """The seed's "Show Summary" of the runs in ``results`` (load_results' dict).

    Returns an :class:`ExperimentSummary`: ``.text`` (the seed's sections as plain
    text), ``.sections`` (``workload connections loading execution workflow
    ingestion_sut ingestion_loader execution_sut execution_benchmarker tests``, each
    a DataFrame; the resource sections only when the hw table has the figures) and
    ``.tests`` [(passed, message)].
    """
    metas = metainfo.run_metas(results)
    meta_by_run = {str(m.get("run_id")): m for m in metas}
    st = step_stats(results)
    sections: dict[str, pd.DataFrame] = {}
    text: list[str] = ["## Show Summary", "", "### Workload"]
    rows = []
    for exp, ms in metainfo.by_experiment(metas).items():
        facts = metainfo.workload_facts(exp, ms)
        rows += [{"experiment": exp, "key": k, "value": v} for k, v, _ in facts]
        text += [s if i == 0 else f"    {s}" for i, (_, _, s) in enumerate(facts)]
    sections["workload"] = pd.DataFrame(rows, columns=["experiment", "key", "value"])

    sections["connections"] = metainfo.connections(metas)
    text += ["", "### Connections", *metainfo.connections_text(sections["connections"])]

    load_st = st[st["phase"] == "load"].reset_index(drop=True)
    run_st = st[st["phase"] == "run"].reset_index(drop=True)
    sections["loading"] = phase_table(results, load_st, meta_by_run)
    sections["execution"] = phase_table(results, run_st, meta_by_run)
    text += ["", "### Loading", _table_text(sections["loading"]),
             "", "### Execution", _table_text(sections["execution"])]

    flow = checks.workflow(metas, st)
    sections["workflow"] = flow.table
    text += ["", "### Workflow", *flow.lines, *driver_lines(results, st)]

    tests = []
    for name, df in (("Loading", sections["loading"]), ("Execution", sections["execution"])):
        if len(df):
            tests.append(checks.no_zero_or_nan(df[OVERALL_TPUT], OVERALL_TPUT))
    for key, title, phases, cols in RESOURCE_SECTIONS:
        part = st[st["phase"].isin(phases)].reset_index(drop=True)
        df = resource_table(part, cols) if "sut" in key else host_resource_table(results, part, cols)
        if df is None:
            continue
        sections[key] = df
        text += ["", f"### {title}", _table_text(df.round(2))]  # the seed's 2 decimals
        tests.append(checks.no_zero_or_nan(df["CPU [CPUs]"], f"{title.replace(' - ', ' ')}",
                                           what="CPU [CPUs]"))
    if flow.passed is not None:
        tests.append((flow.passed, "Workflow as planned" + (f": {flow.detail}" if flow.detail else "")))
    tests.append(checks.no_failed(metas, st))
    if (blank := blank_reasons(results, st)) is not None:   # a remote server nobody sampled
        tests.append(blank)
    sections["tests"] = pd.DataFrame([{"passed": ok, "test": msg} for ok, msg in tests],
                                     columns=["passed", "test"])
    text += ["", "### Tests", *checks.test_lines(tests)]
    return ExperimentSummary("\n".join(text), sections, tests)
