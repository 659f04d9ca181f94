//! Row strides among a kernel's open scalars, and the ordinary values a scalar re-check gives
//! them (see [`crate::scalar_confirm`]).
//!
//! A re-check "at ordinary values" sets every undeclared integer to one value, 96. That is an
//! ordinary size, but not an ordinary stride: serving kernels take the strides of their rows
//! as parameters (vLLM's `query_stride` and `head_stride`, ggml's `s1`/`s2`/`s3`), and with a
//! token's stride equal to one head's, the heads of token 0 overlap token 1: a race that no
//! caller's tensor layout allows, which the re-check then reported as an error. So a parameter
//! that only ever multiplies an index into a buffer the kernel writes, and that no condition
//! compares (a row length is compared with the column index, a stride is not), is a *row
//! stride*; the re-check gives the row strides distinct powers of two far apart, inner ones
//! (multiplying thread-dependent indices) below outer ones (multiplying block indices), so
//! that rows of ordinary sizes never overlap. A missing barrier or a wrong index does not need
//! overlapping rows, and still shows.

use model::expr::{ExprId, Node, Sym};
use model::ops::{BinOp, Special};
use model::symbolic::{AccessKind, Lifted};
use std::collections::{BTreeMap, BTreeSet};

/// A parameter or a field of an aggregate parameter (`(index, byte offset)`).
pub type ParamSlot = (u32, u32);

/// The first inner stride (in elements or bytes, whichever the parameter counts): above any
/// ordinary row of 96 elements of up to 8 bytes.
const FIRST_INNER_EXP: u32 = 10;
/// Inner strides are this many powers of two apart (an inner index runs up to a few hundred).
const INNER_STEP: u32 = 8;
/// The first outer stride is this many powers of two above the last inner one.
const OUTER_GAP: u32 = 10;
/// Outer strides are this many powers of two apart: they multiply block indices, which the
/// re-check's grid of 2 blocks a side keeps below 4.
const OUTER_STEP: u32 = 2;
/// No stride above 2^22: the replay allocates buffers as large as the offsets it reaches.
const MAX_EXP: u32 = 22;

/// The ordinary value of each open slot that is a row stride (see the module comment); a slot
/// not in the map keeps the re-check's ordinary size.
pub fn ordinary_strides(lifted: &Lifted, open: &BTreeSet<ParamSlot>) -> BTreeMap<ParamSlot, i128> {
    let x = &lifted.exprs;
    let mut compared = compared_params(lifted);
    compared.extend(divisor_params(lifted));
    let written: BTreeSet<_> = lifted.accesses.iter().filter(|a| a.kind != AccessKind::Read).filter_map(|a| a.base).collect();
    let mut outer: BTreeMap<ParamSlot, bool> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let mut todo: Vec<ExprId> = lifted.accesses.iter().filter(|a| a.base.is_some_and(|b| written.contains(&b))).filter_map(|a| a.offset).collect();
    while let Some(e) = todo.pop() {
        if !seen.insert(e) {
            continue;
        }
        if let Node::Bin { op: BinOp::Mul, a, b, .. } = *x.node(e) {
            for (factor, index) in [(a, b), (b, a)] {
                let syms = x.symbols(factor);
                let slots: Vec<ParamSlot> =
                    syms.iter().filter_map(|s| if let Sym::Param { index, offset } = *s { Some((index, offset)) } else { None }).collect();
                if syms.is_empty() || slots.len() != syms.len() {
                    continue;
                }
                let by_block = x.symbols(index).iter().any(|s| matches!(s, Sym::Special(Special::Ctaid(_))));
                for slot in slots.into_iter().filter(|s| open.contains(s) && !compared.contains(s)) {
                    *outer.entry(slot).or_default() |= by_block;
                }
            }
        }
        todo.extend(x.children(e));
    }
    // A stride too narrow for the largest value keeps the ordinary size (2^22 in a 16-bit field
    // would be passed as 0: rows on top of each other).
    let wide_enough = |slot: &ParamSlot| x.find_var(Sym::Param { index: slot.0, offset: slot.1 }).is_some_and(|(_, bits)| MAX_EXP + 1 < bits);
    let mut values = BTreeMap::new();
    let mut exp = FIRST_INNER_EXP;
    let inner: Vec<ParamSlot> = outer.iter().filter(|(s, &o)| !o && wide_enough(s)).map(|(&s, _)| s).collect();
    for slot in &inner {
        if exp > MAX_EXP {
            break;
        }
        values.insert(*slot, 1i128 << exp);
        exp += INNER_STEP;
    }
    exp = if inner.is_empty() { FIRST_INNER_EXP } else { exp - INNER_STEP + OUTER_GAP };
    for (&slot, _) in outer.iter().filter(|(s, &o)| o && wide_enough(s)) {
        if exp > MAX_EXP {
            break;
        }
        values.insert(slot, 1i128 << exp);
        exp += OUTER_STEP;
    }
    values
}

/// Parameters something is divided by (or taken modulo) in an address or a condition: a size
/// (vLLM's KV-cache write splits a head into `head_size / x` packs of `x` elements and also
/// multiplies by `x`), not a stride; as a stride (2^10) it made `head_size / x` zero and put
/// every head on one address, a race of that setting alone.
fn divisor_params(lifted: &Lifted) -> BTreeSet<ParamSlot> {
    let x = &lifted.exprs;
    let mut params = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut todo: Vec<ExprId> = lifted.accesses.iter().flat_map(|a| a.offset.into_iter().chain([a.addr, a.pc])).collect();
    while let Some(e) = todo.pop() {
        if !seen.insert(e) {
            continue;
        }
        if let Node::Bin { op: BinOp::DivU | BinOp::DivS | BinOp::RemU | BinOp::RemS, b, .. } = *x.node(e) {
            for s in x.symbols(b) {
                if let Sym::Param { index, offset } = s {
                    params.insert((index, offset));
                }
            }
        }
        todo.extend(x.children(e));
    }
    params
}

/// Parameters some condition mentions: a path condition, a barrier's or warp collective's
/// condition, a loop's exit fact. A row length is compared with the index it bounds.
fn compared_params(lifted: &Lifted) -> BTreeSet<ParamSlot> {
    let conditions = lifted
        .accesses
        .iter()
        .map(|a| a.pc)
        .chain(lifted.barriers.iter().map(|b| b.pc))
        .chain(lifted.warp_ops.iter().map(|w| w.pc))
        .chain(lifted.block_pc.iter().flatten().copied())
        .chain(lifted.exit_facts.iter().map(|&(_, f)| f))
        .chain(lifted.loop_entry_pc.iter().flatten().copied());
    let mut params = BTreeSet::new();
    for e in conditions {
        for s in lifted.exprs.symbols(e) {
            if let Sym::Param { index, offset } = s {
                params.insert((index, offset));
            }
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    /// vLLM's KV-cache write (`tests/real`): `x` multiplies the pack index and the slot offset,
    /// but also divides the head size (`head_size / x` packs per head); a size, not a stride.
    #[test]
    fn a_parameter_something_is_divided_by_is_no_row_stride() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/real/vllm_reshape_and_cache.ptx")).unwrap();
        let parsed = ptx::parse(&text);
        let (_, kernel) = model::lower_module(&parsed.module).into_iter().next().unwrap();
        let lifted = model::symbolic::lift(&kernel.unwrap());
        let pointers = lifted.pointer_params();
        // key, value, key_cache, value_cache, slot_mapping, then key_stride, value_stride,
        // num_heads, head_size, block_size, x.
        let open: BTreeSet<ParamSlot> = (0..11).filter(|i| !pointers.contains(i)).map(|i| (i, 0)).collect();
        assert_eq!(open.len(), 6);
        let strides = ordinary_strides(&lifted, &open);
        assert!(!strides.contains_key(&(10, 0)), "x divides the head size: {strides:?}");
        assert!(divisor_params(&lifted).contains(&(10, 0)));
    }
}
