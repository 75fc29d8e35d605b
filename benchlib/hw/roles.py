"""Which host a row of the ``hw`` table describes, and what runs there.

Each row carries its ``role`` (``client``: benchmark drivers only; ``dbms``: the
database server only; ``both``: a host that runs both, as a loopback server) and its
``source`` (``local``: benchlib's sampler on the controller's host or a Dask driver
host; ``dask``: benchlib's sampler sent to the DBMS host; ``prometheus``: queried
after each step). Run folders written before the two columns existed get them on read
(:func:`upgrade_hw`): the controller's host was sampled with the server's processes
(``both``), a Dask driver host with its drivers only (``client``), all by benchlib's
own sampler (``local``).
"""
from __future__ import annotations

import pandas as pd

CLIENT, DBMS, BOTH = "client", "dbms", "both"
DBMS_ROLES = (DBMS, BOTH)
CLIENT_ROLES = (CLIENT, BOTH)


def upgrade_hw(hw: pd.DataFrame, hostnames: dict) -> pd.DataFrame:
    """``hw`` with ``role`` and ``source`` filled where blank; ``hostnames``: run_id ->
    the controller's hostname (meta.json ``host.hostname``)."""
    if not len(hw) or ("role" in hw and "source" in hw
                       and hw["role"].notna().all() and hw["source"].notna().all()):
        return hw
    hw = hw.copy()
    host = hw["host"].astype("object") if "host" in hw else pd.Series(None, index=hw.index, dtype="object")
    own = hw["run_id"].astype("object").map(hostnames) if "run_id" in hw else host
    guess = [BOTH if pd.isna(h) or pd.isna(o) or h == o else CLIENT for h, o in zip(host, own)]
    role = hw["role"].astype("object") if "role" in hw else pd.Series(None, index=hw.index, dtype="object")
    hw["role"] = pd.array([r if isinstance(r, str) else g for r, g in zip(role, guess)], dtype="string")
    src = hw["source"] if "source" in hw else pd.Series(pd.NA, index=hw.index, dtype="string")
    hw["source"] = src.astype("string").fillna("local")
    return hw


def tag(df: pd.DataFrame, role: str, source: str) -> pd.DataFrame:
    """A sampler's rows with their role and source."""
    return df.assign(role=pd.array([role] * len(df), dtype="string"),
                     source=pd.array([source] * len(df), dtype="string"))
