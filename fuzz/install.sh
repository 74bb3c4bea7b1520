#!/usr/bin/env bash
# Install cargo-fuzz from crates.io (the fuzz targets build with it on the stable toolchain,
# `--sanitizer none`, see fuzz/run.sh).
set -euo pipefail
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
cargo fuzz --version
