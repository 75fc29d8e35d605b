"""The user's errors: invalid input, said in one line (the CLI prints it, exit 2).

Below every layer, so that the registries (``registries/``) raise ParameterError for a
name they do not hold, params, the runner and the importers for what they refuse, and
the store (``store/folders``, ``store/upgrade``) ResultsError for a folder it cannot use.
"""
from __future__ import annotations


class ParameterError(Exception):
    """Invalid experiment parameters; the message is one line."""


class ResultsError(Exception):
    """A run folder that cannot be read or written; the message is one line."""
