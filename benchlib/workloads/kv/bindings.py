"""The key-value operations on each dialect: one binding per client thread.

Every binding has ``read(key)``, ``insert(key, value)``, ``delete(key)``,
``update(key, value)``, ``scan(key, n)`` returning a status (0 OK, 4 EMPTY: the
key was not there, a miss, an outcome and not an error; 2 ERROR), and ``load(pairs)`` / ``remove(keys)`` for the prepare's batches. A binding
may turn a chunk's arguments into what its calls take before they are timed
(``prepare(codes, args)``: Redis packs its commands, as redis-benchmark does).

- SQL (sqlite, postgres, mysql): a two-column table, ``k`` the primary key, ``v`` the
  value; a scan is ``k >= ? ORDER BY k LIMIT n``; the prepare's batches are one
  transaction each (executemany).
- Redis: ``GET`` / ``SET … XX`` (update) on the keys, and a sorted set
  ``<table>:index`` (every member scored 0, so ordered by the key's bytes) beside
  them for scans: ``ZRANGEBYLEX [key + LIMIT 0 n`` then ``MGET`` of those keys (two
  round trips). An insert is ``MULTI; SET … NX; ZADD; EXEC`` and a remove
  ``MULTI; DEL; ZREM; EXEC`` (one round trip each), so the index never drifts from the
  keys. The prepare's batches are one pipeline each (``MSET`` + ``ZADD``).
- basic: nothing at all, at once: the driver's own ceiling.
"""
from __future__ import annotations

from ...targets.sql import quote_ident

OK, ERROR, MISS = 0, 2, 4   # MISS: EMPTY (workloads.base), a key a remove took away


def quote(dialect: str, name: str) -> str:
    """A plain name, checked again, quoted for the dialect (targets.sql.quote_ident)."""
    return quote_ident(name, dialect)


def key_prefix(dialect: str, table: str) -> str:
    """What the workload puts before every key: Redis keeps the table as a prefix."""
    return f"{table}:" if dialect == "redis" else ""


def index_key(table: str) -> str:
    """The sorted set of a table's keys on Redis (never a data key: those are longer
    hex strings after the same prefix)."""
    return f"{table}:index"


def make_binding(endpoint, table: str):
    dialect = endpoint.dialect
    if dialect == "redis":
        return RedisKv(endpoint.connect(), table)
    if dialect == "basic":
        return BasicKv()
    if dialect in ("sqlite", "postgres", "mysql"):
        return SqlKv(endpoint.connect(), dialect, table)
    raise ValueError(f"workload kv: no binding for the {dialect!r} dialect")


class SqlStatements:
    def __init__(self, dialect: str, table: str):
        t = quote(dialect, table)
        ph = "?" if dialect == "sqlite" else "%s"
        self.read = f"SELECT v FROM {t} WHERE k = {ph}"
        self.insert = f"INSERT INTO {t} (k, v) VALUES ({ph}, {ph})"
        self.delete = f"DELETE FROM {t} WHERE k = {ph}"
        self.update = f"UPDATE {t} SET v = {ph} WHERE k = {ph}"
        self.scan = f"SELECT k, v FROM {t} WHERE k >= {ph} ORDER BY k LIMIT {ph}"
        self.scan_keys = f"SELECT k FROM {t} WHERE k >= {ph} ORDER BY k LIMIT {ph}"
        self.drop = f"DROP TABLE IF EXISTS {t}"
        self.count = f"SELECT count(*) FROM {t}"

    @staticmethod
    def create(dialect: str, table: str, key_size: int) -> str:
        t = quote(dialect, table)
        if dialect == "mysql":  # binary order, as Redis orders its members
            return (f"CREATE TABLE {t} (k VARCHAR({key_size}) CHARACTER SET ascii "
                    f"COLLATE ascii_bin PRIMARY KEY, v LONGTEXT)")
        if dialect == "postgres":
            return f'CREATE TABLE {t} (k VARCHAR({key_size}) COLLATE "C" PRIMARY KEY, v TEXT)'
        return f"CREATE TABLE {t} (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID"


def prepare_args(binding, codes, args):
    """The chunk's arguments as the binding's timed calls take them."""
    prep = getattr(binding, "prepare", None)
    return prep(codes, args) if prep else args


class SqlKv:
    """The operations on one autocommit connection of the driver's own (sqlite3,
    psycopg, PyMySQL: all take ``cursor.execute(sql, params)``)."""

    def __init__(self, conn, dialect: str, table: str):
        self.conn, self.dialect = conn, dialect
        self.st = SqlStatements(dialect, table)
        self.cur = conn.cursor()

    def read(self, key):
        cur = self.cur
        cur.execute(self.st.read, (key,))
        return OK if cur.fetchone() is not None else MISS

    def insert(self, key, value):
        self.cur.execute(self.st.insert, (key, value))
        return OK

    def delete(self, key):
        cur = self.cur
        cur.execute(self.st.delete, (key,))
        return OK if cur.rowcount else MISS

    def update(self, key, value):
        cur = self.cur
        cur.execute(self.st.update, (value, key))
        return OK if cur.rowcount else MISS

    def scan(self, key, n):
        cur = self.cur
        cur.execute(self.st.scan, (key, n))
        cur.fetchall()
        return OK

    def scan_keys(self, key, n) -> list[str]:
        self.cur.execute(self.st.scan_keys, (key, n))
        return [r[0] for r in self.cur.fetchall()]

    def _batch(self, sql, rows):
        cur = self.cur
        cur.execute("BEGIN")
        try:
            cur.executemany(sql, rows)
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        return OK

    def load(self, pairs):
        return self._batch(self.st.insert, pairs)

    def remove(self, keys):
        return self._batch(self.st.delete, [(k,) for k in keys])

    def count(self) -> int:
        self.cur.execute(self.st.count)
        return int(self.cur.fetchone()[0])

    def is_broken(self) -> bool:
        closed = getattr(self.conn, "closed", None)
        if closed is not None and not callable(closed):
            return bool(closed)
        return getattr(self.conn, "open", True) is False

    def close(self):
        self.conn.close()


def resp(*args) -> bytes:
    """One command in RESP, the Redis protocol: ``*<n>`` then ``$<len>`` and each
    argument (bytes, or str made UTF-8)."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


MULTI, EXEC = resp(b"MULTI"), resp(b"EXEC")


class RedisKv:
    """The operations on one connection held for the binding's life: each command is
    packed and sent, and its reply read, on redis-py's ``Connection`` (hiredis parses
    when installed) — not through ``Redis.get``, whose per-call pool checkout and
    command dispatch halve a single client's op/s (BENCHMARKS.md, "kv on Redis")."""

    def __init__(self, r, table: str):
        self.r, self.index = r, index_key(table)
        self.conn = r.connection_pool.get_connection()
        self.conn.connect()
        c = self.conn
        self._pack, self._packs = c.pack_command, c.pack_commands
        self._send, self._recv = c.send_packed_command, c.read_response

    def _call(self, *args):
        self._send(self._pack(*args), False)
        return self._recv()

    def prepare(self, codes, args) -> list[tuple]:
        """The chunk's commands encoded before they are timed (as redis-benchmark
        builds its buffers once): the timed call only sends and reads. RESP by
        :func:`resp`, 5x cheaper than redis-py's general ``pack_command`` (7 µs a
        command here: a fifth of a GET's round trip)."""
        idx = self.index.encode()
        out = []
        for c, a in zip(codes, args):
            k = a[0].encode()
            if c == 0:
                cmd = b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k)
            elif c == 1:
                cmd = MULTI + resp(b"SET", k, a[1], b"NX") + resp(b"ZADD", idx, b"0", k) + EXEC
            elif c == 2:
                cmd = MULTI + resp(b"DEL", k) + resp(b"ZREM", idx, k) + EXEC
            elif c == 3:
                cmd = resp(b"SET", k, a[1], b"XX")
            else:
                cmd = resp(b"ZRANGEBYLEX", idx, b"[" + k, b"+", b"LIMIT", b"0", b"%d" % a[1])
            out.append(([cmd],))  # send_packed_command sends each item of a list
        return out

    def _exec(self, packed, n_queued: int):
        """Send MULTI … EXEC; the replies of the queued commands."""
        self._send(packed, False)
        recv = self._recv
        for _ in range(n_queued + 1):
            recv()  # OK, QUEUED …
        return recv()

    # the timed operations: each takes its packed command (see prepare)
    def read(self, packed):
        self._send(packed, False)
        return OK if self._recv() is not None else MISS

    def insert(self, packed):
        set_ok, _ = self._exec(packed, 2)
        return OK if set_ok else ERROR  # a fresh key was there already

    def delete(self, packed):
        n, _ = self._exec(packed, 2)
        return OK if n else MISS

    def update(self, packed):
        self._send(packed, False)
        return OK if self._recv() is not None else MISS

    def scan(self, packed):
        self._send(packed, False)
        keys = self._recv()
        if keys:
            self._call("MGET", *keys)
        return OK

    def scan_keys(self, key, n) -> list[str]:
        keys = self._call("ZRANGEBYLEX", self.index, "[" + key, "+", "LIMIT", 0, n)
        return [k.decode() for k in keys]

    def load(self, pairs):
        p = self.r.pipeline(transaction=False)
        p.mset(dict(pairs))
        p.zadd(self.index, {k: 0 for k, _ in pairs})
        p.execute()
        return OK

    def remove(self, keys):
        p = self.r.pipeline(transaction=False)
        p.delete(*keys)
        p.zrem(self.index, *keys)
        p.execute()
        return OK

    def count(self) -> int:
        return int(self.r.zcard(self.index))

    def is_broken(self) -> bool:
        try:
            self.r.ping()
            return False
        except Exception:
            return True

    def close(self):
        try:
            self.conn.disconnect()
        finally:
            self.r.close()


class BasicKv:
    """No database: every operation succeeds at once."""

    def read(self, key):
        return OK

    def insert(self, key, value):
        return OK

    def delete(self, key):
        return OK

    def update(self, key, value):
        return OK

    def scan(self, key, n):
        return OK

    def load(self, pairs):
        return OK

    def remove(self, keys):
        return OK

    def is_broken(self) -> bool:
        return False

    def close(self):
        pass
