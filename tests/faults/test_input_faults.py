"""Bad input is one line and exit 2, never a traceback, and creates nothing."""
from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import small_experiment

from benchlib import cli


def fails_with(capsys, argv, *words) -> str:
    assert cli.main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)
    return err


@pytest.fixture
def exp_file(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text(yaml.safe_dump(small_experiment("bad", "sqlite")))
    return p


@pytest.mark.parametrize("override, words", [
    ("requestdistrbution=uniform", ["requestdistrbution", "did you mean requestdistribution"]),
    ("fooobar=1", ["fooobar", "unknown property"]),
    ("=5", ["empty key"]),
    ("run.processes=0", ["run.processes"]),
    ("run.processes=-2", ["run.processes"]),
    ("run.target_factors=[-1]", ["run.target_factors"]),
    ("run.warmup_secs=10", ["warmup_secs"]),
    ("run.threads=[100000]", ["100000 threads", "GB"]),
    ("index.column=x;drop", ["index.column"]),
    ("fieldnameprefix=f\"", ["fieldnameprefix"]),
])
def test_bad_values_are_one_line(exp_file, tmp_path, capsys, override, words):
    if override.startswith("run.warmup"):
        fails_with(capsys, ["run", exp_file, "-p", "run.loop_secs=5", "-p", override,
                            "--data-dir", tmp_path / "d"], *words)
    else:
        fails_with(capsys, ["run", exp_file, "-p", override, "--data-dir", tmp_path / "d"], *words)
    assert not (tmp_path / "d").exists()


def test_binary_utf16_and_folder_as_yaml(tmp_path, capsys):
    u16 = tmp_path / "u16.yaml"
    u16.write_text("experiment: x\n", encoding="utf-16")
    fails_with(capsys, ["run", u16], "UTF-16")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(bytes(range(256)))
    fails_with(capsys, ["run", binary], "bin.yaml")
    folder = tmp_path / "dir.yaml"
    folder.mkdir()
    fails_with(capsys, ["run", folder], "a folder")


def test_threads_flag_with_a_yaml_is_refused(exp_file, capsys):
    fails_with(capsys, ["run", exp_file, "--threads", "8"], "--threads", "run.threads")


def test_data_dir_naming_a_file(exp_file, tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("")
    fails_with(capsys, ["run", exp_file, "--data-dir", f], "not a folder")


def test_list_of_a_missing_data_dir_creates_nothing(tmp_path, capsys):
    fails_with(capsys, ["list", "--data-dir", tmp_path / "typo"], "no such folder")
    assert not (tmp_path / "typo").exists()


def test_import_of_a_missing_hw_log_is_one_line(tmp_path, capsys):
    fails_with(capsys, ["import", "linkbench", tmp_path / "none.log", "--into", tmp_path / "x"],
               "none.log", "no such file")
    fails_with(capsys, ["import", "pgbench", tmp_path, "--into", tmp_path / "x"], "a folder")
    assert not (tmp_path / "x").exists()


ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "ycsb" / "pg-runa-t4-hist.out"


def test_imports_of_cut_garbage_and_utf16_files_are_one_line(tmp_path, capsys):
    text = SAMPLE.read_text()
    cut = tmp_path / "cut.out"
    cut.write_text(text[:len(text) // 2].rstrip("\n")[:-1])     # ends inside a number
    fails_with(capsys, ["import", "ycsb", cut, "--into", tmp_path / "a"], "cut short", "cut.out:")
    garbage = tmp_path / "garbage.out"
    garbage.write_text(text.replace("[OVERALL], RunTime(ms), ", "[OVERALL], RunTime(ms), " + "x" * 5_000_000 + " ", 1))
    err = fails_with(capsys, ["import", "ycsb", garbage, "--into", tmp_path / "b"], "garbage.out:")
    assert len(err) < 600                                       # the garbage is not printed whole
    u16 = tmp_path / "u16.out"
    u16.write_text(text, encoding="utf-16")
    fails_with(capsys, ["import", "ycsb", u16, "--into", tmp_path / "c"], "UTF-16")
    assert not any((tmp_path / d).exists() for d in "abc")


# ---------------------------------------------------------------- issue 41: 10, 13, 14

def _cli_limited(*argv, mem_gb: float = 1.5, timeout: float = 60) -> subprocess.CompletedProcess:
    """benchlib in a child whose address space is capped: an unbounded read would end in a
    MemoryError (a traceback) or the time limit instead of the one line."""
    def cap():
        limit = int(mem_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return subprocess.run([sys.executable, "-m", "benchlib.cli", *map(str, argv)], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=cap, cwd=ROOT)


@pytest.mark.parametrize("argv, words", [
    (["run", "/dev/zero"], ["/dev/zero", "a device"]),
    (["run", "/dev/urandom", "--dry-run"], ["/dev/urandom", "a device"]),
    (["run", "/dev/zero.yaml"], ["no such file"]),
    (["run", "parameters/linkbench.yaml", "-p", "data_file=/dev/urandom", "--dry-run"],
     ["data_file", "/dev/urandom", "a device"]),
    (["import", "ycsb", "/dev/zero", "--into", "{tmp}/imp"], ["/dev/zero", "a device"]),
])
def test_devices_are_refused_without_reading_them(tmp_path, argv, words):
    proc = _cli_limited(*[a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = proc.stderr.strip()
    assert proc.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err
    assert not (tmp_path / "imp").exists()


def test_workload_file_a_device_fifo_or_too_large(tmp_path, capsys):
    exp = small_experiment("dev", "sqlite", workload_file="/dev/urandom")
    f = tmp_path / "e.yaml"
    f.write_text(yaml.safe_dump(exp))
    fails_with(capsys, ["run", f, "--dry-run"], "/dev/urandom", "a device")
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)                      # opened without blocking, refused
    fails_with(capsys, ["run", fifo], "a pipe")
    big = tmp_path / "big.yaml"
    with big.open("wb") as fh:           # sparse: 17 MB that take no disk
        fh.truncate(17 << 20)
    fails_with(capsys, ["run", big], "17.0 MB", "larger than a parameter file may be")
    dat = tmp_path / "Distribution.dat.gz"
    dat.write_bytes(gzip.compress(b"\0" * (80 << 20)))   # a small .gz that unpacks past the limit
    fails_with(capsys, ["run", ROOT / "parameters" / "linkbench.yaml", "-p", f"data_file={dat}",
                        "--dry-run"], "unpacks past")
    for hist, words in (("/dev/zero", ["a device", "histogram file"]), (tmp_path / "none", ["no such file"])):
        fails_with(capsys, ["run", ROOT / "parameters" / "smoke.yaml", "-p", "fieldlengthdistribution=histogram",
                            "-p", f"fieldlengthhistogram={hist}", "--dry-run"], *words)   # at validation


@pytest.mark.parametrize("override, words", [
    ("run.loop_secs=inf", ["run.loop_secs", "finite"]),
    ("run.loop_secs=.nan", ["run.loop_secs", "finite"]),
    ("run.loop_secs=1e9", ["run.loop_secs", "2592000"]),
    ("run.target_base=inf", ["run.target_base", "finite"]),
    ("run.target_base=1e308", ["run.target_base"]),
    ("run.target_factors=[inf]", ["run.target_factors", "finite"]),
    ("load.target_factors=[.inf]", ["load.target_factors", "finite"]),
    ("run.status_interval_s=inf", ["run.status_interval_s", "finite"]),
    ("run.warmup_secs=-inf", ["run.warmup_secs", "finite"]),
    ("hw={dbms: prometheus, prometheus: {url: 'http://127.0.0.1:9', instance: x, timeout_s: .inf}}",
     ["hw.prometheus.timeout_s", "finite"]),
    ("run.threads=[1,1]", ["run.threads", "1 given twice"]),
    ("load.processes=[2,2]", ["load.processes", "2 given twice"]),
    ("run.target_factors=[0,0.0]", ["run.target_factors", "given twice"]),
    ("run.target_factors=[1.00001,1.00002]", ["tgt16384", "planned 2 times"]),
])
def test_nonfinite_numbers_and_repeated_matrix_values(exp_file, tmp_path, capsys, override, words):
    """--dry-run and a real run alike: one line, and no folder, experiment.json or .lock."""
    fails_with(capsys, ["run", exp_file, "-p", override, "--dry-run"], *words)
    fails_with(capsys, ["run", exp_file, "-p", override, "--data-dir", tmp_path / "d"], *words)
    assert not (tmp_path / "d").exists()


def test_property_file_numbers_and_workload_matrix_repeats(tmp_path, capsys):
    p = tmp_path / "w.properties"
    for line, words in (("target=abc", ["target", "a number"]), ("threadcount=x", ["threadcount"]),
                        ("maxexecutiontime=inf", ["run.loop_secs", "finite"])):
        p.write_text(f"recordcount=10\noperationcount=10\n{line}\n")
        fails_with(capsys, ["run", p, "--dry-run"], *words)
    fails_with(capsys, ["run", ROOT / "parameters" / "ybio.yaml", "-p", "batch_size=[10,10]", "--dry-run"],
               "batch_size", "10 given twice")


def test_duplicate_yaml_keys_are_refused_naming_key_and_lines(tmp_path, capsys):
    f = tmp_path / "dup.yaml"
    f.write_text("experiment: d\nworkload: ycsb\ntargets: [{name: s, url: sqlite}]\n"
                 "run:\n  threads: [1]\n  loops: 2\n  threads: [4]\n")
    fails_with(capsys, ["run", f, "--dry-run"], "dup.yaml:7", "'threads' given twice", "lines 5 and 7")
    fails_with(capsys, ["run", ROOT / "parameters" / "smoke.yaml", "--dry-run", "-p",
                        "targets=[{name: a, name: b, url: sqlite}]"], "-p targets", "'name' given twice")
    from benchlib.inputfiles import load_yaml    # a merge key may still be overridden
    assert load_yaml("a: &x {k: 1, j: 2}\nb:\n  <<: *x\n  k: 3\n")["b"] == {"k": 3, "j": 2}


def test_imports_with_no_operation_fail_and_leave_no_folder(tmp_path, capsys):
    one = tmp_path / "one.out"
    one.write_text("[OVERALL], RunTime(ms), 5\n")
    fails_with(capsys, ["import", "ycsb", one, "--into", tmp_path / "e" / "a"], "one.out", "no operation")
    digits = tmp_path / "digits.out"        # past the streamed reader's threshold
    with digits.open("w") as fh:
        fh.write("[OVERALL], RunTime(ms), " + "1" * (70 << 20) + "\n")
    fails_with(capsys, ["import", "ycsb", digits, "--into", tmp_path / "e" / "b"], "no operation")
    fails_with(capsys, ["import", "auto", one, "--into", tmp_path / "e" / "c"], "no operation")
    assert not (tmp_path / "e").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["digits.out", "one.out"]   # no stream leftovers


def test_mariadb_engine_carrying_sql_is_refused_at_validation(tmp_path, capsys):
    from benchlib.targets.base import TargetError, make_target
    for engine in ("InnoDB; DROP TABLE victim", "InnoDB ", [1]):
        exp = small_experiment("eng", "mysql://root@127.0.0.1:3306/test")
        exp["targets"][0]["options"] = {"engine": engine}
        f = tmp_path / "e.yaml"
        f.write_text(yaml.safe_dump(exp))
        fails_with(capsys, ["run", f, "--data-dir", tmp_path / "d"], "engine", "not a storage engine")
        assert not (tmp_path / "d").exists()
    with pytest.raises(TargetError, match="not a storage engine"):   # the API without params too
        make_target("m", "mysql://root@127.0.0.1:3306/test", {"engine": "x;drop table y"})
