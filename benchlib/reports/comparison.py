"""The compare page: two or more experiments (or the configurations of one) on one page
— each configuration against a base (:mod:`..summaries.configs`), the heatmaps of
relative and of absolute throughput side by side, the chosen runs' time series overlaid.

What ``compare.ipynb`` calls, one line each: :func:`combined` (the experiments' tables,
a run named by (experiment, run) everywhere), :func:`configs_table` (the against-base
table, coloured), :func:`compare_runs` (which runs the time series overlays) and
:func:`runs_apart` (their ids made ``experiment/run`` where experiments share run ids),
:func:`time_series` (the runs overlaid).
"""
from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

import pandas as pd

from ..schema import POINT
from ..store import folders
from ..summaries.configs import base_of, column_name, configs_frame, configurations
from ..summaries.configs import configs_table as text_table
from ..summaries.samples import run_samples
from ..summaries.uncertainty import CompareError
from .display import score_colour

MAX_RUNS = 8   # the time series' runs at most (the page stays readable)


def combined(experiment_dirs) -> dict:
    """The tables of every experiment in ``experiment_dirs`` (folders, or a data folder of
    several), one results dict; its ``experiment`` column keeps them apart."""
    from ..plots.compare import combine
    dirs = [experiment_dirs] if isinstance(experiment_dirs, (str, Path)) else list(experiment_dirs)
    return combine([folders.load_results(d) for d in dirs])


def experiments_in(path) -> list[Path]:
    """The experiment folders a path holds: itself when its run folders are its own
    children, else each folder that has run folders as children (a data folder)."""
    path = Path(path)
    parents = list(dict.fromkeys(r.parent for r in folders.find_runs(path)))
    return [path] if path in parents or not parents else parents


def configs_against_base(res: dict, base: str | None = None) -> pd.DataFrame | None:
    """Each configuration against the base (:func:`..summaries.configs.configs_frame`),
    made once for a page's table and its relative heatmap (``frame=``: each would make the
    same frame again, the most of the compare page's time); None where there is nothing to
    set against a base (the table then says why)."""
    try:
        return configs_frame(res, base)
    except CompareError:
        return None


def configs_table(res: dict, base: str | None = None, frame: pd.DataFrame | None = None):
    """Each configuration against the base (:func:`..summaries.configs.configs_table`) as a
    table coloured as a heatmap — green better than the base, red worse (deeper the
    larger: log2 of the ratio, up to 2×), uncoloured where not significant (``~``) — or a
    line saying why there is none. ``frame``: :func:`configs_against_base`'s, made already."""
    from IPython.display import Markdown

    from ..summaries.against_base import score
    try:
        df = configs_frame(res, base) if frame is None else frame
    except CompareError as e:
        return Markdown(f"*{e}*")
    if not len(df):
        notes = "; ".join(df.attrs.get("unpaired", []))
        return Markdown(f"*No point of another configuration matches one of {df.attrs['base']}*"
                        + (f" ({notes})" if notes else ""))
    table = text_table(df)
    colours = pd.DataFrame("", index=table.index, columns=table.columns)
    names = dict(zip(table.columns, table.columns))
    i = 0
    for _, g in df.groupby(["step", "threads", "target_ops_per_s", "point"], sort=False):
        i += 1   # the base's own line
        for _, h in g.groupby("config", sort=False):
            for _, r in h.iterrows():
                col = _column_of(r["metric"], names)
                if col is not None:
                    colours.iloc[i, table.columns.get_loc(col)] = score_colour(score(r))
            i += 1
    return table.style.apply(lambda _: colours, axis=None).hide(axis="index").set_caption(
        f"X / {df.attrs['base']} (the base, its own figures on its line): ratio [95% interval]; "
        f"~ not significant; r.* the runs' loops together"
        + "".join(f"; not compared: {u}" for u in df.attrs.get("unpaired", [])))


def _column_of(metric: str, names: dict) -> str | None:
    return names.get(column_name(metric))


def runs_apart(res: dict) -> dict:
    """``res`` with each run id made ``experiment/run_id`` where it holds several
    experiments (two experiments of one matrix have the same run ids: one id, one run)."""
    runs = res.get("runs", pd.DataFrame())
    if "experiment" not in runs or runs["experiment"].astype("object").nunique() < 2:
        return res
    out = {}
    for k, v in res.items():
        if isinstance(v, pd.DataFrame) and "run_id" in v and "experiment" in v:
            v = v.assign(run_id=v["experiment"].astype(str) + "/" + v["run_id"].astype(str))
        out[k] = v
    return out


def time_series(res: dict, run_ids: list[str], interactive: bool) -> list:
    """The chosen runs' time series (ids from :func:`compare_runs`): overlaid on one
    figure (plotly), or a figure each (matplotlib draws one run a figure)."""
    from .. import plots
    apart = runs_apart(res)
    if interactive:
        from ..plots import interactive as P
        return [P.timeseries(apart, list(run_ids))] if run_ids else []
    return [plots.timeseries(apart, r) for r in run_ids]


def compare_runs(res: dict, base: str | None = None, run_ids=None,
                 max_runs: int = MAX_RUNS) -> tuple[list[str], str]:
    """The runs the time series overlays (ids as :func:`runs_apart` names them) and a line
    saying which: each configuration's first run at the point where the base is fastest
    (its mean throughput over its runs), the base's first; ``run_ids`` (ids or shell
    patterns, ``benchlib report --runs``) instead keeps the runs that match; at most
    ``max_runs``, the rest named."""
    apart = runs_apart(res)
    ids = list(dict.fromkeys(apart["runs"]["run_id"].astype(str))) if len(apart.get("runs", ())) else []
    if run_ids:
        wanted = [run_ids] if isinstance(run_ids, str) else list(run_ids)
        chosen = [r for r in ids if any(fnmatchcase(r, w) or fnmatchcase(r.rsplit("/", 1)[-1], w)
                                        for w in wanted)]
        said = f"the runs matching {', '.join(f'`{w}`' for w in wanted)}"
    else:
        chosen, said = _at_the_base_best(res, apart)
    shown, left = chosen[:max_runs], chosen[max_runs:]
    line = f"{len(shown)} run{'s' if len(shown) != 1 else ''}: {said}"
    if left:
        line += f"; {len(left)} not drawn: {', '.join(left)} (`benchlib report --runs PATTERN`)"
    return shown, line


def _at_the_base_best(res: dict, apart: dict) -> tuple[list[str], str]:
    configs = configurations(res)
    if not configs:
        return [], "no runs"
    b = base_of(res, configs, None) if len(configs) > 1 else configs[0]
    s = run_samples(res)
    if not len(s):
        return [], "no run loops"
    s = s.assign(experiment=s["experiment"].astype(str), config=s["config"].astype(str))
    mine = s[(s["experiment"] == b.experiment) & (s["config"] == b.config)]
    if not len(mine):
        return [], f"no run loops of the base {b.label}"
    best = mine.groupby(POINT[1:])["ops_per_s"].mean().idxmax()
    many = apart is not res
    out = []
    for c in [b, *[c for c in configs if c != b]]:
        at = s[(s["experiment"] == c.experiment) & (s["config"] == c.config)]
        at = at[[tuple(k) == tuple(best) for k in at[POINT[1:]].itertuples(index=False)]]
        if len(at):
            r = at.sort_values("repetition").iloc[0] if "repetition" in at else at.iloc[0]
            out.append(f"{r['experiment']}/{r['run_id']}" if many else str(r["run_id"]))
    threads, rate, point = best
    where = f"{threads} threads" + (f", {rate:,.0f} ops/s" if rate else "") + (f", {point}" if point else "")
    return out, f"each configuration's first run at the base's ({b.label}) fastest point: {where}"


__all__ = ["time_series", "combined", "compare_runs", "configs_table", "experiments_in", "runs_apart"]
