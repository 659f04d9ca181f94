import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FileStatusStore, formatMillis, formatStatus, parseFileStatus, summarize, tooltipLines } from '../statusFormat';

const k = (name: string, verdict: string, millis = 5) => ({ name, verdict, millis });

test('all verified', () => {
  assert.deepEqual(summarize([k('a', 'verified'), k('b', 'verified'), k('c', 'verified')]), {
    text: '$(check) LARK: 3 verified',
    severity: 'ok',
  });
});

test('certified, and certified mixed with verified', () => {
  assert.equal(summarize([k('a', 'certified'), k('b', 'certified')]).text, '$(verified) LARK: 2 certified');
  assert.equal(summarize([k('a', 'certified'), k('b', 'verified'), k('c', 'verified')]).text, '$(check) LARK: 1 certified, 2 verified');
});

test('a race names the kernel and wins over everything else', () => {
  const s = summarize([k('scale', 'verified'), k('reduce', 'race'), k('x', 'uncertified')]);
  assert.deepEqual(s, { text: '$(error) LARK: race in reduce', severity: 'error' });
});

test('several failures: the first, and how many more', () => {
  assert.equal(
    summarize([k('a', 'barrier_divergence'), k('b', 'out_of_bounds'), k('c', 'race')]).text,
    '$(error) LARK: barrier divergence in a (+2 more)',
  );
  assert.equal(summarize([k('gemm', 'mismatch')]).text, '$(error) LARK: mismatch in gemm');
  assert.equal(summarize([k('k', 'error')]).text, '$(error) LARK: error in k');
});

test('uncertified is a question, not a pass', () => {
  assert.deepEqual(summarize([k('a', 'uncertified')]), { text: '$(question) LARK: 1 uncertified', severity: 'warning' });
  assert.equal(summarize([k('a', 'verified'), k('b', 'uncertified'), k('c', 'uncertified(smt timeout)')]).text, '$(question) LARK: 2 uncertified');
});

test('an unknown verdict word is never shown as a pass', () => {
  const s = summarize([k('a', 'verified'), k('b', 'haunted')]);
  assert.equal(s.severity, 'warning');
  assert.equal(s.text, '$(question) LARK: 1 haunted');
});

test('no kernels', () => {
  assert.equal(summarize([]).severity, 'none');
  assert.match(summarize([]).text, /no kernels/);
});

test('tooltip lists every kernel with verdict and time', () => {
  assert.deepEqual(tooltipLines([k('reduce', 'race', 12), k('scale', 'verified', 1530), k('gemm', 'barrier_divergence', 0.4)]), [
    'reduce — race (12 ms)',
    'scale — verified (1.5 s)',
    'gemm — barrier divergence (0 ms)',
  ]);
  const view = formatStatus({ uri: 'file:///a.cu', kernels: [k('reduce', 'race', 12), k('scale', 'verified', 3)] });
  assert.equal(view.tooltip, ['LARK:', 'reduce — race (12 ms)', 'scale — verified (3 ms)', '', 'Click to re-check this file.'].join('\n'));
});

test('time formatting', () => {
  assert.equal(formatMillis(0), '0 ms');
  assert.equal(formatMillis(999.4), '999 ms');
  assert.equal(formatMillis(1000), '1.0 s');
  assert.equal(formatMillis(12_345), '12 s');
  assert.equal(formatMillis(125_000), '2 min 5 s');
});

test('checking shows a spinner, keeping the previous summary', () => {
  assert.equal(formatStatus(undefined, { checking: true }).text, '$(sync~spin) LARK: checking…');
  assert.equal(formatStatus(undefined).text, '$(circle-large-outline) LARK');
  const v = formatStatus({ uri: 'u', kernels: [k('reduce', 'race')] }, { checking: true });
  assert.equal(v.text, '$(sync~spin) LARK: race in reduce');
  assert.match(v.tooltip, /re-checking/);
});

test('malformed notifications are rejected or cleaned', () => {
  assert.equal(parseFileStatus(null), undefined);
  assert.equal(parseFileStatus({ uri: 3, kernels: [] }), undefined);
  assert.equal(parseFileStatus({ uri: 'file:///a.cu' }), undefined);
  assert.deepEqual(
    parseFileStatus({ uri: 'file:///a.cu', kernels: [{ name: 'a', verdict: 'race', millis: 3 }, { name: 'b' }, 7, { name: 'c', verdict: 'verified', millis: 'x' }] }),
    { uri: 'file:///a.cu', kernels: [{ name: 'a', verdict: 'race', millis: 3 }, { name: 'c', verdict: 'verified', millis: 0 }] },
  );
});

test('store: keyed by normalized URI; a new status ends checking; forget drops it', () => {
  const store = new FileStatusStore((u) => u.replace('%3A', ':').toLowerCase());
  store.markChecking('file:///c:/k/A.cu');
  assert.match(store.view('file:///c:/k/A.cu').text, /checking/);
  store.update({ uri: 'file:///c%3A/k/a.cu', kernels: [k('a', 'verified')] });
  assert.equal(store.view('file:///c:/k/A.cu').text, '$(check) LARK: 1 verified');
  store.markChecking('file:///c:/k/a.cu');
  store.doneChecking('file:///c:/k/a.cu');
  assert.equal(store.view('file:///c:/k/a.cu').text, '$(check) LARK: 1 verified');
  store.forget('file:///c:/k/a.cu');
  assert.equal(store.get('file:///c:/k/a.cu'), undefined);
});
