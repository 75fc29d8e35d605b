"""A DBMS's language as a workload's binding needs it, and nothing of any workload.

A :class:`Dialect` is what a target tells the rest of benchlib about how to speak to it:
the key under which each workload registers its binding (``name``), the driver's
parameter marker, how identifiers are quoted, and whether the engine runs inside the
client processes (SQLite), so that the sampler and the summaries count those processes
as the DBMS. It is recorded in each run's meta.json (:meth:`Dialect.as_meta`), so a
summary reads it instead of guessing from a DBMS's name.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

# a plain SQL name: letters, digits, _; at most 63 (PostgreSQL's limit). params checks every
# name a user gives against it; quote_ident checks again, the last guard before SQL
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


@dataclass(frozen=True)
class Dialect:
    name: str                   # the key of a workload's bindings: postgres, mysql, sqlite …
    placeholder: str = "%s"     # the driver's parameter marker ("%s", "?"); "" without SQL
    numbered: bool = False      # $1, $2 … markers are understood (libpq's own statements)
    ident_quote: str = '"'      # the identifier quote ('"', '`'); "" where names are not quoted
    sql: bool = True            # statements are SQL (False: Redis's commands, no database)
    engine_in_clients: bool = False  # the engine runs inside the client processes (SQLite)

    def quote_ident(self, name: str) -> str:
        """``name`` checked to be a plain name, then quoted in this dialect's way."""
        if not IDENTIFIER.match(name):
            raise ValueError(f"{name!r} is not a plain SQL name (letters, digits, _; at most 63)")
        q = self.ident_quote
        return f"{q}{name}{q}"

    def marker(self, i: int) -> str:
        """The i-th (1-based) parameter marker: ``$i`` where numbered, else the placeholder."""
        return f"${i}" if self.numbered else self.placeholder

    def markers(self, n: int, start: int = 1) -> str:
        return ", ".join(self.marker(i) for i in range(start, start + n))

    def as_meta(self) -> dict:
        return asdict(self)

    @classmethod
    def from_meta(cls, d: dict | None) -> Dialect | None:
        if not d:
            return None
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def named(dialect: str) -> Dialect:
    """The :class:`Dialect` called ``dialect``, as a registered target declares it."""
    if dialect not in _NAMED:
        from ..registries.targets import kinds, target_class
        for kind in kinds():
            try:
                found = target_class(kind).dialect
            except ImportError:   # a target whose optional driver is not installed
                continue
            _NAMED.setdefault(found.name, found)
    if dialect not in _NAMED:
        raise ValueError(f"no registered target speaks dialect {dialect!r}")
    return _NAMED[dialect]


_NAMED: dict[str, Dialect] = {}


def quote_ident(name: str, dialect: str) -> str:
    """``name`` checked and quoted in the way of the dialect called ``dialect``, for code
    that holds a dialect's name rather than its object."""
    return named(dialect).quote_ident(name)
