"""Where every random request stream of a run comes from: one rule, in one place.

A run has one seed (``meta.json``'s ``seed``: the experiment's ``seed:``, or one drawn
at random when it names none). Each client thread of each step draws from a stream of
its own, derived from the seed, the run's repetition, the step's name and the client's
index by :data:`RULE` (NumPy's ``SeedSequence`` spawn keys: a hash of all four, so two
steps, two repetitions or two clients never share a stream). The runner
(``run/step.py``) gives each client the int :func:`client_seed` makes, whatever the
workload; a workload splits it into streams of its own by purpose with
:func:`sequence` / :func:`generator` (YCSB's operation, key, scan, field and length
streams …), never with ``seed + i``.

So a run is reproducible: the same seed, repetition, step and client give the same
requests (a resumed run draws its remaining steps as the first attempt would have); and
no loop replays another (before this rule every step's client ``g`` drew ``seed + g``:
loop 2 asked for loop 1's keys in loop 1's order). The rule's text is recorded in
``meta.json`` (``seed_rule``), and a rerun keeps a killed run's steps only when it was
drawn by the same rule.
"""
from __future__ import annotations

import random

import numpy as np

RULE = ("seeds-1: client seed = SeedSequence(entropy=seed, spawn_key=(repetition, "
        "int.from_bytes(step.encode(), 'big'), client)).generate_state(1, uint64)[0]; "
        "a workload's stream for a purpose = SeedSequence(entropy=client seed, "
        "spawn_key=(int.from_bytes(purpose.encode(), 'big'),))")


def name_key(name: str) -> int:
    """A step's or purpose's name as a spawn-key word: its UTF-8 bytes as one big-endian
    integer (distinct names, distinct keys; NumPy splits it into 32-bit words)."""
    return int.from_bytes(str(name).encode(), "big")


def client_seed(seed: int, step: str, client: int, repetition: int | None = 1) -> int:
    """The seed of client ``client`` (0-based, of the step's threads) in step ``step``
    (``r.L2``) of repetition ``repetition`` of a run seeded ``seed``: a 64-bit int."""
    if seed is None or int(seed) < 0:
        raise ValueError(f"seed: a whole number >= 0, not {seed!r}")
    ss = np.random.SeedSequence(int(seed), spawn_key=(int(repetition or 1), name_key(step), int(client)))
    return int(ss.generate_state(1, np.uint64)[0])


def sequence(seed: int | None, purpose: str) -> np.random.SeedSequence:
    """A client's stream for ``purpose`` (``"ycsb plan"``), from its :func:`client_seed`
    (None: fresh entropy, for a client made outside a run)."""
    return np.random.SeedSequence(None if seed is None else int(seed), spawn_key=(name_key(purpose),))


def generator(seed: int, purpose: str) -> np.random.Generator:
    """The NumPy generator of :func:`sequence`."""
    return np.random.default_rng(sequence(seed, purpose))


def python_random(seed: int | None, purpose: str) -> random.Random:
    """A ``random.Random`` on the stream of :func:`sequence` (its first 64 bits)."""
    return random.Random(int(sequence(seed, purpose).generate_state(1, np.uint64)[0]))
