"""LinkBench's empirical out-degree (``nlinks_func = real``): the ``nlinks`` section of
a ``Distribution.dat`` and what RealDistribution.expectedCount reads off it.

The file is the one a config's ``data_file`` names when that file exists, else the one
benchlib ships under that file name (``data/``: the maintained client's 2017
``Distribution.dat`` and the original 2011 ``Distribution_2011.dat``, see
``data/SOURCE.md``). Format as RealDistribution reads it: a section name (``nlinks``,
``link_nreads`` …) then lines ``value cumulative_percent``.
"""
from __future__ import annotations

import gzip
import io
from functools import lru_cache
from pathlib import Path

import numpy as np

from ...inputfiles import DATA_FILE_BYTES, InputFileError, read_bounded, size_text

SHIPPED = Path(__file__).parent / "data"
DEFAULT_FILE = "config/Distribution.dat"
FILE_2011 = "config/Distribution_2011.dat"


def shipped_names() -> list[str]:
    return sorted(p.name.removesuffix(".gz") for p in SHIPPED.glob("*.dat.gz"))


def resolve(data_file: str) -> Path:
    """The file ``data_file`` names if it exists, else benchlib's of that name;
    ValueError (one line) if neither."""
    own = Path(data_file).expanduser()
    if own.exists():   # a device or a FIFO too: _read refuses it, naming it
        return own
    shipped = SHIPPED / (Path(data_file).name + ".gz")
    if shipped.is_file():
        return shipped
    raise ValueError(f"data_file: {data_file}: no such file, and benchlib ships only "
                     f"{' and '.join(shipped_names())}")


def _read(path: Path) -> bytes:
    """The file's bytes (unpacked when .gz), at most DATA_FILE_BYTES: ValueError (one
    line) for a larger file, a device or a FIFO, or a .gz that unpacks past it."""
    try:
        raw = read_bounded(path, DATA_FILE_BYTES, "distribution file")
        if path.suffix != ".gz":
            return raw
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as z:
            data = z.read(DATA_FILE_BYTES + 1)
    except InputFileError as e:
        raise ValueError(f"data_file: {e}") from None
    except (OSError, EOFError) as e:   # not gzip, cut short
        raise ValueError(f"data_file: {path}: cannot unpack: {e}") from None
    if len(data) > DATA_FILE_BYTES:
        raise ValueError(f"data_file: {path}: unpacks past {size_text(DATA_FILE_BYTES)}: larger "
                         "than a distribution file may be")
    return data


def _sections(text: str, where: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out: dict[str, list] = {}
    name = None
    for n, line in enumerate(text.splitlines(), 1):
        tok = line.split()
        if not tok:
            continue
        if len(tok) == 1 and not tok[0].lstrip("-").isdigit():
            name = tok[0]
            out[name] = []
            continue
        try:
            if name is None or len(tok) != 2:
                raise ValueError
            out[name].append((int(tok[0]), float(tok[1]) / 100.0))   # the file has percents
        except ValueError:
            raise ValueError(f"data_file: {where} line {n}: expected a section name or "
                             f"'value cumulative_percent', got {line.strip()[:60]!r}") from None
    return {k: (np.array([v for v, _ in pts], dtype=np.int64), np.array([p for _, p in pts]))
            for k, pts in out.items()}


@lru_cache(maxsize=8)
def nlinks_cdf(data_file: str) -> tuple[np.ndarray, np.ndarray]:
    """(out-degrees, cumulative probabilities) of the file's ``nlinks`` section."""
    text = _read(resolve(data_file)).decode("ascii", "replace")
    secs = _sections(text, str(data_file))
    if "nlinks" not in secs or not len(secs["nlinks"][0]):
        raise ValueError(f"data_file: {data_file}: no nlinks section")
    values, probs = secs["nlinks"]
    if probs[-1] < 1.0 or np.any(np.diff(probs) < 0):
        raise ValueError(f"data_file: {data_file}: nlinks' cumulative percents must rise to "
                         f"100, got {probs[-1] * 100:g} last")
    return values, probs


def expected_count(rank: np.ndarray, n: int, data_file: str) -> np.ndarray:
    """RealDistribution.getNlinks of the id at ``rank`` (0: the most links) among n ids:
    the value of the first point whose cumulative probability is >= 1 - rank/n."""
    values, probs = nlinks_cdf(data_file)
    u = 1.0 - np.asarray(rank, dtype=np.int64) / float(n)
    return values[np.minimum(np.searchsorted(probs, u, side="left"), len(values) - 1)]
