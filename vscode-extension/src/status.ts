// Status-bar item for the active editor's file, fed by the server's `lark/fileStatus` notification.

import * as vscode from 'vscode';

import { LarkClient, ServerState } from './client';
import { Commands, FILE_STATUS_NOTIFICATION, LANGUAGES } from './ids';
import { FileStatusStore, parseFileStatus } from './statusFormat';

export function isLarkDocument(doc: vscode.TextDocument | undefined): doc is vscode.TextDocument {
  return doc !== undefined && (LANGUAGES as readonly string[]).includes(doc.languageId);
}

function normalizeUri(uri: string): string {
  try {
    return vscode.Uri.parse(uri, true).toString();
  } catch {
    return uri;
  }
}

export class StatusBar implements vscode.Disposable {
  readonly store = new FileStatusStore(normalizeUri);
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly lark: LarkClient) {
    this.item = vscode.window.createStatusBarItem('lark.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'LARK';
    this.disposables.push(
      this.item,
      lark.onWillStart((client) => {
        this.store.clear();
        client.onNotification(FILE_STATUS_NOTIFICATION, (raw: unknown) => {
          const params = parseFileStatus(raw);
          if (!params) {
            lark.output.appendLine(`[status] ignored malformed ${FILE_STATUS_NOTIFICATION}: ${JSON.stringify(raw)}`);
            return;
          }
          this.store.update(params);
          this.refresh();
        });
      }),
      lark.onDidChangeState(() => this.refresh()),
      vscode.window.onDidChangeActiveTextEditor(() => this.refresh()),
      vscode.workspace.onDidOpenTextDocument((doc) => {
        if (isLarkDocument(doc)) this.checking(doc.uri);
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (isLarkDocument(e.document) && e.contentChanges.length > 0) this.checking(e.document.uri);
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        this.store.forget(doc.uri.toString());
      }),
    );
    this.refresh();
  }

  /** Shows the spinner for `uri` until its next `lark/fileStatus` arrives. */
  checking(uri: vscode.Uri): void {
    if (this.lark.running) this.store.markChecking(uri.toString());
    this.refresh();
  }

  /** Drops the spinner for `uri` (e.g. when a re-check request failed). */
  notChecking(uri: vscode.Uri): void {
    this.store.doneChecking(uri.toString());
    this.refresh();
  }

  refresh(): void {
    const doc = vscode.window.activeTextEditor?.document;
    if (!isLarkDocument(doc)) {
      this.item.hide();
      return;
    }
    const problem = serverProblem(this.lark.state);
    if (problem) {
      this.item.text = problem.text;
      this.item.tooltip = problem.tooltip;
      this.item.command = Commands.restartServer;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      this.item.show();
      return;
    }
    const view = this.store.view(doc.uri.toString());
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = Commands.recheckFile;
    this.item.backgroundColor =
      view.severity === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : view.severity === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.show();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

function serverProblem(state: ServerState): { text: string; tooltip: string } | undefined {
  switch (state.kind) {
    case 'notFound':
      return { text: '$(error) LARK: no server', tooltip: `${state.message}\n\nClick to restart the server.` };
    case 'failed':
      return { text: '$(error) LARK: server failed', tooltip: `${state.message}\n\nClick to restart the server.` };
    case 'stopped':
      return { text: '$(debug-disconnect) LARK: server stopped', tooltip: 'The LARK server is not running. Click to restart it.' };
    case 'starting':
      return { text: '$(sync~spin) LARK: starting', tooltip: 'Starting the LARK server…' };
    case 'running':
      return undefined;
  }
}

export function activate(context: vscode.ExtensionContext, lark: LarkClient): StatusBar {
  const bar = new StatusBar(lark);
  context.subscriptions.push(bar);
  return bar;
}
