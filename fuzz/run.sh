#!/usr/bin/env bash
# Run one fuzz target for SECONDS, seeded from the synthetic controls and the small public v1
# files; print libFuzzer's final stats line. Usage: fuzz/run.sh TARGET SECONDS [RUNS]
# (stops at SECONDS or after RUNS executions, whichever comes first)
# Targets: parse, image, diff, corpus_config (NBG and corpus configs); npz, onnx_audit, policy
# (the ONNX engine's inputs); capture_spec (a capture set's differential.json).
# Crashes land in fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")"
target=$1
seconds=$2
runs=${3:--1}
seeds=corpus/$target
mkdir -p "$seeds"
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
