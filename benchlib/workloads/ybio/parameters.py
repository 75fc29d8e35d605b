"""ybio's parameters, named as the seed's ``setup()`` and ``runit()`` name them.

One flat model for both procedures (the experiment's ``properties``): a misspelled
key is an error naming the nearest known key, a value out of range an error naming
its key, both one line (``ValueError("key: …")``), before anything runs.

``batch_size`` is runit's: the rows each call reads or updates (a range of
``batch_size`` keys). The load inserts in batches of the experiment's
``load.batch_size`` (the seed's setup ``batch_size``, default 1000 rows), so that a
sweep over runit's batch_size does not load the table 1 row at a time.
"""
from __future__ import annotations

import difflib
import re
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

# plain identifiers only: the table names reach SQL (quoted as well), and 4 digits
# are appended (bench0001), all within PostgreSQL's 63 characters
PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,58}$")
INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|second|seconds|m|min|mins|minute|minutes|"
                      r"h|hour|hours)?\s*$", re.IGNORECASE)
UNIT_S = {"s": 1, "m": 60, "h": 3600}
# the properties a list of values makes a matrix of (one run per value)
MATRIX_PROPERTIES = ("batch_size", "pct_update", "index_only", "prepared")


def duration_seconds(value) -> float:
    """``run_duration``: seconds (a number) or an interval as PostgreSQL writes it
    (``'1 minutes'``, ``'90 seconds'``, ``'2 h'``)."""
    if isinstance(value, bool):
        raise ValueError("seconds or an interval such as '1 minutes'")
    if isinstance(value, (int, float)):
        secs = float(value)
    else:
        m = INTERVAL.match(str(value))
        if not m:
            raise ValueError(f"{value!r} is not seconds or an interval such as '1 minutes'")
        unit = (m.group(2) or "s").lower()[0]
        secs = float(m.group(1)) * UNIT_S[unit]
    if secs <= 0:
        raise ValueError("must be more than 0 seconds")
    return secs


class YbioParameters(BaseModel):
    """setup(): tab_prefix … ind_tablets; runit(): run_duration … initial_count."""

    model_config = ConfigDict(extra="forbid")

    # --- setup
    tab_prefix: str = "bench"
    tab_num: int = Field(1, ge=1, le=9999)
    tab_rows: int = Field(1_000_000, ge=1, le=10**12)
    filler: int = Field(1, ge=0, le=10_000)       # bytes of an extra column (wider rows)
    recreate: bool = True                          # drop the tables before the load
    index_as_pk: bool = False                      # mykey the primary key (else an index)
    orderby: Literal["scratch"] | None = "scratch"  # insert order: random, or as generated
    tab_tablets: int = Field(0, ge=0)              # YugabyteDB only (SPLIT INTO): ignored here
    ind_tablets: int = Field(0, ge=0)              # YugabyteDB only (SPLIT AT): ignored here
    # --- runit
    batch_size: int = Field(10_000, ge=1)          # rows per call: a range of keys
    run_duration: float = 60.0                     # seconds, or an interval '1 minutes'
    pct_update: int = Field(0, ge=0, le=100)       # % of the rows updated, not read
    prepared: bool = True                          # server-side prepared statements
    index_only: bool = False                       # sum(mykey): an index-only range scan
    initial_count: bool = False                    # count the table's rows first
    # --- benchlib's
    table_per_session: bool = False                # session i on table tab_num + i
    status_every_s: float = Field(1.0, ge=0)       # a status line per session at most this often

    @field_validator("tab_prefix")
    @classmethod
    def _prefix(cls, v: str) -> str:
        if not PLAIN_NAME.match(v):
            raise ValueError(f"{v!r} is not a plain name (letters, digits, _; at most 59)")
        return v

    @field_validator("tab_rows", "batch_size", mode="before")
    @classmethod
    def _count(cls, v):
        """1e6 as the seed writes it (YAML reads it as a string): a whole number."""
        if isinstance(v, str) and re.fullmatch(r"\s*\d+(\.\d*)?[eE]\d+\s*", v):
            v = float(v)
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v

    @field_validator("run_duration", mode="before")
    @classmethod
    def _duration(cls, v) -> float:
        return duration_seconds(v)

    @model_validator(mode="after")
    def _batch_fits(self):
        if self.batch_size > self.tab_rows:
            raise ValueError(f"batch_size: {self.batch_size} is more than tab_rows "
                             f"({self.tab_rows}): a call reads a range inside the table")
        return self

    def table_name(self, session: int = 0) -> str:
        """bench0001 for tab_num 1; session i's own table with table_per_session."""
        num = self.tab_num + (session if self.table_per_session else 0)
        return f"{self.tab_prefix}{num:04d}"

    def table_names(self, sessions: int) -> list[str]:
        return [self.table_name(i) for i in range(sessions if self.table_per_session else 1)]


def parse_parameters(props: dict) -> YbioParameters:
    """The validated parameters; ValueError with one line naming the key."""
    try:
        return YbioParameters.model_validate(props)
    except ValidationError as err:
        raise ValueError(_one_line(err)) from None


def _one_line(err: ValidationError) -> str:
    e = err.errors()[0]
    key = ".".join(str(p) for p in e["loc"])
    msg = e["msg"].removeprefix("Value error, ")
    if e["type"] == "extra_forbidden":
        near = difflib.get_close_matches(key, YbioParameters.model_fields, n=1, cutoff=0.5)
        hint = f"did you mean {near[0]}?" if near else \
            f"known: {', '.join(YbioParameters.model_fields)}"
        return f"{key}: unknown ybio parameter ({hint})"
    if not key:  # a model check: its message starts with the key
        return msg
    if isinstance(e.get("input"), list) and key not in MATRIX_PROPERTIES:
        msg = f"one value (lists make a matrix of {', '.join(MATRIX_PROPERTIES)} only)"
    return f"{key}: {msg}"
