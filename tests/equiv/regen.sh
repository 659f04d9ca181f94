#!/usr/bin/env bash
# Regenerates tests/equiv/<name>.ptx from every tests/equiv/<name>.cu with clang-19.
#
#   tests/equiv/regen.sh            # uses server/cuda/src/cuda_prelude.h (the prelude lark compiles with)
#   LARK_CUDA_PRELUDE=/path/to/cuda_prelude.h tests/equiv/regen.sh
#
# clang runs from this directory on relative file names, and -fdebug-prefix-map rewrites the
# directory to ".", so the `.file` directives in the PTX do not depend on where the repo lives.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
clang="${CLANG:-clang-19}"
if ! command -v "$clang" >/dev/null 2>&1; then
  echo "regen.sh: error: $clang not found (install it with: apt-get install -y clang-19)" >&2
  exit 1
fi

prelude="${LARK_CUDA_PRELUDE:-$here/../../server/cuda/src/cuda_prelude.h}"
if [[ ! -f "$prelude" ]]; then
  echo "regen.sh: error: CUDA prelude not found at $prelude" >&2
  exit 1
fi
prelude="$(cd "$(dirname "$prelude")" && pwd)/$(basename "$prelude")"

cd "$here"
shopt -s nullglob
cus=(*.cu)
if (( ${#cus[@]} == 0 )); then
  echo "regen.sh: error: no .cu files in $here" >&2
  exit 1
fi

compile() {  # compile <cu> <ptx> <arch> <ptx-feature> <opt>
  "$clang" --cuda-device-only --cuda-gpu-arch="$3" -nocudainc -nocudalib \
    -Xclang -target-feature -Xclang "$4" -include "$prelude" \
    "$5" -gline-tables-only -fdebug-prefix-map="$here=." -S "$1" -o "$2"
}

for cu in "${cus[@]}"; do
  name="${cu%.cu}"
  compile "$cu" "$name.ptx" sm_80 +ptx70 -O2
  grep -q '^\.visible \.entry ' "$name.ptx" || { echo "regen.sh: error: no kernel entry in $name.ptx" >&2; exit 1; }
  grep -q '\.loc' "$name.ptx" || { echo "regen.sh: error: no .loc line info in $name.ptx" >&2; exit 1; }
  if grep -qF "$here" "$name.ptx"; then
    echo "regen.sh: error: $name.ptx names the absolute directory $here (-fdebug-prefix-map had no effect)" >&2
    exit 1
  fi
  echo "  $cu -> $name.ptx"
done

