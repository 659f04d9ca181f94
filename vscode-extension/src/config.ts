// Typed access to the `lark.*` settings, and the mapping from settings to what the server receives.
// No `vscode` import: `ConfigSource` is satisfied by `vscode.workspace.getConfiguration('lark')`
// and by plain objects in tests.

/** The part of `vscode.WorkspaceConfiguration` this module needs. Keys are relative to `lark.`. */
export interface ConfigSource {
  get<T>(key: string): T | undefined;
}

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type TraceLevel = 'off' | 'messages' | 'verbose';

/** Every `lark.*` setting, validated and with defaults filled in. */
export interface LarkSettings {
  server: { path: string };
  compiler: {
    path: string;
    arch: string;
    includePaths: string[];
    defines: string[];
  };
  /** `null`: the server's default for its solver (1000 ms with Yices, 2000 with z3). */
  smt: { timeoutMs: number | null };
  strictRaces: boolean;
  firstLook: boolean;
  interfaceFile: string;
  logLevel: LogLevel;
  trace: { server: TraceLevel };
  agent: AgentSettings;
}

/**
 * The proof agent "Certify" uses: a command (run with `sh -c`), else an OpenAI-compatible
 * endpoint with its model and the NAME of the server environment variable holding its key (never
 * the key itself); all empty: the built-in prover. The server picks; the extension only passes them.
 */
export interface AgentSettings {
  command: string;
  endpoint: string;
  model: string;
  keyEnv: string;
  /** The most tokens an endpoint may spend on one certification run; 0: no limit. */
  tokenBudget: number;
}

/** Defaults; they must equal the `default`s in package.json (a unit test checks). */
export const DEFAULT_SETTINGS: LarkSettings = {
  server: { path: '' },
  compiler: { path: '', arch: 'sm_80', includePaths: [], defines: [] },
  smt: { timeoutMs: null },
  strictRaces: false,
  firstLook: true,
  interfaceFile: '',
  logLevel: 'info',
  trace: { server: 'off' },
  agent: { command: '', endpoint: '', model: '', keyEnv: '', tokenBudget: 0 },
};

const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];
const TRACE_LEVELS: readonly TraceLevel[] = ['off', 'messages', 'verbose'];

function str(cfg: ConfigSource, key: string, fallback: string): string {
  const v = cfg.get<unknown>(key);
  return typeof v === 'string' ? v.trim() : fallback;
}

function strList(cfg: ConfigSource, key: string): string[] {
  const v = cfg.get<unknown>(key);
  if (!Array.isArray(v)) return [];
  return v.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter((x) => x !== '');
}

function bool(cfg: ConfigSource, key: string, fallback: boolean): boolean {
  const v = cfg.get<unknown>(key);
  return typeof v === 'boolean' ? v : fallback;
}

function positiveInt<F extends number | null>(cfg: ConfigSource, key: string, fallback: F): number | F {
  const v = cfg.get<unknown>(key);
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 1) return fallback;
  return Math.round(v);
}

function nonNegativeInt(cfg: ConfigSource, key: string, fallback: number): number {
  const v = cfg.get<unknown>(key);
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return fallback;
  return Math.round(v);
}

function oneOf<T extends string>(cfg: ConfigSource, key: string, allowed: readonly T[], fallback: T): T {
  const v = cfg.get<unknown>(key);
  return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : fallback;
}

// Typed getters, one per setting (vscode-clangd style).
export const serverPath = (cfg: ConfigSource) => str(cfg, 'server.path', DEFAULT_SETTINGS.server.path);
export const compilerPath = (cfg: ConfigSource) => str(cfg, 'compiler.path', DEFAULT_SETTINGS.compiler.path);
export const compilerArch = (cfg: ConfigSource) =>
  str(cfg, 'compiler.arch', DEFAULT_SETTINGS.compiler.arch) || DEFAULT_SETTINGS.compiler.arch;
export const compilerIncludePaths = (cfg: ConfigSource) => strList(cfg, 'compiler.includePaths');
export const compilerDefines = (cfg: ConfigSource) => strList(cfg, 'compiler.defines');
export const smtTimeoutMs = (cfg: ConfigSource) => positiveInt(cfg, 'smt.timeoutMs', DEFAULT_SETTINGS.smt.timeoutMs);
export const strictRaces = (cfg: ConfigSource) => bool(cfg, 'strictRaces', DEFAULT_SETTINGS.strictRaces);
export const firstLook = (cfg: ConfigSource) => bool(cfg, 'firstLook', DEFAULT_SETTINGS.firstLook);
export const interfaceFile = (cfg: ConfigSource) => str(cfg, 'interfaceFile', DEFAULT_SETTINGS.interfaceFile);
export const logLevel = (cfg: ConfigSource) => oneOf(cfg, 'logLevel', LOG_LEVELS, DEFAULT_SETTINGS.logLevel);
export const traceServer = (cfg: ConfigSource) => oneOf(cfg, 'trace.server', TRACE_LEVELS, DEFAULT_SETTINGS.trace.server);
export const agentCommand = (cfg: ConfigSource) => str(cfg, 'agent.command', DEFAULT_SETTINGS.agent.command);
export const agentEndpoint = (cfg: ConfigSource) => str(cfg, 'agent.endpoint', DEFAULT_SETTINGS.agent.endpoint);
export const agentModel = (cfg: ConfigSource) => str(cfg, 'agent.model', DEFAULT_SETTINGS.agent.model);
export const agentKeyEnv = (cfg: ConfigSource) => str(cfg, 'agent.keyEnv', DEFAULT_SETTINGS.agent.keyEnv);
export const agentTokenBudget = (cfg: ConfigSource) => nonNegativeInt(cfg, 'agent.tokenBudget', DEFAULT_SETTINGS.agent.tokenBudget);

/** Reads all settings; wrong types fall back to the default instead of reaching the server. */
export function readSettings(cfg: ConfigSource): LarkSettings {
  return {
    server: { path: serverPath(cfg) },
    compiler: {
      path: compilerPath(cfg),
      arch: compilerArch(cfg),
      includePaths: compilerIncludePaths(cfg),
      defines: compilerDefines(cfg),
    },
    smt: { timeoutMs: smtTimeoutMs(cfg) },
    strictRaces: strictRaces(cfg),
    firstLook: firstLook(cfg),
    interfaceFile: interfaceFile(cfg),
    logLevel: logLevel(cfg),
    trace: { server: traceServer(cfg) },
    agent: {
      command: agentCommand(cfg),
      endpoint: agentEndpoint(cfg),
      model: agentModel(cfg),
      keyEnv: agentKeyEnv(cfg),
      tokenBudget: agentTokenBudget(cfg),
    },
  };
}

/**
 * What the server receives as `initializationOptions`, and as `settings.lark` in
 * `workspace/didChangeConfiguration`. Same camelCase shape as the settings (`lark.smt.timeoutMs` →
 * `smt.timeoutMs`); every key is always present. `trace` is left out: the client handles it.
 */
export interface ServerSettings {
  server: { path: string };
  compiler: { path: string; arch: string; includePaths: string[]; defines: string[] };
  /** `null`: the server's default for its solver (1000 ms with Yices, 2000 with z3). */
  smt: { timeoutMs: number | null };
  strictRaces: boolean;
  firstLook: boolean;
  interfaceFile: string;
  logLevel: LogLevel;
  agent: AgentSettings;
}

export function toServerSettings(s: LarkSettings): ServerSettings {
  return {
    server: { path: s.server.path },
    compiler: {
      path: s.compiler.path,
      arch: s.compiler.arch,
      includePaths: [...s.compiler.includePaths],
      defines: [...s.compiler.defines],
    },
    smt: { timeoutMs: s.smt.timeoutMs },
    strictRaces: s.strictRaces,
    firstLook: s.firstLook,
    interfaceFile: s.interfaceFile,
    logLevel: s.logLevel,
    agent: {
      command: s.agent.command,
      endpoint: s.agent.endpoint,
      model: s.agent.model,
      keyEnv: s.agent.keyEnv,
      tokenBudget: s.agent.tokenBudget,
    },
  };
}

/** Params of `workspace/didChangeConfiguration` as the server expects them. */
export function didChangeConfigurationParams(s: LarkSettings): { settings: { lark: ServerSettings } } {
  return { settings: { lark: toServerSettings(s) } };
}

/**
 * Settings whose change needs a new server process (the rest are sent to the running one; the
 * agent settings take effect at the next certification).
 */
export function needsRestart(before: LarkSettings, after: LarkSettings): boolean {
  return before.server.path !== after.server.path;
}

/** A `ConfigSource` over a nested plain object, e.g. `{ smt: { timeoutMs: 10 } }`. For tests and scripts. */
export function objectConfigSource(obj: Record<string, unknown>): ConfigSource {
  return {
    get<T>(key: string): T | undefined {
      let cur: unknown = obj;
      for (const part of key.split('.')) {
        if (cur === null || typeof cur !== 'object' || !(part in (cur as object))) return undefined;
        cur = (cur as Record<string, unknown>)[part];
      }
      return cur as T;
    },
  };
}
