#!/usr/bin/env bash
# Benchmark: the board user's commands (issue 32), warm page cache, medians of paired runs.
#   1. `nbg info` on the largest public file (target: well under a second)
#   2. `nbg carve` over a 2 GiB image of random bytes with the controls embedded at random
#      offsets, against one `openssl dgst -sha256` pass over the same image (the floor of
#      reading it once); peak RSS (target: constant, a few MiB, whatever the image size)
# Usage: bench/board.sh [RUNS] [GIB]   (default 3 runs, a 2 GiB image)
# The image goes to a temporary folder under /tmp that is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
gib=${2:-2}
if [ ! -x /usr/bin/time ]; then
  apt-get update -qq && apt-get install -y -qq time > /dev/null
fi
command -v openssl > /dev/null || { apt-get update -qq && apt-get install -y -qq openssl > /dev/null; }
flock /tmp/nbg-cargo.lock cargo build --release --locked -q
nbg=$PWD/target/release/nbg
work=$(mktemp -d /tmp/nbg-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# run CMD...: prints "wall_s rss_kib"
run() {
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -v -o "$work/time.txt" "$@" > /dev/null || true
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.3f}', $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt"))"
}

largest=$(ls -S ../shared/corpus/v1/*.nb controls/public/v1/*.nb 2> /dev/null | head -1)
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "info on $largest ($(stat -c %s "$largest") bytes), $runs runs (wall s, peak KiB):"
for _ in $(seq "$runs"); do run "$nbg" info "$largest"; done

python3 - "$work/image.bin" "$gib" controls/*.nb controls/public/v1/*.nb <<'PY'
import os, random, sys
out, gib, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
random.seed(32)
total = gib << 30
step = total // (len(files) + 1)
with open(out, "wb") as f:
    for path in files:
        n = step - os.path.getsize(path)
        while n > 0:
            k = min(n, 64 << 20)
            f.write(os.urandom(k))
            n -= k
        f.write(open(path, "rb").read())
    f.write(os.urandom(total - f.tell()))
print(f"image: {total} bytes, {len(files)} files embedded")
PY
cat "$work/image.bin" > /dev/null
echo "carve vs openssl on the image, $runs paired runs (wall s, peak KiB):"
for _ in $(seq "$runs"); do
  echo "  openssl $(run openssl dgst -sha256 "$work/image.bin")   carve $(run "$nbg" carve "$work/image.bin")"
done
"$nbg" carve "$work/image.bin" | head -1
