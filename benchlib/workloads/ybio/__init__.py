"""ybio: the row-I/O micro-benchmark (pgio / SLOB for rows) of ``seeds/ybio.md``."""
from .workload import YbioWorkload

__all__ = ["YbioWorkload"]
