"""``basic``: YCSB's BasicDB — no database at all.

Every operation succeeds at once. With ``-p basicdb.verbose=true`` each operation is
printed in BasicDB's format (``READ usertable user6284781860667377211 [ <all fields>]``),
to check a workload against a real YCSB; without it, it measures the driver's own
ceiling: operations per second with nothing behind them.
"""
from __future__ import annotations

import sys

from .base import Endpoint, Target

OK = 0


def _truthy(v) -> bool:
    return str(v).strip().lower() in ("1", "true", "yes", "on")


class BasicTarget(Target):
    kind = "basic"
    dialect = "basic"
    option_names = ("verbose",)

    @classmethod
    def connect_endpoint(cls, endpoint):
        return None  # no database: a workload's basic binding does nothing, at once

    def endpoint(self):
        return Endpoint("basic", {"verbose": _truthy(self.options.get("verbose", False))})

    def dbms_info(self):
        return {"name": "BasicDB", "version": None}

    def ycsb_create_table(self, table, fields):
        pass

    def create_index(self, table, column):
        pass

    @classmethod
    def ycsb_binding(cls, endpoint, props):
        verbose = endpoint.params.get("verbose") or _truthy(props.extra.get("basicdb.verbose", False))
        return BasicYcsb(props, verbose)


class BasicYcsb:
    def __init__(self, props, verbose: bool):
        self.table = props.table
        self.fields = props.field_names
        self.verbose = verbose
        if verbose:  # swap in the printing versions; the silent ones stay branch-free
            self.read, self.scan, self.update = self._vread, self._vscan, self._vupdate
            self.insert, self.delete = self._vinsert, self._vdelete
        self._out = sys.stdout

    # silent: the driver's ceiling
    def read(self, key, field):
        return OK

    def scan(self, key, count, field):
        return OK

    def update(self, key, field, values):
        return OK

    def insert(self, key, values):
        return OK

    def delete(self, key):
        return OK

    def insert_batch(self, rows):
        if self.verbose:
            for r in rows:
                self._vinsert(r[0], r[1:])
        return OK  # the records are counted from the chunk's units

    # verbose: BasicDB's own lines
    def _fields(self, field):
        # BasicDB: "[ <all fields>]", or each field name followed by a space: "[ field3 ]"
        return "<all fields>" if field < 0 else self.fields[field] + " "

    def _kv(self, field, values):
        names = self.fields if field < 0 else [self.fields[field]]
        return "".join(f"{n}={v} " for n, v in zip(names, values))

    def _vread(self, key, field):
        self._out.write(f"READ {self.table} {key} [ {self._fields(field)}]\n")
        return OK

    def _vscan(self, key, count, field):
        self._out.write(f"SCAN {self.table} {key} {count} [ {self._fields(field)}]\n")
        return OK

    def _vupdate(self, key, field, values):
        self._out.write(f"UPDATE {self.table} {key} [ {self._kv(field, values)}]\n")
        return OK

    def _vinsert(self, key, values):
        self._out.write(f"INSERT {self.table} {key} [ {self._kv(-1, values)}]\n")
        return OK

    def _vdelete(self, key):
        self._out.write(f"DELETE {self.table} {key}\n")
        return OK

    def close(self):
        self._out.flush()
