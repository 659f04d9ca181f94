//! Decoding PTX instructions into model operations (`ops::Op`).
//!
//! Compound instructions are split into primitive ones with hidden temporaries (`mad.lo` becomes
//! `mul` then `add`; `mul.wide.u32` extends both inputs first), so that the interpreter and the
//! symbolic lifter each implement a small instruction set once. Anything not understood becomes
//! `Op::Unsupported` with a reason, never an error.

use crate::ops::*;
use ptx::types::{type_bits, type_class, TypeClass};
use ptx::{Name, Span};
use smol_str::SmolStr;
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub struct RegInfo {
    pub name: Name,
    pub bits: u32,
    pub float: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct VarInfo {
    pub name: Name,
    pub space: Space,
    /// Size in bytes; `None` for `extern .shared` arrays sized at launch.
    pub size: Option<u64>,
    pub align: u32,
    /// Whether the declaration has an initializer (`.const .f32 t[2] = {...}`).
    pub initialized: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    /// The PTX name, e.g. `reduce_param_0`.
    pub name: Name,
    pub ty: Name,
    pub bits: u32,
    /// Byte size (for `.b8 name[N]` struct parameters, N).
    pub bytes: u32,
}

/// A function body as a flat list of labels and decoded instructions.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Label(Name, Span),
    Inst(Inst),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub regs: Vec<RegInfo>,
    pub vars: Vec<VarInfo>,
    pub params: Vec<ParamInfo>,
    pub items: Vec<Item>,
    /// The `.file` index of the kernel's own source (where its first `.loc` points).
    pub main_file: Option<u32>,
}

struct Decoder<'a> {
    regs: Vec<RegInfo>,
    reg_ids: HashMap<Name, RegId>,
    vars: Vec<VarInfo>,
    var_ids: HashMap<Name, VarId>,
    params: Vec<ParamInfo>,
    param_ids: HashMap<Name, u32>,
    out: Vec<Item>,
    /// Context of the instruction being decoded.
    span: Span,
    loc: Option<ptx::SourceLoc>,
    line: Option<u32>,
    guard: Option<(RegId, bool)>,
    /// `.reg .b32 %r<N>` declarations: the registers are created when first used, so a huge
    /// `N` costs nothing.
    families: Vec<(Name, u32, u32, bool)>,
    _module: &'a ptx::Module,
}

pub fn decode(module: &ptx::Module, func: &ptx::Function) -> Decoded {
    let mut d = Decoder {
        regs: Vec::new(),
        reg_ids: HashMap::new(),
        vars: Vec::new(),
        var_ids: HashMap::new(),
        params: Vec::new(),
        param_ids: HashMap::new(),
        out: Vec::new(),
        span: Span::default(),
        loc: None,
        line: None,
        guard: None,
        families: Vec::new(),
        _module: module,
    };
    for v in &module.variables {
        d.add_var(v);
    }
    for p in &func.params {
        let bits = type_bits(&p.ty).unwrap_or(64);
        let bytes = u32::try_from((bits as u64 / 8).max(1).saturating_mul(p.array_len.unwrap_or(1))).unwrap_or(u32::MAX);
        d.param_ids.insert(p.name.clone(), d.params.len() as u32);
        d.params.push(ParamInfo { name: p.name.clone(), ty: p.ty.clone(), bits, bytes });
    }
    let body = func.body.as_deref().unwrap_or(&[]);
    for s in body {
        match s {
            ptx::Statement::Reg(r) => {
                let bits = type_bits(&r.ty).unwrap_or(32);
                let float = type_class(&r.ty) == Some(TypeClass::Float);
                for n in &r.names {
                    match n.count {
                        Some(c) => d.families.push((n.name.clone(), c, bits, float)),
                        None => {
                            d.declare_reg(n.name.clone(), bits, float);
                        }
                    }
                }
            }
            ptx::Statement::Var(v) => d.add_var(v),
            _ => {}
        }
    }
    let main_file = main_file(module, func);
    for s in body {
        match s {
            ptx::Statement::Label(l) => d.out.push(Item::Label(l.name.clone(), l.span)),
            ptx::Statement::Instruction(i) => {
                d.span = i.span;
                d.loc = i.loc;
                if let Some(loc) = i.loc {
                    if Some(loc.file) == main_file && loc.line != 0 {
                        d.line = Some(loc.line);
                    }
                }
                d.guard = i.guard.as_ref().map(|g| (d.reg(&g.reg, 1, false), g.negated));
                if let Err(reason) = d.instruction(i) {
                    d.emit(Op::Unsupported { opcode: full_opcode(i), reason });
                }
            }
            _ => {}
        }
    }
    Decoded { regs: d.regs, vars: d.vars, params: d.params, items: d.out, main_file }
}

/// The file a kernel's lines are reported in: the file most of its `.loc`s point to, preferring
/// sources over headers (the first `.loc` is often clang's `__clang_cuda_builtin_vars.h`).
fn main_file(module: &ptx::Module, func: &ptx::Function) -> Option<u32> {
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for i in func.instructions() {
        if let Some(l) = i.loc.filter(|l| l.line != 0) {
            *counts.entry(l.file).or_default() += 1;
        }
    }
    let is_header = |f: u32| {
        module.files.iter().find(|d| d.index == f).is_some_and(|d| {
            let n = d.name.to_ascii_lowercase();
            n.ends_with(".h") || n.ends_with(".hpp") || n.ends_with(".cuh") || n.ends_with(".inc") || n.contains("/include/")
        })
    };
    let best = |allow_headers: bool| {
        counts.iter().filter(|(f, _)| allow_headers || !is_header(**f)).max_by_key(|(f, n)| (**n, std::cmp::Reverse(**f))).map(|(f, _)| *f)
    };
    best(false).or_else(|| best(true))
}

fn full_opcode(i: &ptx::Instruction) -> SmolStr {
    let mut s = i.opcode.to_string();
    for m in &i.modifiers {
        s.push_str(m);
    }
    s.into()
}

type R<T> = Result<T, String>;

impl Decoder<'_> {
    fn declare_reg(&mut self, name: Name, bits: u32, float: bool) -> RegId {
        let id = self.regs.len() as RegId;
        self.regs.push(RegInfo { name: name.clone(), bits, float });
        self.reg_ids.insert(name, id);
        id
    }

    /// Looks up a register, declaring it on first use if the PTX forgot to (lenient on input).
    fn reg(&mut self, name: &str, bits: u32, float: bool) -> RegId {
        if let Some(&id) = self.reg_ids.get(name) {
            return id;
        }
        let family = self
            .families
            .iter()
            .find(|(prefix, count, _, _)| name.strip_prefix(prefix.as_str()).and_then(|i| i.parse::<u64>().ok()).is_some_and(|i| i < *count as u64));
        let (bits, float) = family.map_or((bits, float), |f| (f.2, f.3));
        self.declare_reg(name.into(), bits, float)
    }

    fn temp(&mut self, bits: u32) -> RegId {
        let name: Name = format!("%tmp{}", self.regs.len()).into();
        self.declare_reg(name, bits, false)
    }

    fn add_var(&mut self, v: &ptx::VarDecl) {
        let Some(space) = Space::from_modifier(&v.space) else { return };
        let align = v.align.unwrap_or_else(|| type_bits(&v.ty).map_or(1, |b| (b / 8).max(1)));
        self.var_ids.insert(v.name.clone(), self.vars.len() as VarId);
        self.vars.push(VarInfo { name: v.name.clone(), space, size: v.size_bytes(), align, initialized: v.has_initializer });
    }

    fn emit(&mut self, op: Op) {
        self.out.push(Item::Inst(Inst { guard: self.guard, op, span: self.span, loc: self.loc, line: self.line }));
    }

    fn dst(&mut self, o: &ptx::Operand, bits: u32, float: bool) -> R<RegId> {
        match o {
            ptx::Operand::Reg(n) => Ok(self.reg(n, bits, float)),
            ptx::Operand::Sink => Ok(self.temp(bits)),
            other => Err(format!("expected a destination register, found {other:?}")),
        }
    }

    fn src(&mut self, o: &ptx::Operand, bits: u32) -> R<Operand> {
        Ok(match o {
            ptx::Operand::Reg(n) => match Special::parse(n) {
                Some(s) => Operand::Special(s),
                None => Operand::Reg(self.reg(n, bits, false)),
            },
            ptx::Operand::NotReg(n) => Operand::NotReg(self.reg(n, 1, false)),
            ptx::Operand::Imm(imm) => Operand::Imm(imm_bits(*imm, bits)),
            ptx::Operand::Symbol(s) => match self.var_ids.get(s) {
                Some(&v) => Operand::VarAddr(v),
                None => return Err(format!("`{s}` is not a variable this kernel can address")),
            },
            other => return Err(format!("unsupported operand {other:?}")),
        })
    }

    fn address(&mut self, o: &ptx::Operand) -> R<Address> {
        let ptx::Operand::Address(a) = o else { return Err("expected an address `[...]`".into()) };
        let base = match &a.base {
            ptx::AddressBase::Reg(r) => Operand::Reg(self.reg(r, 64, false)),
            ptx::AddressBase::Symbol(s) => {
                if let Some(&p) = self.param_ids.get(s) {
                    Operand::Param { index: p, offset: 0 }
                } else if let Some(&v) = self.var_ids.get(s) {
                    Operand::VarAddr(v)
                } else {
                    return Err(format!("address of unknown symbol `{s}`"));
                }
            }
            ptx::AddressBase::None => Operand::Imm(0),
        };
        Ok(Address { base, offset: a.offset })
    }

    fn instruction(&mut self, i: &ptx::Instruction) -> R<()> {
        let ty = i.ty().unwrap_or(".b32");
        let bits = type_bits(ty).unwrap_or(32);
        let class = type_class(ty).unwrap_or(TypeClass::Bits);
        let is_float = class == TypeClass::Float;
        let signed = class == TypeClass::Signed;
        let ops = &i.operands;
        let n = ops.len();
        let need = |k: usize| if n < k { Err(format!("`{}` needs {k} operands, found {n}", full_opcode(i))) } else { Ok(()) };
        match i.opcode.as_str() {
            "mov" => {
                need(2)?;
                match (&ops[0], &ops[1]) {
                    (ptx::Operand::Vector(parts), src) => {
                        // Unpack: mov.b64 {%r1, %r2}, %rd1 (low part first).
                        let src = self.src(src, bits)?;
                        let part_bits = bits / parts.len() as u32;
                        for (k, p) in parts.iter().enumerate() {
                            let d = self.dst(p, part_bits, false)?;
                            let shifted = self.temp(bits);
                            self.emit(Op::Bin { dst: shifted, op: BinOp::LShr, a: src.clone(), b: Operand::Imm((k as u32 * part_bits) as u64), bits });
                            self.emit(Op::Ext { dst: d, a: Operand::Reg(shifted), from: bits, to: part_bits, signed: false });
                        }
                    }
                    (d, ptx::Operand::Vector(parts)) => {
                        // Pack: mov.b64 %rd1, {%r1, %r2}.
                        let d = self.dst(d, bits, false)?;
                        let part_bits = bits / parts.len() as u32;
                        let mut acc = Operand::Imm(0);
                        for (k, p) in parts.iter().enumerate() {
                            let s = self.src(p, part_bits)?;
                            let wide = self.temp(bits);
                            self.emit(Op::Ext { dst: wide, a: s, from: part_bits, to: bits, signed: false });
                            let sh = self.temp(bits);
                            self.emit(Op::Bin { dst: sh, op: BinOp::Shl, a: Operand::Reg(wide), b: Operand::Imm((k as u32 * part_bits) as u64), bits });
                            let next = self.temp(bits);
                            self.emit(Op::Bin { dst: next, op: BinOp::Or, a: acc, b: Operand::Reg(sh), bits });
                            acc = Operand::Reg(next);
                        }
                        self.emit(Op::Mov { dst: d, src: acc, bits });
                    }
                    (d, s) => {
                        let d = self.dst(d, bits, is_float)?;
                        let s = self.src(s, bits)?;
                        self.emit(Op::Mov { dst: d, src: s, bits });
                    }
                }
            }
            "cvta" => {
                // Generic and space-specific addresses are the same numbers in the model: every
                // variable is a symbolic base and accesses resolve their space from provenance.
                need(2)?;
                let d = self.dst(&ops[0], bits, false)?;
                let s = self.src(&ops[1], bits)?;
                self.emit(Op::Mov { dst: d, src: s, bits });
            }
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr" if !is_float => {
                need(3)?;
                if i.has_modifier(".cc") || i.has_modifier(".sat") {
                    return Err(format!("`{}` (carry/saturation) is not modelled", full_opcode(i)));
                }
                if class == TypeClass::Pred {
                    let d = self.dst(&ops[0], 1, false)?;
                    let a = self.src(&ops[1], 1)?;
                    let b = self.src(&ops[2], 1)?;
                    let op = match i.opcode.as_str() {
                        "and" => BoolOp::And,
                        "or" => BoolOp::Or,
                        "xor" => BoolOp::Xor,
                        _ => return Err("predicate arithmetic".into()),
                    };
                    self.emit(Op::Pred { dst: d, op, a, b });
                    return Ok(());
                }
                let wide = i.has_modifier(".wide");
                let out_bits = if wide { bits * 2 } else { bits };
                let d = self.dst(&ops[0], out_bits, false)?;
                let mut a = self.src(&ops[1], bits)?;
                let shift = matches!(i.opcode.as_str(), "shl" | "shr");
                let mut b = self.src(&ops[2], if shift { 32 } else { bits })?;
                if wide {
                    a = self.extend(a, bits, out_bits, signed);
                    b = self.extend(b, bits, out_bits, signed);
                } else if shift {
                    b = self.extend(b, 32, bits, false);
                }
                let op = int_op(i, signed)?;
                self.emit(Op::Bin { dst: d, op, a, b, bits: out_bits });
            }
            "mad" if !is_float => {
                need(4)?;
                let wide = i.has_modifier(".wide");
                let out_bits = if wide { bits * 2 } else { bits };
                let d = self.dst(&ops[0], out_bits, false)?;
                let mut a = self.src(&ops[1], bits)?;
                let mut b = self.src(&ops[2], bits)?;
                let c = self.src(&ops[3], out_bits)?;
                if wide {
                    a = self.extend(a, bits, out_bits, signed);
                    b = self.extend(b, bits, out_bits, signed);
                }
                let mul = if i.has_modifier(".hi") {
                    if signed {
                        BinOp::MulHiS
                    } else {
                        BinOp::MulHiU
                    }
                } else {
                    BinOp::Mul
                };
                let t = self.temp(out_bits);
                self.emit(Op::Bin { dst: t, op: mul, a, b, bits: out_bits });
                self.emit(Op::Bin { dst: d, op: BinOp::Add, a: Operand::Reg(t), b: c, bits: out_bits });
            }
            "not" | "neg" | "abs" | "popc" | "clz" | "brev" | "cnot" if !is_float => {
                need(2)?;
                if class == TypeClass::Pred {
                    let d = self.dst(&ops[0], 1, false)?;
                    let a = self.src(&ops[1], 1)?;
                    self.emit(Op::PredNot { dst: d, a });
                    return Ok(());
                }
                let out_bits = if matches!(i.opcode.as_str(), "popc" | "clz") { 32 } else { bits };
                let d = self.dst(&ops[0], out_bits, false)?;
                let a = self.src(&ops[1], bits)?;
                let op = match i.opcode.as_str() {
                    "not" => UnOp::Not,
                    "neg" => UnOp::Neg,
                    "abs" => UnOp::AbsS,
                    "popc" => UnOp::Popc,
                    "clz" => UnOp::Clz,
                    "brev" => UnOp::Brev,
                    _ => {
                        // cnot: d = (a == 0) ? 1 : 0
                        let p = self.temp(1);
                        self.emit(Op::Setp { dst: p, dst_neg: None, cmp: CmpOp::Eq, a, b: Operand::Imm(0), bits, combine: None });
                        self.emit(Op::Selp { dst: d, a: Operand::Imm(1), b: Operand::Imm(0), cond: Operand::Reg(p), bits });
                        return Ok(());
                    }
                };
                if out_bits != bits {
                    let t = self.temp(bits);
                    self.emit(Op::Un { dst: t, op, a, bits });
                    self.emit(Op::Ext { dst: d, a: Operand::Reg(t), from: bits, to: out_bits, signed: false });
                } else {
                    self.emit(Op::Un { dst: d, op, a, bits });
                }
            }
            "add" | "sub" | "mul" | "div" | "min" | "max" | "neg" | "abs" | "fma" | "mad" | "sqrt" | "rsqrt" | "rcp" | "ex2" | "lg2" | "sin" | "cos"
            | "tanh" | "copysign" => {
                let op = match i.opcode.as_str() {
                    "add" => FloatOp::Add,
                    "sub" => FloatOp::Sub,
                    "mul" => FloatOp::Mul,
                    "div" => FloatOp::Div,
                    "min" => FloatOp::Min,
                    "max" => FloatOp::Max,
                    "neg" => FloatOp::Neg,
                    "abs" => FloatOp::Abs,
                    "fma" | "mad" => FloatOp::Fma,
                    "sqrt" => FloatOp::Sqrt,
                    "rsqrt" => FloatOp::Rsqrt,
                    "rcp" => FloatOp::Rcp,
                    "ex2" => FloatOp::Ex2,
                    "lg2" => FloatOp::Lg2,
                    "sin" => FloatOp::Sin,
                    "cos" => FloatOp::Cos,
                    "tanh" => FloatOp::Tanh,
                    _ => FloatOp::Other,
                };
                need(2)?;
                if ty.ends_with("x2") {
                    return Err(format!("packed `{}` is not modelled", full_opcode(i)));
                }
                let d = self.dst(&ops[0], bits, true)?;
                let args = ops[1..].iter().map(|o| self.src(o, bits)).collect::<R<Vec<_>>>()?;
                self.emit(Op::Float { dst: d, op, args, bits });
            }
            "setp" => {
                need(3)?;
                let cmp_name = i.modifiers.first().map(|m| m.as_str()).unwrap_or("");
                let combine_op = i.modifiers.iter().find_map(|m| match m.as_str() {
                    ".and" => Some(BoolOp::And),
                    ".or" => Some(BoolOp::Or),
                    ".xor" => Some(BoolOp::Xor),
                    _ => None,
                });
                let (d, dn) = match &ops[0] {
                    ptx::Operand::RegPair(p, q) => (self.reg(p, 1, false), Some(self.reg(q, 1, false))),
                    other => (self.dst(other, 1, false)?, None),
                };
                let a = self.src(&ops[1], bits)?;
                let b = self.src(&ops[2], bits)?;
                let combine = match combine_op {
                    Some(op) => {
                        need(4)?;
                        Some((op, self.src(&ops[3], 1)?))
                    }
                    None => None,
                };
                if is_float {
                    let cmp = match cmp_name {
                        ".eq" => FloatCmp::Eq,
                        ".ne" => FloatCmp::Ne,
                        ".lt" => FloatCmp::Lt,
                        ".le" => FloatCmp::Le,
                        ".gt" => FloatCmp::Gt,
                        ".ge" => FloatCmp::Ge,
                        ".equ" | ".neu" | ".ltu" | ".leu" | ".gtu" | ".geu" | ".num" | ".nan" => {
                            self.unordered_setp(cmp_name, d, dn, a, b, bits, combine);
                            return Ok(());
                        }
                        _ => FloatCmp::Other,
                    };
                    self.emit(Op::FSetp { dst: d, dst_neg: dn, cmp, a, b, bits, combine });
                } else {
                    let s = signed;
                    let cmp = match cmp_name {
                        ".eq" => CmpOp::Eq,
                        ".ne" => CmpOp::Ne,
                        ".lt" if s => CmpOp::LtS,
                        ".le" if s => CmpOp::LeS,
                        ".gt" if s => CmpOp::GtS,
                        ".ge" if s => CmpOp::GeS,
                        ".lt" | ".lo" => CmpOp::LtU,
                        ".le" | ".ls" => CmpOp::LeU,
                        ".gt" | ".hi" => CmpOp::GtU,
                        ".ge" | ".hs" => CmpOp::GeU,
                        other => return Err(format!("comparison `{other}`")),
                    };
                    self.emit(Op::Setp { dst: d, dst_neg: dn, cmp, a, b, bits, combine });
                }
            }
            "selp" => {
                need(4)?;
                let d = self.dst(&ops[0], bits, is_float)?;
                let a = self.src(&ops[1], bits)?;
                let b = self.src(&ops[2], bits)?;
                let c = self.src(&ops[3], 1)?;
                self.emit(Op::Selp { dst: d, a, b, cond: c, bits });
            }
            "cvt" => {
                need(2)?;
                let types: Vec<&str> = i.modifiers.iter().map(|m| m.as_str()).filter(|m| type_bits(m).is_some()).collect();
                let [to, from] = types[..] else { return Err("`cvt` needs two types".into()) };
                let (tb, fb) = (type_bits(to).unwrap_or(32), type_bits(from).unwrap_or(32));
                let (tc, fc) = (type_class(to), type_class(from));
                let d = self.dst(&ops[0], tb, tc == Some(TypeClass::Float))?;
                let a = self.src(&ops[1], fb)?;
                if tc != Some(TypeClass::Float) && fc != Some(TypeClass::Float) {
                    if i.has_modifier(".sat") {
                        return Err("saturating integer `cvt` is not modelled".into());
                    }
                    self.emit(Op::Ext { dst: d, a, from: fb, to: tb, signed: fc == Some(TypeClass::Signed) });
                } else {
                    let rnd = i
                        .modifiers
                        .iter()
                        .find(|m| matches!(m.as_str(), ".rn" | ".rz" | ".rm" | ".rp" | ".rna" | ".rs" | ".rni" | ".rzi" | ".rmi" | ".rpi"))
                        .cloned();
                    self.emit(Op::Cvt { dst: d, a, from: from.into(), to: to.into(), rnd, sat: i.has_modifier(".sat") });
                }
            }
            "ld" | "ldu" => {
                need(2)?;
                let space = i.modifiers.iter().find_map(|m| Space::from_modifier(m)).unwrap_or(Space::Generic);
                let vec_len = vector_len(i);
                if space == Space::Param {
                    if vec_len != 1 {
                        return Err("vector `ld.param` is not modelled".into());
                    }
                    let d = self.dst(&ops[0], bits, is_float)?;
                    let addr = self.address(&ops[1])?;
                    let Operand::Param { index, .. } = addr.base else {
                        return Err("`ld.param` from something other than a kernel parameter".into());
                    };
                    if addr.offset < 0 {
                        return Err("negative parameter offset".into());
                    }
                    let src = Operand::Param { index, offset: addr.offset as u32 };
                    let wide = self.regs[d as usize].bits;
                    if signed && wide > bits {
                        // `ld.param.s8` into a wider register sign-extends.
                        let t = self.temp(bits);
                        self.emit(Op::Mov { dst: t, src, bits });
                        self.emit(Op::Ext { dst: d, a: Operand::Reg(t), from: bits, to: wide, signed: true });
                    } else {
                        self.emit(Op::Mov { dst: d, src, bits });
                    }
                    return Ok(());
                }
                let dsts = match &ops[0] {
                    ptx::Operand::Vector(v) => v.iter().map(|o| self.dst(o, bits, is_float)).collect::<R<Vec<_>>>()?,
                    o => vec![self.dst(o, bits, is_float)?],
                };
                let addr = self.address(&ops[1])?;
                // A signed load into a wider register (`ld.global.s8 %r1`) sign-extends: load into
                // temporaries of the memory width, then extend. Unsigned loads zero-extend as is.
                let widen: Vec<(RegId, u32)> = dsts.iter().map(|&d| (d, self.regs[d as usize].bits)).filter(|&(_, w)| signed && w > bits).collect();
                if widen.is_empty() {
                    self.emit(Op::Ld { dsts, space, addr, elem_bytes: (bits / 8).max(1) });
                } else {
                    let temps: Vec<RegId> = dsts.iter().map(|_| self.temp(bits)).collect();
                    self.emit(Op::Ld { dsts: temps.clone(), space, addr, elem_bytes: (bits / 8).max(1) });
                    for (&d, &t) in dsts.iter().zip(&temps) {
                        let wide = self.regs[d as usize].bits.max(bits);
                        self.emit(Op::Ext { dst: d, a: Operand::Reg(t), from: bits, to: wide, signed: true });
                    }
                }
            }
            "st" => {
                need(2)?;
                let space = i.modifiers.iter().find_map(|m| Space::from_modifier(m)).unwrap_or(Space::Generic);
                if space == Space::Param {
                    return Err("`st.param` (call sequences) is not modelled".into());
                }
                let addr = self.address(&ops[0])?;
                let srcs = match &ops[1] {
                    ptx::Operand::Vector(v) => v.iter().map(|o| self.src(o, bits)).collect::<R<Vec<_>>>()?,
                    o => vec![self.src(o, bits)?],
                };
                self.emit(Op::St { srcs, space, addr, elem_bytes: (bits / 8).max(1) });
            }
            "atom" | "red" => {
                let space = i.modifiers.iter().find_map(|m| Space::from_modifier(m)).unwrap_or(Space::Generic);
                let op = i
                    .modifiers
                    .iter()
                    .find_map(|m| {
                        Some(match m.as_str() {
                            ".add" => AtomOp::Add,
                            ".min" => AtomOp::Min,
                            ".max" => AtomOp::Max,
                            ".inc" => AtomOp::Inc,
                            ".dec" => AtomOp::Dec,
                            ".and" => AtomOp::And,
                            ".or" => AtomOp::Or,
                            ".xor" => AtomOp::Xor,
                            ".exch" => AtomOp::Exch,
                            ".cas" => AtomOp::Cas,
                            _ => return None,
                        })
                    })
                    .ok_or("atomic without an operation")?;
                if ty.ends_with("x2") || vector_len(i) != 1 {
                    return Err("packed or vector atomics are not modelled".into());
                }
                let (dst, rest) = if i.opcode == "atom" {
                    need(3)?;
                    (Some(self.dst(&ops[0], bits, is_float)?), &ops[1..])
                } else {
                    need(2)?;
                    (None, &ops[..])
                };
                let addr = self.address(&rest[0])?;
                let args = rest[1..].iter().map(|o| self.src(o, bits)).collect::<R<Vec<_>>>()?;
                self.emit(Op::Atom { dst, space, op, addr, args, bytes: (bits / 8).max(1), float: is_float, signed });
            }
            "bar" | "barrier" => {
                if i.has_modifier(".warp") {
                    need(1)?;
                    let mask = self.src(&ops[0], 32)?;
                    self.emit(Op::WarpSync { mask });
                } else if i.has_modifier(".red") {
                    return Err("`bar.red` (__syncthreads_count/and/or) is not modelled".into());
                } else {
                    let kind = if i.has_modifier(".arrive") { BarrierKind::Arrive } else { BarrierKind::Sync };
                    let id = if n >= 1 { self.src(&ops[0], 32)? } else { Operand::Imm(0) };
                    if n >= 2 {
                        return Err("barriers with a thread count are not modelled".into());
                    }
                    self.emit(Op::Bar { kind, id });
                }
            }
            "membar" | "fence" => self.emit(Op::Fence),
            "shfl" => {
                need(5)?;
                let mode = if i.has_modifier(".up") {
                    ShflMode::Up
                } else if i.has_modifier(".down") {
                    ShflMode::Down
                } else if i.has_modifier(".bfly") {
                    ShflMode::Bfly
                } else {
                    ShflMode::Idx
                };
                if !i.has_modifier(".sync") {
                    return Err("`shfl` without `.sync` (pre-Volta) is not modelled".into());
                }
                let (d, p) = match &ops[0] {
                    ptx::Operand::RegPair(a, b) => (self.reg(a, 32, false), Some(self.reg(b, 1, false))),
                    o => (self.dst(o, 32, false)?, None),
                };
                let src = self.src(&ops[1], 32)?;
                let lane = self.src(&ops[2], 32)?;
                let clamp = self.src(&ops[3], 32)?;
                let mask = self.src(&ops[4], 32)?;
                self.emit(Op::Shfl { dst: d, pred_dst: p, mode, src, lane, clamp, mask });
            }
            "vote" => {
                need(3)?;
                let mode = if i.has_modifier(".all") {
                    VoteMode::All
                } else if i.has_modifier(".any") {
                    VoteMode::Any
                } else if i.has_modifier(".uni") {
                    VoteMode::Uni
                } else {
                    VoteMode::Ballot
                };
                if !i.has_modifier(".sync") {
                    return Err("`vote` without `.sync` is not modelled".into());
                }
                let d = self.dst(&ops[0], if mode == VoteMode::Ballot { 32 } else { 1 }, false)?;
                let pred = self.src(&ops[1], 1)?;
                let mask = self.src(&ops[2], 32)?;
                self.emit(Op::Vote { dst: d, mode, pred, mask });
            }
            "activemask" => {
                need(1)?;
                let d = self.dst(&ops[0], 32, false)?;
                self.emit(Op::ActiveMask { dst: d });
            }
            "bra" | "brx" if i.opcode == "bra" => {
                need(1)?;
                let ptx::Operand::Symbol(t) = &ops[0] else { return Err("`bra` needs a label".into()) };
                self.emit(Op::Bra { target: t.clone() });
            }
            "ret" => self.emit(Op::Ret),
            "exit" | "trap" => self.emit(Op::Exit),
            "call" => {
                let callee = ops.iter().find_map(|o| match o {
                    ptx::Operand::Symbol(s) => Some(s.to_string()),
                    _ => None,
                });
                return Err(format!("call to `{}` is not inlined", callee.unwrap_or_else(|| "?".into())));
            }
            "prefetch" | "prefetchu" | "discard" | "applypriority" | "createpolicy" | "nanosleep" | "pmevent" => self.emit(Op::Fence),
            op @ ("cp" | "mbarrier" | "wmma" | "mma" | "wgmma" | "ldmatrix" | "stmatrix" | "tex" | "tld4" | "suld" | "sust" | "txq" | "match" | "redux"
            | "elect" | "griddepcontrol" | "setmaxnreg" | "tensormap") => {
                return Err(format!("`{op}` ({}) is not modelled yet", full_opcode(i)));
            }
            other => return Err(format!("unknown instruction `{other}`")),
        }
        Ok(())
    }

    /// `setp` with an unordered comparison (`leu`, ...) or `num`/`nan`, as the negation of an
    /// ordered one: `leu(a, b) = !gt(a, b)`, `nan(a, b) = !(eq(a, a) & eq(b, b))`. Results go
    /// through temporaries so that `c` may name a destination.
    #[allow(clippy::too_many_arguments)]
    fn unordered_setp(&mut self, name: &str, d: RegId, dn: Option<RegId>, a: Operand, b: Operand, bits: u32, combine: Option<(BoolOp, Operand)>) {
        // `ordered` is the ordered predicate; the result is `ordered` or its negation.
        let (ordered, negate) = match name {
            ".num" | ".nan" => {
                let (x, y, t) = (self.temp(1), self.temp(1), self.temp(1));
                self.emit(Op::FSetp { dst: x, dst_neg: None, cmp: FloatCmp::Eq, a: a.clone(), b: a, bits, combine: None });
                self.emit(Op::FSetp { dst: y, dst_neg: None, cmp: FloatCmp::Eq, a: b.clone(), b, bits, combine: None });
                self.emit(Op::Pred { dst: t, op: BoolOp::And, a: Operand::Reg(x), b: Operand::Reg(y) });
                (t, name == ".nan")
            }
            _ => {
                let cmp = match name {
                    ".equ" => FloatCmp::Ne,
                    ".neu" => FloatCmp::Eq,
                    ".ltu" => FloatCmp::Ge,
                    ".leu" => FloatCmp::Gt,
                    ".gtu" => FloatCmp::Le,
                    _ => FloatCmp::Lt, // .geu
                };
                let t = self.temp(1);
                self.emit(Op::FSetp { dst: t, dst_neg: None, cmp, a, b, bits, combine: None });
                (t, true)
            }
        };
        let n = self.temp(1);
        self.emit(Op::PredNot { dst: n, a: Operand::Reg(ordered) });
        let (pos, neg) = if negate { (n, ordered) } else { (ordered, n) };
        let outs: Vec<(RegId, RegId)> = std::iter::once((d, pos)).chain(dn.map(|q| (q, neg))).collect();
        let mut finals = Vec::new();
        for (dst, v) in outs {
            match &combine {
                None => finals.push((dst, v)),
                Some((op, c)) => {
                    let t = self.temp(1);
                    self.emit(Op::Pred { dst: t, op: *op, a: Operand::Reg(v), b: c.clone() });
                    finals.push((dst, t));
                }
            }
        }
        for (dst, v) in finals {
            self.emit(Op::Mov { dst, src: Operand::Reg(v), bits: 1 });
        }
    }

    /// Extends (or truncates) an operand to `to` bits through a temporary.
    fn extend(&mut self, a: Operand, from: u32, to: u32, signed: bool) -> Operand {
        if let Operand::Imm(v) = a {
            return Operand::Imm(eval_ext(v, from, to, signed));
        }
        let t = self.temp(to);
        self.emit(Op::Ext { dst: t, a, from, to, signed });
        Operand::Reg(t)
    }
}

fn vector_len(i: &ptx::Instruction) -> usize {
    i.modifiers
        .iter()
        .find_map(|m| match m.as_str() {
            ".v2" => Some(2),
            ".v4" => Some(4),
            ".v8" => Some(8),
            _ => None,
        })
        .unwrap_or(1)
}

fn int_op(i: &ptx::Instruction, signed: bool) -> R<BinOp> {
    Ok(match i.opcode.as_str() {
        "add" => BinOp::Add,
        "sub" => BinOp::Sub,
        "mul" if i.has_modifier(".hi") => {
            if signed {
                BinOp::MulHiS
            } else {
                BinOp::MulHiU
            }
        }
        "mul" => BinOp::Mul,
        "div" => {
            if signed {
                BinOp::DivS
            } else {
                BinOp::DivU
            }
        }
        "rem" => {
            if signed {
                BinOp::RemS
            } else {
                BinOp::RemU
            }
        }
        "min" => {
            if signed {
                BinOp::MinS
            } else {
                BinOp::MinU
            }
        }
        "max" => {
            if signed {
                BinOp::MaxS
            } else {
                BinOp::MaxU
            }
        }
        "and" => BinOp::And,
        "or" => BinOp::Or,
        "xor" => BinOp::Xor,
        "shl" => BinOp::Shl,
        "shr" => {
            if signed {
                BinOp::AShr
            } else {
                BinOp::LShr
            }
        }
        other => return Err(format!("integer `{other}`")),
    })
}

/// Immediate bits at an operand width: integers wrap; `0f`/`0d` literals keep their IEEE bits,
/// converted between single and double when the operand width asks for it.
fn imm_bits(imm: ptx::Immediate, bits: u32) -> u64 {
    match imm {
        ptx::Immediate::Int(v) => (v as u64) & mask(bits),
        ptx::Immediate::F32(b) if bits == 64 => (f32::from_bits(b) as f64).to_bits(),
        ptx::Immediate::F32(b) => b as u64,
        ptx::Immediate::F64(b) if bits == 32 => (f64::from_bits(b) as f32).to_bits() as u64,
        ptx::Immediate::F64(b) => b,
        ptx::Immediate::Decimal(d) if bits == 32 => (d as f32).to_bits() as u64,
        ptx::Immediate::Decimal(d) => d.to_bits(),
    }
}
