"""Mutated samples: every import either succeeds or raises ImportFormatError (one line),
never another exception, and never leaves a partial folder behind.

The mutations are the accidents real files have: cut at a line or in the middle of
one (a killed tool, a full disk), lines lost or repeated, a garbled line, a number
replaced by text, an empty file, another tool's file under the wrong kind.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from benchlib import load_results
from benchlib.importers import ImportFormatError, import_output

DATA = Path(__file__).parent / "data"
SEED = 20261122
CASES = 200            # per format (issue 15: at least 200 of each)
# the accidents, taken in turn (case i: MUTATIONS[i % 9]): each one 22 or 23 times per
# format, none left to chance
MUTATIONS = ("cut_line", "cut_byte", "delete", "duplicate", "garble", "number_to_text",
             "empty", "other_tool", "shuffle_two")

SAMPLES = [
    ("ycsb", ["ycsb/pg-load-t4-hist.out", "ycsb/pg-load-t4-hist.err"]),
    ("ycsb", ["ycsb/pg-runa-t4-hist.out", "ycsb/pg-runa-t4-hist.err"]),
    ("ycsb", ["ycsb/pg-runa-t4-hdr.out", "ycsb/pg-runa-t4-hdr.err", "ycsb/hdr/pg-runa-t4-hdr-READ.hdr"]),
    ("ycsb", ["ycsb/pg-runa-t4-ts.out", "ycsb/pg-runa-t4-ts.err"]),
    ("go-ycsb", ["ycsb/go-ycsb/goycsb-pg-runa-t4-interval1.out"]),
    ("linkbench", ["linkbench/pgsql_load.stdout.log"]),
    ("linkbench", ["linkbench/pgsql_request.stdout.log", "linkbench/pgsql_request_final_stats.csv",
                   "linkbench/pgsql_request_stream_stats.csv"]),
    ("pgbench", ["pgbench/pgbench_c4_j2_T30_P1_r_latlimit5.stdout.log",
                 "pgbench/pgbench_c4_j2_T30_P1_r_latlimit5.stderr.log"]),
    ("sysbench", ["sysbench/sysbench_oltp_rw_pgsql_run_T20.stdout.log"]),
]
_NUMBER = re.compile(rb"\d+(?:\.\d+)?")


def _lines(b: bytes) -> list[bytes]:
    return b.split(b"\n")


def mutate(rng: random.Random, data: bytes, other: bytes, how: str | None = None) -> tuple[str, bytes]:
    """``how``: one of MUTATIONS, else one drawn by ``rng``."""
    lines = _lines(data)
    how = how or rng.choice(MUTATIONS)
    if how == "cut_line":
        return how, b"\n".join(lines[:rng.randrange(len(lines) + 1)])
    if how == "cut_byte":
        return how, data[:rng.randrange(len(data) + 1)]
    if how == "delete":
        for _ in range(rng.randint(1, 5)):
            if lines:
                del lines[rng.randrange(len(lines))]
        return how, b"\n".join(lines)
    if how == "duplicate":
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
        return how, b"\n".join(lines)
    if how == "garble":
        i = rng.randrange(len(lines))
        line = bytearray(lines[i])
        for _ in range(rng.randint(1, 6)):
            if line:
                line[rng.randrange(len(line))] = rng.choice(b"x=,[]:;% 0.\xff-")
        lines[i] = bytes(line)
        return how, b"\n".join(lines)
    if how == "number_to_text":
        spots = list(_NUMBER.finditer(data))
        if not spots:
            return how, data
        m = rng.choice(spots)
        return how, data[:m.start()] + rng.choice([b"abc", b"NaN", b"", b"-", b"1e999"]) + data[m.end():]
    if how == "empty":
        return how, b""
    if how == "other_tool":
        return how, other
    assert how == "shuffle_two", how
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return how, b"\n".join(lines)


FORMATS = sorted({k for k, _ in SAMPLES})


@pytest.mark.parametrize("fmt", FORMATS)
def test_mutated_samples_import_or_fail_cleanly(tmp_path, fmt):
    rng = random.Random(f"{SEED}-{fmt}")
    everything = [DATA / f for _, files in SAMPLES for f in files]
    mine = [s for s in SAMPLES if s[0] == fmt]
    out_dir = tmp_path / "exp"
    outcomes: dict[str, int] = {"ok": 0, "error": 0}
    tried: dict[str, int] = {}
    for case in range(CASES):
        kind, files = mine[rng.randrange(len(mine))]
        src = [DATA / f for f in files]
        victim = rng.randrange(len(src))
        other = rng.choice([p for p in everything if p not in src]).read_bytes()
        how, mutated = mutate(rng, src[victim].read_bytes(), other, MUTATIONS[case % len(MUTATIONS)])
        tried[how] = tried.get(how, 0) + 1
        case_dir = tmp_path / "in" / str(case)
        case_dir.mkdir(parents=True)
        paths = []
        for k, p in enumerate(src):
            q = case_dir / p.name
            q.write_bytes(mutated if k == victim else p.read_bytes())
            paths.append(q)
        into = out_dir / f"run{case}"
        try:
            import_output(kind, paths, into)
        except ImportFormatError as e:
            outcomes["error"] += 1
            assert "\n" not in str(e), f"case {case} ({how} {src[victim].name}): {e}"
            assert not into.exists(), f"case {case} ({how}): a folder was left behind"
        except Exception as e:  # noqa: BLE001 - the point of the test
            pytest.fail(f"case {case} ({kind}, {how} of {src[victim].name}): {type(e).__name__}: {e}")
        else:
            outcomes["ok"] += 1
            assert (into / "meta.json").is_file()
            steps = load_results(into)["steps"]
            # an import that succeeds gives real steps, each with its count of operations
            # (a duration may be blank where the files left do not say it: never made up)
            assert len(steps) and (steps["ops"] >= 0).all() and (steps["secs"].dropna() >= 0).all(), \
                f"case {case} ({how} of {src[victim].name}): {steps[['step', 'secs', 'ops']]}"
    leftovers = [p.name for p in out_dir.iterdir() if p.name.startswith(".")] if out_dir.exists() else []
    assert not leftovers, f"temporary folders left: {leftovers}"
    assert outcomes["ok"] > 10 and outcomes["error"] > 10, outcomes
    assert set(tried) == set(MUTATIONS) and min(tried.values()) >= CASES // len(MUTATIONS), tried
