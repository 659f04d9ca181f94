#!/usr/bin/env bash
# Neovim (headless, 0.7+) attached to `lark serve` on tests/corpus/reduce_missing_sync.cu:
# diagnostics, hover, code lenses, code actions, and the barrier fix applied. Prints the JSON
# that e2e.lua wrote (also left in $1, default tests/nvim/out/result.json).
# Exit status: 0 when the client ran to the end, 1 when a step failed, 2 when setup failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lark=${LARK_BIN:-$repo/target/debug/lark}
out=${1:-$here/out/result.json}
if ! command -v nvim >/dev/null; then
  echo "tests/nvim: nvim is not installed (apt-get install -y neovim)" >&2
  exit 2
fi
if [ ! -x "$lark" ]; then
  echo "tests/nvim: no lark binary at $lark (cargo build -p lark, or set LARK_BIN)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$repo/tests/corpus/reduce_missing_sync.cu" "$repo/tests/corpus/lark.toml" "$work/"
mkdir -p "$(dirname "$out")"
rm -f "$out"
LARK_BIN=$lark LARK_NVIM_FILE=$work/reduce_missing_sync.cu LARK_NVIM_OUT=$out \
  timeout 180 nvim --headless -u NONE -i NONE -c "luafile $here/e2e.lua" </dev/null || true
if [ ! -s "$out" ]; then
  echo "tests/nvim: nvim wrote no result to $out" >&2
  exit 1
fi
cat "$out"
echo
grep -q '"ok":true' "$out" || grep -q '"ok": true' "$out"
