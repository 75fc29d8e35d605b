"""Shared fixtures: the machine's real servers (never mocks), skipped with the reason
when a server is absent."""
from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
PG_URL = os.environ.get("BENCHLIB_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
MYSQL_URL = os.environ.get("BENCHLIB_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test")
REDIS_URL = os.environ.get("BENCHLIB_TEST_REDIS", "redis://127.0.0.1:6379/0")


def _c_loop(loop: str, headers: str):
    """Why a C loop of benchlib (``benchlib/workloads/_native/<loop>``) is not there, in
    the words its bindings refuse ``run.driver: c`` with, or None."""
    def missing() -> str | None:
        import importlib
        from benchlib.workloads import _native
        try:
            importlib.import_module(f"{_native.__name__}.{loop}")
        except ImportError:
            return _native.missing(loop, headers)
        return None
    return missing


def _mysqlclient() -> str | None:
    from benchlib.targets.mysql_driver import c_client_error
    return c_client_error()


def _rocksdict() -> str | None:
    import importlib.util
    return None if importlib.util.find_spec("rocksdict") else "rocksdict is not installed (pip install 'benchlib[rocksdb]')"


def _chromium() -> str | None:
    from browser import chromium
    return None if chromium() else "Chromium is not installed (apt-get install chromium)"


def _prometheus() -> str | None:
    import shutil
    missing = [b for b in ("prometheus", "prometheus-node-exporter", "prometheus-process-exporter",
                           "prometheus-postgres-exporter") if not shutil.which(b)]
    return f"not installed: {', '.join(missing)} (Debian's packages; .ci/run installs them)" if missing else None


# the optional parts of a machine, one marker each (``@pytest.mark.requires("mysqlclient")``):
# a test that needs one skips, saying why, where it is absent (README: what make test needs)
OPTIONAL_PARTS = {
    "mysqlclient": _mysqlclient,
    # the C loops, each built once for every workload that runs it (YCSB's and ybio's
    # over libpq, YCSB's over libmariadb, kv's over hiredis, LinkBench's)
    "c-libpq": _c_loop("_pgloop", "libpq-dev"),
    "c-lbloop": _c_loop("_lbloop", "libpq-dev"),   # LinkBench's requests over libpq
    "c-lbmyloop": _c_loop("_lbmyloop", "libmariadb-dev"),   # LinkBench's requests over libmariadb
    "c-libmariadb": _c_loop("_myloop", "libmariadb-dev"),
    "c-hiredis": _c_loop("_redisloop", "libhiredis-dev"),
    "chromium": _chromium,
    "rocksdict": _rocksdict,   # RocksDB, embedded (tests/test_rocksdb.py)
    "prometheus": _prometheus,
}


def pytest_configure(config):
    _own_basetemp(config)
    _ctrl_c_as_from_a_terminal()
    from timeouts import SharedFixtureClock
    config.pluginmanager.register(SharedFixtureClock(), "benchlib-shared-fixture-clock")
    config.addinivalue_line("markers", "requires(*parts): needs these optional parts of the machine "
                            f"({', '.join(OPTIONAL_PARTS)}); skipped, saying why, without them")


def _ctrl_c_as_from_a_terminal() -> None:
    """The suite's processes, and the runs they start, take Ctrl-C as a terminal gives it.
    A suite started in the background by a non-interactive shell (`make test &`, nohup, a
    CI step run beside another) inherits SIGINT ignored, and so does every `benchlib run`
    it starts, which then rightly goes on through a Ctrl-C: the tests that interrupt a run
    with one (test_interrupt's ctrl-c case exited 0 after its 30-s loop) would test nothing.
    A Python handler is not inherited across exec: the runs start with SIGINT at its default."""
    import signal
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _own_basetemp(config) -> None:
    """Each session its own base folder for tmp_path, readable by others (0755), outside
    /tmp/pytest-of-<user>: a second pytest started beside this one (another suite on the
    machine) sets that folder back to 0700, and the embedded PostgreSQL, which pgserver runs
    as its own user when we are root, then loses its data directory mid-test. xdist's
    workers take their folders under the controller's."""
    import tempfile
    if config.option.basetemp or hasattr(config, "workerinput"):
        return
    base = tempfile.mkdtemp(prefix="benchlib-tests-")
    os.chmod(base, 0o755)
    config.option.basetemp = base
    config._benchlib_basetemp = base


def pytest_collection_modifyitems(config, items):
    """Longest units of work first, the same order on every worker (tests/scheduling.py);
    each test's timeout sized to its last measured seconds (tests/timeouts.py)."""
    from scheduling import known, order
    from timeouts import size
    order(items)
    size(items, known(), float(config.getini("timeout") or 300))


def pytest_terminal_summary(terminalreporter):
    """The shared fixtures that were slow to set up, named with their seconds."""
    from timeouts import slow_fixture_lines
    reports = [r for rs in terminalreporter.stats.values() for r in rs if hasattr(r, "nodeid")]
    lines = slow_fixture_lines(reports)
    if lines:
        terminalreporter.write_sep("-", "slow shared fixtures (their first test's time counts them)")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.hookimpl(optionalhook=True)   # xdist's hook; a run without xdist has none
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadscope``: xdist's, over the suite's own units (tests/scheduling.py)."""
    if config.getvalue("dist") == "loadscope":
        from scheduling import make_scheduler
        return make_scheduler(config, log)
    return None


def pytest_sessionfinish(session, exitstatus):
    """The session's base folder goes when every test passed (a failure's files stay)."""
    import shutil
    base = getattr(session.config, "_benchlib_basetemp", None)
    if base and exitstatus == 0:
        shutil.rmtree(base, ignore_errors=True)


def pytest_runtest_setup(item):
    for mark in item.iter_markers("requires"):
        for part in mark.args:
            why = OPTIONAL_PARTS[part]()
            if why:
                pytest.skip(f"{part}: {why}")


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def pg_url() -> str:
    if not _port_open(5432):
        pytest.skip("PostgreSQL is not running on 127.0.0.1:5432 (.ci/start-services.sh starts it)")
    import psycopg
    try:
        psycopg.connect(PG_URL, connect_timeout=5).close()
    except psycopg.Error as e:
        pytest.skip(f"PostgreSQL at {PG_URL} refuses: {e}")
    return PG_URL


@pytest.fixture(scope="session")
def mysql_url() -> str:
    if not _port_open(3306):
        pytest.skip("MariaDB/MySQL is not running on 127.0.0.1:3306 (.ci/start-services.sh starts it)")
    return MYSQL_URL


@pytest.fixture(params=["c", "python"])
def mysql_driver(request) -> str:
    """Each MariaDB client library in turn: ``c`` (mysqlclient; skipped, saying what is
    missing, when it is not installed) and ``python`` (PyMySQL)."""
    from benchlib.targets.mysql_driver import c_client_error
    if request.param == "c" and c_client_error():
        pytest.skip(c_client_error())
    return request.param


def driver_url(url: str, driver: str) -> str:
    """A MariaDB URL whose scheme picks the client library (mysql+mysqldb, mysql+pymysql)."""
    return ("mysql+mysqldb" if driver == "c" else "mysql+pymysql") + "://" + url.split("://", 1)[1]


@pytest.fixture(scope="session")
def redis_url() -> str:
    if not _port_open(6379):
        pytest.skip("Redis is not running on 127.0.0.1:6379 (.ci/start-services.sh starts it)")
    redis = pytest.importorskip("redis", reason="redis-py is not installed (benchlib[redis])")
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as e:
        pytest.skip(f"Redis at {REDIS_URL} does not answer: {e}")
    return REDIS_URL


def _own_name(request) -> str:
    """A database name of this test's own: test name + pid, a plain SQL identifier."""
    import re
    base = re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:40]
    return f"bl_{base}_{os.getpid()}"


@pytest.fixture
def pg_own_db(pg_url, request) -> str:
    """A PostgreSQL database of this test's own (dropped after): what the test asserts
    about sizes and rows follows from what it did, whatever else runs on the server."""
    import psycopg
    from psycopg import sql
    name = _own_name(request)
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield pg_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def mysql_own_db(mysql_url, request) -> str:
    """A MariaDB/MySQL database of this test's own (dropped after)."""
    import pymysql
    name = _own_name(request)
    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", autocommit=True)
    try:
        with conn.cursor() as c:
            c.execute(f"DROP DATABASE IF EXISTS `{name}`")
            c.execute(f"CREATE DATABASE `{name}`")
        yield mysql_url.rsplit("/", 1)[0] + "/" + name
        with conn.cursor() as c:
            c.execute(f"DROP DATABASE IF EXISTS `{name}`")
    finally:
        conn.close()


def mysql_rows(url: str, sql: str) -> list[tuple]:
    """The rows a query gives on the MariaDB of ``url``."""
    from benchlib.targets.base import make_target
    target = make_target("q", url)
    target.start()
    try:
        return [tuple(r) for r in target._q(sql)]
    finally:
        target.stop()


@pytest.fixture
def data_dir(tmp_path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    return d


def paced(ops_per_s: float) -> dict:
    """A run section's pacing, ``ops_per_s`` over the run's threads (``target_base`` ×
    factor 1): for a test whose run must be at work, not drive the database flat out (the
    CPU of a suite of 2 cores). A paced step is never multiplexed: a test of the
    multiplexing loop stays unpaced."""
    return {"target_base": ops_per_s, "target_factors": [1.0]}


def small_experiment(name: str, url: str, **over) -> dict:
    """A tiny experiment dict (validated by the caller)."""
    exp = {
        "experiment": name,
        "workload": "ycsb",
        "properties": {"recordcount": 2000, "operationcount": 3000, "readproportion": 0.5,
                       "updateproportion": 0.5, "requestdistribution": "zipfian"},
        "targets": [{"name": name.split("-")[0], "url": url}],
        "load": {"threads": 2},
        "run": {"threads": [2], "loops": 1},
        "seed": 1,
    }
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(exp.get(k), dict):
            exp[k] = {**exp[k], **v}
        else:
            exp[k] = v
    return exp
