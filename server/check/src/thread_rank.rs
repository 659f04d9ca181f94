//! The thread-rank abstraction: a query with each thread's linear index in its block, and the
//! block's thread count, as free values.
//!
//! Cooperative groups index by `thread_rank()`, which clang lowers to
//! `(ntid.y * tid.z + tid.y) * ntid.x + tid.x`; warp collectives ask which lane of a warp is
//! missing through the same index. With the block's shape open, those are products of launch
//! sizes, and the solver spends seconds proving what follows from `rank < threads` alone (the
//! CUDA samples' `reduce6`: each of its five warp shuffles took 2.3 s to prove convergent;
//! with the ranks as free values below the thread count, 40 ms). The abstraction replaces each
//! such index by `rank_1`/`rank_2`, the thread count by `block_threads`, and keeps only
//! `rank_t < block_threads`: a weaker query, so `unsat` here is `unsat` for the query itself.

use model::expr::{ExprId, Exprs, Node, Sym};
use model::ops::{BinOp, Special};

/// Which linear index an expression is (see [`linear_index`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    /// A thread's index in its block, `thread_rank()`.
    Thread,
    /// A block's index in the grid.
    Block,
    /// The number of threads in a block, `ntid.x * ntid.y * ntid.z` (the same for every
    /// thread: its encodings are for copy 0).
    BlockThreads,
}

/// Whether `e` is a linear index over the first `dims` dimensions (2 or 3; the others have
/// size 1): a thread's index in its block, `tid.x + ntid.x * (tid.y + ntid.y * tid.z)`, or a
/// block's in the grid, `ctaid.x + nctaid.x * (ctaid.y + nctaid.y * ctaid.z)`, in any
/// arrangement of sums and products (compared as polynomials over the launch symbols); or the
/// block's thread count, the product of its `dims` sizes.
pub fn linear_index(x: &Exprs, e: ExprId, block_dims: usize, grid_dims: usize) -> Option<Rank> {
    if x.bits(e) != 32 || (block_dims < 2 && grid_dims < 2) {
        return None;
    }
    let mut monomials = expand(x, e, 0)?;
    for m in &mut monomials {
        m.sort();
    }
    monomials.sort();
    let form = |index: fn(u8) -> Special, size: fn(u8) -> Special, dims: usize| -> Vec<Vec<Special>> {
        let mut v: Vec<Vec<Special>> = (0..dims as u8)
            .map(|d| {
                let mut m: Vec<Special> = (0..d).map(size).chain([index(d)]).collect();
                m.sort();
                m
            })
            .collect();
        v.sort();
        v
    };
    let mut all_sizes: Vec<Special> = (0..block_dims as u8).map(Special::Ntid).collect();
    all_sizes.sort();
    if block_dims >= 2 && monomials == [all_sizes] {
        Some(Rank::BlockThreads)
    } else if block_dims >= 2 && monomials == form(Special::Tid, Special::Ntid, block_dims) {
        Some(Rank::Thread)
    } else if grid_dims >= 2 && monomials == form(Special::Ctaid, Special::Nctaid, grid_dims) {
        Some(Rank::Block)
    } else {
        None
    }
}

/// `e` as a sum of products of launch specials, each with coefficient 1; `None` for anything
/// else (a constant, another symbol, another operation, or more than a few terms).
fn expand(x: &Exprs, e: ExprId, depth: u32) -> Option<Vec<Vec<Special>>> {
    if depth > 8 {
        return None;
    }
    match x.node(e) {
        Node::Var { sym: Sym::Special(s @ (Special::Tid(_) | Special::Ntid(_) | Special::Ctaid(_) | Special::Nctaid(_))), bits: 32 } => Some(vec![vec![*s]]),
        Node::Bin { op: BinOp::Add, a, b, bits: 32 } => {
            let mut sum = expand(x, *a, depth + 1)?;
            sum.extend(expand(x, *b, depth + 1)?);
            (sum.len() <= 3).then_some(sum)
        }
        Node::Bin { op: BinOp::Mul, a, b, bits: 32 } => {
            let (l, r) = (expand(x, *a, depth + 1)?, expand(x, *b, depth + 1)?);
            let product: Vec<Vec<Special>> = l.iter().flat_map(|m| r.iter().map(move |n| m.iter().chain(n).copied().collect())).collect();
            (product.len() <= 3).then_some(product)
        }
        _ => None,
    }
}

/// The name of thread `t`'s rank of kind `kind` in the abstraction.
fn rank(kind: Rank, t: u8) -> String {
    match kind {
        Rank::Thread => format!("rank_{t}"),
        Rank::Block => format!("block_rank_{t}"),
        Rank::BlockThreads => BLOCK_THREADS.to_string(),
    }
}

const BLOCK_THREADS: &str = "block_threads";

/// The declarations of the ranks in use (`used[kind][t]`) and of the thread count.
fn declarations(used: &[[bool; 3]; 3]) -> String {
    let mut d = format!("(declare-fun {BLOCK_THREADS} () (_ BitVec 32))\n");
    for kind in [Rank::Thread, Rank::Block] {
        for t in 1..=2u8 {
            if used[kind as usize][t as usize] {
                d.push_str(&format!("(declare-fun {} () (_ BitVec 32))\n", rank(kind, t)));
            }
        }
    }
    d
}

/// What the abstraction knows of the ranks in use: a thread's rank is below the block's thread
/// count; two ranks of one kind are equal exactly when the indices they linearise are (the
/// linear index is one-to-one below the sizes: always for threads, at most 1024 of them; for
/// blocks, as long as the grid has at most 2^32 blocks, which the caller must then
/// assume, see [`Abstraction::relates_blocks`]).
fn facts(used: &[[bool; 3]; 3]) -> String {
    let mut f = String::new();
    for t in 1..=2u8 {
        if used[Rank::Thread as usize][t as usize] {
            f.push_str(&format!("(assert (bvult {} {BLOCK_THREADS}))\n", rank(Rank::Thread, t)));
        }
    }
    for (kind, index) in [(Rank::Thread, "tid"), (Rank::Block, "ctaid")] {
        if used[kind as usize][1] && used[kind as usize][2] {
            let same = ["x", "y", "z"].map(|d| format!("(= {index}_{d}_1 {index}_{d}_2)")).join(" ");
            f.push_str(&format!("(assert (= (= {} {}) (and {same})))\n", rank(kind, 1), rank(kind, 2)));
        }
    }
    f
}

/// `script` (a query's text) with the definitions named in `ranks` (each `(name, kind,
/// thread)`: a 32-bit linear index, see [`linear_index`]) and the strings `spelled` (each
/// thread's rank in its block as the query's own assertions spell it) replaced by free ranks,
/// and `threads` (the block's thread count as spelled) by a free count, with [`facts`] about
/// them (before its `(check-sat)`, or at its end); `None` when nothing is replaced.
pub fn abstract_script(script: &str, ranks: &[(String, Rank, u8)], spelled: &[(String, u8)], threads: &str) -> Option<Abstraction> {
    let mut used = [[false; 3]; 3];
    // Which ranks appear at all decides what is declared, so look first.
    for (name, kind, t) in ranks {
        if script.contains(&format!("(define-fun {name} () (_ BitVec 32) ")) {
            used[*kind as usize][*t as usize] = true;
        }
    }
    for (text, t) in spelled {
        if script.contains(text.as_str()) {
            used[Rank::Thread as usize][*t as usize] = true;
        }
    }
    if !used.iter().flatten().any(|&u| u) {
        return None;
    }
    let mut out = String::with_capacity(script.len());
    let (mut declared, mut asserted) = (false, false);
    for line in script.lines() {
        // The ranks are declared before the script's first definition (which may use them);
        // what is known of them is asserted at its end, where every name they relate to is.
        if !(declared || line.starts_with(';') || line.starts_with("(set-")) {
            out.push_str(&declarations(&used));
            declared = true;
        }
        if line.starts_with("(check-sat") {
            out.push_str(&facts(&used));
            asserted = true;
        }
        let defined = ranks.iter().find(|(name, _, _)| line.starts_with(&format!("(define-fun {name} () (_ BitVec 32) ")));
        let mut line = match defined {
            Some((name, kind, t)) => format!("(define-fun {name} () (_ BitVec 32) {})", rank(*kind, *t)),
            None => line.to_string(),
        };
        for (text, t) in spelled {
            if line.contains(text.as_str()) {
                line = line.replace(text.as_str(), &rank(Rank::Thread, *t));
            }
        }
        if line.contains(threads) {
            line = line.replace(threads, BLOCK_THREADS);
        }
        out.push_str(&line);
        out.push('\n');
    }
    if !asserted {
        out.push_str(&facts(&used));
    }
    let relates_blocks = used[Rank::Block as usize][1] && used[Rank::Block as usize][2];
    Some(Abstraction { script: out, relates_blocks })
}

/// A query's text with its ranks as free values (see [`abstract_script`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Abstraction {
    pub script: String,
    /// Whether two blocks' ranks are equal only for the same block: true when the grid has
    /// at most 2^32 blocks, else an assumption that its linear index does not wrap (like the
    /// row-major indices' no-overflow assumption, which a refutation relying on it reports).
    pub relates_blocks: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::expr::Exprs;

    fn special(x: &mut Exprs, s: Special) -> ExprId {
        x.var(Sym::Special(s), 32)
    }

    #[test]
    fn thread_rank_as_clang_lowers_it_is_the_linear_index() {
        let mut x = Exprs::new();
        let (tx, ty, tz) = (special(&mut x, Special::Tid(0)), special(&mut x, Special::Tid(1)), special(&mut x, Special::Tid(2)));
        let (nx, ny) = (special(&mut x, Special::Ntid(0)), special(&mut x, Special::Ntid(1)));
        // (ntid.y * tid.z + tid.y) * ntid.x + tid.x
        let a = x.bin(BinOp::Mul, ny, tz);
        let b = x.bin(BinOp::Add, a, ty);
        let c = x.bin(BinOp::Mul, b, nx);
        let rank = x.bin(BinOp::Add, c, tx);
        assert_eq!(linear_index(&x, rank, 3, 1), Some(Rank::Thread));
        // In a block one deep the index has no z part; a three-term index is not one there.
        let d = x.bin(BinOp::Mul, ty, nx);
        let flat = x.bin(BinOp::Add, tx, d);
        assert_eq!(linear_index(&x, flat, 3, 1), None);
        assert_eq!(linear_index(&x, flat, 2, 1), Some(Rank::Thread));
        assert_eq!(linear_index(&x, rank, 2, 1), None);
        // A block's index in a two-dimensional grid.
        let (cx, cy, ncx) = (special(&mut x, Special::Ctaid(0)), special(&mut x, Special::Ctaid(1)), special(&mut x, Special::Nctaid(0)));
        let e = x.bin(BinOp::Mul, cy, ncx);
        let block = x.bin(BinOp::Add, e, cx);
        assert_eq!(linear_index(&x, block, 1, 2), Some(Rank::Block));
        assert_eq!(linear_index(&x, block, 3, 1), None);
        // The block's thread count, three- or two-dimensional.
        let nz = special(&mut x, Special::Ntid(2));
        let g = x.bin(BinOp::Mul, nx, ny);
        let area = x.bin(BinOp::Mul, g, nz);
        assert_eq!(linear_index(&x, area, 3, 1), Some(Rank::BlockThreads));
        assert_eq!(linear_index(&x, g, 2, 1), Some(Rank::BlockThreads));
        assert_eq!(linear_index(&x, g, 3, 1), None);
        // A global index is neither.
        let f = x.bin(BinOp::Mul, cx, nx);
        let global = x.bin(BinOp::Add, f, tx);
        assert_eq!(linear_index(&x, global, 3, 3), None);
    }

    #[test]
    fn the_abstraction_replaces_definitions_and_spellings_and_states_what_ranks_are() {
        let script = "(set-logic QF_BV)\n(declare-const tid_x_1 (_ BitVec 32))\n(define-fun n9_1 () (_ BitVec 32) (bvadd n8_1 tid_x_1))\n\
                      (define-fun n7_2 () (_ BitVec 32) (bvadd n6_2 ctaid_x_2))\n(define-fun n7_1 () (_ BitVec 32) (bvadd n6_1 ctaid_x_1))\n\
                      (assert (bvult LIN1 (bvmul ntid_x ntid_y)))\n";
        let ranks = [("n9_1".to_string(), Rank::Thread, 1), ("n7_1".to_string(), Rank::Block, 1), ("n7_2".to_string(), Rank::Block, 2)];
        let abstraction = abstract_script(script, &ranks, &[("LIN1".into(), 1)], "(bvmul ntid_x ntid_y)").unwrap();
        assert!(abstraction.relates_blocks);
        let out = abstraction.script;
        assert!(out.contains("(define-fun n9_1 () (_ BitVec 32) rank_1)"), "{out}");
        assert!(out.contains("(define-fun n7_2 () (_ BitVec 32) block_rank_2)"), "{out}");
        assert!(out.starts_with("(set-logic QF_BV)\n(declare-fun block_threads () (_ BitVec 32))\n(declare-fun rank_1 "), "{out}");
        assert!(out.contains("(assert (bvult rank_1 block_threads))\n"), "{out}");
        assert!(
            out.contains("(assert (= (= block_rank_1 block_rank_2) (and (= ctaid_x_1 ctaid_x_2) (= ctaid_y_1 ctaid_y_2) (= ctaid_z_1 ctaid_z_2))))\n"),
            "{out}"
        );
        // The facts come last, after every name they mention is defined.
        let facts = "(assert (bvult rank_1 block_threads))\n(assert (= (= block_rank_1 block_rank_2) (and (= ctaid_x_1 ctaid_x_2) (= ctaid_y_1 ctaid_y_2) (= ctaid_z_1 ctaid_z_2))))\n";
        assert!(out.ends_with(&format!("(assert (bvult rank_1 block_threads))\n{facts}")), "{out}");
        // Before the script's own `(check-sat)` when it has one.
        let checked = abstract_script(&format!("{script}(check-sat)\n"), &ranks, &[], "(bvmul ntid_x ntid_y)").unwrap().script;
        assert!(checked.ends_with(&format!("{facts}(check-sat)\n")), "{checked}");
        // Only thread 1's rank in its block appears: nothing relates it to another's.
        assert!(!out.contains("(declare-fun rank_2") && !out.contains("(= (= rank_1"), "{out}");
        assert_eq!(abstract_script(script, &[], &[], "(bvmul ntid_x ntid_y)"), None);
    }
}
