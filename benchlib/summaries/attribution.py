"""Whose work the DBMS figures count, said under the step lines.

``dsec``, ``dsecpq``, ``dutil`` (and the points' ``cpu_us_per_op``) count the run's own
work on the server where the server can say which it is (the steps table's
``dbms_attribution``): the backends of the run's connections (PostgreSQL), the threads
of the connections to its database (MariaDB with performance_schema), the server's one
process (Redis); else all the server's processes. The server-wide figure over the same
window (``dsec_all``) is printed beside it where it differs, and a line says when the
server's other databases committed transactions during a step.
"""
from __future__ import annotations

import pandas as pd

from .stepstats import step_stats

SCOPES = {
    "sessions": "the run's own sessions (the backends of its connections)",
    "database": "the threads of the connections to the run's database",
    "process": "the server's process",
    "server": "all the server's processes (every database's work)",
}
DIFFERS = 0.05   # the server-wide figure is printed where it is this much above the run's


def attribution_lines(results: dict) -> str | None:
    """The lines under the step lines: whose CPU dsec counts, the server-wide figure
    where it differs, the steps during which other databases were busy; None for steps
    that carry no attribution (an import, a SQLite run, a run from before)."""
    st = step_stats(results)
    if not len(st):
        return None
    has = st[st["attribution"].map(lambda a: isinstance(a, str) and a != "")]
    if not len(has):
        return None
    scopes = [SCOPES.get(a, a) for a in dict.fromkeys(has["attribution"])]
    if "cgroup" in set(st.get("cpu_from", pd.Series(dtype=object)).dropna()):
        scopes = [s.replace("(every database's work)", "(every database's work; read from its cgroup, "
                            "exited backends' included)") for s in scopes]
    lines = [f"dsec dsecpq dutil: the DBMS CPU of {'; '.join(scopes)}, from each step's start to its end"]
    for r in has.itertuples(index=False):
        label = f"{r.step} {r.cnf}"
        if r.attribution != "server" and pd.notna(r.dsec_all) and pd.notna(r.dsec) \
                and r.dsec_all > r.dsec * (1 + DIFFERS):
            per_op = f" = {r.dsec_all / r.ops * 1e6:.1f} us/op" if r.ops and r.ops > 0 else ""
            lines.append(f"{label}: all the server's processes used {r.dsec_all:.2f} s (dsec_all{per_op}) "
                         f"beside the run's {r.dsec:.2f} s")
        if pd.notna(r.other_commits) and r.other_commits > 0:
            lines.append(f"{label}: other databases on the server were busy during the step "
                         f"({int(r.other_commits):,} transactions committed there)")
    return "\n".join(lines)
