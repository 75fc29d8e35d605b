"""vmstat / iostat / mpstat / ps logs into the hw table.

The golden files in data/hwlogs/ are real captures (see /work/shared/samples/README.md:
LinkBench request phase on PostgreSQL, 2 CPUs, sysstat 12.6.1, procps-ng). Every
expected number below was read from those files by hand or with awk, not from the
parser. The other layouts are small snippets written in the formats of those tool
versions.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from benchlib import schema
from benchlib.importers.base import ImportFormatError
from benchlib.importers.hwlogs import merge_hw_logs, read_hw_log

HW = Path(__file__).parent / "data" / "hwlogs"
VMSTAT = HW / "pgsql_request_vmstat_1s.log"
IOSTAT = HW / "pgsql_request_iostat_kx_1s.log"
MPSTAT = HW / "pgsql_request_mpstat_1s.log"
PS = HW / "pgsql_request_ps_server_tree_pid3810_1s.log"
KIB_PER_GB = 1024 ** 2


def write(tmp_path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def only(df: pd.DataFrame, *cols: str) -> None:
    """The frame has all hw columns and only ``cols`` (plus second/ts) hold values."""
    assert list(df.columns) == list(schema.HW)
    filled = {c for c in schema.HW if df[c].notna().any()}
    assert filled <= {"second", "ts", *cols}
    assert set(cols) <= filled


def row(df, i) -> dict:
    return df.iloc[i].to_dict()


# ---------------------------------------------------------------- golden: vmstat

def test_vmstat_golden():
    df = read_hw_log(VMSTAT)
    assert df.attrs["hw_kind"] == "vmstat"
    # 75 lines - 4 x 2 header lines = 67 data lines, minus the since-boot line
    assert len(df) == 66
    assert df["second"].tolist() == list(range(66))
    only(df, "cpu_user", "cpu_sys", "cpu_iowait", "cpu_idle", "ctx_switches")
    # first line "5 0 … 11127 42 23 33 2 0" is since boot; the next is the first sample
    r = row(df, 0)
    assert (r["cpu_user"], r["cpu_sys"], r["cpu_idle"], r["cpu_iowait"], r["ctx_switches"]) == \
        (47, 13, 39, 1, 2566)
    r = row(df, 65)
    assert (r["cpu_user"], r["cpu_sys"], r["cpu_idle"], r["cpu_iowait"], r["ctx_switches"]) == \
        (22, 25, 50, 2, 15763)
    # the lines right after the repeated headers (lines 26 and 49)
    assert row(df, 20)["ctx_switches"] == 35525 and row(df, 41)["ctx_switches"] == 29047
    assert df["cpu_user"].sum() == 4059 and df["cpu_sys"].sum() == 2120
    assert df["cpu_idle"].sum() == 307 and df["cpu_iowait"].sum() == 117
    assert df["ctx_switches"].sum() == 1926201


def test_vmstat_wide_and_timestamps(tmp_path):
    # procps-ng 4.0.2 `vmstat -tw 1` (gu column, zone label in the header)
    p = write(tmp_path, "vm.log", """\
--procs-- -----------------------memory---------------------- ---swap-- -----io---- -system-- ----------cpu---------- -----timestamp-----
   r    b         swpd         free         buff        cache   si   so    bi    bo   in   cs  us  sy  id  wa  st  gu                 UTC
   1    0            0     23871404         4324       562528    0    0   670   950  389  819   4   2  94   0   0   0 2026-11-22 03:42:16
   1    0            0     23871404         4324       562528    0    0     8   256  228  278   0   0 100   0   0   0 2026-11-22 03:42:17
   3    0            0     23871404         4324       562528    0    0     8   256  228  301  61  12  25   2   0   0 2026-11-22 03:42:18
""")
    df = read_hw_log(p)
    assert len(df) == 2
    assert df["ts"].tolist() == [pd.Timestamp("2026-11-22 03:42:17", tz="UTC"),
                                 pd.Timestamp("2026-11-22 03:42:18", tz="UTC")]
    assert row(df, 1)["cpu_user"] == 61 and row(df, 1)["cpu_idle"] == 25 and row(df, 1)["ctx_switches"] == 301


def test_vmstat_cut_off_last_line_is_dropped(tmp_path):
    text = VMSTAT.read_text()
    p = write(tmp_path, "vm.log", text[:-20])    # killed mid-line: no newline at the end
    df = read_hw_log(p, kind="vmstat")
    assert len(df) == 65 and row(df, 64)["ctx_switches"] == 33100


# ---------------------------------------------------------------- golden: iostat

def test_iostat_golden():
    df = read_hw_log(IOSTAT)
    assert df.attrs["hw_kind"] == "iostat"
    assert len(df) == 66                 # 67 reports, the first is since boot
    only(df, "cpu_user", "cpu_sys", "cpu_iowait", "cpu_idle",
         "disk_reads", "disk_writes", "disk_read_kb", "disk_write_kb")
    r = row(df, 0)   # second report: 47.21 0.00 12.69 1.02 0.00 39.09 / vda 501.00 3028.00 … 96.00 1612.00
    assert (r["cpu_user"], r["cpu_sys"], r["cpu_iowait"], r["cpu_idle"]) == (47.21, 12.69, 1.02, 39.09)
    assert (r["disk_reads"], r["disk_read_kb"], r["disk_writes"], r["disk_write_kb"]) == (501, 3028, 96, 1612)
    r = row(df, 65)  # last report: 23.08 0.00 24.70 1.62 0.00 50.61 / vda 55.00 432.00 … 2692.00 13416.00
    assert (r["cpu_user"], r["cpu_sys"], r["cpu_iowait"], r["cpu_idle"]) == (23.08, 24.70, 1.62, 50.61)
    assert (r["disk_reads"], r["disk_read_kb"], r["disk_writes"], r["disk_write_kb"]) == (55, 432, 2692, 13416)
    assert df["disk_reads"].sum() == pytest.approx(20041.09)
    assert df["disk_read_kb"].sum() == pytest.approx(354737.90)
    assert df["disk_writes"].sum() == pytest.approx(215358.62)
    assert df["disk_write_kb"].sum() == pytest.approx(1465718.45)
    assert df["cpu_user"].sum() == pytest.approx(4057.08)     # %user + %nice
    assert df["cpu_idle"].sum() == pytest.approx(303.70)


def test_iostat_cut_off_last_report_is_dropped(tmp_path):
    text = IOSTAT.read_text().rstrip("\n")
    p = write(tmp_path, "io.log", text[: text.rindex("vda") + 40] + "\n")   # a half device line
    df = read_hw_log(p)
    assert len(df) == 65 and row(df, 64)["disk_reads"] == 386


# sysstat 10.1 (CentOS 7) `iostat -xk 1`: 'Device:', the old column order, avgrq-sz,
# partitions and device-mapper devices, a 4-digit year
IOSTAT_10 = """\
Linux 3.10.0-1160.el7.x86_64 (db1) \t11/22/2026 \t_x86_64_\t(8 CPU)

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
           1.20    0.00    0.50    0.10    0.00   98.20

Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util
sda               0.01     0.50    0.20    1.30     4.00    20.00    32.00     0.00    1.00    0.50    1.10   0.40   0.06
sda1              0.01     0.50    0.20    1.30     4.00    20.00    32.00     0.00    1.00    0.50    1.10   0.40   0.06
sdb               0.00     0.00    0.10    0.00     0.40     0.00     8.00     0.00    0.20    0.20    0.00   0.20   0.00
dm-0              0.00     0.00    0.21    1.80     4.00    20.00    20.00     0.00    1.20    0.60    1.30   0.30   0.06
loop0             0.00     0.00    0.00    0.00     0.00     0.00     0.00     0.00    0.00    0.00    0.00   0.00   0.00

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
          40.10    2.00   10.50    5.25    0.10   42.05

Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util
sda               0.00    12.00  100.00  200.00  1600.00  3200.00    21.33     0.50    1.50    1.00    1.75   0.30   9.00
sda1              0.00    12.00  100.00  200.00  1600.00  3200.00    21.33     0.50    1.50    1.00    1.75   0.30   9.00
sdb               0.00     0.00   10.00    5.00    80.00    40.00    16.00     0.01    0.50    0.50    0.50   0.40   0.60
dm-0              0.00     0.00  100.00  212.00  1600.00  3200.00    20.51     0.52    1.60    1.00    1.90   0.29   9.00
loop0             0.00     0.00    1.00    0.00     4.00     0.00     8.00     0.00    0.10    0.10    0.00   0.10   0.01

"""


def test_iostat_sysstat10_layout_and_device_filter(tmp_path):
    p = write(tmp_path, "io10.log", IOSTAT_10)
    df = read_hw_log(p)
    assert len(df) == 1
    r = row(df, 0)   # whole disks only: sda + sdb (not sda1, dm-0, loop0)
    assert (r["disk_reads"], r["disk_writes"], r["disk_read_kb"], r["disk_write_kb"]) == (110, 205, 1680, 3240)
    assert (r["cpu_user"], r["cpu_sys"], r["cpu_iowait"], r["cpu_idle"]) == (42.10, 10.50, 5.25, 42.05)
    r = row(read_hw_log(p, devices=["/dev/dm-0"]), 0)
    assert (r["disk_reads"], r["disk_writes"]) == (100, 212)
    r = row(read_hw_log(p, devices=lambda d: d.startswith("sd")), 0)   # a predicate
    assert r["disk_reads"] == 210
    with pytest.raises(ImportFormatError, match=r"io10.log:3: expected the selected devices among dm-0"):
        read_hw_log(p, devices=["nvme0n1"])


# sysstat 12.0 `iostat -dxmt 1`: no avg-cpu, MB/s, a timestamp line per report (ISO)
IOSTAT_12_0 = """\
Linux 4.15.0-20-generic (host) \t2026-11-22 \t_x86_64_\t(4 CPU)

2026-11-22T02:46:15+0100
Device            r/s     w/s     rMB/s     wMB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await w_await aqu-sz rareq-sz wareq-sz  svctm  %util
nvme0n1         20.00   30.00      1.50      2.50     0.00     0.00   0.00   0.00    0.10    0.20   0.00    12.00    20.00   0.05   0.10
nvme0n1p1       20.00   30.00      1.50      2.50     0.00     0.00   0.00   0.00    0.10    0.20   0.00    12.00    20.00   0.05   0.10

2026-11-22T02:46:16+0100
Device            r/s     w/s     rMB/s     wMB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await w_await aqu-sz rareq-sz wareq-sz  svctm  %util
nvme0n1        100.00  400.00      0.75      6.25     0.00     1.00   0.00   0.25    0.10    0.20   0.05     7.68    16.00   0.05   3.10
nvme0n1p1      100.00  400.00      0.75      6.25     0.00     1.00   0.00   0.25    0.10    0.20   0.05     7.68    16.00   0.05   3.10

2026-11-22T02:46:17+0100
Device            r/s     w/s     rMB/s     wMB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await w_await aqu-sz rareq-sz wareq-sz  svctm  %util
nvme0n1         50.00   10.00      0.10      0.02     0.00     1.00   0.00   0.25    0.10    0.20   0.05     7.68    16.00   0.05   3.10
nvme0n1p1       50.00   10.00      0.10      0.02     0.00     1.00   0.00   0.25    0.10    0.20   0.05     7.68    16.00   0.05   3.10

"""


def test_iostat_mb_timestamps_without_cpu(tmp_path):
    df = read_hw_log(write(tmp_path, "io12.log", IOSTAT_12_0))
    assert len(df) == 2
    only(df, "disk_reads", "disk_writes", "disk_read_kb", "disk_write_kb")
    r = row(df, 0)
    assert (r["disk_reads"], r["disk_writes"], r["disk_read_kb"], r["disk_write_kb"]) == (100, 400, 768, 6400)
    assert r["ts"] == pd.Timestamp("2026-11-22 01:46:16", tz="UTC")     # +0100 → UTC
    assert row(df, 1)["disk_write_kb"] == pytest.approx(0.02 * 1024)


# sysstat 9 `iostat -x -t 1` without -k: sectors, US date and a 12-hour clock
IOSTAT_9 = """\
Linux 2.6.32-431.el6.x86_64 (old) \t11/22/26 \t_x86_64_\t(2 CPU)

11/22/26 11:59:59 PM
avg-cpu:  %user   %nice %system %iowait  %steal   %idle
           3.00    0.00    1.00    0.00    0.00   96.00

Device:         rrqm/s   wrqm/s     r/s     w/s   rsec/s   wsec/s avgrq-sz avgqu-sz   await  svctm  %util
vda               0.00     1.00    2.00    4.00    16.00    64.00    13.33     0.00    0.50   0.20   0.12

11/23/26 12:00:00 AM
avg-cpu:  %user   %nice %system %iowait  %steal   %idle
          50.00    5.00   20.00   10.00    0.00   15.00

Device:         rrqm/s   wrqm/s     r/s     w/s   rsec/s   wsec/s avgrq-sz avgqu-sz   await  svctm  %util
vda               0.00     1.00   10.00   20.00   160.00   640.00    26.67     0.01    0.50   0.20   0.60

"""


def test_iostat_sectors_and_12h_clock(tmp_path):
    df = read_hw_log(write(tmp_path, "io9.log", IOSTAT_9))
    r = row(df, 0)
    assert (r["disk_reads"], r["disk_writes"], r["disk_read_kb"], r["disk_write_kb"]) == (10, 20, 80, 320)
    assert (r["cpu_user"], r["cpu_sys"]) == (55, 20)
    assert r["ts"] == pd.Timestamp("2026-11-23 00:00:00", tz="UTC")


def test_iostat_plain_layout(tmp_path):
    # sysstat 12 `iostat -d 1`: tps and kB_read/s only, no r/s w/s
    df = read_hw_log(write(tmp_path, "iod.log", """\
Linux 6.1.0 (vm) \t11/22/26 \t_x86_64_\t(2 CPU)

Device             tps    kB_read/s    kB_wrtn/s    kB_dscd/s    kB_read    kB_wrtn    kB_dscd
vda              30.00       100.00       900.00         0.00     123456    7654321          0

Device             tps    kB_read/s    kB_wrtn/s    kB_dscd/s    kB_read    kB_wrtn    kB_dscd
vda              12.00        48.00       200.00         0.00         48        200          0

"""))
    only(df, "disk_read_kb", "disk_write_kb")
    assert (row(df, 0)["disk_read_kb"], row(df, 0)["disk_write_kb"]) == (48, 200)


# ---------------------------------------------------------------- golden: mpstat

def test_mpstat_golden():
    df = read_hw_log(MPSTAT)
    assert df.attrs["hw_kind"] == "mpstat"
    assert len(df) == 66          # 66 'all' lines, no since-boot line, no Average: (killed)
    only(df, "ts", "cpu_user", "cpu_sys", "cpu_iowait", "cpu_idle")
    # 02:46:16 all 46.97 0.00 13.13 0.51 0.00 0.51 0.00 0.00 0.00 38.89
    r = row(df, 0)
    assert r["ts"] == pd.Timestamp("2026-11-22 02:46:16", tz="UTC")
    assert (r["cpu_user"], r["cpu_sys"], r["cpu_iowait"], r["cpu_idle"]) == \
        pytest.approx((46.97, 13.13 + 0.51, 0.51, 38.89))
    # 02:47:21 all 22.09 0.00 20.48 2.01 0.00 4.82 0.00 0.00 0.00 50.60
    r = row(df, 65)
    assert r["ts"] == pd.Timestamp("2026-11-22 02:47:21", tz="UTC")
    assert (r["cpu_user"], r["cpu_sys"], r["cpu_iowait"], r["cpu_idle"]) == \
        pytest.approx((22.09, 20.48 + 4.82, 2.01, 50.60))
    # 02:46:20 has %steal 0.50: left out, as vmstat leaves st out of us/sy/id/wa
    assert row(df, 4)["cpu_user"] + row(df, 4)["cpu_sys"] + row(df, 4)["cpu_idle"] == pytest.approx(99.5)
    assert df["cpu_user"].sum() == pytest.approx(4055.94)
    assert df["cpu_sys"].sum() == pytest.approx(2119.28)
    assert df["cpu_iowait"].sum() == pytest.approx(114.71)
    assert df["cpu_idle"].sum() == pytest.approx(305.20)


def test_mpstat_old_12h_all_cpus_and_average(tmp_path):
    # sysstat 10.1 `mpstat -P ALL 1 2` in en_US: 12-hour clock, header per interval,
    # per-CPU rows, %user instead of %usr … and the Average: block
    df = read_hw_log(write(tmp_path, "mp.log", """\
Linux 3.10.0-1160.el7.x86_64 (db1) \t11/22/2026 \t_x86_64_\t(2 CPU)

11:59:58 PM  CPU    %user   %nice    %sys %iowait    %irq   %soft  %steal  %guest   %idle
11:59:59 PM  all    10.00    1.00    5.00    2.00    0.00    1.00    0.00    0.50   80.50
11:59:59 PM    0    12.00    2.00    6.00    2.00    0.00    1.00    0.00    1.00   76.00
11:59:59 PM    1     8.00    0.00    4.00    2.00    0.00    1.00    0.00    0.00   85.00

11:59:59 PM  CPU    %user   %nice    %sys %iowait    %irq   %soft  %steal  %guest   %idle
12:00:00 AM  all    60.00    0.00   20.00    5.00    1.00    4.00    0.00    0.00   10.00
12:00:00 AM    0    60.00    0.00   20.00    5.00    1.00    4.00    0.00    0.00   10.00
12:00:00 AM    1    60.00    0.00   20.00    5.00    1.00    4.00    0.00    0.00   10.00

Average:     CPU    %user   %nice    %sys %iowait    %irq   %soft  %steal  %guest   %idle
Average:     all    35.00    0.50   12.50    3.50    0.50    2.50    0.00    0.25   45.25
"""))
    assert len(df) == 2
    assert df["ts"].tolist() == [pd.Timestamp("2026-11-22 23:59:59", tz="UTC"),
                                 pd.Timestamp("2026-11-23 00:00:00", tz="UTC")]
    r = row(df, 0)
    assert (r["cpu_user"], r["cpu_sys"], r["cpu_iowait"], r["cpu_idle"]) == (11.5, 6, 2, 80.5)
    assert (row(df, 1)["cpu_user"], row(df, 1)["cpu_sys"]) == (60, 25)


# ---------------------------------------------------------------- golden: ps

def test_ps_golden():
    df = read_hw_log(PS)
    assert df.attrs["hw_kind"] == "ps"
    only(df, "dbms_cpu_s", "dbms_rss_gb", "dbms_vsz_gb")
    # 65 blocks; ELAPSED of the postmaster 3810 runs 799 … 865: 66 one-second rows
    assert len(df) == 66 and df["second"].tolist() == list(range(66))
    # block 2 (ELAPSED 800): RSS 383536 KiB, VSZ 2177248 KiB over 10 processes
    assert row(df, 0)["dbms_rss_gb"] == pytest.approx(383536 / KIB_PER_GB)
    assert row(df, 0)["dbms_vsz_gb"] == pytest.approx(2177248 / KIB_PER_GB)
    assert row(df, 65)["dbms_rss_gb"] == pytest.approx(1098596 / KIB_PER_GB)
    assert row(df, 65)["dbms_vsz_gb"] == pytest.approx(2472324 / KIB_PER_GB)
    # the loop drifted twice past a second (3810's ELAPSED 809 → 811 and 843 → 845):
    # the first second of each gap has no memory figure, the blocks' CPU is split
    assert df["dbms_rss_gb"].isna().sum() == 2
    assert math.isnan(row(df, 10)["dbms_rss_gb"]) and math.isnan(row(df, 44)["dbms_rss_gb"])
    assert df["dbms_rss_gb"].sum() == pytest.approx(88054272 / KIB_PER_GB)   # blocks 2 … 65
    assert df["dbms_vsz_gb"].sum() == pytest.approx(190391984 / KIB_PER_GB)
    # CPU: backends 23460-3 used 6 s each until they vanished, 23519/23520 5 s each,
    # 23538/23540 11 s each, 23773-6 2 s each, 3811 and 3814 1 s each; 23304 (ELAPSED 15
    # in the first block) and 3812 (00:00:01 throughout) add nothing
    assert df["dbms_cpu_s"].sum() == 4 * 6 + 2 * 5 + 2 * 11 + 4 * 2 + 1 + 1
    assert row(df, 0)["dbms_cpu_s"] == 0      # 4 new backends at 00:00:00
    assert row(df, 8)["dbms_cpu_s"] == 3      # ELAPSED 808: 23461-3 reach 00:00:01
    assert row(df, 64)["dbms_cpu_s"] == 3     # ELAPSED 864: 23773, 23775, 23776 1 → 2
    assert row(df, 65)["dbms_cpu_s"] == 0


def test_ps_new_processes_and_etime_format(tmp_path):
    # `ps -o pid,vsz,rss,cputime,etime,comm`: ELAPSED as [[DD-]HH:]MM:SS, a COMMAND column
    df = read_hw_log(write(tmp_path, "ps.log", """\
  PID    VSZ   RSS     TIME     ELAPSED COMMAND
  100 1048576 524288 1-00:00:10 2-01:00:00 mariadbd
  PID    VSZ   RSS     TIME     ELAPSED COMMAND
  100 1048576 524288 1-00:00:12 2-01:00:01 mariadbd
  200  10240  1024 00:00:03       00:01 new backend
  300  10240  1024 00:00:50       05:00 old but not listed before
"""))
    assert len(df) == 1
    r = row(df, 0)
    # 100: +2 s; 200 started within the interval: all its 3 s; 300 is older: baseline only
    assert r["dbms_cpu_s"] == 5
    assert r["dbms_rss_gb"] == pytest.approx((524288 + 2048) / KIB_PER_GB)


def test_ps_block_covering_two_seconds_is_split(tmp_path):
    df = read_hw_log(write(tmp_path, "ps.log", """\
  PID    VSZ   RSS     TIME ELAPSED
   10 204800 102400 00:01:00     100
  PID    VSZ   RSS     TIME ELAPSED
   10 204800 102400 00:01:01     101
  PID    VSZ   RSS     TIME ELAPSED
   10 204800 104448 00:01:05     103
"""))
    assert df["second"].tolist() == [0, 1, 2]
    assert df["dbms_cpu_s"].tolist() == [1, 2, 2]
    assert math.isnan(row(df, 1)["dbms_rss_gb"]) and row(df, 2)["dbms_rss_gb"] == pytest.approx(104448 / KIB_PER_GB)


def test_ps_cut_off_last_block_is_dropped(tmp_path):
    text = PS.read_text()
    df = read_hw_log(write(tmp_path, "ps.log", text[:-3]))    # no newline: the block may lack processes
    assert len(df) == 65 and row(df, 64)["dbms_cpu_s"] == 3


# ---------------------------------------------------------------- merging

def test_merge_golden_logs():
    frames = [read_hw_log(p) for p in (PS, MPSTAT, IOSTAT, VMSTAT)]
    m = merge_hw_logs(frames)
    assert list(m.columns) == list(schema.HW)
    assert len(m) == 66 and m["second"].tolist() == list(range(66))
    assert m["run_id"].isna().all() and m["step"].isna().all()
    assert m["client_cpu_s"].isna().all() and m["db_size_gb"].isna().all()   # no log has them
    r = row(m, 0)
    # CPU from vmstat (the schema's definition), disks from iostat, DBMS from ps,
    # ts from mpstat (the only log with one)
    assert (r["cpu_user"], r["cpu_sys"], r["cpu_idle"], r["cpu_iowait"], r["ctx_switches"]) == (47, 13, 39, 1, 2566)
    assert (r["disk_reads"], r["disk_write_kb"]) == (501, 1612)
    assert r["dbms_rss_gb"] == pytest.approx(383536 / KIB_PER_GB)
    assert r["ts"] == pd.Timestamp("2026-11-22 02:46:16", tz="UTC")
    assert m["dbms_cpu_s"].sum() == 66 and m["cpu_user"].sum() == 4059
    # without vmstat, the CPU comes from mpstat
    m2 = merge_hw_logs([frames[2], frames[1]])
    assert row(m2, 0)["cpu_idle"] == 38.89 and math.isnan(row(m2, 0)["ctx_switches"])


def test_merge_aligns_by_timestamps(tmp_path):
    vm = read_hw_log(write(tmp_path, "vm.log", """\
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC
 1  0      0 23861720   4324 562228    0    0   672   953  390  821  4  2 94  0  0 2026-11-22 01:46:14
 1  0      0 23861720   4324 562228    0    0     4   256  285  327  0  1 99  0  0 2026-11-22 01:46:15
 1  0      0 23861720   4324 562228    0    0     4     0  255  336  1  0 99  0  0 2026-11-22 01:46:16
 1  0      0 23861720   4324 562228    0    0     4     0  255  444  1  0 99  0  0 2026-11-22 01:46:17
"""))
    io = read_hw_log(write(tmp_path, "io.log", IOSTAT_12_0))   # starts 1 s later (01:46:16 UTC)
    m = merge_hw_logs([io, vm])
    assert m["second"].tolist() == [0, 1, 2]
    assert m["ctx_switches"].tolist() == [327, 336, 444]
    assert math.isnan(m["disk_reads"][0]) and m["disk_reads"][1:].tolist() == [100, 50]
    assert merge_hw_logs([]).empty


# ---------------------------------------------------------------- errors

def one_line_error(path, lineno, text, **kw) -> ImportFormatError:
    with pytest.raises(ImportFormatError) as ei:
        read_hw_log(path, **kw)
    e = ei.value
    assert "\n" not in str(e)
    assert e.lineno == lineno and str(e).startswith(f"{path}:{lineno}: expected")
    assert text in str(e)
    return e


def test_empty_file(tmp_path):
    one_line_error(write(tmp_path, "empty.log", ""), 1, "empty file")
    one_line_error(write(tmp_path, "blank.log", "\n\n"), 1, "empty file", kind="iostat")


def test_garbled_line_in_the_middle(tmp_path):
    lines = VMSTAT.read_text().splitlines(keepends=True)
    lines[9] = " 9  0      0 19828796  12904 4056788    0    0  476\n"     # line 10 cut short
    one_line_error(write(tmp_path, "vm.log", "".join(lines)), 10, "expected 17 fields")
    lines = IOSTAT.read_text().splitlines(keepends=True)
    lines[14] = "vda            501.00   3028.00     3.00   0.60    0.95     6.04   96.00\n"
    one_line_error(write(tmp_path, "io.log", "".join(lines)), 15, "expected a device name and 22 figures")
    lines = MPSTAT.read_text().splitlines(keepends=True)
    lines[20] = "02:46:33     all   72.86    0.00   19.60    x.50    0.00    6.03\n"
    one_line_error(write(tmp_path, "mp.log", "".join(lines)), 21, "expected 'all' and 10 figures")
    lines = PS.read_text().splitlines(keepends=True)
    lines[30] = " 3812 217512 144292 00:0\n"
    one_line_error(write(tmp_path, "ps.log", "".join(lines)), 31, "expected a process line")


def test_wrong_kind_and_garbage(tmp_path):
    e = one_line_error(VMSTAT, 1, "expected iostat output", kind="iostat")
    assert "looks like vmstat" in str(e)
    one_line_error(PS, 1, "expected mpstat output", kind="mpstat")
    one_line_error(write(tmp_path, "junk.log", "\nhello world\nthis is not a log\n"), 2,
                   "expected output of vmstat, iostat, mpstat or ps")
    with pytest.raises(ValueError, match="kind must be one of"):
        read_hw_log(VMSTAT, kind="sar")
