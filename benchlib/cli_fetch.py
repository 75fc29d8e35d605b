"""``benchlib fetch-server KIND MAJOR …``: a server's binaries fetched into the cache ahead
of a run (each server's fetcher is registered in :mod:`.registries.targets`), on a machine
online, to copy to one that is not."""
from __future__ import annotations

EXIT_OK = 0


def add_fetch_server(sub) -> None:
    from .registries.targets import fetchable
    p = sub.add_parser("fetch-server", help="fetch a server's binaries into the cache "
                                            "(see docs/targets.md: which servers and versions)")
    p.add_argument("kind", choices=fetchable(), help="the server")
    p.add_argument("versions", nargs="+", type=int, metavar="MAJOR", help="major versions (16 17 …)")
    p.set_defaults(func=cmd_fetch_server)


def cmd_fetch_server(args) -> int:
    from .params import ParameterError
    from .registries.targets import fetcher
    fetch = fetcher(args.kind)
    for major in args.versions:
        try:
            fetch(major, say=print)
        except ValueError as e:
            raise ParameterError(f"fetch-server: {args.kind} {major}: {e}") from None
    return EXIT_OK
