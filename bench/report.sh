#!/usr/bin/env bash
# Benchmark: `nbg report` on large graphs. Builds a 5 MiB synthetic v2 graph (the project's own
# builder) and reports one public v1 file when ../shared/corpus is present; prints the page size,
# the generation time, and, in headless Chromium, the wall time to load the page (minus an empty
# page's) and the page's own script time (data-init-ms: parse the embedded data, draw the map;
# with #offset=... also zoom to single bytes and open the hex view).
# Usage: bench/report.sh [BYTES]   (default 5242880). NBG=path/to/nbg skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
bytes=${1:-5242880}
if [ -z "${NBG:-}" ]; then
  cargo build --release --locked -q
  NBG=$PWD/target/release/nbg
fi
chrome=/usr/bin/chromium
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load() { # URL -> "wall_s init_ms"
  rm -rf "$work/profile"
  local t0 t1 dom
  t0=$(date +%s.%N)
  dom=$("$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --dump-dom "$1" 2>/dev/null)
  t1=$(date +%s.%N)
  local init
  init=$(grep -o 'data-init-ms="[0-9]*"' <<<"$dom" | grep -o '[0-9]*' || echo -)
  grep -q 'data-status="ready"' <<<"$dom" || init="not-ready"
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}', sys.argv[3])" "$t0" "$t1" "$init"
}

printf '<!DOCTYPE html><html><body><p>empty</p></body></html>' > "$work/empty.html"
read -r empty _ < <(load "file://$work/empty.html")
echo "empty page load: ${empty} s (Chromium start-up, subtracted below)"

"$NBG" synth-corpus --files 1 --bytes "$bytes" -o "$work/corpus" > /dev/null
inputs=("$(ls "$work"/corpus/*.nb | head -1)")
public=../shared/corpus/v1/ksnn-mobilenet_caffe-000e.nb
[ -f "$public" ] && inputs+=("$public")

for f in "${inputs[@]}"; do
  out="$work/$(basename "$f").html"
  t0=$(date +%s.%N)
  "$NBG" report "$f" -o "$out" 2> /dev/null
  t1=$(date +%s.%N)
  size=$(stat -c %s "$f")
  mid=$((size / 2))
  read -r wall init < <(load "file://$out")
  read -r wall2 init2 < <(load "file://$out#offset=$mid")
  python3 - "$(basename "$f")" "$size" "$(stat -c %s "$out")" "$t0" "$t1" "$wall" "$init" "$wall2" "$init2" "$empty" <<'PY'
import sys
name, size, page, t0, t1, wall, init, wall2, init2, empty = sys.argv[1:]
print(f"{name}: {int(size):,} bytes -> page {int(page):,} bytes, generated in {float(t1) - float(t0):.3f} s")
print(f"  open: load {float(wall) - float(empty):+.3f} s over an empty page, script {init} ms")
print(f"  open at #offset={int(size)//2} (zoom to single bytes + hex view): load {float(wall2) - float(empty):+.3f} s, script {init2} ms")
PY
done
