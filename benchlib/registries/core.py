"""One shape for every registry: a name → what it names, registered, looked up, listed.

A :class:`Registry` holds each entry as a ``"module:Attr"`` string (or the object
itself, a plugin's or a test's) with the facts its kind needs (a target's URL schemes,
an executor's package); the string is imported when the entry is first asked for, so a
low layer names what a higher one implements without importing it, and a missing
optional driver matters only to whoever uses it. A name it does not hold raises
:class:`UnknownName` (a :class:`~benchlib.errors.ParameterError`: one line, exit 2)
naming the known ones and the nearest.

:func:`import_ref` and :func:`import_module` are benchlib's only imports by string:
``tests/test_layers.py`` reads every string they are given (each registry's entries, a
workload's own modules) and places it on the layer of whoever asks for it.
"""
from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..errors import ParameterError


class UnknownName(ParameterError, ValueError):
    """A name a registry does not hold; the message names the known ones and the nearest.
    A ValueError too, so a pydantic validator reports it as the field's error."""

    def __init__(self, what: str, name: str, known: list[str], message: str = ""):
        self.what, self.name, self.known = what, name, list(known)
        near = difflib.get_close_matches(str(name), self.known, n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        super().__init__((message or f"unknown {what} {name!r} (known: "
                          f"{', '.join(self.known) or 'none'})") + hint)


def import_module(name: str) -> ModuleType:
    """The module a dotted name names (a workload's own tables or plots, a streamer)."""
    return importlib.import_module(name)


def import_ref(ref: str) -> Any:
    """The object a ``"module:Attr"`` (or ``"module:Class.attr"``) reference names."""
    mod, _, name = ref.partition(":")
    obj: Any = import_module(mod)
    for part in filter(None, name.split(".")):
        obj = getattr(obj, part)
    return obj


@dataclass
class Entry:
    name: str
    ref: Any                                  # "module:Attr", or the object itself
    facts: dict[str, Any] = field(default_factory=dict)   # what its kind says of it

    @property
    def loaded(self) -> bool:
        return not isinstance(self.ref, str)


class Registry:
    """Names of one kind (``what``: "workload", "target" …) → their objects."""

    def __init__(self, what: str):
        self.what = what
        self._entries: dict[str, Entry] = {}
        self._default: str | None = None

    def register(self, name: str, ref: Any, *, default: bool = False, **facts: Any) -> None:
        """Make ``name`` an entry (a name again: replaced); ``ref`` is ``"module:Attr"``
        or the object; ``default``: what an experiment that names none gets."""
        self._entries[name] = Entry(name, ref, facts)
        if default:
            self._default = name

    def unregister(self, name: str) -> None:
        """Forget ``name`` (a test's toy, after the test)."""
        self._entries.pop(name, None)
        if self._default == name:
            self._default = None

    def names(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(list(self._entries.values()))

    def default(self) -> str:
        if self._default is None:
            raise UnknownName(self.what, "(default)", self.names(), f"no default {self.what}")
        return self._default

    def check(self, name: str) -> str:
        """``name`` if it is registered; :class:`UnknownName` otherwise."""
        if name not in self._entries:
            raise UnknownName(self.what, name, self.names())
        return name

    def entry(self, name: str) -> Entry:
        return self._entries[self.check(name)]

    def facts(self, name: str) -> dict[str, Any]:
        return self.entry(name).facts

    def get(self, name: str) -> Any:
        """What ``name`` names, imported on first use (an ImportError of a missing
        optional package goes to the caller, who knows what to install)."""
        entry = self.entry(name)
        if not entry.loaded:
            entry.ref = import_ref(entry.ref)
        return entry.ref

    def refs(self) -> dict[str, str]:
        """Each entry's ``"module:Attr"`` (a loaded one's, read off the object)."""
        return {e.name: e.ref if isinstance(e.ref, str) else ref_of(e.ref) for e in self}


def ref_of(obj: Any) -> str:
    """A ``"module:Qualname"`` reference a spawned process can import ``obj`` by."""
    return f"{obj.__module__}:{obj.__qualname__}"
