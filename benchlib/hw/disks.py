"""Which block devices count as disks: the same rule for the live sampler and the
iostat importer, so that a live run and an imported run count the same devices."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable

# Devices whose I/O is already counted on a physical disk (device-mapper/LVM, md RAID,
# loop files, DRBD), or that are not storage (ram, zram) or not relevant (cd, floppy).
_VIRTUAL = re.compile(r"^(loop|ram|zram|dm-|md|sr|fd|drbd)\d")
# Partitions: their I/O is also in their disk's line.
_PARTITION = re.compile(r"^((s|v|xv|h)d[a-z]+\d+|(nvme\d+n\d+|mmcblk\d+|nbd\d+|rbd\d+|loop\d+)p\d+)$")


def is_whole_disk(name: str) -> bool:
    """True for a whole physical disk (sda, vda, xvdb, nvme0n1, mmcblk0 …).

    Summing I/O over all devices double counts: a partition's I/O is in its disk's
    figures, and a dm-*/md*/loop device's I/O reaches a physical disk too. So the
    default counts whole disks only, by name (a log of another machine has nothing
    else); names it does not know count as disks. iostat -N (LVM names) defeats it:
    pass the devices explicitly then.
    """
    name = name.removeprefix("/dev/")
    return not (_VIRTUAL.match(name) or _PARTITION.match(name))


def disk_selector(devices: Iterable[str] | Callable[[str], bool] | None) -> Callable[[str], bool]:
    """``devices`` as a predicate: None = :func:`is_whole_disk`, a callable as is, or
    a list of names (``sda`` or ``/dev/sda``) to count exactly those."""
    if devices is None:
        return is_whole_disk
    if callable(devices):
        return devices
    wanted = {d.removeprefix("/dev/") for d in devices}
    return lambda name: name.removeprefix("/dev/") in wanted
