"""YCSB on the toy dialect: SQLite's binding as it is (the toy target is SQLite's file
under another name) — the one line a target of a new dialect adds for YCSB."""
from benchlib.workloads.ycsb.bindings import BINDINGS

BINDINGS.register("toy", "benchlib.workloads.ycsb.bindings.sqlite:SqliteYcsb")
