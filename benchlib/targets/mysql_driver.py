"""Which client library talks to MariaDB/MySQL: mysqlclient (MySQLdb, over the C
library libmariadb) when it is installed, PyMySQL (pure Python) otherwise.

The two have the same DB-API shape — ``%s`` parameters formatted client-side,
``cursor.execute`` returning the row count, ``executemany`` rewriting an INSERT into
multi-row INSERTs, ``begin``/``commit``/``rollback``, errors as ``OperationalError``
/ ``IntegrityError`` with ``(code, message)`` args — so the workloads' statements and
bindings run on either unchanged. What differs is made the same here: the connection's
``open`` (PyMySQL's turns False as soon as the server ends the connection; MySQLdb's
only on close(), so the C one asks the server, after an operation raised) and
MULTI_STATEMENTS (mysqlclient turns it on by default; PyMySQL does not).

The choice is the target's ``library`` option (``auto`` | ``mysqlclient`` | ``pymysql``)
or the URL's scheme (``mysql+mysqldb://`` is mysqlclient, ``mysql+pymysql://`` is
PyMySQL). It is the connections' library (loads, and the Python run loop); the run loop
itself is ``run.driver`` (a workload's binding may have its own C loop over libmariadb,
where it is built). The option's first name, ``driver: c|python``,
is still read.
"""
from __future__ import annotations

CHOICES = ("auto", "mysqlclient", "pymysql")
OLD_NAMES = {"c": "mysqlclient", "python": "pymysql"}    # the option's first name, driver
SCHEME_LIBRARY = {"mysql+mysqldb": "mysqlclient", "mariadb+mysqldb": "mysqlclient",
                  "mysql+pymysql": "pymysql", "mariadb+pymysql": "pymysql"}
MISSING_C = ("mysqlclient is not installed: apt-get install libmariadb-dev pkg-config, "
             "then make install")


def c_client_error() -> str | None:
    """Why mysqlclient cannot be used here, or None when it can."""
    try:
        import MySQLdb  # noqa: F401 - the C extension and libmariadb load here
    except ImportError as e:
        return MISSING_C if e.name in ("MySQLdb", None) else f"mysqlclient does not load: {e}"
    return None


def choose(url: str, options: dict | None) -> str:
    """The library a target uses, "mysqlclient" or "pymysql"; ValueError (one line)
    for a value not allowed, a URL scheme that says otherwise, or mysqlclient without it."""
    options = options or {}
    scheme = url.split("://", 1)[0]
    by_scheme = SCHEME_LIBRARY.get(scheme)
    if "library" in options and "driver" in options:
        raise ValueError("library and driver (its first name) both given; keep library")
    key = "driver" if "driver" in options else "library"
    allowed = ("auto", *OLD_NAMES) if key == "driver" else CHOICES
    value = options.get(key, by_scheme or "auto")
    if value not in allowed:
        raise ValueError(f"{key}: {value!r} is not one of {', '.join(allowed)}")
    choice = OLD_NAMES.get(value, value)
    if by_scheme and choice != by_scheme:
        raise ValueError(f"{key}: {value} contradicts the URL scheme {scheme}:// "
                         f"({by_scheme}); drop one")
    if choice == "pymysql":
        return "pymysql"
    why = c_client_error()
    if why is None:
        return "mysqlclient"
    if choice == "mysqlclient":
        raise ValueError(f"{key}: {value}: {why}")
    return "pymysql"


def connect(params: dict, library: str):
    """A new autocommit connection through ``library``; the library's own error when
    it cannot connect (the caller makes it one line with :func:`error_text`)."""
    if library == "mysqlclient":
        return _c_connection_class()(**params, autocommit=True, connect_timeout=10,
                                     charset="utf8mb4", multi_statements=False)
    import pymysql
    return pymysql.connect(**params, autocommit=True, connect_timeout=10, charset="utf8mb4")


def error_classes(library: str) -> tuple[type, ...]:
    """The base error class of ``library`` (what a failed connect raises)."""
    if library == "mysqlclient":
        import MySQLdb
        return (MySQLdb.Error,)
    import pymysql
    return (pymysql.Error,)


def error_text(e: Exception) -> str:
    """A driver error's message without its code: the same on both libraries."""
    return str(e.args[1]) if len(e.args) > 1 else str(e)


def version(library: str) -> str:
    if library == "mysqlclient":
        import MySQLdb
        return f"mysqlclient {'.'.join(map(str, MySQLdb.version_info[:3]))}"
    import pymysql
    return f"pymysql {pymysql.__version__}"


_C_CLASS = None


def _c_connection_class():
    """MySQLdb's Connection whose ``open`` is False once the server is gone, as
    PyMySQL's is: the workloads' ``is_broken`` reads ``conn.open`` after an operation
    raised and reconnects when it is False. It costs a round trip (a ping), only then."""
    global _C_CLASS
    if _C_CLASS is None:
        import MySQLdb
        from MySQLdb import _mysql
        from MySQLdb.connections import Connection

        c_open = _mysql.connection.open.__get__

        class CConnection(Connection):
            @property
            def open(self) -> bool:
                if not c_open(self):
                    return False
                try:
                    self.ping()
                except MySQLdb.Error:
                    return False
                return True

        _C_CLASS = CConnection
    return _C_CLASS
