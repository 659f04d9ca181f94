// Palette commands. The server's own commands (`lark.recheck`, `lark.showModel`) are registered by
// vscode-languageclient from the server's executeCommandProvider; these wrap them for the active
// editor and must use other ids.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';

import { LarkClient } from './client';
import { Commands, MODEL_SCHEME, ServerCommands } from './ids';
import { isLarkDocument, StatusBar } from './status';

/** Read-only virtual documents holding the text of `lark.showModel`. */
class ModelDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  uriFor(source: vscode.Uri): vscode.Uri {
    const base = path.posix.basename(source.path) || 'untitled';
    return vscode.Uri.from({ scheme: MODEL_SCHEME, path: `/${base}.model.txt`, query: source.toString() });
  }

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '(no model: run "LARK: Show Lifted Model of Current File" again)';
  }

  dispose(): void {
    this.changed.dispose();
  }
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

export function activate(context: vscode.ExtensionContext, lark: LarkClient, status: StatusBar): void {
  const models = new ModelDocuments();
  context.subscriptions.push(
    models,
    vscode.workspace.registerTextDocumentContentProvider(MODEL_SCHEME, models),

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

    vscode.commands.registerCommand(Commands.showModelForFile, async () => {
      const doc = larkEditorDocument();
      if (!doc) return;
      const client = await runningClient(lark);
      if (!client) return;
      let result: unknown;
      try {
        result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'LARK: lifting the kernel model…', cancellable: false },
          () => client.sendRequest(ExecuteCommandRequest.type, { command: ServerCommands.showModel, arguments: [doc.uri.toString()] }),
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
      const uri = models.uriFor(doc.uri);
      models.set(uri, text);
      let modelDoc = await vscode.workspace.openTextDocument(uri);
      if (modelDoc.languageId !== 'plaintext') modelDoc = await vscode.languages.setTextDocumentLanguage(modelDoc, 'plaintext');
      await vscode.window.showTextDocument(modelDoc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: false });
    }),
  );
}
