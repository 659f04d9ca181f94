//! Calls to `.func` functions, inlined where they are called.
//!
//! A call sequence passes arguments and results through `.param` variables the caller declares
//! next to the call (`st.param [param0], %r1; call.uni (retval0), f, (param0); ld.param %r2,
//! [retval0];`), and the callee reads and writes them under its own parameter names. The model
//! keeps each `.param` field as a register, a *cell* named by the variable, the byte offset and
//! the width, so that parameter passing becomes register moves: `st.param` writes a cell,
//! `ld.param` reads it, and inside the inlined body the callee's parameter names resolve to the
//! caller's cells.
//!
//! The callee's body is decoded in a new [`Frame`]: its registers, labels and variables get a
//! prefix unique to the call site (`_Z3fooi#1:%r1`), `ret` jumps to a label after the body, and a
//! guarded call branches around it. Recursion, calls nested deeper than [`MAX_DEPTH`], inlining
//! more than [`MAX_INLINED_STATEMENTS`] statements, indirect calls and calls to functions without
//! a body in the module stay `Op::Unsupported`, with the reason.

use super::{need, Decoder, InstType, Item, R};
use crate::ops::*;
use ptx::types::type_bits;
use ptx::Name;
use std::collections::HashMap;

/// Calls nested deeper than this are not inlined.
pub const MAX_DEPTH: usize = 8;

/// Statements inlined into one kernel, all calls together, before calls stop being inlined.
pub const MAX_INLINED_STATEMENTS: usize = 200_000;

/// The body being decoded.
#[derive(Clone, Debug, Default)]
pub(super) struct Frame {
    /// Prepended to the names of the body's registers, labels and variables (empty for the
    /// kernel), so that inlined bodies clash neither with the kernel nor with each other.
    pub prefix: String,
    /// The `.param` names this body reads and writes, with the cell variable each stands for:
    /// its call sequences' own `.param` variables and, in an inlined function, its formal
    /// parameters and results (which are the caller's cells).
    pub param_cells: HashMap<Name, Name>,
    /// Where `ret` goes in an inlined body.
    pub ret_label: Option<Name>,
    /// The functions being inlined, outermost first.
    pub stack: Vec<Name>,
}

impl Frame {
    pub fn kernel() -> Frame {
        Frame::default()
    }

    pub fn is_kernel(&self) -> bool {
        self.stack.is_empty()
    }
}

/// The call-sequence cells of a kernel, by (cell variable, byte offset, width in bits).
#[derive(Clone, Debug, Default)]
pub(super) struct Cells {
    regs: HashMap<(Name, i64, u32), RegId>,
    /// Calls inlined so far (numbers the frames) and the statements they brought.
    calls: u32,
    statements: usize,
}

/// The operands of `call{.uni} (rets), callee, (args){, prototype}`.
struct CallOperands<'i> {
    rets: Vec<&'i Name>,
    callee: &'i Name,
    args: Vec<&'i Name>,
}

/// The names of a parenthesised list of `.param` variables.
fn param_names(items: &[ptx::Operand]) -> R<Vec<&Name>> {
    items
        .iter()
        .map(|x| match x {
            ptx::Operand::Symbol(s) => Ok(s),
            other => Err(format!("call argument {other:?} is not a `.param` variable")),
        })
        .collect()
}

fn call_operands(ops: &[ptx::Operand]) -> R<CallOperands<'_>> {
    let mut i = 0;
    let rets = match ops.first() {
        Some(ptx::Operand::List(items)) => {
            i = 1;
            param_names(items)?
        }
        _ => Vec::new(),
    };
    let callee = match ops.get(i) {
        Some(ptx::Operand::Symbol(s)) => s,
        Some(ptx::Operand::Reg(r)) => return Err(format!("indirect call through `{r}`: the callee is not known when decoding")),
        _ => return Err("`call` without a callee".into()),
    };
    let args = match ops.get(i + 1) {
        Some(ptx::Operand::List(items)) => param_names(items)?,
        _ => Vec::new(),
    };
    Ok(CallOperands { rets, callee, args })
}

impl Decoder<'_> {
    /// Records a `.param` variable declared in the current body as a call-sequence cell.
    pub(super) fn declare_param_cell(&mut self, name: &Name) {
        let cell = self.local_name(name);
        self.frame.param_cells.insert(name.clone(), cell);
    }

    /// The cell variable a `.param` name of the current body stands for, if it is one.
    fn cell_var(&self, name: &str) -> Option<Name> {
        self.frame.param_cells.get(name).cloned()
    }

    /// `st.param{.v2,.v4}.type [cell+offset], src`: writes the cells.
    pub(super) fn st_param(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        need(i, 2)?;
        let ops = &i.operands;
        let (cell, offset) = self.cell_address(&ops[0])?;
        let srcs = match &ops[1] {
            ptx::Operand::Vector(v) => v.iter().map(|o| self.src(o, t.bits)).collect::<R<Vec<_>>>()?,
            o => vec![self.src(o, t.bits)?],
        };
        let step = i64::from((t.bits / 8).max(1));
        for (k, s) in srcs.into_iter().enumerate() {
            let key = (cell.clone(), offset + k as i64 * step, t.bits);
            let r = match self.cells.regs.get(&key) {
                Some(&r) => r,
                None => {
                    let r = self.temp(t.bits);
                    self.cells.regs.insert(key, r);
                    r
                }
            };
            self.emit(Op::Mov { dst: r, src: s, bits: t.bits });
        }
        Ok(())
    }

    /// `ld.param` from a call-sequence cell: reads what `st.param` wrote there (sign-extending
    /// `.s8`/`.s16` into a wider register); `Ok(false)` when the address is not a cell.
    pub(super) fn ld_param_cell(&mut self, i: &ptx::Instruction, t: &InstType) -> R<bool> {
        let ops = &i.operands;
        let ptx::Operand::Address(a) = &ops[1] else { return Ok(false) };
        let ptx::AddressBase::Symbol(s) = &a.base else { return Ok(false) };
        let Some(cell) = self.cell_var(s) else { return Ok(false) };
        let dsts = match &ops[0] {
            ptx::Operand::Vector(v) => v.iter().collect::<Vec<_>>(),
            o => vec![o],
        };
        let step = i64::from((t.bits / 8).max(1));
        for (k, o) in dsts.into_iter().enumerate() {
            let at = a.offset + k as i64 * step;
            let Some(&r) = self.cells.regs.get(&(cell.clone(), at, t.bits)) else {
                return Err(format!("`ld.param` reads {} bits at offset {at} of `{s}`, which the call sequence did not write with that width", t.bits));
            };
            let d = self.dst(o, t.bits, t.is_float)?;
            let wide = self.regs[d as usize].bits;
            if t.signed && wide > t.bits {
                self.emit(Op::Ext { dst: d, a: Operand::Reg(r), from: t.bits, to: wide, signed: true });
            } else {
                self.emit(Op::Mov { dst: d, src: Operand::Reg(r), bits: t.bits });
            }
        }
        Ok(true)
    }

    /// A `[name+offset]` address of a call-sequence cell.
    fn cell_address(&self, o: &ptx::Operand) -> R<(Name, i64)> {
        let ptx::Operand::Address(a) = o else { return Err("expected an address `[...]`".into()) };
        let ptx::AddressBase::Symbol(s) = &a.base else { return Err("`st.param` through a register is not modelled".into()) };
        match self.cell_var(s) {
            Some(cell) => Ok((cell, a.offset)),
            None => Err(format!("`st.param` to `{s}`, which is not a `.param` variable of a call sequence")),
        }
    }

    /// `ret`: the end of the kernel, or of an inlined body.
    pub(super) fn ret(&mut self) -> R<()> {
        match self.frame.ret_label.clone() {
            Some(end) => self.emit(Op::Bra { target: end }),
            None => self.emit(Op::Ret),
        }
        Ok(())
    }

    /// A call to a libdevice function the model names (see [`libdevice_function`]): its one
    /// argument, as the call sequence wrote it, through `op`, into the result's cell.
    fn libdevice_call(&mut self, c: &CallOperands, op: FloatOp) -> R<()> {
        let ([ret], [arg]) = (c.rets.as_slice(), c.args.as_slice()) else {
            return Err(format!("call to `{}` with {} result(s) and {} argument(s); it takes one and returns one", c.callee, c.rets.len(), c.args.len()));
        };
        let (Some(ret_cell), Some(arg_cell)) = (self.cell_var(ret), self.cell_var(arg)) else {
            return Err(format!("call to `{}` whose argument or result is not a `.param` variable of its call sequence", c.callee));
        };
        let Some((bits, x)) = [32, 64].into_iter().find_map(|bits| self.cells.regs.get(&(arg_cell.clone(), 0, bits)).map(|&r| (bits, r))) else {
            return Err(format!("call to `{}` before its argument `{arg}` is written", c.callee));
        };
        let d = self.temp_float(bits);
        self.cells.regs.insert((ret_cell, 0, bits), d);
        self.emit(Op::Float { dst: d, op, args: vec![Operand::Reg(x)], bits });
        Ok(())
    }

    /// `call`: the callee's body, inlined.
    pub(super) fn call(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        let c = call_operands(&i.operands)?;
        let module = self.module;
        let Some(callee) = module.functions.iter().filter(|f| f.name == *c.callee).max_by_key(|f| f.body.is_some()) else {
            return Err(format!("call to `{}`, which this module does not declare", c.callee));
        };
        let Some(body) = callee.body.as_deref() else {
            if let Some(op) = libdevice_function(c.callee) {
                return self.libdevice_call(&c, op);
            }
            // The results the caller reads back (`ld.param %f2, [retval0]`) are registers nothing
            // writes: the call is reported once, not again at each read of its result.
            for (formal, actual) in callee.returns.iter().zip(&c.rets) {
                if let (Some(bits), Some(cell)) = (type_bits(&formal.ty), self.cell_var(actual)) {
                    if !self.cells.regs.contains_key(&(cell.clone(), 0, bits)) {
                        let r = self.temp(bits);
                        self.cells.regs.insert((cell, 0, bits), r);
                    }
                }
            }
            if let Some(math) = c.callee.strip_prefix("__nv_") {
                return Err(format!("call to `{}`, libdevice's `{math}`: no PTX instruction computes it and LARK does not model libdevice", c.callee));
            }
            return Err(format!("call to `{}`, which has no body in this module (an external function)", c.callee));
        };
        if self.frame.stack.contains(c.callee) {
            return Err(format!("recursive call to `{}` cannot be inlined", c.callee));
        }
        if self.frame.stack.len() >= MAX_DEPTH {
            return Err(format!("call to `{}` nested more than {MAX_DEPTH} calls deep is not inlined", c.callee));
        }
        if self.cells.statements + body.len() > MAX_INLINED_STATEMENTS {
            return Err(format!("call to `{}` not inlined: the kernel's calls already inline {} statements", c.callee, self.cells.statements));
        }
        if c.rets.len() != callee.returns.len() || c.args.len() != callee.params.len() {
            return Err(format!(
                "call to `{}` with {} result(s) and {} argument(s); it declares {} and {}",
                c.callee,
                c.rets.len(),
                c.args.len(),
                callee.returns.len(),
                callee.params.len()
            ));
        }
        let mut param_cells = HashMap::new();
        for (formal, actual) in callee.returns.iter().zip(&c.rets).chain(callee.params.iter().zip(&c.args)) {
            if formal.space != ".param" || type_bits(&formal.ty).is_none() {
                return Err(format!("call to `{}`: parameter `{}` is not a `.param` value", c.callee, formal.name));
            }
            let cell = self.cell_var(actual).ok_or_else(|| format!("call argument `{actual}` is not a `.param` variable of this call sequence"))?;
            param_cells.insert(formal.name.clone(), cell);
        }
        self.cells.calls += 1;
        self.cells.statements += body.len();
        let prefix: String = format!("{}#{}:", c.callee, self.cells.calls);
        let end: Name = format!("{prefix}$ret").into();
        // A guarded call jumps around the body when its guard does not hold.
        let skip = self.guard.map(|(r, negated)| {
            let label: Name = format!("{prefix}$skip").into();
            self.guard = Some((r, !negated));
            self.emit(Op::Bra { target: label.clone() });
            label
        });
        let mut stack = self.frame.stack.clone();
        stack.push(c.callee.clone());
        let inner = Frame { prefix, param_cells, ret_label: Some(end.clone()), stack };
        let outer = std::mem::replace(&mut self.frame, inner);
        let line = self.line;
        self.body(body);
        self.frame = outer;
        self.line = line;
        self.out.push(Item::Label(end, i.span));
        if let Some(label) = skip {
            self.out.push(Item::Label(label, i.span));
        }
        Ok(())
    }
}

/// The float operation a call to a body-less libdevice function computes, for the functions the
/// model names: `erff` and `erf` (GELU's exact form). Other libdevice calls stay unsupported.
fn libdevice_function(callee: &str) -> Option<FloatOp> {
    match callee {
        "__nv_erff" | "__nv_erf" => Some(FloatOp::Erf),
        _ => None,
    }
}
