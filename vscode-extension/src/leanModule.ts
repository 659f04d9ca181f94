// The answer of the server's `lark.showLean` and the arguments of the file commands, checked
// without VS Code. No `vscode` import: unit-tested with `node --test`.

import * as path from 'node:path';

/** What `lark.showLean` returns for one kernel (besides `null`). */
export interface LeanModule {
  /** A `lark-lean:` URI naming the module; may be absent or of another scheme (then not used). */
  uri?: string;
  /** Lean 4 source of the generated module. */
  text: string;
  /** PTX entry name of the kernel. */
  kernel?: string;
}

/**
 * The module in a `lark.showLean` answer, or a reason it has none, in words that finish the
 * sentence "no Lean module for this kernel: …".
 */
export function parseLeanModule(result: unknown): LeanModule | { error: string } {
  if (result === null || result === undefined) return { error: 'the server returned none' };
  if (typeof result !== 'object' || Array.isArray(result)) return { error: `unexpected answer from the server (${describe(result)})` };
  const r = result as Record<string, unknown>;
  if (typeof r.text !== 'string') return { error: 'the server\'s answer has no "text"' };
  const lean: LeanModule = { text: r.text };
  if (typeof r.uri === 'string' && r.uri.trim() !== '') lean.uri = r.uri;
  if (typeof r.kernel === 'string' && r.kernel !== '') lean.kernel = r.kernel;
  return lean;
}

function describe(v: unknown): string {
  return Array.isArray(v) ? 'an array' : typeof v;
}

/**
 * The optional `(uri, kernel)` arguments of `lark.showLeanForFile` (and `(uri)` of
 * `lark.showModelForFile`): strings as a code lens sends them, or a `vscode.Uri` as VS Code sends
 * one from a menu (anything with a string `scheme` and `path`; its `toString()` is the URI).
 * Anything else counts as absent, so the palette (no arguments) falls back to the active editor.
 */
export function fileCommandArgs(uri: unknown, kernel: unknown): { uri?: string; kernel?: string } {
  const out: { uri?: string; kernel?: string } = {};
  if (typeof uri === 'string') {
    if (uri !== '') out.uri = uri;
  } else if (isUriLike(uri)) {
    out.uri = uri.toString();
  }
  if (typeof kernel === 'string' && kernel !== '') out.kernel = kernel;
  return out;
}

function isUriLike(v: unknown): v is { scheme: string; toString(): string } {
  return typeof v === 'object' && v !== null && typeof (v as { scheme?: unknown }).scheme === 'string' && typeof (v as { path?: unknown }).path === 'string';
}

/**
 * Path of the `lark-lean:` document for a kernel when the server gave no usable URI:
 * `/<source basename>/<kernel>.lean`, e.g. `/vector_add.cu/vector_add.lean`. `/` and `\` in
 * either part become `_` so that the path keeps exactly two segments.
 */
export function fallbackLeanPath(sourcePath: string, kernel: string | undefined): string {
  const base = path.posix.basename(sourcePath.replace(/\\/g, '/')) || 'untitled';
  return `/${segment(base)}/${segment(kernel || 'module')}.lean`;
}

function segment(s: string): string {
  return s.replace(/[/\\]/g, '_');
}

/** The language to show the module in: `lean4` where a Lean extension provides it. */
export function leanLanguageId(known: readonly string[]): 'lean4' | 'plaintext' {
  return known.includes('lean4') ? 'lean4' : 'plaintext';
}
