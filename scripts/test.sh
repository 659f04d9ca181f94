#!/usr/bin/env bash
# The whole test suite: installs dependencies, then the Rust tests (unit, corpus, end-to-end,
# language server with real clients) and the VS Code extension's unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Style and lints are part of the contract: formatted code, no clippy warnings.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add rustfmt clippy
fi
cargo fmt --all --check
cargo clippy --release --workspace --all-targets -- -D warnings
# Release mode: the corpus and end-to-end tests run the engine on real kernels.
cargo test --release --workspace --no-fail-fast
npm test
