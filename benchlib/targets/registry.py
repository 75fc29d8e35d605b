"""The target registry: a DBMS family's kind → its class, and URL schemes → kinds.

Only a target's own module and this registry name it (``tests/test_names.py`` holds
that): params, the runner, the CLI's choices and the install hint (:func:`install_extra`)
ask here. A
new DBMS is a module in ``targets/`` and one :func:`register` line below (or a call
from a plugin). Classes are imported only when first used, so a missing optional
driver matters only to whoever uses that target.
"""
from __future__ import annotations

import importlib
import re

_TARGETS: dict[str, str | type] = {}     # kind -> "module:Class" or the class
_SCHEMES: dict[str, str] = {}            # URL scheme -> kind
_EMBEDDED: list[str] = []                # names used as the URL itself (sqlite, basic …)
_DEFAULT: list[str] = []                 # the target of a property file run without one
_EXTRAS: dict[str, str] = {}             # kind -> the pip extra with its driver, when not the kind


def register(kind: str, ref: str | type, *, schemes: tuple[str, ...] = (),
             embedded: bool = False, default: bool = False, extra: str = "") -> None:
    """Make ``kind`` a target: ``ref`` is ``"module:Class"`` or the class itself;
    ``default`` (an embedded one): the target of ``benchlib run FILE`` without ``--target``;
    ``extra``: the ``benchlib[…]`` extra that installs its driver (default: the kind)."""
    _TARGETS[kind] = ref
    if extra:
        _EXTRAS[kind] = extra
    for s in schemes:
        _SCHEMES[s] = kind
    if embedded and kind not in _EMBEDDED:
        _EMBEDDED.append(kind)
    if default:
        _DEFAULT[:] = [kind]


register("sqlite", "benchlib.targets.sqlite:SqliteTarget", schemes=("sqlite",), embedded=True,
         default=True)
register("postgres", "benchlib.targets.postgres:PostgresTarget",
         schemes=("postgresql", "postgres", "postgresql+psycopg"))
register("embedded-postgres", "benchlib.targets.embedded_postgres:EmbeddedPostgresTarget",
         embedded=True, extra="embedded")
register("postgres-provisioned", "benchlib.targets.postgres_provisioned:ProvisionedPostgresTarget",
         embedded=True, extra="postgres")
register("mysql", "benchlib.targets.mysql:MysqlTarget",
         schemes=("mysql", "mariadb", "mysql+pymysql", "mariadb+pymysql", "mysql+mysqldb",
                  "mariadb+mysqldb"))
register("mysql-provisioned", "benchlib.targets.mysql_provisioned:ProvisionedMysqlTarget", embedded=True,
         extra="mysql")
register("redis", "benchlib.targets.redis:RedisTarget", schemes=("redis", "rediss", "unix"))
register("redis-provisioned", "benchlib.targets.redis_provisioned:ProvisionedRedisTarget", embedded=True,
         extra="redis")
register("basic", "benchlib.targets.basic:BasicTarget", embedded=True)
register("rocksdb", "benchlib.targets.rocksdb:RocksdbTarget", schemes=("rocksdb",), embedded=True)
register("duckdb", "benchlib.targets.duckdb:DuckdbTarget", schemes=("duckdb",), embedded=True)


def kinds() -> list[str]:
    return list(_TARGETS)


def embedded_names() -> tuple[str, ...]:
    return tuple(_EMBEDDED)


def default() -> str:
    return _DEFAULT[0]


def install_extra(kind: str) -> str:
    """The ``benchlib[…]`` extra that installs the driver of target ``kind``."""
    return _EXTRAS.get(kind, kind)


def import_ref(ref: str) -> type:
    """The class a ``"module:Class"`` reference names."""
    mod, _, name = ref.partition(":")
    obj = importlib.import_module(mod)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def target_class(kind: str) -> type:
    ref = _TARGETS[kind]
    if isinstance(ref, str):
        ref = _TARGETS[kind] = import_ref(ref)
    return ref


def target_kind(url: str) -> str:
    """The target family of a URL or embedded name (sqlite, postgres, mysql, …);
    ValueError naming what is allowed."""
    if url in _EMBEDDED:
        return url
    m = re.match(r"^([a-z0-9+]+)://", url)
    if not m or m.group(1) not in _SCHEMES:
        raise ValueError(
            f"{url!r} is not a target: use one of {', '.join(_EMBEDDED)} or a URL "
            f"with scheme {', '.join(sorted(_SCHEMES))}")
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
