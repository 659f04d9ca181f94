// The language client's lifecycle: find the server, start it, restart it, send settings.

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';

import { describeAttempts, fallbackWarnings, findServer, nodeHost, notFoundMessage } from './bootstrap';
import { didChangeConfigurationParams, LarkSettings, needsRestart, readSettings, toServerSettings } from './config';
import { CONFIG_SECTION, LANGUAGES, SCHEMES } from './ids';

export type ServerState =
  | { kind: 'starting' }
  | { kind: 'running'; path: string; version: string }
  | { kind: 'stopped' }
  | { kind: 'notFound'; message: string }
  | { kind: 'failed'; message: string };

export function currentSettings(): LarkSettings {
  return readSettings(vscode.workspace.getConfiguration(CONFIG_SECTION));
}

export const documentSelector = LANGUAGES.flatMap((language) => SCHEMES.map((scheme) => ({ scheme, language })));

/** Owns the LanguageClient; other modules subscribe to its events instead of holding the client. */
export class LarkClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private settings: LarkSettings = currentSettings();
  private queue: Promise<void> = Promise.resolve();
  private stateValue: ServerState = { kind: 'stopped' };
  private readonly disposables: vscode.Disposable[] = [];
  private readonly willStart = new vscode.EventEmitter<LanguageClient>();
  private readonly stateChanged = new vscode.EventEmitter<ServerState>();

  /** Fired with a new client before it starts: register notification handlers here. */
  readonly onWillStart = this.willStart.event;
  readonly onDidChangeState = this.stateChanged.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.OutputChannel,
  ) {
    this.disposables.push(
      this.willStart,
      this.stateChanged,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(CONFIG_SECTION)) this.configurationChanged();
      }),
    );
  }

  get state(): ServerState {
    return this.stateValue;
  }

  /** The running client, if there is one. */
  get running(): LanguageClient | undefined {
    return this.client?.isRunning() ? this.client : undefined;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  private enqueue(op: () => Promise<void>): Promise<void> {
    const next = this.queue.then(op, op);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private setState(s: ServerState): void {
    this.stateValue = s;
    this.stateChanged.fire(s);
  }

  private async doStart(): Promise<void> {
    this.settings = currentSettings();
    this.setState({ kind: 'starting' });
    const found = await findServer(
      {
        settingPath: this.settings.server.path,
        extensionPath: this.context.extensionPath,
        workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      },
      nodeHost(),
    );
    for (const line of describeAttempts(found.tried)) this.output.appendLine(`[bootstrap] ${line}`);
    if (!found.ok) {
      const message = notFoundMessage(found.tried);
      this.output.appendLine(message);
      this.setState({ kind: 'notFound', message });
      void this.showStartError('LARK: no working `lark` language server was found (see the LARK output for what was tried).');
      return;
    }
    for (const w of fallbackWarnings(found)) {
      this.output.appendLine(w);
      void vscode.window.showWarningMessage(w);
    }
    this.output.appendLine(`[bootstrap] using ${found.path} (lark ${found.version})`);

    const serverOptions: ServerOptions = {
      command: found.path,
      args: ['serve'],
      transport: TransportKind.stdio,
      options: { env: { ...process.env, RUST_BACKTRACE: process.env.RUST_BACKTRACE ?? '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector,
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => toServerSettings(currentSettings()),
    };
    const client = new LanguageClient(CONFIG_SECTION, 'LARK', serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      // A failed start stays "failed" (with its message) through the client's own restart attempts.
      if (e.newState === State.Stopped && this.stateValue.kind !== 'failed') this.setState({ kind: 'stopped' });
      else if (e.newState === State.Running) this.setState({ kind: 'running', path: found.path, version: found.version });
    });
    this.willStart.fire(client);
    try {
      await client.start();
      this.setState({ kind: 'running', path: found.path, version: found.version });
    } catch (err) {
      const message = `LARK: the server ${found.path} failed to start (${err instanceof Error ? err.message : String(err)}); its output is in the LARK output channel.`;
      this.output.appendLine(message);
      this.setState({ kind: 'failed', message });
      void this.showStartError(message);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      await client.dispose(2000); // stops the server (shutdown + exit) and drops its features
    } catch (err) {
      this.output.appendLine(`[client] stop: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.setState({ kind: 'stopped' });
  }

  private configurationChanged(): void {
    const before = this.settings;
    const after = currentSettings();
    this.settings = after;
    if (needsRestart(before, after)) {
      this.output.appendLine('[config] lark.server.path changed; restarting the server');
      void this.restart();
      return;
    }
    const client = this.running;
    if (client) void client.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(after));
  }

  private async showStartError(message: string): Promise<void> {
    const pick = await vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output', 'Retry');
    if (pick === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'lark.server.path');
    else if (pick === 'Show Output') this.output.show(true);
    else if (pick === 'Retry') await this.restart();
  }
}
