"""Fuzz: mutations of every shipped parameter file (YAML and YCSB property files) through
``benchlib run --dry-run``: each gives exit 0 (a valid experiment, planned) or exit 2
with one line — never a traceback, never a file written."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchlib import cli

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted([*ROOT.glob("parameters/*.yaml"), *ROOT.glob("parameters/workloads/*")])
TOKENS = ["-1", "0", "1e999", "nan", "x", "[]", "{}", "null", "''", "'; drop table t; --",
          "[1, -1]", "99999999999999999999", "true", "\"\\u0000\"", ": :", "- a", "!!python/object:os.system",
          ".inf", "-.inf", ".nan", "1e308", "[1, 1]", "[0.5, 0.5]", "/dev/zero", "/dev/urandom"]


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    kind = rng.randrange(7)
    i = rng.randrange(len(lines)) if lines else 0
    if kind == 0 and lines:                       # a value replaced
        line = lines[i]
        sep = ":" if ":" in line else "="
        if sep in line:
            lines[i] = line.split(sep, 1)[0] + sep + " " + rng.choice(TOKENS)
    elif kind == 1 and lines:                     # a line dropped
        del lines[i]
    elif kind == 2 and lines:                     # a key misspelled
        line = lines[i]
        j = rng.randrange(max(1, min(len(line), 12)))
        lines[i] = line[:j] + rng.choice("xqz_") + line[j + 1:]
    elif kind == 3:                               # cut anywhere (a truncated file)
        return text[:rng.randrange(len(text) + 1)]
    elif kind == 4 and lines:                     # a line repeated (a key twice), maybe another indent
        lines.insert(i, rng.choice(["  " * rng.randrange(3) + lines[i].strip(), lines[i]]))
    elif kind == 5:                               # bytes of garbage
        pos = rng.randrange(len(text) + 1)
        return text[:pos] + "".join(chr(rng.randrange(1, 0x2FF)) for _ in range(rng.randrange(1, 8))) + text[pos:]
    else:                                         # a key added
        lines.insert(i, rng.choice(["threads: 4", "run.loops=3", "bogus: 1", "recordcount=-5",
                                    "targets: [{name: x, url: 'redis://127.0.0.1:1/0'}]"]))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(int(__import__("os").environ.get("BENCHLIB_FUZZ_SEEDS", "8"))))
def test_mutated_parameter_files_are_planned_or_one_line(seed, tmp_path, capsys):
    rng = random.Random(seed)
    data = tmp_path / "data"
    n = 0
    for src in SHIPPED:
        text = src.read_text()
        for k in range(8):
            mutated = mutate(text, rng)
            for _ in range(rng.randrange(2)):
                mutated = mutate(mutated, rng)
            f = tmp_path / f"{src.stem}-{k}{src.suffix}"
            f.write_text(mutated, encoding="utf-8", errors="surrogatepass")
            if src.suffix in (".yaml", ".yml"):
                argv = ["run", str(f), "--dry-run", "--data-dir", str(data)]
            else:  # a YCSB property file as it is
                argv = ["run", str(f), "--dry-run", "--data-dir", str(data), "--target", "basic"]
            rc = cli.main(argv)
            out, err = capsys.readouterr()
            assert rc in (0, 2), (f, mutated, rc, err)
            if rc == 2:
                assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, (mutated, err)
            else:
                assert "runs" in out.splitlines()[0], out
            n += 1
    assert n >= 8 * len(SHIPPED)
    assert not data.exists()          # a dry run writes nothing
