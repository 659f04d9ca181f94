//! Rows an access keeps to. Most kernels give each block (or each group of threads) a row of
//! its own: softmax writes `out + blockIdx.x * classes`, a quantisation kernel stages group
//! `threadIdx.x / 16` at `smem + group * group_size`. A byte offset that reads
//! `row * stride + column`, with a stride the launch and the parameters fix and a column that
//! stays within `[0, stride - width]` in every thread and iteration, keeps to its row; two such
//! accesses with one stride overlap only within one row. That is proved once per access, by a
//! question about one thread (cheap: a bounds question's size), and then every race question
//! between the two is asked of pairs in the same row only, with the row's terms encoded once
//! for both threads (see [`crate::encode::Encoder::assume_same_value`]).
//!
//! Asked whole, the solver must separate the rows itself through products of unknowns and
//! pointer alignment: PyTorch's ILP softmax with its `lark.toml` spent 3.9 s of solver time on
//! such questions (0.2 to 0.7 s each), about 0.4 s once the row is shared; vLLM's group
//! quantisation with no setup ran out of time (20 s and more) on the copy into its group's
//! shared row, decided in 34 ms in the group.
//!
//! Why different rows cannot overlap: the proof shows `index <= index_max` and
//! `width <= stride <= 2^64 / (index_max + 1)`, so `index * stride + column` does not wrap and
//! lies in `[index * stride, (index + 1) * stride - width]`, an interval that the rows of other
//! indices do not meet. The expansion into monomials is the offset's value exactly, or (where
//! it distributed a widening over narrower arithmetic, [`Row::exact`]) under the no-wrap
//! assumption the row-major lemma states, which the report then names.

use crate::ctx::Ctx;
use crate::encode::bv;
use crate::query::Query;
use crate::row_major::{expansion, paths_through_selects, Factor, Monomial, Path};
use model::expr::{ExprId, Exprs, Node, Sym};
use model::ops::Special;
use std::sync::{Arc, Mutex, OnceLock};

/// A row an access keeps to, proved.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The row's index: a value of thread and block indices and launch sizes.
    pub index: Factor,
    /// Bytes from one row to the next: uniform (parameters, launch sizes, constants), sorted.
    stride: Vec<Monomial>,
    /// Whether the offset is `index * stride + column` exactly (see the module comment).
    pub exact: bool,
}

/// A row an access may keep to: the index, the stride, and the column on each path through
/// the offset's selects.
struct Candidate {
    index: Factor,
    stride: Vec<Monomial>,
    columns: Vec<(Path, Vec<Monomial>)>,
    exact: bool,
}

/// Rows tried per access (block indices first).
const MAX_CANDIDATES: usize = 2;

/// The share of a query's time a row's proof gets (62 ms at Yices' default 1 s): every row
/// proved on `tests/real` took under 30 ms, and a proof that runs out of time delays every
/// question of its access (ggml's rope with no setup: 0.25 s twice with a quarter).
const ROW_SHARE: u64 = 16;

/// The rows of accesses `i` and `j` with one stride, as the index of each: a race between them
/// lies within one row of each such pair (see the module comment).
pub fn common(ctx: &mut Ctx, i: usize, j: usize) -> Vec<(Row, Row)> {
    let (ri, rj) = (of(ctx, i), of(ctx, j));
    let mut out = Vec::new();
    for r in ri.iter() {
        if let Some(s) = rj.iter().find(|s| s.stride == r.stride) {
            out.push((r.clone(), s.clone()));
        }
    }
    out
}

/// The rows access `i` keeps to, proved the first time a worker asks (see [`RowsCache`]).
fn of(ctx: &mut Ctx, i: usize) -> Arc<Vec<Row>> {
    let cache = ctx.rows;
    cache.get_or_compute(i, || prove(ctx, i))
}

/// The candidates of access `i` that a one-thread question proves. A candidate with a constant
/// stride read through a widening distributed over narrower arithmetic (not exact, see
/// [`Row::exact`]) is exact after all where a second question proves the offset equal to
/// `index * stride + column` under the access's facts (a loop's no-overflow fact says
/// `sext(tid + k * 1024)` is `sext(tid) + 1024 * zext(k)`, PyTorch's softmax's column): the
/// report then names no assumption for it.
fn prove(ctx: &mut Ctx, i: usize) -> Vec<Row> {
    let a = &ctx.l.accesses[i];
    let Some(offset) = a.offset else { return Vec::new() };
    let x = &ctx.l.exprs;
    let mut rows = Vec::new();
    for c in candidates(x, offset) {
        if ctx.budget.check().is_err() {
            break;
        }
        let Some(index_max) = index_bound(ctx.bind, x, c.index.e) else { continue };
        let stride_max = ((1u128 << 64) / (index_max + 1)).min(u64::MAX as u128) as u64;
        let within = ask_of_access(ctx, i, |q| {
            let index = q.factor_term(x, &c.index, 1);
            let stride = q.sum_of(x, &c.stride, 1);
            let width = bv(a.bytes as u64, 64);
            let mut claim = vec![
                format!("(bvule {width} {stride})"),
                format!("(bvule {stride} {})", bv(stride_max, 64)),
                format!("(bvule {index} {})", bv(index_max as u64, 64)),
            ];
            claim.extend(on_each_path(q, &c.columns, |column| format!("(bvule {column} (bvsub {stride} {width}))")));
            claim
        });
        if !within {
            continue;
        }
        // Only for a constant stride: with a stride of unknowns the equality is one of two
        // multipliers, which the solver rarely proves within the share (llm.c's cross-entropy,
        // `losses[b * T + t]`: 62 ms, no answer).
        let constant_stride = c.stride.iter().all(|m| m.factors.is_empty());
        let exact = c.exact
            || constant_stride
                && ask_of_access(ctx, i, |q| {
                    let (o, index, stride) = (q.enc.term(offset, 1), q.factor_term(x, &c.index, 1), q.sum_of(x, &c.stride, 1));
                    on_each_path(q, &c.columns, |column| format!("(= {o} (bvadd (bvmul {index} {stride}) {column}))"))
                });
        rows.push(Row { index: c.index, stride: c.stride, exact });
    }
    rows
}

/// Whether every claim `claims` makes (in a one-thread query of access `i`, with its path
/// condition and facts) holds wherever the access is made, within [`ROW_SHARE`] of a query's
/// time.
fn ask_of_access(ctx: &mut Ctx, i: usize, claims: impl FnOnce(&mut Query) -> Vec<String>) -> bool {
    let a = &ctx.l.accesses[i];
    let (x, Some(offset)) = (&ctx.l.exprs, a.offset) else { return false };
    let mut q = Query::new(x, ctx.bind, 1);
    let pc = q.enc.term(a.pc, 1);
    q.asserts.push(pc);
    let mut roots = vec![a.pc, offset];
    roots.extend(ctx.assert_facts(&mut q, a.block, &[a.pc, offset], 1));
    ctx.add_load_facts(&mut q, &roots, 1);
    q.add_param_facts(x, ctx.bind, &roots);
    let claims = claims(&mut q);
    q.asserts.push(match claims.as_slice() {
        [one] => format!("(not {one})"),
        all => format!("(not (and {}))", all.join(" ")),
    });
    let Ok(query) = q.to_smt() else { return false };
    let asked = std::time::Instant::now();
    let holds = ctx.refutes_within(&query, (ctx.timeout_ms / ROW_SHARE).max(1));
    crate::trace::line(|| format!("row question of line {:?}: {holds} ({:.0} ms)", a.line, asked.elapsed().as_secs_f64() * 1e3));
    holds
}

/// `claim` of each path's column (a 64-bit term), each under its path's conditions.
fn on_each_path(q: &mut Query, columns: &[(Path, Vec<Monomial>)], claim: impl Fn(&str) -> String) -> Vec<String> {
    let x = q.enc.exprs();
    columns
        .iter()
        .map(|(path, column)| {
            let column = q.sum_of(x, column, 1);
            let holds = claim(&column);
            match q.path_terms(path, 1).as_slice() {
                [] => holds,
                [on] => format!("(=> {on} {holds})"),
                on => format!("(=> (and {}) {holds})", on.join(" ")),
            }
        })
        .collect()
}

/// The rows `offset` may keep to: from its expansion, or where a select hides the row (PyTorch's
/// softmax writes `c ? row : row - shift + blockDim.x` before the column), from each path
/// through its selects, keeping the rows every path has.
fn candidates(x: &Exprs, offset: ExprId) -> Vec<Candidate> {
    let Some((whole, exact)) = expansion(x, offset, &[]) else { return Vec::new() };
    let found = split_rows(x, &whole);
    if !found.is_empty() {
        return found.into_iter().map(|(index, stride, column)| Candidate { index, stride, columns: vec![(Vec::new(), column)], exact }).collect();
    }
    let mut per_path = Vec::new();
    for path in paths_through_selects(x, &whole) {
        let Some((monomials, exact)) = expansion(x, offset, &path) else { return Vec::new() };
        per_path.push((path, split_rows(x, &monomials), exact));
    }
    let Some((_, first, _)) = per_path.first() else { return Vec::new() };
    let exact = per_path.iter().all(|(_, _, e)| *e);
    first
        .iter()
        .filter_map(|(index, stride, _)| {
            let columns = per_path
                .iter()
                .map(|(path, splits, _)| splits.iter().find(|(i, s, _)| i == index && s == stride).map(|(_, _, column)| (path.clone(), column.clone())))
                .collect::<Option<Vec<_>>>()?;
            Some(Candidate { index: *index, stride: stride.clone(), columns, exact })
        })
        .collect()
}

/// Each factor of `monomials` that can be a row index (thread and block indices, launch sizes)
/// and multiplies only uniform values wherever it occurs: `(index, stride, column)`, block
/// indices first, at most [`MAX_CANDIDATES`].
fn split_rows(x: &Exprs, monomials: &[Monomial]) -> Vec<(Factor, Vec<Monomial>, Vec<Monomial>)> {
    let mut indices: Vec<Factor> = Vec::new();
    for f in monomials.iter().flat_map(|m| &m.factors) {
        if is_row_index(x, f.e) && !indices.contains(f) {
            indices.push(*f);
        }
    }
    let mut rows: Vec<(Factor, Vec<Monomial>, Vec<Monomial>)> = indices
        .into_iter()
        .filter_map(|index| {
            let (mut stride, mut column) = (Vec::new(), Vec::new());
            for m in monomials {
                match m.factors.iter().position(|f| *f == index) {
                    Some(at) => {
                        let mut rest = m.factors.clone();
                        rest.remove(at);
                        if !rest.iter().all(|f| is_uniform(x, f.e)) {
                            return None;
                        }
                        stride.push(Monomial { coeff: m.coeff, factors: rest });
                    }
                    None => column.push(m.clone()),
                }
            }
            stride.sort_by(|a, b| (&a.factors, a.coeff).cmp(&(&b.factors, b.coeff)));
            Some((index, stride, column))
        })
        .collect();
    // Rows of blocks first, then rows whose stride is a size (a group of `group_size`
    // elements) before rows of a constant stride (a lane's element).
    rows.sort_by_key(|(index, stride, _)| (!mentions(x, index.e, |s| matches!(s, Special::Ctaid(_))), stride.iter().all(|m| m.factors.is_empty())));
    rows.truncate(MAX_CANDIDATES);
    rows
}

/// A value of thread or block indices (at least one) and launch sizes or parameters, other
/// than a thread index itself or a thread's rank in its block: a row per `threadIdx.y`, or per
/// rank, is what the thread-rank abstraction (see `crate::thread_rank`) already decides, and
/// only while the copies' indices are their own (PyTorch's block reduction: 3 ms refutations
/// became 0.5 to 1.4 s questions with the row shared).
fn is_row_index(x: &Exprs, e: ExprId) -> bool {
    let rank = |dims| crate::thread_rank::linear_index(x, e, dims, 1) == Some(crate::thread_rank::Rank::Thread);
    if matches!(x.node(e), Node::Var { sym: Sym::Special(Special::Tid(_)), .. }) || rank(2) || rank(3) {
        return false;
    }
    let syms = x.symbols(e);
    syms.iter().any(|s| matches!(s, Sym::Special(Special::Tid(_) | Special::Ctaid(_))))
        && syms.iter().all(|s| matches!(s, Sym::Special(Special::Tid(_) | Special::Ctaid(_) | Special::Ntid(_) | Special::Nctaid(_)) | Sym::Param { .. }))
}

/// The same in every thread of the launch: parameters, launch sizes, constants.
fn is_uniform(x: &Exprs, e: ExprId) -> bool {
    x.symbols(e).iter().all(|s| matches!(s, Sym::Special(Special::Ntid(_) | Special::Nctaid(_)) | Sym::Param { .. }))
}

fn mentions(x: &Exprs, e: ExprId, want: impl Fn(Special) -> bool) -> bool {
    x.symbols(e).iter().any(|s| matches!(s, Sym::Special(sp) if want(*sp)))
}

/// An upper bound of a row index (at its own width) on the launches the interface allows, where
/// its arithmetic does not wrap (see [`Exprs::max_within`]); only a guess for the proof to
/// confirm: the row question proves `index <= bound` itself.
fn index_bound(bind: &crate::bind::Binding, x: &Exprs, e: ExprId) -> Option<u128> {
    let (block, grid) = (bind.block.map(|d| d.hi as u128), bind.grid.map(|d| d.hi as u128));
    x.max_within(e, 0, &|s| match s {
        Special::Tid(d) => Some(block[d as usize].saturating_sub(1)),
        Special::Ntid(d) => Some(block[d as usize]),
        Special::Ctaid(d) => Some(grid[d as usize].saturating_sub(1)),
        Special::Nctaid(d) => Some(grid[d as usize]),
        Special::LaneId => Some(31),
        Special::WarpId | Special::Timer => None,
    })
}

/// The rows of each access of one check, proved once and shared by the workers: a worker that
/// asks for an access another worker is proving waits for it.
#[derive(Default)]
pub struct RowsCache {
    cells: Mutex<std::collections::HashMap<usize, Arc<RowsCell>>>,
}

/// The rows of one access, proved once.
type RowsCell = OnceLock<Arc<Vec<Row>>>;

impl RowsCache {
    fn get_or_compute(&self, access: usize, compute: impl FnOnce() -> Vec<Row>) -> Arc<Vec<Row>> {
        let cell = Arc::clone(self.cells.lock().unwrap_or_else(|e| e.into_inner()).entry(access).or_default());
        Arc::clone(cell.get_or_init(|| Arc::new(compute())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row_major::Widen;
    use model::ops::BinOp;

    /// `(sext(ctaid) * 50257) << 2` plus a column, the last 16 bytes a thread writes.
    #[test]
    fn a_block_row_with_a_constant_stride_is_a_candidate_and_the_rest_its_column() {
        let mut x = Exprs::new();
        let ctaid = x.var(Sym::Special(Special::Ctaid(0)), 32);
        let tid = x.var(Sym::Special(Special::Tid(0)), 32);
        let row = x.ext(ctaid, 64, true);
        let classes = x.konst(50257, 64);
        let row = x.bin(BinOp::Mul, row, classes);
        let two = x.konst(2, 64);
        let row = x.bin(BinOp::Shl, row, two);
        let col = x.ext(tid, 64, false);
        let four = x.konst(4, 64);
        let col = x.bin(BinOp::Shl, col, four);
        let offset = x.bin(BinOp::Add, row, col);
        let c = candidates(&x, offset);
        assert_eq!(c.len(), 1, "the thread index multiplies a constant only: it is no row");
        assert_eq!(c[0].index, Factor { e: ctaid, widen: Widen::Signed });
        assert_eq!(c[0].stride, vec![Monomial { coeff: 201028, factors: vec![] }]);
        // A thread index widened unsigned is below its sign bit: one factor, widened signed.
        assert_eq!(c[0].columns, vec![(Vec::new(), vec![Monomial { coeff: 16, factors: vec![Factor { e: tid, widen: Widen::Signed }] }])]);
        assert!(c[0].exact, "both widenings are of atoms");
    }

    /// vLLM's group row: `(sext(tid >> 4) * sext(group_size)) << 1 + 2 * sext(tid & 15 + k * 16)`.
    #[test]
    fn a_group_of_threads_is_a_row_whose_stride_is_a_parameter() {
        let mut x = Exprs::new();
        let tid = x.var(Sym::Special(Special::Tid(0)), 32);
        let gs = x.var(Sym::Param { index: 3, offset: 0 }, 32);
        let k = x.var(Sym::Counter(0), 32);
        let four = x.konst(4, 32);
        let group = x.bin(BinOp::LShr, tid, four);
        let group = x.ext(group, 64, true);
        let gs64 = x.ext(gs, 64, true);
        let start = x.bin(BinOp::Mul, group, gs64);
        let one = x.konst(1, 64);
        let start = x.bin(BinOp::Shl, start, one);
        let fifteen = x.konst(15, 32);
        let lane = x.bin(BinOp::And, tid, fifteen);
        let step = x.bin(BinOp::Shl, k, four);
        let i = x.bin(BinOp::Add, lane, step);
        let i = x.ext(i, 64, true);
        let i = x.bin(BinOp::Shl, i, one);
        let offset = x.bin(BinOp::Add, start, i);
        let c = candidates(&x, offset);
        let shifted = x.bin(BinOp::LShr, tid, four);
        // The lane, `tid & 15`, is a row of two bytes too, tried after the group's.
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].index, Factor { e: shifted, widen: Widen::Signed });
        assert_eq!(c[0].stride, vec![Monomial { coeff: 2, factors: vec![Factor { e: gs, widen: Widen::Signed }] }]);
        assert!(!c[0].exact, "the column's widening was distributed over `lane + k * 16`");
        assert_eq!(x.max_within(shifted, 0, &|s| matches!(s, Special::Tid(0)).then_some(1023)), Some(63));
    }

    /// A row index multiplied by a loop counter steps with the loop: no row.
    #[test]
    fn an_index_times_a_counter_is_no_row() {
        let mut x = Exprs::new();
        let ctaid = x.var(Sym::Special(Special::Ctaid(0)), 64);
        let k = x.var(Sym::Counter(0), 64);
        let offset = x.bin(BinOp::Mul, ctaid, k);
        assert!(candidates(&x, offset).is_empty());
    }
}
