"""``basic``: no database at all (the kind of a benchmark's BasicDB).

A workload's ``basic`` binding does nothing, at once: it measures the driver's own
ceiling, operations per second with nothing behind them. The option ``verbose`` asks
the binding to print each operation (in BasicDB's format where the workload has one).
"""
from __future__ import annotations

from .base import Target
from .dialect import Dialect


def truthy(v) -> bool:
    return str(v).strip().lower() in ("1", "true", "yes", "on")


class BasicTarget(Target):
    kind = "basic"
    dialect = Dialect("basic", placeholder="", ident_quote="", sql=False)
    option_names = ("verbose",)

    @classmethod
    def connect_endpoint(cls, endpoint):
        return None  # no database: a workload's basic binding does nothing, at once

    def endpoint(self):
        return self.make_endpoint({"verbose": truthy(self.options.get("verbose", False))})

    def dbms_info(self):
        return {"name": "BasicDB", "version": None}
