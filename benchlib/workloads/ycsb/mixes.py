"""YCSB's core workloads A–F as a property: ``mix: a`` runs the operation mix of YCSB's
own ``workloads/workloada`` file (its proportions and request distribution), ``mix: [a, c]``
is an axis of the matrix (one run per mix, ``…-mixa-r1``; never averaged).

The letter sets every key of its file that shapes the run loops, and nothing the load
depends on (``recordcount``, field sizes, ``insertorder`` stay the experiment's), so one
load serves every mix: :data:`LOAD_FREE` leaves them out of the load-once key. A property
given beside the letter that contradicts it is refused in one line: the letter means
YCSB's workload, not a variant of it (give the proportions alone for a variant).
"""
from __future__ import annotations

import difflib

# YCSB's workloads/workload[a-f] (brianfrankcooper/YCSB), the keys that shape the mix;
# a proportion the file leaves out is YCSB's 0 for every op but read/update (set here)
_ZERO = {"readproportion": 0, "updateproportion": 0, "scanproportion": 0,
         "insertproportion": 0, "readmodifywriteproportion": 0}
MIXES: dict[str, dict] = {
    "a": {**_ZERO, "readproportion": 0.5, "updateproportion": 0.5, "requestdistribution": "zipfian"},
    "b": {**_ZERO, "readproportion": 0.95, "updateproportion": 0.05, "requestdistribution": "zipfian"},
    "c": {**_ZERO, "readproportion": 1, "requestdistribution": "zipfian"},
    "d": {**_ZERO, "readproportion": 0.95, "insertproportion": 0.05, "requestdistribution": "latest"},
    "e": {**_ZERO, "scanproportion": 0.95, "insertproportion": 0.05, "requestdistribution": "zipfian",
          "maxscanlength": 100, "scanlengthdistribution": "uniform"},
    "f": {**_ZERO, "readproportion": 0.5, "readmodifywriteproportion": 0.5,
          "requestdistribution": "zipfian"},
}
KEY = "mix"
# what a mix may set: none of it changes what the load writes
LOAD_FREE = (KEY, *sorted({k for m in MIXES.values() for k in m}))


def letter(value) -> str:
    """``a`` from ``a``, ``A`` or ``workloada``; ValueError (one line, with the one meant)."""
    s = str(value).strip().lower()
    s = s[len("workload"):] if s.startswith("workload") and len(s) > len("workload") else s
    if s in MIXES:
        return s
    near = difflib.get_close_matches(str(value).lower(), [*MIXES, *(f"workload{m}" for m in MIXES)],
                                     n=1, cutoff=0.6)
    hint = f" (did you mean {near[0][-1]}?)" if near else ""
    raise ValueError(f"{KEY}: {value!r} is none of YCSB's core workloads "
                     f"{', '.join(MIXES)}{hint}")


def _same(a, b) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a).strip().lower() == str(b).strip().lower()


def apply_mix(props: dict) -> dict:
    """``props`` with its one-letter ``mix`` replaced by the letter's keys (unchanged
    without one); a list (the matrix's axis, not yet expanded) is refused here."""
    if props.get(KEY) is None:
        return {k: v for k, v in props.items() if k != KEY}
    value = props[KEY]
    if isinstance(value, list):
        raise ValueError(f"{KEY}: {value}: one letter per run (a list is the matrix's axis)")
    m = letter(value)
    for k, v in MIXES[m].items():
        if k in props and not _same(props[k], v):
            raise ValueError(f"{k}: {props[k]} contradicts {KEY} {m} (YCSB's workload{m}: {k}={v}); "
                             f"drop one of them")
    rest = {k: v for k, v in props.items() if k != KEY}
    return {**rest, **MIXES[m]}
