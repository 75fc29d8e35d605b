"""A run's coordinates: where it sits in the matrix of its experiment.

A *point* of the matrix is ``schema.POINT``: the run's ``target`` (its DBMS
configuration, :func:`target_point`: the target's name and what makes two servers differ —
the DBMS and its version, the options the experiment sets), its client threads, its target
rate (0 when unthrottled) and ``point``, the values of its workload's own matrix properties
that the experiment sweeps (ybio's ``batch_size=100,pct_update=10`` when it gave a list of
each; ``""`` for a workload without any, as YCSB). A matrix property given one value is
no axis: ``prepared: true`` against ``prepared: false`` in two experiments compare point
by point over their batch_size × pct_update.
Runs at one point are repetitions of one measurement; runs at two points are two
measurements, never averaged together: a PostgreSQL and a SQLite target of one experiment
are two series side by side. ``compare`` pairs a point only with the same configuration
(equal ``target``) unless told which targets to pair (``--pair pg=pg16``, by name). Points, ``compare``, the heatmaps' cells and
the report's best run group by it, and an importer gives a run of another tool the same
coordinates (``importers/coordinates.py``), so it is a point like any other.

This module is the one definition of ``point`` (``schema.RunMeta.workload_point`` is
this function on a meta); it is in layer 0, beside the schema, so that every layer
above reads the same key.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SEP, EQ = ",", "="


def point_string(properties: Mapping[str, Any], names: Iterable[str]) -> str:
    """``batch_size=100,pct_update=10``: the values of ``names`` in ``properties``, in
    the order the workload declares them (a name without a value is left out)."""
    return SEP.join(f"{n}{EQ}{properties[n]}" for n in names if properties.get(n) is not None)


def matrix_names(meta: Mapping[str, Any]) -> list[str]:
    """The workload's matrix properties of a run: as its meta records them
    (``matrix_properties``), or, in a folder written before meta did, the properties its
    experiment gave a list of values (only matrix properties may be lists)."""
    names = meta.get("matrix_properties")
    if names:
        return list(names)
    params = meta.get("parameters")
    props = params.get("properties") if isinstance(params, Mapping) else None
    return [k for k, v in (props or {}).items() if isinstance(v, list)]


def workload_point(meta: Mapping[str, Any]) -> str:
    """A run's ``point`` (see the module doc) from its meta.json (a dict or a RunMeta)."""
    return point_string(meta.get("workload_properties") or {}, matrix_names(meta))


def point_values(point: str) -> dict[str, str]:
    """The inverse of :func:`point_string`: ``{"batch_size": "100", …}``."""
    return dict(p.split(EQ, 1) for p in str(point or "").split(SEP) if EQ in p)


def point_without(point: str, names: Iterable[str]) -> str:
    """``point`` less the properties ``names`` (a heatmap's axes: the rest makes panels)."""
    drop = set(names)
    return SEP.join(f"{k}{EQ}{v}" for k, v in point_values(point).items() if k not in drop)


def target_name(meta: Mapping[str, Any]) -> str:
    """The target's name in the experiment (the YAML's ``name``, the seeds' cnf); an
    import's is its configuration name (``--name``)."""
    t = meta.get("target")
    name = t.get("name") if isinstance(t, Mapping) else t
    return str(name or meta.get("config") or "")


def target_point(meta: Mapping[str, Any]) -> str:
    """``pg (PostgreSQL 15.20)``, ``lite (SQLite 3.40.1; journal_mode=delete)``: the run's DBMS
    configuration — the target's name, the DBMS (its kind where the run did not say) and
    version (its first word: a distribution's suffix is no setting), and the options the
    experiment set for it (a mapping option's entries each an option: a pragma, a
    provisioned server's setting). Equal strings are the same configuration."""
    t = meta.get("target")
    t = t if isinstance(t, Mapping) else {}
    dbms = meta.get("dbms") if isinstance(meta.get("dbms"), Mapping) else {}
    version = str(dbms.get("version") or "").split(" ", 1)[0]
    what = " ".join(filter(None, [str(dbms.get("name") or t.get("kind") or ""), version]))
    opts = _options(meta, target_name(meta))
    inside = "; ".join(filter(None, [what, ",".join(f"{k}={v}" for k, v in sorted(opts.items()))]))
    return f"{target_name(meta)} ({inside})" if inside else target_name(meta)


def _options(meta: Mapping[str, Any], name: str) -> dict:
    """The options the experiment gave the target ``name`` (its file's path aside)."""
    params = meta.get("parameters")
    targets = params.get("targets") if isinstance(params, Mapping) else None
    for t in targets or []:
        if isinstance(t, Mapping) and t.get("name") == name:
            return _flat({k: v for k, v in (t.get("options") or {}).items() if k != "path"})
    return {}


def _flat(options: Mapping[str, Any]) -> dict:
    """A mapping option's entries as options of their own (a provisioned server's
    ``settings: {shared_buffers: 1GB}`` reads ``shared_buffers=1GB``)."""
    out: dict = {}
    for k, v in options.items():
        if isinstance(v, Mapping):
            out.update({str(kk): vv for kk, vv in v.items()})
        else:
            out[k] = v
    return out
