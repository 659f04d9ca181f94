//! Byte offsets read as row-major indices. A kernel's offset is a sum of products: the element
//! size times `row * ld + col` (`int` or 64-bit), often plus pointer increments of a
//! strength-reduced loop (`k * 4096`) and unrolled copies (`8 * ld`). Expanded into monomials
//! (a constant times widened factors) and divided by their common factor, it reads
//! `g * (A * B + C)` for each factor `B` that multiplies something: the shape the row-major lemma
//! of [`crate::query::Query::add_index_lemmas`] needs.
//!
//! The expansion distributes sign- and zero-extensions over sums and products, which is exact
//! only when the kernel's index arithmetic does not wrap around: the assumption that lemma
//! states (C++ leaves signed overflow undefined; compilers assume it).

use model::expr::{ExprId, Exprs, Node, Sym};
use model::ops::BinOp;

/// How a factor of fewer than 64 bits is widened to 64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Widen {
    Signed,
    Unsigned,
    /// Already 64 bits.
    None,
}

/// A widened expression: an atom of the expansion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Factor {
    pub e: ExprId,
    pub widen: Widen,
}

/// `coeff * Π factors`.
#[derive(Clone, Debug, PartialEq)]
pub struct Monomial {
    pub coeff: i128,
    pub factors: Vec<Factor>,
}

/// An offset as `scale * (A * stride + C)`: `A` is the sum of `multiple` (the monomials that
/// had `stride` as a factor, with it removed), `C` of `rest`, both divided by `scale`.
#[derive(Clone, Debug)]
pub struct Split {
    pub scale: u64,
    pub stride: Factor,
    pub multiple: Vec<Monomial>,
    pub rest: Vec<Monomial>,
    /// The stride's expression also occurs widened the other way (signed where the stride is
    /// unsigned, or the reverse), and those monomials were counted in `multiple` too: the
    /// reading holds when the stride is non-negative as a signed value of its width.
    pub both_widenings: bool,
}

/// At most this many monomials per offset (products of sums multiply out).
const MAX_MONOMIALS: usize = 32;

/// A way through the selects of an offset: each select's condition with the value it takes.
pub type Path = Vec<(ExprId, bool)>;

/// The row-major readings of an offset on one [`Path`] through its selects.
#[derive(Clone, Debug)]
pub struct Reading {
    pub path: Path,
    /// The common factor of the offset's monomials on this path; 0 when it does not expand.
    pub scale: u64,
    /// One per candidate stride.
    pub splits: Vec<Split>,
}

/// An offset's selects are read apart up to this many conditions (2^n paths).
const MAX_SELECTS: usize = 2;

/// The row-major readings of a 64-bit byte offset, on each path through its selects. A store
/// after a join has a select for its address: clang merges the last stores of two branches,
/// so ggml's rope writes `dst[i + 1]` (pass-through) and `dst[idst + n_dims / 2]` (rotated)
/// with one instruction at `c ? (row * ne0 + i0 + 1) : (row * ne0 + i0 / 2 + n_dims / 2)`.
/// Read as a whole it is no sum of products, and the race between two threads' stores timed
/// out; each branch is row-major. Selects are read apart only for an offset that has no
/// reading with them as atoms: where it has one, the paths' lemmas only add to the query
/// (llm.c's fused classifier: a select of the loop's first pack inside the column, and a race
/// question that was satisfiable in 0.4 s timed out with twice the lemmas). A select whose
/// condition is not read apart (past [`MAX_SELECTS`]) stays an atom.
pub fn readings(x: &Exprs, offset: ExprId) -> Vec<Reading> {
    let (whole, monomials) = reading(x, offset, Vec::new());
    if !whole.splits.is_empty() {
        return vec![whole];
    }
    match monomials.map(|m| paths_through_selects(x, &m)) {
        Some(paths) if !paths.is_empty() => paths.into_iter().map(|path| reading(x, offset, path).0).collect(),
        _ => vec![whole],
    }
}

/// The paths through the selects an expansion kept as atoms, each condition taken both ways;
/// none when it kept no select or more than [`MAX_SELECTS`].
pub fn paths_through_selects(x: &Exprs, monomials: &[Monomial]) -> Vec<Path> {
    let mut conditions: Vec<ExprId> = Vec::new();
    for f in monomials.iter().flat_map(|m| &m.factors) {
        if let Node::Ite { c, .. } = *x.node(f.e) {
            if !conditions.contains(&c) {
                conditions.push(c);
            }
        }
    }
    if conditions.is_empty() || conditions.len() > MAX_SELECTS {
        return Vec::new();
    }
    let mut paths: Vec<Path> = vec![Vec::new()];
    for c in conditions {
        paths = paths.into_iter().flat_map(|p| [true, false].map(|taken| p.iter().copied().chain([(c, taken)]).collect())).collect();
    }
    paths
}

/// `e` (a 64-bit offset) as a sum of monomials on `path` (see [`readings`]), and whether the
/// sum is its value exactly: it is not where a sign- or zero-extension was distributed over
/// narrower arithmetic, which holds only when that arithmetic does not wrap (the assumption the
/// row-major lemma states). `None` when it does not expand.
pub fn expansion(x: &Exprs, e: ExprId, path: &[(ExprId, bool)]) -> Option<(Vec<Monomial>, bool)> {
    let mut exact = true;
    let monomials = expand(x, e, Widen::None, path, &mut exact)?;
    Some((monomials, exact))
}

/// The readings of `offset` on `path`, and its monomials there (`None` when it does not
/// expand).
fn reading(x: &Exprs, offset: ExprId, path: Path) -> (Reading, Option<Vec<Monomial>>) {
    match expansion(x, offset, &path) {
        Some((monomials, _)) => {
            let scale = monomials.iter().fold(0u128, |g, m| gcd(g, m.coeff.unsigned_abs()));
            (Reading { scale: u64::try_from(scale).unwrap_or(0), splits: splits_of(x, &monomials), path }, Some(monomials))
        }
        None => (Reading { path, scale: 0, splits: Vec::new() }, None),
    }
}

/// What every path of an offset is a multiple of (the common factor of their common factors);
/// 1 when a path does not expand.
pub fn scale_of(readings: &[Reading]) -> u64 {
    if readings.iter().any(|r| r.scale == 0) {
        return 1;
    }
    readings.iter().fold(0u128, |g, r| gcd(g, r.scale.into())).max(1) as u64
}

/// The row-major readings of a sum of monomials (an offset, or the row of another reading:
/// `row = blockIdx.x * warps_per_block + warp` inside `row * C + col`).
pub fn splits_of(x: &Exprs, monomials: &[Monomial]) -> Vec<Split> {
    let scale = monomials.iter().fold(0u128, |g, m| gcd(g, m.coeff.unsigned_abs()));
    if scale == 0 || scale > u64::MAX as u128 {
        return Vec::new();
    }
    let scale_i = scale as i128;
    let mut strides: Vec<Factor> = Vec::new();
    for m in monomials.iter().filter(|m| m.factors.len() >= 2) {
        for f in &m.factors {
            if is_size(x, f.e) && !strides.contains(f) {
                strides.push(*f);
            }
        }
    }
    strides
        .into_iter()
        .filter_map(|stride| {
            let (mut multiple, mut rest) = (Vec::new(), Vec::new());
            let mut both_widenings = false;
            for m in monomials {
                let coeff = m.coeff / scale_i;
                // The stride itself first; else the same value widened the other way: vLLM's
                // MoE counters live at `shared + n + 1 + (threadIdx.x + 1) * n`, where clang
                // widens the product's `n` unsigned and the base's signed, which left `n` in
                // the column (never below the stride) and the rows' races to time out.
                let at = m.factors.iter().position(|f| *f == stride).or_else(|| {
                    let other = m.factors.iter().position(|f| f.e == stride.e && f.widen != Widen::None && stride.widen != Widen::None);
                    both_widenings |= other.is_some();
                    other
                });
                match at {
                    Some(at) => {
                        let mut factors = m.factors.clone();
                        factors.remove(at);
                        multiple.push(Monomial { coeff, factors });
                    }
                    None => rest.push(Monomial { coeff, factors: m.factors.clone() }),
                }
            }
            Some(Split { scale: scale as u64, stride, multiple: combine(multiple)?, rest, both_widenings })
        })
        // A column is an index plus loop steps: a reading whose rest multiplies two sizes or
        // indices (`tid.y * ld` when the stride is `ntid.y`) only costs the solver products.
        // A block's first index (`ntid.y * ctaid.y`, of a global index `blockDim.y *
        // blockIdx.y + threadIdx.y`) is a column's too: ggml's rope indexes `row * ne0 + i0`
        // with `i0` such an index, and without the lemma its races time out.
        .filter(|s| s.rest.iter().all(|m| m.factors.iter().filter(|f| !is_counter(x, f.e)).count() <= 1 || is_block_start(x, m)))
        // A row that steps with a loop counter times a size is a grid-stride loop, which the
        // grid-stride lemma states without the product.
        .filter(|s| s.multiple.iter().all(|m| m.factors.len() <= 1 || !m.factors.iter().any(|f| is_counter(x, f.e))))
        .collect()
}

/// The columns of two readings with the same stride, less the smaller of their constants.
/// Subtracting one constant from both columns keeps two offsets equal exactly when the rows
/// and the rest of the columns are, and a column counted from a base past the buffer's start
/// is within the row only without that base: ggml's softmax keeps its row at `smem + 32`,
/// after 32 floats of warp sums (`32 + tid < blockDim.x` fails for the block's last warp),
/// and vLLM's MoE counters start one element past a row, with unrolled copies at `+ 1` to
/// `+ 4` (`4 * k + 4 < n` fails at the last iteration; `4 * k + 3 < n` holds). Either left
/// the lemma unusable and the races of those rows undecided.
pub fn columns_past_common_base(p: &Split, q: &Split) -> (Vec<Monomial>, Vec<Monomial>) {
    let constant = |s: &Split| s.rest.iter().find(|m| m.factors.is_empty()).map_or(0, |m| m.coeff);
    let base = constant(p).min(constant(q));
    let less_base = |s: &Split| -> Vec<Monomial> {
        let mut rest: Vec<Monomial> = s.rest.iter().filter(|m| !m.factors.is_empty()).cloned().collect();
        let left = constant(s) - base;
        if left != 0 {
            rest.push(Monomial { coeff: left, factors: Vec::new() });
        }
        rest
    };
    if base == 0 {
        (p.rest.clone(), q.rest.clone())
    } else {
        (less_base(p), less_base(q))
    }
}

/// A stride is a size (a parameter, a launch dimension, a value computed from them), not a
/// constant, a thread or block index, a loaded value (an index buffer's slot), or a loop counter: a counter times a size is a
/// grid-stride step, which the grid-stride lemma covers, and an index is what gets multiplied.
/// (Every other reading is a true lemma too, but each costs the solver its products.)
fn is_size(x: &Exprs, e: ExprId) -> bool {
    use model::ops::Special::{Ctaid, LaneId, Tid, WarpId};
    let index = |s: &Sym| matches!(s, Sym::Counter(_) | Sym::Value { .. } | Sym::Special(Tid(_) | Ctaid(_) | LaneId | WarpId));
    x.as_const(e).is_none() && !x.symbols(e).iter().any(index)
}

/// `ntid.d * ctaid.d` (any coefficient): the first global index of a block along `d`.
fn is_block_start(x: &Exprs, m: &Monomial) -> bool {
    use model::ops::Special::{Ctaid, Ntid};
    let special = |f: &Factor| match x.node(f.e) {
        Node::Var { sym: Sym::Special(s), .. } => Some(*s),
        _ => None,
    };
    match m.factors.as_slice() {
        [a, b] => matches!((special(a), special(b)), (Some(Ntid(d)), Some(Ctaid(e))) | (Some(Ctaid(e)), Some(Ntid(d))) if d == e),
        _ => false,
    }
}

fn is_counter(x: &Exprs, e: ExprId) -> bool {
    matches!(x.node(e), Node::Var { sym: Sym::Counter(_), .. })
}

/// `e` (widened by `widen` to 64 bits) as a sum of monomials, with each select whose
/// condition `path` names taken the way it says (others are atoms); `None` past
/// [`MAX_MONOMIALS`].
fn expand(x: &Exprs, e: ExprId, widen: Widen, path: &[(ExprId, bool)], exact: &mut bool) -> Option<Vec<Monomial>> {
    let bits = x.bits(e);
    // A loop counter is an iteration number, never negative: under the no-wrap assumption
    // `sext(k * step)` is `zext(k) * sext(step)`, the form the loop's own no-wrap fact and
    // guard use, so the solver meets one term instead of two it must prove equal.
    let widen = if widen == Widen::Signed && is_counter(x, e) {
        *exact = false;
        Widen::Unsigned
    } else {
        widen
    };
    if widen != Widen::None && matches!(x.node(e), Node::Bin { op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl, .. }) {
        *exact = false;
    }
    let atom = || Some(vec![Monomial { coeff: 1, factors: vec![Factor { e, widen }] }]);
    if let Some(v) = x.as_const(e) {
        let value = match widen {
            Widen::Signed if bits < 64 => ((v << (64 - bits)) as i64 >> (64 - bits)) as i128,
            _ if bits == 64 => v as i64 as i128,
            _ => v as i128,
        };
        return Some(vec![Monomial { coeff: value, factors: vec![] }]);
    }
    let out = match *x.node(e) {
        Node::Bin { op: BinOp::Add, a, b, .. } => {
            let mut sum = expand(x, a, widen, path, exact)?;
            sum.extend(expand(x, b, widen, path, exact)?);
            sum
        }
        Node::Bin { op: BinOp::Sub, a, b, .. } => {
            let mut sum = expand(x, a, widen, path, exact)?;
            sum.extend(expand(x, b, widen, path, exact)?.into_iter().map(|m| Monomial { coeff: -m.coeff, ..m }));
            sum
        }
        Node::Bin { op: BinOp::Mul, a, b, .. } => {
            let (l, r) = (expand(x, a, widen, path, exact)?, expand(x, b, widen, path, exact)?);
            if l.len() * r.len() > MAX_MONOMIALS {
                return None;
            }
            let mut product = Vec::new();
            for p in &l {
                for q in &r {
                    let mut factors = p.factors.clone();
                    factors.extend(q.factors.iter().copied());
                    product.push(Monomial { coeff: p.coeff.checked_mul(q.coeff)?, factors });
                }
            }
            product
        }
        Node::Bin { op: BinOp::Shl, a, b, .. } => match x.as_const(b).filter(|&n| n < 62) {
            Some(n) => expand(x, a, widen, path, exact)?.into_iter().map(|m| Monomial { coeff: m.coeff << n, ..m }).collect(),
            None => return atom(),
        },
        // A value of launch dimensions and thread indices alone (a thread's rank in a block
        // of two dimensions, the block's size as a loop step) stays one factor, as the lifter
        // writes it in the loop's no-overflow fact: the lemma's column is then the fact's own
        // term (`sext(rank) + zext(k) * sext(ntid.x * ntid.y)`), not a sum of products the
        // solver would have to prove equal to it (apex's layer norm: 1 s, no answer).
        Node::Ext { a, from, to: 64, .. } if widen == Widen::None && from < 64 && x.is_launch_value_below_sign(a) => {
            return Some(vec![Monomial { coeff: 1, factors: vec![Factor { e: a, widen: Widen::Signed }] }]);
        }
        Node::Ext { a, from, to: 64, signed } if widen == Widen::None && from < 64 => {
            expand(x, a, if signed { Widen::Signed } else { Widen::Unsigned }, path, exact)?
        }
        Node::Ite { c, a, b } => match path.iter().find(|(k, _)| *k == c) {
            Some(&(_, taken)) => expand(x, if taken { a } else { b }, widen, path, exact)?,
            None => return atom(),
        },
        _ => return atom(),
    };
    let out = combine(out)?;
    (out.len() <= MAX_MONOMIALS).then_some(out)
}

/// Like monomials added up, and those that cancel dropped. Compilers spell an index through
/// its quotient and remainder: llm.c's encoder takes `b = bt / T`, `t = bt % T`, `c = i % C`
/// and writes `out[b * T * C + t * C + c]`, which clang emits as `(bt - t) * C + t * C +
/// (i - bt * C)` with `bt = i / C`: `i` itself, once the products of `bt` and of `t` cancel.
/// Left apart, the reading keeps a stride whose row sums to zero, and the race between two
/// threads' packs of `out` timed out instead of being the global index's.
fn combine(monomials: Vec<Monomial>) -> Option<Vec<Monomial>> {
    let mut out: Vec<Monomial> = Vec::with_capacity(monomials.len());
    for mut m in monomials {
        m.factors.sort();
        match out.iter_mut().find(|o| o.factors == m.factors) {
            Some(o) => o.coeff = o.coeff.checked_add(m.coeff)?,
            None => out.push(m),
        }
    }
    out.retain(|m| m.coeff != 0);
    Some(out)
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::ops::Special;

    /// Every reading of an offset without selects.
    fn splits(x: &Exprs, offset: ExprId) -> Vec<Split> {
        readings(x, offset).into_iter().flat_map(|r| r.splits).collect()
    }

    /// `4 * sext(index)`: the byte offset of a 32-bit `int` index into a `float` array.
    fn float_offset(x: &mut Exprs, index: ExprId) -> ExprId {
        let wide = x.ext(index, 64, true);
        let two = x.konst(2, 64);
        x.bin(BinOp::Shl, wide, two)
    }

    #[test]
    fn a_row_major_offset_with_a_pointer_increment_splits_by_its_leading_dimension() {
        // 4 * sext(row * ld + tid) + (k << 12), as clang writes `dst[row * ld + col]` in a
        // strided loop with a pointer increment.
        let mut x = Exprs::new();
        let row = x.var(Sym::Special(Special::Ctaid(0)), 32);
        let ld = x.var(Sym::Param { index: 2, offset: 0 }, 32);
        let tid = x.var(Sym::Special(Special::Tid(0)), 32);
        let k = x.var(Sym::Counter(0), 32);
        let prod = x.bin(BinOp::Mul, row, ld);
        let index = x.bin(BinOp::Add, prod, tid);
        let scaled = float_offset(&mut x, index);
        let k64 = x.ext(k, 64, false);
        let twelve = x.konst(12, 64);
        let step = x.bin(BinOp::Shl, k64, twelve);
        let offset = x.bin(BinOp::Add, scaled, step);
        let s = splits(&x, offset);
        let by_ld: Vec<&Split> = s.iter().filter(|s| s.stride.e == ld).collect();
        assert_eq!(by_ld.len(), 1);
        let s = by_ld[0];
        assert_eq!(s.scale, 4);
        assert_eq!(s.multiple, vec![Monomial { coeff: 1, factors: vec![Factor { e: row, widen: Widen::Signed }] }]);
        // The column: tid + 1024 * k.
        assert_eq!(s.rest.len(), 2);
        assert!(s.rest.contains(&Monomial { coeff: 1024, factors: vec![Factor { e: k, widen: Widen::Unsigned }] }));
        // The counter is never a stride.
        assert!(splits(&x, offset).iter().all(|s| s.stride.e != k));
    }

    #[test]
    fn a_rank_of_launch_values_is_one_factor_of_the_column() {
        // apex's layer norm: 2 * sext(ctaid.y * n2) + 2 * zext(rank) + zext(k) * (zext(ntid.x *
        // ntid.y) << 1), with rank = tid.y * ntid.x + tid.x: the column is the rank and the
        // block-stride step, each launch value one factor widened signed (as the loop's
        // no-overflow fact writes them), not products spread into monomials.
        let mut x = Exprs::new();
        let row = x.var(Sym::Special(Special::Ctaid(1)), 32);
        let n2 = x.var(Sym::Param { index: 5, offset: 0 }, 32);
        let (tid_x, tid_y) = (x.var(Sym::Special(Special::Tid(0)), 32), x.var(Sym::Special(Special::Tid(1)), 32));
        let (ntid_x, ntid_y) = (x.var(Sym::Special(Special::Ntid(0)), 32), x.var(Sym::Special(Special::Ntid(1)), 32));
        let k = x.var(Sym::Counter(0), 32);
        let one = x.konst(1, 64);
        let start = x.bin(BinOp::Mul, row, n2);
        let start = x.ext(start, 64, true);
        let start = x.bin(BinOp::Shl, start, one);
        let ty = x.bin(BinOp::Mul, tid_y, ntid_x);
        let rank = x.bin(BinOp::Add, ty, tid_x);
        let rank64 = x.ext(rank, 64, false);
        let rank64 = x.bin(BinOp::Shl, rank64, one);
        let threads = x.bin(BinOp::Mul, ntid_x, ntid_y);
        let threads64 = x.ext(threads, 64, false);
        let threads64 = x.bin(BinOp::Shl, threads64, one);
        let k64 = x.ext(k, 64, false);
        let step = x.bin(BinOp::Mul, k64, threads64);
        let column = x.bin(BinOp::Add, rank64, step);
        let offset = x.bin(BinOp::Add, start, column);
        let by_n2: Vec<Split> = splits(&x, offset).into_iter().filter(|s| s.stride.e == n2).collect();
        assert_eq!(by_n2.len(), 1);
        assert_eq!(by_n2[0].scale, 2);
        let signed = |e| Factor { e, widen: Widen::Signed };
        assert!(by_n2[0].rest.contains(&Monomial { coeff: 1, factors: vec![signed(rank)] }), "{:?}", by_n2[0].rest);
        let mut step_factors = vec![Factor { e: k, widen: Widen::Unsigned }, signed(threads)];
        step_factors.sort();
        assert!(by_n2[0].rest.contains(&Monomial { coeff: 1, factors: step_factors }), "{:?}", by_n2[0].rest);
    }

    #[test]
    fn a_row_that_is_itself_row_major_splits_again_and_counters_widen_unsigned() {
        // 4 * sext((ctaid * warps + (tid >> 5)) * C + (lane + k * 32)): a warp per row, a
        // strided loop over the row's columns.
        let mut x = Exprs::new();
        let ctaid = x.var(Sym::Special(Special::Ctaid(0)), 32);
        let ntid = x.var(Sym::Special(Special::Ntid(0)), 32);
        let five = x.konst(5, 32);
        let warps = x.bin(BinOp::LShr, ntid, five);
        let tid = x.var(Sym::Special(Special::Tid(0)), 32);
        let warp = x.bin(BinOp::LShr, tid, five);
        let c = x.var(Sym::Param { index: 3, offset: 0 }, 32);
        let k = x.var(Sym::Counter(0), 32);
        let lane = x.var(Sym::Special(Special::LaneId), 32);
        let blocks = x.bin(BinOp::Mul, ctaid, warps);
        let row = x.bin(BinOp::Add, blocks, warp);
        let start = x.bin(BinOp::Mul, row, c);
        let thirty_two = x.konst(32, 32);
        let step = x.bin(BinOp::Mul, k, thirty_two);
        let col = x.bin(BinOp::Add, lane, step);
        let index = x.bin(BinOp::Add, start, col);
        let offset = float_offset(&mut x, index);
        let by_c: Vec<Split> = splits(&x, offset).into_iter().filter(|s| s.stride.e == c).collect();
        assert_eq!(by_c.len(), 1);
        // The column's counter widens as the iteration number it is, not as a signed int.
        assert!(by_c[0].rest.contains(&Monomial { coeff: 32, factors: vec![Factor { e: k, widen: Widen::Unsigned }] }));
        // The row splits again by the warps per block: ctaid, then the warp.
        let by_warps: Vec<Split> = splits_of(&x, &by_c[0].multiple).into_iter().filter(|s| s.stride.e == warps).collect();
        assert_eq!(by_warps.len(), 1);
        assert_eq!(by_warps[0].multiple, vec![Monomial { coeff: 1, factors: vec![Factor { e: ctaid, widen: Widen::Signed }] }]);
        assert_eq!(by_warps[0].rest, vec![Monomial { coeff: 1, factors: vec![Factor { e: warp, widen: Widen::Signed }] }]);
    }

    #[test]
    fn an_index_spelled_through_its_quotient_and_remainder_reads_as_the_index() {
        // llm.c's encoder: i = 4 * (ctaid * ntid + tid), bt = i / C, t = bt % T, and the store
        // to `out + b * T * C + t * C + c` as clang emits it, three terms widened apart:
        // 4 * (sext((bt - t) * C) + sext(t * C) + sext(i - bt * C)) = 4 * i.
        let mut x = Exprs::new();
        let ctaid = x.var(Sym::Special(Special::Ctaid(0)), 32);
        let ntid = x.var(Sym::Special(Special::Ntid(0)), 32);
        let tid = x.var(Sym::Special(Special::Tid(0)), 32);
        let c = x.var(Sym::Param { index: 6, offset: 0 }, 32);
        let t_rows = x.var(Sym::Param { index: 5, offset: 0 }, 32);
        let block = x.bin(BinOp::Mul, ctaid, ntid);
        let global = x.bin(BinOp::Add, block, tid);
        let two = x.konst(2, 32);
        let i = x.bin(BinOp::Shl, global, two);
        let bt = x.bin(BinOp::DivS, i, c);
        let t = x.bin(BinOp::RemS, bt, t_rows);
        let b_rows = x.bin(BinOp::Sub, bt, t);
        let first = x.bin(BinOp::Mul, b_rows, c);
        let second = x.bin(BinOp::Mul, t, c);
        let bt_c = x.bin(BinOp::Mul, bt, c);
        let third = x.bin(BinOp::Sub, i, bt_c);
        let (o1, o2, o3) = (float_offset(&mut x, first), float_offset(&mut x, second), float_offset(&mut x, third));
        let sum = x.bin(BinOp::Add, o1, o2);
        let offset = x.bin(BinOp::Add, sum, o3);
        let s = splits(&x, offset);
        // No reading by C is left (its rows cancel); the one by ntid is the global index.
        assert!(s.iter().all(|s| s.stride.e != c), "{s:?}");
        let by_ntid: Vec<&Split> = s.iter().filter(|s| s.stride.e == ntid).collect();
        assert_eq!(by_ntid.len(), 1);
        assert_eq!(by_ntid[0].scale, 16);
        assert_eq!(by_ntid[0].multiple, vec![Monomial { coeff: 1, factors: vec![Factor { e: ctaid, widen: Widen::Signed }] }]);
        assert_eq!(by_ntid[0].rest, vec![Monomial { coeff: 1, factors: vec![Factor { e: tid, widen: Widen::Signed }] }]);
    }

    #[test]
    fn two_offsets_past_the_same_base_are_compared_without_it() {
        // 4 * sext(32 + k * ntid + tid): ggml's softmax row, kept after 32 floats of warp sums.
        let mut x = Exprs::new();
        let ntid = x.var(Sym::Special(Special::Ntid(0)), 32);
        let tid = x.var(Sym::Special(Special::Tid(0)), 32);
        let k = x.var(Sym::Counter(0), 32);
        let base = x.konst(32, 32);
        let step = x.bin(BinOp::Mul, k, ntid);
        let col = x.bin(BinOp::Add, step, tid);
        let index = x.bin(BinOp::Add, base, col);
        let offset = float_offset(&mut x, index);
        let by_ntid: Vec<Split> = splits(&x, offset).into_iter().filter(|s| s.stride.e == ntid).collect();
        assert_eq!(by_ntid.len(), 1);
        assert_eq!(by_ntid[0].rest.len(), 2, "the base is part of the column: {:?}", by_ntid[0].rest);
        let (c1, c2) = columns_past_common_base(&by_ntid[0], &by_ntid[0]);
        let column = vec![Monomial { coeff: 1, factors: vec![Factor { e: tid, widen: Widen::Signed }] }];
        assert_eq!((c1, c2), (column.clone(), column));
        // Another constant (an unrolled copy three elements on): only the smaller one is set
        // apart, and the other column keeps the difference.
        let mut other = by_ntid[0].clone();
        other.rest.iter_mut().filter(|m| m.factors.is_empty()).for_each(|m| m.coeff = 35);
        let (c1, c2) = columns_past_common_base(&by_ntid[0], &other);
        assert_eq!(c1.len(), 1);
        assert!(c2.contains(&Monomial { coeff: 3, factors: vec![] }), "{c2:?}");
    }

    #[test]
    fn a_two_dimensional_grid_index_splits_by_its_row_length() {
        // 4 * sext((ntid.x * ctaid.x + tid.x) * ne0 + ((ntid.y * ctaid.y + tid.y) << 1)): ggml's
        // rope, `dst[row * ne0 + i0]` with `i0 = 2 * (blockDim.y * blockIdx.y + threadIdx.y)`.
        let mut x = Exprs::new();
        let global = |x: &mut Exprs, d: u8| {
            let ntid = x.var(Sym::Special(Special::Ntid(d)), 32);
            let ctaid = x.var(Sym::Special(Special::Ctaid(d)), 32);
            let tid = x.var(Sym::Special(Special::Tid(d)), 32);
            let block = x.bin(BinOp::Mul, ntid, ctaid);
            x.bin(BinOp::Add, block, tid)
        };
        let row = global(&mut x, 0);
        let ne0 = x.var(Sym::Param { index: 2, offset: 0 }, 32);
        let start = x.bin(BinOp::Mul, row, ne0);
        let gy = global(&mut x, 1);
        let one = x.konst(1, 32);
        let i0 = x.bin(BinOp::Shl, gy, one);
        let index = x.bin(BinOp::Add, start, i0);
        let offset = float_offset(&mut x, index);
        let by_ne0: Vec<Split> = splits(&x, offset).into_iter().filter(|s| s.stride.e == ne0).collect();
        assert_eq!(by_ne0.len(), 1);
        assert_eq!(by_ne0[0].scale, 4);
        assert_eq!(by_ne0[0].rest.len(), 2);
    }

    #[test]
    fn a_select_between_two_row_major_offsets_is_read_on_each_path() {
        // 4 * sext(c ? row * ne0 + i0 + 1 : row * ne0 + i0 + h): the address of a store
        // clang merged from two branches (ggml's rope).
        let mut x = Exprs::new();
        let row = x.var(Sym::Special(Special::Ctaid(0)), 32);
        let ne0 = x.var(Sym::Param { index: 2, offset: 0 }, 32);
        let i0 = x.var(Sym::Special(Special::Tid(0)), 32);
        let h = x.var(Sym::Param { index: 6, offset: 0 }, 32);
        let one = x.konst(1, 32);
        let prod = x.bin(BinOp::Mul, row, ne0);
        let base = x.bin(BinOp::Add, prod, i0);
        let (pass, rotated) = (x.bin(BinOp::Add, base, one), x.bin(BinOp::Add, base, h));
        let c = x.cmp(model::ops::CmpOp::LtS, i0, h);
        let index = x.ite(c, pass, rotated);
        let offset = float_offset(&mut x, index);
        let r = readings(&x, offset);
        assert_eq!(r.iter().map(|r| r.path.clone()).collect::<Vec<_>>(), vec![vec![(c, true)], vec![(c, false)]]);
        for reading in &r {
            assert_eq!(reading.scale, 4);
            let by_ne0: Vec<&Split> = reading.splits.iter().filter(|s| s.stride.e == ne0).collect();
            assert_eq!(by_ne0.len(), 1, "{:?}", reading.path);
            let column: Vec<ExprId> = by_ne0[0].rest.iter().flat_map(|m| m.factors.iter().map(|f| f.e)).collect();
            assert!(column.contains(&i0));
            // The branch's own term, not the select, is in the column.
            assert_eq!(column.contains(&h), !reading.path[0].1, "{:?}", reading.path);
            assert!(!column.contains(&index));
        }
    }
}
