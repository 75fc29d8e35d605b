"""The hardware sampler and what it reads: disks, process trees, host facts (layer 1)."""
