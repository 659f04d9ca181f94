//! Shared operand and type parsing: registers (declared on first use), temporaries,
//! variables, sources, destinations, addresses, immediates and vector widths.

use super::{Decoder, Item, VarInfo, R};
use crate::decode::RegInfo;
use crate::ops::*;
use ptx::types::type_bits;
use ptx::Name;
use smol_str::SmolStr;

impl Decoder<'_> {
    pub(super) fn declare_reg(&mut self, name: Name, bits: u32, float: bool) -> RegId {
        let id = self.regs.len() as RegId;
        self.regs.push(RegInfo { name: name.clone(), bits, float });
        self.reg_ids.insert(name, id);
        id
    }

    /// The name a register, label or variable of the current body has in the kernel: inlined
    /// bodies get their frame's prefix.
    pub(super) fn local_name(&self, name: &str) -> Name {
        if self.frame.prefix.is_empty() {
            name.into()
        } else {
            format!("{}{name}", self.frame.prefix).into()
        }
    }

    /// Looks up a register, declaring it on first use if the PTX forgot to (lenient on input).
    pub(super) fn reg(&mut self, name: &str, bits: u32, float: bool) -> RegId {
        let name = self.local_name(name);
        let name = name.as_str();
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

    pub(super) fn temp(&mut self, bits: u32) -> RegId {
        let name: Name = format!("%tmp{}", self.regs.len()).into();
        self.declare_reg(name, bits, false)
    }

    /// A temporary that holds a float.
    pub(super) fn temp_float(&mut self, bits: u32) -> RegId {
        let name: Name = format!("%tmp{}", self.regs.len()).into();
        self.declare_reg(name, bits, true)
    }

    pub(super) fn add_var(&mut self, v: &ptx::VarDecl) {
        let Some(space) = Space::from_modifier(&v.space) else { return };
        let align = v.align.unwrap_or_else(|| type_bits(&v.ty).map_or(1, |b| (b / 8).max(1)));
        self.var_ids.insert(v.name.clone(), self.vars.len() as VarId);
        self.vars.push(VarInfo { name: v.name.clone(), space, size: v.size_bytes(), align, initialized: v.has_initializer });
    }

    pub(super) fn emit(&mut self, op: Op) {
        self.out.push(Item::Inst(Inst { guard: self.guard, op, span: self.span, loc: self.loc, line: self.line }));
    }

    pub(super) fn dst(&mut self, o: &ptx::Operand, bits: u32, float: bool) -> R<RegId> {
        match o {
            ptx::Operand::Reg(n) => Ok(self.reg(n, bits, float)),
            ptx::Operand::Sink => Ok(self.temp(bits)),
            other => Err(format!("expected a destination register, found {other:?}")),
        }
    }

    pub(super) fn src(&mut self, o: &ptx::Operand, bits: u32) -> R<Operand> {
        Ok(match o {
            ptx::Operand::Reg(n) => match Special::parse(n) {
                Some(s) => Operand::Special(s),
                None => Operand::Reg(self.reg(n, bits, false)),
            },
            ptx::Operand::NotReg(n) => Operand::NotReg(self.reg(n, 1, false)),
            ptx::Operand::Imm(imm) => Operand::Imm(imm_bits(*imm, bits)),
            ptx::Operand::Symbol(s) => match self.var(s) {
                Some(v) => Operand::VarAddr(v),
                // Only an address that is used as it is gets here as a parameter's (see
                // `param_address_registers`): one offset at run time is a struct indexed by a
                // value (`tl.addresses[0][tensor_loc]` in multi-tensor-apply kernels).
                None if self.param_ids.contains_key(s) => {
                    return Err(format!(
                        "`{s}` is not a variable this kernel can address: the address of a parameter offset at run time (a struct passed by value indexed by a computed value, as multi-tensor-apply kernels do) is not modelled"
                    ))
                }
                None => return Err(format!("`{s}` is not a variable this kernel can address")),
            },
            other => return Err(format!("unsupported operand {other:?}")),
        })
    }

    /// A variable by name: the current body's own, else a module-level one.
    pub(super) fn var(&self, name: &str) -> Option<VarId> {
        self.var_ids.get(&self.local_name(name)).or_else(|| self.var_ids.get(name)).copied()
    }

    pub(super) fn address(&mut self, o: &ptx::Operand) -> R<Address> {
        let ptx::Operand::Address(a) = o else { return Err("expected an address `[...]`".into()) };
        let base = match &a.base {
            ptx::AddressBase::Reg(r) => Operand::Reg(self.reg(r, 64, false)),
            ptx::AddressBase::Symbol(s) => {
                if let (Some(&p), true) = (self.param_ids.get(s), self.frame.is_kernel()) {
                    Operand::Param { index: p, offset: 0 }
                } else if let Some(v) = self.var(s) {
                    Operand::VarAddr(v)
                } else if self.reg_ids.contains_key(&self.local_name(s)) {
                    // A register declared without `%` (see `Decoder::with_scoped_registers`).
                    Operand::Reg(self.reg(s, 64, false))
                } else {
                    return Err(format!("address of unknown symbol `{s}`"));
                }
            }
            ptx::AddressBase::None => Operand::Imm(0),
        };
        Ok(Address { base, offset: a.offset })
    }

    /// Extends (or truncates) an operand to `to` bits through a temporary.
    pub(super) fn extend(&mut self, a: Operand, from: u32, to: u32, signed: bool) -> Operand {
        if let Operand::Imm(v) = a {
            return Operand::Imm(eval_ext(v, from, to, signed));
        }
        let t = self.temp(to);
        self.emit(Op::Ext { dst: t, a, from, to, signed });
        Operand::Reg(t)
    }
}

/// The opcode with its modifiers, as written (`ld.global.v4.f32`).
pub(super) fn full_opcode(i: &ptx::Instruction) -> SmolStr {
    let mut s = i.opcode.to_string();
    for m in &i.modifiers {
        s.push_str(m);
    }
    s.into()
}

/// The element count of a vector access (`.v2`, `.v4`, `.v8`), 1 for a scalar.
pub(super) fn vector_len(i: &ptx::Instruction) -> usize {
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

/// Immediate bits at an operand width: integers wrap; `0f`/`0d` literals keep their IEEE bits,
/// converted between single and double when the operand width asks for it.
pub(super) fn imm_bits(imm: ptx::Immediate, bits: u32) -> u64 {
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
