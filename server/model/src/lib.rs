//! The lifted kernel model shared by the engine, the interpreter and (later) the Lean emitter.
//!
//! `Kernel::lower` decodes a PTX entry into model operations and builds its control-flow graph
//! with natural loops; `lift` (in `symbolic`) turns that into per-thread symbolic values, memory
//! accesses and phases; `interp` runs it concretely.

pub mod analysis;
pub mod block_shape;
pub mod budget;
pub mod cfg;
pub mod decode;
pub mod dump;
pub mod expr;
pub mod fingerprint;
pub mod interp;
pub mod math;
pub mod ops;
pub mod phases;
mod reconverge;
pub mod symbolic;

pub use analysis::{analyse, Analysis};
pub use cfg::{Block, BlockId, Cfg, Loop, LoopId, Term};
pub use decode::{ParamInfo, RegInfo, VarInfo};
pub use ops::*;

use ptx::Span;

/// A kernel ready for analysis: decoded instructions in a CFG.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: ptx::Name,
    pub regs: Vec<RegInfo>,
    pub vars: Vec<VarInfo>,
    pub params: Vec<ParamInfo>,
    pub cfg: Cfg,
    /// `.reqntid`, if the kernel fixes its block shape.
    pub reqntid: Option<[u64; 3]>,
    /// `.maxntid` (from `__launch_bounds__`) as the most threads per block, if declared.
    pub max_threads: Option<u64>,
    /// The `.file` index of the kernel's own source.
    pub main_file: Option<u32>,
    pub span: Span,
}

/// Why a kernel could not be lowered at all (as opposed to containing unsupported instructions,
/// which lower to `Op::Unsupported`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerError {
    pub message: String,
    pub span: Span,
}

impl Kernel {
    pub fn lower(module: &ptx::Module, func: &ptx::Function) -> Result<Kernel, LowerError> {
        if func.body.is_none() {
            return Err(LowerError { message: format!("`{}` has no body", func.name), span: func.span });
        }
        let d = decode::decode(module, func);
        let cfg = Cfg::build(&d.items).map_err(|e| LowerError { message: e.message, span: e.span })?;
        let reqntid = func.reqntid().map(|v| [v.first().copied().unwrap_or(1), v.get(1).copied().unwrap_or(1), v.get(2).copied().unwrap_or(1)]);
        // `.maxntid 256, 1, 1` bounds the product of the block's extents (a block of 16×16 may
        // run a kernel declared `__launch_bounds__(256)`).
        let max_threads = func.maxntid().filter(|v| !v.is_empty()).map(|v| v.iter().fold(1u64, |p, d| p.saturating_mul((*d).max(1))));
        Ok(Kernel { name: func.name.clone(), regs: d.regs, vars: d.vars, params: d.params, cfg, reqntid, max_threads, main_file: d.main_file, span: func.span })
    }

    /// Every instruction with its block, in block order.
    pub fn insts(&self) -> impl Iterator<Item = (BlockId, usize, &Inst)> {
        self.cfg.blocks.iter().enumerate().flat_map(|(b, blk)| blk.insts.iter().enumerate().map(move |(i, inst)| (b as BlockId, i, inst)))
    }

    /// Whether some instruction reads the special register `s` (`%tid.y`, `%nctaid.x`, ...).
    pub fn reads(&self, s: Special) -> bool {
        self.insts().flat_map(|(_, _, i)| i.op.operands()).any(|o| matches!(o, Operand::Special(r) if *r == s))
    }

    /// The unsupported instructions, with their reasons.
    pub fn unsupported(&self) -> impl Iterator<Item = (&Inst, &str)> {
        self.insts().filter_map(|(_, _, i)| match &i.op {
            Op::Unsupported { reason, .. } => Some((i, reason.as_str())),
            _ => None,
        })
    }

    pub fn var_named(&self, name: &str) -> Option<VarId> {
        self.vars.iter().position(|v| v.name == name).map(|v| v as VarId)
    }
}

/// Lowers every kernel (`.entry` with a body) of a parsed module.
pub fn lower_module(module: &ptx::Module) -> Vec<(ptx::Name, Result<Kernel, LowerError>)> {
    module.functions.iter().filter(|f| f.kind == ptx::FunctionKind::Entry && f.body.is_some()).map(|f| (f.name.clone(), Kernel::lower(module, f))).collect()
}
