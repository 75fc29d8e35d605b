"""The user's error: invalid input, said in one line (the CLI prints it, exit 2).

Below every layer, so that the registries (``registries/``) raise it for a name they do
not hold, and params, the runner and the importers for what they refuse.
"""
from __future__ import annotations


class ParameterError(Exception):
    """Invalid experiment parameters; the message is one line."""
