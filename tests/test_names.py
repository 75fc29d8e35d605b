"""Names where they belong (issue 22): a registered workload's name, a registered target's
kind or a dialect's name appears in benchlib's code only in the thing's own folder or
module and in the registries — the same kind of guard as tests/test_layers.py.

What counts as code: identifiers (names, attributes, definitions, arguments, imported
names) and string literals, f-strings' text included; comments and docstrings do not
count (prose may say "as YCSB does"). A name counts as a word: ``YcsbWorkload``,
``is_sqlite``, ``"sqlite:///x"`` and ``"SQLite"`` name sqlite, ``basicdb`` does not; a
target's aliases (its URL schemes' words: ``postgresql``, ``mariadb``, ``rediss``) name it
as its kind does.

Whose is a place:
- a workload's folder ``workloads/<name>/`` is its own;
- a module of ``targets/`` or ``importers/`` owns the words of its file name
  (``targets/embedded_postgres.py``: embedded-postgres and postgres; ``importers/ycsb_stream.py``:
  ycsb, the tool whose output it reads);
- a binding ``workloads/<w>/bindings/<dialect>.py`` owns its dialect's name;
- the registries name everything.

``ALLOWED`` lists the places that still name what is not theirs, each with what would
mend it; issue 22 emptied it (a workload's own tables and plots moved into its folder,
reached through ``Workload.summary_tables`` / ``plots``; a target's install extra comes
from its registry line). A place that no longer needs its entry fails
:func:`test_no_stale_allowance`, so the list only shrinks.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "benchlib"

REGISTRIES = {p.relative_to(ROOT).as_posix() for p in (PKG / "registries").glob("*.py")}
DIALECTS = ("sqlite", "postgres", "mysql", "redis", "basic", "rocksdb", "duckdb")

# places where the word means something else than the registered thing: kept for good
OTHER_MEANING: dict[str, str] = {
    "benchlib/store/catalog.py": "the catalog is itself a SQLite file (SQLAlchemy), whatever the target",
    "benchlib/store/upgrade.py": "upgrade_meta: a run folder from before meta.json carried the "
                                 "target's dialect knows it only by its kind",
    "benchlib/workloads/linkbench/properties.py": "LinkBench's own config keys "
                                                  "(mysql_bulk_insert_batch …): the tool's words",
}

# path -> why it still names what is not its own, and what would mend it. Empty: every
# place issue 22 listed is mended. An entry added later must go when it is mended
# (test_no_stale_allowance says which), so the list only shrinks.
ALLOWED: dict[str, str] = {}


def _register_lines():
    """The registries' own ``register("name", …)`` calls (read from their source: a test's
    toy registered at run time is none of benchlib's)."""
    for rel in ("benchlib/registries/workloads.py", "benchlib/registries/targets.py"):
        for node in ast.walk(ast.parse((ROOT / rel).read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                yield node


def aliases() -> dict[str, str]:
    """A target's other names, its URL schemes' words (``postgresql`` → postgres,
    ``mariadb+pymysql`` → mysql): an alias names its kind as much as the kind does."""
    out = {}
    for node in _register_lines():
        for kw in node.keywords:
            if kw.arg == "schemes":
                for scheme in ast.literal_eval(kw.value):
                    word = scheme.split("+")[0]
                    if word != node.args[0].value and word not in GENERIC_SCHEMES:
                        out[word] = node.args[0].value
    return out


# schemes that are ordinary words, not another name of their target (a unix socket)
GENERIC_SCHEMES = {"unix"}


def registered_names() -> list[str]:
    """The names the registries' own ``register("name", …)`` lines give, their aliases
    and the dialects."""
    return sorted({*DIALECTS, *(n.args[0].value for n in _register_lines()), *aliases()})


def _with_aliases(own: set[str]) -> set[str]:
    """A place that owns a kind owns its aliases too (``targets/mysql.py``: mariadb)."""
    return own | {alias for alias, kind in aliases().items() if kind in own}


def _owned(rel: str) -> set[str] | None:
    """The names the module at ``rel`` may use, its own; None: every name (a registry)."""
    parts = rel.split("/")          # benchlib/<folder>/…/<file>.py
    stem = parts[-1].removesuffix(".py")
    if rel in REGISTRIES:
        return None
    if parts[1] == "workloads" and len(parts) > 3:          # inside a workload's folder
        own = {parts[2]}
        if "bindings" in parts[3:-1]:                         # its bindings/<dialect>.py
            # bindings/<dialect>[_part].py; __init__: their registry
            own |= set(DIALECTS) if stem == "__init__" else {stem.split("_")[0]}
        return own
    if parts[1] in ("targets", "importers") and len(parts) >= 3:
        # embedded_postgres, ycsb_stream; a dialect's module of targets/sql/ (sql/mysql.py)
        words = stem.strip("_").split("_")
        return {*words, "-".join(words)}
    return set()


def _code_strings(tree: ast.AST):
    """(line, text) of every identifier and string literal that is not a docstring."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield line, node.value
        elif isinstance(node, ast.Name):
            yield line, node.id
        elif isinstance(node, ast.Attribute):
            yield line, node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield line, node.name
        elif isinstance(node, ast.arg):
            yield line, node.arg
        elif isinstance(node, ast.keyword) and node.arg:
            yield line, node.arg
        elif isinstance(node, ast.alias):
            yield line, node.asname or node.name


def _as_words(text: str) -> str:
    """``YcsbWorkload`` → ``ycsb_workload``: camel-case boundaries made word boundaries."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text).lower()


def _pattern(name: str) -> re.Pattern:
    return re.compile(r"(?<![a-z0-9])" + re.escape(name).replace(r"\-", "[-_ ]") + r"(?![a-z0-9])")


def foreign_names() -> dict[str, dict[str, list[int]]]:
    """path -> {name: lines} of every name used outside its own place."""
    names = registered_names()
    patterns = {n: _pattern(n) for n in names}
    found: dict[str, dict[str, list[int]]] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        own = _owned(rel)
        if own is None or rel in OTHER_MEANING:
            continue
        own = _with_aliases(own)
        for line, text in _code_strings(ast.parse(path.read_text(), str(path))):
            words = _as_words(text)
            for n in names:
                if n not in own and patterns[n].search(words):
                    found.setdefault(rel, {}).setdefault(n, []).append(line)
    return found


def _describe(found: dict[str, dict[str, list[int]]]) -> str:
    return "\n".join(f"  {rel}: " + ", ".join(f"{n} (line {', '.join(map(str, sorted(set(ls))[:5]))})"
                                              for n, ls in sorted(names.items()))
                     for rel, names in sorted(found.items()))


def test_names_stay_in_their_own_places():
    found = {rel: names for rel, names in foreign_names().items() if rel not in ALLOWED}
    assert not found, (
        "a workload's, target's or dialect's name outside its own folder/module and the "
        "registries (reach it through the registry or the target's Dialect instead):\n"
        + _describe(found))


def stale_allowances(allowed: dict[str, str], found: dict[str, dict[str, list[int]]]) -> list[str]:
    """The allowed places that name nothing foreign any more (or are gone)."""
    return sorted(rel for rel in allowed if rel not in found)


def test_no_stale_allowance():
    stale = stale_allowances(ALLOWED, foreign_names())
    assert not stale, ("these places name nothing that is not theirs any more: remove their "
                       "entries from ALLOWED in tests/test_names.py:\n  " + "\n  ".join(stale))


def test_the_guard_sees_what_it_guards():
    # identifiers and strings count, camel case included; docstrings and longer words do not
    tree = ast.parse('"""as YCSB does"""\nclass YcsbThing:\n    url = "postgresql://x"\n'
                     '    kind = "SQLite"\n    opt = "basicdb.verbose"\n')
    words = [_as_words(t) for _, t in _code_strings(tree)]
    hits = {n for n in registered_names() for w in words if _pattern(n).search(w)}
    assert hits == {"ycsb", "sqlite", "postgresql"}
    assert aliases()["mariadb"] == "mysql" and aliases()["postgresql"] == "postgres"
    # a string import names what it imports: outside the registries it is caught
    ref = _as_words("benchlib.workloads.kv.bindings.rocksdb:RocksdbKv")
    assert {n for n in registered_names() if _pattern(n).search(ref)} == {"kv", "rocksdb"}
    assert "mariadb" in _with_aliases(_owned("benchlib/targets/mysql_driver.py"))
    assert _owned("benchlib/targets/embedded_postgres.py") >= {"postgres", "embedded-postgres"}
    assert _owned("benchlib/targets/sql/mysql.py") >= {"mysql"}
    assert _owned("benchlib/workloads/kv/bindings/redis.py") == {"kv", "redis"}
    # an allowance for a place that names nothing foreign is stale; one that still does is not
    found = foreign_names()
    assert stale_allowances({"benchlib/schema.py": "", "benchlib/gone.py": ""}, found) == \
        ["benchlib/gone.py", "benchlib/schema.py"]
    assert stale_allowances({"benchlib/x.py": ""}, {"benchlib/x.py": {"ycsb": [1]}}) == []
    # a workload's own tables and plots are its own: kv's summary, ybio's plots name them
    assert _owned("benchlib/workloads/ybio/plots_interactive.py") == {"ybio"}


def _workload_ops() -> set[str]:
    """Every op name a registered workload declares (its order, compound and insert ops)."""
    from benchlib.registries import workloads
    ops: set[str] = set()
    for name in workloads.names():
        cls = workloads.workload_class(name)
        ops |= {*cls.op_order, *cls.compound_ops, *cls.insert_ops, *cls.op_codes}
    return ops


# where op names are the thing itself: the workloads, the readers of the tools' own output
OPS_OWNED = ("benchlib/workloads/", "benchlib/importers/", "benchlib/registries/")


def foreign_ops() -> dict[str, list[str]]:
    """path -> the workloads' op names its code spells (a string literal that is one)."""
    ops = _workload_ops()
    found: dict[str, list[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(OPS_OWNED):
            continue
        for line, text in _code_strings(ast.parse(path.read_text(), str(path))):
            if text in ops:
                found.setdefault(rel, []).append(f"{text} (line {line})")
    return found


def test_op_names_stay_with_their_workloads():
    """The runner and the summaries ask a workload for its ops' roles (``compound_ops``,
    ``insert_ops``, ``op_order`` …) rather than spelling YCSB's ``READ-MODIFY-WRITE`` or
    ``INSERT`` themselves."""
    assert {"READ-MODIFY-WRITE", "INSERT", "GET_NODE"} <= _workload_ops()
    found = foreign_ops()
    assert not found, "op names outside their workloads:\n" + "\n".join(
        f"  {rel}: {', '.join(hits)}" for rel, hits in sorted(found.items()))
