#!/usr/bin/env bash
# Opt-in end-to-end smoke test of the VS Code extension in a real VS Code (code-server 4.100.3,
# i.e. VS Code 1.100.3) driven by headless Chromium through playwright-core.
#
#   tests/vscode-smoke/run.sh            # or: npm run smoke (repository root)
#
# It installs (once, cached in $LARK_SMOKE_CACHE, default tests/vscode-smoke/.cache) code-server and
# playwright-core, and the Debian packages they need (chromium, ripgrep, headers for native modules;
# needs root), packages the extension (`npm run package`), installs the .vsix offline into a fresh
# profile, opens a racy kernel (tests/corpus/reduce_missing_sync.cu) and waits for the race.
#
# Results in tests/vscode-smoke/out/: screenshot.png, problems.json (Problems panel rows, status-bar
# text), code-server.log and the extension-host logs. Exit status: 0 when a race diagnostic appears,
# 1 when it does not, 2 when the setup failed (e.g. no server binary).
#
# Environment:
#   LARK_BIN           server binary (default: target/debug/lark at the repository root)
#   LARK_VSIX          use this .vsix instead of running `npm run package`
#   LARK_SMOKE_CACHE   cache directory for code-server and playwright-core
#   LARK_SMOKE_TIMEOUT seconds to wait for the race diagnostic (default 120)
#   CHROMIUM           browser binary (default /usr/bin/chromium)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${LARK_SMOKE_CACHE:-$here/.cache}
out=$here/out
cs_version=4.100.3
pw_version=1.65.1
chromium=${CHROMIUM:-/usr/bin/chromium}
timeout_s=${LARK_SMOKE_TIMEOUT:-120}

log() { printf '== %s\n' "$*"; }
die() { printf 'vscode-smoke: %s\n' "$*" >&2; exit 2; }

rm -rf "$out"
mkdir -p "$out" "$cache"

# ---------------------------------------------------------------------------------------------
# 1. System packages (Debian): chromium, ripgrep, and headers for code-server's native modules.
pkgs=(chromium ripgrep libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config make g++ python3 curl)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq || die "apt-get update failed"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
fi
[ -x "$chromium" ] || die "no Chromium at $chromium (set CHROMIUM)"
command -v rg >/dev/null || die "ripgrep (rg) is not installed"

# ---------------------------------------------------------------------------------------------
# 2. code-server 4.100.3, following ../shared/TOOLING.md (its postinstall fails offline).
cs_root=$cache/code-server-$cs_version
cs=$cs_root/node_modules/code-server
if [ ! -f "$cs_root/.ready" ]; then
  log "installing code-server $cs_version into $cs_root (once; a few minutes)"
  rm -rf "$cs_root"
  mkdir -p "$cs_root"
  set +e
  (
    set -e
    cd "$cs_root"
    echo '{"name":"lark-smoke-code-server","private":true}' > package.json
    npm install --no-audit --no-fund --ignore-scripts "code-server@$cs_version"
    npm rebuild argon2
    cd "$cs/lib/vscode"
    npm install --no-audit --no-fund --omit=dev --ignore-scripts
    mkdir -p node_modules/@vscode/ripgrep/bin
    cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
    npm_config_yes=true npm rebuild --foreground-scripts
    ln -sfn node_modules node_modules.asar
    (cd bin/remote-cli && ln -sfn code-linux.sh code-server)
    (cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
    (cd extensions && npm install --no-audit --no-fund --omit=dev)
  ) > "$cache/code-server-install.log" 2>&1
  status=$?
  set -e
  [ $status -eq 0 ] || { tail -40 "$cache/code-server-install.log" >&2; die "code-server installation failed (log: $cache/code-server-install.log)"; }
  touch "$cs_root/.ready"
fi
node "$cs/out/node/entry.js" --version >/dev/null 2>&1 || die "code-server at $cs does not start (delete $cs_root to reinstall)"

# ---------------------------------------------------------------------------------------------
# 3. playwright-core (the driver only; the browser is Debian's Chromium).
pw_root=$cache/playwright-$pw_version
if [ ! -f "$pw_root/.ready" ]; then
  log "installing playwright-core $pw_version"
  rm -rf "$pw_root"
  mkdir -p "$pw_root"
  (cd "$pw_root" && echo '{"name":"lark-smoke-driver","private":true}' > package.json &&
    npm install --no-audit --no-fund --ignore-scripts "playwright-core@$pw_version") > "$cache/playwright-install.log" 2>&1 ||
    die "playwright-core installation failed (log: $cache/playwright-install.log)"
  touch "$pw_root/.ready"
fi

# ---------------------------------------------------------------------------------------------
# 4. The server binary and the extension package.
lark_bin=${LARK_BIN:-$repo/target/debug/lark}
[ -x "$lark_bin" ] || die "no server binary at $lark_bin (build it with \`cargo build --bin lark\`, or set LARK_BIN)"
lark_bin=$(cd "$(dirname "$lark_bin")" && pwd)/$(basename "$lark_bin")
version=$("$lark_bin" --version 2>&1) || die "$lark_bin --version failed: $version"
log "server: $lark_bin ($version)"

if [ -n "${LARK_VSIX:-}" ]; then
  vsix=$LARK_VSIX
else
  log "packaging the extension"
  (cd "$repo" && npm run --silent package) > "$out/package.log" 2>&1 || { tail -30 "$out/package.log" >&2; die "npm run package failed"; }
  vsix=$repo/vscode-extension/lark-$(node -p "require('$repo/vscode-extension/package.json').version").vsix
fi
[ -f "$vsix" ] || die "no .vsix at $vsix"

# ---------------------------------------------------------------------------------------------
# 5. A fresh profile and a workspace with one racy kernel.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lark-vscode-smoke.XXXXXX")
user_data=$tmp/user-data
extensions=$tmp/extensions
ws=$tmp/workspace
mkdir -p "$user_data/User" "$extensions" "$ws/.vscode"

kernel=reduce_missing_sync.cu
if [ -f "$repo/tests/corpus/$kernel" ]; then
  cp "$repo/tests/corpus/$kernel" "$ws/$kernel"
  [ -f "$repo/tests/corpus/lark.toml" ] && cp "$repo/tests/corpus/lark.toml" "$ws/lark.toml"
else
  cat > "$ws/$kernel" <<'CU'
// Block-level sum: tree reduction in shared memory, missing __syncthreads() inside the loop.
extern "C" __global__ void reduce_missing_sync(const float* input, float* out, int n) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  s[tid] = (i < n) ? input[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) {
      s[tid] += s[tid + stride];
    }
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}
CU
fi

settings=$(LARK_BIN_ABS="$lark_bin" node -e '
  process.stdout.write(JSON.stringify({
    "lark.server.path": process.env.LARK_BIN_ABS,
    "lark.trace.server": "messages",
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "update.mode": "none",
    "git.enabled": false,
    "chat.commandCenter.enabled": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden"
  }, null, 2));')
printf '%s\n' "$settings" > "$ws/.vscode/settings.json"
printf '%s\n' "$settings" > "$user_data/User/settings.json"

cs_args=(--user-data-dir "$user_data" --extensions-dir "$extensions")
log "installing $vsix"
node "$cs/out/node/entry.js" "${cs_args[@]}" --install-extension "$vsix" > "$out/install-extension.log" 2>&1 ||
  { cat "$out/install-extension.log" >&2; die "--install-extension failed"; }
grep -q . "$out/install-extension.log" && sed 's/^/   /' "$out/install-extension.log"

# ---------------------------------------------------------------------------------------------
# 6. Start code-server, drive it, collect the results.
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close();});')
log "starting code-server on 127.0.0.1:$port"
node "$cs/out/node/entry.js" "${cs_args[@]}" --auth none --bind-addr "127.0.0.1:$port" \
  --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  "$ws" > "$out/code-server.log" 2>&1 &
cs_pid=$!
cleanup() {
  kill "$cs_pid" 2>/dev/null || true
  wait "$cs_pid" 2>/dev/null || true
  mkdir -p "$out/logs"
  cp -r "$user_data/logs/." "$out/logs/" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

for _ in $(seq 1 120); do
  curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null && break
  kill -0 "$cs_pid" 2>/dev/null || { tail -30 "$out/code-server.log" >&2; die "code-server exited"; }
  sleep 0.5
done
curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" || die "code-server did not come up (log: $out/code-server.log)"

set +e
PLAYWRIGHT_DIR=$pw_root CHROMIUM="$chromium" URL="http://127.0.0.1:$port/?folder=$ws" FILE="$kernel" \
  OUT="$out" TIMEOUT_S="$timeout_s" node "$here/drive.mjs"
rc=$?
set -e
exit $rc
