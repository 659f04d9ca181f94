// Checks the PTX TextMate grammar with a small TextMate-style tokenizer (first-starting match wins,
// ties go to the earlier rule; begin/end; captures with nested patterns). The grammar uses only
// regex syntax that Oniguruma and JavaScript read the same way, which this test also enforces.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

interface Rule {
  name?: string;
  match?: string;
  begin?: string;
  end?: string;
  include?: string;
  patterns?: Rule[];
  captures?: Record<string, Rule>;
  beginCaptures?: Record<string, Rule>;
  endCaptures?: Record<string, Rule>;
}
interface Grammar {
  scopeName: string;
  patterns: Rule[];
  repository: Record<string, Rule>;
}

const root = path.join(__dirname, '..', '..');
const grammar = JSON.parse(fs.readFileSync(path.join(root, 'syntaxes', 'ptx.tmLanguage.json'), 'utf8')) as Grammar;

const compiled = new Map<string, RegExp>();
function re(src: string): RegExp {
  let r = compiled.get(src);
  if (!r) {
    r = new RegExp(src, 'gd');
    compiled.set(src, r);
  }
  return r;
}

/** Flattens includes into a list of match/begin rules. */
function expand(rules: Rule[]): Rule[] {
  return rules.flatMap((r) => {
    if (r.include) {
      assert.ok(r.include.startsWith('#'), `only local includes: ${r.include}`);
      const target = grammar.repository[r.include.slice(1)];
      assert.ok(target, `missing repository entry ${r.include}`);
      return expand(target.patterns ?? [target]);
    }
    return [r];
  });
}

interface Token {
  text: string;
  scopes: string[];
}

function push(tokens: Token[], text: string, scopes: string[]): void {
  if (text !== '') tokens.push({ text, scopes });
}

/** Tokenizes `text` (one line, starting at `offset` of `line`) with `rules` under `scopes`. */
function tokenizeSpan(line: string, start: number, end: number, rules: Rule[], scopes: string[], tokens: Token[]): void {
  let pos = start;
  while (pos < end) {
    let best: { rule: Rule; m: RegExpExecArray } | undefined;
    for (const rule of rules) {
      const r = re((rule.match ?? rule.begin)!);
      r.lastIndex = pos;
      const m = r.exec(line);
      if (!m || m.index + m[0].length > end || m[0].length === 0) continue;
      if (!best || m.index < best.m.index) best = { rule, m };
    }
    if (!best) {
      push(tokens, line.slice(pos, end), scopes);
      return;
    }
    const { rule, m } = best;
    push(tokens, line.slice(pos, m.index), scopes);
    const inner = rule.name ? [...scopes, rule.name] : scopes;
    if (rule.match) {
      emitCaptures(line, m, rule.captures, inner, tokens);
      pos = m.index + m[0].length;
    } else {
      emitCaptures(line, m, rule.beginCaptures, inner, tokens);
      let p = m.index + m[0].length;
      // begin/end: inner patterns until `end` (single-line constructs only in these tests)
      const innerRules = expand(rule.patterns ?? []);
      for (;;) {
        const er = re(rule.end!);
        er.lastIndex = p;
        const em = er.exec(line);
        const stop = em ? em.index : end;
        let innerBest: RegExpExecArray | undefined;
        let innerRule: Rule | undefined;
        for (const ir of innerRules) {
          const r = re(ir.match!);
          r.lastIndex = p;
          const im = r.exec(line);
          if (im && im.index < stop && (!innerBest || im.index < innerBest.index)) {
            innerBest = im;
            innerRule = ir;
          }
        }
        if (innerBest && innerRule) {
          push(tokens, line.slice(p, innerBest.index), inner);
          push(tokens, innerBest[0], innerRule.name ? [...inner, innerRule.name] : inner);
          p = innerBest.index + innerBest[0].length;
          continue;
        }
        push(tokens, line.slice(p, stop), inner);
        if (em) emitCaptures(line, em, rule.endCaptures, inner, tokens);
        pos = em ? em.index + em[0].length : end;
        break;
      }
    }
  }
}

function emitCaptures(line: string, m: RegExpExecArray, captures: Record<string, Rule> | undefined, scopes: string[], tokens: Token[]): void {
  const [mStart, mEnd] = m.indices![0];
  if (!captures) {
    push(tokens, line.slice(mStart, mEnd), scopes);
    return;
  }
  if (captures['0']) {
    push(tokens, line.slice(mStart, mEnd), [...scopes, captures['0'].name!]);
    return;
  }
  let pos = mStart;
  for (let i = 1; i < m.length; i++) {
    const span = m.indices![i];
    const cap = captures[String(i)];
    if (!span || !cap || span[0] === span[1]) continue;
    push(tokens, line.slice(pos, span[0]), scopes);
    const capScopes = cap.name ? [...scopes, cap.name] : scopes;
    if (cap.patterns) tokenizeSpan(line, span[0], span[1], expand(cap.patterns), capScopes, tokens);
    else push(tokens, line.slice(span[0], span[1]), capScopes);
    pos = span[1];
  }
  push(tokens, line.slice(pos, mEnd), scopes);
}

function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  tokenizeSpan(line, 0, line.length, expand(grammar.patterns), [], tokens);
  return tokens;
}

/** `text → innermost scope` for every token that has one. */
function scoped(line: string): [string, string][] {
  return tokenize(line)
    .filter((t) => t.scopes.length > 0)
    .map((t) => [t.text, t.scopes[t.scopes.length - 1]]);
}

function scopeOf(line: string, text: string): string | undefined {
  return scoped(line).find(([t]) => t === text)?.[1];
}

test('every regex compiles and avoids Oniguruma-only syntax', () => {
  const walk = (r: Rule) => {
    for (const src of [r.match, r.begin, r.end]) {
      if (src === undefined) continue;
      assert.doesNotMatch(src, /\\[hHAGzZ]|\(\?[imx]|\(\?>|\\p\{/, `non-portable regex: ${src}`);
      assert.doesNotThrow(() => new RegExp(src), src);
    }
    for (const c of [r.captures, r.beginCaptures, r.endCaptures]) for (const v of Object.values(c ?? {})) walk(v);
    for (const p of r.patterns ?? []) walk(p);
  };
  grammar.patterns.forEach(walk);
  Object.values(grammar.repository).forEach(walk);
  assert.equal(grammar.scopeName, 'source.ptx');
});

test('comments', () => {
  assert.deepEqual(scoped('// Generated by LLVM NVPTX Back-End'), [['// Generated by LLVM NVPTX Back-End', 'comment.line.double-slash.ptx']]);
  assert.deepEqual(scoped('add.s32 %r1, %r2, 1; /* x */'), [
    ['add', 'keyword.other.instruction.ptx'],
    ['.s32', 'storage.type.ptx'],
    ['%r1', 'variable.other.register.ptx'],
    [',', 'punctuation.separator.comma.ptx'],
    ['%r2', 'variable.other.register.ptx'],
    [',', 'punctuation.separator.comma.ptx'],
    ['1', 'constant.numeric.integer.decimal.ptx'],
    [';', 'punctuation.terminator.statement.ptx'],
    ['/*', 'punctuation.definition.comment.begin.ptx'],
    [' x ', 'comment.block.ptx'],
    ['*/', 'punctuation.definition.comment.end.ptx'],
  ]);
});

test('module directives', () => {
  assert.deepEqual(scoped('.version 7.0'), [['.version', 'keyword.control.directive.ptx'], ['7.0', 'constant.numeric.float.decimal.ptx']]);
  assert.equal(scopeOf('.target sm_80', '.target'), 'keyword.control.directive.ptx');
  assert.equal(scopeOf('.address_size 64', '64'), 'constant.numeric.integer.decimal.ptx');
  assert.deepEqual(scoped('\t.file\t1 "/tmp/k.cu"'), [
    ['.file', 'keyword.control.directive.ptx'],
    ['1', 'constant.numeric.integer.decimal.ptx'],
    ['"', 'punctuation.definition.string.begin.ptx'],
    ['/tmp/k.cu', 'string.quoted.double.ptx'],
    ['"', 'punctuation.definition.string.end.ptx'],
  ]);
  assert.equal(scopeOf('\t.loc\t1 7 3', '.loc'), 'keyword.control.directive.ptx');
  assert.equal(scopeOf('\t.pragma "nounroll";', '.pragma'), 'keyword.control.directive.ptx');
});

test('entry, func and parameters', () => {
  assert.deepEqual(scoped('.visible .entry _Z6reducePfS_('), [
    ['.visible', 'storage.modifier.linkage.ptx'],
    ['.entry', 'storage.type.function.ptx'],
    ['_Z6reducePfS_', 'entity.name.function.ptx'],
    ['(', 'punctuation.section.parens.begin.ptx'],
  ]);
  assert.equal(scopeOf('.func  (.param .b32 func_retval0) helper(', 'helper'), 'entity.name.function.ptx');
  assert.equal(scopeOf('.func  (.param .b32 func_retval0) helper(', '.func'), 'storage.type.function.ptx');
  assert.deepEqual(scoped('\t.param .u64 _Z6reducePfS__param_0,'), [
    ['.param', 'storage.modifier.statespace.ptx'],
    ['.u64', 'storage.type.ptx'],
    [',', 'punctuation.separator.comma.ptx'],
  ]);
  assert.equal(scopeOf('.maxntid 256, 1, 1', '.maxntid'), 'storage.modifier.performance.ptx');
});

test('declarations', () => {
  assert.deepEqual(scoped('\t.reg .pred \t%p<3>;'), [
    ['.reg', 'storage.modifier.statespace.ptx'],
    ['.pred', 'storage.type.ptx'],
    ['%p', 'variable.other.register.ptx'],
    ['<', 'punctuation.definition.range.begin.ptx'],
    ['3', 'constant.numeric.integer.decimal.ptx'],
    ['>', 'punctuation.definition.range.end.ptx'],
    [';', 'punctuation.terminator.statement.ptx'],
  ]);
  assert.deepEqual(scoped('.shared .align 4 .b8 _ZZ6reduceE1s[1024];').slice(0, 4), [
    ['.shared', 'storage.modifier.statespace.ptx'],
    ['.align', 'storage.modifier.performance.ptx'],
    ['4', 'constant.numeric.integer.decimal.ptx'],
    ['.b8', 'storage.type.ptx'],
  ]);
  assert.equal(scopeOf('.global .f32 g;', '.global'), 'storage.modifier.statespace.ptx');
});

test('instructions with dotted modifiers', () => {
  assert.deepEqual(scoped('\tld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd3+16];').slice(0, 4), [
    ['ld', 'keyword.other.instruction.ptx'],
    ['.global', 'storage.modifier.statespace.ptx'],
    ['.v4', 'storage.type.ptx'],
    ['.f32', 'storage.type.ptx'],
  ]);
  assert.deepEqual(scoped('setp.lt.s32 %p1, %r1, 16;').slice(0, 3), [
    ['setp', 'keyword.other.instruction.ptx'],
    ['.lt', 'keyword.other.instruction.modifier.ptx'],
    ['.s32', 'storage.type.ptx'],
  ]);
  assert.equal(scopeOf('\tbar.sync \t0;', 'bar'), 'keyword.other.instruction.ptx');
  assert.equal(scopeOf('\tbar.sync \t0;', '.sync'), 'keyword.other.instruction.modifier.ptx');
  assert.equal(scopeOf('\tret;', 'ret'), 'keyword.other.instruction.ptx');
  assert.equal(scopeOf('st.shared::cta.u32 [%r1], %r2;', '.shared::cta'), 'storage.modifier.statespace.ptx');
  assert.equal(scopeOf('{ .reg .b32 t; mov.b32 t, 1; }', 'mov'), 'keyword.other.instruction.ptx');
  assert.equal(scopeOf('\tcall.uni (retval0), helper, (param0);', 'call'), 'keyword.other.instruction.ptx');
});

test('guards', () => {
  assert.deepEqual(scoped('\t@%p1 bra \t$L__BB0_2;'), [
    ['@', 'keyword.operator.guard.ptx'],
    ['%p1', 'variable.other.predicate.ptx'],
    ['bra', 'keyword.other.instruction.ptx'],
    ['$L__BB0_2', 'entity.name.label.ptx'],
    [';', 'punctuation.terminator.statement.ptx'],
  ]);
  assert.deepEqual(scoped('@!%p2 st.shared.f32 [%r4], %f1;').slice(0, 5), [
    ['@', 'keyword.operator.guard.ptx'],
    ['!', 'keyword.operator.logical.not.ptx'],
    ['%p2', 'variable.other.predicate.ptx'],
    ['st', 'keyword.other.instruction.ptx'],
    ['.shared', 'storage.modifier.statespace.ptx'],
  ]);
});

test('registers and special registers', () => {
  const line = 'mov.u32 %r12, %tid.x; mov.u32 %r3, %ctaid.y; mov.u32 %r4, %ntid.z; mov.u32 %r5, %laneid; cvta.to.global.u64 %rd3, %rd1; mov.f32 %f1, %f2; mov.pred %p2, %p1;';
  const s = new Map(scoped(line));
  for (const r of ['%r12', '%rd3', '%rd1', '%f1', '%f2', '%p2', '%p1']) assert.equal(s.get(r), 'variable.other.register.ptx', r);
  for (const r of ['%tid.x', '%ctaid.y', '%ntid.z', '%laneid']) assert.equal(s.get(r), 'variable.language.special-register.ptx', r);
  assert.equal(scopeOf('mov.u64 %rd1, %clock64;', '%clock64'), 'variable.language.special-register.ptx');
  assert.equal(scopeOf('mov.u32 %r1, %tidx;', '%tidx'), 'variable.other.register.ptx');
});

test('labels', () => {
  assert.deepEqual(scoped('$L__BB0_2:'), [['$L__BB0_2', 'entity.name.label.ptx'], [':', 'punctuation.separator.label.ptx']]);
  assert.deepEqual(scoped('$L__BB0_4: ret;'), [
    ['$L__BB0_4', 'entity.name.label.ptx'],
    [':', 'punctuation.separator.label.ptx'],
    ['ret', 'keyword.other.instruction.ptx'],
    [';', 'punctuation.terminator.statement.ptx'],
  ]);
  assert.equal(scopeOf('bra.uni $L__BB0_1;', '$L__BB0_1'), 'entity.name.label.ptx');
});

test('numbers', () => {
  const s = new Map(scoped('mov.f32 %f1, 0f3F800000; mov.f64 %fd1, 0d3FF0000000000000; mov.u32 %r1, 0xFFu; mov.b32 %r2, 0b101; mov.s32 %r3, -42; mov.f32 %f2, 1.5e3;'));
  assert.equal(s.get('0f3F800000'), 'constant.numeric.float.hex.ptx');
  assert.equal(s.get('0d3FF0000000000000'), 'constant.numeric.float.hex.ptx');
  assert.equal(s.get('0xFFu'), 'constant.numeric.integer.hexadecimal.ptx');
  assert.equal(s.get('0b101'), 'constant.numeric.integer.binary.ptx');
  assert.equal(s.get('42'), 'constant.numeric.integer.decimal.ptx');
  assert.equal(s.get('1.5e3'), 'constant.numeric.float.decimal.ptx');
  // digits inside names are not numbers
  assert.equal(scopeOf('ld.param.u64 %rd1, [_Z6reducePfS__param_0];', '6'), undefined);
});

// Real clang-19 output (tree reduction, -O2 -gline-tables-only), abridged.
const REAL_PTX = `//
// Generated by LLVM NVPTX Back-End
//

.version 7.0
.target sm_80
.address_size 64

	// .globl	_Z6reducePfS_           // -- Begin function _Z6reducePfS_
.visible .entry _Z6reducePfS_(
	.param .u64 _Z6reducePfS__param_0,
	.param .u64 _Z6reducePfS__param_1
)
{
	.reg .pred 	%p<5>;
	.reg .b32 	%r<8>;
	.reg .f32 	%f<6>;
	.reg .b64 	%rd<14>;
$L__func_begin0:
	.loc	1 1 0                           // k.cu:1:0
	.shared .align 4 .b8 _ZZ6reducePfS_E1s[1024];
	ld.param.u64 	%rd5, [_Z6reducePfS__param_0];
	cvta.to.global.u64 	%rd7, %rd5;
	mov.u32 	%r1, %tid.x;
	mad.lo.s32 	%r6, %r2, %r7, %r1;
	mul.wide.u32 	%rd8, %r6, 4;
	ld.global.f32 	%f1, [%rd9];
	mov.u64 	%rd11, _ZZ6reducePfS_E1s;
	st.shared.f32 	[%rd2], %f1;
	bar.sync 	0;
	setp.lt.u32 	%p1, %r7, 2;
	@%p1 bra 	$L__BB0_1;
	bra.uni 	$L__BB0_4;
$L__BB0_6:                              //   in Loop: Header=BB0_4 Depth=1
	ret;
}
	.file	1 "/tmp/k.cu"`;

/** Asserts that every line of `ptx` is covered and each statement gets the scope its shape implies. */
function checkClassified(ptx: string, where: string): void {
  for (const line of ptx.split('\n')) {
    const tokens = tokenize(line);
    assert.equal(tokens.map((t) => t.text).join(''), line, `${where}: tokens cover the line`);
    const body = line.replace(/\/\/.*$/, '').trim();
    if (body === '') continue;
    const first = tokens.find((t) => t.text.trim() !== '')!;
    const scope = first.scopes[first.scopes.length - 1] ?? '';
    if (/^(@!?%\w+\s+)?[a-z][a-z0-9_.:]*(\s|;|$)/.test(body)) {
      const op = tokens.find((t) => t.scopes.includes('keyword.other.instruction.ptx'));
      assert.ok(op, `${where}: no opcode found in ${JSON.stringify(line)}`);
    } else if (body.startsWith('.')) {
      assert.match(scope, /^(keyword|storage)\./, `${where}: ${line}`);
    } else if (body.startsWith('$')) {
      assert.equal(scope, 'entity.name.label.ptx', `${where}: ${line}`);
    }
    for (const t of tokens.filter((t) => t.text.startsWith('%'))) {
      assert.match(t.scopes.join(' '), /variable\./, `${where}: ${t.text} in ${line}`);
    }
    if (line.includes('//') && !line.includes('"')) {
      assert.ok(tokens.some((t) => t.scopes.includes('comment.line.double-slash.ptx')), `${where}: ${line}`);
    }
  }
}

test('real compiler output: every statement is classified', () => {
  checkClassified(REAL_PTX, 'fixture');
});

// The repository's corpus of clang-19 PTX, when present (tests/corpus/*.ptx).
test('corpus PTX: every statement is classified', () => {
  const corpus = path.join(root, '..', 'tests', 'corpus');
  const files = fs.existsSync(corpus) ? fs.readdirSync(corpus).filter((f) => f.endsWith('.ptx')) : [];
  if (files.length === 0) {
    console.log(`# no PTX files under ${corpus}; only the inline fixture was checked`);
    return;
  }
  for (const f of files) checkClassified(fs.readFileSync(path.join(corpus, f), 'utf8'), f);
});
