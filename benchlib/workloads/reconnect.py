"""How a client gets its connection back: one policy for every workload, target and
library (psycopg, sqlite3, mysqlclient, PyMySQL, redis-py).

A client's operation raised. Was its connection lost? The library's own error says so
where it can: the target that knows the library judges it (``Target.connection_lost``:
MariaDB's client codes 2006/2013/…, PostgreSQL's SQLSTATE class 08, redis-py's
ConnectionError), and a socket's own errors say so everywhere; an error the server sent
back (a duplicate key, a syntax error) says it is alive; otherwise a ping decides
(``Target.ping``). A lost
connection is reopened at once, then with a doubling backoff, for at most
``Backoff.give_up_s``; past that the client gives up with :class:`ConnectionGone`, whose
one line names what was lost, how many attempts over how long, and the last error.

:class:`Reconnecting` holds one client's session (whatever its ``open`` makes: a
workload's binding holding ``conn``, or the driver's connection itself) and counts what
happened (``lost``, ``reopened``, ``failed_attempts``). A workload client uses it for the
two calls the driver makes after an operation raised (``run/clients.py``)::

    self.link = Reconnecting(lambda: Binding.open(endpoint), "kv client 3",
                             endpoint.target_class())
    def is_broken(self):  return self.link.lost()     # inside the driver's except:
    def reconnect(self):  self.link.reopen(); self._bind()   # fns on the new session

The failed operation is the driver's ERROR (counted, never an operation that did its
work); the next one runs on the new connection.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

class ConnectionGone(Exception):
    """The policy gave up reopening a lost connection; the message says why, in one line."""


@dataclass(frozen=True)
class Backoff:
    first_s: float = 0.05    # the wait after the first failed attempt (the first is at once)
    max_s: float = 1.0       # the longest wait between two attempts
    give_up_s: float = 5.0   # no attempt starts later than this after the loss


def lost_by_code(exc: BaseException | None, target: type | None = None) -> bool | None:
    """True when the error says the connection is lost, False when the server answered it
    (so it is alive), None when the error does not say: the socket's own errors here, the
    library's codes by the target that knows its library (``Target.connection_lost``)."""
    if exc is None:
        return None
    if isinstance(exc, (ConnectionError, EOFError)):   # the socket's own (builtin) errors
        return True
    return target.connection_lost(exc) if target is not None else None


def alive(conn: Any, target: type | None = None) -> bool:
    """A ping on the driver's connection (``Target.ping``); False when it fails."""
    if conn is None:
        return True
    try:
        if target is not None:
            target.ping(conn)
        elif hasattr(conn, "ping"):
            conn.ping()
    except Exception as e:  # noqa: BLE001 - whatever the library raises, the ping failed
        return lost_by_code(e, target) is False   # unless the server answered (an aborted transaction)
    return True


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


class Reconnecting:
    """One client's session, reopened by the policy when its connection is lost."""

    def __init__(self, open_session: Callable[[], Any], what: str, target: type | None = None,
                 backoff: Backoff = Backoff(),
                 conn_of: Callable[[Any], Any] = lambda s: getattr(s, "conn", s)):
        """``target``: the target class whose library the session's connection is of
        (``endpoint.target_class()``): it judges the library's errors and pings;
        ``conn_of``: the session's connection (a tuple: each is pinged)."""
        self.open_session, self.what, self.backoff, self.conn_of = open_session, what, backoff, conn_of
        self.target = target
        self.lost_count = self.reopened = self.failed_attempts = 0
        self.session = open_session()

    def lost(self, exc: BaseException | None = None) -> bool:
        """Whether ``exc`` (by default the exception being handled) lost the connection:
        its library's code, else a ping."""
        if exc is None:
            exc = sys.exc_info()[1]
        verdict = lost_by_code(exc, self.target)
        if verdict is None:   # a session of several connections: lost if any one is
            conns = self.conn_of(self.session)
            conns = conns if isinstance(conns, tuple) else (conns,)
            verdict = not all(alive(c, self.target) for c in conns)
        self.lost_count += bool(verdict)
        return verdict

    def reopen(self) -> Any:
        """The session made anew: at once, then after 0.05, 0.1, 0.2 … s (at most
        ``max_s`` apart) until ``give_up_s`` has passed: then :class:`ConnectionGone`."""
        try:
            self.session.close()
        except Exception:  # noqa: BLE001 - the old connection is gone already
            pass
        b, start, wait, attempts = self.backoff, time.monotonic(), 0.0, 0
        while True:
            attempts += 1
            try:
                self.session = self.open_session()
                self.reopened += 1
                print(f"{self.what}: connection lost, reopened ({attempts} attempt"
                      f"{'s' if attempts > 1 else ''}, {time.monotonic() - start:.2f} s)",
                      file=sys.stderr, flush=True)
                return self.session
            except Exception as e:  # noqa: BLE001 - the server may still be restarting
                self.failed_attempts += 1
                last = e
            wait = min(max(wait * 2, b.first_s), b.max_s)
            elapsed = time.monotonic() - start
            if elapsed + wait > b.give_up_s:
                raise ConnectionGone(
                    f"{self.what}: connection lost and not reopened in {attempts} attempts "
                    f"over {elapsed:.1f} s ({_one_line(last)})") from None
            time.sleep(wait)

    def close(self) -> None:
        self.session.close()


class ReconnectingClient:
    """What a ``WorkloadClient`` needs for the driver's two calls after an operation
    raised, given ``self.link`` (a :class:`Reconnecting`) and ``_bind()`` (its ``fns`` on
    ``self.link.session``)."""

    link: Reconnecting

    def _bind(self) -> None:
        raise NotImplementedError

    def is_broken(self) -> bool:
        return self.link.lost()

    def reconnect(self) -> None:
        self.link.reopen()
        self._bind()

    def close(self) -> None:
        self.link.close()
