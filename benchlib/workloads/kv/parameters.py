"""The key-value mix's parameters: the seed's ``prepare`` / ``client`` knobs.

The seed runs ``./prepare -b 0.1; ./client -a 0.6 -b 0.1 -c 0.1 -d 0.1 -e 0.1``; here
the same knobs are properties under their long names, the seed's letters being
aliases: ``read`` (``a``), ``insert`` (``b``), ``remove`` (``c``), ``update`` (``d``),
``scan`` (``e``). ``read`` left out takes what the others leave (the seed's
``./client`` alone is read-only); given, the five must sum to 1.

``prepare_insert_ratio`` is the prepare's ``-b``: the share of the ``key_count`` keys
the prepare leaves out, so that the run's inserts fill them first (reads of a key not
inserted yet are never drawn). ``prepare_remove_ratio`` removes that share of
the loaded keys at the end of the prepare: the seed's "scan after del".
"""
from __future__ import annotations

import difflib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...targets.dialect import IDENTIFIER
from ..base import check_int_limits

MIX_KEYS = ("read", "insert", "remove", "update", "scan")
ALIASES = {"a": "read", "b": "insert", "c": "remove", "d": "update", "e": "scan"}
NAME_RE = IDENTIFIER  # a plain SQL name: quoted, never pasted raw


class KvParameters(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    read: float | None = Field(None, ge=0, le=1, alias="a")
    insert: float = Field(0.0, ge=0, le=1, alias="b")
    remove: float = Field(0.0, ge=0, le=1, alias="c")
    update: float = Field(0.0, ge=0, le=1, alias="d")
    scan: float = Field(0.0, ge=0, le=1, alias="e")
    prepare_insert_ratio: float = Field(0.0, ge=0, lt=1)
    prepare_remove_ratio: float = Field(0.0, ge=0, lt=1)
    key_count: int = Field(10_000, ge=2, le=1 << 40)
    key_size: int = Field(16, ge=12, le=1024)          # bytes; 16 as the seed
    value_size: int = Field(100, ge=1, le=1 << 20)     # bytes
    request_distribution: Literal["uniform", "zipfian", "latest"] = "uniform"
    scan_length: int = Field(10, ge=1, le=100_000)
    op_count: int = Field(0, ge=0)   # ops per run loop over all clients (unless run.loop_secs)
    table: str = "kv"                # the SQL table; on Redis the key prefix "<table>:"

    @field_validator("table")
    @classmethod
    def _table(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError("a plain name (letters, digits, _; at most 63 characters)")
        return v

    @property
    def mix(self) -> tuple[float, float, float, float, float]:
        """read, insert, remove, update, scan: the op codes' proportions."""
        return (self.read_share, self.insert, self.remove, self.update, self.scan)

    @property
    def read_share(self) -> float:
        if self.read is not None:
            return self.read
        return max(0.0, 1.0 - (self.insert + self.remove + self.update + self.scan))

    @property
    def keys_loaded(self) -> int:
        """Key numbers [0, keys_loaded) are loaded by the prepare."""
        return self.key_count - round(self.key_count * self.prepare_insert_ratio)


def parse(props: dict) -> KvParameters:
    """Validated parameters; ValueError("key: what is allowed") on a fault."""
    props = {k: v for k, v in props.items() if v is not None}
    for short, long in ALIASES.items():
        if short in props and long in props:
            raise ValueError(f"{long}: given twice (as {long} and as its alias {short})")
    try:
        p = KvParameters.model_validate(props)
    except ValidationError as e:
        raise ValueError(_one_line(e)) from None
    _check_mix(p)
    check_int_limits(p)
    return p


def _check_mix(p: KvParameters) -> None:
    others = p.insert + p.remove + p.update + p.scan
    total = others + (p.read or 0.0)
    if total > 1 + 1e-9:
        names = "read (a) + " if p.read is not None else ""
        raise ValueError(f"{names}insert (b) + remove (c) + update (d) + scan (e): "
                         f"the proportions sum to {total:g}, more than 1")
    if p.read is not None and total < 1 - 1e-9:
        raise ValueError(f"read (a): the proportions sum to {total:g}, not 1 "
                         "(leave read out and it takes the rest)")
    if sum(p.mix) <= 0:
        raise ValueError("read (a): no operation has a proportion > 0")


def _one_line(err: ValidationError) -> str:
    e = err.errors()[0]
    key = str(e["loc"][0]) if e["loc"] else "(properties)"
    if e["type"] == "extra_forbidden":
        known = list(KvParameters.model_fields) + list(ALIASES)
        near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]!r}?" if near else f"known: {', '.join(known)}"
        return f"{key}: unknown key for workload kv ({hint})"
    key = ALIASES.get(key, key)
    return f"{key}: {e['msg'].removeprefix('Value error, ')}"
