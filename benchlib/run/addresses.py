"""A server's address that nobody listens on, said at once instead of after a client's
retries (:mod:`.dask_executor`'s scheduler)."""
from __future__ import annotations

import socket


def refused_at_once(address: str, timeout_s: float) -> None:
    """ConnectionRefusedError at once for a ``tcp://`` address nobody listens on (a Dask
    scheduler's: its client would retry a refused connection for the whole ``timeout_s``
    before the same failure). Any other answer (a listener, a timeout, another scheme, no
    address) is left to the caller's client."""
    from urllib.parse import urlsplit
    try:
        parts = urlsplit(address)
        host, port = parts.hostname, parts.port
    except ValueError:      # not an address: the client says so
        return
    if parts.scheme != "tcp" or not host or port is None:
        return
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except ConnectionRefusedError as e:
        raise ConnectionRefusedError(f"nothing listens on {host}:{port}: {e.strerror}") from None
    except OSError:
        return
