#!/usr/bin/env bash
# Parser throughput: concatenates the corpus PTX (tests/corpus/*.ptx and extra/*.ptx) until the file
# is at least $MB megabytes (default 20), builds the release `lark`, and runs `lark bench parse` on
# it. The generated file lives in tests/bench-data/ (gitignored) and is reused while it is big
# enough. Usage: scripts/bench-parse.sh [MB] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-20}
rounds=${2:-5}
out=tests/bench-data/corpus-${mb}mb.ptx
mkdir -p tests/bench-data
want=$((mb * 1000 * 1000))
if [[ ! -f $out ]] || (( $(stat -c %s "$out") < want )); then
    tmp=$out.tmp
    : >"$tmp"
    # Each copy is a whole module (header, kernels, .file table), so the result is a sequence of
    # modules: the parser accepts repeated headers, and the entry names repeat.
    while (( $(stat -c %s "$tmp") < want )); do
        cat tests/corpus/*.ptx tests/corpus/extra/*.ptx >>"$tmp"
    done
    mv "$tmp" "$out"
fi
cargo build --release -p lark --bin lark >&2
echo "input: $out ($(stat -c %s "$out") bytes)" >&2
target/release/lark bench parse "$out" "$rounds"
