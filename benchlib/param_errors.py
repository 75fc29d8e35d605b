"""A validation error of the experiment's parameters said in one line: where (the
dotted key), what was wrong, and for an unknown key the nearest allowed one."""
from __future__ import annotations

import difflib
import re

from pydantic import BaseModel, ValidationError

from .masking import mask_text


def one_line(source: str, err: ValidationError, root: type[BaseModel]) -> str:
    """The first of ``err``'s errors as ``source: where: what`` (``+N more``), an unknown
    key with the nearest allowed one and the allowed ones of its section (``root``'s
    model at that place), secrets masked."""
    e = err.errors()[0]
    loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
    msg = e["msg"].removeprefix("Value error, ")
    if e["type"] == "extra_forbidden":
        parent = _model_at(root, e["loc"][:-1])
        allowed = [k for k in parent.model_fields if k != "source"] if parent else []
        near = difflib.get_close_matches(str(e["loc"][-1]), allowed, n=1)
        msg = f"unknown key ({f'did you mean {near[0]}? ' if near else ''}allowed: {', '.join(allowed)})"
    elif e["type"] == "literal_error":   # a misspelled choice: the nearest one named
        choices = re.findall(r"'([^']*)'", str(e.get("ctx", {}).get("expected", "")))
        near = difflib.get_close_matches(str(e.get("input")).lower(), choices, n=1, cutoff=0.5)
        if near:
            msg = f"{e.get('input')!r}: did you mean {near[0]}? ({msg.removeprefix('Input should be ')})"
    more = f" (+{len(err.errors()) - 1} more)" if len(err.errors()) > 1 else ""
    return mask_text(f"{source}: {loc}: {msg}{more}")


def _model_at(model: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        ann = field.annotation
        inner = getattr(ann, "__args__", None)
        cand = [a for a in (inner or (ann,)) if isinstance(a, type) and issubclass(a, BaseModel)]
        if not cand:
            return None
        model = cand[0]
    return model
