"""The README and the site in docs/: a README a newcomer reads in five minutes (at most
200 lines, its set-up promise the Makefile's two recipes), every relative link resolving,
the site building with ``mkdocs build --strict``, and every ``benchlib …`` command shown
in a shell block parsing — a ``run`` validated as ``--dry-run`` does (every key, the
plan), an ``import`` of the repository's own sample files run for real into a tmp folder —,
every ``papermill …`` shown parsing with ``--engine benchlib`` (the password masked), and
every YAML shown validating as an experiment.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 200
SHELL_BLOCKS = ("", "bash", "sh", "shell", "console")
# the house's own files, shown in the site through links in docs/project/: theirs to keep
HOUSE = DOCS / "project"


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def _own_pages() -> list[Path]:
    """README and the pages written for docs/ (not the house files it shows)."""
    return [p for p in _pages() if HOUSE not in p.parents]


def _without_code(text: str) -> str:
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)


def _slug(heading: str) -> str:
    """Python-Markdown's toc slug (MkDocs' anchors) of a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    return {_slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", text, flags=re.M)}


def commands(text: str, program: str = "benchlib") -> list[list[str]]:
    """Each ``benchlib …`` (``program …``) line of the shell blocks, continuation lines
    joined, the trailing comment cut."""
    found = []
    for lang, body in _blocks(text):
        if lang not in SHELL_BLOCKS:
            continue
        for line in re.sub(r"\\\n\s*", " ", body).splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == [program]:
                found.append(words)
    return found


def test_the_readme_is_read_in_five_minutes():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"


def test_the_readme_promises_what_the_makefile_does():
    # the two commands of a fresh machine, and each one's recipe as the Makefile has it
    readme, makefile = README.read_text(), (ROOT / "Makefile").read_text()
    for target in ("quickstart", "test"):
        assert f"make {target}" in readme
        recipe = re.search(rf"^{target}:.*\n\t(.+)$", makefile, flags=re.M).group(1)
        shown = recipe.replace("$(BIN)/", "")
        assert shown in readme, f"README.md does not show `make {target}`'s recipe: {shown}"
    named = set(re.findall(r"\bmake ([a-z][\w-]*)", readme))
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, flags=re.M))
    assert named <= targets, f"README names make targets the Makefile lacks: {named - targets}"


def test_every_page_is_in_the_site_and_reached_from_the_readme():
    config = (ROOT / "mkdocs.yml").read_text()
    for page in DOCS.rglob("*.md"):
        assert str(page.relative_to(DOCS)) in config, f"{page} is not in mkdocs.yml's nav"
    linked = set(re.findall(r"\]\((docs/[^)#\s]+)", README.read_text()))
    own = {str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md") if HOUSE not in p.parents}
    assert own - linked == set(), "pages the README does not point to"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", _without_code(page.read_text())):
        if re.match(r"[a-z]+:", target):   # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path) if path else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"


def test_the_site_builds_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (the docs extra: pip install -e '.[docs]')")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def _main(args: list[str]) -> tuple[int, str]:
    from benchlib import cli
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            rc = cli.main(args)
        except SystemExit as e:   # argparse: a bad option or choice
            rc = e.code
    return rc, out.getvalue()


def test_every_benchlib_command_shown_parses(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)   # the commands are shown as run from the checkout
    from benchlib.cli import build_parser
    from benchlib.registries import importers
    shown = [(p, words) for p in _own_pages() for words in commands(p.read_text())]
    assert len(shown) >= 30 and {w[1] for _, w in shown} >= {"run", "show", "list", "summary", "compare",
                                                            "import", "report"}
    parser, failed = build_parser(), []
    for n, (page, words) in enumerate(shown):
        args, where = words[1:], f"{page.relative_to(ROOT)}: {shlex.join(words)}"
        try:
            ns = parser.parse_args(args)
        except SystemExit:
            failed.append(f"{where}: does not parse")
            continue
        rc, out = 0, ""
        if ns.command == "run":   # validated as `--dry-run` does: every key, the plan
            rc, out = _main([*args, "--dry-run"])
        elif ns.command == "import" and ns.kind != "prometheus":
            assert ns.kind in (*importers.kinds(), "auto"), where
            if not all((ROOT / f).is_file() for f in [*ns.files, *ns.hw]) or "--into" not in args:
                continue   # a file of yours: parsed only
            into = ["--into", str(tmp_path / f"import{n}")]
            rc, out = _main([*args[:args.index("--into")], *into, *args[args.index("--into") + 2:]])
        if rc != 0:
            failed.append(f"{where}: exit {rc}: {out.strip()[-300:]}")
    assert not failed, "\n".join(failed)


def test_every_papermill_command_shown_works():
    """A ``papermill …`` shown parses as papermill's own command line does, names the
    engine that masks passwords (``--engine benchlib``, found through its entry point), a
    notebook and parameters files that exist, and only parameters the notebook has."""
    import papermill
    import yaml
    from papermill.cli import papermill as papermill_cli
    from papermill.engines import papermill_engines
    shown = [(p, words) for p in _own_pages() for words in commands(p.read_text(), "papermill")]
    assert shown, "the docs show no papermill command"
    failed = []
    for page, words in shown:
        where = f"{page.relative_to(ROOT)}: {shlex.join(words)}"
        try:
            args = papermill_cli.make_context("papermill", words[1:]).params
        except Exception as e:  # noqa: BLE001 - click's usage error, said with the command
            failed.append(f"{where}: does not parse ({e})")
            continue
        if args["engine"] != "benchlib":
            failed.append(f"{where}: without --engine benchlib the password is written as given")
        elif papermill_engines.get_engine(args["engine"]).__module__ != "benchlib.reports.papermill_engine":
            failed.append(f"{where}: papermill does not find benchlib's engine")
        files = [args["notebook_path"], *args["parameters_file"]]
        missing = [f for f in files if not (ROOT / f).is_file()]
        if missing:
            failed.append(f"{where}: no such file {missing}")
            continue
        known = set(papermill.inspect_notebook(str(ROOT / args["notebook_path"])))
        given = {k for f in args["parameters_file"] for k in yaml.safe_load((ROOT / f).read_text())}
        given |= {k for k, _ in args["parameters"]}
        if given - known:
            failed.append(f"{where}: not parameters of the notebook: {sorted(given - known)}")
    assert not failed, "\n".join(failed)


def test_every_parameters_file_named_exists_and_validates():
    from benchlib.params import load_experiment
    named = {m for p in _own_pages() for m in re.findall(r"\bparameters/[\w./-]*\w", p.read_text())}
    assert named, "the docs name no parameters file"
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert not missing, f"parameters files named but absent: {missing}"
    for name in sorted(n for n in named if n.endswith(".yaml")):
        load_experiment(ROOT / name)   # ParameterError names the key


def test_every_yaml_shown_validates():
    """A whole experiment shown validates as it is (the quickstart's copy is the file's);
    a fragment (`hw:`, `dask:`, `targets:`) validates over parameters/quickstart.yaml."""
    import yaml

    from benchlib.params import validate
    base = yaml.safe_load((ROOT / "parameters" / "quickstart.yaml").read_text())
    shown = [(p, yaml.safe_load(body)) for p in _own_pages()
             for lang, body in _blocks(p.read_text()) if lang == "yaml"]
    assert len(shown) >= 4
    for page, data in shown:
        if "experiment" in data:
            named = ROOT / "parameters" / f"{data['experiment']}.yaml"
            assert not named.exists() or yaml.safe_load(named.read_text()) == data, \
                f"{page.relative_to(ROOT)} shows {named.name} otherwise than it is"
        validate(data if "experiment" in data else {**base, **data}, str(page.relative_to(ROOT)))
