"""pyproject.toml is the one source of dependencies; environment.yml stays thin."""
from __future__ import annotations

import re
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_environment_yml_installs_the_project_and_nothing_else():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = env["dependencies"]
    conda = [d for d in deps if isinstance(d, str)]
    pips = [d for d in deps if isinstance(d, dict)]
    assert {re.split(r"[<>=]", d)[0] for d in conda} == {"python", "pip"}
    # the python bound agrees with requires-python
    py = next(d for d in conda if d.startswith("python"))
    assert py.split("python", 1)[1] == project["requires-python"]
    (pip,) = pips
    extras = {m for line in pip["pip"] for m in re.findall(r"-e \.\[([^\]]+)\]", line)}
    assert extras == {"all"}
    # and "all" names every other extra, so the environment has everything the project lists,
    # but for those that build against a system library (mysql-c: libmariadb-dev), which
    # `make install` tries on its own and says what is missing
    all_extra = project["optional-dependencies"]["all"][0]
    named = set(re.search(r"\[(.+)\]", all_extra).group(1).split(","))
    assert named == set(project["optional-dependencies"]) - {"all", "mysql-c"}
    assert "mysqlclient" in (ROOT / "Makefile").read_text()


def test_readme_names_the_two_commands_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "make quickstart" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_console_script_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["benchlib"] == "benchlib.cli:main"


def test_console_script_resolves_to_the_cli():
    import importlib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    module, _, attr = project["scripts"]["benchlib"].partition(":")
    main = getattr(importlib.import_module(module), attr)
    assert callable(main) and main.__module__ == "benchlib.cli"


def test_every_folder_of_the_package_goes_into_the_wheel():
    # setuptools' find (pyproject: packages.find) takes only folders with an __init__.py:
    # a folder without one would be missing from an installed benchlib
    from setuptools import find_packages

    found = set(find_packages(ROOT, include=["benchlib*"]))
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "benchlib").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert folders - found == set()
    assert {"benchlib.run", "benchlib.store", "benchlib.hw", "benchlib.workloads.ycsb"} <= found


def test_the_version_has_one_source():
    import benchlib
    from benchlib.version import __version__

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in pyproject["project"]["dynamic"] and "version" not in pyproject["project"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "benchlib.version.__version__"
    assert benchlib.__version__ == __version__ and re.fullmatch(r"\d+\.\d+\.\d+\S*", __version__)
