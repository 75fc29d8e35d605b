"""The one thing pyproject.toml does not say: the C scanner of YCSB's status and
summary lines (benchlib/importers/linescan.py). It is optional: without a C compiler
benchlib installs all the same and reads those lines by regular expressions, slower.
(setuptools' ext-modules table in pyproject.toml is still experimental.)

YCSB's C hot loop over libpq (benchlib/workloads/ycsb/bindings/_pgloop.c, see
bindings/postgres_native.py beside it) is
optional too: it needs libpq's headers (Debian: libpq-dev) and a C compiler; without
them the PostgreSQL run loops go through psycopg in Python, as before. Its twin over
libmariadb (bindings/_myloop.c, see bindings/mysql_native.py) needs
libmariadb-dev; without it MariaDB's run loops go through mysqlclient or PyMySQL.
Both include bindings/_ycsbplan.h, what the two loops share; they and kv's loop
include benchlib/workloads/_muxconn.h, what the loops that multiplex share. kv's loop on Redis
(benchlib/workloads/kv/bindings/_redisloop.c, see bindings/redis_native.py) needs
hiredis's headers (Debian: libhiredis-dev); without them kv on Redis runs redis-py.
ybio's sessions on PostgreSQL run on the same loop over libpq: _pgloop.c built a second
time into ybio's bindings (benchlib/workloads/ybio/bindings/_pgloop, see
postgres_native.py there), LOOP_PKG naming its package.

BENCHLIB_C_LOOPS=0 in the environment installs none of the loops (the scanner still), as a
machine without the client libraries' headers would (`make test-newcomer` tests that machine)."""
import os
import subprocess

from setuptools import Extension, setup


def _pg_include() -> list[str]:
    try:
        return [subprocess.run(["pg_config", "--includedir"], capture_output=True, text=True,
                               check=True).stdout.strip()]
    except (OSError, subprocess.CalledProcessError):
        return ["/usr/include/postgresql"]   # Debian's libpq-dev without pg_config on PATH


def _mariadb_include() -> list[str]:
    try:
        out = subprocess.run(["mariadb_config", "--include"], capture_output=True, text=True,
                             check=True).stdout
        return [f[2:] for f in out.split() if f.startswith("-I")]
    except (OSError, subprocess.CalledProcessError):
        return ["/usr/include/mariadb"]


YCSB = "benchlib/workloads/ycsb/bindings"
PLAN_H = [f"{YCSB}/_ycsbplan.h"]
MUX_H = ["benchlib/workloads/_muxconn.h"]   # what the multiplexing loops share

EXTENSIONS = [Extension("benchlib.importers._linescan", ["benchlib/importers/_linescan.c"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("benchlib.workloads.ycsb.bindings._pgloop", [f"{YCSB}/_pgloop.c"],
                             include_dirs=_pg_include(), libraries=["pq"], depends=PLAN_H + MUX_H,
                             extra_compile_args=["-O2"], optional=True),
                   Extension("benchlib.workloads.ybio.bindings._pgloop", [f"{YCSB}/_pgloop.c"],
                             include_dirs=_pg_include(), libraries=["pq"], depends=PLAN_H + MUX_H,
                             define_macros=[("LOOP_PKG", '"benchlib.workloads.ybio.bindings"')],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("benchlib.workloads.ycsb.bindings._myloop", [f"{YCSB}/_myloop.c"],
                             include_dirs=_mariadb_include(), libraries=["mariadb"], depends=PLAN_H + MUX_H,
                             extra_compile_args=["-O2"], optional=True),
                   Extension("benchlib.workloads.kv.bindings._redisloop",
                             ["benchlib/workloads/kv/bindings/_redisloop.c"], libraries=["hiredis"], depends=MUX_H,
                             extra_compile_args=["-O2"], optional=True)]

setup(ext_modules=EXTENSIONS[:1] if os.environ.get("BENCHLIB_C_LOOPS") == "0" else EXTENSIONS)
