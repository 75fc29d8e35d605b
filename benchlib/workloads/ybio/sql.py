"""ybio's statements, one set per ``target.dialect`` (postgres — also the embedded
one —, sqlite, mysql).

The table is the seed's: ``mykey bigint`` (indexed, or the primary key with
``index_as_pk``), ``scratch bigint`` (random: the insert order and the column the
updates increment), ``filler char(n)``. A call reads (or updates) the rows of a
range ``mykey BETWEEN lo AND hi``:

- read: ``select count(*), sum(scratch) …`` (``sum(mykey)`` with ``index_only``, which
  the index alone answers);
- update, PostgreSQL: the seed's data-modifying CTE ``with u as (update … set
  scratch=scratch+1 … returning 1, scratch) select count(*), max(scratch) from u``;
  SQLite (3.35+): ``UPDATE … RETURNING scratch`` (count and max taken from the rows);
  MariaDB/MySQL have no data-modifying CTE and no UPDATE … RETURNING: the UPDATE, then
  ``select count(*), max(scratch)`` of the same range, in one transaction.

Table names come checked and quoted (``targets.sql.quote_ident``); keys are bound
parameters.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...targets.dialect import quote_ident


@dataclass(frozen=True)
class YbioStatements:
    create: str
    index: str | None      # None when mykey is the primary key
    drop: str
    read: str
    update: str            # postgres: the CTE; sqlite: UPDATE … RETURNING; mysql: UPDATE
    update_check: str      # mysql: the SELECT after the UPDATE, in the same transaction
    insert: str            # one row (executemany); postgres loads with COPY
    copy: str
    count: str             # count(*), max(scratch), sum(scratch): initial_count and checks


def statements(dialect: str, table: str, index_name: str, *, filler: int = 1,
               index_as_pk: bool = False, index_only: bool = False,
               if_not_exists: bool = False) -> YbioStatements:
    """``table`` and ``index_name`` already quoted for the dialect."""
    ph = {"postgres": ("$1", "$2"), "sqlite": ("?", "?"), "mysql": ("%s", "%s")}[dialect]
    lo, hi = ph
    where = f"WHERE mykey BETWEEN {lo} AND {hi}"
    # SQLite: BIGINT PRIMARY KEY is a unique index beside the rowid table (INTEGER
    # PRIMARY KEY would be the rowid itself and store the rows in key order)
    key_type = "BIGINT PRIMARY KEY" if index_as_pk else "BIGINT"
    filler_type = "TEXT" if dialect == "sqlite" else (
        f"CHAR({max(filler, 1)})" if filler <= 255 else f"VARCHAR({filler})")
    exists = "IF NOT EXISTS " if if_not_exists else ""
    create = f"CREATE TABLE {exists}{table} (mykey {key_type}, scratch BIGINT, filler {filler_type})"
    if dialect == "mysql":
        create += " ENGINE=InnoDB"
    index = None if index_as_pk else f"CREATE INDEX {index_name} ON {table} (mykey)"
    agg = "sum(mykey)" if index_only else "sum(scratch)"
    read = f"SELECT count(*), {agg} FROM {table} {where}"
    if dialect == "postgres":
        update = (f"WITH u AS (UPDATE {table} SET scratch = scratch + 1 {where} "
                  f"RETURNING 1, scratch) SELECT count(*), max(scratch) FROM u")
    elif dialect == "sqlite":
        update = f"UPDATE {table} SET scratch = scratch + 1 {where} RETURNING scratch"
    else:
        update = f"UPDATE {table} SET scratch = scratch + 1 {where}"
    p3 = {"postgres": "$1, $2, $3", "sqlite": "?, ?, ?", "mysql": "%s, %s, %s"}[dialect]
    return YbioStatements(
        create=create, index=index, drop=f"DROP TABLE IF EXISTS {table}", read=read,
        update=update, update_check=f"SELECT count(*), max(scratch) FROM {table} {where}",
        insert=f"INSERT INTO {table} (mykey, scratch, filler) VALUES ({p3})",
        copy=f"COPY {table} (mykey, scratch, filler) FROM STDIN",
        count=f"SELECT count(*), max(scratch), sum(scratch) FROM {table}")


def quote(dialect: str, name: str) -> str:
    """An identifier checked again (a plain name, at most 63) and quoted as the dialect
    quotes it: ``targets.sql.quote_ident``, the last guard after the parameters'."""
    return quote_ident(name, "mysql" if dialect == "mysql" else "postgres")


def table_statements(dialect: str, table: str, params, **over) -> YbioStatements:
    """The statements of one of the workload's tables, with its parameters."""
    kw = dict(filler=params.filler, index_as_pk=params.index_as_pk,
              index_only=params.index_only, if_not_exists=not params.recreate)
    kw.update(over)
    return statements(dialect, quote(dialect, table), quote(dialect, f"{table}_asc_mykey"), **kw)
