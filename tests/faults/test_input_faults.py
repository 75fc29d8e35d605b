"""Bad input is one line and exit 2, never a traceback, and creates nothing."""
from __future__ import annotations

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


SAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "ycsb" / "pg-runa-t4-hist.out"


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
