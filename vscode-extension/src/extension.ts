// Entry point: wires the feature modules together (vscode-clangd style).

import * as vscode from 'vscode';

import { LarkClient } from './client';
import * as commands from './commands';
import * as status from './status';

let lark: LarkClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('LARK');
  context.subscriptions.push(output);
  output.appendLine(`LARK extension ${context.extension.packageJSON.version} activating`);

  lark = new LarkClient(context, output);
  context.subscriptions.push(lark);
  const bar = status.activate(context, lark);
  commands.activate(context, lark, bar);

  // Failure to find or start the server is reported (message, status bar, output) and must not
  // fail activation: the palette commands stay usable, e.g. "LARK: Restart Server".
  await lark.start();
}

export async function deactivate(): Promise<void> {
  const l = lark;
  lark = undefined;
  await l?.stop();
}
