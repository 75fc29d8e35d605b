"""The target registry: a DBMS family's kind → its class, and URL schemes → kinds.

Only a target's own module and the registries name it (``tests/test_names.py`` holds
that): params, the runner, the CLI's choices and the install hint (:func:`install_extra`)
ask here. A new DBMS is a module in ``targets/`` and one :func:`register` line below (or
a call from a plugin). Classes are imported only when first used, so a missing optional
driver matters only to whoever uses that target. The servers benchlib provisions itself
(``*-provisioned``: a fresh server per configuration) are targets like any other.
"""
from __future__ import annotations

import re

from .core import Registry, UnknownName

TARGETS = Registry("target")
HOLDS = "benchlib.targets"       # where its entries live (tests/test_layers.py: none above it)
# what imports an entry (tests/test_layers.py: whoever calls one sits on HOLDS' layer or above)
LOADERS = ("target_class", "check_options", "fetcher")
_SCHEMES: dict[str, str] = {}            # URL scheme -> kind


def register(kind: str, ref: str | type, *, schemes: tuple[str, ...] = (),
             embedded: bool = False, default: bool = False, extra: str = "",
             drivers: tuple[str, ...] = ()) -> None:
    """Make ``kind`` a target: ``ref`` is ``"module:Class"`` or the class itself;
    ``schemes``: the URL schemes that name it (its aliases: ``postgresql``, ``mariadb``);
    ``embedded``: its kind is the URL itself; ``default`` (an embedded one): the target of
    ``benchlib run FILE`` without ``--target``; ``extra``: the ``benchlib[…]`` extra that
    installs its driver (default: the kind); ``drivers``: the client libraries (top-level
    modules) its clients import, which a forkserver imports once for every client
    (run/forkserver.py)."""
    TARGETS.register(kind, ref, default=default, schemes=tuple(schemes), embedded=embedded,
                     extra=extra or kind, drivers=tuple(drivers))
    for s in schemes:
        _SCHEMES[s] = kind


register("sqlite", "benchlib.targets.sqlite:SqliteTarget", schemes=("sqlite",), embedded=True,
         default=True, drivers=("sqlite3",))
register("postgres", "benchlib.targets.postgres:PostgresTarget",
         schemes=("postgresql", "postgres", "postgresql+psycopg"), drivers=("psycopg",))
register("embedded-postgres", "benchlib.targets.embedded_postgres:EmbeddedPostgresTarget",
         embedded=True, extra="embedded", drivers=("psycopg",))
register("postgres-provisioned", "benchlib.targets.postgres_provisioned:ProvisionedPostgresTarget",
         embedded=True, extra="postgres", drivers=("psycopg",))
register("mysql", "benchlib.targets.mysql:MysqlTarget",
         schemes=("mysql", "mariadb", "mysql+pymysql", "mariadb+pymysql", "mysql+mysqldb",
                  "mariadb+mysqldb"), drivers=("MySQLdb", "pymysql"))
register("mysql-provisioned", "benchlib.targets.mysql_provisioned:ProvisionedMysqlTarget", embedded=True,
         extra="mysql", drivers=("MySQLdb", "pymysql"))
register("redis", "benchlib.targets.redis:RedisTarget", schemes=("redis", "rediss", "unix"),
         drivers=("redis", "hiredis"))
register("redis-provisioned", "benchlib.targets.redis_provisioned:ProvisionedRedisTarget", embedded=True,
         extra="redis", drivers=("redis", "hiredis"))
register("basic", "benchlib.targets.basic:BasicTarget", embedded=True)
register("rocksdb", "benchlib.targets.rocksdb:RocksdbTarget", schemes=("rocksdb",), embedded=True,
         drivers=("rocksdict",))
register("duckdb", "benchlib.targets.duckdb:DuckdbTarget", schemes=("duckdb",), embedded=True,
         drivers=("duckdb",))

# a server whose binaries benchlib can fetch (``benchlib fetch-server KIND MAJOR``): its
# fetch function (major, say) → None, ValueError (one line) when they cannot be had
FETCHERS = Registry("server to fetch")
FETCHERS.register("postgres", "benchlib.targets.postgres_binaries:fetch_server")
fetcher = FETCHERS.get
fetchable = FETCHERS.names

kinds = TARGETS.names


def client_drivers() -> frozenset[str]:
    """Every registered target's client libraries (``drivers``)."""
    return frozenset(d for kind in TARGETS.names() for d in TARGETS.facts(kind).get("drivers", ()))
default = TARGETS.default
target_class = TARGETS.get


def unregister(kind: str) -> None:
    """Forget ``kind`` and its URL schemes (a test's toy, after the test)."""
    TARGETS.unregister(kind)
    for s in [s for s, k in _SCHEMES.items() if k == kind]:
        del _SCHEMES[s]


def embedded_names() -> tuple[str, ...]:
    return tuple(e.name for e in TARGETS if e.facts["embedded"])


def aliases() -> dict[str, str]:
    """Each URL scheme's kind (``postgresql`` → ``postgres``, ``mariadb`` → ``mysql``)."""
    return dict(_SCHEMES)


def install_extra(kind: str) -> str:
    """The ``benchlib[…]`` extra that installs the driver of target ``kind``."""
    return TARGETS.facts(kind)["extra"]


def target_kind(url: str) -> str:
    """The target family of a URL or embedded name (sqlite, postgres, mysql, …);
    UnknownName naming what is allowed and the nearest, ValueError for a malformed URL."""
    if url in embedded_names():
        return url
    m = re.match(r"^([a-z0-9+]+)://", url)
    if not m or m.group(1) not in _SCHEMES:
        scheme = url.split("://")[0] if "://" in url else None   # near a scheme, or a name
        raise UnknownName("target", scheme or url, sorted(_SCHEMES) if scheme else embedded_names(),
                          f"{url!r} is not a target: use one of {', '.join(embedded_names())} "
                          f"or a URL with scheme {', '.join(sorted(_SCHEMES))}")
    from sqlalchemy.engine import make_url

    from ..masking import mask_url
    try:
        make_url(url)
    except Exception as e:  # sqlalchemy's own message names the problem
        raise ValueError(f"{mask_url(url)} is not a valid URL: {e}") from None
    from urllib.parse import urlsplit
    try:
        urlsplit(url).port
    except ValueError:
        raise ValueError(f"{mask_url(url)}: the port is not a number from 1 to 65535") from None
    return _SCHEMES[m.group(1)]


def check_options(url: str, options: dict) -> None:
    """ValueError (one line) for an option the URL's family refuses (MariaDB's ``driver``);
    a family whose DB driver is not installed is told when it is made (make_target)."""
    try:
        cls = target_class(target_kind(url))
    except ImportError:
        return
    cls.check_options(url, options)
