"""The house holds its shape (ARCHITECTURE.md): no module imports a higher layer, no two
modules import each other round a circle, no module over 400 lines (the C scanner aside),
no function over 60 lines.

Imports are read with ``ast`` from every module of benchlib: at module level and inside
functions (a lazy import is still an arrow), relative ones resolved. Imports by string
happen only in ``registries/core.py``; each string it is given (a registry's entries, a
workload's own modules, a workload's bindings) is read here and held to the layers too.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "benchlib"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

# ARCHITECTURE.md's table: the longest matching prefix of a module's dotted name decides
LAYERS = {
    "benchlib.schema": 0, "benchlib.vocabulary": 0, "benchlib.measure": 0, "benchlib.masking": 0,
    "benchlib.version": 0, "benchlib.points": 0, "benchlib.inputfiles": 0, "benchlib.seeds": 0,
    "benchlib.extra_tables": 0, "benchlib.filemodes": 0, "benchlib.errors": 0,
    "benchlib.registries": 0, "benchlib.loaders": 0,
    "benchlib.hw": 1,
    "benchlib.targets": 2, "benchlib.workloads": 2,
    "benchlib.workloads._native": 2,     # the C loops no workload owns: below every workload folder
    "benchlib.params": 3, "benchlib.param_errors": 3, "benchlib.property_run": 3, "benchlib.overrides": 3, "benchlib.workload_params": 3, "benchlib.matrix": 3,
    "benchlib.store": 4,
    "benchlib.run": 5,
    "benchlib.importers": 6,
    "benchlib.summaries": 7,
    "benchlib.plots": 8,
    "benchlib.reports": 9,
    "benchlib.cli": 10, "benchlib": 10,
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _own_modules() -> dict[str, int]:
    """A workload's own modules (its tables, its plots: ``Workload.summary_tables`` …,
    module names as strings) sit on the layer that asks for them through the registry
    (``registries.workloads.OWN_MODULES``: plots/ for its plots), whatever their folder."""
    from benchlib.registries import workloads
    return {m: LAYERS[f"benchlib.{asker}"] for m, asker in workloads.own_modules().items()}


OWN = _own_modules()


def layer_of(module: str) -> int:
    if module in OWN:
        return OWN[module]
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        layer = LAYERS.get(".".join(parts[:n]))
        if layer is not None:
            return layer
    raise AssertionError(f"{module}: in no layer of ARCHITECTURE.md")


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _known(name: str) -> str | None:
    """The benchlib module ``name`` is, or is inside of (``a.b.c`` → ``a.b`` when ``a.b.c``
    is a name in module ``a.b``)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_extension(name: str) -> bool:
    """A compiled module (importers/_linescan.c): a leaf that imports nothing."""
    path = PKG.parent.joinpath(*name.split("."))
    return path.with_suffix(".c").exists()


def imports_of(module: str) -> set[str]:
    """The benchlib modules ``module`` imports, anywhere in its body."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node)
            # ``from . import x`` names submodule x, or else a name inside base
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                     for a in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] == "benchlib" and not _is_extension(name):
                target = _known(name)
                if target and target != module:
                    out.add(target)
    return out


GRAPH = {m: imports_of(m) for m in MODULES}


def test_every_module_has_a_layer():
    assert len(MODULES) > 40
    for m in MODULES:
        layer_of(m)


def test_no_upward_import():
    upward = sorted(f"{m} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)})"
                    for m, targets in GRAPH.items() for t in targets if layer_of(t) > layer_of(m))
    assert not upward, "imports that run upward:\n  " + "\n  ".join(upward)


def test_the_shared_c_is_owned_by_no_workload():
    """``workloads/_native/`` (the C loops and their thin Python side) serves every
    workload and imports none of their folders; no workload folder holds C of its own
    (a loop is built once there, used by all: setup.py)."""
    native = [m for m in MODULES if m.startswith("benchlib.workloads._native")]
    assert "benchlib.workloads._native.ops" in native
    up = sorted(f"{m} imports {t}" for m in native for t in GRAPH[m]
                if t.startswith("benchlib.workloads.") and not t.startswith("benchlib.workloads._native"))
    assert not up, "the shared C's Python imports a workload's folder:\n  " + "\n  ".join(up)
    c_in_workloads = sorted(str(p.relative_to(PKG.parent)) for p in (PKG / "workloads").rglob("*.[ch]")
                            if "_native" not in p.parts)
    assert not c_in_workloads, "C in a workload's folder (its place: workloads/_native/): " \
        + ", ".join(c_in_workloads)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (a list that ends where it starts), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for root in sorted(graph):
        if colour[root] != WHITE:
            continue
        stack = [(root, iter(sorted(graph[root])))]
        path = [root]
        colour[root] = GREY
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                colour[node] = BLACK
                stack.pop()
                path.pop()
            elif colour.get(child) == GREY:
                return path[path.index(child):] + [child]
            elif colour.get(child) == WHITE:
                colour[child] = GREY
                stack.append((child, iter(sorted(graph.get(child, ())))))
                path.append(child)
    return None


def test_no_import_circle():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "an import circle: " + " -> ".join(cycle)


def test_the_checks_see_what_they_look_for():
    # the walker finds a function-level relative import and the package __init__ (10)
    assert "benchlib.run.experiment" in GRAPH["benchlib"]
    assert layer_of("benchlib.workloads.ycsb.text") == 2 and layer_of("benchlib.registries.workloads") == 0
    assert layer_of("benchlib.workloads._native.ops") == 2
    # a binding's import of a loop is an extension's (a leaf), its import of _native's Python an arrow
    assert "benchlib.workloads._native.ops" in GRAPH["benchlib.workloads.ybio.bindings.postgres_native"]
    assert _is_extension("benchlib.workloads._native._pgloop")
    # a workload's own plots sit on the plots layer (the registry's word, not their file
    # name), its tables on the summaries'; its other modules on its own
    assert layer_of("benchlib.workloads.ybio.plots_interactive") == layer_of("benchlib.plots") == 8
    assert layer_of("benchlib.workloads.ybio.summary") == 7
    assert layer_of("benchlib.workloads.ybio.plotsx") == 2 == layer_of("benchlib.workloads.ybio.load")
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def long_modules() -> list[str]:
    out = []
    for m, path in MODULES.items():
        n = len(path.read_text().splitlines())
        if n > MAX_MODULE_LINES:
            out.append(f"{path.relative_to(PKG.parent)}: {n} lines")
    return out


def long_functions() -> list[str]:
    """Every function longer than the limit, as "path:line name: N lines"."""
    out = []
    for m, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    out.append(f"{path.relative_to(PKG.parent)}:{node.lineno} {node.name}: {n} lines")
    return out


def test_no_module_over_400_lines():
    # the C scanner (importers/_linescan.c) is no Python module: it is not walked
    over = long_modules()
    assert not over, "modules over 400 lines:\n  " + "\n  ".join(over)


def test_no_function_over_60_lines():
    over = long_functions()
    assert not over, "functions over 60 lines:\n  " + "\n  ".join(over)


# ---- imports by string: only through the registries, each string held to the layers ----

REGISTRIES = ("workloads", "targets", "executors", "importers")


def _string_import_calls(module: str, root: Path = PKG.parent) -> list[str]:
    """Where ``module`` imports by string itself (importlib's import_module, ``__import__``)."""
    path = MODULES[module]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name == "importlib"]
        elif isinstance(node, ast.ImportFrom) and node.module == "importlib":
            names = [f"importlib.{a.name}" for a in node.names]
        elif isinstance(node, ast.Name) and node.id == "__import__":
            names = ["__import__"]
        elif isinstance(node, ast.Attribute) and node.attr in ("import_module", "__import__") \
                and isinstance(node.value, ast.Name) and node.value.id == "importlib":
            names = [f"importlib.{node.attr}"]   # after an ``import importlib.util``
        out += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names]
    return out


def test_the_string_import_check_sees_them(tmp_path, monkeypatch):
    src = ("import importlib.util\nfrom importlib import import_module\n"
           "def f():\n    importlib.import_module('x')\n    __import__('y')\n")
    (tmp_path / "m.py").write_text(src)
    monkeypatch.setitem(MODULES, "probe", tmp_path / "m.py")
    found = [c.split(" ", 1)[1] for c in _string_import_calls("probe", tmp_path)]
    assert found == ["importlib.import_module", "importlib.import_module", "__import__"], found


def test_only_the_registries_import_by_string():
    found = [c for m in MODULES if m != "benchlib.registries.core" for c in _string_import_calls(m)]
    assert not found, ("an import by string the layer checks cannot see (ask a registry, "
                       "benchlib.registries.import_ref, instead):\n  " + "\n  ".join(found))


def _module_of(ref: str) -> str:
    """The benchlib module a ``"module:Attr"`` or module-name string names (it must exist)."""
    name = ref.partition(":")[0]
    assert name in MODULES, f"{ref!r}: no such module in benchlib"
    obj = importlib.import_module(name)
    for part in filter(None, ref.partition(":")[2].split(".")):
        assert hasattr(obj, part), f"{ref!r}: {name} has no {part}"
        obj = getattr(obj, part)
    return name


def _ours(ref: str) -> bool:
    return ref.split(".")[0].split(":")[0] == "benchlib"


def string_imports() -> list[tuple[str, str, int]]:
    """(who holds the string, the module it names, the highest layer that module may be
    on) for every import by string benchlib makes: each registry's entries (on its
    ``HOLDS`` layer or below), an importer's reader and streamer, each workload's
    bindings (on the workloads' layer), its own modules (on their asker's layer). An
    entry a plugin or a test registered at run time (tests/toy) is none of benchlib's."""
    from benchlib.registries import importers
    from benchlib.registries import workloads as wl
    out = []
    for kind in REGISTRIES:
        reg = importlib.import_module(f"benchlib.registries.{kind}")
        top = layer_of(reg.HOLDS)
        if kind == "importers":
            refs = [r for imp in importers._all() for r in (imp.ref, imp.streamer) if r]
        else:
            refs = [r for v in vars(reg).values() if type(v).__name__ == "Registry"
                    for r in v.refs().values()]
        out += [(f"registries.{kind}", _module_of(r), top) for r in refs if _ours(r)]
    for name in wl.names():
        cls = wl.workload_class(name)
        out += [(cls.__module__, m, OWN[m]) for m in (getattr(cls, w) for w in wl.OWN_MODULES) if m]
        bindings = importlib.import_module(f"{cls.__module__.rsplit('.', 1)[0]}.bindings")
        for b in [v for v in vars(bindings).values() if type(v).__name__ == "Bindings"]:
            refs = [r if isinstance(r, str) else f"{r.__module__}:" for r in b._refs.values()]
            out += [(bindings.__name__, _module_of(r), layer_of(cls.__module__)) for r in refs if _ours(r)]
    return out


def test_string_imports_name_modules_that_exist_on_no_higher_layer():
    found = string_imports()
    assert any(m == "benchlib.run.dask_executor" for _, m, _ in found)   # the walk sees them
    assert any(m.endswith(".ybio.plots") for _, m, _ in found)
    up = sorted(f"{who} imports {m} (layer {layer_of(m)}) by string, where layer {top} asks"
                for who, m, top in found if layer_of(m) > top)
    assert not up, "imports by string that run upward:\n  " + "\n  ".join(up)


def askers_of(kind: str) -> list[str]:
    """The modules that import a registry's entries (call one of its ``LOADERS``)."""
    reg = importlib.import_module(f"benchlib.registries.{kind}")
    out = []
    for m in MODULES:
        if f"benchlib.registries.{kind}" not in GRAPH[m] or m.startswith("benchlib.registries"):
            continue
        tree = ast.parse(MODULES[m].read_text())
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} \
            | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        if used & set(reg.LOADERS):
            out.append(m)
    return out


@pytest.mark.parametrize("kind", REGISTRIES)
def test_who_asks_a_registry_for_its_entries_sits_above_them(kind):
    """A registry names higher modules by string; whoever makes it import one (its
    ``LOADERS``) is on the layer of what it holds or above: params checks an
    ``executor:`` name, only run/ starts the executor."""
    reg = importlib.import_module(f"benchlib.registries.{kind}")
    below = sorted(f"{m} (layer {layer_of(m)})" for m in askers_of(kind)
                   if layer_of(m) < layer_of(reg.HOLDS))
    assert not below, (f"ask registries.{kind} for an entry (layer {layer_of(reg.HOLDS)}) "
                       "from below it:\n  " + "\n  ".join(below))


MARGIN_LINES = 10   # no module squeezed against the cap: split by concept first (issue 36)


def test_no_module_near_the_cap():
    near = sorted(f"{p.relative_to(PKG.parent)}: {n} lines" for p in MODULES.values()
                  if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES - MARGIN_LINES)
    assert not near, (f"modules within {MARGIN_LINES} lines of the {MAX_MODULE_LINES}-line cap "
                      "(split by concept, never squeeze):\n  " + "\n  ".join(near))
