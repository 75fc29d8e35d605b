"""Java ``.properties`` files, read as ``java.util.Properties.load`` does: YCSB's
workload files (``-P workloada``) and LinkBench's configs (``-c LinkConfigMysql.properties``)
are this format, so every workload reads its ``workload_file`` here."""
from __future__ import annotations

import re
from pathlib import Path

from ..inputfiles import PARAMETER_BYTES, InputFileError, read_bounded

_WS = " \t\f"  # whitespace in the .properties grammar


class PropertyFileError(ValueError):
    """A malformed property file; the message is one line: ``path:lineno: what was expected``."""

    def __init__(self, path: str | Path, lineno: int | None, expected: str):
        self.path, self.lineno = str(path), lineno
        super().__init__(f"{path}:{lineno}: {expected}" if lineno else f"{path}: {expected}")



def read_property_file(path: str | Path) -> dict[str, str]:
    """Read a Java ``.properties`` file as YCSB's ``-P workloadfile`` does.

    Parameters
    ----------
    path : str or Path
        The file. Decoded as UTF-8, falling back to ISO-8859-1 (Java's encoding for
        ``Properties.load(InputStream)``) when it is not valid UTF-8.

    Returns
    -------
    dict[str, str]
        Keys and values in file order; a repeated key keeps its last value (as Java).

    Raises
    ------
    PropertyFileError
        A line that is not ``key=value`` / ``key = value`` / ``key: value`` /
        ``key value`` (a bare word, an empty key), a malformed ``\\uXXXX`` escape, or
        a line continuation at the end of the file (a truncated file).
    """
    try:
        raw = read_bounded(path, PARAMETER_BYTES, "property file")
    except InputFileError as e:
        raise PropertyFileError(path, None, e.why) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        lineno, line = i + 1, lines[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":
            continue  # blank or comment; a comment line is never continued
        while _ends_with_continuation(line):
            if i >= len(lines):
                raise PropertyFileError(path, lineno, "a continued line, got the end of the file "
                                        "after a trailing backslash")
            line = line[:-1] + lines[i].lstrip(_WS)
            i += 1
        key, value = _split_logical_line(path, lineno, line)
        out[key] = value
    return out


def _ends_with_continuation(line: str) -> bool:
    run = len(line) - len(line.rstrip("\\"))
    return run % 2 == 1  # an odd number of trailing backslashes continues the line


def _split_logical_line(path, lineno: int, line: str) -> tuple[str, str]:
    # The key ends at the first unescaped '=', ':' or whitespace (Properties.load).
    escaped, end, has_sep = False, len(line), False
    for pos, c in enumerate(line):
        if not escaped and c in "=:" + _WS:
            end, has_sep = pos, c in "=:"
            break
        escaped = (c == "\\") and not escaped
    start = end + (1 if end < len(line) else 0)
    while start < len(line) and line[start] in _WS + "=:":
        if line[start] in "=:":
            if has_sep:
                break  # only one separator is consumed: "k = = v" has the value "= v"
            has_sep = True
        start += 1
    raw_key, raw_value = line[:end], _rstrip_unescaped(line[start:])
    shown = line if len(line) <= 60 else line[:57] + "..."
    if not raw_key:
        raise PropertyFileError(path, lineno, f"a key before the separator, got {shown!r}")
    if not has_sep and not raw_value:
        raise PropertyFileError(path, lineno, "'key=value', 'key = value' or 'key: value', "
                                f"got {shown!r}")
    return _unescape(path, lineno, raw_key), _unescape(path, lineno, raw_value)


def _rstrip_unescaped(s: str) -> str:
    while s and s[-1] in _WS:
        run = len(s) - 1 - len(s[:-1].rstrip("\\"))
        if run % 2 == 1:
            break  # "\ " at the end is an escaped, meaningful space
        s = s[:-1]
    return s


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(path, lineno: int, s: str) -> str:
    if "\\" not in s:
        return s
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        c = s[i + 1]
        if c == "u":
            digits = s[i + 2:i + 6]
            if not re.fullmatch(r"[0-9A-Fa-f]{4}", digits):
                raise PropertyFileError(path, lineno, "four hex digits after \\u, got "
                                        f"{s[i:i + 6]!r}")
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(c, c))
            i += 2
    return "".join(out)


def read_text_file(path: Path) -> str:
    """A parameter file's text, UTF-8; PropertyFileError naming the file and what is wrong
    (missing, a folder or a device, larger than a parameter file may be, binary, another
    encoding)."""
    try:
        raw = read_bounded(path, PARAMETER_BYTES, "parameter file")
    except FileNotFoundError:
        raise PropertyFileError(path, None, "no such file") from None
    except InputFileError as e:
        raise PropertyFileError(path, None, e.why) from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4096]:
        kind = "UTF-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or raw[1:2] == b"\x00" else "binary"
        raise PropertyFileError(path, None, f"the file is {kind}, not UTF-8 text (save it as UTF-8)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise PropertyFileError(path, None, f"not UTF-8 text (byte {e.start}: "
                                f"{raw[e.start:e.start + 1]!r}); save it as UTF-8") from None
