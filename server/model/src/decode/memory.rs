//! Memory: address conversion, loads, stores and atomics.

use super::operands::*;
use super::{need, Decoder, InstType, R};
use crate::ops::*;

impl Decoder<'_> {
    /// `cvta`: generic and space-specific addresses are the same numbers in the model.
    pub(super) fn cvta(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { bits, .. } = *t;
        let ops = &i.operands;
        // Generic and space-specific addresses are the same numbers in the model: every
        // variable is a symbolic base and accesses resolve their space from provenance.
        need(i, 2)?;
        let d = self.dst(&ops[0], bits, false)?;
        let s = self.src(&ops[1], bits)?;
        self.emit(Op::Mov { dst: d, src: s, bits });
        Ok(())
    }

    /// `ld`/`ldu`: parameters, and vector loads from any space.
    pub(super) fn ld(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { bits, is_float, signed, .. } = *t;
        let ops = &i.operands;
        need(i, 2)?;
        let space = state_space(i)?;
        check_element(bits)?;
        if space == Space::Param {
            if self.ld_param_cell(i, t)? {
                return Ok(());
            }
            let addr = match &ops[1] {
                ptx::Operand::Address(ptx::Address { base: ptx::AddressBase::Reg(r), offset })
                    if self.frame.is_kernel() && self.param_addresses.contains_key(r) =>
                {
                    Address { base: Operand::Param { index: self.param_addresses[r], offset: 0 }, offset: *offset }
                }
                o => self.address(o)?,
            };
            let Operand::Param { index, .. } = addr.base else {
                return Err(match addr.base {
                    Operand::Reg(_) => {
                        "`ld.param` at an address computed at run time (a struct passed by value indexed by a computed value) is not modelled".into()
                    }
                    _ => "`ld.param` from something other than a kernel parameter".into(),
                });
            };
            if addr.offset < 0 {
                return Err("negative parameter offset".into());
            }
            // A vector load reads consecutive fields (`ld.param.v2.f32 {%f1, %f2}, [p]`).
            let dsts: Vec<&ptx::Operand> = match &ops[0] {
                ptx::Operand::Vector(v) => v.iter().collect(),
                o => vec![o],
            };
            for (k, o) in dsts.into_iter().enumerate() {
                let d = self.dst(o, bits, is_float)?;
                let offset = u32::try_from(addr.offset as u64 + k as u64 * u64::from((bits / 8).max(1))).map_err(|_| "parameter offset out of range")?;
                let src = Operand::Param { index, offset };
                let wide = self.regs[d as usize].bits;
                if signed && wide > bits {
                    // `ld.param.s8` into a wider register sign-extends.
                    let t = self.temp(bits);
                    self.emit(Op::Mov { dst: t, src, bits });
                    self.emit(Op::Ext { dst: d, a: Operand::Reg(t), from: bits, to: wide, signed: true });
                } else {
                    self.emit(Op::Mov { dst: d, src, bits });
                }
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
        Ok(())
    }

    /// `st`, scalar and vector.
    pub(super) fn st(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { bits, .. } = *t;
        let ops = &i.operands;
        need(i, 2)?;
        let space = state_space(i)?;
        check_element(bits)?;
        if space == Space::Param {
            return self.st_param(i, t);
        }
        let addr = self.address(&ops[0])?;
        let srcs = match &ops[1] {
            ptx::Operand::Vector(v) => v.iter().map(|o| self.src(o, bits)).collect::<R<Vec<_>>>()?,
            o => vec![self.src(o, bits)?],
        };
        self.emit(Op::St { srcs, space, addr, elem_bytes: (bits / 8).max(1) });
        Ok(())
    }

    /// `atom` and `red` (an atomic without a result).
    pub(super) fn atom(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { ty, bits, is_float, signed, .. } = *t;
        let ops = &i.operands;
        let space = state_space(i)?;
        check_element(bits)?;
        if ty == ".bf16" || ty == ".bf16x2" {
            return Err(format!("`{}` atomics on `bf16` are not modelled", i.opcode));
        }
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
            need(i, 3)?;
            (Some(self.dst(&ops[0], bits, is_float)?), &ops[1..])
        } else {
            need(i, 2)?;
            (None, &ops[..])
        };
        let addr = self.address(&rest[0])?;
        let args = rest[1..].iter().map(|o| self.src(o, bits)).collect::<R<Vec<_>>>()?;
        self.emit(Op::Atom { dst, space, op, addr, args, bytes: (bits / 8).max(1), float: is_float, signed });
        Ok(())
    }
}

/// The state space an access names (generic when none); distributed shared memory of a cluster
/// and other spaces the model has no memory for are errors.
fn state_space(i: &ptx::Instruction) -> R<Space> {
    for m in &i.modifiers {
        if let Some(space) = Space::from_modifier(m) {
            return Ok(space);
        }
        if matches!(m.as_str(), ".param::entry" | ".param::func") {
            return Ok(Space::Param);
        }
        if m.starts_with(".shared::") {
            return Err(format!("`{m}` (distributed shared memory of a cluster) is not modelled"));
        }
        if matches!(m.as_str(), ".tex" | ".surf" | ".sreg") {
            return Err(format!("accesses to the `{m}` space are not modelled"));
        }
    }
    Ok(Space::Generic)
}

/// Elements wider than 64 bits (`.b128`) have no register the model can hold.
fn check_element(bits: u32) -> R<()> {
    if bits > 64 {
        return Err(format!("{bits}-bit elements are not modelled"));
    }
    Ok(())
}

/// Registers that hold the address of a kernel parameter and are used for nothing but reading it:
/// clang writes `mov.b64 %rd44, k_param_4; mov.u64 %rd1, %rd44; ld.param.u64 %rd2, [%rd1+16];`
/// for a struct parameter whose fields it reads through a pointer. Such a register has exactly
/// one definition, a `mov` of the parameter's name or of another such register, and every other
/// mention of it is the base of an `ld.param` address or the source of such a copy; those loads
/// then read the parameter directly.
pub(super) fn param_address_registers<'f>(func: &'f ptx::Function, params: &[super::ParamInfo]) -> std::collections::HashMap<ptx::Name, u32> {
    use std::collections::{HashMap, HashSet};
    /// Where a candidate's value comes from.
    enum Source<'f> {
        Param(u32),
        Copy(&'f str),
    }
    fn regs<'o>(o: &'o ptx::Operand, out: &mut Vec<&'o str>) {
        match o {
            ptx::Operand::Reg(r) | ptx::Operand::NotReg(r) => out.push(r),
            ptx::Operand::RegPair(a, b) => out.extend([a.as_str(), b.as_str()]),
            ptx::Operand::Vector(v) | ptx::Operand::List(v) => v.iter().for_each(|x| regs(x, out)),
            ptx::Operand::Address(ptx::Address { base: ptx::AddressBase::Reg(r), .. }) => out.push(r),
            _ => {}
        }
    }
    let mut defs: HashMap<&'f str, Vec<Option<Source<'f>>>> = HashMap::new();
    let mut copies: Vec<(&'f str, &'f str)> = Vec::new();
    let mut escapes: HashSet<&'f str> = HashSet::new();
    for i in func.instructions() {
        let is_param_load = i.opcode == "ld" && i.has_modifier(".param");
        if let ("mov", [ptx::Operand::Reg(d), src]) = (i.opcode.as_str(), i.operands.as_slice()) {
            let source = match src {
                ptx::Operand::Symbol(s) => params.iter().position(|p| p.name == *s).map(|p| Source::Param(p as u32)),
                ptx::Operand::Reg(s) => {
                    copies.push((s.as_str(), d.as_str()));
                    Some(Source::Copy(s.as_str()))
                }
                _ => None,
            };
            defs.entry(d.as_str()).or_default().push(source);
            if let Some(g) = &i.guard {
                escapes.insert(g.reg.as_str());
            }
            continue;
        }
        if let Some(g) = &i.guard {
            escapes.insert(g.reg.as_str());
        }
        for (k, o) in i.operands.iter().enumerate() {
            let mut found = Vec::new();
            if is_param_load && k == 1 {
                if let ptx::Operand::Address(ptx::Address { base: ptx::AddressBase::Reg(_), .. }) = o {
                    continue;
                }
            }
            if k == 0 && !matches!(i.opcode.as_str(), "st" | "red" | "bar" | "barrier" | "bra" | "call") {
                // A destination: another definition.
                if let ptx::Operand::Reg(d) = o {
                    defs.entry(d.as_str()).or_default().push(None);
                    continue;
                }
            }
            regs(o, &mut found);
            escapes.extend(found);
        }
    }
    // Candidates: one definition, from a parameter or a copy, and no other use; then drop,
    // until nothing changes, those copied from a non-candidate or copied into one.
    let mut set: HashMap<&'f str, &Source<'f>> = defs
        .iter()
        .filter_map(|(r, ds)| match ds.as_slice() {
            [Some(s)] if !escapes.contains(r) => Some((*r, s)),
            _ => None,
        })
        .collect();
    loop {
        let before = set.len();
        let keep: HashSet<&str> = set.keys().copied().collect();
        set.retain(|_, s| !matches!(s, Source::Copy(from) if !keep.contains(from)));
        let keep: HashSet<&str> = set.keys().copied().collect();
        for (from, to) in &copies {
            if keep.contains(from) && !keep.contains(to) {
                set.remove(from);
            }
        }
        if set.len() == before {
            break;
        }
    }
    let param_of = |mut r: &'f str| -> Option<u32> {
        for _ in 0..=set.len() {
            match set.get(r)? {
                Source::Param(p) => return Some(*p),
                Source::Copy(from) => r = from,
            }
        }
        None
    };
    set.keys().filter_map(|r| Some(((*r).into(), param_of(r)?))).collect()
}
