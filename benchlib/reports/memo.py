"""Figures worked out once per content of the results, however often a report asks.

Every page's heading shows the headline (the best point, :mod:`..summaries.headline`),
the time series page orders its runs by the same best point, and the index shows it
too: in one kernel (``reports.kernel``) that was the same few hundred milliseconds of
pandas, per run, four or five times over. :func:`once` answers the second time from
memory when the results are the same — the same tables, row for row: their content's
hash (:func:`fingerprint`, a few ms for a 15-run experiment), never an object's
identity, so a page that changed or filtered its tables gets its own figure. Keeps the
last :data:`KEPT` answers; what it returns is a deep copy.
"""
from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from typing import Callable

import pandas as pd

KEPT = 16
_answers: OrderedDict = OrderedDict()


def fingerprint(res: dict) -> str | None:
    """A hash of every table of ``res``, its columns, dtypes and rows in order; None when
    a value cannot be hashed (then nothing is kept)."""
    h = hashlib.blake2b(digest_size=16)
    try:
        for name in sorted(res):
            df = res[name]
            if not isinstance(df, pd.DataFrame):
                return None
            h.update(repr((name, list(df.columns), [str(t) for t in df.dtypes], len(df))).encode())
            for col in df.columns:
                try:
                    h.update(pd.util.hash_pandas_object(df[col], index=False).to_numpy().tobytes())
                except TypeError:   # dicts (the runs' meta): their text
                    h.update(repr(df[col].tolist()).encode())
    except Exception:  # noqa: BLE001 - an odd table: work it out, keep nothing
        return None
    return h.hexdigest()


def once(kind: str, res: dict, compute: Callable[[], object]):
    """``compute()``, or its answer for results of the same content asked before."""
    key = fingerprint(res)
    if key is None:
        return compute()
    key = (kind, key)
    if key not in _answers:
        _answers[key] = compute()
        while len(_answers) > KEPT:
            _answers.popitem(last=False)
    _answers.move_to_end(key)
    return copy.deepcopy(_answers[key])
