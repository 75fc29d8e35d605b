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
    # and "all" names every other extra, so the environment has everything the project lists
    all_extra = project["optional-dependencies"]["all"][0]
    named = set(re.search(r"\[(.+)\]", all_extra).group(1).split(","))
    assert named == set(project["optional-dependencies"]) - {"all"}


def test_readme_names_the_two_commands_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "make quickstart" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_console_script_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["benchlib"] == "benchlib.cli:main"
