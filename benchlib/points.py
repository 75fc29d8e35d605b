"""A run's coordinates: where it sits in the matrix of its experiment.

A *point* of the matrix is ``schema.POINT``: the run's client threads, its target rate
(0 when unthrottled) and ``point``, the values of its workload's own matrix properties
that the experiment sweeps (ybio's ``batch_size=100,pct_update=10`` when it gave a list of
each; ``""`` for a workload without any, as YCSB). A matrix property given one value is
no axis: ``prepared: true`` against ``prepared: false`` in two experiments compare point
by point over their batch_size × pct_update.
Runs at one point are repetitions of one measurement; runs at two points are two
measurements, never averaged together. Points, ``compare``, the heatmaps' cells and
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
