// Identifiers shared between package.json, the client and the server. No `vscode` import: the unit
// tests check that package.json and this file agree.

/** Language ids whose documents are sent to the server. `cuda-cpp` is VS Code's id for .cu/.cuh. */
export const LANGUAGES = ['cuda-cpp', 'ptx'] as const;

/** URI schemes of documents the server is given. */
export const SCHEMES = ['file', 'untitled'] as const;

/** Configuration namespace; also the language client id, so `lark.trace.server` works. */
export const CONFIG_SECTION = 'lark';

/** Palette commands registered by the extension itself. */
export const Commands = {
  restartServer: 'lark.restartServer',
  recheckFile: 'lark.recheckFile',
  showModelForFile: 'lark.showModelForFile',
  /** Also the command of the server's "Lean obligations" code lens, with `[documentUri, kernel]`. */
  showLeanForFile: 'lark.showLeanForFile',
} as const;

/**
 * Commands the server advertises through `executeCommandProvider`. vscode-languageclient registers
 * these ids itself; registering them again in the extension makes activation fail.
 */
export const ServerCommands = {
  recheck: 'lark.recheck',
  showModel: 'lark.showModel',
  /** `[documentUri, kernel?]` → `null` or `{ uri, text, kernel }`: a kernel's generated Lean module. */
  showLean: 'lark.showLean',
  /**
   * `[documentUri, kernel]` → `{ started: true }`: certifies a kernel with Lean in the background
   * (work-done progress with a cancel button; the outcome shows in its uncertified-region
   * diagnostics). Invoked by the server's "Certify `k` with Lean (…)" code action.
   */
  certify: 'lark.certify',
  /** `[documentUri, kernel]` → `boolean`: stops a running certification (false when none runs). */
  cancelCertify: 'lark.cancelCertify',
  /**
   * `[documentUri, kernel]` → `{ started: true }`: asks the agent for a segmentation of a kernel in
   * the background (work-done progress with a cancel button); a valid one cuts the module
   * `lark.showLean` returns (its `segmentation` is then `"agent"`). Invoked by the server's
   * "Propose segments for `k` with the agent (…)" code action.
   */
  proposeSegments: 'lark.proposeSegments',
} as const;

/** Custom server → client notification sent after each analysis of a file. */
export const FILE_STATUS_NOTIFICATION = 'lark/fileStatus';

/** URI scheme of the read-only documents that show a lifted model. */
export const MODEL_SCHEME = 'lark-model';

/** URI scheme of the read-only documents that show a kernel's generated Lean module. */
export const LEAN_SCHEME = 'lark-lean';
