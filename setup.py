"""The one thing pyproject.toml does not say: the C scanner of YCSB's status and
summary lines (benchlib/importers/linescan.py). It is optional: without a C compiler
benchlib installs all the same and reads those lines by regular expressions, slower.
(setuptools' ext-modules table in pyproject.toml is still experimental.)"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("benchlib.importers._linescan", ["benchlib/importers/_linescan.c"],
                             extra_compile_args=["-O2"], optional=True)])
