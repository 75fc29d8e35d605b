"""A password made of every printable ASCII character, and the search for it in what a
run wrote (issue 41: masking by parsing). The password carries marks (``Zq~07~x``)
between its pieces: a leak of any part of it — raw, percent-encoded, JSON- or
HTML-escaped, cut at a quote or a blank — holds one, and base64 (a report's images)
cannot ("~" is not of its alphabet)."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

PRINTABLE = "".join(map(chr, range(32, 127)))
PASSWORD = "Zq~99~x" + "".join(PRINTABLE[i:i + 12] + f"Zq~{i:02d}~x" for i in range(0, 95, 12))
# what libpq takes raw in a URL's user-info (no "@", "/", "?", "#", "%" or blank): the
# issue's quote, and the characters a character class stopped at
RAW_PASSWORD = "Zq~98~x'\"<>Zq~97~x"
MARK = re.compile(rb"Zq(?:~|%7[eE])\d\d(?:~|%7[eE])x")


def encoded() -> str:
    """The password as a URL carries it: every reserved character percent-encoded."""
    return quote(PASSWORD, safe="")


def leaks(*places: Path | str) -> list[str]:
    """Every file under the folders given (and every text given) that holds a mark; a
    Parquet file is also read back, its cells as text."""
    found = []
    for place in places:
        if isinstance(place, str):
            if m := MARK.search(place.encode()):
                found.append(f"a printed line: {place.encode()[max(0, m.start() - 80):m.end()]!r}")
            continue
        for f in [place] if place.is_file() else sorted(place.rglob("*")):
            if f.is_file() and (MARK.search(f.read_bytes()) or _parquet_holds(f)):
                found.append(str(f))
    return found


def _parquet_holds(f: Path) -> bool:
    if f.suffix != ".parquet":
        return False
    import pyarrow.parquet as pq
    table = pq.read_table(f)
    return bool(MARK.search(table.to_pandas().to_csv().encode()))
