"""The seed's checks of an experiment: workflow as planned, no 0/NaN, no failures.

``### Workflow`` compares what was planned with what was found, per configuration
and repetition, as the seed compares its lists of pods (order does not matter: the
seed's actual ``[[8, 1]]`` against planned ``[[1, 8]]`` passes):

- a run is described by its point of the matrix: threads / loader processes /
  target ops/s / load target ops/s (0 = unthrottled) — from each run's meta;
- the plan is the matrix of the resolved experiment in the runs' meta
  (``parameters``: targets × load.processes × load.target_factors × run.threads ×
  run.target_factors × repetitions — without run.processes, which ``auto`` makes
  depend on the host);
- every run's ``planned`` step names must all be in the steps table.

A failed run is present in the workflow (it ran) and fails "Result contains no
FAILED column" (the seed's test for failed runs): a run whose status is not ok, a
step whose status is not ok, or a step with errors.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .formatting import to_float


@dataclass
class Workflow:
    table: pd.DataFrame
    lines: list[str]
    passed: bool | None          # None: nothing planned is known (e.g. imported runs)
    detail: str = ""
    missing_steps: dict[str, list[str]] = field(default_factory=dict)


def _g(v: float) -> str:
    return f"{v:g}"


def point(threads, load_processes, target, load_target) -> str:
    """A run's point of the matrix: ``t4/lp1/tgt32768/ltgt0``."""
    return (f"t{_g(to_float(threads, 0.0))}/lp{_g(to_float(load_processes, 0.0) or 1)}"
            f"/tgt{_g(to_float(target, 0.0))}/ltgt{_g(to_float(load_target, 0.0))}")


def actual_runs(metas: list[dict], st: pd.DataFrame) -> dict[tuple, dict[int, list[str]]]:
    """{(experiment, config): {repetition: [points]}} of the runs found (threads from
    the run loops' steps when the meta has none)."""
    run = st[st["phase"] == "run"] if len(st) else st
    step_threads = pd.to_numeric(run["threads"], errors="coerce").groupby(
        run["run_id"].astype("object")).max().to_dict() if len(run) else {}
    out: dict[tuple, dict[int, list[str]]] = {}
    for m in metas:
        key = (str(m.get("experiment", "")), str(m.get("config") or m.get("run_id")))
        rep = int(to_float(m.get("repetition"), 0.0) or 1)
        p = point(m.get("threads") or step_threads.get(m.get("run_id")), m.get("load_processes"), m.get("target_ops_per_s"),
                  m.get("load_target_ops_per_s"))
        out.setdefault(key, {}).setdefault(rep, []).append(p)
    return out


def planned_runs(metas: list[dict]) -> dict[tuple, dict[int, list[str]]] | None:
    """The matrix of each experiment's ``parameters``; None when no meta has them."""
    out: dict[tuple, dict[int, list[str]]] = {}
    seen = set()
    for m in reversed(metas):  # the latest meta of an experiment holds its plan
        params = m.get("parameters")
        exp = str(m.get("experiment", ""))
        if not isinstance(params, dict) or exp in seen:
            continue
        seen.add(exp)
        load, run = params.get("load") or {}, params.get("run") or {}
        base = to_float(run.get("target_base"), 0.0) or 16384
        # load.processes auto: what it was for the target where it ran (its runs' meta)
        auto = {str(a.get("config")): a.get("load_processes_auto") for a in metas
                if a.get("experiment") == m.get("experiment") and a.get("load_processes_auto")}
        for t in params.get("targets") or []:
            reps = out.setdefault((exp, str(t.get("name"))), {})
            for lp in load.get("processes") or [1]:
                lp = auto.get(str(t.get("name")), lp) if lp == "auto" else lp
                for lf in load.get("target_factors") or [0]:
                    for threads in run.get("threads") or [1]:
                        for rf in run.get("target_factors") or [0]:
                            for rep in range(1, int(to_float(params.get("repetitions"), 0.0) or 1) + 1):
                                reps.setdefault(rep, []).append(
                                    point(threads, lp, to_float(rf, 0.0) * base, to_float(lf, 0.0) * base))
    return out if seen else None


def _fmt(reps: dict[int, list[str]]) -> str:
    return "[" + ", ".join("[" + ", ".join(reps[r]) + "]" for r in sorted(reps)) + "]"


def workflow(metas: list[dict], st: pd.DataFrame) -> Workflow:
    """Planned vs actual runs per configuration, and every run's planned steps."""
    actual = actual_runs(metas, st)
    planned = planned_runs(metas)
    found = st.groupby(st["run_id"].astype("object"))["step"].agg(lambda s: set(s)).to_dict() \
        if len(st) else {}
    missing = {}
    for m in metas:
        if isinstance(m.get("planned"), list):
            gone = [s for s in m["planned"] if s not in found.get(m.get("run_id"), set())]
            if gone:
                missing[str(m.get("run_id"))] = gone
    rows, lines = [], ["", "#### Actual"]
    for (exp, cfg), reps in actual.items():
        lines.append(f"DBMS {cfg} - Runs {_fmt(reps)}")
        rows.append({"experiment": exp, "config": cfg, "actual": _fmt(reps),
                     "planned": _fmt(planned.get((exp, cfg), {})) if planned is not None else None})
    for run_id, gone in missing.items():
        lines.append(f"Run {run_id} - missing steps {gone}")
    lines += ["", "#### Planned"]
    if planned is None:
        lines.append("(no plan in the runs' meta)")
    for (exp, cfg), reps in (planned or {}).items():
        lines.append(f"DBMS {cfg} - Runs {_fmt(reps)}")
        if (exp, cfg) not in actual:
            rows.append({"experiment": exp, "config": cfg, "actual": None, "planned": _fmt(reps)})
    table = pd.DataFrame(rows, columns=["experiment", "config", "actual", "planned"])
    if planned is None and not any(isinstance(m.get("planned"), list) for m in metas):
        return Workflow(table, lines, None)
    problems = []
    if planned is not None:
        for key in sorted(set(actual) | set(planned)):
            a = {r: sorted(p) for r, p in actual.get(key, {}).items()}
            b = {r: sorted(p) for r, p in planned.get(key, {}).items()}
            if a != b:
                problems.append(f"DBMS {key[1]} ran {_fmt(a)}, planned {_fmt(b)}")
    problems += [f"{r} misses {', '.join(g)}" for r, g in missing.items()]
    return Workflow(table, lines, not problems, "; ".join(problems), missing)


def no_zero_or_nan(values: pd.Series, subject: str, what: str | None = None) -> tuple[bool, str]:
    """The seed's "<subject> contains no 0 or NaN[ in <what>]"; failures name the rows."""
    v = pd.to_numeric(values, errors="coerce")
    bad = [str(i) for i, x in v.items() if pd.isna(x) or x == 0]
    msg = f"{subject} contains no 0 or NaN" + (f" in {what}" if what else "")
    return (not bad, msg + (f": {', '.join(bad)}" if bad else ""))


def no_failed(metas: list[dict], st: pd.DataFrame) -> tuple[bool, str]:
    """The seed's "Result contains no FAILED column": no failed run, step or error."""
    bad = []
    for m in metas:
        status = m.get("status")
        if isinstance(status, str) and status not in ("ok", "skipped"):
            err = m.get("error")
            bad.append(f"run {m.get('run_id')} {status}" + (f" ({err})" if err else ""))
    for _, r in st.iterrows():
        status = r.get("status")
        if isinstance(status, str) and status and status != "ok":
            bad.append(f"{r['run_id']} {r['step']} {status}")
        elif to_float(r.get("errors"), 0.0) > 0:
            bad.append(f"{r['run_id']} {r['step']} {int(to_float(r['errors'], 0.0))} errors")
    msg = "Result contains no FAILED column"
    return (not bad, msg + (f": {'; '.join(bad)}" if bad else ""))


def test_lines(tests: list[tuple[bool, str]]) -> list[str]:
    return [f"TEST {'passed' if ok else 'failed'}: {msg}" for ok, msg in tests]
