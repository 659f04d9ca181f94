//! Barrier divergence: a `bar.sync` that one thread of a block reaches and another, in the same
//! iteration of every enclosing loop, does not; and warp collectives (`shfl.sync`, `vote.sync`,
//! `bar.warp.sync`) whose member mask names a lane that does not arrive.

use crate::ctx::{Answer, Ctx, Undecided};
use crate::encode::bv;
use crate::ledger::FirstWitness;
use crate::query::{same_block, Query};
use crate::witness::{ThreadSpec, Witness};
use model::cfg::{BlockId, LoopId};
use model::expr::{ExprId, Sym};
use model::symbolic::{Lifted, COUNTER_BITS};

pub struct DivergenceWitness {
    /// The barrier or collective: (block, instruction index).
    pub site: (BlockId, usize),
    pub warp: bool,
    /// Thread 0 reaches the site; thread 1 does not (for a warp collective, thread 1 is the
    /// lane `witness.missing_lane` of thread 0's warp, when that lane exists).
    pub witness: Witness,
    /// A warp collective that thread 0 runs outside its own member mask (no thread 1).
    pub outside_mask: bool,
}

pub enum SyncOutcome {
    Witness(DivergenceWitness),
    Unknown { site: (BlockId, usize), warp: bool, why: Undecided },
}

/// A barrier or warp collective to check, with what its check needs.
pub struct Site {
    pub block: BlockId,
    pub inst: usize,
    pub pc: ExprId,
    /// The collective's member mask; `None` for a block-wide barrier.
    pub mask: Option<ExprId>,
    pub loops: Vec<LoopId>,
    /// The source line of the instruction, if known.
    pub line: Option<u32>,
}

/// The barriers, then the warp collectives, in the order they are reported.
pub fn sites(l: &Lifted) -> Vec<Site> {
    let barriers = l.barriers.iter().map(|b| Site { block: b.block, inst: b.inst, pc: b.pc, mask: None, loops: b.loops.clone(), line: b.line });
    let warp = l.warp_ops.iter().map(|w| Site { block: w.block, inst: w.inst, pc: w.pc, mask: Some(w.mask), loops: w.loops.clone(), line: w.line });
    barriers.chain(warp).collect()
}

/// Which sites are still worth checking when sites are checked in parallel.
///
/// The report keeps one divergence per kind and source line, so once a site has a witness,
/// the sites after it on the same line (the five shuffles of one `cg::reduce`, or the unrolled
/// copies of a `__syncwarp`) would each cost their queries, witness tiers and a replay for a
/// finding the report drops. See [`crate::ledger`] for why the report does not depend on the
/// workers' timing.
#[derive(Default)]
pub struct SyncLedger(FirstWitness<SiteKey>);

/// A site's line and whether it is a warp collective.
type SiteKey = (u32, bool);

/// `None` (never skipped) when the site has no line.
fn site_key(site: &Site) -> Option<SiteKey> {
    site.line.map(|line| (line, site.mask.is_some()))
}

impl SyncLedger {
    pub fn worth_checking(&self, sites: &[Site], s: usize) -> bool {
        self.0.worth_checking(site_key(&sites[s]).as_ref(), s)
    }

    pub fn record(&self, sites: &[Site], s: usize, outcome: &Option<SyncOutcome>) {
        if let Some(SyncOutcome::Witness(_)) = outcome {
            self.0.record_witness(site_key(&sites[s]), s);
        }
    }

    /// The outcomes to report, from the outcomes of the sites by number (`None` where a site
    /// was not checked or holds): what checking one after another would give (nothing after
    /// the first witness of a line and kind).
    pub fn select(sites: &[Site], outcomes: Vec<(usize, SyncOutcome)>) -> Vec<SyncOutcome> {
        FirstWitness::select(outcomes, |s| site_key(&sites[s]), |o| matches!(o, SyncOutcome::Witness(_)))
    }
}

/// Decides whether every thread that should reaches `site` together: `None` when they do.
pub fn check_site(ctx: &mut Ctx, site: &Site) -> Option<SyncOutcome> {
    crate::trace::line(|| format!("{} question, line {:?}", if site.mask.is_some() { "warp collective" } else { "barrier" }, site.line));
    match site.mask {
        None => check_barrier(ctx, site),
        Some(mask) => check_collective(ctx, site, mask),
    }
}

fn check_barrier(ctx: &mut Ctx, site: &Site) -> Option<SyncOutcome> {
    let &Site { block, inst, pc, .. } = site;
    let loops = &site.loops;
    if let Some(launch) = &ctx.launch {
        if let Some(decided) = crate::enumerate::barrier(ctx, launch, block, loops, pc) {
            ctx.enumerated += 1;
            return match decided {
                crate::enumerate::Decided::Witness(witness) => {
                    Some(SyncOutcome::Witness(DivergenceWitness { site: (block, inst), warp: false, witness, outside_mask: false }))
                }
                crate::enumerate::Decided::Holds => None,
            };
        }
    }
    let mut q = Query::new(&ctx.l.exprs, ctx.bind, 2);
    q.enc.assume_same_block();
    q.enc.assume_same_iterations(loops);
    let p1 = q.enc.term(pc, 1);
    let p2 = q.enc.term(pc, 2);
    q.asserts.push(same_block());
    q.asserts.push(p1);
    q.asserts.push(format!("(not {p2})"));
    same_iterations(&mut q, loops);
    let mut roots = vec![pc];
    roots.extend(ctx.assert_facts(&mut q, block, &[pc], 1));
    roots.extend(ctx.assert_facts(&mut q, block, &[pc], 2));
    ctx.add_load_facts(&mut q, &roots, 2);
    q.add_param_facts(&ctx.l.exprs, ctx.bind, &roots);
    match ctx.run_witness(&q, 2, &[], crate::ctx::Alike::at(crate::report::Question::Barrier, site.line)) {
        Answer::Unsat => None,
        Answer::Sat(model) => {
            let witness = witness_of(ctx, &model, loops);
            Some(SyncOutcome::Witness(DivergenceWitness { site: (block, inst), warp: false, witness, outside_mask: false }))
        }
        Answer::Unknown(why) => Some(SyncOutcome::Unknown { site: (block, inst), warp: false, why }),
    }
}

fn check_collective(ctx: &mut Ctx, site: &Site, mask: ExprId) -> Option<SyncOutcome> {
    let &Site { block, inst, pc, .. } = site;
    let loops = &site.loops;
    if let Some(launch) = &ctx.launch {
        if let Some(decided) = crate::enumerate::warp(ctx, launch, block, loops, pc, mask) {
            ctx.enumerated += 1;
            let (witness, outside_mask) = match decided {
                crate::enumerate::WarpDecided::Missing(witness) => (witness, false),
                crate::enumerate::WarpDecided::OutsideMask(witness) => (witness, true),
                crate::enumerate::WarpDecided::Holds => return None,
            };
            return Some(SyncOutcome::Witness(DivergenceWitness { site: (block, inst), warp: true, witness, outside_mask }));
        }
    }
    match check_lane_missing(ctx, site, mask) {
        None => check_lane_outside_mask(ctx, site, mask),
        found => found,
    }
}

/// A lane the collective's mask names that does not arrive with thread 1.
fn check_lane_missing(ctx: &mut Ctx, site: &Site, mask: ExprId) -> Option<SyncOutcome> {
    let &Site { block, inst, pc, .. } = site;
    let loops = &site.loops;
    let mut q = Query::new(&ctx.l.exprs, ctx.bind, 2);
    q.enc.assume_same_block();
    q.enc.assume_same_iterations(loops);
    let p1 = q.enc.term(pc, 1);
    let p2 = q.enc.term(pc, 2);
    let m1 = q.enc.term(mask, 1);
    q.enc.declare("lane_missing", 32);
    q.want("lane_missing".into());
    q.asserts.push(same_block());
    q.asserts.push(p1);
    same_iterations(&mut q, loops);
    // A lane named by thread 1's mask...
    q.asserts.push(format!("(bvult lane_missing {})", bv(32, 32)));
    q.asserts.push(format!("(= ((_ extract 0 0) (bvlshr {m1} lane_missing)) #b1)"));
    // ...is thread 2 (same warp), unless that lane is past the end of the block.
    let lin1 = q.linear_tid(1);
    let target = format!("(bvor (bvand {lin1} {}) lane_missing)", bv(!31u64 & 0xffff_ffff, 32));
    let nthreads = q.block_threads();
    q.asserts.push(format!("(or (bvuge {target} {nthreads}) (and (= {} {target}) (not {p2})))", q.linear_tid(2)));
    let mut roots = vec![pc, mask];
    roots.extend(ctx.assert_facts(&mut q, block, &[pc, mask], 1));
    roots.extend(ctx.assert_facts(&mut q, block, &[pc, mask], 2));
    ctx.add_load_facts(&mut q, &roots, 2);
    q.add_param_facts(&ctx.l.exprs, ctx.bind, &roots);
    match ctx.run_witness(&q, 2, &[], crate::ctx::Alike::at(crate::report::Question::WarpCollective, site.line)) {
        Answer::Unsat => None,
        Answer::Sat(model) => {
            let witness = witness_of(ctx, &model, loops);
            Some(SyncOutcome::Witness(DivergenceWitness { site: (block, inst), warp: true, witness, outside_mask: false }))
        }
        Answer::Unknown(why) => Some(SyncOutcome::Unknown { site: (block, inst), warp: true, why }),
    }
}

/// A thread that runs the collective although its own member mask does not name its lane:
/// undefined in the PTX ISA (sm_70+ hardware may hang or return garbage), and what a mask
/// written for half a warp does when the whole warp runs it (`__shfl_xor_sync(0xffff, v, 1)`).
fn check_lane_outside_mask(ctx: &mut Ctx, site: &Site, mask: ExprId) -> Option<SyncOutcome> {
    let &Site { block, inst, pc, .. } = site;
    let loops = &site.loops;
    let mut q = Query::new(&ctx.l.exprs, ctx.bind, 1);
    let p1 = q.enc.term(pc, 1);
    let m1 = q.enc.term(mask, 1);
    q.asserts.push(p1);
    let lane = format!("(bvand {} {})", q.linear_tid(1), bv(31, 32));
    q.asserts.push(format!("(= ((_ extract 0 0) (bvlshr {m1} {lane})) #b0)"));
    for &lp in loops {
        let k = q.enc.sym(Sym::Counter(lp), COUNTER_BITS, 1);
        q.want(k);
    }
    let mut roots = vec![pc, mask];
    roots.extend(ctx.assert_facts(&mut q, block, &[pc, mask], 1));
    ctx.add_load_facts(&mut q, &roots, 1);
    q.add_param_facts(&ctx.l.exprs, ctx.bind, &roots);
    match ctx.run_witness(&q, 1, &[], crate::ctx::Alike::at(crate::report::Question::WarpCollective, site.line)) {
        Answer::Unsat => None,
        Answer::Sat(model) => {
            let threads = [ThreadSpec { copy: 1, loops, offset: None }];
            let witness = Witness::from_model(&model, &threads, ctx.k.params.len() as u32, &[]);
            Some(SyncOutcome::Witness(DivergenceWitness { site: (block, inst), warp: true, witness, outside_mask: true }))
        }
        Answer::Unknown(why) => Some(SyncOutcome::Unknown { site: (block, inst), warp: true, why }),
    }
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
