#!/usr/bin/env node
// Builds vscode-extension/lark-<version>.vsix with vsce, offline.
//
// When a server binary exists ($LARK_BIN, else target/release/lark, else target/debug/lark at the
// repository root) and answers `--version`, it is copied to server/lark and shipped in the package,
// which then targets this platform (e.g. linux-x64). Without one the package is universal and the
// extension finds `lark` through the `lark.server.path` setting or PATH. LARK_BUNDLE=0 skips bundling.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ext = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(ext, '..');
const pkg = JSON.parse(readFileSync(join(ext, 'package.json'), 'utf8'));
const exe = process.platform === 'win32' ? 'lark.exe' : 'lark';
const out = `lark-${pkg.version}.vsix`;

const isFile = (p) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** vsce's platform names (https://code.visualstudio.com/api/working-with-extensions/publishing-extension#platformspecific-extensions). */
function vsceTarget() {
  const arch = { x64: 'x64', arm64: 'arm64', arm: 'armhf' }[process.arch];
  const os = { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform];
  return arch && os ? `${os}-${arch}` : undefined;
}

const serverDir = join(ext, 'server');
rmSync(serverDir, { recursive: true, force: true });

const candidates = [process.env.LARK_BIN, join(repo, 'target', 'release', exe), join(repo, 'target', 'debug', exe)].filter(Boolean);
const source = process.env.LARK_BUNDLE === '0' ? undefined : candidates.find(isFile);
let target;
if (process.env.LARK_BUNDLE === '0') {
  console.log('package: bundling disabled (LARK_BUNDLE=0); the extension will use lark.server.path or PATH');
} else if (source === undefined) {
  console.log(`package: no server binary to bundle (looked for ${candidates.map((c) => relative(repo, c) || c).join(', ')}); the extension will use lark.server.path or PATH`);
} else {
  const check = spawnSync(source, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const version = /^lark\s+v?(\S+)/.exec((check.stdout ?? '').trim())?.[1];
  if (check.status !== 0 || version === undefined) {
    const why = check.error?.message ?? (check.stderr || check.stdout || `exit ${check.status}`).trim().split('\n')[0];
    console.warn(`package: WARNING: ${source} does not answer \`--version\` with "lark <version>" (${why}); not bundling it`);
  } else {
    mkdirSync(serverDir, { recursive: true });
    copyFileSync(source, join(serverDir, exe));
    chmodSync(join(serverDir, exe), 0o755);
    target = vsceTarget();
    console.log(`package: bundling ${source} (lark ${version}) as server/${exe}${target ? ` for ${target}` : ''}`);
  }
}

const vsce = join(ext, 'node_modules', '@vscode', 'vsce', 'vsce');
if (!existsSync(vsce)) {
  console.error('package: @vscode/vsce is not installed; run `npm ci` in vscode-extension (or `npm run build` at the root)');
  process.exit(1);
}
const args = [vsce, 'package', '--out', out, ...(target ? ['--target', target] : [])];
const r = spawnSync(process.execPath, args, { cwd: ext, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
console.log(`package: wrote ${join(ext, out)}`);
