"""The one-line summaries against hand arithmetic and against the seeds' own rows.

Every expected number below is computed by hand in a comment, so a wrong formula or
unit fails here; the seed rows (linkbench-result-formats.md, linkbench-overview.md)
pin the units: µs per op, MB = 1024 KB in eff.sec, 1000 KB in the run lines, 1e6 for
cpupi and Mcpu/t.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchlib import schema
from benchlib.store import folders as results_mod
from benchlib.summaries import (
    eff_op,
    eff_sec,
    experiment_summary,
    format_lines,
    response_times,
    run_lines,
    step_lines,
    summarize,
)

SEED_EFF_OP_HEADER = ("ips     secs    rpi     rkbpi   wkbpi   cspi    cpupi   csecpq  dsecpq  "
                      "csec    dsec    dbgb    cnf")
SEED_EFF_SEC_HEADER = ("ips     secs    rps     rmbps   wmbps   csps    cpups   cutil   dutil   "
                       "vsz     rss     cnf")
SEED_RT_HEADER = ("ips     secs    n9      nx      nm      l9      lx      lm      c9      cx      "
                  "cm      cnf")
SEED_RUN_HEADER = "tps   r/t   rkb/t wkb/t Mcpu/t  size  rss   un    gn   ul   gl   r/s   rMB/s wMB/s cpu   engine"
SEED_LOAD_HEADER = "ips    r/i    rkb/i  wkb/i  Mcpu/i  size   rss    wMB/s  cpu    engine"
SEED_RUN_LINE = "3868  0      0    1.41  8154    3.0g  4.04  0.2   0.1  0.6  0.5  10.4  0     5.4   31.5  MyRocks"
SEED_LOAD_LINE = "29810  0      0      1.33   1311    2.8g   0.17   39.6   39.1   MyRocks"


# ---------------------------------------------------------------- building tables

def tidy(name: str, rows: list[dict], experiment: str = "exp") -> pd.DataFrame:
    """A tidy table as load_results returns it (every schema column, + experiment/config)."""
    df = pd.DataFrame(rows)
    for col, dtype in schema.TABLES[name].items():
        if col not in df:
            df[col] = np.nan if dtype == "float64" else None
    config = df.pop("config") if "config" in df else None
    df = schema.conform(name, df)
    return df.assign(experiment=experiment, config=config if config is not None else "cfgA")


def results_of(steps, hw=(), latency=(), runs=None, meta=None) -> dict:
    steps_df = tidy("steps", steps)
    if runs is None:
        runs = steps_df[["run_id", "experiment", "config"]].drop_duplicates("run_id")
        runs = runs.assign(status="ok")
    out = {"runs": runs, "steps": steps_df,
           "latency": tidy("latency", list(latency)) if latency else schema.empty("latency"),
           "intervals": schema.empty("intervals"),
           "hw": tidy("hw", list(hw)) if hw else schema.empty("hw")}
    if meta is not None:
        out["meta"] = meta
    return out


def step(run_id, name, secs, ops, config="cfgA", **kw) -> dict:
    phase = {"l.pre": "load", "l.post": "index"}.get(name, "run")
    return {"run_id": run_id, "step": name, "phase": phase, "secs": secs, "ops": ops,
            "errors": 0, "status": "ok", "threads": 4, "processes": 1, "config": config, **kw}


def samples(run_id, name, n, config="cfgA", **cols) -> list[dict]:
    """n one-second hw rows; a column given as a function of the second varies."""
    return [{"run_id": run_id, "step": name, "second": s, "config": config,
             **{c: (v(s) if callable(v) else v) for c, v in cols.items()}} for s in range(n)]


def lat(run_id, name, op, count, p99_us, max_us, mean_us, config="cfgA", errors=0) -> dict:
    return {"run_id": run_id, "step": name, "op": op, "count": count, "errors": errors,
            "p99_us": p99_us, "max_us": max_us, "mean_us": mean_us, "config": config}


def lines_of(text: str) -> list[str]:
    """The lines of a text block without its caption: header first."""
    return text.splitlines()[1:]


def by_header(header: str, line: str) -> dict[str, str]:
    """Slice a fixed-width line at its header's column starts: {column: field}."""
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    names = header.split()
    ends = starts[1:] + [None]
    return {n: line[a:b].strip() if a < len(line) else "" for n, a, b in zip(names, starts, ends)}


# ---------------------------------------------------------------- the hand-made experiment

def hand_results() -> dict:
    """A load of 10 s × 50,000 ops, an index step of 5 s, a run loop of 20 s × 30,000 ops."""
    hw = samples("run1", "l.pre", 10,
                 cpu_user=lambda s: 20.0 + s,            # mean 24.5
                 cpu_sys=5.0,                            # → cpups = 29.5 %
                 ctx_switches=lambda s: 1000.0 * (s + 1),  # mean 5500 /s
                 disk_reads=lambda s: 10.0 * s,          # mean 45 /s
                 disk_read_kb=lambda s: 1024.0 * s + 512,  # mean 1024·4.5 + 512 = 5120 KB/s
                 disk_write_kb=2048.0,                   # 2048 KB/s
                 client_cpu_s=0.3,                       # Σ = 3.0 s
                 dbms_cpu_s=0.8,                         # Σ = 8.0 s
                 db_size_gb=lambda s: 1.0 + 0.1 * s,     # end: 1.9 GB
                 dbms_rss_gb=lambda s: 2.0 + 0.1 * s,    # end: 2.9 GB
                 dbms_vsz_gb=lambda s: 4.0 + 0.1 * s)    # end: 4.9 GB
    hw += samples("run1", "l.post", 5, cpu_user=10.0, cpu_sys=2.0, ctx_switches=500.0,
                  disk_reads=100.0, disk_read_kb=20000.0, disk_write_kb=10000.0,
                  client_cpu_s=0.0, dbms_cpu_s=1.0, db_size_gb=2.5, dbms_rss_gb=3.0,
                  dbms_vsz_gb=5.0)
    hw += samples("run1", "r.L1", 20, cpu_user=60.0, cpu_sys=15.0, ctx_switches=15000.0,
                  disk_reads=300.0, disk_read_kb=3000.0, disk_write_kb=1500.0,
                  client_cpu_s=0.5, dbms_cpu_s=1.5, db_size_gb=2.5, dbms_rss_gb=3.25,
                  dbms_vsz_gb=5.5)
    latency = [lat("run1", "l.pre", "INSERT", 50000, 900, 5000, 100),
               lat("run1", "r.L1", "READ", 15000, 1200, 50000, 300),
               lat("run1", "r.L1", "UPDATE", 15000, 2400, 70000, 400),
               lat("run1", "r.L1", "Intended-READ", 15000, 9900, 99000, 900)]
    return results_of([step("run1", "l.pre", 10.0, 50000), step("run1", "l.post", 5.0, 50000),
                       step("run1", "r.L1", 20.0, 30000, loop=1)], hw, latency)


def test_eff_op_every_column_by_hand():
    df = eff_op(hand_results()).set_index("step")
    load = df.loc["l.pre"]
    assert load["ips"] == pytest.approx(5000)            # 50,000 ops / 10 s
    assert load["secs"] == pytest.approx(10)
    assert load["rpi"] == pytest.approx(0.009)           # 45 reads/s / 5000
    assert load["rkbpi"] == pytest.approx(1.024)         # 5120 KB/s / 5000
    assert load["wkbpi"] == pytest.approx(0.4096)        # 2048 KB/s / 5000
    assert load["cspi"] == pytest.approx(1.1)            # 5500 cs/s / 5000
    assert load["cpupi"] == pytest.approx(5900)          # 29.5 % / 5000 × 1e6
    assert load["csecpq"] == pytest.approx(60.0)         # 3.0 s / 50,000 × 1e6 µs
    assert load["dsecpq"] == pytest.approx(160.0)        # 8.0 s / 50,000 × 1e6 µs
    assert load["csec"] == pytest.approx(3.0)            # 10 × 0.3 s
    assert load["dsec"] == pytest.approx(8.0)            # 10 × 0.8 s
    assert load["dbgb"] == pytest.approx(1.9)            # last sample
    assert load["cnf"] == "cfgA"

    idx = df.loc["l.post"]
    assert idx["ips"] == pytest.approx(10000)            # 50,000 rows / 5 s
    assert idx["rpi"] == pytest.approx(0.01)             # 100 / 10,000
    assert idx["rkbpi"] == pytest.approx(2.0)            # 20,000 / 10,000
    assert idx["cpupi"] == pytest.approx(1200)           # 12 % / 10,000 × 1e6
    assert idx["csecpq"] == pytest.approx(0.0)           # a measured zero stays 0
    assert idx["dsecpq"] == pytest.approx(100.0)         # 5 s / 50,000 × 1e6

    run = df.loc["r.L1"]
    assert run["ips"] == pytest.approx(1500)             # 30,000 / 20 s
    assert run["rpi"] == pytest.approx(0.2)              # 300 / 1500
    assert run["cspi"] == pytest.approx(10.0)            # 15,000 / 1500
    assert run["cpupi"] == pytest.approx(50000)          # 75 % / 1500 × 1e6
    assert run["csecpq"] == pytest.approx(333.333, rel=1e-4)  # 10 s / 30,000 × 1e6
    assert run["dsecpq"] == pytest.approx(1000.0)        # 30 s / 30,000 × 1e6


def test_eff_op_text_is_the_seed_layout():
    text = format_lines(eff_op(hand_results()), "eff.op")
    blocks = text.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == ["l.pre.eff.op", "l.post.eff.op", "r.L1.eff.op"]
    assert blocks[0].splitlines()[1] == SEED_EFF_OP_HEADER
    assert blocks[0].splitlines()[2] == (
        "5000    10      0.009   1.024   0.410   1.1     5900    60.0    160.0   3       8       1.9     cfgA")
    # a run loop's rate is transactions/s and its per-op figures per transaction
    assert blocks[2].splitlines()[1].split() == [
        "tps", "secs", "rpt", "rkbpt", "wkbpt", "cspt", "cpupt", "csecpq", "dsecpq", "csec", "dsec",
        "dbgb", "cnf"]
    assert blocks[2].splitlines()[2].split() == [
        "1500", "20", "0.200", "2.000", "1.000", "10.0", "50000", "333.3", "1000.0", "10", "30", "2.5",
        "cfgA"]


def test_eff_sec_every_column_by_hand():
    res = hand_results()
    load = eff_sec(res).set_index("step").loc["l.pre"]
    assert load["rps"] == pytest.approx(45)              # mean disk_reads
    assert load["rmbps"] == pytest.approx(5.0)           # 5120 KB/s / 1024
    assert load["wmbps"] == pytest.approx(2.0)           # 2048 KB/s / 1024
    assert load["csps"] == pytest.approx(5500)
    assert load["cpups"] == pytest.approx(29.5)          # mean(user + sys)
    assert load["cutil"] == pytest.approx(0.3)           # 3.0 s / 10 s
    assert load["dutil"] == pytest.approx(0.8)           # 8.0 s / 10 s
    assert load["vsz"] == pytest.approx(4.9)             # last sample
    assert load["rss"] == pytest.approx(2.9)             # last sample
    text = format_lines(eff_sec(res), "eff.sec").split("\n\n")[0].splitlines()
    assert text[0] == "l.pre.eff.sec"
    assert text[1] == SEED_EFF_SEC_HEADER
    assert text[2] == "5000    10      45      5       2       5500    29.5    0.300   0.800   4.9     2.9     cfgA"


def test_blank_not_zero_without_dbms_columns():
    """A remote server: no DBMS process, no DB size → blank, never 0."""
    hw = samples("run1", "l.pre", 10, cpu_user=20.0, cpu_sys=5.0, ctx_switches=100.0,
                 disk_reads=0.0, disk_read_kb=0.0, disk_write_kb=1000.0, client_cpu_s=0.2)
    res = results_of([step("run1", "l.pre", 10.0, 50000)], hw)
    op = eff_op(res).iloc[0]
    for col in ("dsecpq", "dsec", "dbgb"):
        assert np.isnan(op[col]), col
    assert op["csec"] == pytest.approx(2.0) and op["rpi"] == 0.0   # a measured 0 stays 0
    sec = eff_sec(res).iloc[0]
    for col in ("dutil", "vsz", "rss"):
        assert np.isnan(sec[col]), col
    header, line = lines_of(format_lines(eff_op(res), "eff.op"))
    f = by_header(header, line)
    assert f["dsecpq"] == "" and f["dsec"] == "" and f["dbgb"] == ""
    assert f["csec"] == "2" and f["rpi"] == "0.000" and f["cnf"] == "cfgA"
    header, line = lines_of(format_lines(eff_sec(res), "eff.sec"))
    f = by_header(header, line)
    assert (f["dutil"], f["vsz"], f["rss"]) == ("", "", "")
    assert f["cutil"] == "0.200" and f["cnf"] == "cfgA"


def test_sizes_are_at_step_end_not_the_maximum():
    # rss peaks at 5 GB mid-step and ends at 3 GB; the last sample lacks a DB size,
    # so dbgb is the last sample that has one (second 8: 1.8 GB)
    hw = samples("run1", "l.pre", 10, dbms_rss_gb=lambda s: 5.0 if s == 4 else 3.0,
                 dbms_vsz_gb=lambda s: 9.0 - 0.5 * s,
                 db_size_gb=lambda s: np.nan if s == 9 else 1.0 + 0.1 * s)
    res = results_of([step("run1", "l.pre", 10.0, 50000)], hw)
    assert eff_sec(res).iloc[0]["rss"] == pytest.approx(3.0)
    assert eff_sec(res).iloc[0]["vsz"] == pytest.approx(4.5)   # 9 - 0.5 × 9
    assert eff_op(res).iloc[0]["dbgb"] == pytest.approx(1.8)


def test_blank_everything_hardware_for_an_import_without_hw():
    res = results_of([step("run1", "r.L1", 30.0, 3000, loop=1)])
    op = eff_op(res).iloc[0]
    assert op["ips"] == pytest.approx(100)
    assert op[["rpi", "rkbpi", "wkbpi", "cspi", "cpupi", "csecpq", "dsecpq", "csec", "dsec",
               "dbgb"]].isna().all()
    header, line = lines_of(format_lines(eff_op(res), "eff.op"))
    assert line.split() == ["100", "30", "cfgA"]
    assert by_header(header, line)["cnf"] == "cfgA"
    line = lines_of(format_lines(run_lines(res), "run"))[1]
    assert line.split() == ["100", "cfgA"]


# ---------------------------------------------------------------- the seeds' own rows

# (step, config, secs, ips, hw per sample, seed eff.op line, seed eff.sec line)
# hw values are derived from the seed's figures; every sample is the same, 10 samples.
SEED_ROWS = [
    ("l.pre", "my56.c5", 25147, 30248,
     # wkbpi 0.522 × 30248 = 15789 → 15790 KB/s (wmbps 15790/1024 = 15.4 → 15);
     # cpups 26.2 with cpupi 865 → 26.16 %; csecpq 8.7 and cutil 0.262 → csec 6590 s;
     # dsec 15954 s (dsecpq 15954 / (30248 × 25147) × 1e6 = 20.97 µs)
     {"disk_reads": 0.0, "disk_read_kb": 0.0, "disk_write_kb": 15790.0, "ctx_switches": 2512.0,
      "cpu_user": 20.16, "cpu_sys": 6.0, "client_cpu_s": 659.0, "dbms_cpu_s": 1595.4,
      "db_size_gb": 188.7, "dbms_vsz_gb": 13.0, "dbms_rss_gb": 11.3},
     # the seed prints csec 15954 (= its dsec) though its own csecpq 8.7 and cutil 0.262
     # say 6590: the seed's csec column repeats dsec in all of its eff.op rows (for the
     # index step too: csec 2421 with csecpq 0.0). The legend wins: csec = 6590.
     "30248   25147   0.000   0.000   0.522   0.1     865     8.7     21.0    6590    15954   188.7   my56.c5",
     "30248   25147   0       0       15      2512    26.2    0.262   0.634   13.0    11.3    my56.c5"),
    ("l.pre", "my57.c5", 16798, 45282,
     # wkbpi 0.601 → 27215 KB/s (/1024 = 26.6 → 27); cpupi 611 and cpups 27.7 → 27.67 %;
     # csecpq 5.0 and cutil 0.228 → csec 3830 s; dsec 14901 → dsecpq 19.6, dutil 0.887
     {"disk_reads": 0.0, "disk_read_kb": 0.0, "disk_write_kb": 27215.0, "ctx_switches": 4095.0,
      "cpu_user": 21.67, "cpu_sys": 6.0, "client_cpu_s": 383.0, "dbms_cpu_s": 1490.1,
      "db_size_gb": 243.5, "dbms_vsz_gb": 14.1, "dbms_rss_gb": 12.4},
     "45282   16798   0.000   0.000   0.601   0.1     611     5.0     19.6    3830    14901   243.5   my57.c5",
     # (the seed labels this eff.sec row my56.c5; it is the my57.c5 step)
     "45282   16798   0       0       27      4095    27.7    0.228   0.887   14.1    12.4    my57.c5"),
    ("l.post", "my56.c6", 2440, 311740,
     # rps 448 (rpi 0.0014); rkbpi 0.133 and rmbps 40 → 41400 KB/s (/1024 = 40.4);
     # wkbpi 0.067 and wmbps 21 → 21000 KB/s (/1024 = 20.5 → 21); cpups 26.1 → cpupi 84;
     # no client during create index: csec 0 (the seed prints its dsec, 2421, again)
     {"disk_reads": 448.0, "disk_read_kb": 41400.0, "disk_write_kb": 21000.0, "ctx_switches": 1518.0,
      "cpu_user": 20.1, "cpu_sys": 6.0, "client_cpu_s": 0.0, "dbms_cpu_s": 242.1,
      "db_size_gb": 209.8, "dbms_vsz_gb": 13.9, "dbms_rss_gb": 12.0},
     "311740  2440    0.001   0.133   0.067   0.0     84      0.0     3.2     0       2421    209.8   my56.c6",
     # (the seed labels this eff.sec row my40.c2)
     "311740  2440    448     40      21      1518    26.1    0.000   0.992   13.9    12.0    my56.c6"),
]


@pytest.mark.parametrize("name,config,secs,ips,hw,seed_op,seed_sec", SEED_ROWS,
                         ids=[r[1] for r in SEED_ROWS])
def test_seed_rows_reproduce(name, config, secs, ips, hw, seed_op, seed_sec):
    res = results_of([step("r", name, float(secs), ips * secs, config=config)],
                     samples("r", name, 10, config=config, **hw))
    header, line = lines_of(format_lines(eff_op(res), "eff.op"))
    assert header == SEED_EFF_OP_HEADER
    assert line == seed_op
    header, line = lines_of(format_lines(eff_sec(res), "eff.sec"))
    assert header == SEED_EFF_SEC_HEADER
    assert line == seed_sec


def test_seed_rt_row_linkbench_load():
    # ips 26272 over 25146 s; n/l/c = Node/Link/Count bulk inserts, p99 max mean in ms
    res = results_of([step("r", "l.pre", 25146.0, 26272 * 25146, config="my56.c5")], latency=[
        lat("r", "l.pre", "LOAD_NODE_BULK", 1000, 43_000, 1_419_000, 26_000, config="my56.c5"),
        lat("r", "l.pre", "LOAD_LINKS_BULK", 5000, 77_000, 1_259_000, 39_000, config="my56.c5"),
        lat("r", "l.pre", "LOAD_COUNTS_BULK", 3000, 69_000, 1_087_000, 35_000, config="my56.c5")])
    df = response_times(res)
    assert df.iloc[0]["n9"] == pytest.approx(43.0) and df.iloc[0]["lx"] == pytest.approx(1259.0)
    header, line = lines_of(format_lines(df, "rt"))
    assert header == SEED_RT_HEADER
    assert line == "26272   25146   43      1419    26      77      1259    39      69      1087    35      my56.c5"


def test_seed_transaction_line():
    # tps 3868; r/s 10.4 (r/t 0.0027 → 0); wkb/t 1.41 and wMB/s 5.4 → 5440 KB/s (/1000);
    # Mcpu/t 8154 = cpu / tps × 1e6 → cpu 31.54 %; size 3.0 GB, rss 4.04 GB at the end
    hw = samples("r", "r.L1", 10, config="MyRocks", disk_reads=10.4, disk_read_kb=0.0,
                 disk_write_kb=5440.0, cpu_user=25.54, cpu_sys=6.0, db_size_gb=3.0,
                 dbms_rss_gb=4.04)
    latency = [lat("r", "r.L1", op, n, p99, 0, 0, config="MyRocks") for op, n, p99 in [
        ("GET_LINKS_LIST", 5_000_000, 500), ("GET_NODE", 1_000_000, 100),
        ("UPDATE_LINK", 700_000, 600), ("UPDATE_NODE", 900_000, 200),
        ("COUNT_LINK", 800_000, 900), ("ADD_LINK", 800_000, 900)]]
    res = results_of([step("r", "r.L1", 3600.0, 3868 * 3600, config="MyRocks", loop=1)], hw, latency)
    header, line = lines_of(format_lines(run_lines(res), "run"))
    assert header.split() == SEED_RUN_HEADER.split()
    assert line.split() == SEED_RUN_LINE.split()
    assert run_lines(res).iloc[0]["Mcpu/t"] == pytest.approx(31.54 / 3868 * 1e6)


def test_seed_load_line():
    # ips 29810; wkb/i 1.33 and wMB/s 39.6 → 39600 KB/s; Mcpu/i 1311 → cpu 39.08 %
    hw = samples("r", "l.pre", 10, config="MyRocks", disk_reads=0.0, disk_read_kb=0.0,
                 disk_write_kb=39600.0, cpu_user=33.08, cpu_sys=6.0, db_size_gb=2.8,
                 dbms_rss_gb=0.17)
    res = results_of([step("r", "l.pre", 1000.0, 29810 * 1000, config="MyRocks")], hw)
    header, line = lines_of(format_lines(run_lines(res), "run"))
    assert header.split() == SEED_LOAD_HEADER.split()
    assert line.split() == SEED_LOAD_LINE.split()


# ---------------------------------------------------------------- response times, main ops

def test_rt_and_run_lines_for_ycsb_ops():
    res = hand_results()
    rt = response_times(res).set_index("step")
    assert rt.loc["r.L1", "rd9"] == pytest.approx(1.2)   # 1200 µs
    assert rt.loc["r.L1", "upx"] == pytest.approx(70.0)  # 70,000 µs
    assert rt.loc["l.pre", "inm"] == pytest.approx(0.1)  # 100 µs
    assert np.isnan(rt.loc["l.pre", "rd9"])              # not an op of the load: blank
    assert response_times(res, intended=True).set_index("step").loc["r.L1", "rd9"] == pytest.approx(9.9)
    blocks = format_lines(response_times(res), "rt").split("\n\n")
    assert blocks[0].splitlines()[1].split() == ["ips", "secs", "in9", "inx", "inm", "cnf"]
    assert blocks[2].splitlines()[1].split() == ["tps", "secs", "rd9", "rdx", "rdm", "up9", "upx",
                                                 "upm", "cnf"]
    assert blocks[2].splitlines()[2].split() == ["1500", "20", "1.2", "50", "0.3", "2.4", "70", "0.4",
                                                 "cfgA"]
    run = run_lines(res).set_index("step").loc["r.L1"]
    assert run["r/t"] == pytest.approx(0.2)              # 300 / 1500
    assert run["wkb/t"] == pytest.approx(1.0)            # 1500 / 1500
    assert run["Mcpu/t"] == pytest.approx(50000)         # 75 / 1500 × 1e6
    assert run["rMB/s"] == pytest.approx(3.0)            # 3000 KB/s / 1000
    assert run["wMB/s"] == pytest.approx(1.5)            # 1500 KB/s / 1000
    # READ was paced (its Intended- row): the p99 from the intended start, service beside
    assert run["rd"] == pytest.approx(9.9) and run["rd.s"] == pytest.approx(1.2)
    assert run["up"] == pytest.approx(2.4) and np.isnan(run.get("up.s", np.nan))
    header = format_lines(run_lines(res), "run").split("\n\n")[-1].splitlines()[1].split()
    assert header[header.index("rss") + 1:header.index("r/s")] == ["rd", "rd.s", "up"]


def test_main_ops_are_the_five_most_frequent():
    ops = [("READ", 500), ("UPDATE", 300), ("SCAN", 100), ("INSERT", 50), ("READ-MODIFY-WRITE", 20),
           ("DELETE", 10)]
    latency = [lat("r", "r.L1", op, n, 1000, 2000, 500) for op, n in ops]
    res = results_of([step("r", "r.L1", 10.0, 980, loop=1)], latency=latency)
    df = run_lines(res)
    cols = list(df.columns)
    # the five most frequent (all of a five-op mix, as kv's and YCSB's are: the same
    # columns whatever the dice gave), not DELETE, in YCSB's fixed order
    assert cols[cols.index("rss") + 1:cols.index("r/s")] == ["rd", "up", "in", "sc", "rmw"]


# ---------------------------------------------------------------- cnf, step_lines, summarize

def test_cnf_is_the_run_id_when_a_config_has_several_runs():
    res = results_of([step("cfgA-t1-r1", "r.L1", 10.0, 100, loop=1),
                      step("cfgA-t4-r1", "r.L1", 10.0, 400, loop=1),
                      step("pg-run", "r.L1", 10.0, 300, loop=1, config="pg")])
    assert list(eff_op(res)["cnf"]) == ["cfgA-t1-r1", "cfgA-t4-r1", "pg"]


def test_step_lines_prints_every_format_of_one_step():
    text = step_lines(hand_results(), "run1", "r.L1")
    captions = [b.splitlines()[0] for b in text.split("\n\n")]
    assert captions == ["r.L1.eff.op", "r.L1.eff.sec", "r.L1.rt", "r.L1.run"]
    assert "l.pre" not in text


def test_summarize_kinds():
    res = hand_results()
    for kind in ("eff.op", "eff.sec", "rt", "run", "experiment"):
        assert summarize(res, kind)
    with pytest.raises(ValueError, match="unknown summary kind"):
        summarize(res, "eff.xyz")
    assert summarize(results_of([]), "eff.op") == "(no steps)"


# ---------------------------------------------------------------- experiment summary

def run_meta(run_id, config, dbms, version, status="ok", error=None) -> dict:
    return {
        "run_id": run_id, "experiment": "exp", "config": config, "status": status, "error": error,
        "workload": "ycsb", "started": "2026-01-01T00:00:00+00:00",
        "ended": "2026-01-01T00:01:40+00:00", "benchlib_version": "0.1.0",
        "threads": 2, "processes": 2, "load_processes": 1, "target_ops_per_s": None,
        "load_target_ops_per_s": None, "repetition": 1, "planned": ["l.pre", "r.L1"],
        "workload_properties": {"recordcount": "1000", "operationcount": "2000",
                                "insertorder": "hashed", "readproportion": "0.5",
                                "updateproportion": "0.5"},
        "parameters": {"experiment": "exp", "description": "two DBMS side by side",
                       "workload_file": "workloads/workloada", "repetitions": 1,
                       "targets": [{"name": "sqlite"}, {"name": "pg"}],
                       "load": {"threads": 2, "processes": [1], "batch_size": 100,
                                "target_factors": [0.0]},
                       "run": {"threads": [2], "processes": "auto", "target_base": 16384.0,
                               "target_factors": [0.0], "loops": 1, "loop_secs": None}},
        "host": {"hostname": "bench1", "cpu": "Test CPU 3000", "cores": 8,
                 "ram_bytes": 16_000_000_000, "kernel": "6.1.0-test", "os": "Linux"},
        "dbms": {"name": dbms, "version": version},
        "target": {"name": config, "url": "sqlite" if config == "sqlite" else
                   "postgresql://bench:***@127.0.0.1/test", "kind": config},
    }


def two_config_results(pg_status="ok", pg_loop_errors=0, pg_hw=True, pg_has_loop=True) -> dict:
    steps = [step("sqlite-r1", "l.pre", 2.0, 1000, config="sqlite", threads=2),
             step("sqlite-r1", "r.L1", 4.0, 2000, config="sqlite", threads=2, loop=1),
             step("pg-r1", "l.pre", 1.0, 1000, config="pg", threads=2)]
    if pg_has_loop:
        steps.append(step("pg-r1", "r.L1", 2.0, 2000 - pg_loop_errors, config="pg", threads=2,
                          loop=1, errors=pg_loop_errors,
                          status="ok" if pg_status == "ok" else "failed"))
    hw = []
    for run_id, config in (("sqlite-r1", "sqlite"), ("pg-r1", "pg")):
        for name in ("l.pre", "r.L1"):
            dbms = {"dbms_cpu_s": 0.5, "dbms_rss_gb": 0.25} if (config == "sqlite" or pg_hw) else {}
            hw += samples(run_id, name, 2, config=config, cpu_user=10.0, cpu_sys=5.0,
                          client_cpu_s=0.25, **dbms)
    latency = []
    for run_id, config in (("sqlite-r1", "sqlite"), ("pg-r1", "pg")):
        latency += [lat(run_id, "l.pre", "INSERT", 1000, 800, 3000, 200, config=config),
                    lat(run_id, "r.L1", "READ", 1000, 500, 2000, 150, config=config),
                    lat(run_id, "r.L1", "UPDATE", 1000, 700, 2500, 250, config=config)]
    metas = {"sqlite-r1": run_meta("sqlite-r1", "sqlite", "SQLite", "3.40.1"),
             "pg-r1": run_meta("pg-r1", "pg", "PostgreSQL", "16.1", pg_status,
                               None if pg_status == "ok" else "server closed the connection")}
    runs = pd.DataFrame([{"run_id": r, "experiment": "exp", "config": m["config"],
                          "status": m["status"]} for r, m in metas.items()])
    return results_of(steps, hw, latency, runs=runs, meta=metas)


def test_experiment_summary_all_passed():
    s = experiment_summary(two_config_results())
    assert s.passed, s.text
    tests = [ln for ln in s.text.splitlines() if ln.startswith("TEST")]
    assert tests == [
        "TEST passed: [OVERALL].Throughput(ops/sec) contains no 0 or NaN",
        "TEST passed: [OVERALL].Throughput(ops/sec) contains no 0 or NaN",
        "TEST passed: Ingestion SUT contains no 0 or NaN in CPU [CPUs]",
        "TEST passed: Ingestion Loader contains no 0 or NaN in CPU [CPUs]",
        "TEST passed: Execution SUT contains no 0 or NaN in CPU [CPUs]",
        "TEST passed: Execution Benchmarker contains no 0 or NaN in CPU [CPUs]",
        "TEST passed: Workflow as planned",
        "TEST passed: Result contains no FAILED column"]
    for title in ("### Workload", "### Connections", "### Loading", "### Execution", "### Workflow",
                  "### Ingestion - SUT", "### Execution - Benchmarker", "### Tests"):
        assert title in s.text
    for sentence in ("    Number of rows to insert is 1000.", "    Ordering of inserts is hashed.",
                     "    Workload is 'workloada'.", "    Experiment is run once.",
                     "    Duration: 100s", "pg uses PostgreSQL 16.1", "    Cores:8",
                     "    host:6.1.0-test", "    RAM:14.9 GB",
                     "    url:postgresql://bench:***@127.0.0.1/test"):
        assert sentence in s.text.splitlines(), sentence
    ex = s.sections["execution"]
    assert ex.loc["pg-r1", "[OVERALL].Throughput(ops/sec)"] == pytest.approx(1000)  # 2000 / 2 s
    assert ex.loc["pg-r1", "[OVERALL].RunTime(ms)"] == pytest.approx(2000)
    assert ex.loc["sqlite-r1", "[READ].99thPercentileLatency(us)"] == pytest.approx(500)
    assert ex.loc["sqlite-r1", "[UPDATE].Return=OK"] == pytest.approx(1000)
    sut = s.sections["execution_sut"]
    assert sut.loc["sqlite-r1", "CPU [CPUs]"] == pytest.approx(1.0)    # 2 samples × 0.5 s
    assert sut.loc["sqlite-r1", "Max RAM [Gb]"] == pytest.approx(0.25)
    assert np.isnan(s.sections["execution_benchmarker"].loc["pg-r1", "Max RAM [Gb]"])
    assert set(s.sections) >= {"workload", "connections", "loading", "execution", "workflow", "tests"}


def test_experiment_summary_one_failed_run():
    s = experiment_summary(two_config_results(pg_status="failed", pg_loop_errors=3, pg_hw=False))
    assert not s.passed
    lines = s.text.splitlines()
    failed = [ln for ln in lines if ln.startswith("TEST failed: Result contains no FAILED column")]
    assert failed and "pg-r1" in failed[0] and "server closed the connection" in failed[0]
    # the server's CPU was not measured for pg: the SUT sections say so, not 0
    assert any(ln.startswith("TEST failed: Execution SUT contains no 0 or NaN in CPU [CPUs]: pg-r1")
               for ln in lines)
    assert "TEST passed: Workflow as planned" in lines


def test_experiment_summary_workflow_not_as_planned():
    s = experiment_summary(two_config_results(pg_status="failed", pg_has_loop=False))
    lines = s.text.splitlines()
    assert any(ln.startswith("TEST failed: Workflow as planned") and "pg-r1 misses r.L1" in ln
               for ln in lines)
    # a planned configuration with no run at all
    res = two_config_results()
    res["meta"]["sqlite-r1"]["parameters"]["targets"].append({"name": "mysql"})
    res["meta"]["pg-r1"]["parameters"]["targets"].append({"name": "mysql"})
    s = experiment_summary(res)
    assert any(ln.startswith("TEST failed: Workflow as planned") and "mysql" in ln
               for ln in s.text.splitlines())


def test_experiment_summary_reads_meta_from_run_folders(tmp_path):
    res = two_config_results()
    for run_id, meta in res["meta"].items():
        tables = {t: res[t][res[t]["run_id"] == run_id].drop(columns=["experiment", "config"])
                  for t in ("steps", "latency", "hw")}
        results_mod.write_run(tmp_path / "exp" / run_id, meta, **tables)
    loaded = results_mod.load_results(tmp_path / "exp")
    s = experiment_summary(loaded)
    assert "sqlite uses SQLite 3.40.1" in s.text.splitlines()
    assert s.passed, s.text
    assert format_lines(eff_op(loaded), "eff.op").splitlines()[1] == SEED_EFF_OP_HEADER


def test_summaries_read_only_what_load_results_gives(tmp_path):
    """Each run's meta.json rides along in the runs table: the experiment summary of
    loaded results is the same after the run folders are gone."""
    import shutil
    from pathlib import Path

    from benchlib.summaries import experiment_summary
    src = Path(__file__).resolve().parents[1] / "data" / "samples" / "sample"
    shutil.copytree(src, tmp_path / "sample")
    res = results_mod.load_results(tmp_path / "sample")
    before = experiment_summary(res).text
    shutil.rmtree(tmp_path / "sample")
    assert experiment_summary(res).text == before
    assert "Number of rows to insert is" in before   # a workload property, from the meta


def test_loader_and_benchmarker_resources_one_row_per_host():
    """Drivers on two hosts (executor: dask): the controller's host "a" with the DBMS, a
    worker host "b"; the SUT figures are host a's, the benchmarker's one row per host."""
    res = two_config_results()
    res["meta"]["sqlite-r1"]["host"] = {"hostname": "a"}
    hw = res["hw"].assign(host=[("a" if r == "sqlite-r1" else None) for r in res["hw"]["run_id"]])
    extra = tidy("hw", samples("sqlite-r1", "r.L1", 2, config="sqlite", cpu_user=90.0, cpu_sys=5.0,
                               client_cpu_s=1.5))
    res["hw"] = pd.concat([hw, extra.assign(host="b")], ignore_index=True)
    drv = [{"run_id": "sqlite-r1", "step": "r.L1", "client": i, "executor": "dask", "host": h,
            "threads": 1, "ops": 1000, "errors": 0, "cpu_s": cpu, "rss_gb": 0.125}
           for i, (h, cpu) in enumerate([("a", 0.5), ("b", 2.5), ("b", 0.5)])]
    res["drivers"] = pd.DataFrame(drv)
    s = experiment_summary(res)
    bench = s.sections["execution_benchmarker"]
    rows = bench.loc["sqlite-r1"].set_index("host")
    assert rows.loc["a", "CPU [CPUs]"] == pytest.approx(0.5)
    assert rows.loc["b", "CPU [CPUs]"] == pytest.approx(3.0)        # its two drivers
    assert rows.loc["b", "Max CPU"] == pytest.approx(1.5)           # host b's own samples
    assert rows.loc["a", "Max CPU"] == pytest.approx(0.25)
    assert rows.loc["b", "Max RAM [Gb]"] == pytest.approx(0.25)
    assert bench.loc["pg-r1", "CPU [CPUs]"] == pytest.approx(0.5)   # no driver rows: as before
    # host b's busy CPUs are not the SUT's: the step's figures are host a's
    st = s.sections["execution_sut"]
    assert st.loc["sqlite-r1", "CPU [CPUs]"] == pytest.approx(1.0)
    assert any(ln.startswith("Run sqlite-r1 r.L1 - planned") and ln.endswith("ran 3 (dask) on 2 host(s), 3 finished")
               for ln in s.text.splitlines())
