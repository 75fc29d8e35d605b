"""benchlib.plots on the committed sample, on results without hw (as an import without
vmstat/iostat gives them) and on empty results: a Figure with the expected panels,
titles and units every time, rendered to PNG so drawing errors show too."""
from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

import benchlib
from benchlib import plots, schema
from benchlib.plots.timeseries import GAP_KEPT_S

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"


@pytest.fixture(scope="module")
def sample() -> dict:
    return benchlib.load_results(SAMPLES / "sample")


@pytest.fixture(scope="module")
def configs() -> dict:
    return benchlib.load_results(SAMPLES / "sample-configs")


@pytest.fixture(scope="module")
def imported(configs) -> dict:
    """Like an import: no hw, no meta to read back, no step start times."""
    res = {k: v.assign(experiment="imported") for k, v in configs.items()}
    res["hw"] = schema.empty("hw")
    res["runs"]["path"] = None
    res["steps"]["started"] = pd.NaT
    res["steps"]["ended"] = pd.NaT
    return res


def _png(fig: Figure) -> bytes:
    assert isinstance(fig, Figure)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:4] == b"\x89PNG"
    return buf.getvalue()


def _panels(fig: Figure) -> list:
    """The visible axes that are not colour bars (nor the throughput's load axis)."""
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() not in ("<colorbar>", "<load axis>")]


def _texts(fig: Figure) -> str:
    out = [t.get_text() for t in fig.texts]
    if fig._suptitle is not None:
        out.append(fig._suptitle.get_text())
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_title("left"), ax.get_xlabel(), ax.get_ylabel()]
        out += [t.get_text() for t in ax.texts]
        out += [t.get_text() for t in ax.get_yticklabels() + ax.get_xticklabels()]
    for leg in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
        out += [t.get_text() for t in leg.get_texts()]
    return "\n".join(out)


def test_heatmap_throughput_over_threads_and_target(sample):
    fig = plots.heatmap(sample, "ops_per_s")
    _png(fig)
    (ax,) = _panels(fig)
    assert ax.get_xlabel() == "client threads"
    assert ax.get_ylabel() == "target (ops/s)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2"]
    # highest target on top, unthrottled above all
    assert [t.get_text() for t in ax.get_yticklabels()] == ["unthrottled", "20,000", "10,000", "5,000"]
    assert len(ax.texts) == 8                          # one annotation per cell
    assert "Throughput (ops/s)" in fig._suptitle.get_text()
    cbar = [a for a in fig.axes if a.get_label() == "<colorbar>"]
    assert cbar and cbar[0].get_ylabel() == "throughput (ops/s)"


def test_heatmap_p99_one_panel_per_operation(sample):
    fig = plots.heatmap(sample, "p99_us")
    _png(fig)
    assert [ax.get_title() for ax in _panels(fig)] == ["READ", "UPDATE"]
    assert "p99 latency (µs)" in fig._suptitle.get_text()
    one = plots.heatmap(sample, "p99_us", op="UPDATE", step="r.L2")
    assert [ax.get_title() for ax in _panels(one)] == ["UPDATE"]
    assert "step r.L2" in one._suptitle.get_text()


def test_heatmap_cpu_per_op_and_any_two_parameters(sample):
    fig = plots.heatmap(sample, "cpu_per_op")
    _png(fig)
    assert "host CPU per operation (µs)" in _texts(fig)
    # any parameter of the runs: a workload property, a load setting (one cell here)
    two = plots.heatmap(sample, "ops_per_s", x="batch_size", y="pct_update")
    _png(two)
    (ax,) = _panels(two)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("batch size (rows)", "update (%)")
    with pytest.raises(ValueError, match="no parameter 'nonsense'"):
        plots.heatmap(sample, "ops_per_s", x="nonsense")
    with pytest.raises(ValueError, match="unknown value"):
        plots.heatmap(sample, "bogus")


def test_heatmap_facets_configurations(configs):
    fig = plots.heatmap(configs, "ops_per_s")
    _png(fig)
    assert [ax.get_title() for ax in _panels(fig)] == ["sqlite-rollback", "sqlite-wal"]


def test_heatmap_without_hw_says_so(imported):
    fig = plots.heatmap(imported, "cpu_per_op")
    _png(fig)
    assert "no host CPU per operation (µs) in these results" in _texts(fig)
    _png(plots.heatmap(imported, "ops_per_s"))


def test_timeseries_panels_units_and_steps(sample):
    fig = plots.timeseries(sample, "sqlite-t2-p2-l1-tgt20000-r1")
    _png(fig)
    axes = _panels(fig)
    assert [ax.get_ylabel() for ax in axes] == [
        "throughput (ops/s)", "p99 latency (µs)", "CPU (% of all CPUs)", "disk (MB/s)",
        "memory, size (GB)"]
    assert axes[-1].get_xlabel() == "time since the first step began (s)"
    assert [t.get_text() for t in axes[0].texts] == ["l.pre", "l.post", "r.L1", "r.L2"]
    text = _texts(fig)
    for label in ("all operations", "READ", "UPDATE", "target", "user", "sys", "iowait",
                  "write", "DBMS RSS"):
        assert label in text
    assert "sqlite-t2-p2-l1-tgt20000-r1" in fig._suptitle.get_text()
    assert "READ from intended start" in text       # a paced run: CO-corrected p99 too
    # the steps lie on one axis in order, each after the one before
    st = plots.step_offsets(sample["steps"][sample["steps"]["run_id"] == "sqlite-t1-p1-l1-tgt0-r1"])
    assert list(st["step"]) == ["l.pre", "l.post", "r.L1", "r.L2"]
    assert (st["t_start"].diff().dropna() > 0).all()


def test_timeseries_default_run_and_unknown_run(sample):
    fig = plots.timeseries(sample)
    assert "sqlite-t1-p1-l1-tgt0-r1" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="no run 'nope'"):
        plots.timeseries(sample, "nope")


def test_timeseries_without_hw_skips_those_panels(imported):
    fig = plots.timeseries(imported)
    _png(fig)
    axes = _panels(fig)
    assert len(axes) == 5
    for ax in axes[2:]:
        assert "no hardware samples" in " ".join(t.get_text() for t in ax.texts)
    assert axes[0].lines                           # throughput still drawn
    # without start times the steps are laid end to end by their secs
    st = plots.step_offsets(imported["steps"][imported["steps"]["run_id"] == imported["steps"]["run_id"].iloc[0]])
    assert st["t_start"].iloc[1] == pytest.approx(st["t_end"].iloc[0])


def test_compare_experiments_side_by_side(sample, configs):
    fig = plots.compare([sample, configs], where={"threads": 2, "target_ops_per_s": None})
    _png(fig)
    titles = [ax.get_title("left") for ax in _panels(fig)]
    assert titles == ["Throughput (ops/s) — load and index", "Throughput (ops/s) — run loops",
                      "p99 latency (µs) of READ — run loops", "p99 latency (µs) of UPDATE — run loops",
                      "p99 latency (µs) of INSERT-BATCH — load and index"]   # the call a client waits for
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["sqlite", "sqlite-rollback", "sqlite-wal"]
    assert [t.get_text() for t in _panels(fig)[1].get_xticklabels()] == ["r.L1", "r.L2"]
    assert all(ax.get_ylabel() for ax in _panels(fig))


def test_compare_same_config_in_two_experiments(configs):
    other = {k: v.assign(experiment="rerun") for k, v in configs.items()}
    other["runs"]["path"] = None     # its meta.json says sample-configs
    fig = plots.compare([configs, other], by="config", metric="ops_per_s")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["rerun/sqlite-rollback", "rerun/sqlite-wal",
                      "sample-configs/sqlite-rollback", "sample-configs/sqlite-wal"]
    by_exp = plots.compare([configs, other], by="experiment", metric="ops_per_s")
    assert [t.get_text() for t in by_exp.legends[0].get_texts()] == ["rerun", "sample-configs"]
    assert "whiskers: min to max" in by_exp._suptitle.get_text()   # two runs per bar


def test_compare_imported_without_hw(imported, configs):
    fig = plots.compare([imported, configs], by="run_id", metric=["ops_per_s", "cpu_per_op"])
    _png(fig)
    assert len(_panels(fig)) == 4                       # ops/s and CPU, load and run loops


def test_empty_results_never_crash():
    empty = {"runs": pd.DataFrame(), **{t: schema.empty(t) for t in schema.TABLES}}
    for fig in (plots.heatmap(empty), plots.timeseries(empty), plots.compare(empty)):
        _png(fig)


@pytest.fixture(scope="module")
def imported_ycsb(tmp_path_factory) -> dict:
    """Real YCSB outputs imported: a hdrhistogram run (per-op counts beside the status
    lines' TOTAL) and a load + timeseries run minutes apart (means only, no p99)."""
    from benchlib.importers import import_output
    y = Path(__file__).resolve().parent / "data" / "ycsb"
    root = tmp_path_factory.mktemp("imported") / "imp"
    import_output("ycsb", [y / "pg-runa-t4-hdr.out", y / "pg-runa-t4-hdr.err"], root / "hdr")
    import_output("ycsb", [y / f"pg-{s}.{e}" for s in ("load-t4-hist", "runa-t4-ts") for e in ("out", "err")],
                  root / "ts")
    return benchlib.load_results(root)


def test_timeseries_of_imported_runs(imported_ycsb):
    iv = imported_ycsb["intervals"]
    fig = plots.timeseries(imported_ycsb, "hdr")
    _png(fig)
    tp = _panels(fig)[0]
    total = next(line for line in tp.lines if line.get_label() == "all operations")
    # all operations are YCSB's own count (TOTAL), not TOTAL + READ + UPDATE added up
    tot = iv[(iv["run_id"] == "hdr") & (iv["op"] == "TOTAL")]
    assert max(total.get_ydata()) <= (tot["ops"] / tot["interval_s"].clip(lower=1.0)).max() * 1.01
    assert "TOTAL" not in _texts(fig)
    fig = plots.timeseries(imported_ycsb, "ts")
    _png(fig)
    axes = _panels(fig)
    assert axes[1].get_ylabel() == "mean latency (µs)"   # timeseries YCSB prints no p99
    assert "READ (mean)" in _texts(fig)
    # load and run ran minutes apart: the pause is drawn short, and says how long it was
    assert "long pauses between steps shortened" in axes[-1].get_xlabel()
    assert any(t.get_text().startswith("paused ") and "min" in t.get_text() for t in axes[-1].texts)
    st = plots.step_offsets(imported_ycsb["steps"][imported_ycsb["steps"]["run_id"] == "ts"])
    assert st["t_start"].iloc[1] - st["t_end"].iloc[0] == pytest.approx(GAP_KEPT_S)
    # the time axis keeps its numbers though the hw panels are empty
    fig.canvas.draw()
    assert [t.get_text() for t in axes[-1].get_xticklabels() if t.get_text()]


def test_imported_runs_take_threads_from_their_steps(imported_ycsb):
    # an import has no benchlib parameters: YCSB's -threads 4 is in its steps
    params = plots.run_parameters(imported_ycsb).set_index("run_id")
    assert params.loc["hdr", "threads"] == 4 and params.loc["ts", "threads"] == 4
    from benchlib.reports import side_by_side
    assert {p for _, p in side_by_side(imported_ycsb).columns} == {"4 thr, max"}


def test_heatmap_cell_of_repetitions_shows_its_interval(sample, monkeypatch):
    """Three repetitions in a cell: the mean, and under it its 95% interval (t with 2
    degrees of freedom, on the log scale); two: the same rule (t with 1 degree of freedom),
    never their min–max; one: the value alone."""
    import importlib
    hm = importlib.import_module("benchlib.plots.heatmap")

    base = hm.points(sample, "ops_per_s")
    one = base[base["threads"].eq(1) & base["target_ops_per_s"].isna()]
    two = base[base["threads"].eq(2) & base["target_ops_per_s"].isna()]
    reps = pd.concat([one.assign(value=v, repetition=k) for k, v in enumerate([100.0, 110.0, 120.0], 1)]
                     + [two.assign(value=v, repetition=k) for k, v in enumerate([50.0, 70.0], 1)], ignore_index=True)
    rest = base[base["target_ops_per_s"].notna()]
    monkeypatch.setattr(hm, "points", lambda *a, **k: pd.concat([reps, rest], ignore_index=True))
    fig = plots.heatmap(sample, "ops_per_s")
    _png(fig)
    texts = [t.get_text() for t in _panels(fig)[0].texts]
    half = 4.303 * 10.0 / 3 ** 0.5      # t(0.975, 2) × sd / √n: 24.8
    f = 2.718281828 ** (half / 110)      # on the log scale: 110 / f … 110 × f
    assert f"110\n{110 / f:.1f}–{110 * f:.0f}" in texts, texts
    from benchlib.summaries.uncertainty import mean_ci
    _, lo, hi, _ = mean_ci([50.0, 70.0])
    assert "60\n50–70" not in texts and f"60\n{hm._fmt(lo)}–{hm._fmt(hi)}" in texts, texts
    assert sum("\n" in t for t in texts) == 2        # the single runs: their value alone
    assert "95% t-interval" in fig._suptitle.get_text() and round(half, 1) == 24.8
