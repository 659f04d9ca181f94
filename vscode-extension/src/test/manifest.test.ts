// package.json must agree with the code: settings and their defaults, command ids, languages.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { DEFAULT_SETTINGS } from '../config';
import { Commands, CONFIG_SECTION, LANGUAGES, LEAN_SCHEME, MODEL_SCHEME, ServerCommands } from '../ids';

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

function flatten(obj: object, prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) Object.assign(out, flatten(v, `${prefix}${k}.`));
    else out[`${prefix}${k}`] = v;
  }
  return out;
}

test('contributed settings are exactly the typed settings, with the same defaults', () => {
  const props = pkg.contributes.configuration.properties as Record<string, { default: unknown }>;
  const expected = flatten(DEFAULT_SETTINGS, `${CONFIG_SECTION}.`);
  assert.deepEqual(Object.keys(props).sort(), Object.keys(expected).sort());
  for (const [key, value] of Object.entries(expected)) assert.deepEqual(props[key].default, value, key);
});

test('palette commands are contributed; the server-owned ids are not', () => {
  const contributed: string[] = (pkg.contributes.commands as { command: string }[]).map((c) => c.command).sort();
  assert.deepEqual([...contributed], [...Object.values(Commands)].sort());
  for (const id of Object.values(ServerCommands)) {
    assert.ok(!contributed.includes(id), `${id} is registered by vscode-languageclient; contributing it is a conflict`);
    assert.ok(!(pkg.activationEvents as string[]).includes(`onCommand:${id}`));
  }
  for (const id of Object.values(Commands)) assert.ok((pkg.activationEvents as string[]).includes(`onCommand:${id}`), id);
});

test('file commands: in the palette only for the languages served, titled as the docs say', () => {
  const served = LANGUAGES.map((l) => `editorLangId == ${l}`).join(' || ');
  const palette = pkg.contributes.menus.commandPalette as { command: string; when?: string }[];
  const commands = pkg.contributes.commands as { command: string; title: string; category: string }[];
  for (const id of [Commands.recheckFile, Commands.showModelForFile, Commands.showLeanForFile]) {
    assert.equal(palette.find((m) => m.command === id)?.when, served, id);
  }
  for (const c of commands) assert.equal(c.category, 'LARK', c.command);
  const title = (id: string) => commands.find((c) => c.command === id)?.title;
  assert.equal(title(Commands.showModelForFile), 'Show Lifted Model of Current File');
  assert.equal(title(Commands.showLeanForFile), 'Show Lean Obligations of Current File');
});

test('the Lean module: client command, server command and virtual-document scheme', () => {
  assert.equal(Commands.showLeanForFile, 'lark.showLeanForFile');
  assert.equal(ServerCommands.showLean, 'lark.showLean');
  assert.equal(LEAN_SCHEME, 'lark-lean');
  assert.notEqual(LEAN_SCHEME, MODEL_SCHEME);
  // Ids are shared by at most one of the two sides.
  const client = new Set<string>(Object.values(Commands));
  for (const id of Object.values(ServerCommands)) assert.ok(!client.has(id), id);
});

test('activates on the languages it serves; contributes the ptx language and grammar', () => {
  for (const lang of LANGUAGES) assert.ok((pkg.activationEvents as string[]).includes(`onLanguage:${lang}`), lang);
  const ptx = pkg.contributes.languages.find((l: { id: string }) => l.id === 'ptx');
  assert.deepEqual(ptx.extensions, ['.ptx']);
  assert.ok(fs.existsSync(path.join(root, ptx.configuration)));
  const grammar = pkg.contributes.grammars.find((g: { language: string }) => g.language === 'ptx');
  assert.equal(grammar.scopeName, 'source.ptx');
  assert.ok(fs.existsSync(path.join(root, grammar.path)));
  const langConfig = JSON.parse(fs.readFileSync(path.join(root, ptx.configuration), 'utf8'));
  assert.deepEqual(langConfig.comments, { lineComment: '//', blockComment: ['/*', '*/'] });
});

test('loadable by code-server 4.100.3: engines.vscode and @types/vscode at most 1.100', () => {
  const engine = /^\^?(\d+)\.(\d+)\.\d+$/.exec(pkg.engines.vscode);
  assert.ok(engine, pkg.engines.vscode);
  assert.ok(Number(engine[1]) === 1 && Number(engine[2]) <= 100, pkg.engines.vscode);
  const types = /^(\d+)\.(\d+)\.\d+$/.exec(pkg.devDependencies['@types/vscode']);
  assert.ok(types && Number(types[2]) <= Number(engine[2]), '@types/vscode must not be newer than engines.vscode');
});

test('one runtime dependency: vscode-languageclient 9', () => {
  assert.deepEqual(Object.keys(pkg.dependencies), ['vscode-languageclient']);
  assert.match(pkg.dependencies['vscode-languageclient'], /^\^?9\./);
  assert.equal(pkg.main, './out/extension.js');
  assert.equal(pkg.license, 'MIT');
  assert.ok(pkg.repository?.url);
});

const AGENT_SETTINGS = ['lark.agent.command', 'lark.agent.endpoint', 'lark.agent.model', 'lark.agent.keyEnv'];

test('untrusted workspaces cannot choose the programs LARK runs nor where it sends a kernel', () => {
  const u = pkg.capabilities.untrustedWorkspaces;
  assert.equal(u.supported, 'limited');
  assert.ok(typeof u.description === 'string' && u.description.includes('lark.agent'), u.description);
  assert.deepEqual(
    [...u.restrictedConfigurations].sort(),
    ['lark.compiler.path', 'lark.server.path', ...AGENT_SETTINGS].sort(),
  );
  const props = pkg.contributes.configuration.properties as Record<string, unknown>;
  for (const key of u.restrictedConfigurations as string[]) assert.ok(key in props, `${key} is restricted but not declared`);
});

test('agent settings: declared as strings, empty by default, never settable by a workspace file', () => {
  const props = pkg.contributes.configuration.properties as Record<
    string,
    { type: string; default: unknown; scope?: string; markdownDescription?: string }
  >;
  for (const key of AGENT_SETTINGS) {
    assert.equal(props[key]?.type, 'string', key);
    assert.equal(props[key].default, '', key);
    assert.ok(props[key].markdownDescription, key);
  }
  // `machine`: user or remote settings only, even in a trusted workspace.
  for (const key of ['lark.agent.command', 'lark.agent.endpoint', 'lark.agent.keyEnv']) {
    assert.equal(props[key].scope, 'machine', key);
  }
  assert.match(props['lark.agent.command'].markdownDescription!, /sh -c/);
  assert.match(props['lark.agent.command'].markdownDescription!, /runs code/);
  assert.match(props['lark.agent.endpoint'].markdownDescription!, /sent to this service/);
  assert.match(props['lark.agent.keyEnv'].markdownDescription!, /never the key itself/);
});

test('certify commands are server-advertised: not contributed, not activation events', () => {
  assert.equal(ServerCommands.certify, 'lark.certify');
  assert.equal(ServerCommands.cancelCertify, 'lark.cancelCertify');
  const contributed = (pkg.contributes.commands as { command: string }[]).map((c) => c.command);
  const palette = (pkg.contributes.menus.commandPalette as { command: string }[]).map((m) => m.command);
  for (const id of [ServerCommands.certify, ServerCommands.cancelCertify]) {
    assert.ok(!contributed.includes(id), id);
    assert.ok(!palette.includes(id), id);
    assert.ok(!(pkg.activationEvents as string[]).includes(`onCommand:${id}`), id);
    assert.ok(!(Object.values(Commands) as string[]).includes(id), id);
  }
});

test('the extension registers none of the server-advertised ids itself', () => {
  const srcDir = path.join(root, 'src');
  for (const file of fs.readdirSync(srcDir).filter((f) => f.endsWith('.ts'))) {
    const text = fs.readFileSync(path.join(srcDir, file), 'utf8');
    assert.ok(!/registerCommand\(\s*ServerCommands\./.test(text), file);
    for (const id of Object.values(ServerCommands)) assert.ok(!text.includes(`registerCommand('${id}'`), `${file}: ${id}`);
  }
});
