"""ybio's statements, built from a binding's dialect (``bindings/``: postgres — also the
embedded one —, sqlite, mysql).

The table is the seed's: ``mykey bigint`` (indexed, or the primary key with
``index_as_pk``), ``scratch bigint`` (random: the insert order and the column the
updates increment), ``filler char(n)``. A call reads (or updates) the rows of a
range ``mykey BETWEEN lo AND hi``:

- read: ``select count(*), sum(scratch) …`` (``sum(mykey)`` with ``index_only``, which
  the index alone answers);
- update: each binding's own (``update_sql``): PostgreSQL's data-modifying CTE, SQLite's
  ``UPDATE … RETURNING``, MariaDB/MySQL's plain UPDATE followed by ``update_check``
  (``select count(*), max(scratch)`` of the same range) in one transaction.

Names are checked and quoted by the target's dialect (``Dialect.quote_ident``); keys are
bound parameters in the dialect's markers.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..indexes import index_name

INDEX_WHAT = "asc_mykey"     # the seed's index name after its table's: <table>_asc_mykey


COLUMNS = ("mykey", "scratch", "filler")   # each table's, as ``create`` makes them


@dataclass(frozen=True)
class YbioStatements:
    create: str
    index: str | None      # None when mykey is the primary key
    drop: str
    read: str
    update: str            # the binding's (update_sql)
    update_check: str      # the range's count(*), max(scratch) after a plain UPDATE
    insert: str            # one row (executemany); postgres loads with COPY
    copy: str
    count: str             # count(*), max(scratch), sum(scratch): initial_count and checks
    analyze: str           # fresh statistics after the load


def statements(binding, dialect, table: str, index_name: str, *, filler: int = 1,
               index_as_pk: bool = False, index_only: bool = False,
               if_not_exists: bool = False) -> YbioStatements:
    """``table`` and ``index_name`` already quoted for the dialect; ``binding`` the
    dialect's binding class (its filler type, table options, update and analyze)."""
    lo, hi = dialect.marker(1), dialect.marker(2)
    where = f"WHERE mykey BETWEEN {lo} AND {hi}"
    # SQLite: BIGINT PRIMARY KEY is a unique index beside the rowid table (INTEGER
    # PRIMARY KEY would be the rowid itself and store the rows in key order)
    key_type = "BIGINT PRIMARY KEY" if index_as_pk else "BIGINT"
    exists = "IF NOT EXISTS " if if_not_exists else ""
    create = (f"CREATE TABLE {exists}{table} (mykey {key_type}, scratch BIGINT, "
              f"filler {binding.filler_type(filler)}){binding.table_options}")
    # created if absent (a rerun after a kill during the index step finds it: indexes.py)
    index = None if index_as_pk else f"CREATE INDEX IF NOT EXISTS {index_name} ON {table} (mykey)"
    agg = "sum(mykey)" if index_only else "sum(scratch)"
    return YbioStatements(
        create=create, index=index, drop=f"DROP TABLE IF EXISTS {table}",
        read=f"SELECT count(*), {agg} FROM {table} {where}",
        update=binding.update_sql(table, where),
        update_check=f"SELECT count(*), max(scratch) FROM {table} {where}",
        insert=f"INSERT INTO {table} (mykey, scratch, filler) VALUES ({dialect.markers(3)})",
        copy=f"COPY {table} (mykey, scratch, filler) FROM STDIN",
        count=f"SELECT count(*), max(scratch), sum(scratch) FROM {table}",
        analyze=binding.analyze.format(t=table))


def table_statements(binding, dialect, table: str, params, **over) -> YbioStatements:
    """The statements of one of the workload's tables, with its parameters."""
    kw = dict(filler=params.filler, index_as_pk=params.index_as_pk,
              index_only=params.index_only, if_not_exists=not params.recreate)
    kw.update(over)
    return statements(binding, dialect, dialect.quote_ident(table),
                      dialect.quote_ident(index_name(table, INDEX_WHAT)), **kw)
