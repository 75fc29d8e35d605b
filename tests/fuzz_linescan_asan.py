"""Memory safety of the C line scanner: mutated YCSB lines through a build with
AddressSanitizer and UndefinedBehaviorSanitizer (not collected by pytest: it needs
the sanitizer build, and takes a minute). Every buffer is exactly its data's size,
so a read past the end is caught.

    gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -shared -fPIC \\
        -I$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])') \\
        benchlib/importers/_linescan.c -o /tmp/asan/_linescan.so
    LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
        .venv/bin/python tests/fuzz_linescan_asan.py /tmp/asan [seed] [cases]

Last run (2026-11-22): seeds 1-4, 20,000 cases each, no report.
"""
from __future__ import annotations

import random
import sys
from pathlib import Path

YCSB = Path(__file__).resolve().parent / "data" / "ycsb"
FILES = ["pg-runa-t4-hdr.err", "pg-runa-t4-ts.out", "pg-runa-t4-hist.err", "pg-load-t4-hist.out",
         "pg-runa-t4-ts.err"]
ALPHABET = b"0123456789 .:[],=-NaEe\n\t\x7fabcXYZ"


def mutate(rng: random.Random, lines: list[bytes]) -> bytes:
    data = b"\n".join(rng.choice(lines) for _ in range(rng.randint(1, 6)))
    for _ in range(rng.randint(0, 4)):
        if not data:
            break
        i, how = rng.randrange(len(data)), rng.random()
        if how < 0.3:
            data = data[:i]
        elif how < 0.6:
            data = data[:i] + bytes([rng.choice(ALPHABET)]) + data[i + 1:]
        elif how < 0.8:
            data = data[:i] + data[i + rng.randint(1, 20):]
        else:
            data = data[:i] + bytes(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40))) + data[i:]
    return data


def main() -> None:
    sys.path.insert(0, sys.argv[1])
    import _linescan
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    lines = [ln for f in FILES for ln in (YCSB / f).read_bytes().split(b"\n") if ln]
    answered = 0
    for _ in range(cases):
        buf = memoryview(bytearray(mutate(rng, lines)))
        answered += (_linescan.scan_status(buf) is not None) + (_linescan.scan_summary(buf) is not None)
    print(f"{cases} cases, {answered} scans answered, no sanitizer report")


if __name__ == "__main__":
    main()
