"""``-p key=value`` on the command line: a dotted path into the experiment
(``run.threads=[1,4]``), or else a workload property (``recordcount=1000``).

A workload property with a dot passes only under a prefix the workload declares
(``Workload.property_prefixes``: YCSB's bindings' ``db.``, ``basicdb.`` …); any other
dotted key whose first part is near a section of the experiment (``runn.loop_secs``) is
a misspelled section, refused in one line naming it — never a silent property the run
ignores while it uses its defaults.
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

import yaml

from .errors import ParameterError
from .inputfiles import DuplicateKeyError, load_yaml


def parse_override(item: str) -> tuple[str, Any]:
    """``key=value`` → (key, value) with the value typed as YAML would type it."""
    if "=" not in item:
        raise ParameterError(f"-p {item}: expected key=value")
    key, raw = item.split("=", 1)
    key = key.strip()
    try:
        value = load_yaml(raw) if raw.strip() else ""
    except DuplicateKeyError as e:
        raise ParameterError(f"-p {key}: {e.problem}") from None
    except yaml.YAMLError:
        value = raw
    return key, value


def apply_overrides(data: dict, overrides: list[str], sections: Iterable[str],
                    prefixes: tuple[str, ...] = ()) -> dict:
    """Apply each ``-p`` to ``data`` (the experiment's YAML): into a section of
    ``sections``, or into ``properties``; ``prefixes``: the workload's dotted ones."""
    top = set(sections)
    for item in overrides:
        key, value = parse_override(item)
        head = key.split(".", 1)[0]
        if head in top and head != "properties":
            node = data
            parts = key.split(".")
            for p in parts[:-1]:
                node = node.setdefault(p, {})
                if not isinstance(node, dict):
                    raise ParameterError(f"-p {item}: {p} is not a section")
            node[parts[-1]] = value
        else:
            key = key.removeprefix("properties.")
            _check_dotted(item, key, top, prefixes)
            data.setdefault("properties", {})[key] = value
    return data


def _check_dotted(item: str, key: str, sections: set[str], prefixes: tuple[str, ...]) -> None:
    """A dotted property outside the workload's prefixes whose first part is near a
    section: ParameterError naming the section."""
    if "." not in key or key.startswith(prefixes):
        return
    head = key.split(".", 1)[0]
    near = difflib.get_close_matches(head, sorted(sections - {"properties"}), n=1, cutoff=0.7)
    if near:
        declared = f" (a workload property with a dot starts with one of: {', '.join(prefixes)})" \
            if prefixes else ""
        raise ParameterError(f"-p {item}: no section {head!r}: did you mean {near[0]}."
                             f"{key.split('.', 1)[1]}?{declared}")
