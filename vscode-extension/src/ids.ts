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
} as const;

/**
 * Commands the server advertises through `executeCommandProvider`. vscode-languageclient registers
 * these ids itself; registering them again in the extension makes activation fail.
 */
export const ServerCommands = {
  recheck: 'lark.recheck',
  showModel: 'lark.showModel',
} as const;

/** Custom server → client notification sent after each analysis of a file. */
export const FILE_STATUS_NOTIFICATION = 'lark/fileStatus';

/** URI scheme of the read-only documents that show a lifted model. */
export const MODEL_SCHEME = 'lark-model';
