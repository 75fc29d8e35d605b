"""Facts about the machine a run ran on, collected automatically for meta.json
(what the seed's "Connections" section shows: CPU, cores, RAM, kernel)."""
from __future__ import annotations

import os
import platform
import socket
import sys


def cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def host_facts() -> dict:
    import psutil
    return {
        "hostname": socket.gethostname(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "ram_bytes": psutil.virtual_memory().total,
        "kernel": platform.release(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
    }
