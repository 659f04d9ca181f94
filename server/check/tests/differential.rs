//! One semantics (ARCHITECTURE.md, promise 4), checked on random straight-line integer programs:
//! the reference interpreter's result, the symbolic lifter's constant folding (`Exprs`, which
//! folds with `model::ops::eval_*`), and Z3 over the SMT encoding of the lifted result
//! (`check::encode`) agree on every program and every input.
//!
//! A program is PTX: a few of the supported integer instructions (arithmetic at 32 and 64 bits,
//! `mul.wide`/`mad`, shifts, bit counting, `bfe`/`bfi`/`prmt`/`shf`/`lop3`/`bfind`, `mul24`,
//! `sad`, `dp4a`, saturating forms, comparisons and `selp`, width changes) over four parameters,
//! folded into one 64-bit result. The result is stored (the interpreter's answer) and also used
//! as the address of a store the lifter records (its address expression is the lifter's answer,
//! and the term Z3 evaluates).

use check::encode::{bv, Encoder};
use check::smt::{ask, read_query, Outcome};
use model::expr::Sym;
use model::interp::{self, Arg, Launch, Memory};
use proptest::prelude::*;
use smt::{Never, Solver, SolverKind};
use std::collections::HashMap;

/// A value of the program: a register and its width.
#[derive(Clone)]
struct Val {
    reg: String,
    bits: u32,
}

struct Program {
    lines: Vec<String>,
    vals: Vec<Val>,
    next: usize,
}

impl Program {
    fn new() -> Program {
        let mut p = Program { lines: Vec::new(), vals: Vec::new(), next: 10 };
        for i in 1..=4 {
            p.vals.push(Val { reg: format!("%rd{i}"), bits: 64 });
            p.vals.push(Val { reg: format!("%r{i}"), bits: 32 });
        }
        p
    }

    fn fresh(&mut self, bits: u32) -> String {
        self.next += 1;
        match bits {
            1 => format!("%p{}", self.next),
            32 => format!("%r{}", self.next),
            _ => format!("%rd{}", self.next),
        }
    }

    /// Operand `pick` at width `bits`, converted (zero- or sign-extended, or truncated) if needed.
    fn arg(&mut self, pick: usize, bits: u32, signed: bool) -> String {
        let v = self.vals[pick % self.vals.len()].clone();
        if v.bits == bits {
            return v.reg;
        }
        let d = self.fresh(bits);
        let (to, from) = match (bits, signed) {
            (64, true) => ("s64", "s32"),
            (64, false) => ("u64", "u32"),
            (_, true) => ("s32", "s64"),
            _ => ("u32", "u64"),
        };
        self.lines.push(format!("cvt.{to}.{from} {d}, {};", v.reg));
        d
    }

    fn push(&mut self, bits: u32, line: impl FnOnce(&str) -> String) {
        let d = self.fresh(bits);
        self.lines.push(line(&d));
        self.vals.push(Val { reg: d, bits });
    }

    /// Appends instruction `op` (an index into the table below) with operand choices `p` and
    /// an immediate `imm`.
    fn instruction(&mut self, op: usize, p: [usize; 3], imm: u64) {
        let w = if p[2].is_multiple_of(2) { 32 } else { 64 };
        let (t, s) = (if w == 32 { "32" } else { "64" }, p[1].is_multiple_of(2));
        let ty = |signed: bool| format!("{}{t}", if signed { "s" } else { "u" });
        let binops = ["add", "sub", "mul.lo", "mul.hi", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr"];
        match op % 22 {
            0 => {
                let name = binops[(imm % binops.len() as u64) as usize];
                let tyn = if matches!(name, "and" | "or" | "xor" | "shl") { format!("b{t}") } else { ty(s) };
                let a = self.arg(p[0], w, s);
                let b = if matches!(name, "shl" | "shr") { self.arg(p[1], 32, false) } else { self.arg(p[1], w, s) };
                self.push(w, |d| format!("{name}.{tyn} {d}, {a}, {b};"));
            }
            1 => {
                // An immediate second operand (shift amounts past the width included).
                let name = binops[p[1] % binops.len()];
                let tyn = if matches!(name, "and" | "or" | "xor" | "shl") { format!("b{t}") } else { ty(s) };
                let a = self.arg(p[0], w, s);
                let k = if matches!(name, "shl" | "shr") { imm % 70 } else { imm & 0xffff };
                self.push(w, |d| format!("{name}.{tyn} {d}, {a}, {k};"));
            }
            2 => {
                let (a, b) = (self.arg(p[0], 32, s), self.arg(p[1], 32, s));
                self.push(64, |d| format!("mul.wide.{} {d}, {a}, {b};", ty(s).replace(t, "32")));
            }
            3 => {
                let (a, b, c) = (self.arg(p[0], w, s), self.arg(p[1], w, s), self.arg(p[2] / 2, w, s));
                let part = if imm.is_multiple_of(2) { "lo" } else { "hi" };
                self.push(w, |d| format!("mad.{part}.{} {d}, {a}, {b}, {c};", ty(s)));
            }
            4 => {
                let name = ["not", "neg", "abs", "popc", "clz", "brev", "cnot"][(imm % 7) as usize];
                let a = self.arg(p[0], w, true);
                let tyn = if name == "abs" || name == "neg" { format!("s{t}") } else { format!("b{t}") };
                let out = if matches!(name, "popc" | "clz") { 32 } else { w };
                self.push(out, |d| format!("{name}.{tyn} {d}, {a};"));
            }
            5 => {
                let a = self.arg(p[0], w, s);
                let (pos, len) = if imm.is_multiple_of(2) {
                    (format!("{}", imm % 80), format!("{}", (imm >> 8) % 80))
                } else {
                    (self.arg(p[1], 32, false), self.arg(p[2], 32, false))
                };
                self.push(w, |d| format!("bfe.{} {d}, {a}, {pos}, {len};", ty(s)));
            }
            6 => {
                let (a, b) = (self.arg(p[0], w, false), self.arg(p[1], w, false));
                let (pos, len) = if imm.is_multiple_of(2) {
                    (format!("{}", imm % 80), format!("{}", (imm >> 8) % 80))
                } else {
                    (self.arg(p[2], 32, false), self.arg(p[0] + 1, 32, false))
                };
                self.push(w, |d| format!("bfi.b{t} {d}, {a}, {b}, {pos}, {len};"));
            }
            7 => {
                let mode = ["", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"][(imm % 7) as usize];
                let (a, b) = (self.arg(p[0], 32, false), self.arg(p[1], 32, false));
                let c = if (imm >> 3).is_multiple_of(2) { format!("{}", (imm >> 4) & 0xffff) } else { self.arg(p[2], 32, false) };
                self.push(32, |d| format!("prmt.b32{mode} {d}, {a}, {b}, {c};"));
            }
            8 => {
                let dir = if imm.is_multiple_of(2) { "l" } else { "r" };
                let mode = if (imm >> 1).is_multiple_of(2) { "clamp" } else { "wrap" };
                let (a, b, c) = (self.arg(p[0], 32, false), self.arg(p[1], 32, false), self.arg(p[2], 32, false));
                self.push(32, |d| format!("shf.{dir}.{mode}.b32 {d}, {a}, {b}, {c};"));
            }
            9 => {
                let (a, b, c) = (self.arg(p[0], 32, false), self.arg(p[1], 32, false), self.arg(p[2], 32, false));
                self.push(32, |d| format!("lop3.b32 {d}, {a}, {b}, {c}, {};", imm & 0xff));
            }
            10 => {
                let a = self.arg(p[0], w, s);
                let shift = if imm.is_multiple_of(2) { "" } else { ".shiftamt" };
                self.push(32, |d| format!("bfind{shift}.{} {d}, {a};", ty(s)));
            }
            11 => {
                let (a, b) = (self.arg(p[0], 32, s), self.arg(p[1], 32, s));
                let part = if imm.is_multiple_of(2) { "lo" } else { "hi" };
                if (imm >> 1).is_multiple_of(2) {
                    self.push(32, |d| format!("mul24.{part}.{} {d}, {a}, {b};", if s { "s32" } else { "u32" }));
                } else {
                    let c = self.arg(p[2], 32, s);
                    self.push(32, |d| format!("mad24.{part}.{} {d}, {a}, {b}, {c};", if s { "s32" } else { "u32" }));
                }
            }
            12 => {
                let (a, b, c) = (self.arg(p[0], w, s), self.arg(p[1], w, s), self.arg(p[2], w, s));
                self.push(w, |d| format!("sad.{} {d}, {a}, {b}, {c};", ty(s)));
            }
            13 => {
                let (a, b, c) = (self.arg(p[0], 32, false), self.arg(p[1], 32, false), self.arg(p[2], 32, false));
                let ta = if imm.is_multiple_of(2) { "u32" } else { "s32" };
                let tb = if (imm >> 1).is_multiple_of(2) { "u32" } else { "s32" };
                if (imm >> 2).is_multiple_of(2) {
                    self.push(32, |d| format!("dp4a.{ta}.{tb} {d}, {a}, {b}, {c};"));
                } else {
                    let part = if (imm >> 3).is_multiple_of(2) { "lo" } else { "hi" };
                    self.push(32, |d| format!("dp2a.{part}.{ta}.{tb} {d}, {a}, {b}, {c};"));
                }
            }
            14 => {
                let (a, b) = (self.arg(p[0], 32, true), self.arg(p[1], 32, true));
                let name = ["add.sat", "sub.sat", "max.relu", "min.relu"][(imm % 4) as usize];
                self.push(32, |d| format!("{name}.s32 {d}, {a}, {b};"));
            }
            15 => {
                // A comparison feeding a selection.
                let cmp = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"][(imm % 10) as usize];
                let tyn = if matches!(cmp, "lo" | "ls" | "hi" | "hs") { format!("u{t}") } else { ty(s) };
                let (a, b) = (self.arg(p[0], w, s), self.arg(p[1], w, s));
                let q = self.fresh(1);
                self.lines.push(format!("setp.{cmp}.{tyn} {q}, {a}, {b};"));
                let (x, y) = (self.arg(p[2], w, false), self.arg(p[0] + 3, w, false));
                self.push(w, |d| format!("selp.b{t} {d}, {x}, {y}, {q};"));
            }
            16 => {
                // Width changes, saturating ones included.
                let v = self.vals[p[0] % self.vals.len()].clone();
                let from = format!("{}{}", if s { "s" } else { "u" }, v.bits);
                let (to, bits) = [("u8", 32), ("s8", 32), ("u16", 32), ("s16", 32), ("u32", 32), ("s32", 32), ("u64", 64), ("s64", 64)][(imm % 8) as usize];
                let sat = if (imm >> 3).is_multiple_of(2) { "" } else { ".sat" };
                // A narrow result lands in a 32-bit register: write it there through a 16-bit one.
                if bits == 32 && (to.ends_with('8') || to.ends_with("16")) {
                    let h = format!("%h{}", self.next);
                    self.next += 1;
                    self.lines.push(format!("cvt{sat}.{}16.{from} {h}, {};", &to[..1], v.reg));
                    self.push(32, |d| format!("cvt.u32.u16 {d}, {h};"));
                } else {
                    self.push(bits, |d| format!("cvt{sat}.{to}.{from} {d}, {};", v.reg));
                }
            }
            17 => {
                // Packing and unpacking moves.
                let (a, b) = (self.arg(p[0], 32, false), self.arg(p[1], 32, false));
                self.push(64, |d| format!("mov.b64 {d}, {{{a}, {b}}};"));
                let last = self.vals.last().unwrap().reg.clone();
                let (lo, hi) = (self.fresh(32), self.fresh(32));
                self.lines.push(format!("mov.b64 {{{lo}, {hi}}}, {last};"));
                self.vals.push(Val { reg: hi, bits: 32 });
            }
            _ => {
                // Plain arithmetic again, so that programs mix the new forms with ordinary code.
                let name = ["add", "sub", "xor", "mul.lo"][(imm % 4) as usize];
                let tyn = if name == "xor" { format!("b{t}") } else { ty(s) };
                let (a, b) = (self.arg(p[0], w, s), self.arg(p[1], w, s));
                self.push(w, |d| format!("{name}.{tyn} {d}, {a}, {b};"));
            }
        }
    }

    /// Folds every value into `%rd9` (a 64-bit polynomial hash), so each instruction matters.
    fn finish(&mut self) {
        self.lines.push("mov.u64 %rd9, 0;".into());
        for k in 8..self.vals.len() {
            let v = self.vals[k].clone();
            let wide = if v.bits == 64 {
                v.reg
            } else {
                let d = self.fresh(64);
                self.lines.push(format!("cvt.u64.u32 {d}, {};", v.reg));
                d
            };
            self.lines.push(format!("mul.lo.s64 %rd9, %rd9, 1000003;\n\txor.b64 %rd9, %rd9, {wide};"));
        }
    }

    fn text(&self) -> String {
        format!(
            ".version 7.8\n.target sm_90\n.address_size 64\n\
             .visible .entry t(.param .u64 t_param_0, .param .u64 t_param_1, .param .u64 t_param_2, .param .u64 t_param_3, .param .u64 t_param_4, .param .u64 t_param_5)\n{{\n\
             \t.reg .pred %p<{n}>;\n\t.reg .b16 %h<{n}>;\n\t.reg .b32 %r<{n}>;\n\t.reg .b64 %rd<{n}>;\n\
             \tld.param.u64 %rd5, [t_param_0];\n\
             \tld.param.u64 %rd1, [t_param_1];\n\tld.param.u64 %rd2, [t_param_2];\n\tld.param.u64 %rd3, [t_param_3];\n\tld.param.u64 %rd4, [t_param_4];\n\
             \tld.param.u64 %rd6, [t_param_5];\n\
             \tcvt.u32.u64 %r1, %rd1;\n\tcvt.u32.u64 %r2, %rd2;\n\tcvt.u32.u64 %r3, %rd3;\n\tcvt.u32.u64 %r4, %rd4;\n\
             \t{}\n\
             \tst.global.u64 [%rd5], %rd9;\n\
             \tsetp.ne.u64 %p1, %rd6, 0;\n\tadd.s64 %rd7, %rd5, %rd9;\n\t@%p1 st.global.u8 [%rd7], 0;\n\tret;\n}}\n",
            self.lines.join("\n\t"),
            n = self.next + 2
        )
    }
}

/// The three answers for one program and input: interpreter, lifter, and whether Z3 finds the
/// encoded term able to differ from the interpreter's answer.
fn check_program(text: &str, inputs: [u64; 4], solver: &mut Solver) -> Result<(), String> {
    let parsed = ptx::parse(text);
    if !parsed.errors.is_empty() {
        return Err(format!("parse errors {:?}", parsed.errors));
    }
    let k = model::lower_module(&parsed.module).pop().unwrap().1.map_err(|e| e.message)?;
    let unsupported: Vec<String> = k.unsupported().map(|(_, r)| r.to_string()).collect();
    if !unsupported.is_empty() {
        return Err(format!("unsupported: {unsupported:?}"));
    }

    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 8);
    let mut args = vec![Arg::Buffer(out)];
    args.extend(inputs.iter().map(|&v| Arg::u64(v)));
    args.push(Arg::u64(0));
    interp::run(&k, &Launch::new([1, 1, 1], [1, 1, 1], args), &mut mem).map_err(|e| format!("interpreter: {e}"))?;
    let ran = u64::from_le_bytes(mem.bytes(out)[..8].try_into().unwrap());

    let lifted = model::symbolic::lift(&k);
    let site = lifted.accesses.iter().find(|a| a.bytes == 1).ok_or("no guarded store")?.addr;
    let mut folded = lifted.clone();
    let mut map = HashMap::new();
    for (p, v) in [0].iter().chain(&inputs).enumerate() {
        let c = folded.exprs.konst(*v, 64);
        map.insert(Sym::Param { index: p as u32, offset: 0 }, c);
    }
    folded.specialize(&map);
    let guarded = folded.accesses.iter().find(|a| a.bytes == 1).unwrap();
    let lifter = folded.exprs.as_const(guarded.addr);
    if lifter != Some(ran) {
        return Err(format!("the lifter folds to {lifter:x?}, the interpreter gives {ran:#x}"));
    }

    let mut enc = Encoder::new(&lifted.exprs);
    let term = enc.term(site, 1);
    let mut asserts = Vec::new();
    for (p, v) in [0].iter().chain(&inputs).enumerate() {
        if let Some((e, bits)) = lifted.exprs.find_var(Sym::Param { index: p as u32, offset: 0 }) {
            let name = enc.term(e, 1);
            asserts.push(format!("(= {name} {})", bv(*v, bits)));
        }
    }
    asserts.push(format!("(distinct {term} {})", bv(ran, 64)));
    let query = read_query(&enc.script(&asserts))?;
    match ask(solver, &query, std::time::Duration::from_secs(20), &Never).0 {
        Outcome::Unsat => Ok(()),
        other => Err(format!("Z3 on the encoding: {other:?} (the term can differ from {ran:#x})")),
    }
}

fn inputs() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(u64::MAX),
        Just(0x8000_0000),
        Just(0xffff_ffff),
        Just(0x7fff_ffff_ffff_ffff),
        Just(0x8000_0000_0000_0000),
        0u64..64,
        any::<u64>(),
        any::<u32>().prop_map(u64::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn interpreter_lifter_and_smt_encoding_agree(
        ops in prop::collection::vec((0usize..22, any::<[usize; 3]>(), any::<u64>()), 1..10),
        ins in [inputs(), inputs(), inputs(), inputs()],
    ) {
        let mut p = Program::new();
        for (op, picks, imm) in ops {
            p.instruction(op, picks.map(|x| x % 64), imm);
        }
        p.finish();
        let text = p.text();
        let mut solver = Solver::new(SolverKind::Z3);
        if let Err(e) = check_program(&text, ins, &mut solver) {
            return Err(TestCaseError::fail(format!("{e}\ninputs {ins:x?}\n{text}")));
        }
    }
}

/// Every instruction form the generator can write, once, so that a change that breaks one form
/// fails here even if the random programs do not happen to pick it.
#[test]
fn every_generated_form_agrees_on_edge_inputs() {
    let mut solver = Solver::new(SolverKind::Z3);
    for op in 0..22 {
        for imm in [0u64, 1, 2, 3, 5, 6, 9, 13, 0x96, 0xe8, 0x3210, 0x7654_3210] {
            for picks in [[0usize, 1, 2], [3, 4, 5], [6, 7, 1], [1, 3, 6]] {
                let mut p = Program::new();
                p.instruction(op, picks, imm);
                p.finish();
                let text = p.text();
                for ins in [[0u64, 1, 2, 3], [u64::MAX, 0x8000_0000, 0xffff_ffff, 31], [0x1234_5678_9abc_def0, 0x8000_0000_0000_0000, 7, 64]] {
                    if let Err(e) = check_program(&text, ins, &mut solver) {
                        panic!("{e}\ninputs {ins:x?}\n{text}");
                    }
                }
            }
        }
    }
}
