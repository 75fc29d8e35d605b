"""Run folders and the catalog of runs (layer 4)."""
