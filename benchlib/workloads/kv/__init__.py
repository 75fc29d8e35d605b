"""The seed's key-value microbenchmark: prepare (load) and a client mix of read,
insert, remove, update and scan, on Redis natively and on any SQL target."""
from .workload import KvWorkload

__all__ = ["KvWorkload"]
