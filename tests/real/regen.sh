#!/usr/bin/env bash
# Regenerates the committed PTX of tests/real, tests/real/bugs and tests/index with clang-19.
#
#   tests/real/regen.sh                      # all three directories
#   tests/real/regen.sh tests/index          # one directory (relative to the repository root)
#   LARK_CUDA_PRELUDE=/path/to/cuda_prelude.h tests/real/regen.sh
#
# For every <name>.cu of a directory it writes four variants:
#   <name>.ptx                    sm_80, PTX 7.0, -O2   (the one lark.toml and the meta files describe)
#   variants/<name>.sm80.O3.ptx   sm_80, PTX 7.0, -O3
#   variants/<name>.sm90.O2.ptx   sm_90, PTX 7.8, -O2
#   variants/<name>.sm90.O3.ptx   sm_90, PTX 7.8, -O3
# All variants have the same entries, the same launch interface (the directory's lark.toml applies
# to variants/ too) and the same expected verdicts.
#
# Files are compiled with LARK's prelude (-include, as `lark check k.cu` does) and include
# tests/real/real_prelude.h themselves. clang runs in the file's directory on a relative name and
# -fdebug-prefix-map rewrites that directory to ".", so `.file` directives do not depend on where
# the repository lives. Rerunning on an unchanged tree changes no file.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
clang="${CLANG:-clang-19}"
if ! command -v "$clang" >/dev/null 2>&1; then
  echo "regen.sh: error: $clang not found (install it with: apt-get install -y clang-19)" >&2
  exit 1
fi
prelude="${LARK_CUDA_PRELUDE:-$root/server/cuda/src/cuda_prelude.h}"
if [[ ! -f "$prelude" ]]; then
  echo "regen.sh: error: CUDA prelude not found at $prelude" >&2
  exit 1
fi
prelude="$(cd "$(dirname "$prelude")" && pwd)/$(basename "$prelude")"

if (( $# > 0 )); then
  dirs=()
  for d in "$@"; do dirs+=("$(cd "$root" && cd "$d" && pwd)"); done
else
  dirs=("$here" "$here/bugs" "$root/tests/index")
fi

compile() {  # compile <dir> <cu> <ptx> <arch> <ptx-feature> <opt>
  (cd "$1" && "$clang" --cuda-device-only --cuda-gpu-arch="$4" -nocudainc -nocudalib \
    -Xclang -target-feature -Xclang "$5" -include "$prelude" \
    "$6" -gline-tables-only -fdebug-prefix-map="$1=." -S "$2" -o "$3")
}

check_ptx() {  # check_ptx <dir> <ptx>
  grep -q '^\.visible \.entry ' "$1/$2" || { echo "regen.sh: error: no kernel entry in $1/$2" >&2; exit 1; }
  grep -q '\.loc' "$1/$2" || { echo "regen.sh: error: no .loc line info in $1/$2" >&2; exit 1; }
  if grep -qF "$1" "$1/$2"; then
    echo "regen.sh: error: $1/$2 names the absolute directory $1 (-fdebug-prefix-map had no effect)" >&2
    exit 1
  fi
}

shopt -s nullglob
total=0
for dir in "${dirs[@]}"; do
  cus=("$dir"/*.cu)
  if (( ${#cus[@]} == 0 )); then
    echo "regen.sh: error: no .cu files in $dir" >&2
    exit 1
  fi
  mkdir -p "$dir/variants"
  for path in "${cus[@]}"; do
    cu="$(basename "$path")"
    name="${cu%.cu}"
    compile "$dir" "$cu" "$name.ptx" sm_80 +ptx70 -O2
    compile "$dir" "$cu" "variants/$name.sm80.O3.ptx" sm_80 +ptx70 -O3
    compile "$dir" "$cu" "variants/$name.sm90.O2.ptx" sm_90 +ptx78 -O2
    compile "$dir" "$cu" "variants/$name.sm90.O3.ptx" sm_90 +ptx78 -O3
    for p in "$name.ptx" "variants/$name.sm80.O3.ptx" "variants/$name.sm90.O2.ptx" "variants/$name.sm90.O3.ptx"; do
      check_ptx "$dir" "$p"
    done
    total=$((total + 1))
    echo "  ${dir#"$root"/}/$cu -> $name.ptx + 3 variants"
  done
done
echo "regen.sh: $total file(s) compiled"
