"""What a bench script measures against must be there before it starts: its reference
tool on PATH (sysbench, pgbench, psql, redis-benchmark) or the client library it compares.
One line naming what is missing and how to get it, exit 2 (as benchlib's own bad input),
never a traceback from deep inside the first subprocess call."""
from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path


def need(tools: dict[str, str] | None = None, modules: dict[str, str] | None = None) -> None:
    """``tools``: a program → how to install it; ``modules``: an importable module → the
    same. Exit 2 with one line on the first that is missing."""
    me = Path(sys.argv[0]).name
    for tool, how in (tools or {}).items():
        if shutil.which(tool) is None:
            print(f"{me}: {tool} not found on PATH (the reference this script measures "
                  f"against): {how}", file=sys.stderr)
            raise SystemExit(2)
    for module, how in (modules or {}).items():
        if importlib.util.find_spec(module) is None:
            print(f"{me}: the Python module {module} is not installed: {how}", file=sys.stderr)
            raise SystemExit(2)
