"""The registries, at the bottom of the house: a name → what it names, one shape for each
kind (:class:`~.core.Registry`: register, look up, list; an unknown name raises
:class:`~.core.UnknownName`, one line with the nearest known name).

- :mod:`.workloads`: a workload's name → its class (``benchlib run``'s ``workload:``);
- :mod:`.targets`: a DBMS family's kind → its target class, and URL schemes → kinds —
  the servers benchlib provisions itself (``postgres-provisioned`` …) among them;
- :mod:`.executors`: how a step's client processes start (``executor:``);
- :mod:`.importers`: a foreign tool's output format → its reader.

Each module holds its kind's ``register(…)`` lines. Only the registries name every
workload and target (``tests/test_names.py``), and only :mod:`.core` imports by string
(``tests/test_layers.py`` reads each string and places it on its asker's layer).
"""
from __future__ import annotations

from .core import Registry, UnknownName, import_module, import_ref, ref_of

__all__ = ["Registry", "UnknownName", "import_module", "import_ref", "ref_of"]
