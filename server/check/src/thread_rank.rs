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

/// Whether `e` is a thread's linear index in its block: `tid.x + ntid.x * (tid.y + ntid.y *
/// tid.z)` in any arrangement of sums and products (as a polynomial over the launch symbols);
/// or, when `one_deep` (the block's z size is 1), `tid.x + ntid.x * tid.y`.
pub fn is_linear_tid(x: &Exprs, e: ExprId, one_deep: bool) -> bool {
    if x.bits(e) != 32 {
        return false;
    }
    let Some(mut monomials) = expand(x, e, 0) else { return false };
    for m in &mut monomials {
        m.sort();
    }
    monomials.sort();
    let specials = |list: &[&[Special]]| -> Vec<Vec<Special>> {
        let mut v: Vec<Vec<Special>> = list
            .iter()
            .map(|m| {
                let mut m = m.to_vec();
                m.sort();
                m
            })
            .collect();
        v.sort();
        v
    };
    use Special::{Ntid, Tid};
    monomials == specials(&[&[Tid(0)], &[Ntid(0), Tid(1)], &[Ntid(0), Ntid(1), Tid(2)]])
        || (one_deep && monomials == specials(&[&[Tid(0)], &[Ntid(0), Tid(1)]]))
}

/// `e` as a sum of products of launch specials, each with coefficient 1; `None` for anything
/// else (a constant, another symbol, another operation, or more than a few terms).
fn expand(x: &Exprs, e: ExprId, depth: u32) -> Option<Vec<Vec<Special>>> {
    if depth > 8 {
        return None;
    }
    match x.node(e) {
        Node::Var { sym: Sym::Special(s @ (Special::Tid(_) | Special::Ntid(_))), bits: 32 } => Some(vec![vec![*s]]),
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

/// The name of thread `t`'s rank in the abstraction.
fn rank(t: u8) -> String {
    format!("rank_{t}")
}

const BLOCK_THREADS: &str = "block_threads";

/// `script` (a query's text) with the definitions named in `ranks` (each `(name, thread)`, a
/// 32-bit linear index of that thread) and the strings `spelled` (each thread's linear index
/// as the query's own assertions spell it) replaced by the thread's free rank, and `threads`
/// (the block's thread count as spelled) by a free count; `None` when nothing is replaced.
pub fn abstract_script(script: &str, ranks: &[(String, u8)], spelled: &[(String, u8)], threads: &str) -> Option<String> {
    let mut out = String::with_capacity(script.len());
    let mut used = [false; 3];
    let mut declared = false;
    let declarations = |used: &[bool; 3]| {
        let mut d = format!("(declare-fun {BLOCK_THREADS} () (_ BitVec 32))\n");
        for t in 1..=2u8 {
            if used[t as usize] {
                d.push_str(&format!("(declare-fun {} () (_ BitVec 32))\n(assert (bvult {} {BLOCK_THREADS}))\n", rank(t), rank(t)));
            }
        }
        d
    };
    // Which threads' ranks appear at all decides what is declared, so look first.
    for (name, t) in ranks {
        if script.contains(&format!("(define-fun {name} () (_ BitVec 32) ")) {
            used[*t as usize] = true;
        }
    }
    for (text, t) in spelled {
        if script.contains(text.as_str()) {
            used[*t as usize] = true;
        }
    }
    if !used.iter().any(|&u| u) {
        return None;
    }
    for line in script.lines() {
        // Declarations come first in a script; the abstraction's go after the last of them.
        if !declared && !(line.starts_with(';') || line.starts_with("(set-") || line.starts_with("(declare-")) {
            out.push_str(&declarations(&used));
            declared = true;
        }
        let defined = ranks.iter().find(|(name, _)| line.starts_with(&format!("(define-fun {name} () (_ BitVec 32) ")));
        let mut line = match defined {
            Some((name, t)) => format!("(define-fun {name} () (_ BitVec 32) {})", rank(*t)),
            None => line.to_string(),
        };
        for (text, t) in spelled {
            if line.contains(text.as_str()) {
                line = line.replace(text.as_str(), &rank(*t));
            }
        }
        if line.contains(threads) {
            line = line.replace(threads, BLOCK_THREADS);
        }
        out.push_str(&line);
        out.push('\n');
    }
    Some(out)
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
        assert!(is_linear_tid(&x, rank, false));
        // The two-dimensional index is one only when the block is one deep.
        let d = x.bin(BinOp::Mul, ty, nx);
        let flat = x.bin(BinOp::Add, tx, d);
        assert!(!is_linear_tid(&x, flat, false));
        assert!(is_linear_tid(&x, flat, true));
        // A global index is not.
        let cx = special(&mut x, Special::Ctaid(0));
        let e = x.bin(BinOp::Mul, cx, nx);
        let global = x.bin(BinOp::Add, e, tx);
        assert!(!is_linear_tid(&x, global, true));
    }

    #[test]
    fn the_abstraction_replaces_definitions_and_spellings_and_declares_the_ranks() {
        let script = "(set-logic QF_BV)\n(declare-const tid_x_1 (_ BitVec 32))\n(define-fun n9_1 () (_ BitVec 32) (bvadd n8_1 tid_x_1))\n\
                      (assert (bvult LIN1 (bvmul ntid_x ntid_y)))\n(check-sat)\n";
        let out = abstract_script(script, &[("n9_1".into(), 1)], &[("LIN1".into(), 1)], "(bvmul ntid_x ntid_y)").unwrap();
        assert!(out.contains("(define-fun n9_1 () (_ BitVec 32) rank_1)"), "{out}");
        assert!(out.contains("(assert (bvult rank_1 block_threads))\n(define-fun"), "{out}");
        assert!(out.contains("(assert (bvult rank_1 block_threads))\n(check-sat)"), "{out}");
        assert!(!out.contains("rank_2"), "{out}");
        assert_eq!(abstract_script(script, &[], &[], "(bvmul ntid_x ntid_y)"), None);
    }
}
