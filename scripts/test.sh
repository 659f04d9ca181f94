#!/usr/bin/env bash
# The whole test suite: installs dependencies, then Rust tests (unit, corpus, end-to-end).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo test --workspace --no-fail-fast
