#!/usr/bin/env bash
# Benchmark: `nbg inventory` against one `openssl dgst -sha256` pass over the same files (the
# floor for a hashing inventory), on a synthetic corpus built by the project's own builder.
# Usage: bench/inventory.sh [FILES] [BYTES_PER_FILE]   (default 64 x 16 MiB = 1 GiB)
# Prints wall times, the ratio, and peak RSS; then doubles the corpus and measures RSS again.
set -euo pipefail
cd "$(dirname "$0")/.."
files=${1:-64}
bytes=${2:-16777216}
cargo build --release --locked -q
nbg=$PWD/target/release/nbg
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() { # DIR -> prints "openssl_s nbg_s ratio rss_kib"
  local dir=$1
  cat "$dir"/*.nb > /dev/null                       # warm the page cache for both runs
  local t0 t1 t2
  t0=$(date +%s.%N)
  openssl dgst -sha256 "$dir"/*.nb > /dev/null
  t1=$(date +%s.%N)
  rm -f "$work/inv.json"
  /usr/bin/time -f '%M' -o "$work/rss" "$nbg" inventory "$dir/corpus.json" --out "$work/inv.json"
  t2=$(date +%s.%N)
  python3 - "$t0" "$t1" "$t2" "$(cat "$work/rss")" <<'PY'
import sys
t0, t1, t2, rss = map(float, sys.argv[1:])
o, n = t1 - t0, t2 - t1
print(f"{o:.3f} {n:.3f} {n / o:.2f} {int(rss)}")
PY
}

"$nbg" synth-corpus --files "$files" --bytes "$bytes" -o "$work/c1"
total=$(du -sb "$work/c1" | cut -f1)
read -r o1 n1 r1 rss1 < <(measure "$work/c1")
echo "corpus: $files files, $total bytes"
echo "openssl dgst -sha256: ${o1}s   nbg inventory: ${n1}s   ratio: ${r1}   peak RSS: ${rss1} KiB"

"$nbg" synth-corpus --files $((files * 2)) --bytes "$bytes" -o "$work/c2"
read -r o2 n2 r2 rss2 < <(measure "$work/c2")
echo "doubled: $((files * 2)) files"
echo "openssl dgst -sha256: ${o2}s   nbg inventory: ${n2}s   ratio: ${r2}   peak RSS: ${rss2} KiB"
