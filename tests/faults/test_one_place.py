"""A URL means exactly one place, an option is used or refused, and no input leaves a
traceback: each bad input of issue 28 is one line, exit 2, before anything runs."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import small_experiment
from test_input_faults import fails_with


KV = {"read": 1.0, "key_count": 100}
ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path, exp: dict):
    p = tmp_path / "e.yaml"
    p.write_text(yaml.safe_dump(exp))
    return p


@pytest.mark.parametrize("url, words", [
    ("redis://127.0.0.1:6379/abc", ["database number", "'abc'"]),
    ("redis://127.0.0.1:6379", ["database number"]),
    ("redis://127.0.0.1:6379/0?db=1", ["?db="]),
    ("redis://127.0.0.1:999999/9", ["port"]),
    ("redis://127.0.0.1:6379/0?fooo=1", ["'fooo'", "not used"]),
    ("unix:///tmp/none.sock", ["?db="]),
    ("mysql://root@127.0.0.1:3306", ["no database"]),
    ("mysql://root@127.0.0.1:3306/", ["no database"]),
    ("mysql://root@127.0.0.1:3306/test?charset=x", ["'charset'", "not used"]),
    ("mysql://root@127.0.0.1:70000/test", ["port"]),
    ("postgresql://postgres@127.0.0.1:5432", ["no database"]),
    ("postgresql://postgres@127.0.0.1:5432/test?fooo=1", ["fooo"]),
])
def test_a_url_that_names_no_one_place_is_one_line(tmp_path, capsys, url, words):
    exp = {**small_experiment("u", url, workload="kv"), "properties": KV}
    fails_with(capsys, ["run", write(tmp_path, exp), "--data-dir", tmp_path / "d"], *words)
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("url, options, words", [
    ("redis://127.0.0.1:6379/9", {"fooo": 1}, ["'fooo'", "redis", "none"]),
    ("mysql://root@127.0.0.1:3306/test", {"fooo": 1}, ["'fooo'", "engine"]),
    ("mysql://root@127.0.0.1:3306/test", {"enigne": "MyISAM"}, ["did you mean engine"]),
    ("sqlite", {"pth": "/tmp/x"}, ["did you mean path"]),
    ("postgresql://postgres@127.0.0.1:5432/test", {"fooo": 1}, ["'fooo'"]),
])
def test_an_unknown_target_option_is_refused_naming_the_nearest(tmp_path, capsys, url, options, words):
    exp = {**small_experiment("o", url, workload="kv"), "properties": KV}
    exp["targets"][0]["options"] = options
    fails_with(capsys, ["run", write(tmp_path, exp), "--data-dir", tmp_path / "d"], *words)


def test_mariadb_takes_the_password_of_the_query():
    from benchlib.targets.mysql import connect_params
    assert connect_params("mysql://root@127.0.0.1:3306/test?password=x")["password"] == "x"
    assert connect_params("mysql://root:y@127.0.0.1:3306/test")["password"] == "y"


@pytest.mark.parametrize("override, words", [
    ("maxid1=99999999999999999999999", ["maxid1", "at most"]),
    ("startid1=99999999999999999999999", ["startid1", "at most"]),
    ("max_failed_requests=-1", ["max_failed_requests"]),
])
def test_a_linkbench_value_past_what_it_holds_is_refused(capsys, override, words):
    fails_with(capsys, ["run", ROOT / "parameters" / "linkbench.yaml", "-p", override, "--dry-run"],
               *words)


@pytest.mark.parametrize("override", ["recordcount=99999999999999999999999",
                                      "operationcount=99999999999999999999999"])
def test_a_ycsb_count_past_what_it_holds_is_refused(tmp_path, capsys, override):
    exp = write(tmp_path, small_experiment("y", "sqlite"))
    fails_with(capsys, ["run", exp, "-p", override, "--dry-run"], override.split("=")[0], "at most")


def test_deep_yaml_a_folder_as_properties_and_linkbench_keys_without_linkstore(tmp_path, capsys):
    deep = tmp_path / "deep.yaml"
    deep.write_text("experiment: x\nproperties: " + "[" * 5000 + "]" * 5000 + "\n")
    fails_with(capsys, ["run", deep], "nested too deep")
    folder = tmp_path / "w.properties"
    folder.mkdir()
    fails_with(capsys, ["run", folder], "a folder")
    lb = tmp_path / "lb.properties"
    lb.write_text("maxid1 = 1000\nrequesters = 2\n")
    fails_with(capsys, ["run", lb, "--dry-run"], "LinkBench keys", "linkstore")


def test_ybio_on_redis_is_refused_before_the_run(tmp_path, capsys):
    exp = small_experiment("yb", "redis://127.0.0.1:6379/9", workload="ybio")
    exp["properties"] = {"tab_rows": 100000, "batch_size": 10, "run_duration": 1}
    fails_with(capsys, ["run", write(tmp_path, exp), "--data-dir", tmp_path / "d"],
               "ybio does not run on target 'yb' (redis)")


def test_show_of_a_file_is_one_line(tmp_path, capsys):
    f = tmp_path / "x.txt"
    f.write_text("x")
    fails_with(capsys, ["show", f], "a file")
