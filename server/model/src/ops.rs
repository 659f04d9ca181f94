//! The model's instruction set: what every PTX instruction is decoded into, and the bit-vector
//! meaning of its integer operations.
//!
//! These functions are the single definition of integer semantics: the interpreter evaluates with
//! them, symbolic expressions fold constants with them, and the SMT encoding maps each operator to
//! the SMT-LIB operator with the same meaning (see `check::smt`). Division by zero follows
//! SMT-LIB (`x / 0 = all ones`, `x % 0 = x`) so that all three agree.

use ptx::Span;
use smol_str::SmolStr;

pub type RegId = u32;
pub type VarId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    Global,
    Shared,
    Local,
    Const,
    Param,
    /// A generic address; the lifter resolves it from the pointer's provenance.
    Generic,
}

impl Space {
    pub fn from_modifier(m: &str) -> Option<Space> {
        Some(match m {
            ".global" => Space::Global,
            ".shared" | ".shared::cta" => Space::Shared,
            ".local" => Space::Local,
            ".const" => Space::Const,
            ".param" => Space::Param,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
            Space::Generic => "generic",
        }
    }
}

/// Special registers. Dimension indices are 0 = x, 1 = y, 2 = z.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    /// `%clock`, `%globaltimer`, ...: values that differ run to run.
    Timer,
}

impl Special {
    pub fn parse(name: &str) -> Option<Special> {
        let dim = |s: &str| match s {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some((base, d)) = name.split_once('.') {
            let d = dim(d)?;
            return Some(match base {
                "%tid" => Special::Tid(d),
                "%ntid" => Special::Ntid(d),
                "%ctaid" => Special::Ctaid(d),
                "%nctaid" => Special::Nctaid(d),
                _ => return None,
            });
        }
        Some(match name {
            "%laneid" => Special::LaneId,
            "%warpid" => Special::WarpId,
            "%clock" | "%clock64" | "%globaltimer" | "%globaltimer_lo" | "%globaltimer_hi" => Special::Timer,
            _ => return None,
        })
    }

    pub fn name(self) -> String {
        const D: [char; 3] = ['x', 'y', 'z'];
        match self {
            Special::Tid(d) => format!("tid.{}", D[d as usize]),
            Special::Ntid(d) => format!("ntid.{}", D[d as usize]),
            Special::Ctaid(d) => format!("ctaid.{}", D[d as usize]),
            Special::Nctaid(d) => format!("nctaid.{}", D[d as usize]),
            Special::LaneId => "laneid".into(),
            Special::WarpId => "warpid".into(),
            Special::Timer => "clock".into(),
        }
    }

    pub fn bits(self) -> u32 {
        match self {
            Special::Timer => 64,
            _ => 32,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Reg(RegId),
    /// An integer or raw float bit pattern, already truncated to the operand width.
    Imm(u64),
    Special(Special),
    /// The address of a module or function variable (`mov.u64 %rd1, smem;`).
    VarAddr(VarId),
    /// `ld.param`'s source: bytes `offset..offset+bytes` of kernel parameter `index`.
    Param {
        index: u32,
        offset: u32,
    },
    /// A negated predicate (`!%p`).
    NotReg(RegId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    MulHiU,
    MulHiS,
    DivU,
    DivS,
    RemU,
    RemS,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
    MinU,
    MinS,
    MaxU,
    MaxS,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnOp {
    Not,
    Neg,
    AbsS,
    Popc,
    Clz,
    Brev,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CmpOp {
    Eq,
    Ne,
    LtU,
    LeU,
    GtU,
    GeU,
    LtS,
    LeS,
    GtS,
    GeS,
}

impl CmpOp {
    pub fn negate(self) -> CmpOp {
        use CmpOp::*;
        match self {
            Eq => Ne,
            Ne => Eq,
            LtU => GeU,
            LeU => GtU,
            GtU => LeU,
            GeU => LtU,
            LtS => GeS,
            LeS => GtS,
            GtS => LeS,
            GeS => LtS,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Float operations. Arithmetic is exact (rationals); the transcendental ones are named functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
    Fma,
    Neg,
    Abs,
    Min,
    Max,
    Sqrt,
    Rsqrt,
    Rcp,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    /// The error function: libdevice's `erff`/`erf` (a call to `__nv_erff`/`__nv_erf`, which no
    /// PTX instruction computes), read as the ideal function, as the approximate instructions
    /// (`tanh.approx`, `ex2.approx`) are.
    Erf,
    /// Anything else with a float result that we keep as an opaque function of its inputs.
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloatCmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// A comparison the decoder does not know. (Unordered variants `equ`, `ltu`, ... and
    /// `num`/`nan` are decoded as negations of ordered ones.)
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    /// `bar.sync` / `barrier.sync` / `bar.red`: wait for the whole block.
    Sync,
    /// `bar.arrive`: signal without waiting.
    Arrive,
}

/// The block-wide reduction `bar.red` performs (`__syncthreads_count`, `__syncthreads_and`,
/// `__syncthreads_or`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarRedOp {
    /// The number of threads whose predicate holds.
    Popc,
    /// Whether it holds in every thread.
    And,
    /// Whether it holds in some thread.
    Or,
}

/// The result of a `bar.red` over a block of `threads` threads, `holding` of which have a true
/// predicate.
pub fn eval_bar_red(op: BarRedOp, holding: u64, threads: u64) -> u64 {
    match op {
        BarRedOp::Popc => holding,
        BarRedOp::And => u64::from(holding == threads),
        BarRedOp::Or => u64::from(holding > 0),
    }
}

/// The model-level operation of one decoded instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Mov {
        dst: RegId,
        src: Operand,
        bits: u32,
    },
    Bin {
        dst: RegId,
        op: BinOp,
        a: Operand,
        b: Operand,
        bits: u32,
    },
    Un {
        dst: RegId,
        op: UnOp,
        a: Operand,
        bits: u32,
    },
    /// Integer width change: zero- or sign-extension, or truncation when `to < from`.
    Ext {
        dst: RegId,
        a: Operand,
        from: u32,
        to: u32,
        signed: bool,
    },
    Setp {
        dst: RegId,
        dst_neg: Option<RegId>,
        cmp: CmpOp,
        a: Operand,
        b: Operand,
        bits: u32,
        combine: Option<(BoolOp, Operand)>,
    },
    FSetp {
        dst: RegId,
        dst_neg: Option<RegId>,
        cmp: FloatCmp,
        a: Operand,
        b: Operand,
        bits: u32,
        combine: Option<(BoolOp, Operand)>,
    },
    Selp {
        dst: RegId,
        a: Operand,
        b: Operand,
        cond: Operand,
        bits: u32,
    },
    Pred {
        dst: RegId,
        op: BoolOp,
        a: Operand,
        b: Operand,
    },
    PredNot {
        dst: RegId,
        a: Operand,
    },
    Float {
        dst: RegId,
        op: FloatOp,
        args: Vec<Operand>,
        bits: u32,
    },
    /// Conversions involving a float type (`cvt.rn.f32.s32`, `cvt.rzi.s32.f32`, `cvt.f32.f16`).
    /// `rnd` is the rounding modifier as written (`.rn`, `.rz`, `.rm`, `.rp`, `.rni`, `.rzi`,
    /// `.rmi`, `.rpi`), `sat` whether `.sat` clamps a float result to [0, 1].
    Cvt {
        dst: RegId,
        a: Operand,
        from: SmolStr,
        to: SmolStr,
        rnd: Option<SmolStr>,
        sat: bool,
    },
    Ld {
        dsts: Vec<RegId>,
        space: Space,
        addr: Address,
        elem_bytes: u32,
    },
    St {
        srcs: Vec<Operand>,
        space: Space,
        addr: Address,
        elem_bytes: u32,
    },
    Atom {
        dst: Option<RegId>,
        space: Space,
        op: AtomOp,
        addr: Address,
        args: Vec<Operand>,
        bytes: u32,
        float: bool,
        signed: bool,
    },
    Bar {
        kind: BarrierKind,
        id: Operand,
    },
    /// `bar.red`: a block barrier (as `bar.sync`) at which every thread also receives the
    /// reduction `op` of the threads' predicates `pred`, in `dst`.
    BarRed {
        dst: RegId,
        op: BarRedOp,
        pred: Operand,
        id: Operand,
    },
    WarpSync {
        mask: Operand,
    },
    Shfl {
        dst: RegId,
        pred_dst: Option<RegId>,
        mode: ShflMode,
        src: Operand,
        lane: Operand,
        clamp: Operand,
        mask: Operand,
    },
    Vote {
        dst: RegId,
        mode: VoteMode,
        pred: Operand,
        mask: Operand,
    },
    ActiveMask {
        dst: RegId,
    },
    /// Memory fences: ordering only, no data effect in the model.
    Fence,
    /// `bra`, handled by the CFG; kept so spans stay aligned.
    Bra {
        target: SmolStr,
    },
    Ret,
    Exit,
    /// An instruction the model does not understand; later stages mark an uncertified region.
    Unsupported {
        opcode: SmolStr,
        reason: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Address {
    pub base: Operand,
    pub offset: i64,
}

/// A decoded instruction with its guard and its place in the source.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub guard: Option<(RegId, bool)>,
    pub op: Op,
    pub span: Span,
    /// The `.loc` in force, as written.
    pub loc: Option<ptx::SourceLoc>,
    /// The line in the kernel's own source file (not an inlined header), 1-based, if known.
    pub line: Option<u32>,
}

pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

pub fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let shift = 64 - bits;
        ((v << shift) as i64) >> shift
    }
}

/// Bit-vector semantics of binary operators on `bits`-wide values (inputs already masked).
pub fn eval_bin(op: BinOp, a: u64, b: u64, bits: u32) -> u64 {
    let m = mask(bits);
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let r = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::MulHiU => (((a as u128) * (b as u128)) >> bits) as u64,
        BinOp::MulHiS => (((sa as i128) * (sb as i128)) >> bits) as u64,
        BinOp::DivU => a.checked_div(b).unwrap_or(m),
        BinOp::DivS => {
            if sb == 0 {
                if sa < 0 {
                    1
                } else {
                    m
                }
            } else {
                sa.wrapping_div(sb) as u64
            }
        }
        BinOp::RemU => a.checked_rem(b).unwrap_or(a),
        BinOp::RemS => {
            if sb == 0 {
                a
            } else {
                sa.wrapping_rem(sb) as u64
            }
        }
        BinOp::Shl => {
            if b >= bits as u64 {
                0
            } else {
                a << b
            }
        }
        BinOp::LShr => {
            if b >= bits as u64 {
                0
            } else {
                a >> b
            }
        }
        BinOp::AShr => (sa >> b.min(63)) as u64,
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::MinU => a.min(b),
        BinOp::MaxU => a.max(b),
        BinOp::MinS => sa.min(sb) as u64,
        BinOp::MaxS => sa.max(sb) as u64,
    };
    r & m
}

pub fn eval_un(op: UnOp, a: u64, bits: u32) -> u64 {
    let m = mask(bits);
    let r = match op {
        UnOp::Not => !a,
        UnOp::Neg => a.wrapping_neg(),
        UnOp::AbsS => sext(a, bits).unsigned_abs(),
        UnOp::Popc => (a & m).count_ones() as u64,
        UnOp::Clz => ((a & m).leading_zeros() - (64 - bits)) as u64,
        UnOp::Brev => (a & m).reverse_bits() >> (64 - bits),
    };
    r & m
}

pub fn eval_cmp(op: CmpOp, a: u64, b: u64, bits: u32) -> bool {
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::LtU => a < b,
        CmpOp::LeU => a <= b,
        CmpOp::GtU => a > b,
        CmpOp::GeU => a >= b,
        CmpOp::LtS => sa < sb,
        CmpOp::LeS => sa <= sb,
        CmpOp::GtS => sa > sb,
        CmpOp::GeS => sa >= sb,
    }
}

/// Width change of an integer: truncate, or zero/sign-extend.
pub fn eval_ext(a: u64, from: u32, to: u32, signed: bool) -> u64 {
    let v = if signed { sext(a & mask(from), from) as u64 } else { a & mask(from) };
    v & mask(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_signs() {
        assert_eq!(eval_bin(BinOp::Add, 0xffff_ffff, 1, 32), 0);
        assert_eq!(eval_bin(BinOp::DivS, 0xffff_fff9, 2, 32), 0xffff_fffd); // -7/2 = -3
        assert_eq!(eval_bin(BinOp::RemS, 0xffff_fff9, 2, 32), 0xffff_ffff); // -7%2 = -1
        assert_eq!(eval_bin(BinOp::AShr, 0x8000_0000, 31, 32), 0xffff_ffff);
        assert_eq!(eval_bin(BinOp::Shl, 1, 40, 32), 0);
        assert_eq!(eval_bin(BinOp::MulHiU, 0xffff_ffff, 0xffff_ffff, 32), 0xffff_fffe);
        assert_eq!(eval_bin(BinOp::DivU, 5, 0, 32), 0xffff_ffff);
        assert!(eval_cmp(CmpOp::LtS, 0xffff_ffff, 0, 32));
        assert!(!eval_cmp(CmpOp::LtU, 0xffff_ffff, 0, 32));
        assert_eq!(eval_ext(0x80, 8, 32, true), 0xffff_ff80);
        assert_eq!(eval_un(UnOp::Clz, 1, 32), 31);
        assert_eq!(eval_un(UnOp::Brev, 1, 32), 0x8000_0000);
    }
}
