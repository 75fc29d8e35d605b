"""A password of every printable character reaches no file and no printed line (issue 41,
item 3): each server target runs with one — PostgreSQL (which trusts, so any password
is taken) in the URL's user-info, in ``?password=`` and raw with quotes and ``<>``;
MariaDB and Redis as the password of a user of their own, which the run must give the
server to end ``ok`` — then a report is made; a wrong password and a dead port are
refused in one line. Every file written (run folders, experiment.json, the catalog,
report pages, error.log) and every printed line is searched for any piece of it
(:mod:`leaks`). The notebook path: ``test_notebook_secret.py``. The embedded PostgreSQL
takes no password (its URL is its name)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import quote

import pytest
import yaml
from leaks import PASSWORD, RAW_PASSWORD, encoded, leaks

SMALL = {"ycsb": {"recordcount": 200, "operationcount": 200, "readproportion": 0.5,
                  "updateproportion": 0.5},
         "kv": {"read": 1.0, "key_count": 200}}


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchlib.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def experiment(tmp_path, name: str, targets: list[dict], workload="ycsb", **props) -> str:
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump({
        "experiment": name, "workload": workload, "properties": {**SMALL[workload], **props},
        "targets": targets, "load": {"threads": 1},
        "run": {"threads": [1], "loops": 1, "loop_secs": 1}, "seed": 1}))
    return p


def statuses(exp_dir) -> list[str]:
    return [json.loads(m.read_text())["status"] for m in sorted(exp_dir.glob("*/meta.json"))]


def refused_in_one_line(r) -> str:
    err = r.stderr.strip()
    assert r.returncode == 2 and "Traceback" not in err and len(err.splitlines()) == 1, r.stderr
    return err


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_postgres_every_form_of_a_password_reaches_no_file(pg_own_db, tmp_path):
    host_db = pg_own_db.split("@", 1)[1]
    table = f"pw_{os.getpid()}"
    targets = [{"name": "userinfo", "url": f"postgresql://postgres:{encoded()}@{host_db}"},
               {"name": "query", "url": f"postgresql://postgres@{host_db}?password={encoded()}"},
               {"name": "raw", "url": f"postgresql://postgres:{RAW_PASSWORD}@{host_db}"}]
    data = tmp_path / "d"
    r = run_cli("run", experiment(tmp_path, "pwpg", targets, table=table, **{"db.passwd": PASSWORD}),
                "--data-dir", data, "--no-progress")
    assert r.returncode == 0, r.stderr[-2000:]
    assert statuses(data / "pwpg") == ["ok"] * 3
    urls = [json.loads(m.read_text())["target"]["url"] for m in sorted((data / "pwpg").glob("*/meta.json"))]
    assert all(":***@" in u or "password=***" in u for u in urls), urls   # masked, not dropped
    rep = run_cli("report", data / "pwpg")
    assert rep.returncode == 0 and list((data / "pwpg").rglob("*.html")), rep.stderr[-2000:]
    dead = run_cli("run", experiment(tmp_path, "pwdead", [
        {"name": "dead", "url": f"postgresql://postgres:{encoded()}@127.0.0.1:5999/x"}]),
        "--data-dir", data, "--no-progress")
    assert "cannot connect to postgresql://postgres:***@127.0.0.1:5999/x" in refused_in_one_line(dead)
    # libpq quotes a URL it refuses (a raw blank): the quote is masked too
    blank = run_cli("run", experiment(tmp_path, "pwblank", [
        {"name": "blank", "url": f"postgresql://postgres:{RAW_PASSWORD} x@{host_db}"}]),
        "--data-dir", data, "--no-progress")
    assert "libpq refuses the URL" in refused_in_one_line(blank)
    assert not leaks(data, *(x.stdout + x.stderr for x in (r, rep, dead, blank)))


@pytest.fixture
def mysql_user(mysql_own_db):
    """A MariaDB user of this test's own whose password is :data:`PASSWORD`, allowed only
    its own database; dropped after."""
    import pymysql
    user, db = f"bl_pw_{os.getpid()}", mysql_own_db.rsplit("/", 1)[1]
    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", autocommit=True)
    with conn.cursor() as c:
        c.execute("DROP USER IF EXISTS %s@'%%'", (user,))
        c.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (user, PASSWORD))
        c.execute(f"GRANT ALL ON `{db}`.* TO %s@'%%'", (user,))
    yield user, db
    with conn.cursor() as c:
        c.execute("DROP USER IF EXISTS %s@'%%'", (user,))
    conn.close()


@pytest.mark.mysql
@pytest.mark.slow
def test_mariadb_user_with_every_printable_password(mysql_user, mysql_driver, tmp_path):
    user, db = mysql_user
    scheme = "mysql+mysqldb" if mysql_driver == "c" else "mysql+pymysql"
    data = tmp_path / "d"
    good = [{"name": "userinfo", "url": f"{scheme}://{user}:{encoded()}@127.0.0.1:3306/{db}"},
            {"name": "query", "url": f"{scheme}://{user}@127.0.0.1:3306/{db}?password={encoded()}"}]
    r = run_cli("run", experiment(tmp_path, "pwmy", good, table="pw"), "--data-dir", data,
                "--no-progress")
    assert r.returncode == 0, r.stderr[-2000:]     # the server took the password: it got it whole
    assert statuses(data / "pwmy") == ["ok", "ok"]
    wrong = run_cli("run", experiment(tmp_path, "pwmy2", [
        {"name": "wrong", "url": f"{scheme}://{user}:x{encoded()}@127.0.0.1:3306/{db}"}], table="pw"),
        "--data-dir", data, "--no-progress")
    assert "Access denied" in refused_in_one_line(wrong)
    assert not leaks(data, r.stdout + r.stderr, wrong.stdout + wrong.stderr)


@pytest.fixture
def redis_user(redis_url):
    """A Redis ACL user of this test's own whose password is :data:`PASSWORD`, allowed
    only the keys of its own prefix; deleted after, with its keys."""
    import redis
    user = prefix = f"bl_pw_{os.getpid()}"
    r = redis.Redis.from_url(redis_url)
    r.execute_command("ACL", "SETUSER", user, "reset", "on", ">" + PASSWORD, f"~{prefix}*", "+@all")
    yield user, prefix
    r.execute_command("ACL", "DELUSER", user)
    keys = list(r.scan_iter(match=f"{prefix}*", count=5000))
    if keys:
        r.unlink(*keys)
    r.close()


@pytest.mark.slow
def test_redis_user_with_every_printable_password(redis_url, redis_user, tmp_path):
    user, prefix = redis_user
    hostport = redis_url.split("://", 1)[1].split("/", 1)[0]
    data = tmp_path / "d"
    url = f"redis://{quote(user)}:{encoded()}@{hostport}/0"
    r = run_cli("run", experiment(tmp_path, "pwredis", [{"name": "acl", "url": url}], "kv",
                                  table=prefix), "--data-dir", data, "--no-progress")
    assert r.returncode == 0 and statuses(data / "pwredis") == ["ok"], r.stderr[-2000:]
    wrong = run_cli("run", experiment(tmp_path, "pwredis2", [
        {"name": "wrong", "url": url.replace(f"{user}:", f"{user}:x")}], "kv", table=prefix),
        "--data-dir", data, "--no-progress")
    refused_in_one_line(wrong)
    assert not leaks(data, r.stdout + r.stderr, wrong.stdout + wrong.stderr)
