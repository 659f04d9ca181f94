#!/usr/bin/env node
// Installs the extension's dependencies (`npm ci`) when node_modules is missing or older than
// package-lock.json, so that `npm test` at the repository root works on a fresh clone.

import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ext = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const lock = join(ext, 'package-lock.json');
const installed = join(ext, 'node_modules', '.package-lock.json');
const tsc = join(ext, 'node_modules', 'typescript', 'bin', 'tsc');

const reason = !existsSync(installed) || !existsSync(tsc)
  ? 'node_modules is missing'
  : statSync(installed).mtimeMs < statSync(lock).mtimeMs
    ? 'package-lock.json is newer than node_modules'
    : undefined;

if (reason === undefined) process.exit(0);

console.log(`vscode-extension: ${reason}; running npm ci`);
// Inside `npm run`, npm_execpath is the npm that runs us; reuse it rather than whatever is on PATH.
const npmCli = process.env.npm_execpath;
const [cmd, args] = npmCli && /\.(c?js|mjs)$/.test(npmCli)
  ? [process.execPath, [npmCli, 'ci', '--no-audit', '--no-fund']]
  : ['npm', ['ci', '--no-audit', '--no-fund']];
const r = spawnSync(cmd, args, { cwd: ext, stdio: 'inherit', shell: process.platform === 'win32' && cmd === 'npm' });
if (r.error) {
  console.error(`vscode-extension: could not run npm ci: ${r.error.message}`);
  process.exit(1);
}
process.exit(r.status ?? 1);
