#!/usr/bin/env bash
# One command from a fresh checkout to a verdict: install dependencies, build, check the example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo build --release --bin lark
./target/release/lark check examples/reduce.cu || true
