//! Decoding PTX instructions into model operations (`ops::Op`).
//!
//! Compound instructions are split into primitive ones with hidden temporaries (`mad.lo` becomes
//! `mul` then `add`; `mul.wide.u32` extends both inputs first), so that the interpreter and the
//! symbolic lifter each implement a small instruction set once. Anything not understood becomes
//! `Op::Unsupported` with a reason, never an error.
//!
//! New instructions are decompositions into the existing primitive operations wherever the
//! primitives can express them exactly (`bfe`, `prmt`, `shf`, `lop3`, `dp4a`, `testp`, `bf16` and
//! packed half arithmetic, `redux.sync` as shuffles, ...), so that the interpreter, the symbolic
//! lifter, the SMT encoding and the Lean model need nothing new to agree on them; only `bar.red`
//! needed a new operation (`Op::BarRed`).
//!
//! One module per instruction class, so that a change to one class is found in one place:
//! `integer`, `bits` (bit fields, byte permutes, funnel shifts, look-up tables), `float`,
//! `compare`, `conversion`, `memory`, `warp` and `control` (barriers, branches); `calls` inlines
//! `.func` calls; `unmodelled` lists what is left out on purpose, with the reasons; `operands`
//! holds the shared operand and type parsing, `build` the constant-folding builders that the
//! decompositions use.

mod bits;
mod build;
mod calls;
mod compare;
mod control;
mod conversion;
mod float;
mod integer;
mod memory;
mod operands;
mod unmodelled;
mod warp;

use crate::ops::*;
use operands::full_opcode;
use ptx::types::{type_bits, type_class, TypeClass};
use ptx::{Name, Span};
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

impl ParamInfo {
    /// A struct passed by value (`.param .align A .b8 name[N]`), not a scalar or pointer.
    pub fn is_aggregate(&self) -> bool {
        self.bytes * 8 != self.bits
    }
}

/// The byte size of a PTX parameter (`.b8 p[128]`: 128; `.u64 n`: 8), as [`ParamInfo::bytes`]
/// records it.
pub fn param_bytes(p: &ptx::ast::Param) -> u32 {
    let bits = type_bits(&p.ty).unwrap_or(64);
    u32::try_from((bits as u64 / 8).max(1).saturating_mul(p.array_len.unwrap_or(1))).unwrap_or(u32::MAX)
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
    module: &'a ptx::Module,
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
    /// The `.file` index of the kernel's own source.
    main_file: Option<u32>,
    /// `.reqntid`, when the kernel fixes its block shape.
    reqntid: Option<[u64; 3]>,
    /// The body being decoded: the kernel's, or that of a function inlined into it.
    frame: calls::Frame,
    /// The call-sequence `.param` cells (see `calls`).
    cells: calls::Cells,
    /// Registers of the kernel that hold a parameter's address for `ld.param` only.
    param_addresses: HashMap<Name, u32>,
}

pub fn decode(module: &ptx::Module, func: &ptx::Function) -> Decoded {
    let mut d = Decoder {
        module,
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
        main_file: main_file(module, func),
        reqntid: func.reqntid().map(|v| [v.first().copied().unwrap_or(1), v.get(1).copied().unwrap_or(1), v.get(2).copied().unwrap_or(1)]),
        frame: calls::Frame::kernel(),
        cells: calls::Cells::default(),
        param_addresses: HashMap::new(),
    };
    for v in &module.variables {
        d.add_var(v);
    }
    for p in &func.params {
        let bits = type_bits(&p.ty).unwrap_or(64);
        let bytes = param_bytes(p);
        d.param_ids.insert(p.name.clone(), d.params.len() as u32);
        d.params.push(ParamInfo { name: p.name.clone(), ty: p.ty.clone(), bits, bytes });
    }
    d.param_addresses = memory::param_address_registers(func, &d.params);
    d.body(func.body.as_deref().unwrap_or(&[]));
    Decoded { regs: d.regs, vars: d.vars, params: d.params, items: d.out, main_file: d.main_file }
}

impl Decoder<'_> {
    /// Decodes a function body in the current frame: its declarations first, then its labels
    /// and instructions in order.
    fn body(&mut self, body: &[ptx::Statement]) {
        for s in body {
            match s {
                ptx::Statement::Reg(r) => {
                    let bits = type_bits(&r.ty).unwrap_or(32);
                    let float = type_class(&r.ty) == Some(TypeClass::Float);
                    for n in &r.names {
                        let name = self.local_name(&n.name);
                        match n.count {
                            Some(c) => self.families.push((name, c, bits, float)),
                            None => {
                                self.declare_reg(name, bits, float);
                            }
                        }
                    }
                }
                // A `.param` variable inside a body belongs to a call sequence.
                ptx::Statement::Var(v) if v.space == ".param" => self.declare_param_cell(&v.name),
                ptx::Statement::Var(v) => {
                    let renamed = ptx::VarDecl { name: self.local_name(&v.name), ..v.clone() };
                    self.add_var(&renamed);
                }
                _ => {}
            }
        }
        for s in body {
            match s {
                ptx::Statement::Label(l) => {
                    let name = self.local_name(&l.name);
                    self.out.push(Item::Label(name, l.span));
                }
                ptx::Statement::Instruction(i) => self.statement(i),
                _ => {}
            }
        }
    }

    /// Decodes one instruction with its guard and source position; what cannot be decoded
    /// becomes `Op::Unsupported` with the reason.
    fn statement(&mut self, i: &ptx::Instruction) {
        self.span = i.span;
        self.loc = i.loc;
        if let Some(loc) = i.loc {
            if Some(loc.file) == self.main_file && loc.line != 0 {
                self.line = Some(loc.line);
            }
        }
        self.guard = i.guard.as_ref().map(|g| (self.reg(&g.reg, 1, false), g.negated));
        let renamed;
        let i = match self.with_scoped_registers(i) {
            Some(r) => {
                renamed = r;
                &renamed
            }
            None => i,
        };
        if let Err(reason) = self.instruction(i) {
            self.emit(Op::Unsupported { opcode: full_opcode(i), reason });
        }
    }
}

impl Decoder<'_> {
    /// `i` with its operands that name a declared register written as registers. PTX register
    /// names need no `%`: clang unpacks the high half of a 32-bit word through a scratch
    /// register of a nested scope (`{ .reg .b16 tmp; mov.b32 {tmp, %rs2}, %r2; }`), which the
    /// parser, seeing no `%`, reads as a symbol. `None` when nothing needs renaming.
    fn with_scoped_registers(&self, i: &ptx::Instruction) -> Option<ptx::Instruction> {
        fn names_register(d: &Decoder<'_>, o: &ptx::Operand) -> bool {
            match o {
                ptx::Operand::Symbol(s) => d.var(s).is_none() && d.reg_ids.contains_key(&d.local_name(s)),
                ptx::Operand::Vector(v) => v.iter().any(|o| names_register(d, o)),
                _ => false,
            }
        }
        fn rename(d: &Decoder<'_>, o: &ptx::Operand) -> ptx::Operand {
            match o {
                ptx::Operand::Symbol(s) if names_register(d, o) => ptx::Operand::Reg(s.clone()),
                ptx::Operand::Vector(v) => ptx::Operand::Vector(v.iter().map(|o| rename(d, o)).collect()),
                other => other.clone(),
            }
        }
        if !i.operands.iter().any(|o| names_register(self, o)) {
            return None;
        }
        let mut out = i.clone();
        out.operands = i.operands.iter().map(|o| rename(self, o)).collect();
        Some(out)
    }
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

type R<T> = Result<T, String>;

/// An error unless the instruction has at least `k` operands.
fn need(i: &ptx::Instruction, k: usize) -> R<()> {
    let n = i.operands.len();
    if n < k {
        Err(format!("`{}` needs {k} operands, found {n}", full_opcode(i)))
    } else {
        Ok(())
    }
}

/// The instruction's type (its last type modifier, `.b32` if none) and what it implies.
#[derive(Clone, Copy, Debug)]
struct InstType<'i> {
    ty: &'i str,
    bits: u32,
    class: TypeClass,
    is_float: bool,
    signed: bool,
}

impl<'i> InstType<'i> {
    fn of(i: &'i ptx::Instruction) -> InstType<'i> {
        let ty = i.ty().unwrap_or(".b32");
        let class = type_class(ty).unwrap_or(TypeClass::Bits);
        InstType { ty, bits: type_bits(ty).unwrap_or(32), class, is_float: class == TypeClass::Float, signed: class == TypeClass::Signed }
    }
}

impl Decoder<'_> {
    /// Decodes one instruction by its class.
    fn instruction(&mut self, i: &ptx::Instruction) -> R<()> {
        if let Some(reason) = unmodelled::reason(i) {
            return Err(reason);
        }
        let t = InstType::of(i);
        let t = &t;
        match i.opcode.as_str() {
            "mov" => self.mov(i, t),
            "cvta" => self.cvta(i, t),
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr" if !t.is_float => self.int_arith(i, t),
            "mad" if !t.is_float => self.int_mad(i, t),
            "not" | "neg" | "abs" | "popc" | "clz" | "brev" | "cnot" if !t.is_float => self.int_unary(i, t),
            "bfe" => self.bfe(i, t),
            "bfi" => self.bfi(i, t),
            "prmt" => self.prmt(i, t),
            "shf" => self.shf(i, t),
            "lop3" => self.lop3(i, t),
            "bfind" => self.bfind(i, t),
            "mul24" | "mad24" => self.mul24(i, t),
            "sad" => self.sad(i, t),
            "dp4a" | "dp2a" => self.dot(i, t),
            "add" | "sub" | "mul" | "div" | "min" | "max" | "neg" | "abs" | "fma" | "mad" | "sqrt" | "rsqrt" | "rcp" | "ex2" | "lg2" | "sin" | "cos"
            | "tanh" | "copysign" => self.float_arith(i, t),
            "testp" => self.testp(i, t),
            "setp" => self.setp(i, t),
            "selp" => self.selp(i, t),
            "cvt" => self.cvt(i, t),
            "ld" | "ldu" => self.ld(i, t),
            "st" => self.st(i, t),
            "atom" | "red" => self.atom(i, t),
            "bar" | "barrier" => self.barrier(i, t),
            "membar" | "fence" => {
                self.emit(Op::Fence);
                Ok(())
            }
            "shfl" => self.shfl(i, t),
            "vote" => self.vote(i, t),
            "activemask" => self.activemask(i, t),
            "bra" => self.bra(i, t),
            "ret" => self.ret(),
            "exit" | "trap" => {
                self.emit(Op::Exit);
                Ok(())
            }
            "call" => self.call(i, t),
            // Hints with no effect on what the model describes: cache and prefetch hints, sleeps,
            // performance counters; `setmaxnreg` re-sizes the register file; `griddepcontrol`
            // (programmatic dependent launch) orders this grid against the previous and the next
            // one, and a check is of one launch whose inputs are in memory before it starts.
            "prefetch" | "prefetchu" | "applypriority" | "createpolicy" | "nanosleep" | "pmevent" | "setmaxnreg" | "griddepcontrol" => {
                self.emit(Op::Fence);
                Ok(())
            }
            "redux" => self.redux(i, t),
            "slct" => self.slct(i, t),
            other => Err(format!("unknown instruction `{other}`")),
        }
    }
}
