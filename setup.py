"""The one thing pyproject.toml does not say: the C scanner of YCSB's status and
summary lines (benchlib/importers/linescan.py). It is optional: without a C compiler
benchlib installs all the same and reads those lines by regular expressions, slower.
(setuptools' ext-modules table in pyproject.toml is still experimental.)

The C hot loop over libpq (benchlib/targets/_pgloop.c, see targets/pg_native.py) is
optional too: it needs libpq's headers (Debian: libpq-dev) and a C compiler; without
them the PostgreSQL run loops go through psycopg in Python, as before."""
import subprocess

from setuptools import Extension, setup


def _pg_include() -> list[str]:
    try:
        return [subprocess.run(["pg_config", "--includedir"], capture_output=True, text=True,
                               check=True).stdout.strip()]
    except (OSError, subprocess.CalledProcessError):
        return ["/usr/include/postgresql"]   # Debian's libpq-dev without pg_config on PATH


setup(ext_modules=[Extension("benchlib.importers._linescan", ["benchlib/importers/_linescan.c"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("benchlib.targets._pgloop", ["benchlib/targets/_pgloop.c"],
                             include_dirs=_pg_include(), libraries=["pq"],
                             extra_compile_args=["-O2"], optional=True)])
