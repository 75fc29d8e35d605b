"""Importers: other tools' outputs into the tidy tables of :mod:`benchlib.schema`.

One module per format, its ``(paths) -> Imported`` registered under its kind with the
signatures that recognize its files (:mod:`benchlib.registries.importers`, one call each). This package
adds the one call a user makes::

    import_output("ycsb", ["load.out", "load.err", "run.out", "run.err"], "data/exp/pg-a")

which parses the files, sets ``run_id`` and ``step`` in every table, attaches hardware
logs (``hw=``) to the steps, and writes the run folder atomically: a file that is not
what its importer expects raises :class:`ImportFormatError` (file, line, what was
expected) and leaves no folder behind.

Conventions every importer keeps (beyond :mod:`benchlib.schema`):

- ``intervals`` rows carry ``interval_s``, the length of time the row covers: tools
  report every 1 s, every 10 s or every 20 s, and a row is only comparable to a
  one-second row once divided by it. ``second`` is where that time starts.
- An operation a tool only counts as a whole (YCSB's status line, LinkBench's
  progress line) appears as op ``TOTAL``; leave it out when adding up operations.
- A figure the file does not print stays NA; a figure printed as a rate is kept as
  printed (``ops_per_s``) and the count derived from it is rounded.

What the importer modules share is in :mod:`.base` (the error, the naming of steps) and
:mod:`.text` (reading files, columns of numbers); :mod:`.output` reads a tool's files into
a run folder. Importing this package imports neither pandas nor a parser: the names
below are loaded when first used.
"""
from __future__ import annotations

from ..schema import TOTAL_OP

def __getattr__(name: str):
    # each import written out, so tests/test_layers.py sees it
    if name in ("ImportFormatError", "Imported"):
        from . import base as module
    elif name in ("detect_kind", "import_output", "read_output"):
        from . import output as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)


__all__ = ["TOTAL_OP", "ImportFormatError", "Imported", "detect_kind", "import_output", "read_output"]
