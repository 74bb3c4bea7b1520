#!/usr/bin/env python3
"""Benchmark: `nbg_lab.parse(f).to_dict()` in one Python process against shelling out to
`nbg parse --json f` and reading its JSON (issue 69: at most half).

Usage: python3 bench/python_parse.py [FILE] [RUNS]   (default: the largest public file, 21 runs)
Needs the installed wheel (bash .ci/setup) and target/release/nbg (cargo build --release).
The two ways alternate run by run (which goes first alternates too); each pair gives one ratio
in-process / shell-out. Prints both medians and the median ratio.
"""

import json
import pathlib
import statistics
import subprocess
import sys
import time

import nbg_lab

root = pathlib.Path(__file__).resolve().parents[1]
nbg = root / "target" / "release" / "nbg"
if not nbg.is_file():
    sys.exit(f"{nbg} is missing: cargo build --release")
if len(sys.argv) > 1 and sys.argv[1]:
    path = pathlib.Path(sys.argv[1])
else:
    files = [p for b in (root.parent / "shared" / "corpus", root / "controls") for p in b.rglob("*.nb")]
    path = max(files, key=lambda p: p.stat().st_size)
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 21


def in_process():
    return nbg_lab.parse(path).to_dict()


def shell_out():
    out = subprocess.run([str(nbg), "parse", "--json", str(path)], capture_output=True, check=True)
    return json.loads(out.stdout)


assert in_process() == shell_out(), "the two documents differ"
times = {in_process: [], shell_out: []}
for i in range(runs):
    order = (in_process, shell_out) if i % 2 == 0 else (shell_out, in_process)
    for way in order:
        t = time.perf_counter()
        way()
        times[way].append(time.perf_counter() - t)
ratios = [a / b for a, b in zip(times[in_process], times[shell_out])]
size = path.stat().st_size
print(f"file: {path.name} ({size} bytes), {runs} paired runs")
print(f"in-process parse().to_dict(): median {statistics.median(times[in_process]) * 1e3:.1f} ms")
print(f"nbg parse --json + json.loads: median {statistics.median(times[shell_out]) * 1e3:.1f} ms")
print(f"ratio in-process / shell-out: median {statistics.median(ratios):.3f}")
