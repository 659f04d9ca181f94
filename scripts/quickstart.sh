#!/usr/bin/env bash
# One command from a fresh checkout to a verdict: install dependencies, build, check the example.
set -euo pipefail
cd "$(dirname "$0")/.."
LARK_MINIMAL=1 scripts/install-deps.sh
cargo build --release --bin lark
echo
echo "\$ target/release/lark check examples/reduce.cu"
./target/release/lark check examples/reduce.cu || true
