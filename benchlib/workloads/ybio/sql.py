"""ybio's statements, built from the target's dialect (types, table options, statistics:
:mod:`benchlib.targets.sql`) and its binding (the update: ``bindings/``).

The table is the seed's: ``mykey bigint`` (indexed, or the primary key with
``index_as_pk``), ``scratch bigint`` (random: the insert order and the column the
updates increment), ``filler char(n)``. A call reads (or updates) the rows of a
range ``mykey BETWEEN lo AND hi``:

- read: ``select count(*), sum(scratch) …`` (``sum(mykey)`` with ``index_only``, which
  the index alone answers);
- update: the binding's (``update_sql``): PostgreSQL's data-modifying CTE; elsewhere
  ``UPDATE … RETURNING`` where the dialect has it (SQLite), else a plain UPDATE followed
  by ``update_check`` (``select count(*), max(scratch)`` of the same range) in one
  transaction (MariaDB/MySQL).

Names are checked and quoted by the target's dialect (``Dialect.quote_ident``); keys are
bound parameters in the dialect's markers.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..indexes import index_name

INDEX_WHAT = "asc_mykey"     # the seed's index name after its table's: <table>_asc_mykey


COLUMNS = ("mykey", "scratch", "filler")   # each table's, as ``create`` makes them
ENGINE = "InnoDB"     # the storage engine of its tables where the DBMS has several (the seed's)


@dataclass(frozen=True)
class YbioStatements:
    create: str
    index: str | None      # None when mykey is the primary key
    drop: str
    read: str
    update: str            # the binding's (update_sql)
    update_check: str      # the range's count(*), max(scratch) after a plain UPDATE
    count: str             # count(*), max(scratch), sum(scratch): initial_count and checks
    analyze: list          # fresh statistics after the load (the dialect's)
    name: str              # the table's name, unquoted (the dialect's bulk load quotes it)


def statements(binding, dialect, table: str, index_name: str, *, filler: int = 1,
               index_as_pk: bool = False, index_only: bool = False,
               if_not_exists: bool = False, name: str = "") -> YbioStatements:
    """``table`` and ``index_name`` already quoted for the dialect (``name``: the table's
    own, else ``table`` unquoted); ``binding`` the dialect's binding class (its update)."""
    name = name or table.strip(dialect.ident_quote)
    lo, hi = dialect.marker(1), dialect.marker(2)
    where = f"WHERE mykey BETWEEN {lo} AND {hi}"
    # SQLite: BIGINT PRIMARY KEY is a unique index beside the rowid table (INTEGER
    # PRIMARY KEY would be the rowid itself and store the rows in key order)
    key_type = "BIGINT PRIMARY KEY" if index_as_pk else "BIGINT"
    exists = "IF NOT EXISTS " if if_not_exists else ""
    create = (f"CREATE TABLE {exists}{table} (mykey {key_type}, scratch BIGINT, "
              f"filler {dialect.char_type(filler)}){dialect.table_options(engine=ENGINE)}")
    # created if absent (a rerun after a kill during the index step finds it: indexes.py)
    index = None if index_as_pk else f"CREATE INDEX IF NOT EXISTS {index_name} ON {table} (mykey)"
    agg = "sum(mykey)" if index_only else "sum(scratch)"
    return YbioStatements(
        create=create, index=index, drop=f"DROP TABLE IF EXISTS {table}",
        read=f"SELECT count(*), {agg} FROM {table} {where}",
        update=binding.update_sql(dialect, table, where),
        update_check=f"SELECT count(*), max(scratch) FROM {table} {where}",
        count=f"SELECT count(*), max(scratch), sum(scratch) FROM {table}",
        analyze=dialect.analyze([name]), name=name)


def table_statements(binding, dialect, table: str, params, **over) -> YbioStatements:
    """The statements of one of the workload's tables, with its parameters."""
    kw = dict(filler=params.filler, index_as_pk=params.index_as_pk,
              index_only=params.index_only, if_not_exists=not params.recreate)
    kw.update(over)
    return statements(binding, dialect, dialect.quote_ident(table),
                      dialect.quote_ident(index_name(table, INDEX_WHAT)), name=table, **kw)
