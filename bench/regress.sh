#!/usr/bin/env bash
# Benchmark: this checkout against an earlier commit, command by command, on the public files.
# Usage: bench/regress.sh BASE [RUNS]   (RUNS per file and command, default 5)
# Builds BASE in a separate worktree (its own target folder, target/regress), then times both
# binaries on every public file beside the project (../shared/corpus v1 and v2, else the
# controls/public files the repository carries) with `sweep --json`, `parse --json`, `info`,
# `image --json` and `coefficients --json`, and `inventory` of the public corpus config:
# the two binaries alternate run by run (which goes first alternates too), and each pair gives
# one ratio HEAD / BASE. Prints, per command, the median of the files' median ratios and the
# worst file's. A command BASE does not have is said and skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/regress.sh BASE [RUNS]}
runs=${2:-5}
root=$PWD
cargo build --release --locked -q
head_bin=$root/target/release/nbg
wt=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"' EXIT
git worktree add --detach -q "$wt" "$base"
CARGO_TARGET_DIR=$root/target/regress cargo build --release --locked -q --manifest-path "$wt/Cargo.toml"
base_bin=$root/target/regress/release/nbg
if [ -f ../shared/corpus/corpus.json ]; then
  files=(../shared/corpus/v1/*.nb ../shared/corpus/v2/*.nb)
  config=../shared/corpus/corpus.json
else
  echo "regress: ../shared/corpus not present; timing controls/public" >&2
  files=(controls/public/v1/*.nb controls/public/v2/*.nb)
  config=controls/public/corpus.json
fi
python3 - "$base_bin" "$head_bin" "$runs" "$config" "${files[@]}" <<'PY'
import statistics, subprocess, sys, time
base, head, runs, config, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
commands = [
    ("sweep", ["sweep", "--json"]),
    ("parse", ["parse", "--json"]),
    ("info", ["info"]),
    ("image", ["image", "--json"]),
    ("coefficients", ["coefficients", "--json"]),
]

def run(binary, args):
    t = time.perf_counter()
    p = subprocess.run([binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, p.returncode

def ratios(args):
    """HEAD / BASE per pair, the two alternating (and which goes first alternating too)."""
    out = []
    for r in range(runs):
        order = [(base, "b"), (head, "h")] if r % 2 == 0 else [(head, "h"), (base, "b")]
        t = {}
        for binary, name in order:
            t[name], code = run(binary, args)
            if code == 2 and name == "b":
                return None  # usage error: BASE has no such command or option
        out.append(t["h"] / t["b"])
    return statistics.median(out)

print(f"{'command':<14} {'median':>8} {'worst':>8}  worst file   (HEAD / BASE, {runs} paired runs each)")
for name, args in commands:
    per_file = {}
    for f in files:
        r = ratios(args + [f])
        if r is None:
            break
        per_file[f] = r
    if not per_file:
        print(f"{name:<14} {'-':>8} {'-':>8}  BASE does not have it")
        continue
    worst = max(per_file, key=per_file.get)
    print(f"{name:<14} {statistics.median(per_file.values()):>8.2f} {per_file[worst]:>8.2f}  {worst.rsplit('/', 1)[-1]}")
r = ratios(["inventory", config])
print(f"{'inventory':<14} {r:>8.2f} {r:>8.2f}  {config}" if r is not None else "inventory: BASE does not have it")
PY
