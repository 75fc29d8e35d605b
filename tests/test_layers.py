"""The house holds its shape (ARCHITECTURE.md): no module imports a higher layer, no two
modules import each other round a circle, no module over 400 lines (the C scanner aside),
no function over 60 lines.

Imports are read with ``ast`` from every module of benchlib: at module level and inside
functions (a lazy import is still an arrow), relative ones resolved.
"""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "benchlib"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

# ARCHITECTURE.md's table: the longest matching prefix of a module's dotted name decides
LAYERS = {
    "benchlib.schema": 0, "benchlib.measure": 0, "benchlib.masking": 0,
    "benchlib.version": 0, "benchlib.points": 0, "benchlib.inputfiles": 0, "benchlib.seeds": 0,
    "benchlib.extra_tables": 0, "benchlib.filemodes": 0,
    "benchlib.workloads.registry": 0, "benchlib.targets.registry": 0, "benchlib.run.registry": 0,
    "benchlib.hw": 1,
    "benchlib.targets": 2, "benchlib.workloads": 2,
    "benchlib.workloads._native": 2,     # the C loops no workload owns: below every workload folder
    "benchlib.params": 3, "benchlib.property_run": 3, "benchlib.overrides": 3, "benchlib.workload_params": 3, "benchlib.matrix": 3,
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


def _is_workload_plots(parts: list[str]) -> bool:
    """A workload's own plots (``workloads/<w>/plots.py``, ``plots_<…>.py``: its
    ``Workload.plots``) sit in its folder on the plots layer: they import plots/, and
    only the plots layer and above import them (by name, through the registry)."""
    return len(parts) == 4 and parts[:2] == ["benchlib", "workloads"] \
        and parts[3].split("_")[0] == "plots"


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def layer_of(module: str) -> int:
    parts = module.split(".")
    if _is_workload_plots(parts):
        return LAYERS["benchlib.plots"]
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
    assert layer_of("benchlib.workloads.ycsb.text") == 2 and layer_of("benchlib.workloads.registry") == 0
    assert layer_of("benchlib.workloads._native.ops") == 2
    # a binding's import of a loop is an extension's (a leaf), its import of _native's Python an arrow
    assert "benchlib.workloads._native.ops" in GRAPH["benchlib.workloads.ybio.bindings.postgres_native"]
    assert _is_extension("benchlib.workloads._native._pgloop")
    # a workload's own plots sit on the plots layer, its other modules (its tables) on its own
    assert layer_of("benchlib.workloads.ybio.plots_interactive") == layer_of("benchlib.plots") == 8
    assert layer_of("benchlib.workloads.ybio.summary") == 2 == layer_of("benchlib.workloads.ybio.plotsx")
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
