"""The one thing pyproject.toml does not say: the C scanner of YCSB's status and
summary lines (benchlib/importers/linescan.py). It is optional: without a C compiler
benchlib installs all the same and reads those lines by regular expressions, slower.
(setuptools' ext-modules table in pyproject.toml is still experimental.)

The C loops (benchlib/workloads/_native/, owned by no workload; each built once here
and used by every workload that runs it) are optional too, each on its own: without its
client library's headers (or a C compiler) its build fails with the compiler's message,
the others are built all the same, and its workloads run their Python loops:
- _pgloop over libpq (Debian: libpq-dev): YCSB's and ybio's loops on PostgreSQL;
- _lbloop over libpq: LinkBench's ten requests on PostgreSQL;
- _myloop over libmariadb (libmariadb-dev): YCSB's on MariaDB (else mysqlclient or PyMySQL);
- _lbmyloop over libmariadb: LinkBench's ten requests on MariaDB;
- _redisloop over hiredis (libhiredis-dev): kv's on Redis (else redis-py).
What they share: _loop.h (all), _sqlplan.h and _sqlcols.h (the two SQL loops' plan), _muxconn.h
(one thread, many connections), _lbplan.h and _lbops.h (LinkBench's plan and requests, the two
LinkBench loops'), _mylib.h (the libmariadb loops' connection and statement templates). Each source is one extension's alone, so its object file
is too: a parallel build (build_ext -j N) cannot link another extension's object
(tests/test_native_loops.py holds it).

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


NATIVE = "benchlib/workloads/_native"
LOOP_H = [f"{NATIVE}/_loop.h", f"{NATIVE}/_muxconn.h"]   # what every loop includes
SQL_H = LOOP_H + [f"{NATIVE}/_sqlplan.h", f"{NATIVE}/_sqlcols.h"]   # and the SQL loops' plan
LB_H = LOOP_H + [f"{NATIVE}/_lbplan.h", f"{NATIVE}/_lbops.h"]   # LinkBench's plan and requests
MY_H = [f"{NATIVE}/_mylib.h"]   # libmariadb's connection and statement templates


def _loop(name: str, depends: list[str], **kw) -> Extension:
    return Extension(f"benchlib.workloads._native.{name}", [f"{NATIVE}/{name}.c"], depends=depends,
                     extra_compile_args=["-O2"], optional=True, **kw)


EXTENSIONS = [Extension("benchlib.importers._linescan", ["benchlib/importers/_linescan.c"],
                        extra_compile_args=["-O2"], optional=True),
              _loop("_pgloop", SQL_H, include_dirs=_pg_include(), libraries=["pq"]),
              _loop("_lbloop", LB_H, include_dirs=_pg_include(), libraries=["pq"]),
              _loop("_myloop", SQL_H + MY_H, include_dirs=_mariadb_include(), libraries=["mariadb"]),
              _loop("_lbmyloop", LB_H + MY_H, include_dirs=_mariadb_include(), libraries=["mariadb"]),
              _loop("_redisloop", LOOP_H, libraries=["hiredis"])]

setup(ext_modules=EXTENSIONS[:1] if os.environ.get("BENCHLIB_C_LOOPS") == "0" else EXTENSIONS)
