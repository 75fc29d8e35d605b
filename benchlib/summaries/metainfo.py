"""What the runs' meta.json says, for the experiment summary's ``### Workload`` and
``### Connections`` sections (ycsb-experiments.md, "Show Summary").

``load_results`` gives a ``runs`` table of a few meta fields, each run's folder
(``path``) and that folder's meta.json as a dict (``meta``); a row whose ``path`` is
cleared is no longer that folder's run and has no meta. Hand-made results give
``results["meta"]`` = {run_id: meta}. The summaries read only what they are given
(no file): a run without a meta shows what its runs row holds. Only what a meta
holds is printed: an imported run without ``parameters`` shows fewer lines, never
made-up ones.

Meta keys read (all optional):

- ``experiment config run_id status error started ended repetition source
  benchlib_version workload``;
- ``threads processes load_processes target_ops_per_s load_target_ops_per_s``
  (the run's point of the matrix);
- ``workload_properties`` {recordcount, operationcount, insertorder,
  *proportion …} — the resolved workload properties;
- ``parameters`` — the resolved experiment: ``description workload_file
  repetitions targets[].name load{threads processes batch_size target_factors}
  run{threads processes target_base target_factors loops loop_secs warmup_secs}``;
- ``planned`` — the step names the run was to run (l.pre, r.L1 …);
- ``host`` {hostname cpu cores ram_bytes kernel os}; ``dbms`` {name version};
  ``target`` {name url kind} (url with the password masked).
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pandas as pd

from .formatting import to_float
from .stepstats import table


def _present(v) -> bool:
    if v is None:
        return False
    if isinstance(v, (list, dict, tuple)):
        return True
    try:
        return not bool(pd.isna(v))
    except (TypeError, ValueError):
        return True


def run_metas(results: dict) -> list[dict]:
    """The full meta of every run of ``results``, in the runs table's order."""
    runs = table(results, "runs")
    if len(runs) == 0 or "run_id" not in runs:
        steps = table(results, "steps")
        cols = [c for c in ("experiment", "config", "run_id") if c in steps]
        runs = steps[cols].drop_duplicates("run_id") if "run_id" in cols else pd.DataFrame()
    given = results.get("meta") if isinstance(results.get("meta"), dict) else {}
    metas = []
    for row in runs.to_dict("records"):
        own = isinstance(row.get("meta"), dict) and isinstance(row.get("path"), str)
        meta = row["meta"] if own else given.get(row.get("run_id"))
        merged = {k: v for k, v in row.items() if k != "meta" and _present(v)}
        merged.update({k: v for k, v in (meta or {}).items() if _present(v)})
        metas.append(merged)
    return metas


def by_experiment(metas: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for m in metas:
        out.setdefault(str(m.get("experiment", "")), []).append(m)
    return out


def _ts(v) -> datetime | None:
    try:
        return pd.Timestamp(v).to_pydatetime() if _present(v) else None
    except (ValueError, TypeError):
        return None


def duration_s(metas: list[dict]) -> float | None:
    """From the first run's start to the last run's end, seconds."""
    starts = [t for t in (_ts(m.get("started")) for m in metas) if t]
    ends = [t for t in (_ts(m.get("ended")) for m in metas) if t]
    if not starts or not ends:
        return None
    return (max(ends) - min(starts)).total_seconds()


def _g(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _list(values) -> str:
    return "[" + ", ".join(_g(v) for v in values) + "]"


def _and(values) -> str:
    values = [_g(v) for v in values]
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def workload_facts(experiment: str, metas: list[dict]) -> list[tuple[str, str, str]]:
    """(key, value, sentence) for ``### Workload``: what the metas hold, seed's wording."""
    meta = next((m for m in reversed(metas) if isinstance(m.get("parameters"), dict)), metas[-1])
    params = meta.get("parameters") if isinstance(meta.get("parameters"), dict) else {}
    props = dict(params.get("properties") or {})
    props.update(meta.get("workload_properties") or {})
    workload = meta.get("workload") or params.get("workload")
    facts = _Facts()
    add = facts.add
    name = experiment or "(experiment not named in the meta)"
    add("title", f"{str(workload).upper()} {name}" if workload else name, "{v}")
    add("type", workload, "Type: {v}")
    dur = duration_s(metas)
    add("duration_s", round(dur) if dur is not None else None, "Duration: {v}s")
    add("code", experiment, "Code: {v}")
    add("description", params.get("description"), "{v}")
    if meta.get("source") and meta.get("source") != "benchlib":
        add("source", meta["source"], "Results were imported from {v}.")
    wf = params.get("workload_file")
    add("workload_file", Path(wf).stem if wf else None, "Workload is '{v}'.")
    mix = [f"{k.removesuffix('proportion')} {v}" for k, v in sorted(props.items())
           if k.endswith("proportion") and to_float(v, 0.0) > 0]
    add("operation_mix", ", ".join(mix) if mix else None, "Operation mix is {v}.")
    add("recordcount", props.get("recordcount"), "Number of rows to insert is {v}.")
    add("insertorder", props.get("insertorder"), "Ordering of inserts is {v}.")
    add("operationcount", props.get("operationcount"), "Number of operations is {v}.")
    _matrix_facts(facts, meta, metas, params, props)
    return list(facts)


class _Facts(list):
    """(key, value, sentence) rows; a value that is missing or blank adds none."""

    def add(self, key: str, value, sentence: str) -> None:
        if _present(value) and value != "":
            self.append((key, _g(value), sentence.format(v=_g(value))))


def _matrix_facts(facts: _Facts, meta: dict, metas: list[dict], params: dict, props: dict) -> None:
    """The facts of the experiment's matrix: batch size, targets, configurations,
    processes and threads, loops, warm-up and repetitions."""
    add = facts.add
    load, run = params.get("load") or {}, params.get("run") or {}
    add("batch_size", load.get("batch_size"), "Batch size is {v}.")
    add("target_base", run.get("target_base"), "Target is based on multiples of '{v}'.")
    if load.get("target_factors") is not None:
        add("load_factors", _list(load["target_factors"]), "Factors for loading are {v}.")
    if run.get("target_factors") is not None:
        add("run_factors", _list(run["target_factors"]), "Factors for benchmarking are {v}.")
    add("benchlib_version", meta.get("benchlib_version"), "Experiment uses benchlib version {v}.")
    configs = [t.get("name") for t in params.get("targets") or []] or \
        sorted({str(m["config"]) for m in metas if _present(m.get("config"))})
    add("configs", str(configs) if configs else None, "Benchmark is limited to DBMS {v}.")
    if load.get("processes"):
        # auto: the count it was where the runs ran (their meta), e.g. "2 (auto)"
        auto = sorted({m["load_processes_auto"] for m in metas if m.get("load_processes_auto")})
        procs = [f"{'/'.join(map(str, auto)) or '?'} ({p})" if p == "auto" else p for p in load["processes"]]
        threads = "a thread per process" if load.get("threads") == "auto" else f"[{load.get('threads')}] threads"
        add("load_processes", _and(procs), "Import is handled by {v} processes.")
        add("load_threads", f"{threads}, split into {_list(procs)}", "Loading is tested with {v} processes.")
    if run.get("threads"):
        add("run_threads", f"{_list(run['threads'])} threads, split into [{run.get('processes', 'auto')}]",
            "Benchmarking is tested with {v} processes.")
    elif meta.get("threads"):
        add("run_threads", sorted({m.get("threads") for m in metas if m.get("threads")}),
            "Benchmarking is tested with {v} threads.")
    if run.get("loops"):
        each = (f"{_g(run['loop_secs'])} s" if run.get("loop_secs")
                else f"{props.get('operationcount', '?')} operations")
        add("loops", f"{run['loops']} loops of {each} each", "Benchmarking runs {v}.")
    if to_float(run.get("warmup_secs"), 0.0) > 0:
        add("warmup_secs", run["warmup_secs"], "The first {v} s of each loop are excluded from latency.")
    reps = params.get("repetitions")
    if reps is not None:
        add("repetitions", reps, "Experiment is run once." if reps == 1 else "Experiment is run {v} times.")


HOST_FACTS = [("RAM", "ram_bytes"), ("CPU", "cpu"), ("Cores", "cores"), ("host", "kernel"),
              ("node", "hostname"), ("os", "os")]


def connections(metas: list[dict]) -> pd.DataFrame:
    """One row per configuration: DBMS name and version, URL, host CPU/cores/RAM/kernel.

    Facts that differ between the configuration's runs are joined with `` | ``.
    """
    rows: dict[str, dict] = {}
    for m in metas:
        cfg = str(m.get("config") or m.get("run_id"))
        dbms = m.get("dbms") if isinstance(m.get("dbms"), dict) else {}
        host = m.get("host") if isinstance(m.get("host"), dict) else {}
        target = m.get("target") if isinstance(m.get("target"), dict) else {}
        facts = {"dbms": dbms.get("name", m.get("dbms") if isinstance(m.get("dbms"), str) else None),
                 "version": dbms.get("version", m.get("dbms_version")),
                 "url": target.get("url")}
        facts.update({label: host.get(key) for label, key in HOST_FACTS})
        facts["RAM"] = _gb(facts["RAM"])
        if not facts["node"]:
            facts["node"] = m.get("hostname")
        row = rows.setdefault(cfg, {"config": cfg, "runs": 0})
        row["runs"] += 1
        for k, v in facts.items():
            if _present(v):
                seen = row.setdefault(k, [])
                if str(v) not in seen:
                    seen.append(str(v))
    cols = ["config", "dbms", "version", "url", *[label for label, _ in HOST_FACTS], "runs"]
    out = [{k: (" | ".join(v) if isinstance(v, list) else v) for k, v in r.items()}
           for r in rows.values()]
    return pd.DataFrame(out, columns=cols).set_index("config")


def _gb(ram_bytes):
    """A host's RAM in GB (GiB, as the hw tables' ``_gb`` columns), not raw bytes."""
    v = to_float(ram_bytes, None) if ram_bytes is not None else None
    return f"{v / 1024 ** 3:,.1f} GB" if v else ram_bytes


def connections_text(df: pd.DataFrame) -> list[str]:
    lines = []
    for cfg, r in df.iterrows():
        dbms = " ".join(str(v) for v in (r.get("dbms"), r.get("version")) if _present(v))
        lines.append(f"{cfg} uses {dbms or 'an unknown DBMS'}")
        for k in ["url", *[label for label, _ in HOST_FACTS], "runs"]:
            v = r.get(k)
            if _present(v):
                lines.append(f"    {k}:{int(v) if isinstance(v, float) and v.is_integer() else v}")
    return lines
