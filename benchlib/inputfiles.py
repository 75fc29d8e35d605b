"""A user's input files read whole: each a regular file of at most its kind's size.

A parameter YAML, a property file, LinkBench's ``data_file``, a tool's output read at
once: :func:`read_bounded` opens it without blocking (a FIFO), refuses what is not a
regular file (``/dev/urandom``, ``/dev/zero``, a folder) and what is larger than its
kind allows, and never reads past that limit, so a wrong path costs one line, not the
machine's memory. :class:`YamlLoader` is ``yaml.SafeLoader`` that refuses a key given
twice in one mapping (YAML would keep the last silently), naming the key and both lines.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

import yaml
from yaml.constructor import ConstructorError

MB = 1 << 20
PARAMETER_BYTES = 16 * MB     # an experiment YAML, a workload's property file, a histogram file
DATA_FILE_BYTES = 64 * MB     # a distribution table (LinkBench's Distribution.dat: 0.6 MB), unpacked
OUTPUT_BYTES = 2048 * MB      # a tool's output that an importer reads whole (YCSB's is streamed)


class InputFileError(ValueError):
    """An input file that cannot be read as one: one line naming it and why."""

    def __init__(self, path: str | Path, why: str):
        self.path, self.why = str(path), why
        super().__init__(f"{path}: {why}")


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def size_text(n: int) -> str:
    return f"{n / MB:,.1f} MB" if n >= MB else f"{n:,} bytes"


def read_bounded(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    FileNotFoundError when it is missing (callers name that in their own words);
    InputFileError when it is a folder, a device, a FIFO or a socket, when it is larger
    than ``limit`` (or grows past it while read), or cannot be read. ``what`` names the
    kind in the message ("parameter file")."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as e:
        raise InputFileError(path, f"cannot read: {e.strerror or e}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
        os.close(fd)
        raise InputFileError(path, f"{_kind_of(st.st_mode)}, not a {what}" if not stat.S_ISREG(st.st_mode)
                             else f"{size_text(st.st_size)}: larger than a {what} may be ({size_text(limit)})")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise InputFileError(path, f"cannot read: {e.strerror or e}") from None
    if len(data) > limit:
        raise InputFileError(path, f"grew past {size_text(limit)} while read: larger than a {what} may be")
    return data


def check_regular(path: str | Path, what: str) -> None:
    """InputFileError unless ``path`` is a regular file (FileNotFoundError when missing);
    for the files that are read in pieces, whatever their size."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise
    except OSError as e:
        raise InputFileError(path, f"cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(mode):
        raise InputFileError(path, f"{_kind_of(mode)}, not a {what}")


class DuplicateKeyError(ConstructorError):
    """A key given twice in one YAML mapping."""


class YamlLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (a merge key
    ``<<:`` may still be overridden: that is what it is for)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in seen:
                    lines = f" (lines {seen[key]} and {line})" if seen[key] != line else ""
                    raise DuplicateKeyError(None, None, f"key {key!r} given twice{lines}: YAML would "
                                            "keep only the last; remove one", key_node.start_mark)
                seen[key] = line
        return super().construct_mapping(node, deep)


def load_yaml(text: str):
    """YAML text as :func:`yaml.safe_load` reads it, a duplicate key refused."""
    return yaml.load(text, Loader=YamlLoader)  # noqa: S506 - a SafeLoader
