// Palette commands. The server's own commands (`lark.recheck`, `lark.showModel`, `lark.showLean`,
// `lark.certify`, `lark.cancelCertify`) are registered by vscode-languageclient from the server's
// executeCommandProvider; these wrap some of them for the active editor (or the document a code
// lens names) and must use other ids. `lark.certify` needs no wrapper: the server's "Certify"
// code action invokes it with its arguments.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';

import { LarkClient } from './client';
import { Commands, LEAN_SCHEME, MODEL_SCHEME, ServerCommands } from './ids';
import { fallbackLeanPath, fileCommandArgs, leanLanguageId, parseLeanModule } from './leanModule';
import { isLarkDocument, StatusBar } from './status';

/** Read-only virtual documents of one URI scheme, holding texts the server returned. */
class VirtualDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  /** `placeholder`: the text of a document of this scheme whose text is not (or no longer) held. */
  constructor(readonly scheme: string, private readonly placeholder: string) {}

  /** Registers the provider for its scheme; dispose the result to unregister it and drop the texts. */
  register(): vscode.Disposable {
    return vscode.Disposable.from(vscode.workspace.registerTextDocumentContentProvider(this.scheme, this), this);
  }

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? this.placeholder;
  }

  dispose(): void {
    this.texts.clear();
    this.changed.dispose();
  }
}

/** The model document of a source file: `lark-model:/<basename>.model.txt?<source uri>`. */
function modelUriFor(source: vscode.Uri): vscode.Uri {
  const base = path.posix.basename(source.path) || 'untitled';
  return vscode.Uri.from({ scheme: MODEL_SCHEME, path: `/${base}.model.txt`, query: source.toString() });
}

/**
 * Where a Lean module is shown: the server's `lark-lean:` URI, else
 * `lark-lean:/<basename>/<kernel>.lean?<source uri>`.
 */
function leanUriFor(source: vscode.Uri, serverUri: string | undefined, kernel: string | undefined): vscode.Uri {
  if (serverUri !== undefined) {
    try {
      const uri = vscode.Uri.parse(serverUri, true);
      if (uri.scheme === LEAN_SCHEME) return uri;
    } catch {
      // not a URI: build one below
    }
  }
  return vscode.Uri.from({ scheme: LEAN_SCHEME, path: fallbackLeanPath(source.path, kernel), query: source.toString() });
}

/** Opens a virtual document beside the editor, in `languageId`. */
async function showBeside(uri: vscode.Uri, languageId: string): Promise<void> {
  let doc = await vscode.workspace.openTextDocument(uri);
  if (doc.languageId !== languageId) doc = await vscode.languages.setTextDocumentLanguage(doc, languageId);
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: false });
}

function larkEditorDocument(): vscode.TextDocument | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  if (isLarkDocument(doc)) return doc;
  void vscode.window.showInformationMessage('LARK: open a CUDA (.cu) or PTX (.ptx) file first.');
  return undefined;
}

async function runningClient(lark: LarkClient): Promise<LanguageClient | undefined> {
  const client = lark.running;
  if (client) return client;
  const pick = await vscode.window.showErrorMessage('LARK: the language server is not running.', 'Restart Server', 'Show Output');
  if (pick === 'Restart Server') await lark.restart();
  else if (pick === 'Show Output') lark.output.show(true);
  return undefined;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The source document a file command acts on: the one a code lens names (`uri`), else the active
 * editor's, which must be a CUDA or PTX file.
 */
function targetUri(uri: string | undefined): vscode.Uri | undefined {
  if (uri !== undefined) {
    try {
      return vscode.Uri.parse(uri, true);
    } catch (err) {
      void vscode.window.showErrorMessage(`LARK: not a document URI: ${uri} (${errorText(err)})`);
      return undefined;
    }
  }
  return larkEditorDocument()?.uri;
}

export function activate(context: vscode.ExtensionContext, lark: LarkClient, status: StatusBar): void {
  const models = new VirtualDocuments(MODEL_SCHEME, '(no model: run "LARK: Show Lifted Model of Current File" again)');
  const leanModules = new VirtualDocuments(LEAN_SCHEME, '-- no Lean module: run "LARK: Show Lean Obligations of Current File" again');
  context.subscriptions.push(
    models.register(),
    leanModules.register(),

    vscode.commands.registerCommand(Commands.restartServer, async () => {
      lark.output.appendLine('[command] restarting the server');
      await lark.restart();
    }),

    vscode.commands.registerCommand(Commands.recheckFile, async () => {
      const doc = larkEditorDocument();
      if (!doc) return;
      const client = await runningClient(lark);
      if (!client) return;
      status.checking(doc.uri);
      try {
        await client.sendRequest(ExecuteCommandRequest.type, { command: ServerCommands.recheck, arguments: [doc.uri.toString()] });
      } catch (err) {
        status.notChecking(doc.uri);
        void vscode.window.showErrorMessage(`LARK: re-check failed: ${errorText(err)}`);
      }
    }),

    // The server's "show model" code lens sends `[documentUri]`; the palette sends nothing.
    vscode.commands.registerCommand(Commands.showModelForFile, async (uriArg?: unknown) => {
      const source = targetUri(fileCommandArgs(uriArg, undefined).uri);
      if (!source) return;
      const client = await runningClient(lark);
      if (!client) return;
      let result: unknown;
      try {
        result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'LARK: lifting the kernel model…', cancellable: false },
          () => client.sendRequest(ExecuteCommandRequest.type, { command: ServerCommands.showModel, arguments: [source.toString()] }),
        );
      } catch (err) {
        void vscode.window.showErrorMessage(`LARK: show model failed: ${errorText(err)}`);
        return;
      }
      if (result === null || result === undefined) {
        void vscode.window.showInformationMessage('LARK: the server returned no model for this file.');
        return;
      }
      const text = typeof result === 'string' ? result : JSON.stringify(result, null, 2);
      const uri = modelUriFor(source);
      models.set(uri, text);
      await showBeside(uri, 'plaintext');
    }),

    // The server's "Lean obligations" code lens sends `[documentUri, kernel]`; the palette sends
    // nothing (the active editor's file, and the server picks its first kernel).
    vscode.commands.registerCommand(Commands.showLeanForFile, async (uriArg?: unknown, kernelArg?: unknown) => {
      const args = fileCommandArgs(uriArg, kernelArg);
      const source = targetUri(args.uri);
      if (!source) return;
      const client = await runningClient(lark);
      if (!client) return;
      const what = args.kernel ? `this kernel (${args.kernel})` : 'this kernel';
      let result: unknown;
      try {
        result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `LARK: generating the Lean module of ${args.kernel ?? 'the kernel'}…`, cancellable: false },
          () =>
            client.sendRequest(ExecuteCommandRequest.type, {
              command: ServerCommands.showLean,
              arguments: args.kernel ? [source.toString(), args.kernel] : [source.toString()],
            }),
        );
      } catch (err) {
        void vscode.window.showErrorMessage(`LARK: no Lean module for ${what}: ${errorText(err)}`);
        return;
      }
      const lean = parseLeanModule(result);
      if ('error' in lean) {
        const message = `LARK: no Lean module for ${what}: ${lean.error}.`;
        if (result === null || result === undefined) void vscode.window.showInformationMessage(message);
        else void vscode.window.showErrorMessage(message);
        return;
      }
      const uri = leanUriFor(source, lean.uri, lean.kernel ?? args.kernel);
      leanModules.set(uri, lean.text);
      await showBeside(uri, leanLanguageId(await vscode.languages.getLanguages()));
    }),
  );
}
