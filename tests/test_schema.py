"""The op and step vocabulary of schema: names built one way, read back one way."""
from __future__ import annotations

import pytest

from benchlib import schema


@pytest.mark.parametrize("phase, loop, name", [
    ("load", None, "l.pre"), ("index", None, "l.post"), ("run", 1, "r.L1"), ("run", 12, "r.L12")])
def test_step_names_and_their_inverse(phase, loop, name):
    assert schema.step_name(phase, loop) == name
    assert schema.phase_of(name) == phase
    assert schema.loop_of(name) == loop


def test_names_outside_the_vocabulary():
    # an importer's own run step names still read as run; anything else is other
    assert schema.phase_of("r.custom") == "run" and schema.loop_of("r.custom") is None
    assert schema.phase_of("warmup") == "other"
    for bad in (("run", 0), ("run", None), ("bulk", None)):
        with pytest.raises(ValueError):
            schema.step_name(*bad)


def test_op_names():
    assert schema.intended("READ") == "Intended-READ" and schema.is_intended("Intended-READ")
    assert not schema.is_intended("READ")
    assert schema.is_batch("INSERT-BATCH") and schema.unit_op("INSERT-BATCH") == "INSERT"
    assert not schema.is_batch("INSERT") and schema.TOTAL_OP == "TOTAL"
