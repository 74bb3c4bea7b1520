#!/usr/bin/env bash
# Benchmark: `nbg sweep` time per byte and peak memory against file size, on synthetic v2 graphs
# the project's own builder writes (every byte flipped three ways and parsed again, check-only).
# Usage: bench/sweep.sh [SIZES...]   (default 65536 262144 1048576 4194304 bytes)
# Prints, per size: wall seconds, microseconds per byte, peak RSS and RSS per file byte (the
# sweep holds the file, one working copy per worker and one outcome per offset).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(65536 262144 1048576 4194304)
cargo build --release --locked -q
nbg=$PWD/target/release/nbg
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-10s %-10s %-10s %-12s %-10s %s\n' bytes file wall_s us_per_byte rss_kib rss_bytes_per_file_byte
for size in "${sizes[@]}"; do
  "$nbg" synth-corpus --files 1 --bytes "$size" -o "$work/c$size" > /dev/null
  f=$(ls "$work/c$size"/*.nb)
  actual=$(stat -c %s "$f")
  t0=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$work/rss" "$nbg" sweep "$f" > /dev/null
  t1=$(date +%s.%N)
  python3 - "$size" "$actual" "$t0" "$t1" "$(cat "$work/rss")" <<'PY'
import sys
size, actual = int(sys.argv[1]), int(sys.argv[2])
t0, t1, rss = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
wall = t1 - t0
print(f"{size:<10} {actual:<10} {wall:<10.2f} {wall / actual * 1e6:<12.2f} {rss:<10} {rss * 1024 / actual:.1f}")
PY
done
