#!/usr/bin/env bash
# The whole test suite: installs dependencies, then the Rust tests (unit, corpus, end-to-end,
# language server with real clients) and the VS Code extension's unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Release mode: the corpus and end-to-end tests run the engine on real kernels.
cargo test --release --workspace --no-fail-fast
npm test
