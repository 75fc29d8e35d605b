"""YCSB's CoreWorkload (workloads A–F): properties, generators, planned steps, clients
and YCSB's text output."""
from .workload import YcsbWorkload

__all__ = ["YcsbWorkload"]
