// Finding the `lark` server binary, the way rust-analyzer's editors/code/src/bootstrap.ts does:
// the `lark.server.path` setting, then the binary bundled at `<extension>/server/lark`, then `lark`
// on PATH. Each candidate must answer `--version` with `lark <semver>` before it is used.
// No `vscode` import: the filesystem and process spawning come in through `BootstrapHost`.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';

export type CandidateSource = 'setting' | 'bundled' | 'path';

export interface ExecResult {
  /** Exit code; null when the process was killed or could not start. */
  code: number | null;
  /** The signal that ended the process, if one did. */
  signal?: string;
  stdout: string;
  stderr: string;
  /** Set when the process could not be started (ENOENT, EACCES, ...) or timed out. */
  error?: { code?: string; message: string };
  timedOut?: boolean;
}

export interface BootstrapHost {
  platform: NodeJS.Platform;
  /** The PATH value to search. */
  envPath: string;
  /** PATHEXT (Windows only). */
  envPathExt?: string;
  homeDir: string;
  /** Whether `p` is an existing regular file (symlinks followed). */
  isFile(p: string): Promise<boolean>;
  /** Runs `file` with `args` (no shell); never rejects. */
  exec(file: string, args: string[], timeoutMs: number): Promise<ExecResult>;
  /** Adds execute permission (a bundled binary may lose it when the .vsix is unpacked). */
  makeExecutable?(p: string): Promise<boolean>;
}

export interface BootstrapInput {
  /** Value of `lark.server.path` ('' when unset). */
  settingPath: string;
  /** Root directory of the installed extension. */
  extensionPath: string;
  /** First workspace folder (fsPath), for relative paths and `${workspaceFolder}`. */
  workspaceFolder?: string;
  /** Time allowed for `--version`; default 10 s. */
  versionTimeoutMs?: number;
}

export interface Attempt {
  source: CandidateSource;
  /** What was tried: a path, or a description such as "lark on PATH". */
  path: string;
  ok: boolean;
  /** Why it was rejected ('' when ok). */
  reason: string;
  version?: string;
}

export type BootstrapResult =
  | { ok: true; path: string; version: string; source: CandidateSource; tried: Attempt[] }
  | { ok: false; tried: Attempt[] };

export function binaryName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'lark.exe' : 'lark';
}

/** `<extension>/server/lark` (`lark.exe` on Windows). */
export function bundledServerPath(extensionPath: string, platform: NodeJS.Platform): string {
  return pathFor(platform).join(extensionPath, 'server', binaryName(platform));
}

function pathFor(platform: NodeJS.Platform): typeof path.posix {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** Expands `~`, `${workspaceFolder}`, `${userHome}`; resolves relative paths against the workspace. */
export function resolveSettingPath(raw: string, input: Pick<BootstrapInput, 'workspaceFolder'>, host: Pick<BootstrapHost, 'platform' | 'homeDir'>): string {
  const p = pathFor(host.platform);
  let s = raw.trim();
  s = s.replace(/\$\{userHome\}/g, host.homeDir);
  if (input.workspaceFolder !== undefined) s = s.replace(/\$\{workspaceFolder\}/g, input.workspaceFolder);
  if (s === '~') s = host.homeDir;
  else if (s.startsWith('~/') || s.startsWith('~\\')) s = p.join(host.homeDir, s.slice(2));
  if (!p.isAbsolute(s) && input.workspaceFolder !== undefined && /[\\/]/.test(s)) {
    s = p.join(input.workspaceFolder, s);
  }
  return s;
}

/** Parses `lark 0.1.0` (first line of `--version`); undefined when it is not LARK's answer. */
export function parseVersion(stdout: string): string | undefined {
  const first = stdout.trim().split(/\r?\n/, 1)[0] ?? '';
  const m = /^lark\s+v?(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)\s*$/.exec(first);
  return m?.[1];
}

function firstLine(s: string, max = 200): string {
  const line = s.trim().split(/\r?\n/, 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** Runs `<file> --version` and explains why the file is not a usable LARK server, if it is not. */
export async function probe(host: BootstrapHost, file: string, timeoutMs: number): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
  const r = await host.exec(file, ['--version'], timeoutMs);
  if (r.timedOut) return { ok: false, reason: `\`--version\` did not finish within ${timeoutMs} ms` };
  if (r.signal) return { ok: false, reason: `\`--version\` was killed by ${r.signal}` };
  if (r.error && r.code === null) {
    const code = r.error.code;
    if (code === 'ENOENT') return { ok: false, reason: 'file not found' };
    if (code === 'EACCES') return { ok: false, reason: 'not executable (permission denied)' };
    return { ok: false, reason: `could not be started: ${code ?? ''} ${firstLine(r.error.message)}`.replace(/\s+/g, ' ').trim() };
  }
  if (r.code !== 0) {
    const detail = firstLine(r.stderr) || firstLine(r.stdout);
    return { ok: false, reason: `\`--version\` exited with code ${r.code}${detail ? `: ${detail}` : ''}` };
  }
  const version = parseVersion(r.stdout);
  if (version === undefined) {
    return { ok: false, reason: `\`--version\` printed ${JSON.stringify(firstLine(r.stdout, 80))}, expected "lark <version>"` };
  }
  return { ok: true, version };
}

/** All files named `lark` (`lark.exe`, ... on Windows) in the directories of PATH, in order. */
export async function findOnPath(host: BootstrapHost): Promise<{ found: string[]; searched: number }> {
  const p = pathFor(host.platform);
  const delimiter = host.platform === 'win32' ? ';' : ':';
  const dirs = host.envPath.split(delimiter).map((d) => d.trim().replace(/^"(.*)"$/, '$1')).filter((d) => d !== '');
  const names =
    host.platform === 'win32'
      ? (host.envPathExt ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((e) => e !== '').map((e) => `lark${e.toLowerCase()}`)
      : ['lark'];
  const found: string[] = [];
  const seen = new Set<string>();
  for (const dir of dirs) {
    for (const name of names) {
      const candidate = p.join(dir, name);
      if (seen.has(candidate)) continue;
      seen.add(candidate);
      if (await host.isFile(candidate)) found.push(candidate);
    }
  }
  return { found, searched: dirs.length };
}

/** Tries the candidates in order; the first that answers `--version` wins. */
export async function findServer(input: BootstrapInput, host: BootstrapHost): Promise<BootstrapResult> {
  const timeoutMs = input.versionTimeoutMs ?? 10_000;
  const tried: Attempt[] = [];

  const tryFile = async (source: CandidateSource, file: string): Promise<BootstrapResult | undefined> => {
    if (!(await host.isFile(file))) {
      tried.push({ source, path: file, ok: false, reason: 'file not found' });
      return undefined;
    }
    let r = await probe(host, file, timeoutMs);
    if (!r.ok && source === 'bundled' && r.reason.startsWith('not executable') && host.makeExecutable && (await host.makeExecutable(file))) {
      r = await probe(host, file, timeoutMs);
    }
    if (r.ok) {
      tried.push({ source, path: file, ok: true, reason: '', version: r.version });
      return { ok: true, path: file, version: r.version, source, tried };
    }
    tried.push({ source, path: file, ok: false, reason: r.reason });
    return undefined;
  };

  // 1. The setting. A bare name without a separator (e.g. "lark-dev") is looked up on PATH.
  if (input.settingPath.trim() !== '') {
    const resolved = resolveSettingPath(input.settingPath, input, host);
    const p = pathFor(host.platform);
    if (p.isAbsolute(resolved)) {
      const r = await tryFile('setting', resolved);
      if (r) return r;
    } else {
      const r = await probe(host, resolved, timeoutMs);
      if (r.ok) {
        tried.push({ source: 'setting', path: resolved, ok: true, reason: '', version: r.version });
        return { ok: true, path: resolved, version: r.version, source: 'setting', tried };
      }
      tried.push({ source: 'setting', path: resolved, ok: false, reason: r.reason });
    }
  }

  // 2. The binary shipped inside the extension.
  const bundled = await tryFile('bundled', bundledServerPath(input.extensionPath, host.platform));
  if (bundled) return bundled;

  // 3. PATH.
  const { found, searched } = await findOnPath(host);
  if (found.length === 0) {
    tried.push({ source: 'path', path: binaryName(host.platform), ok: false, reason: `not found in any of the ${searched} PATH directories` });
  }
  for (const file of found) {
    const r = await tryFile('path', file);
    if (r) return r;
  }
  return { ok: false, tried };
}

const SOURCE_LABEL: Record<CandidateSource, string> = {
  setting: 'lark.server.path',
  bundled: 'bundled binary',
  path: 'PATH',
};

/** One line per attempt, e.g. `bundled binary /ext/server/lark: file not found`. */
export function describeAttempts(tried: readonly Attempt[]): string[] {
  return tried.map((a) => `${SOURCE_LABEL[a.source]} ${a.path}: ${a.ok ? `ok (lark ${a.version})` : a.reason}`);
}

/** The error shown when no candidate works: says what was tried and how to fix it. */
export function notFoundMessage(tried: readonly Attempt[]): string {
  const lines = describeAttempts(tried).map((l) => `  - ${l}`);
  return [
    'LARK: no working `lark` language server was found. Tried:',
    ...lines,
    'Set `lark.server.path` to a `lark` binary (built with `cargo build --release` in the LARK repository), or put `lark` on PATH, then run "LARK: Restart Server".',
  ].join('\n');
}

/** Warnings worth showing even when a server was found, e.g. a broken `lark.server.path`. */
export function fallbackWarnings(result: BootstrapResult): string[] {
  if (!result.ok) return [];
  return result.tried
    .filter((a) => a.source === 'setting' && !a.ok)
    .map((a) => `LARK: lark.server.path ${a.path} is not usable (${a.reason}); using ${SOURCE_LABEL[result.source]} ${result.path} instead.`);
}

/** The real host: node's fs and child_process. */
export function nodeHost(): BootstrapHost {
  return {
    platform: process.platform,
    envPath: process.env.PATH ?? process.env.Path ?? '',
    envPathExt: process.env.PATHEXT,
    homeDir: os.homedir(),
    async isFile(p) {
      try {
        return (await fs.stat(p)).isFile();
      } catch {
        return false;
      }
    },
    async makeExecutable(p) {
      try {
        const mode = (await fs.stat(p)).mode;
        await fs.chmod(p, mode | 0o111);
        return true;
      } catch {
        return false;
      }
    },
    exec(file, args, timeoutMs) {
      return new Promise((resolve) => {
        execFile(file, args, { timeout: timeoutMs, windowsHide: true, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
          if (!err) {
            resolve({ code: 0, stdout: String(stdout), stderr: String(stderr) });
            return;
          }
          const e = err as Omit<NodeJS.ErrnoException, 'code'> & { code?: string | number | null; killed?: boolean; signal?: string | null };
          if (typeof e.code === 'number') {
            resolve({ code: e.code, stdout: String(stdout), stderr: String(stderr) });
          } else if (e.killed) {
            resolve({ code: null, stdout: String(stdout), stderr: String(stderr), timedOut: true, error: { message: e.message } });
          } else if (e.signal) {
            resolve({ code: null, signal: e.signal, stdout: String(stdout), stderr: String(stderr), error: { message: e.message } });
          } else {
            resolve({ code: null, stdout: String(stdout ?? ''), stderr: String(stderr ?? ''), error: { code: e.code ?? undefined, message: e.message } });
          }
        });
      });
    },
  };
}
