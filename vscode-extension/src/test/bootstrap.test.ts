import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import {
  BootstrapHost,
  bundledServerPath,
  ExecResult,
  fallbackWarnings,
  findServer,
  nodeHost,
  notFoundMessage,
  parseVersion,
  resolveSettingPath,
} from '../bootstrap';

/** A fake machine: a set of files, and what running each of them with --version does. */
function fakeHost(opts: {
  files: Record<string, ExecResult | 'eacces'>;
  path?: string;
  platform?: NodeJS.Platform;
  chmodFixes?: boolean;
}): BootstrapHost & { ran: string[]; chmodded: string[] } {
  const files = { ...opts.files };
  const ran: string[] = [];
  const chmodded: string[] = [];
  return {
    ran,
    chmodded,
    platform: opts.platform ?? 'linux',
    envPath: opts.path ?? '/usr/local/bin:/usr/bin',
    homeDir: '/home/u',
    async isFile(p) {
      return p in files;
    },
    async exec(file, args) {
      assert.deepEqual(args, ['--version']);
      ran.push(file);
      const f = files[file];
      if (f === undefined) return { code: null, stdout: '', stderr: '', error: { code: 'ENOENT', message: `spawn ${file} ENOENT` } };
      if (f === 'eacces') return { code: null, stdout: '', stderr: '', error: { code: 'EACCES', message: `spawn ${file} EACCES` } };
      return f;
    },
    async makeExecutable(p) {
      chmodded.push(p);
      if (!opts.chmodFixes) return false;
      files[p] = ok('0.1.0');
      return true;
    },
  };
}

const ok = (v: string): ExecResult => ({ code: 0, stdout: `lark ${v}\n`, stderr: '' });
const EXT = '/ext/lark-0.1.0';
const BUNDLED = '/ext/lark-0.1.0/server/lark';

test('parseVersion accepts `lark <semver>` only', () => {
  assert.equal(parseVersion('lark 0.1.0\n'), '0.1.0');
  assert.equal(parseVersion('lark 1.2.3-dev+abc\nmore'), '1.2.3-dev+abc');
  assert.equal(parseVersion('lark v2.0.0'), '2.0.0');
  assert.equal(parseVersion('clang version 19.1.0'), undefined);
  assert.equal(parseVersion('lark'), undefined);
  assert.equal(parseVersion(''), undefined);
});

test('the setting wins when it works', async () => {
  const host = fakeHost({ files: { '/opt/lark': ok('0.2.0'), [BUNDLED]: ok('0.1.0'), '/usr/bin/lark': ok('0.0.9') } });
  const r = await findServer({ settingPath: '/opt/lark', extensionPath: EXT }, host);
  assert.ok(r.ok);
  assert.deepEqual([r.path, r.version, r.source], ['/opt/lark', '0.2.0', 'setting']);
  assert.deepEqual(host.ran, ['/opt/lark']);
  assert.deepEqual(fallbackWarnings(r), []);
});

test('without a setting, the bundled binary comes before PATH', async () => {
  const host = fakeHost({ files: { [BUNDLED]: ok('0.1.0'), '/usr/bin/lark': ok('0.0.9') } });
  const r = await findServer({ settingPath: '', extensionPath: EXT }, host);
  assert.ok(r.ok);
  assert.equal(r.source, 'bundled');
  assert.equal(r.path, BUNDLED);
});

test('PATH is searched in order; a broken first entry falls through to the next', async () => {
  const host = fakeHost({
    path: '/a::/b:/c',
    files: { '/a/lark': { code: 127, stdout: '', stderr: 'error while loading shared libraries: libz3.so.4\n' }, '/c/lark': ok('0.3.0') },
  });
  const r = await findServer({ settingPath: '', extensionPath: EXT }, host);
  assert.ok(r.ok);
  assert.deepEqual([r.path, r.source], ['/c/lark', 'path']);
  assert.equal(r.tried[1].reason, '`--version` exited with code 127: error while loading shared libraries: libz3.so.4');
});

test('no binary anywhere: not ok, and the message lists everything tried', async () => {
  const host = fakeHost({ files: {} });
  const r = await findServer({ settingPath: '~/bin/lark', extensionPath: EXT }, host);
  assert.equal(r.ok, false);
  assert.deepEqual(
    r.tried.map((a) => [a.source, a.path, a.reason]),
    [
      ['setting', '/home/u/bin/lark', 'file not found'],
      ['bundled', BUNDLED, 'file not found'],
      ['path', 'lark', 'not found in any of the 2 PATH directories'],
    ],
  );
  assert.deepEqual(host.ran, [], 'nothing that does not exist is run');
  const msg = notFoundMessage(r.tried);
  assert.match(msg, /no working `lark` language server/);
  assert.match(msg, /lark\.server\.path \/home\/u\/bin\/lark: file not found/);
  assert.match(msg, /bundled binary \/ext\/lark-0\.1\.0\/server\/lark: file not found/);
  assert.match(msg, /PATH lark: not found in any of the 2 PATH directories/);
  assert.match(msg, /Set `lark.server.path`/);
});

test('a binary whose --version fails is rejected with the reason', async () => {
  const host = fakeHost({
    files: {
      '/opt/lark': { code: 2, stdout: '', stderr: "error: unexpected argument '--version'\n\nUsage: lark" },
      [BUNDLED]: { code: 0, stdout: 'Usage: something else\n', stderr: '' },
      '/usr/bin/lark': { code: null, signal: 'SIGSEGV', stdout: '', stderr: '' },
      '/usr/local/bin/lark': { code: null, stdout: '', stderr: '', timedOut: true, error: { message: 'killed' } },
    },
  });
  const r = await findServer({ settingPath: '/opt/lark', extensionPath: EXT, versionTimeoutMs: 1234 }, host);
  assert.equal(r.ok, false);
  assert.deepEqual(
    r.tried.map((a) => a.reason),
    [
      "`--version` exited with code 2: error: unexpected argument '--version'",
      '`--version` printed "Usage: something else", expected "lark <version>"',
      '`--version` did not finish within 1234 ms',
      '`--version` was killed by SIGSEGV',
    ],
  );
  assert.equal(notFoundMessage(r.tried).split('\n').filter((l) => l.startsWith('  - ')).length, 4);
});

test('a broken setting falls back, with a warning', async () => {
  const host = fakeHost({ files: { '/opt/lark': 'eacces', '/usr/bin/lark': ok('0.1.0') } });
  const r = await findServer({ settingPath: '/opt/lark', extensionPath: EXT }, host);
  assert.ok(r.ok);
  assert.equal(r.path, '/usr/bin/lark');
  assert.deepEqual(fallbackWarnings(r), [
    'LARK: lark.server.path /opt/lark is not usable (not executable (permission denied)); using PATH /usr/bin/lark instead.',
  ]);
});

test('a bundled binary without the execute bit is made executable once', async () => {
  const fixed = fakeHost({ files: { [BUNDLED]: 'eacces' }, chmodFixes: true });
  const r = await findServer({ settingPath: '', extensionPath: EXT }, fixed);
  assert.ok(r.ok);
  assert.deepEqual(fixed.chmodded, [BUNDLED]);

  const stuck = fakeHost({ files: { [BUNDLED]: 'eacces' } });
  const r2 = await findServer({ settingPath: '', extensionPath: EXT }, stuck);
  assert.equal(r2.ok, false);
  assert.equal(r2.tried[0].reason, 'not executable (permission denied)');
});

test('setting paths: ~, ${workspaceFolder}, relative to the workspace, bare names via PATH', async () => {
  const host = fakeHost({ files: {} });
  const ws = { workspaceFolder: '/work/proj' };
  assert.equal(resolveSettingPath('~/bin/lark', ws, host), '/home/u/bin/lark');
  assert.equal(resolveSettingPath('${workspaceFolder}/target/debug/lark', ws, host), '/work/proj/target/debug/lark');
  assert.equal(resolveSettingPath('target/debug/lark', ws, host), '/work/proj/target/debug/lark');
  assert.equal(resolveSettingPath('lark-dev', ws, host), 'lark-dev');

  const named = fakeHost({ files: { 'lark-dev': ok('9.9.9') } });
  const r = await findServer({ settingPath: 'lark-dev', extensionPath: EXT }, named);
  assert.ok(r.ok);
  assert.deepEqual([r.path, r.source], ['lark-dev', 'setting']);
});

test('windows: lark.exe bundled, PATHEXT on PATH', async () => {
  assert.equal(bundledServerPath('C:\\ext', 'win32'), 'C:\\ext\\server\\lark.exe');
  const host = fakeHost({ platform: 'win32', path: 'C:\\tools;C:\\bin', files: { 'C:\\bin\\lark.exe': ok('0.1.0') } });
  host.envPathExt = '.COM;.EXE';
  const r = await findServer({ settingPath: '', extensionPath: 'C:\\ext' }, host);
  assert.ok(r.ok);
  assert.equal(r.path, 'C:\\bin\\lark.exe');
});

// The same logic against real processes: shell scripts standing in for `lark`.
test('real processes: working, failing, hanging and non-executable binaries', { skip: process.platform === 'win32' ? 'uses sh scripts' : false }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lark-bootstrap-'));
  try {
    const script = (rel: string, body: string, mode = 0o755) => {
      const p = path.join(dir, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode });
      return p;
    };
    const failing = script('failing/lark', 'echo "lark: cannot load libz3" >&2; exit 3');
    const hanging = script('hanging/lark', 'exec sleep 5');
    script('bad/lark', 'echo "hello"', 0o644);
    script('good/lark', 'if [ "$1" = "--version" ]; then echo "lark 0.1.0"; else exit 9; fi');
    const host = { ...nodeHost(), envPath: ['bad', 'failing', 'good'].map((d) => path.join(dir, d)).join(':') };

    const r = await findServer({ settingPath: hanging, extensionPath: path.join(dir, 'ext'), versionTimeoutMs: 300 }, host);
    assert.ok(r.ok, notFoundMessage(r.tried));
    assert.equal(r.path, path.join(dir, 'good', 'lark'));
    assert.equal(r.version, '0.1.0');
    assert.deepEqual(
      r.tried.map((a) => a.reason),
      [
        '`--version` did not finish within 300 ms',
        'file not found',
        'not executable (permission denied)',
        '`--version` exited with code 3: lark: cannot load libz3',
        '',
      ],
    );

    const none = await findServer({ settingPath: failing, extensionPath: path.join(dir, 'ext') }, { ...host, envPath: path.join(dir, 'empty') });
    assert.equal(none.ok, false);
    assert.match(notFoundMessage(none.tried), /exited with code 3/);

    // A bundled binary unpacked without its execute bit is repaired.
    const bundled = script('ext/server/lark', 'echo "lark 0.1.0"', 0o644);
    const b = await findServer({ settingPath: '', extensionPath: path.join(dir, 'ext') }, host);
    assert.ok(b.ok);
    assert.equal(b.path, bundled);
    assert.equal(fs.statSync(bundled).mode & 0o111, 0o111);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
