"""What a SQL DBMS says once, for every workload: its dialect (issue 36).

A SQL target's ``dialect`` is an instance of one of this package's classes, one module
per DBMS (:mod:`.postgres`, :mod:`.mysql`, :mod:`.sqlite`) over the standard SQL and
DB-API of :mod:`.base`: identifiers quoted and markers (:class:`~..dialect.Dialect`'s),
column types, a table's DDL from its columns and key, an index's, the drop, the bulk
load as the DBMS takes it fastest, the statistics after a load, what a driver's
``rowcount`` says (−1: it cannot tell), the upsert, transactions on an autocommit
connection, what a duplicate key raises. A workload's generic SQL binding speaks to
any of them through these; a binding of its own for a dialect holds only the statements
that are that workload's alone (its C loop, a statement only that DBMS has).
"""
from .base import SqlDialect, count_rows, run_statements

__all__ = ["SqlDialect", "count_rows", "run_statements"]
