"""The catalog of runs, like the seed's ``benchruns`` table: one row per run folder.

A SQLAlchemy database (by default the SQLite file ``<data-dir>/catalog.sqlite``) so
that a team can point it at a shared PostgreSQL instead. It is an index for
listing and querying; the run folders stay the source of truth, and
:func:`rebuild` recreates it from them.
"""
from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from . import folders as results

metadata = sa.MetaData()
benchruns = sa.Table(
    "benchruns", metadata,
    sa.Column("run_id", sa.String, primary_key=True),
    sa.Column("experiment", sa.String, primary_key=True),
    sa.Column("config", sa.String),
    sa.Column("status", sa.String),
    sa.Column("workload", sa.String),
    sa.Column("dbms", sa.String),
    sa.Column("dbms_version", sa.String),
    sa.Column("threads", sa.Integer),
    sa.Column("target_ops_per_s", sa.Float),
    sa.Column("repetition", sa.Integer),
    sa.Column("ops_per_s", sa.Float),
    sa.Column("started", sa.String),
    sa.Column("ended", sa.String),
    sa.Column("source", sa.String),
    sa.Column("path", sa.String),
)


def engine_for(data_dir: Path | str, url: str | None = None) -> sa.Engine:
    if url is None:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{Path(data_dir) / 'catalog.sqlite'}"
    eng = sa.create_engine(url)
    metadata.create_all(eng)
    return eng


def record(data_dir: Path | str, run_dir: Path, meta: dict, ops_per_s: float | None = None,
           url: str | None = None) -> None:
    row = results.run_row(run_dir, meta)
    row = {k: row.get(k) for k in benchruns.c.keys()}
    row["ops_per_s"] = ops_per_s
    eng = engine_for(data_dir, url)
    with eng.begin() as conn:
        conn.execute(benchruns.delete().where(
            (benchruns.c.run_id == row["run_id"]) & (benchruns.c.experiment == row["experiment"])))
        conn.execute(benchruns.insert().values(**row))
    eng.dispose()


def rebuild(data_dir: Path | str, url: str | None = None) -> int:
    """Recreate the catalog from the run folders under ``data_dir``."""
    n = 0
    for rd in results.find_runs(data_dir):
        meta = results.read_meta(rd)
        steps = results.read_table(rd, "steps")
        run = steps[steps["phase"] == "run"]
        rate = float(run["ops"].sum() / run["secs"].sum()) if len(run) and run["secs"].sum() else None
        record(data_dir, rd, meta, rate, url)
        n += 1
    return n


def list_runs(data_dir: Path | str, url: str | None = None):
    import pandas as pd
    eng = engine_for(data_dir, url)
    with eng.connect() as conn:
        df = pd.read_sql(sa.select(benchruns).order_by(benchruns.c.started), conn)
    eng.dispose()
    return df
