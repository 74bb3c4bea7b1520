#!/usr/bin/env bash
# Run one fuzz target for SECONDS, seeded from the synthetic controls and the small public v1
# files; print libFuzzer's final stats line. Usage: fuzz/run.sh TARGET SECONDS [RUNS]
# (stops at SECONDS or after RUNS executions, whichever comes first)
# Targets: parse, image, diff, corpus_config (NBG and corpus configs); npz, onnx_audit, policy
# (the ONNX engine's inputs); capture_spec (a capture set's differential.json); commands (one
# LOADSTATE buffer, the front-end command stream decoder); coefficients (one COEF_DATA entry,
# the coefficient stream decoder); coefficient_layouts (TP fully-connected buffers, VIP8000
# zero-run buffers and shader images under shapes the input picks).
# Crashes land in fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")"
target=$1
seconds=$2
runs=${3:--1}
seeds=corpus/$target
mkdir -p "$seeds"
# entries DATA TABLE PREFIX FILE...: each entry of the v2 index table TABLE (offset, size pairs
# into section DATA) of each FILE, after PREFIX zero bytes, as one seed.
entries() {
  python3 - "$seeds" "$@" <<'PY'
import struct, sys
out, data, table, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for path in sys.argv[5:]:
    b = open(path, "rb").read()
    n = struct.unpack_from("<I", b, 0x38)[0]
    secs = {}
    for i in range(n):
        w = struct.unpack_from("<11I", b, 0x3c + 44 * i)
        secs[w[0]] = (w[1], w[3])
    if data in secs and table in secs:
        (do, _), (to, ts) = secs[data], secs[table]
        for e in range(ts // 8):
            off, size = struct.unpack_from("<II", b, to + 8 * e)
            name = path.rsplit("/", 1)[-1]
            open(f"{out}/{name}.{e}", "wb").write(bytes(prefix) + b[do + off:do + off + size])
PY
}
case "$target" in
  corpus_config)
    cp ../controls/corpus.json "$seeds/controls.json"
    [ -f ../../shared/corpus/corpus.json ] && cp ../../shared/corpus/corpus.json "$seeds/public.json"
    ;;
  npz) cp ../onnx/fixtures/*.npz ../onnx/silero/*.npz "$seeds/" ;;
  onnx_audit) cp ../onnx/fixtures/*.onnx "$seeds/" ;;
  capture_spec)
    for d in ../differentials/*/; do cp "$d/differential.json" "$seeds/$(basename "$d").json"; done
    ;;
  policy) cp ../policy/hybrid-policy.json "$seeds/" ;;
  commands)
    # Every LOADSTATE buffer (section 21, table 27) of the board files and a few serializer
    # controls, one seed each.
    entries 21 27 0 ../controls/public/v2/*.nb ../controls/serializer/conv-*.nb
    ;;
  coefficients)
    # Every COEF_DATA entry (section 24, table 23) of the board files, after 8 zero layout
    # bytes, one seed each.
    entries 24 23 8 ../controls/public/v2/*.nb
    ;;
  *)
    cp ../controls/*.nb "$seeds/"
    for f in ../../shared/corpus/v1/*.nb; do
      # Small public files only: libFuzzer mutates faster on inputs under 128 KiB.
      [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 131072 ] && cp "$f" "$seeds/"
    done
    ;;
esac
features=()
case "$target" in npz | onnx_audit | policy) features=(--features onnx) ;; esac
cargo fuzz run --sanitizer none "${features[@]}" "$target" "$seeds" -- \
  -max_total_time="$seconds" -runs="$runs" -max_len=131072 -print_final_stats=1 2>&1 | tee "fuzz-$target.log" | tail -n 30
