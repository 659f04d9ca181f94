//! Whether a kernel depends on its block's shape or only on its thread count.
//!
//! Cooperative-groups code reads the block through `thread_block::thread_rank()`, which clang
//! lowers to the linear index `tid.x + ntid.x * (tid.y + ntid.y * tid.z)`, and
//! `thread_block::size()`, the product `ntid.x * ntid.y * ntid.z`. A kernel that reads its
//! thread indices and block dimensions only through those two values behaves the same in a
//! block of shape `(X, Y, Z)` as in one of shape `(X*Y*Z, 1, 1)`: thread `(x, y, z)` of the
//! first is thread `x + X*(y + Y*z)` of the second, and warps and lanes are numbered by that
//! same linear index on the hardware. So such a kernel can be checked with `block.y = block.z
//! = 1` without losing a launch, which keeps the launch sizes out of its products (the
//! solver's hardest terms).
//!
//! The test walks every expression the lifted model keeps (addresses, path conditions, loop
//! summaries, warp masks) and every value it loses track of ([`Lifted::opaque_uses`]), and
//! asks that each path to a thread index or block dimension pass through a node that computes
//! the linear index or the thread count. Those nodes are recognised by their polynomial over
//! the six registers, computed modulo 2^32 (`mul.lo`/`mad.lo`/`add` arithmetic wraps the same
//! way in any arrangement), so the order clang multiplies and adds in does not matter.

use crate::expr::{ExprId, Exprs, Node, Sym};
use crate::ops::{BinOp, Special};
use crate::symbolic::Lifted;
use std::collections::BTreeMap;

/// A monomial: the sorted registers it multiplies (0-2 `tid`, 3-5 `ntid`).
type Monomial = Vec<u8>;
/// A polynomial modulo 2^32.
type Poly = BTreeMap<Monomial, u32>;

/// At most this many monomials in a polynomial (anything larger is neither value).
const MAX_TERMS: usize = 8;

/// Whether the kernel reads its thread indices and block dimensions only as the linear thread
/// index and the block's thread count.
pub fn reads_only_linear_thread_index(l: &Lifted) -> bool {
    dimensions_read_apart(l) == [false; 3]
}

/// For each dimension (x, y, z), whether the kernel reads its thread index or block size other
/// than through the linear thread index and the thread count. A kernel that indexes by
/// `threadIdx.x` and reads y and z only inside `thread_rank()` (the CUDA samples' reductions:
/// `sdata[threadIdx.x]`, then `cta.thread_rank() < 32`) is written for one-dimensional blocks:
/// in a block of (32, 1, 32) its threads (11, 0, 2) and (11, 0, 6) share a slot, but no one
/// launches it so, and the blocks it is compared with are one-dimensional.
pub fn dimensions_read_apart(l: &Lifted) -> [bool; 3] {
    let x = &l.exprs;
    let mut roots: Vec<ExprId> = Vec::new();
    for a in &l.accesses {
        roots.extend([a.addr, a.pc]);
        roots.extend(a.offset);
    }
    roots.extend(l.barriers.iter().map(|b| b.pc));
    roots.extend(l.warp_ops.iter().flat_map(|w| [w.mask, w.pc]));
    roots.extend(l.unsupported.iter().map(|u| u.pc));
    for s in l.loops.iter().flatten() {
        roots.push(s.guard);
        roots.extend(s.ivs.iter().map(|(_, _, v)| *v));
    }
    roots.extend(l.block_pc.iter().flatten());
    roots.extend(l.exit_facts.iter().map(|(_, f)| *f));
    roots.extend(l.loop_entry_pc.iter().flatten());
    roots.extend(&l.opaque_uses);

    let mut apart = [false; 3];
    let mut seen = vec![false; x.len()];
    let mut stack = roots;
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e as usize], true) {
            continue;
        }
        if let Node::Var { sym: Sym::Special(s), .. } = x.node(e) {
            if let Some(r) = register(*s) {
                apart[(r % 3) as usize] = true;
            }
        }
        if !is_linear_index_or_count(x, e) {
            stack.extend(x.children(e));
        }
    }
    apart
}

/// Whether `e` computes the linear thread index or the block's thread count.
fn is_linear_index_or_count(x: &Exprs, e: ExprId) -> bool {
    const TID: [u8; 3] = [0, 1, 2];
    const NTID: [u8; 3] = [3, 4, 5];
    let Some(p) = poly(x, e) else { return false };
    let index: Poly = [(vec![TID[0]], 1), (vec![TID[1], NTID[0]], 1), (vec![TID[2], NTID[0], NTID[1]], 1)].into_iter().collect();
    let count: Poly = [(NTID.to_vec(), 1)].into_iter().collect();
    p == index || p == count
}

/// The register number of a thread index or block dimension.
fn register(s: Special) -> Option<u8> {
    match s {
        Special::Tid(d) => Some(d),
        Special::Ntid(d) => Some(3 + d),
        _ => None,
    }
}

/// `e` as a polynomial over the six registers, for 32-bit sums and products of them and
/// constants; `None` for anything else.
fn poly(x: &Exprs, e: ExprId) -> Option<Poly> {
    if x.bits(e) != 32 {
        return None;
    }
    if let Some(c) = x.as_const(e) {
        return Some(if c == 0 { Poly::new() } else { [(Vec::new(), c as u32)].into_iter().collect() });
    }
    let out = match *x.node(e) {
        Node::Var { sym: Sym::Special(s), .. } => [(vec![register(s)?], 1u32)].into_iter().collect(),
        Node::Bin { op: BinOp::Add, a, b, .. } => add(poly(x, a)?, &poly(x, b)?),
        Node::Bin { op: BinOp::Mul, a, b, .. } => mul(&poly(x, a)?, &poly(x, b)?)?,
        Node::Bin { op: BinOp::Shl, a, b, .. } => {
            let n = x.as_const(b).filter(|&n| n < 32)?;
            mul(&poly(x, a)?, &[(Vec::new(), 1u32 << n)].into_iter().collect())?
        }
        _ => return None,
    };
    (out.len() <= MAX_TERMS).then_some(out)
}

fn add(mut p: Poly, q: &Poly) -> Poly {
    for (m, c) in q {
        let sum = p.get(m).copied().unwrap_or(0).wrapping_add(*c);
        if sum == 0 {
            p.remove(m);
        } else {
            p.insert(m.clone(), sum);
        }
    }
    p
}

fn mul(p: &Poly, q: &Poly) -> Option<Poly> {
    if p.len() * q.len() > MAX_TERMS * MAX_TERMS {
        return None;
    }
    let mut out = Poly::new();
    for (m1, c1) in p {
        for (m2, c2) in q {
            let mut m: Monomial = m1.iter().chain(m2).copied().collect();
            m.sort_unstable();
            out = add(out, &[(m, c1.wrapping_mul(*c2))].into_iter().collect());
        }
    }
    Some(out)
}
