import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  agentCommand,
  DEFAULT_SETTINGS,
  didChangeConfigurationParams,
  needsRestart,
  objectConfigSource,
  readSettings,
  smtTimeoutMs,
  toServerSettings,
} from '../config';

test('empty configuration gives the defaults', () => {
  assert.deepEqual(readSettings(objectConfigSource({})), DEFAULT_SETTINGS);
});

test('settings map to the server initializationOptions, nested and camelCase', () => {
  const cfg = objectConfigSource({
    server: { path: ' /opt/lark/bin/lark ' },
    compiler: { path: 'clang-19', arch: 'sm_90', includePaths: ['include', ' /usr/local/cuda/include '], defines: ['N=256', 'DEBUG'] },
    smt: { timeoutMs: 5000 },
    strictRaces: true,
    firstLook: false,
    interfaceFile: 'specs/lark.toml',
    logLevel: 'debug',
    trace: { server: 'verbose' },
    agent: { command: 'prover --json', endpoint: 'http://127.0.0.1:8000/v1', model: 'm', keyEnv: 'LARK_KEY', tokenBudget: 50000 },
  });
  assert.deepEqual(toServerSettings(readSettings(cfg)), {
    server: { path: '/opt/lark/bin/lark' },
    compiler: { path: 'clang-19', arch: 'sm_90', includePaths: ['include', '/usr/local/cuda/include'], defines: ['N=256', 'DEBUG'] },
    smt: { timeoutMs: 5000 },
    strictRaces: true,
    firstLook: false,
    interfaceFile: 'specs/lark.toml',
    logLevel: 'debug',
    agent: { command: 'prover --json', endpoint: 'http://127.0.0.1:8000/v1', model: 'm', keyEnv: 'LARK_KEY', tokenBudget: 50000 },
  });
});

test('didChangeConfiguration params wrap the same object under settings.lark', () => {
  const s = readSettings(objectConfigSource({ smt: { timeoutMs: 10 } }));
  const params = didChangeConfigurationParams(s);
  assert.deepEqual(params, { settings: { lark: toServerSettings(s) } });
  assert.equal(params.settings.lark.smt.timeoutMs, 10);
  assert.equal(params.settings.lark.compiler.arch, 'sm_80');
});

test('values of the wrong type fall back to defaults instead of reaching the server', () => {
  const s = readSettings(
    objectConfigSource({
      server: { path: 42 },
      compiler: { arch: '', includePaths: 'not-a-list', defines: ['A', 3, null, ' ', 'B=1'] },
      smt: { timeoutMs: -5 },
      logLevel: 'verbose',
      trace: { server: true },
    }),
  );
  assert.equal(s.server.path, '');
  assert.equal(s.compiler.arch, 'sm_80');
  assert.deepEqual(s.compiler.includePaths, []);
  assert.deepEqual(s.compiler.defines, ['A', 'B=1']);
  assert.equal(s.smt.timeoutMs, null, "the server's default");
  assert.equal(s.logLevel, 'info');
  assert.equal(s.trace.server, 'off');
});

test('timeout is rounded to whole milliseconds and must be positive', () => {
  assert.equal(smtTimeoutMs(objectConfigSource({ smt: { timeoutMs: 1500.6 } })), 1501);
  assert.equal(smtTimeoutMs(objectConfigSource({ smt: { timeoutMs: 0 } })), null);
  assert.equal(smtTimeoutMs(objectConfigSource({ smt: { timeoutMs: Number.NaN } })), null);
  assert.equal(smtTimeoutMs(objectConfigSource({ smt: { timeoutMs: null } })), null);
});

test('server settings do not alias the settings arrays', () => {
  const s = readSettings(objectConfigSource({ compiler: { defines: ['A'] } }));
  const out = toServerSettings(s);
  out.compiler.defines.push('B');
  assert.deepEqual(s.compiler.defines, ['A']);
});

test('only a change of the server path needs a restart', () => {
  const a = readSettings(objectConfigSource({}));
  assert.equal(needsRestart(a, readSettings(objectConfigSource({ smt: { timeoutMs: 1 } }))), false);
  assert.equal(needsRestart(a, readSettings(objectConfigSource({ logLevel: 'debug' }))), false);
  assert.equal(needsRestart(a, readSettings(objectConfigSource({ server: { path: '/x/lark' } }))), true);
});

test('the agent object is always sent, empty by default (the built-in prover)', () => {
  const empty = { command: '', endpoint: '', model: '', keyEnv: '', tokenBudget: 0 };
  assert.deepEqual(DEFAULT_SETTINGS.agent, empty);
  const s = readSettings(objectConfigSource({}));
  assert.deepEqual(toServerSettings(s).agent, empty);
  assert.deepEqual(didChangeConfigurationParams(s).settings.lark.agent, empty);
});

test('agent settings are trimmed strings; other types fall back to empty', () => {
  const cfg = objectConfigSource({
    agent: { command: '  python3 prove.py \n', endpoint: ' http://127.0.0.1:8000/v1 ', model: '\tqwen ', keyEnv: ' LARK_API_KEY ' },
  });
  assert.deepEqual(agentCommand(cfg), 'python3 prove.py');
  const sent = didChangeConfigurationParams(readSettings(cfg)).settings.lark.agent;
  assert.deepEqual(sent, { command: 'python3 prove.py', endpoint: 'http://127.0.0.1:8000/v1', model: 'qwen', keyEnv: 'LARK_API_KEY', tokenBudget: 0 });
  assert.deepEqual(toServerSettings(readSettings(cfg)).agent, sent);
  const bad = readSettings(objectConfigSource({ agent: { command: ['sh'], endpoint: 8000, model: null, keyEnv: { name: 'K' }, tokenBudget: -5 } }));
  assert.deepEqual(bad.agent, { command: '', endpoint: '', model: '', keyEnv: '', tokenBudget: 0 });
  assert.deepEqual(readSettings(objectConfigSource({ agent: 'x' })).agent, { command: '', endpoint: '', model: '', keyEnv: '', tokenBudget: 0 });
  assert.equal(readSettings(objectConfigSource({ agent: { tokenBudget: 'lots' } })).agent.tokenBudget, 0);
});

test('changing the agent does not restart the server (it is sent to the running one)', () => {
  const a = readSettings(objectConfigSource({}));
  const b = readSettings(objectConfigSource({ agent: { endpoint: 'http://127.0.0.1:8000/v1' } }));
  assert.equal(needsRestart(a, b), false);
  assert.equal(didChangeConfigurationParams(b).settings.lark.agent.endpoint, 'http://127.0.0.1:8000/v1');
});

test('server settings do not alias the agent object', () => {
  const s = readSettings(objectConfigSource({ agent: { model: 'a' } }));
  toServerSettings(s).agent.model = 'b';
  assert.equal(s.agent.model, 'a');
});
