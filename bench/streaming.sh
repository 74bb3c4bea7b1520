#!/usr/bin/env bash
# Benchmark: streaming fingerprints (issue 17). `nbg inventory` against the physical floor, one
# `openssl dgst -sha256` pass (one SHA-256 pass per byte on one core), on the same files in the
# same run, warm page cache, paired runs, medians.
#   1. one 1 GiB file          (target: wall <= 1.15x openssl, peak RSS < 64 MiB)
#   2. one 4 GiB file          (target: completes, peak RSS < 64 MiB)
#   3. 64 x 16 MiB, 128 x 16 MiB (target: <= 1.15x openssl, RSS < 64 MiB and flat)
#   4. `nbg image --json` on the 1 GiB file (the ledger over ranges, emission read back from
#      the file): wall and peak RSS, next to openssl on the same file
# Usage: bench/streaming.sh [RUNS] [CASES]   (default 5 runs; CASES any of "1g 4g corpus image")
# Big files go to a temporary folder under /tmp that is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
cases=${2:-"1g 4g corpus image"}
if [ ! -x /usr/bin/time ]; then
  apt-get update -qq && apt-get install -y -qq time > /dev/null
fi
command -v openssl > /dev/null || { apt-get update -qq && apt-get install -y -qq openssl > /dev/null; }
flock /tmp/nbg-cargo.lock cargo build --release --locked -q  # the shared build lock of this machine
nbg=$PWD/target/release/nbg
work=$(mktemp -d /tmp/nbg-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# run NAME CMD... -> appends "wall_s rss_kib" to $work/NAME
run() {
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -v -o "$work/time.txt" "$@" > /dev/null
  t1=$(date +%s.%N)
  local rss user sys
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  user=$(sed -n 's/.*User time (seconds): //p' "$work/time.txt")
  sys=$(sed -n 's/.*System time (seconds): //p' "$work/time.txt")
  python3 -c "print(f'{$t1 - $t0:.3f} $rss {$user + $sys:.2f}')" >> "$work/$name"
}

# measure_image LABEL FILE: paired runs of openssl and `nbg image --json` on FILE
measure_image() {
  local label=$1 file=$2
  rm -f "$work/openssl" "$work/nbg"
  cat "$file" > /dev/null
  for _ in $(seq "$runs"); do
    run openssl openssl dgst -sha256 "$file"
    run nbg "$nbg" image "$file" --json
  done
  summarize "$label"
}

# summarize LABEL: the table row of the runs in $work/openssl and $work/nbg
summarize() {
  python3 - "$1" "$work/openssl" "$work/nbg" <<'PY'
import statistics, sys
label, o, n = sys.argv[1], sys.argv[2], sys.argv[3]
rows = lambda p: [tuple(map(float, l.split())) for l in open(p)]
o, n = rows(o), rows(n)
om, nm = statistics.median(r[0] for r in o), statistics.median(r[0] for r in n)
paired = statistics.median(b[0] / a[0] for a, b in zip(o, n))
rss = max(r[1] for r in n) / 1024
cpu = statistics.median(r[2] for r in n)
ocpu = statistics.median(r[2] for r in o)
print(f"| {label} | {om:.3f} s | {nm:.3f} s | {nm / om:.2f} | {paired:.2f} | {rss:.1f} MiB |"
      f" {ocpu:.2f} s / {cpu:.2f} s |"
      f" openssl {' '.join(f'{r[0]:.2f}' for r in o)}; nbg {' '.join(f'{r[0]:.2f}' for r in n)} |")
PY
}

# measure LABEL DIR: paired runs of openssl and nbg inventory over DIR/*.nb; prints a table row
measure() {
  local label=$1 dir=$2
  rm -f "$work/openssl" "$work/nbg"
  cat "$dir"/*.nb > /dev/null # warm the page cache for both
  for _ in $(seq "$runs"); do
    run openssl openssl dgst -sha256 "$dir"/*.nb
    run nbg "$nbg" inventory "$dir/corpus.json" --out "$work/inventory.json" --force
  done
  summarize "$label"
}

echo "machine: $(nproc) cores, $(grep -m1 -o sha_ni /proc/cpuinfo || echo 'no sha_ni'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs per case: $runs (paired: openssl, then nbg inventory); medians"
echo
echo "| case | openssl dgst -sha256 (floor) | nbg inventory | ratio of medians | median paired ratio | nbg peak RSS (max) | CPU openssl / nbg | wall of each run |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for c in $cases; do
  case $c in
    1g)
      "$nbg" synth-corpus --files 1 --bytes 1073741824 -o "$work/1g"
      measure "1 x 1 GiB" "$work/1g"
      rm -rf "$work/1g"
      ;;
    4g)
      "$nbg" synth-corpus --files 1 --bytes 4294967296 -o "$work/4g"
      measure "1 x 4 GiB" "$work/4g"
      rm -rf "$work/4g"
      ;;
    corpus)
      "$nbg" synth-corpus --files 64 --bytes 16777216 -o "$work/c64"
      measure "64 x 16 MiB" "$work/c64"
      rm -rf "$work/c64"
      "$nbg" synth-corpus --files 128 --bytes 16777216 -o "$work/c128"
      measure "128 x 16 MiB" "$work/c128"
      rm -rf "$work/c128"
      ;;
    image)
      "$nbg" synth-corpus --files 1 --bytes 1073741824 -o "$work/1g"
      measure_image "nbg image --json, 1 x 1 GiB" "$work/1g/bulk-0000.nb"
      rm -rf "$work/1g"
      ;;
  esac
done
