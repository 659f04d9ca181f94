// Turning `lark/fileStatus` notifications into status-bar text and tooltips. No `vscode` import.

/** One kernel's result, as sent by the server. */
export interface KernelStatus {
  name: string;
  verdict: string;
  millis: number;
}

/** Params of the `lark/fileStatus` notification. */
export interface FileStatusParams {
  uri: string;
  kernels: KernelStatus[];
}

/** Verdicts, in the words the server uses (ARCHITECTURE.md "Verdicts"). */
export const FAILING_VERDICTS = ['race', 'barrier_divergence', 'out_of_bounds', 'mismatch', 'error'] as const;
export const PASSING_VERDICTS = ['certified', 'verified'] as const;
export const KNOWN_VERDICTS = [...PASSING_VERDICTS, ...FAILING_VERDICTS, 'uncertified'] as const;

export type Severity = 'ok' | 'warning' | 'error' | 'none';

export interface StatusView {
  /** Status-bar text with a codicon, e.g. `$(error) LARK: race in reduce`. */
  text: string;
  /** Plain-text tooltip: one line per kernel with verdict and time. */
  tooltip: string;
  severity: Severity;
}

/** Accepts only well-formed params; the server's output is not trusted to be well-formed. */
export function parseFileStatus(raw: unknown): FileStatusParams | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  if (typeof r.uri !== 'string' || !Array.isArray(r.kernels)) return undefined;
  const kernels: KernelStatus[] = [];
  for (const k of r.kernels) {
    if (k === null || typeof k !== 'object') continue;
    const kk = k as Record<string, unknown>;
    if (typeof kk.name !== 'string' || typeof kk.verdict !== 'string') continue;
    const millis = typeof kk.millis === 'number' && Number.isFinite(kk.millis) && kk.millis >= 0 ? kk.millis : 0;
    kernels.push({ name: kk.name, verdict: kk.verdict, millis });
  }
  return { uri: r.uri, kernels };
}

/** `barrier_divergence` → `barrier divergence`; `uncertified(reason)` stays readable too. */
export function verdictLabel(verdict: string): string {
  return verdict.replace(/_/g, ' ');
}

/** The verdict word without a `(reason)` suffix: `uncertified(timeout)` → `uncertified`. */
export function verdictKind(verdict: string): string {
  const i = verdict.indexOf('(');
  return (i >= 0 ? verdict.slice(0, i) : verdict).trim();
}

export function isFailing(verdict: string): boolean {
  return (FAILING_VERDICTS as readonly string[]).includes(verdictKind(verdict));
}

export function isPassing(verdict: string): boolean {
  return (PASSING_VERDICTS as readonly string[]).includes(verdictKind(verdict));
}

/** `7 ms`, `1.3 s`, `2 min 5 s`. */
export function formatMillis(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

function countBy(kernels: readonly KernelStatus[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of kernels) {
    const kind = verdictKind(k.verdict);
    m.set(kind, (m.get(kind) ?? 0) + 1);
  }
  return m;
}

/** Text and severity of the status bar for one file's kernels. */
export function summarize(kernels: readonly KernelStatus[]): { text: string; severity: Severity } {
  if (kernels.length === 0) return { text: '$(circle-large-outline) LARK: no kernels', severity: 'none' };

  const failing = kernels.filter((k) => isFailing(k.verdict));
  if (failing.length > 0) {
    const first = failing[0];
    const more = failing.length > 1 ? ` (+${failing.length - 1} more)` : '';
    return { text: `$(error) LARK: ${verdictLabel(verdictKind(first.verdict))} in ${first.name}${more}`, severity: 'error' };
  }

  const counts = countBy(kernels);
  const notPassing = kernels.filter((k) => !isPassing(k.verdict));
  if (notPassing.length > 0) {
    // uncertified, or a verdict word this client does not know yet: never shown as a pass.
    const parts = [...counts.entries()]
      .filter(([kind]) => !(PASSING_VERDICTS as readonly string[]).includes(kind))
      .map(([kind, n]) => `${n} ${verdictLabel(kind)}`);
    return { text: `$(question) LARK: ${parts.join(', ')}`, severity: 'warning' };
  }

  const certified = counts.get('certified') ?? 0;
  const verified = counts.get('verified') ?? 0;
  if (verified === 0) return { text: `$(verified) LARK: ${certified} certified`, severity: 'ok' };
  if (certified === 0) return { text: `$(check) LARK: ${verified} verified`, severity: 'ok' };
  return { text: `$(check) LARK: ${certified} certified, ${verified} verified`, severity: 'ok' };
}

/** One line per kernel, in the server's order: `reduce — race (12 ms)`. */
export function tooltipLines(kernels: readonly KernelStatus[]): string[] {
  return kernels.map((k) => `${k.name} — ${verdictLabel(k.verdict)} (${formatMillis(k.millis)})`);
}

export function formatStatus(params: FileStatusParams | undefined, opts: { checking?: boolean } = {}): StatusView {
  if (params === undefined) {
    return {
      text: opts.checking ? '$(sync~spin) LARK: checking…' : '$(circle-large-outline) LARK',
      tooltip: opts.checking ? 'LARK is checking this file.' : 'LARK has no results for this file yet. Click to check it.',
      severity: 'none',
    };
  }
  const { text, severity } = summarize(params.kernels);
  const lines = params.kernels.length === 0 ? ['No kernels in this file.'] : tooltipLines(params.kernels);
  const header = opts.checking ? 'LARK (re-checking; previous results):' : 'LARK:';
  return {
    text: opts.checking ? text.replace(/^\$\([^)]*\)/, '$(sync~spin)') : text,
    tooltip: [header, ...lines, '', 'Click to re-check this file.'].join('\n'),
    severity,
  };
}

/**
 * Latest status per document, keyed by a normalized URI string (the extension normalizes with
 * `vscode.Uri.parse(uri).toString()`, so a server's encoding of the URI does not matter).
 */
export class FileStatusStore {
  private readonly statuses = new Map<string, FileStatusParams>();
  private readonly checking = new Set<string>();

  constructor(private readonly normalize: (uri: string) => string = (u) => u) {}

  update(params: FileStatusParams): string {
    const key = this.normalize(params.uri);
    this.statuses.set(key, params);
    this.checking.delete(key);
    return key;
  }

  markChecking(uri: string): void {
    this.checking.add(this.normalize(uri));
  }

  doneChecking(uri: string): void {
    this.checking.delete(this.normalize(uri));
  }

  forget(uri: string): void {
    const key = this.normalize(uri);
    this.statuses.delete(key);
    this.checking.delete(key);
  }

  clear(): void {
    this.statuses.clear();
    this.checking.clear();
  }

  view(uri: string): StatusView {
    const key = this.normalize(uri);
    return formatStatus(this.statuses.get(key), { checking: this.checking.has(key) });
  }

  get(uri: string): FileStatusParams | undefined {
    return this.statuses.get(this.normalize(uri));
  }
}
