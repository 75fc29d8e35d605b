"""RocksDB's settings as a target takes them: names, values checked, made into rocksdict's
``Options`` and ``WriteOptions``.

A setting is given in the target's ``options:`` (``{name: rocks, url: rocksdb, options:
{write_buffer_size: 64MiB}}``) or in its URL's query (``rocksdb:///db?compression=lz4``),
not both. Each is one of RocksDB's own options under its own name; a size takes bytes or
a number with KiB, MiB, GiB (KB, MB, GB are the same powers of 2, as RocksDB's tools
read them). What is not given is RocksDB's default, untouched: the run's meta records the
settings given (``meta.dbms.settings``), which make its configuration.

``statistics`` (default true) turns RocksDB's statistics on: the figures each step's
row carries (compaction and flush bytes, stalls, block cache hits), at RocksDB's cost of
a few per cent.
"""
from __future__ import annotations

import difflib
import re

SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
COMPRESSIONS = ("none", "snappy", "zlib", "bz2", "lz4", "lz4hc", "zstd")
COMPACTION_STYLES = ("level", "universal", "fifo")

# name -> (kind of value, what it is): sizes in bytes, counts, a word of a list, a flag
SETTINGS: dict[str, tuple[str, str]] = {
    "write_buffer_size": ("size", "a memtable's size before it is flushed"),
    "max_write_buffer_number": ("count", "memtables held, the flushing ones included"),
    "compression": ("compression", "the SST files' compression"),
    "compaction_style": ("compaction_style", "how SST files are merged"),
    "block_cache_size": ("size", "the block cache (LRU), shared by the column families"),
    "bloom_bits_per_key": ("count", "a Bloom filter per SST file, bits per key (0: none)"),
    "max_background_jobs": ("count", "flush and compaction threads"),
    "target_file_size_base": ("size", "an SST file's size at level 1"),
    "level0_file_num_compaction_trigger": ("count", "L0 files that start a compaction"),
    "sync": ("flag", "fsync the WAL at each write (WriteOptions.sync)"),
    "disable_wal": ("flag", "no write-ahead log (WriteOptions.disable_wal)"),
    "statistics": ("flag", "RocksDB's statistics: the steps' dbms_* figures (default true)"),
}


def parse_size(value) -> int:
    """Bytes from ``67108864``, ``"64MiB"``, ``"64MB"``, ``"64m"``; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int):
        n = value
    else:
        m = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)(i?b)?\s*", str(value), re.IGNORECASE)
        if not m:
            raise ValueError(f"{value!r} is not a size (bytes, or e.g. 64MiB, 1GiB)")
        n = int(m.group(1)) * SIZE_UNITS[m.group(2).lower()]
    if n < 1 or n > 1 << 50:
        raise ValueError(f"{value!r} is not a size from 1 byte to 1 PiB")
    return n


def _flag(value) -> bool:
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{value!r} is not true or false")


def _count(value) -> int | float:
    try:
        n = float(value) if not isinstance(value, bool) else -1
    except (TypeError, ValueError):
        n = -1
    if n < 0 or n > 1 << 31 or n != n:
        raise ValueError(f"{value!r} is not a number from 0")
    return int(n) if n == int(n) else n


def _word(value, allowed: tuple[str, ...]) -> str:
    word = str(value).strip().lower()
    if word not in allowed:
        raise ValueError(f"{value!r} is not one of {', '.join(allowed)}")
    return word


def check_value(name: str, value):
    """The setting's value as it is used (a size in bytes, a word, a flag); ValueError
    (one line, naming the setting and what it takes) for another name or a bad value."""
    if name not in SETTINGS:
        near = difflib.get_close_matches(name, list(SETTINGS), n=1)
        hint = f"did you mean {near[0]}? " if near else ""
        raise ValueError(f"{name!r} is not a RocksDB setting ({hint}they are: {', '.join(SETTINGS)})")
    kind = SETTINGS[name][0]
    try:
        if kind == "size":
            return parse_size(value)
        if kind == "count":
            return _count(value)
        if kind == "flag":
            return _flag(value)
        return _word(value, COMPRESSIONS if kind == "compression" else COMPACTION_STYLES)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


def resolve(given: dict) -> dict:
    """Every given setting checked (ValueError, one line, on the first bad one)."""
    return {name: check_value(name, value) for name, value in given.items()}


def db_options(settings: dict):
    """rocksdict's ``Options`` for the database and each column family: raw bytes (so a
    database another program wrote reads as it is), created if missing, the settings."""
    import rocksdict as r
    o = r.Options(raw_mode=True)
    o.create_if_missing(True)
    o.create_missing_column_families(True)
    if settings.get("statistics", True):
        o.enable_statistics()
    for name, setter in (("write_buffer_size", o.set_write_buffer_size),
                         ("max_write_buffer_number", o.set_max_write_buffer_number),
                         ("max_background_jobs", o.set_max_background_jobs),
                         ("target_file_size_base", o.set_target_file_size_base),
                         ("level0_file_num_compaction_trigger", o.set_level_zero_file_num_compaction_trigger)):
        if name in settings:
            setter(int(settings[name]))
    if "compression" in settings:
        o.set_compression_type(getattr(r.DBCompressionType, settings["compression"])())
    if "compaction_style" in settings:
        o.set_compaction_style(getattr(r.DBCompactionStyle, settings["compaction_style"])())
    if "block_cache_size" in settings or "bloom_bits_per_key" in settings:
        table = r.BlockBasedOptions()
        if "block_cache_size" in settings:
            table.set_block_cache(r.Cache(int(settings["block_cache_size"])))
        if settings.get("bloom_bits_per_key"):
            table.set_bloom_filter(float(settings["bloom_bits_per_key"]), False)
        o.set_block_based_table_factory(table)
    return o


def write_options(settings: dict):
    """rocksdict's ``WriteOptions`` of the settings (sync, disable_wal)."""
    import rocksdict as r
    w = r.WriteOptions()
    w.sync = bool(settings.get("sync", False))
    w.disable_wal = bool(settings.get("disable_wal", False))
    return w
