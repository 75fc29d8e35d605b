"""One-line summaries of test steps, in the seeds' formats, from the tidy tables only.

Every function takes the dict :func:`benchlib.load_results` returns; every test step
(``l.pre`` load, ``l.post`` index, ``r.L1`` … run loops) of every run becomes one
line per format:

- :func:`eff_op`         ``ips secs rpi rkbpi wkbpi cspi cpupi csecpq dsecpq csec dsec dbgb cnf``
- :func:`eff_sec`        ``ips secs rps rmbps wmbps csps cpups cutil dutil vsz rss cnf``
- :func:`response_times` ``ips secs`` + p99/max/mean per operation, ms (``n9 nx nm`` …)
- :func:`run_lines`      ``tps r/t rkb/t wkb/t Mcpu/t size rss <p99s> r/s rMB/s wMB/s cpu engine``
                         per run loop, ``ips r/i rkb/i wkb/i Mcpu/i size rss wMB/s cpu engine``
                         per load/index step
- :func:`experiment_summary`  the YCSB experiments' "Show Summary" with its tests
- ``loops``              per run loop ops/s, p99s, CPU and I/O per op, and the loop from
                         which they settled (:mod:`.settling`)
- :func:`configs`        each configuration against a base, per run loop and client count:
                         relative tps and p99 with intervals, the seed's figures per op (:mod:`.configs`)

Each frame is numeric with NaN where the source lacks a figure; :func:`format_lines`
prints it as the seed's fixed-width text (blank, never 0). Formulas and units are in
the modules :mod:`.efficiency`, :mod:`.response`, :mod:`.phase_lines`.
"""
from __future__ import annotations

import pandas as pd

from .efficiency import eff_op, eff_sec
from .experiment import ExperimentSummary, experiment_summary
from .formatting import format_lines
from .phase_lines import run_lines
from .response import response_times
from .attribution import attribution_lines
from .stepstats import hw_legend, select, with_step_stats

LINE_KINDS = {"eff.op": eff_op, "eff.sec": eff_sec, "rt": response_times, "run": run_lines}
KINDS = (*LINE_KINDS, "experiment", "loops", "configs")   # the summaries with a text of their own (summarize)


def own_tables(workload: str):
    """A workload's own tables, from its folder (``Workload.summary_tables``): kv's
    ``kv_table``, ``kv_compare``, ``kv_lines``; ybio's ``benchruns_table``; ValueError
    when it has none."""
    from ..registries.workloads import own_module
    return own_module(workload, "summary_tables")


def points(results: dict) -> pd.DataFrame:
    """Per matrix point (each target apart): mean and 95% interval of ops/s, p99, CPU/op
    (:mod:`.samples`)."""
    from .samples import point_summary
    return point_summary(results)


def loops(results: dict) -> pd.DataFrame:
    """Per run loop its figures and whether it has settled (:mod:`.settling`)."""
    from .settling import loops as frame
    return frame(results)


def configs(results: dict, base: str | None = None) -> pd.DataFrame:
    """Each configuration against ``base`` (else the experiment's ``base:``, else the
    first): per run loop, point and metric, the ratio and its interval (:mod:`.configs`)."""
    from .configs import configs_frame
    return configs_frame(results, base)


FRAMES = {**LINE_KINDS, "points": points, "loops": loops, "configs": configs}   # the summaries that are a table (csv, json)
ALL_KINDS = tuple(dict.fromkeys([*KINDS, *FRAMES]))   # what `benchlib summary --kind` offers


def summary_frame(results: dict, kind: str) -> pd.DataFrame:
    """The DataFrame of a line summary ``kind`` (eff.op, eff.sec, rt, run)."""
    if kind not in LINE_KINDS:
        raise ValueError(f"unknown summary kind {kind!r} (known: {', '.join(LINE_KINDS)})")
    return LINE_KINDS[kind](results)


def summarize(results: dict, kind: str, base: str | None = None) -> str:
    """The text of one summary: ``kind`` in eff.op, eff.sec, rt, run, experiment, loops,
    configs (``base``: the configuration the others are set against)."""
    if kind == "configs":
        from .configs import configs_text
        return configs_text(results, base)
    if kind == "experiment":
        return experiment_summary(results).text
    if kind == "loops":
        from .settling import loops_text
        return "\n".join(filter(None, [loops_text(results), not_finished(results)]))
    if kind not in LINE_KINDS:
        raise ValueError(f"unknown summary kind {kind!r} (known: {', '.join(KINDS)})")
    text = format_lines(summary_frame(results, kind), kind) or "(no steps)"
    return "\n".join(filter(None, [text, hw_legend(results) if kind != "rt" else None,
                                   attribution_lines(results) if kind != "rt" else None,
                                   not_finished(results)]))


def not_finished(results: dict) -> str | None:
    """A line per run that did not end ok (killed, interrupted, failed): its status and
    why, so that the steps above it are read as the ones it finished."""
    runs = results.get("runs")
    if runs is None or not len(runs) or "status" not in runs:
        return None
    lines = []
    for r in runs.to_dict("records"):
        if r["status"] not in ("ok", "running"):
            why = (r.get("meta") or {}).get("error") or ""
            lines.append(f"{r['run_id']}: " + (why if why.startswith(r["status"]) else
                                               f"{r['status']} ({why})" if why else r["status"]))
    return "\n".join(lines) or None


def step_lines(results: dict, run_id: str, step: str) -> str:
    """Every line format for one finished step of one run, each under its caption
    (``l.pre.eff.op``, ``l.pre.eff.sec``, ``l.pre.rt``, ``l.pre.run``): what the
    driver prints as each step ends."""
    one = with_step_stats(select(results, run_id=run_id, step=step))
    blocks = [format_lines(summary_frame(one, kind), kind) for kind in LINE_KINDS] + [
        hw_legend(one), attribution_lines(one)]
    return "\n\n".join(b for b in blocks if b)


__all__ = ["ExperimentSummary", "configs", "eff_op", "eff_sec", "experiment_summary", "format_lines", "own_tables",
           "response_times", "run_lines", "step_lines", "summarize", "summary_frame"]
