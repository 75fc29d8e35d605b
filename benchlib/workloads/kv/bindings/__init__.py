"""kv's bindings: one class per dialect, found through :data:`BINDINGS`.

Every binding has, in a client thread, ``read(key)``, ``insert(key, value)``,
``delete(key)``, ``update(key, value)``, ``scan(key, n)`` returning a status (0 OK,
4 EMPTY: a miss, an outcome and not an error; 2 ERROR), ``load(pairs)`` / ``remove(keys)`` for the prepare's batches,
``conn`` (the driver's connection, for the reconnection policy) and ``close()``; it is
made by ``open(endpoint, table)``. A binding may turn a chunk's arguments into what its
calls take before they are timed (``prepare(codes, args)``: Redis packs its commands).

In the controlling process: ``key_prefix(table)`` (what goes before every key),
``clear(target, table, key_size)`` (an empty store before the prepare) and
``after_load(target, table)`` (fresh statistics after it).

- every SQL dialect (:mod:`.sql`, one binding through the target's dialect): a
  two-column table.
- redis (:mod:`.redis`): the keys under the table's prefix and a sorted set beside them;
  its run loop in C over hiredis where that is built (:mod:`.redis_native`, run.driver).
- basic (:mod:`.basic`): nothing at all, at once: the driver's own ceiling.
- rocksdb (:mod:`.rocksdb`): a column family; a scan is an iterator from a seek.

A target registered elsewhere (a plugin, the tests' ``toy``) registers its own binding
with ``BINDINGS.register(dialect, "module:Class")``.
"""
from __future__ import annotations

from ...bindings import Bindings, use_c_loop

COLUMNS = ("k", "v")   # a SQL dialect's table: the key, the value

BINDINGS = Bindings("kv", {
    d: f"{__name__}.{d}:{cls}" for d, cls in (
        ("redis", "RedisKv"), ("basic", "BasicKv"), ("rocksdb", "RocksdbKv"))},
    sql=f"{__name__}.sql:SqlKv")


def binding(dialect) -> type:
    """The binding class for a target's (or an endpoint's) dialect."""
    return BINDINGS.get(dialect)


def prepare_args(binding, codes, args):
    """The chunk's arguments as the binding's timed calls take them."""
    prep = getattr(binding, "prepare", None)
    return prep(codes, args) if prep else args


def native_missing(dialect) -> str | None:
    """Why kv's run loop cannot run in C on ``dialect`` (a Dialect or its name; None: it
    can; run.driver): the binding class says, where it has a C loop (``native_missing``,
    ``open_native``)."""
    name = dialect if isinstance(dialect, str) else dialect.name
    if not BINDINGS.supports(dialect):
        return f"workload kv does not run on dialect {name}"
    check = getattr(BINDINGS.get(dialect), "native_missing", None)
    return check() if check else f"kv has no C loop for dialect {name}"


def open_binding(endpoint, table: str, driver: str = "python"):
    """A connected binding for a run client: with ``driver`` c or auto, the one whose
    run loop is in C where the dialect has it built."""
    cls = binding(endpoint.dialect)
    missing = native_missing(endpoint.dialect) if driver != "python" else None
    if use_c_loop(driver, missing):
        return cls.open_native(endpoint, table)
    return cls.open(endpoint, table)
