"""The run's interval log: each completed second appended to ``intervals.jsonl`` at once,
so a killed run keeps its seconds and the intervals table is made from them.

Nothing of a second stays in memory once it is written: a run of any length holds the
current second only. At the end the log becomes ``intervals.parquet`` a slice at a time
(:meth:`IntervalLog.write_table`); the step's running totals the failure checks need
(:mod:`.failed`) are the step's controller's, never these rows.
"""
from __future__ import annotations

import json
from pathlib import Path

from .. import schema
from ..filemodes import open_private
from ..store import folders, space

SLICE_ROWS = 50_000   # rows converted at a time into the intervals table


class IntervalLog:
    """Appends completed seconds to ``intervals.jsonl`` at once: a killed run keeps them."""

    def __init__(self, run_dir: Path, run_id: str):
        self.path = run_dir / folders.INTERVAL_LOG
        self.run_id = run_id
        self.f = open_private(self.path, "a")   # 0600, as every file of a run
        self.step = None
        self.count = 0            # rows written: a running total, never the rows

    def __call__(self, rows: list[dict]) -> None:
        rows = [{"run_id": self.run_id, "step": self.step, **{k: v for k, v in r.items() if k != "min_us"}}
                for r in rows]
        try:
            self.f.write(json.dumps(rows, default=float) + "\n")
            self.f.flush()
        except OSError as e:    # the step stops with this one line (step._Collector)
            raise (space.no_space(self.path.parent) if space.is_no_space(e) else e) from None
        self.count += len(rows)

    def close(self) -> None:
        try:
            self.f.close()
        except OSError:
            pass   # what it could not write is lost with the step, which failed for it

    def write_table(self) -> None:
        """``intervals.parquet`` from the log, a slice at a time; the log removed once the
        table is there (a disk that fills meanwhile leaves the log, which readers read)."""
        write_jsonl_table(self.path, self.path.parent / "intervals.parquet")
        self.path.unlink(missing_ok=True)


def _slices(log: Path):
    rows: list[dict] = []
    for line in folders.interval_log_lines(log):
        rows.extend(line)
        if len(rows) >= SLICE_ROWS:
            yield rows
            rows = []
    if rows:
        yield rows


def write_jsonl_table(log: Path, path: Path) -> None:
    """The interval rows of ``log`` (a JSON list per line) as a Parquet table at ``path``,
    written to a temporary name and renamed, holding one slice in memory at a time."""
    import os
    import tempfile

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    fd, tmp = tempfile.mkstemp(prefix=".intervals.", suffix=".parquet", dir=path.parent)
    os.close(fd)
    writer = None
    try:
        for rows in _slices(log):
            df = schema.conform("intervals", pd.DataFrame(rows))
            if writer is None:
                arrow_schema = pa.Schema.from_pandas(df, preserve_index=False)
                strings = [f.name for f in arrow_schema if pa.types.is_string(f.type)]
                writer = pq.ParquetWriter(tmp, arrow_schema, use_dictionary=strings)
            writer.write_table(pa.Table.from_pandas(df, schema=arrow_schema, preserve_index=False))
        if writer is None:
            os.unlink(tmp)
            folders.write_table(path.parent, "intervals", None)
            return
        writer.close()
        writer = None
        os.replace(tmp, path)
    except BaseException:
        if writer is not None:
            writer.close()
        Path(tmp).unlink(missing_ok=True)
        raise


def interval_rows(run_dir: Path, columns=None) -> list[dict]:
    """The run's interval rows, for a workload's text outputs that need them (LinkBench's
    progress lines): read when asked, from the table, else from the log a full disk left;
    with ``columns``, only those of each row (a long run's rows are many: a dict each)."""
    import pandas as pd
    import pyarrow.parquet as pq
    table, log = run_dir / "intervals.parquet", run_dir / folders.INTERVAL_LOG
    if table.exists():
        names = None if columns is None else [c for c in pq.read_schema(table).names if c in columns]
        return pd.read_parquet(table, columns=names).to_dict("records")
    rows = (r for line in folders.interval_log_lines(log) for r in line) if log.exists() else ()
    return [r if columns is None else {k: v for k, v in r.items() if k in columns} for r in rows]
