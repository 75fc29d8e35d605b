"""A workload's bindings: one class per dialect, registered by the dialect's name.

Each workload keeps its per-DBMS code inside its own folder, one file per dialect
(``workloads/<w>/bindings/postgres.py`` …), and one :class:`Bindings` registry in
``workloads/<w>/bindings/__init__.py`` that names them as ``"module:Class"`` strings, so a
binding is imported only when a run needs it. A target registered from a plugin (or a
test) registers its bindings here too; client processes import the target's module by
its reference (``Endpoint.ref``), which registers them there as well.

A workload asked to run on a dialect it has no binding for refuses in one line, before
anything runs (:meth:`Bindings.check`).
"""
from __future__ import annotations

from ..registries.core import import_ref


class Bindings:
    def __init__(self, workload: str, refs: dict[str, str | type] | None = None):
        self.workload = workload
        self._refs: dict[str, str | type] = dict(refs or {})

    def register(self, dialect: str, ref: str | type) -> None:
        """Bind ``dialect`` to ``ref``: ``"module:Class"`` or the class itself."""
        self._refs[dialect] = ref

    def dialects(self) -> list[str]:
        return list(self._refs)

    def supports(self, dialect: str) -> bool:
        return dialect in self._refs

    def check(self, dialect: str, target: str | None = None) -> None:
        """ValueError (one line) when this workload has no binding for ``dialect``."""
        if dialect not in self._refs:
            who = f"target {target!r} ({dialect})" if target else f"dialect {dialect}"
            raise ValueError(f"workload {self.workload} does not run on {who}: it runs on "
                             f"{', '.join(self._refs) or 'no dialect'}")

    def check_targets(self, targets) -> None:
        """Each target of an experiment (``name``, ``url``) has a binding here: ValueError
        (one line) naming the first that has none, before anything runs. A URL that names
        no target, or a target whose driver is missing, is left to where targets start."""
        from ..registries.targets import target_class, target_kind
        for t in targets:
            try:
                dialect = target_class(target_kind(t.url)).dialect.name
            except (ImportError, ValueError):
                continue
            self.check(dialect, t.name)

    def get(self, dialect: str) -> type:
        """The binding class for ``dialect`` (imported on first use)."""
        self.check(dialect)
        ref = self._refs[dialect]
        if isinstance(ref, str):
            ref = self._refs[dialect] = import_ref(ref)
        return ref
