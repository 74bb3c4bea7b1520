#!/usr/bin/env bash
# Benchmark: the decoders at streaming speed (issue 41). `nbg parse --json`, `info`,
# `image --json` (the ledger, every command and coefficient stream decoded as an owner) and
# `coefficients --json` (every stream decoded and re-encoded, kernels put together) on the
# largest real file of each family, each paired with its floors in the same run: the file's
# read time (`cat FILE`) and the hashing floor (`openssl dgst -sha256 FILE`). Warm page cache,
# the command and its floors alternated, medians.
# Target: under 50 ms per MB for every command, peak RSS flat (a small multiple of the file).
# Usage: bench/decoders.sh [RUNS] [FILE...]   (default 11 runs; the largest .nb of
#   ../shared/corpus/v1 and of ../shared/corpus/v2). NBG=path/to/nbg skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
shift || true
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  for dir in ../shared/corpus/v1 ../shared/corpus/v2; do
    # The largest regular file, never a symlink.
    f=$(find "$dir" -maxdepth 1 -type f -name '*.nb' -printf '%s %p\n' 2>/dev/null | sort -n | tail -1 | cut -d' ' -f2-)
    [ -n "$f" ] && files+=("$f")
  done
fi
[ ${#files[@]} -gt 0 ] || { echo "no files: pass FILE... or put ../shared beside the checkout" >&2; exit 2; }
command -v openssl > /dev/null || { apt-get update -qq && apt-get install -y -qq openssl > /dev/null; }
if [ -z "${NBG:-}" ]; then
  flock /tmp/nbg-cargo.lock cargo build --release --locked -q # the shared build lock of this machine
  NBG=$PWD/target/release/nbg
fi
python3 - "$NBG" "$runs" "${files[@]}" <<'PY'
import os, statistics, subprocess, sys, time

nbg, runs, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
commands = [["parse", "--json"], ["info"], ["image", "--json"], ["coefficients", "--json"]]


def once(argv):
    """Wall seconds and peak RSS (KiB) of one run, output discarded (the child's own rusage)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    return wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


print("| file | MB | command | exit | median | ms/MB | read floor | hash floor | x hash | peak RSS |")
print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for f in files:
    mb = os.path.getsize(f) / 1e6
    with open(f, "rb") as h:
        h.read()  # warm the page cache
    for c in commands:
        cmd, cat, dgst = [], [], []
        for _ in range(runs):
            cat.append(once(["cat", f])[0])
            w, rss, code = once([nbg, *c, f])
            cmd.append((w, rss, code))
            dgst.append(once(["openssl", "dgst", "-sha256", f])[0])
        m = statistics.median(w for w, _, _ in cmd)
        mc, md = statistics.median(cat), statistics.median(dgst)
        paired = statistics.median(w / d for (w, _, _), d in zip(cmd, dgst))
        rss = max(r for _, r, _ in cmd) / 1024
        codes = sorted({code for _, _, code in cmd})
        print(f"| {os.path.basename(f)} | {mb:.2f} | {' '.join(c)} | {','.join(map(str, codes))} |"
              f" {m * 1e3:.1f} ms | {m * 1e3 / mb:.1f} | {mc * 1e3:.1f} ms | {md * 1e3:.1f} ms |"
              f" {paired:.1f} | {rss:.1f} MiB |")
PY
