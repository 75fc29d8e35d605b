"""meta.json is the versioned RunMeta: the runner and importers fill it, read_meta gives it
back typed (dict access still answers), a wrong or newer one is one line."""
from __future__ import annotations

import json

import pytest

from benchlib import schema
from benchlib.store import folders


def _folder(tmp_path, meta: dict):
    return folders.write_run(tmp_path / "exp" / "r1", meta)


def test_an_importers_meta_reads_back_typed_with_its_own_keys(tmp_path):
    run_dir = _folder(tmp_path, {"run_id": "r1", "experiment": "exp", "source": "pgbench",
                                 "threads": 8, "tool_version": "16.1", "statements": {"a": 1}})
    meta = folders.read_meta(run_dir)
    assert isinstance(meta, schema.RunMeta)
    assert (meta.format_version, meta.status, meta.threads, meta.source) == (
        schema.FORMAT_VERSION, "ok", 8, "pgbench")
    # what the importer added beyond the model survives, by key as before
    assert meta["tool_version"] == "16.1" and meta.get("statements") == {"a": 1}
    assert meta.get("dbms", {}) == {} and "dbms" not in meta and "tool_version" in meta
    assert json.loads((run_dir / folders.META).read_text())["tool_version"] == "16.1"


def test_dict_access_writes_through(tmp_path):
    meta = folders.read_meta(_folder(tmp_path, {"run_id": "r1", "experiment": "exp"}))
    meta["status"] = "failed"
    meta.setdefault("error", "killed")
    meta.setdefault("error", "not this")
    meta.update(ended="2026-11-24T10:00:00+00:00", note="kept")
    assert (meta.status, meta.error, meta.ended, meta["note"]) == (
        "failed", "killed", "2026-11-24T10:00:00+00:00", "kept")
    assert dict(meta.items())["note"] == "kept"


@pytest.mark.parametrize("content, says", [
    ({"format_version": 1, "run_id": "r1", "threads": "many"}, "threads"),
    ({"format_version": schema.FORMAT_VERSION + 1, "run_id": "r1"}, "newer than this benchlib"),
    ({"run_id": "r1"}, "no format_version"),
    ([1, 2], "a JSON object is expected"),
])
def test_a_bad_meta_is_one_line(tmp_path, content, says):
    run_dir = tmp_path / "r1"
    run_dir.mkdir()
    (run_dir / folders.META).write_text(json.dumps(content))
    with pytest.raises(folders.ResultsError) as e:
        folders.read_meta(run_dir)
    assert says in str(e.value) and "\n" not in str(e.value) and str(run_dir) in str(e.value)


def test_an_importer_giving_a_wrong_type_writes_nothing(tmp_path):
    with pytest.raises(folders.ResultsError, match="threads"):
        _folder(tmp_path, {"run_id": "r1", "threads": [1, 2]})
    assert not (tmp_path / "exp" / "r1").exists()
