"""The text helpers the importer modules share: reading a file, columns of numbers
from strings, and naming the line of a bad value in an :class:`ImportFormatError`.
"""
from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..inputfiles import OUTPUT_BYTES, InputFileError, read_bounded
from .base import ImportFormatError


def read_bytes(path: Path) -> bytes:
    """A file's bytes with ``\\r\\n`` made ``\\n``: a regular file of at most
    OUTPUT_BYTES (a device, a FIFO or a larger file refused in one line)."""
    try:
        data = read_bounded(path, OUTPUT_BYTES, "tool's output")
    except InputFileError as e:
        raise ImportFormatError(path, None, e.why) from None
    except OSError as e:
        raise ImportFormatError(path, None, f"cannot read: {e.strerror or e}") from None
    return data.replace(b"\r\n", b"\n") if b"\r" in data else data


def read_text(path: Path) -> str:
    """A file's text with ``\\r\\n`` made ``\\n``; bytes that are not UTF-8 become U+FFFD
    (a file cut in the middle of a character is still read)."""
    return read_bytes(path).decode("utf-8", "replace")


# whitespace as str.isspace() has it, for ASCII
_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c\x1c-\x1f]*")


class FileText:
    """A file read once for the scanners of a format.

    ``data`` are its bytes (``\\r\\n`` made ``\\n``); ``text`` its text as
    :func:`read_text` gives it and ``w`` that text as ``"\\n" + text + "\\n"`` (what
    line-anchored regular expressions scan), both made on first use. Searching for
    ASCII strings in the bytes finds what searching the text would: a byte below 128
    is never part of another character in UTF-8.
    """

    def __init__(self, path: Path, data: bytes):
        self.path, self._data = Path(path), data
        self.ascii = data.isascii()

    @property
    def data(self) -> bytes:
        if self._data is None:   # let go of by release(): read again (an error names a line)
            self._data = read_bytes(self.path)
        return self._data

    def release(self) -> None:
        """Let go of the file's bytes and text (a long output's hundreds of MB) once the
        scanners are done; what asks for them later reads the file again."""
        self._data = None
        self.__dict__.pop("text", None)
        self.__dict__.pop("w", None)

    @classmethod
    def read(cls, path: Path) -> FileText:
        return cls(path, read_bytes(path))

    @cached_property
    def text(self) -> str:
        return self.data.decode("ascii" if self.ascii else "utf-8", "replace")

    @cached_property
    def w(self) -> str:
        text = self.text
        return "\n" + text + ("" if text.endswith("\n") else "\n")

    def blank(self) -> bool:
        """Empty or only whitespace (``str.isspace``)."""
        if self.ascii:
            return _BLANK.fullmatch(self.data) is not None
        return not self.text or self.text.isspace()

    def head(self, n: int) -> str:
        """The first ``n`` characters of the text."""
        return self.data[:n].decode() if self.ascii else self.text[:n]

    def __contains__(self, s: str) -> bool:   # s: ASCII
        return s.encode() in self.data

    def line_after(self, mark: str, within: int | None = None) -> str:
        """The rest of the line after the first ``mark`` (ASCII) at the start of a line
        ("" when there is none), stripped; ``within``: a line starting in the first
        ``within`` bytes (a banner: no search through a long output that has none)."""
        m = mark.encode()
        if self.data.startswith(m):
            i = len(m)
        else:
            i = self.data.find(b"\n" + m, 0, None if within is None else within + len(m))
            if i < 0:
                return ""
            i += 1 + len(m)
        j = self.data.find(b"\n", i)
        return self.data[i:j if j >= 0 else len(self.data)].decode("utf-8", "replace").strip()

    def first_line(self) -> str:
        j = self.data.find(b"\n")
        return self.data[:j if j >= 0 else len(self.data)].decode("utf-8", "replace")


class BadNumber(ValueError):
    """A value that should be a number; ``index`` is its place in the input list."""

    def __init__(self, index: int, value: str):
        super().__init__(f"{value!r} is not a number")
        self.index, self.value = index, value


_NA_TOKENS = pa.array(["", "NaN", "nan", "-nan", "\ufffd", "N/A", "n/a", "Infinity", "-Infinity", "inf", "-inf"])


def numbers(values: list[str] | pa.Array) -> np.ndarray:
    """Strings to float64 in one vectorized pass; NaN/N/A/Infinity/empty become NaN.

    Raises :class:`BadNumber` with the first offending index.
    """
    arr = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
    if len(arr) == 0:
        return np.empty(0)
    try:   # plain numbers: the cast alone ("NaN", "inf" give what the tokens below give)
        out = pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False, writable=True)
        out[np.isinf(out)] = np.nan
        return out
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    arr = pc.utf8_trim_whitespace(arr)
    arr = pc.if_else(pc.is_in(arr, value_set=_NA_TOKENS), pa.scalar(None, pa.string()), arr)
    try:
        out = pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False, writable=True)
        out[np.isinf(out)] = np.nan   # 1e999: no tool prints it, no figure to keep
        return out
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        for i, v in enumerate(arr.to_pylist()):
            if v is None:
                continue
            try:  # the value Arrow refuses, even where float() would take it ("1_000")
                pc.cast(pa.array([v], pa.string()), pa.float64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise BadNumber(i, v) from None
        raise


def pct_column(p: float) -> str:
    """The column of a percentile: 50 -> p50_us, 99.9 -> p999_us, 99.99 -> p9999_us."""
    return "p" + format(float(p), "g").replace(".", "") + "_us"


def stem_of(path: Path) -> str:
    """A file name without its last extension: the run a file belongs to."""
    name = Path(path).name
    return name.rsplit(".", 1)[0] if "." in name else name


def number_at(path, lineno: int | None, s, what: str = "a number") -> float:
    """``s`` as a float, or an :class:`ImportFormatError` naming the file and line:
    ``expected <what>, got 's'`` (None and any text ``float()`` refuses)."""
    try:
        return float(s)
    except (TypeError, ValueError):
        raise ImportFormatError(path, lineno, f"expected {what}, got {s!r}") from None


def int_or_none(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def float_or_none(v) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


# ------------------------------------------------ errors of a regex scan over a whole file
# The scanners run one regex over a file's whole text (as "\n" + text, so each pattern
# starts at a line's "\n"); these name the line of what went wrong, only when it does.

def fail_at(path, text: str, pos: int | None, expected: str):
    """Raise the ImportFormatError of the line holding ``text[pos]``."""
    raise ImportFormatError(path, text.count("\n", 0, pos) + 1 if pos is not None else None, expected)


def nth_match_line(regex: re.Pattern, text: str, i: int) -> int | None:
    """Line number (in "\\n"+text) of the i-th match of ``regex``."""
    for k, m in enumerate(regex.finditer(text)):
        if k == i:
            return text.count("\n", 0, m.start()) + 1
    return None


def numbers_of_matches(values, path, regex: re.Pattern, text: str, what: str,
                       index_map=None) -> np.ndarray:
    """:func:`numbers` of values taken from the matches of ``regex`` in ``text``; a bad
    one raises ImportFormatError naming the line of its match (``index_map``: value
    index -> match index, when they differ)."""
    try:
        return numbers(values)
    except BadNumber as e:
        i = index_map[e.index] if index_map is not None else e.index
        raise ImportFormatError(path, nth_match_line(regex, text, i),
                                f"expected a number for {what}, got {e.value!r}") from None
