#!/usr/bin/env bash
# Run one fuzz target for SECONDS, seeded from the synthetic controls and the small public v1
# files; print libFuzzer's final stats line. Usage: fuzz/run.sh TARGET SECONDS
# Targets: parse, image, diff, corpus_config. Crashes land in fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")"
target=$1
seconds=$2
seeds=corpus/$target
mkdir -p "$seeds"
if [ "$target" = corpus_config ]; then
  cp ../controls/corpus.json "$seeds/controls.json"
  [ -f ../../shared/corpus/corpus.json ] && cp ../../shared/corpus/corpus.json "$seeds/public.json"
else
  cp ../controls/*.nb "$seeds/"
  for f in ../../shared/corpus/v1/*.nb; do
    # Small public files only: libFuzzer mutates faster on inputs under 128 KiB.
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 131072 ] && cp "$f" "$seeds/"
  done
fi
cargo fuzz run --sanitizer none "$target" "$seeds" -- \
  -max_total_time="$seconds" -max_len=131072 -print_final_stats=1 2>&1 | tee "fuzz-$target.log" | tail -n 30
