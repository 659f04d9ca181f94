//! Out-of-bounds accesses against declared sizes: `.shared` arrays (their size is in the PTX)
//! and buffers whose length the interface gives. Buffers without a declared length are
//! unbounded, as the interface defaults promise.

use crate::bind::ByteSize;
use crate::ctx::{Answer, Ctx, Undecided};
use crate::encode::bv;
use crate::ledger::FirstWitness;
use crate::query::Query;
use crate::witness::{Term, ThreadSpec, Witness};
use model::expr::Sym;
use model::ops::Space;
use model::symbolic::{Base, COUNTER_BITS};

pub struct OobWitness {
    pub access: usize,
    /// One thread, with the offset it accesses.
    pub witness: Witness,
    /// The size of the array or buffer in bytes (in the witness's launch).
    pub size: Option<u64>,
}

pub enum BoundsOutcome {
    Witness(OobWitness),
    Unknown { access: usize, why: Undecided },
}

/// The size of an array or buffer in bytes, when it is declared: a `.shared` array's in the PTX
/// (dynamic shared memory's in the interface), a buffer's in the interface.
pub fn declared_size(ctx: &Ctx, base: Base) -> Option<ByteSize> {
    match base {
        Base::Var(v) => {
            let var = &ctx.k.vars[v as usize];
            match var.size {
                Some(s) => Some(ByteSize::Fixed(s)),
                None if var.space == Space::Shared => Some(ByteSize::Fixed(ctx.bind.dynamic_shared_bytes?)),
                None => None,
            }
        }
        Base::Param(_) | Base::Field { .. } => ctx.bind.base_bytes(base),
    }
}

/// Decides whether access `i` stays within its array or buffer: `None` when it does, or when
/// the size is not declared (unbounded, as the interface defaults promise).
pub fn check_access(ctx: &mut Ctx, i: usize) -> Option<BoundsOutcome> {
    let a = &ctx.l.accesses[i];
    let (Some(base), Some(off)) = (a.base, a.offset) else { return None };
    let size = declared_size(ctx, base)?;
    crate::trace::line(|| format!("bounds question, line {:?}", a.line));
    if let (Some(launch), ByteSize::Fixed(n)) = (&ctx.launch, &size) {
        if let Some(decided) = crate::enumerate::bounds(ctx, launch, i, *n) {
            ctx.enumerated += 1;
            return match decided {
                crate::enumerate::Decided::Witness(witness) => Some(BoundsOutcome::Witness(OobWitness { access: i, witness, size: Some(*n) })),
                crate::enumerate::Decided::Holds => None,
            };
        }
    }
    let mut q = Query::new(&ctx.l.exprs, ctx.bind, 1);
    let pc = q.enc.term(a.pc, 1);
    let o = q.enc.term(off, 1);
    let limit = q.size_term(&ctx.l.exprs, &size);
    q.asserts.push(pc);
    let end = format!("(bvadd {o} {})", bv(a.bytes as u64, 64));
    // Negative offsets wrap to huge unsigned values, so one unsigned test covers both ends.
    q.asserts.push(format!("(or (bvugt {end} {limit}) (bvult {end} {o}))"));
    let mut roots = vec![a.pc, off];
    roots.extend(ctx.assert_facts(&mut q, a.block, &[a.pc, off], 1));
    ctx.add_load_facts(&mut q, &roots, 1);
    q.add_param_facts(&ctx.l.exprs, ctx.bind, &roots);
    q.add_size_facts(&ctx.l.exprs, ctx.bind, &size);
    for &lp in &a.loops {
        let k = q.enc.sym(Sym::Counter(lp), COUNTER_BITS, 1);
        q.want(k);
    }
    q.enc.declare("off_1", 64);
    q.asserts.push(format!("(= off_1 {o})"));
    q.want("off_1".into());
    // The index-buffer values the access depends on: the replay writes them, the report names them.
    let seeds = crate::races::seeds_for(ctx, &mut q, &[a.pc, off], 1);
    match ctx.run_witness(&q, 1, &[], crate::ctx::Alike::at(crate::report::Question::Bounds, a.line)) {
        Answer::Unsat => None,
        Answer::Unknown(why) => Some(BoundsOutcome::Unknown { access: i, why }),
        Answer::Sat(model) => {
            let size = match size {
                ByteSize::Fixed(n) => Some(n),
                ByteSize::ParamTimes { param, elem_bytes } => {
                    model.get(&crate::encode::sym_name(Sym::Param { index: param, offset: 0 }, 0)).map(|v| v * elem_bytes)
                }
            };
            let offset = Term::Name("off_1".into());
            let threads = [ThreadSpec { copy: 1, loops: &a.loops, offset: Some(&offset) }];
            let witness = Witness::from_model(&model, &threads, ctx.k.params.len() as u32, &seeds);
            Some(BoundsOutcome::Witness(OobWitness { access: i, witness, size }))
        }
    }
}

/// Which accesses' bounds are still worth checking when they are checked in parallel: one
/// witness per source line and array is reported (the report keeps one finding per kind and
/// lines), so once an access has a witness, the accesses after it on the same line and array
/// (the unrolled copies of one load: a GEMM's eight `w_s[u + 8 * ty][k]` reads) are skipped.
/// See [`crate::ledger`] for why the report does not depend on the workers' timing.
#[derive(Default)]
pub struct BoundsLedger(FirstWitness<BoundsKey>);

type BoundsKey = (u32, Option<Base>);

/// The line and array of access `i`; `None` (never skipped) when it has no line.
fn bounds_key(l: &model::symbolic::Lifted, i: usize) -> Option<BoundsKey> {
    let a = &l.accesses[i];
    a.line.map(|line| (line, a.base))
}

impl BoundsLedger {
    pub fn worth_checking(&self, l: &model::symbolic::Lifted, i: usize) -> bool {
        self.0.worth_checking(bounds_key(l, i).as_ref(), i)
    }

    pub fn record(&self, l: &model::symbolic::Lifted, i: usize, outcome: &Option<BoundsOutcome>) {
        if let Some(BoundsOutcome::Witness(_)) = outcome {
            self.0.record_witness(bounds_key(l, i), i);
        }
    }

    /// The outcomes to report, from the outcomes of the accesses in order: those checking one
    /// after another would give (nothing after the first witness of a line and array).
    pub fn select(l: &model::symbolic::Lifted, outcomes: Vec<BoundsOutcome>) -> Vec<BoundsOutcome> {
        let numbered = outcomes
            .into_iter()
            .map(|o| match &o {
                BoundsOutcome::Witness(w) => (w.access, o),
                BoundsOutcome::Unknown { access, .. } => (*access, o),
            })
            .collect();
        FirstWitness::select(numbered, |i| bounds_key(l, i), |o| matches!(o, BoundsOutcome::Witness(_)))
    }
}
