import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fallbackLeanPath, fileCommandArgs, leanLanguageId, parseLeanModule } from '../leanModule';

test('parseLeanModule: the server answer', () => {
  assert.deepEqual(parseLeanModule({ uri: 'lark-lean:/vector_add.cu/vector_add.lean', text: 'theorem t : True := trivial\n', kernel: 'vector_add' }), {
    uri: 'lark-lean:/vector_add.cu/vector_add.lean',
    text: 'theorem t : True := trivial\n',
    kernel: 'vector_add',
  });
  // uri and kernel are optional; empty ones count as absent; other fields are dropped.
  assert.deepEqual(parseLeanModule({ text: '', uri: ' ', kernel: '', extra: 1 }), { text: '' });
  assert.deepEqual(parseLeanModule({ text: 'x', uri: 7 }), { text: 'x' });
});

test('parseLeanModule: no module', () => {
  assert.deepEqual(parseLeanModule(null), { error: 'the server returned none' });
  assert.deepEqual(parseLeanModule(undefined), { error: 'the server returned none' });
  assert.match((parseLeanModule('theorem') as { error: string }).error, /unexpected answer from the server \(string\)/);
  assert.match((parseLeanModule([]) as { error: string }).error, /\(an array\)/);
  assert.match((parseLeanModule({ uri: 'lark-lean:/a/b.lean' }) as { error: string }).error, /no "text"/);
});

test('fileCommandArgs: from a code lens, a menu, or the palette', () => {
  assert.deepEqual(fileCommandArgs('file:///w/vector_add.cu', 'vector_add'), { uri: 'file:///w/vector_add.cu', kernel: 'vector_add' });
  assert.deepEqual(fileCommandArgs('file:///w/vector_add.cu', undefined), { uri: 'file:///w/vector_add.cu' });
  assert.deepEqual(fileCommandArgs(undefined, undefined), {});
  assert.deepEqual(fileCommandArgs('', ''), {});
  const uriLike = { scheme: 'file', path: '/w/a.ptx', toString: () => 'file:///w/a.ptx' };
  assert.deepEqual(fileCommandArgs(uriLike, undefined), { uri: 'file:///w/a.ptx' });
  // Anything else (e.g. the list of selected resources a menu may pass) is ignored.
  assert.deepEqual(fileCommandArgs([uriLike], { kernel: 'k' }), {});
  assert.deepEqual(fileCommandArgs(42, 7), {});
});

test('fallbackLeanPath: /<basename>/<kernel>.lean', () => {
  assert.equal(fallbackLeanPath('/home/u/proj/vector_add.cu', 'vector_add'), '/vector_add.cu/vector_add.lean');
  assert.equal(fallbackLeanPath('/k.ptx', '_Z6reducePfi'), '/k.ptx/_Z6reducePfi.lean');
  assert.equal(fallbackLeanPath('Untitled-1', 'k'), '/Untitled-1/k.lean');
  assert.equal(fallbackLeanPath('C:\\src\\a.cu', 'k'), '/a.cu/k.lean');
  assert.equal(fallbackLeanPath('', undefined), '/untitled/module.lean');
  assert.equal(fallbackLeanPath('/a.cu', ''), '/a.cu/module.lean');
  assert.equal(fallbackLeanPath('/a.cu', 'we/ird\\name'), '/a.cu/we_ird_name.lean');
});

test('leanLanguageId: lean4 only where a Lean extension provides it', () => {
  assert.equal(leanLanguageId(['plaintext', 'lean4', 'cuda-cpp']), 'lean4');
  assert.equal(leanLanguageId(['plaintext', 'lean', 'cuda-cpp']), 'plaintext');
  assert.equal(leanLanguageId([]), 'plaintext');
});
