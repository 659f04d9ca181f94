//! Barrier divergence: a `bar.sync` that one thread of a block reaches and another, in the same
//! iteration of every enclosing loop, does not; and warp collectives (`shfl.sync`, `vote.sync`,
//! `bar.warp.sync`) whose member mask names a lane that does not arrive.

use crate::ctx::{Answer, Ctx, Undecided};
use crate::encode::bv;
use crate::query::{linear_tid, same_block, Query};
use crate::witness::{ThreadSpec, Witness};
use model::cfg::{BlockId, LoopId};
use model::expr::{ExprId, Sym};
use model::symbolic::COUNTER_BITS;

pub struct DivergenceWitness {
    /// The barrier or collective: (block, instruction index).
    pub site: (BlockId, usize),
    pub warp: bool,
    /// Thread 0 reaches the site; thread 1 does not (for a warp collective, thread 1 is the
    /// lane `witness.missing_lane` of thread 0's warp, when that lane exists).
    pub witness: Witness,
}

pub enum SyncOutcome {
    Witness(DivergenceWitness),
    Unknown { site: (BlockId, usize), warp: bool, why: Undecided },
}

pub fn find(ctx: &mut Ctx) -> Vec<SyncOutcome> {
    let mut out = Vec::new();
    let sites: Vec<(BlockId, usize, ExprId, Vec<LoopId>)> = ctx.l.barriers.iter().map(|b| (b.block, b.inst, b.pc, b.loops.clone())).collect();
    for (block, inst, pc, loops) in sites {
        if let Some(launch) = &ctx.launch {
            if let Some(decided) = crate::enumerate::barrier(ctx, launch, block, &loops, pc) {
                ctx.enumerated += 1;
                if let crate::enumerate::Decided::Witness(witness) = decided {
                    out.push(SyncOutcome::Witness(DivergenceWitness { site: (block, inst), warp: false, witness }));
                }
                continue;
            }
        }
        let mut q = Query::new(&ctx.l.exprs, ctx.bind, 2);
        let p1 = q.enc.term(pc, 1);
        let p2 = q.enc.term(pc, 2);
        q.asserts.push(same_block());
        q.asserts.push(p1);
        q.asserts.push(format!("(not {p2})"));
        same_iterations(&mut q, &loops);
        let mut roots = vec![pc];
        roots.extend(ctx.assert_facts(&mut q, block, &[pc], 1));
        roots.extend(ctx.assert_facts(&mut q, block, &[pc], 2));
        ctx.add_load_facts(&mut q, &roots, 2);
        q.add_param_facts(&ctx.l.exprs, ctx.bind, &roots);
        match ctx.run_witness(&mut q, 2) {
            Answer::Unsat => {}
            Answer::Sat(model) => {
                let witness = witness_of(ctx, &model, &loops);
                out.push(SyncOutcome::Witness(DivergenceWitness { site: (block, inst), warp: false, witness }))
            }
            Answer::Unknown(why) => out.push(SyncOutcome::Unknown { site: (block, inst), warp: false, why }),
        }
    }
    let warp_sites: Vec<_> = ctx.l.warp_ops.iter().map(|w| (w.block, w.inst, w.pc, w.mask, w.loops.clone())).collect();
    for (block, inst, pc, mask, loops) in warp_sites {
        if let Some(launch) = &ctx.launch {
            if let Some(decided) = crate::enumerate::warp(ctx, launch, block, &loops, pc, mask) {
                ctx.enumerated += 1;
                if let crate::enumerate::Decided::Witness(witness) = decided {
                    out.push(SyncOutcome::Witness(DivergenceWitness { site: (block, inst), warp: true, witness }));
                }
                continue;
            }
        }
        let mut q = Query::new(&ctx.l.exprs, ctx.bind, 2);
        let p1 = q.enc.term(pc, 1);
        let p2 = q.enc.term(pc, 2);
        let m1 = q.enc.term(mask, 1);
        q.enc.declare("lane_missing", 32);
        q.want("lane_missing".into());
        q.asserts.push(same_block());
        q.asserts.push(p1);
        same_iterations(&mut q, &loops);
        // A lane named by thread 1's mask...
        q.asserts.push(format!("(bvult lane_missing {})", bv(32, 32)));
        q.asserts.push(format!("(= ((_ extract 0 0) (bvlshr {m1} lane_missing)) #b1)"));
        // ...is thread 2 (same warp), unless that lane is past the end of the block.
        let lin1 = linear_tid(1);
        let target = format!("(bvor (bvand {lin1} {}) lane_missing)", bv(!31u64 & 0xffff_ffff, 32));
        let nthreads = "(bvmul ntid_x (bvmul ntid_y ntid_z))";
        q.asserts.push(format!("(or (bvuge {target} {nthreads}) (and (= {} {target}) (not {p2})))", linear_tid(2)));
        let mut roots = vec![pc, mask];
        roots.extend(ctx.assert_facts(&mut q, block, &[pc, mask], 1));
        roots.extend(ctx.assert_facts(&mut q, block, &[pc, mask], 2));
        ctx.add_load_facts(&mut q, &roots, 2);
        q.add_param_facts(&ctx.l.exprs, ctx.bind, &roots);
        match ctx.run_witness(&mut q, 2) {
            Answer::Unsat => {}
            Answer::Sat(model) => {
                let witness = witness_of(ctx, &model, &loops);
                out.push(SyncOutcome::Witness(DivergenceWitness { site: (block, inst), warp: true, witness }));
            }
            Answer::Unknown(why) => out.push(SyncOutcome::Unknown { site: (block, inst), warp: true, why }),
        }
    }
    out
}

fn witness_of(ctx: &Ctx, model: &std::collections::HashMap<String, u64>, loops: &[LoopId]) -> Witness {
    let threads = [ThreadSpec { copy: 1, loops, offset: None }, ThreadSpec { copy: 2, loops, offset: None }];
    Witness::from_model(model, &threads, ctx.k.params.len() as u32, &[])
}

/// Both threads are in the same iteration of every loop around the site.
fn same_iterations(q: &mut Query, loops: &[LoopId]) {
    for &lp in loops {
        let k1 = q.enc.sym(Sym::Counter(lp), COUNTER_BITS, 1);
        let k2 = q.enc.sym(Sym::Counter(lp), COUNTER_BITS, 2);
        q.asserts.push(format!("(= {k1} {k2})"));
        q.want(k1);
    }
}
