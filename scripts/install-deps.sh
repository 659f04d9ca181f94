#!/usr/bin/env bash
# Installs what LARK and its tests need on Debian 12 (run as root): clang-19 (CUDA -> PTX),
# z3 and cvc5 (the SMT solvers: z3 by default, cvc5 with `--solver cvc5`; the tests run both),
# neovim (a real LSP client in the editor tests), Node.js/npm (the VS Code extension) and a
# Rust toolchain if none is on PATH. Safe to run again.
set -euo pipefail
need=()
command -v clang-19 >/dev/null || need+=(clang-19)
command -v z3 >/dev/null || need+=(z3)
command -v cvc5 >/dev/null || need+=(cvc5)
command -v cargo >/dev/null || need+=(cargo)
if [ "${LARK_MINIMAL:-0}" != 1 ]; then
  command -v nvim >/dev/null || need+=(neovim)
  command -v npm >/dev/null || need+=(nodejs npm)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
