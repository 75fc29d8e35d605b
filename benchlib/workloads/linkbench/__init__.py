"""LinkBench, the social-graph benchmark: properties, distributions, schema and
statements per dialect, load and request clients."""
from .workload import LinkBenchWorkload

__all__ = ["LinkBenchWorkload"]
