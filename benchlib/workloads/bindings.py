"""A workload's bindings: one class per dialect, registered by the dialect's name.

Each workload keeps its per-DBMS code inside its own folder, one file per dialect
(``workloads/<w>/bindings/postgres.py`` …), and one :class:`Bindings` registry in
``workloads/<w>/bindings/__init__.py`` that names them as ``"module:Class"`` strings, so a
binding is imported only when a run needs it. A target registered from a plugin (or a
test) registers its bindings here too; client processes import the target's module by
its reference (``Endpoint.ref``), which registers them there as well.

A workload's generic SQL binding (``sql=``) serves every SQL dialect that has no binding
of its own there: it speaks to the DBMS through the dialect's services
(:mod:`benchlib.targets.sql`), so a new SQL DBMS needs no file in any workload. A
workload asked to run on a dialect it has no binding for refuses in one line, before
anything runs (:meth:`Bindings.check`).
"""
from __future__ import annotations

from ..registries.core import import_ref
from ..targets.base import TargetError

ANY_SQL = "any SQL dialect"   # how a refusal names what the generic SQL binding serves


def sql_dialect(dialect):
    """The dialect (an object, or a registered target's dialect's name) when it has the
    SQL services a generic binding speaks through (a
    :class:`~benchlib.targets.sql.SqlDialect`), else None."""
    from ..targets.sql import SqlDialect
    if isinstance(dialect, str):
        from ..targets.dialect import named
        try:
            dialect = named(dialect)
        except ValueError:
            return None
    return dialect if isinstance(dialect, SqlDialect) else None


def use_c_loop(driver: str, missing: str | None) -> bool:
    """``run.driver``'s choice: True, the binding's C loop (c or auto, and it is there);
    False, the Python one (python, or auto without it); c without it: TargetError, one line."""
    if driver == "python":
        return False
    if missing is None:
        return True
    if driver == "c":
        raise TargetError(f"run.driver c: {missing}")
    return False


class Bindings:
    def __init__(self, workload: str, refs: dict[str, str | type] | None = None, *,
                 sql: str | type | None = None, sql_needs: tuple[str, ...] = ()):
        self.workload = workload
        self._refs: dict[str, str | type] = dict(refs or {})
        self._sql = sql     # the generic SQL binding: every SQL dialect without its own
        self._needs = sql_needs   # what it asks of a dialect beyond SQL (its True attributes)

    def register(self, dialect: str, ref: str | type) -> None:
        """Bind ``dialect`` to ``ref``: ``"module:Class"`` or the class itself."""
        self._refs[dialect] = ref

    def dialects(self) -> list[str]:
        return list(self._refs) + ([ANY_SQL] if self._sql is not None else [])

    def _name(self, dialect) -> str:
        return dialect if isinstance(dialect, str) else dialect.name

    def supports(self, dialect) -> bool:
        """A binding here for ``dialect`` (a :class:`Dialect` or its name): its own, or
        the generic SQL one where the dialect speaks SQL."""
        return self._name(dialect) in self._refs or self._lacks(dialect) == ""

    def _lacks(self, dialect) -> str | None:
        """What the generic SQL binding needs that ``dialect`` lacks ("": nothing; None:
        no generic binding, or not a SQL dialect)."""
        d = sql_dialect(dialect) if self._sql is not None else None
        if d is None:
            return None
        return ", ".join(n for n in self._needs if not getattr(d, n, False))

    def check(self, dialect, target: str | None = None) -> None:
        """ValueError (one line) when this workload has no binding for ``dialect``."""
        if not self.supports(dialect):
            name = self._name(dialect)
            who = f"target {target!r} ({name})" if target else f"dialect {name}"
            lacks = self._lacks(dialect)
            why = (f"its SQL lacks {lacks}" if lacks else
                   f"it runs on {', '.join(self.dialects()) or 'no dialect'}")
            raise ValueError(f"workload {self.workload} does not run on {who}: {why}")

    def check_targets(self, targets) -> None:
        """Each target of an experiment (``name``, ``url``) has a binding here: ValueError
        (one line) naming the first that has none, before anything runs. A URL that names
        no target, or a target whose driver is missing, is left to where targets start."""
        from ..registries.targets import target_class, target_kind
        for t in targets:
            try:
                dialect = target_class(target_kind(t.url)).dialect
            except (ImportError, ValueError):
                continue
            self.check(dialect, t.name)

    def get(self, dialect) -> type:
        """The binding class for ``dialect`` (a :class:`Dialect` or its name; imported on
        first use): its own, else the generic SQL one."""
        self.check(dialect)
        name = self._name(dialect)
        if name in self._refs:
            ref = self._refs[name]
            if isinstance(ref, str):
                ref = self._refs[name] = import_ref(ref)
            return ref
        if isinstance(self._sql, str):
            self._sql = import_ref(self._sql)
        return self._sql
