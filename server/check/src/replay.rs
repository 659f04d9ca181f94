//! Replaying a counterexample in the reference interpreter before it is shown.
//!
//! The solver's model fixes the launch geometry, the scalar parameters and the two threads; the
//! interpreter runs the blocks involved on filled buffers (buffers whose contents the interface
//! fixes hold exactly those) and must record the reported accesses (or raise the reported
//! divergence / out-of-bounds error). A witness that does not
//! replay is never reported as a bug: it becomes an uncertified region.

use crate::bind::{Binding, ByteSize};
use crate::query::ThreadId;
use crate::runs::{Run, RunKey};
use crate::witness::{Fill, Witness};
use model::interp::{self, AccessEvent, Arg, InterpError, Launch, Memory, Pattern, PatternValues, Trace};
use model::symbolic::{Access, AccessKind, Base, Lifted};
use model::Kernel;
use spec::{ParamSpec, Scalar};
use std::collections::HashMap;
use std::sync::Arc;

/// Buffers of unknown size get this many bytes (enough for the small witnesses we ask for).
const DEFAULT_BUFFER_BYTES: u64 = 1 << 20;
pub const MAX_BUFFER_BYTES: u64 = 1 << 28;
/// The largest value [`every_reproduction`] gives the scalars nothing fixes.
const MAX_UNSET_SCALAR: u64 = 1 << 16;
const STEP_LIMIT: u64 = 20_000_000;

pub const FILLS: [Fill; 4] = [Fill::Zero, Fill::One, Fill::Random(1), Fill::Random(2)];
/// The most runs one witness is replayed in: each fill, and [`every_reproduction`]'s run with
/// the unset scalars at the thread count.
pub const RUNS_PER_WITNESS: usize = FILLS.len() + 1;

/// What a buffer of `dtype` elements (f32 where unknown) holds under `fill`: each element a
/// value 0 to 7 in the buffer's type, 1 for [`Fill::One`], pseudo-random for [`Fill::Random`]
/// (computed where the run reads, see [`Pattern`]).
fn fill_pattern(dtype: Option<spec::DType>, fill: Fill) -> Pattern {
    let dtype = dtype.unwrap_or(spec::DType::F32);
    let elements: [[u8; 8]; 8] = std::array::from_fn(|v| {
        let bits: u64 = match dtype {
            spec::DType::F32 => (v as f32).to_bits() as u64,
            spec::DType::F64 => (v as f64).to_bits(),
            spec::DType::F16 => [0u64, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700][v],
            spec::DType::BF16 => ((v as f32).to_bits() >> 16) as u64,
            _ => v as u64,
        };
        bits.to_le_bytes()
    });
    let values = match fill {
        Fill::Zero => PatternValues::Constant(0),
        Fill::One => PatternValues::Constant(1),
        Fill::Random(seed) => PatternValues::Random(seed),
    };
    Pattern { elements, elem_bytes: dtype.bytes() as u8, values }
}

pub struct Replay {
    pub launch: Launch,
    pub mem: Memory,
}

/// A replay before its buffers exist: the launch, and what each buffer (in the order of its
/// `BufferId`) will hold. What a run does follows from this, the fill and the witness's memory
/// values, so a run made before can be found (`runs`) without filling megabytes of buffers.
struct Plan<'a> {
    launch: Launch,
    buffers: Vec<BufferPlan<'a>>,
}

struct BufferPlan<'a> {
    /// The kernel parameter or pointer field that points to it.
    base: Base,
    name: String,
    contents: Contents<'a>,
}

enum Contents<'a> {
    /// What the interface fixes (`values`, `values_file`).
    Fixed(&'a [u8]),
    /// `len` bytes of the fill, as elements of `dtype`.
    Filled { len: u64, dtype: Option<spec::DType> },
}

impl Plan<'_> {
    /// The buffers' sizes in bytes, in order.
    fn sizes(&self) -> Vec<u64> {
        self.buffers
            .iter()
            .map(|b| match b.contents {
                Contents::Fixed(bytes) => bytes.len() as u64,
                Contents::Filled { len, .. } => len,
            })
            .collect()
    }

    /// The replay: buffers filled with `fill` (but buffer `zeroed` with zeros), then the loaded
    /// values witness `w` relies on written into them (see [`apply_memory`]).
    fn materialize(self, fill: Fill, zeroed: Option<Base>, bind: &Binding, w: &Witness) -> Replay {
        let mut mem = Memory::new();
        let mut ids = HashMap::new();
        for b in self.buffers {
            let id = match b.contents {
                Contents::Fixed(bytes) => mem.add_buffer(b.name, bytes.to_vec()),
                // Zeros are a zeroed allocation (pages the run never touches cost nothing).
                Contents::Filled { len, .. } if fill == Fill::Zero || zeroed == Some(b.base) => mem.add_zeroed(b.name, len),
                Contents::Filled { len, dtype } => mem.add_patterned(b.name, len, fill_pattern(dtype, fill)),
            };
            ids.insert(b.base, id);
        }
        apply_memory(&mut mem, &ids, bind, w);
        Replay { launch: self.launch, mem }
    }
}

/// Writes the loaded values a witness relies on into the replay's buffers (`ids`: which buffer
/// each pointer points to), not into buffers whose contents the interface fixes: those hold
/// what it says.
fn apply_memory(mem: &mut Memory, ids: &HashMap<Base, model::interp::BufferId>, bind: &Binding, w: &Witness) {
    for c in w.memory.iter().filter(|c| bind.base_fixed_bytes(c.buffer()).is_none()) {
        let Some(&id) = ids.get(&c.buffer()) else { continue };
        let end = c.byte_offset.saturating_add(c.bytes as u64);
        if end <= mem.buffer_len(id) {
            mem.write_bytes(id, c.byte_offset, &c.value.to_le_bytes()[..c.bytes as usize]);
        }
    }
}

/// Plans a launch for a witness: its geometry and scalars (`unset` for the scalars neither the
/// witness nor the interface gives a value), and its buffers (sized by the interface, else by
/// what the witness reaches, see `min_bytes`).
fn plan<'a>(k: &Kernel, l: &Lifted, bind: &'a Binding, w: &Witness, min_bytes: &HashMap<Base, u64>, unset: u64) -> Plan<'a> {
    let pointer_params = l.pointer_params();
    let mut buffers = Vec::new();
    let mut args = Vec::new();
    for (i, p) in k.params.iter().enumerate() {
        let i = i as u32;
        let spec = bind.params.get(i as usize).and_then(|s| s.as_ref());
        let is_buffer = pointer_params.contains(&i) || matches!(spec, Some(ParamSpec::Buffer { .. }));
        if is_buffer {
            args.push(Arg::Buffer(model::interp::BufferId(buffers.len() as u32)));
            buffers.push(buffer_plan(bind, w, min_bytes, Base::Param(i)));
        } else if p.is_aggregate() {
            args.push(Arg::Bytes(aggregate_bytes(l, bind, w, i, p.bytes)));
        } else {
            let from_witness = w.params.get(&i).copied();
            let from_spec = match spec {
                Some(ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. }) => Some(*v as u64),
                Some(ParamSpec::Scalar { value: Some(Scalar::Float(f)), .. }) => Some(if p.bits == 32 { (*f as f32).to_bits() as u64 } else { f.to_bits() }),
                Some(ParamSpec::Scalar { range: Some((lo, _)), .. }) => Some(*lo as u64),
                _ => None,
            };
            args.push(Arg::Scalar(from_witness.or(from_spec).unwrap_or(unset)));
        }
    }
    // A pointer inside a struct passed by value points to a buffer of its own, whose address
    // the struct's bytes carry (the kernel reads it with `ld.param.u64`).
    for (param, offset) in l.pointer_fields() {
        let id = model::interp::BufferId(buffers.len() as u32);
        buffers.push(buffer_plan(bind, w, min_bytes, Base::Field { param, offset }));
        let slot = offset as usize..offset as usize + 8;
        if let Some(bytes) = args.get_mut(param as usize).and_then(|a| if let Arg::Bytes(b) = a { b.get_mut(slot) } else { None }) {
            bytes.copy_from_slice(&Memory::base(id).to_le_bytes());
        }
    }
    let (grid, block, blocks) = (w.grid, w.block, w.blocks());
    // An undeclared dynamic shared size is not checked for bounds (bounds::declared_size), so
    // the replay gives `extern __shared__` arrays room: the 48 KiB a launch gets without
    // opting in, or more if the witness reaches further. With none, every access to them
    // was out of bounds and no race on them could be replayed.
    let dynamic_shared = bind.dynamic_shared_bytes.unwrap_or_else(|| {
        let reach = w.threads.iter().filter_map(|t| t.offset).max().map_or(0, |o| o.saturating_add(WIDEST_ACCESS));
        reach.clamp(UNDECLARED_DYNAMIC_SHARED, MAX_BUFFER_BYTES)
    });
    // A replay follows control flow and addresses; floats rounded as on hardware steer them as
    // the kernel really would, at a fraction of the cost of exact rationals.
    let mut launch = Launch::new(grid, block, args)
        .only_blocks(blocks)
        .step_limit(STEP_LIMIT)
        .dynamic_shared(dynamic_shared)
        .float_arithmetic(interp::FloatArithmetic::Hardware);
    // One bug must not hide another: an out-of-bounds access earlier in the kernel is recorded
    // and survived rather than ending the run before the witness's accesses happen.
    launch.continue_past_out_of_bounds = true;
    Plan { launch, buffers }
}

/// The buffer `base` points to: sized by the interface, else by what the witness reaches (see
/// `min_bytes`); holding what the interface fixes, else the fill.
fn buffer_plan<'a>(bind: &'a Binding, w: &Witness, min_bytes: &HashMap<Base, u64>, base: Base) -> BufferPlan<'a> {
    let size = match bind.base_bytes(base) {
        Some(ByteSize::Fixed(n)) => n,
        Some(ByteSize::ParamTimes { param, elem_bytes }) => w.params.get(&param).map_or(DEFAULT_BUFFER_BYTES, |v| v.saturating_mul(elem_bytes)),
        None => DEFAULT_BUFFER_BYTES.max(min_bytes.get(&base).copied().unwrap_or(0)),
    };
    let dtype = match bind.buffer_spec(base) {
        Some(ParamSpec::Buffer { dtype, .. }) => *dtype,
        _ => None,
    };
    let contents = match bind.base_fixed_bytes(base) {
        Some(bytes) => Contents::Fixed(bytes),
        None => Contents::Filled { len: size.min(MAX_BUFFER_BYTES), dtype },
    };
    BufferPlan { base, name: bind.base_name(base), contents }
}

/// The bytes of aggregate parameter `i` (a `struct` passed by value): the fields the witness
/// or the check fixes, zeros elsewhere.
fn aggregate_bytes(l: &Lifted, bind: &Binding, w: &Witness, i: u32, len: u32) -> Vec<u8> {
    let first = w.params.get(&i).map(|&v| (0, v));
    let rest = w.fields.iter().chain(&bind.pinned_fields).filter(|f| f.param == i).map(|f| (f.offset, f.value));
    crate::bind::struct_bytes(&l.exprs, i, len, first.into_iter().chain(rest))
}

pub fn run(k: &Kernel, r: &mut Replay) -> (Trace, Result<(), InterpError>) {
    interp::run_traced(k, &r.launch, &mut r.mem)
}

/// The inputs of a replay and how to judge it: what [`first_reproduction`] and
/// [`every_reproduction`] share.
pub struct ReplayInputs<'a> {
    pub k: &'a Kernel,
    pub l: &'a Lifted,
    pub bind: &'a Binding,
    pub w: &'a Witness,
    /// Least sizes of buffers the interface does not size.
    pub min_bytes: &'a HashMap<Base, u64>,
    pub budget: &'a model::budget::Budget,
    /// The accesses the judge reads (a race's two instructions; none for bounds, whose
    /// out-of-bounds accesses are listed anyway, or divergence).
    pub recording: interp::Recording,
    /// The check's latest runs, shared with the other candidates it replays.
    pub runs: &'a crate::runs::Runs,
}

impl ReplayInputs<'_> {
    /// The run of this witness under `fill` (made now, or found among the check's runs), with
    /// `dynamic_shared` bytes for the `extern __shared__` arrays when given; whether it was
    /// found.
    fn run_planned(&self, fill: Fill, zeroed: Option<Base>, unset: u64, dynamic_shared: Option<u64>) -> (Arc<Run>, bool) {
        let mut plan = plan(self.k, self.l, self.bind, self.w, self.min_bytes, unset);
        plan.launch.budget = self.budget.clone();
        plan.launch.recording = self.recording.clone();
        if let Some(bytes) = dynamic_shared {
            plan.launch.dynamic_shared_bytes = bytes;
        }
        let key = RunKey::new(&plan.launch, plan.sizes(), &self.w.memory, fill).zeroing(zeroed);
        self.runs.find_or_make(key, || {
            let mut r = plan.materialize(fill, zeroed, self.bind, self.w);
            let (trace, result) = run(self.k, &mut r);
            Run { launch: r.launch, trace, result }
        })
    }

    /// One replay under `fill`, with `unset` for the scalars nothing fixes: `judge`'s verdict on
    /// it, `None` if it does not recognise the bug, `Err` if the run ran out of budget or steps
    /// first.
    fn once<T>(&self, fill: Fill, unset: u64, judge: &impl Fn(&Launch, &Trace, &Result<(), InterpError>) -> Option<T>) -> Result<Option<T>, Exhausted> {
        self.once_zeroing(fill, None, unset, judge)
    }

    /// Like [`ReplayInputs::once`], with buffer `zeroed` (if any) left at zeros.
    fn once_zeroing<T>(
        &self,
        fill: Fill,
        zeroed: Option<Base>,
        unset: u64,
        judge: &impl Fn(&Launch, &Trace, &Result<(), InterpError>) -> Option<T>,
    ) -> Result<Option<T>, Exhausted> {
        self.budget.check()?;
        // Each back edge a thread takes is a step, so a witness that asks for more iterations
        // of a loop than the step limit allows steps is reached by no run: it would only run to
        // the limit (vLLM's MoE alignment with no setup: iteration 2^31 of a strided loop, a
        // 20 M-step replay of 1.2 s for nothing).
        if let Some(n) = self.w.threads.iter().flat_map(|t| t.iterations.values()).copied().find(|&n| n >= STEP_LIMIT) {
            crate::trace::line(|| format!("replay skipped: the witness asks for iteration {n}, past the step limit of {STEP_LIMIT}"));
            return Err(Exhausted::StepLimit);
        }
        let started = std::time::Instant::now();
        let (mut run, mut reused) = self.run_planned(fill, zeroed, unset, None);
        // An undeclared dynamic shared size is the replay's guess (see `plan`), which the
        // check does not hold the kernel to. A run whose accesses went past it dropped them, and
        // what follows shows the guess, not the kernel: vLLM's MoE alignment at 256 threads
        // keeps 99 KiB of counters, the rows past 48 KiB read zeros, and two tokens got one
        // rank (a race no launch with room for the counters has). Such a run is made again
        // with all the room the interpreter has.
        if self.bind.dynamic_shared_bytes.is_none() && run.launch.dynamic_shared_bytes < interp::SLOT && went_past_dynamic_shared(self.k, &run.trace) {
            (run, reused) = self.run_planned(fill, zeroed, unset, Some(interp::SLOT));
        }
        crate::trace::line(|| {
            format!(
                "replay {fill:?}{} unset={unset} params={:?} threads={:?} grid={:?} block={:?} blocks_run={} steps={} {:.1} ms {}{}",
                zeroed.map(|b| format!(" ({b:?} zeros)")).unwrap_or_default(),
                self.w.params,
                self.w.threads.iter().map(|t| (t.id.block, t.id.thread, &t.iterations)).collect::<Vec<_>>(),
                run.launch.grid,
                run.launch.block,
                run.trace.blocks_run.len(),
                run.trace.steps,
                started.elapsed().as_secs_f64() * 1e3,
                run.result.as_ref().map(|_| "ok".to_string()).unwrap_or_else(|e| e.to_string()),
                if reused { " (a run made before)" } else { "" }
            )
        });
        match (judge(&run.launch, &run.trace, &run.result), &run.result) {
            (Some(t), _) => Ok(Some(t)),
            (None, Err(InterpError::Stopped(stop))) => Err(Exhausted::Stopped(*stop)),
            (None, Err(InterpError::StepLimit { .. })) => Err(Exhausted::StepLimit),
            (None, _) => Ok(None),
        }
    }
}

/// Why a replay gave up on a witness before judging every run.
enum Exhausted {
    /// The budget ran out or the check was cancelled.
    Stopped(model::budget::Stop),
    /// A run went past the step limit: the loops the witness's parameters ask for are too long
    /// to replay, and another fill of memory would not shorten them (each such run costs about
    /// a second).
    StepLimit,
}

impl From<model::budget::Stop> for Exhausted {
    fn from(stop: model::budget::Stop) -> Exhausted {
        Exhausted::Stopped(stop)
    }
}

/// A judgement and the fill of the run it was made on; `None` when no run showed the bug, `Err`
/// when the budget ran out (or the check was cancelled) first.
pub type Reproduction<T> = Result<Option<(T, Fill)>, model::budget::Stop>;

/// Replays a witness under each memory fill in turn until `judge` recognises the bug in a run
/// (its launch, trace and outcome); returns the judgement and the fill that reproduced it, or
/// `None` if no fill does (or a run went past the step limit: no fill shortens the loops the
/// witness asks for). A replay that ran out of budget (or was cancelled) is `Err`.
pub fn first_reproduction<T>(inputs: &ReplayInputs, judge: impl Fn(&Launch, &Trace, &Result<(), InterpError>) -> Option<T>) -> Reproduction<T> {
    for &fill in &FILLS {
        match inputs.once(fill, 0, &judge) {
            Ok(Some(t)) => return Ok(Some((t, fill))),
            Ok(None) => {}
            Err(Exhausted::StepLimit) => return Ok(None),
            Err(Exhausted::Stopped(stop)) => return Err(stop),
        }
    }
    Ok(None)
}

/// Of the buffer parameters `buffers`, those whose contents under `fill` the bug needs: with
/// that one buffer left at zeros (the others filled as before), `judge` no longer recognises
/// it. For a bug that a replay under `fill` shows and one with zeros does not, they say which
/// inputs steer it (vLLM's MoE alignment: expert ids out of range make two tokens' ranks
/// equal, through counters in shared memory that the race's addresses read).
pub fn contents_needed<T>(
    inputs: &ReplayInputs,
    fill: Fill,
    buffers: &[Base],
    judge: impl Fn(&Launch, &Trace, &Result<(), InterpError>) -> Option<T>,
) -> Result<Vec<Base>, model::budget::Stop> {
    let mut needed = Vec::new();
    for &p in buffers {
        match inputs.once_zeroing(fill, Some(p), 0, &judge) {
            Ok(None) => needed.push(p),
            Ok(Some(_)) | Err(Exhausted::StepLimit) => {}
            Err(Exhausted::Stopped(stop)) => return Err(stop),
        }
    }
    Ok(needed)
}

/// How [`first_reproduction_or`] recognised the bug in a run.
pub enum Recognised<T, U> {
    /// As its judge asked (under some fill).
    AsAsked(T),
    /// Only as its fallback asked (under no fill did the judge recognise it).
    Otherwise(U),
}

/// Like [`first_reproduction`] with a second judge for when the first recognises no run: the
/// judge's verdict on the first fill it recognises, else `fallback`'s on the first fill it
/// recognises. Both judge the same runs, so no fill is replayed twice.
pub fn first_reproduction_or<T, U>(
    inputs: &ReplayInputs,
    judge: impl Fn(&Launch, &Trace, &Result<(), InterpError>) -> Option<T>,
    fallback: impl Fn(&Launch, &Trace, &Result<(), InterpError>) -> Option<U>,
) -> Reproduction<Recognised<T, U>> {
    let either = |launch: &Launch, trace: &Trace, result: &Result<(), InterpError>| {
        judge(launch, trace, result).map(Recognised::AsAsked).or_else(|| fallback(launch, trace, result).map(Recognised::Otherwise))
    };
    let mut second_best = None;
    for &fill in &FILLS {
        match inputs.once(fill, 0, &either) {
            Ok(Some(Recognised::AsAsked(t))) => return Ok(Some((Recognised::AsAsked(t), fill))),
            Ok(Some(otherwise)) => {
                second_best.get_or_insert((otherwise, fill));
            }
            Ok(None) => {}
            Err(Exhausted::StepLimit) => break,
            Err(Exhausted::Stopped(stop)) => return Err(stop),
        }
    }
    Ok(second_best)
}

/// Like [`first_reproduction`], but under every fill, and once more with the scalars nothing
/// fixes set to the launch's thread count (a size `n` left at 0 makes every thread skip its work,
/// which shows nothing about the values it would store): the judgements of all runs that
/// reproduce the bug (a benign race must look benign in each of them), stopping after the first
/// judgement `settled` says decides the question. The thread count is capped at
/// [`MAX_UNSET_SCALAR`]: a size of tens of millions made one replay of a strided loop run for
/// the whole budget.
pub fn every_reproduction<T>(
    inputs: &ReplayInputs,
    judge: impl Fn(&Launch, &Trace, &Result<(), InterpError>) -> Option<T>,
    settled: impl Fn(&T) -> bool,
) -> Result<Vec<(T, Fill)>, model::budget::Stop> {
    let w = inputs.w;
    let threads = w.grid.iter().chain(&w.block).fold(1u64, |acc, &d| acc.saturating_mul(d as u64)).min(MAX_UNSET_SCALAR);
    // Random contents right after zeros: zeros make most stores agree (every thread stores a
    // function of zeros), and the first random fill is the run most likely to settle the
    // question; ones come after it (llm.c's tiled matmul: two runs per race of one store
    // rather than three, each of 3-8 M steps). The judgements come back in `FILLS` order.
    const ORDER: [Fill; 4] = [Fill::Zero, Fill::Random(1), Fill::One, Fill::Random(2)];
    let runs = ORDER.iter().map(|&f| (f, 0)).chain(std::iter::once((Fill::Random(3), threads)));
    let mut out = Vec::new();
    for (fill, unset) in runs {
        match inputs.once(fill, unset, &judge) {
            Ok(Some(t)) => {
                let done = settled(&t);
                out.push((t, fill));
                if done {
                    break;
                }
            }
            Ok(None) => {}
            Err(Exhausted::StepLimit) => break,
            Err(Exhausted::Stopped(stop)) => return Err(stop),
        }
    }
    out.sort_by_key(|(_, fill)| FILLS.iter().position(|f| f == fill).unwrap_or(FILLS.len()));
    Ok(out)
}

/// Whether the writes of instruction `a` by different threads of the run that touch the same
/// bytes all store the same value at the same address and width: a write-write race that cannot
/// change what memory holds. `Some(whether any of them stored a nonzero value)` when they do;
/// `None` when writes overlap only partly or store different bits (then it is a real race; this
/// is stricter than "concurrent pairs", never laxer). Sorting makes it O(n log n): a no-setup
/// launch records a million writes.
pub fn same_value_writes(trace: &Trace, a: &Access) -> Option<bool> {
    /// Which memory a write goes to: its space and, for shared memory, its block's.
    type Memory = (model::ops::Space, Option<[u32; 3]>);
    let inst = (a.block, a.inst);
    let mut events: Vec<(Memory, u64, &AccessEvent)> = trace
        .accesses
        .iter()
        .filter(|e| e.kind == interp::AccessKind::Write && e.inst == inst)
        .map(|e| ((e.space, (e.space == model::ops::Space::Shared).then_some(e.block)), e.addr, e))
        .collect();
    events.sort_unstable_by_key(|(m, addr, _)| (*m, *addr));
    let mut nonzero = false;
    for group in events.chunk_by(|x, y| x.0 == y.0 && x.1 == y.1) {
        let first = group[0].2;
        let threads_differ = group.iter().any(|(_, _, e)| (e.block, e.thread) != (first.block, first.thread));
        if !threads_differ {
            continue;
        }
        if group.iter().any(|(_, _, e)| e.bytes != first.bytes || e.written.is_none() || e.written != first.written) {
            return None;
        }
        nonzero |= first.written != Some(0);
    }
    // Writes of one memory at different addresses must not overlap.
    for w in events.windows(2) {
        let ((m1, a1, e1), (m2, a2, _)) = (&w[0], &w[1]);
        if m1 == m2 && a1 != a2 && a1 + e1.bytes as u64 > *a2 {
            return None;
        }
    }
    Some(nonzero)
}

fn kind_matches(event: interp::AccessKind, kind: AccessKind) -> bool {
    matches!(
        (event, kind),
        (interp::AccessKind::Read, AccessKind::Read) | (interp::AccessKind::Write, AccessKind::Write) | (interp::AccessKind::Atomic, AccessKind::Atomic(_))
    )
}

/// The trace events of access `a` performed by thread `t`.
fn events_of<'t>(trace: &'t Trace, a: &Access, t: ThreadId) -> impl Iterator<Item = &'t AccessEvent> + 't {
    let (inst, kind) = ((a.block, a.inst), a.kind);
    trace.accesses.iter().filter(move |e| e.inst == inst && e.block == t.block && e.thread == t.thread && kind_matches(e.kind, kind))
}

/// Finds the two racing accesses in the trace: same bytes, same phase (same block), by the two
/// threads. Returns the pair of events.
///
/// The second thread's events are collected once: scanning the trace again for each event of
/// the first made this quadratic in the trace (31 s of a no-setup check of vLLM's rotary
/// embedding, past the kernel's budget, which only the interpreter polls).
pub fn confirm_race<'t>(trace: &'t Trace, a1: &Access, t1: ThreadId, a2: &Access, t2: ThreadId) -> Option<(&'t AccessEvent, &'t AccessEvent)> {
    let second: Vec<&AccessEvent> = events_of(trace, a2, t2).collect();
    for e1 in events_of(trace, a1, t1) {
        for &e2 in &second {
            let overlap = e1.addr < e2.addr + e2.bytes as u64 && e2.addr < e1.addr + e1.bytes as u64;
            let concurrent = e1.block != e2.block || e1.phase == e2.phase;
            if overlap && concurrent && e1.space == e2.space {
                return Some((e1, e2));
            }
        }
    }
    None
}

/// Whether a run dropped an access past the end of the kernel's `extern __shared__` arrays.
fn went_past_dynamic_shared(k: &Kernel, trace: &Trace) -> bool {
    let dynamic: Vec<u64> = trace.shared_vars.iter().filter(|v| k.vars.get(v.var as usize).is_some_and(|var| var.size.is_none())).map(|v| v.offset).collect();
    trace.out_of_bounds.iter().any(|e| e.space == model::ops::Space::Shared && dynamic.iter().any(|&at| e.addr >= at && e.addr - at < interp::SLOT))
}

/// Widest access the scan of [`any_race`] looks back over (a 4 x 64-bit vector access).
const WIDEST_ACCESS: u64 = 32;

/// Dynamic shared memory a launch gets without `cudaFuncSetAttribute`.
const UNDECLARED_DYNAMIC_SHARED: u64 = 48 * 1024;

/// Any two threads' events of accesses `a1` and `a2` in the run that touch the same bytes of
/// the same memory while unordered (in different blocks, or in one block's same phase), not
/// both reads and not both atomics: a race the run shows even when the two threads the solver
/// chose (from an over-approximation, such as a search loop's bounds it could not summarise)
/// do not race. Sorted by address, so a run of a million accesses is scanned once.
///
/// The run's events record barrier phases, not warp syncs: when `warp_synced` (the kernel has
/// warp syncs, which can order two lanes of one warp), a pair in one warp of a block of `block`
/// threads is not taken, since the run cannot say whether a `__syncwarp` ordered it.
pub fn any_race<'t>(trace: &'t Trace, a1: &Access, a2: &Access, warp_synced: bool, block: [u32; 3]) -> Option<(&'t AccessEvent, &'t AccessEvent)> {
    let warp = |e: &AccessEvent| (e.thread[0] + block[0] * (e.thread[1] + block[1] * e.thread[2])) / 32;
    let of = |a: &Access| -> Vec<&'t AccessEvent> { trace.accesses.iter().filter(|e| e.inst == (a.block, a.inst) && kind_matches(e.kind, a.kind)).collect() };
    let mut second = of(a2);
    second.sort_by_key(|e| e.addr);
    for e1 in of(a1) {
        let from = second.partition_point(|e| e.addr + WIDEST_ACCESS <= e1.addr);
        for &e2 in second[from..].iter().take_while(|e| e.addr < e1.addr + e1.bytes as u64) {
            let overlap = e2.addr + e2.bytes as u64 > e1.addr;
            let other_thread = (e1.block, e1.thread) != (e2.block, e2.thread);
            let same_memory = e1.space == e2.space && (e1.space != model::ops::Space::Shared || e1.block == e2.block);
            let unordered = e1.block != e2.block || (e1.phase == e2.phase && !(warp_synced && warp(e1) == warp(e2)));
            let conflicting =
                !matches!((e1.kind, e2.kind), (interp::AccessKind::Read, interp::AccessKind::Read) | (interp::AccessKind::Atomic, interp::AccessKind::Atomic));
            if overlap && other_thread && same_memory && unordered && conflicting {
                return Some((e1, e2));
            }
        }
    }
    None
}

/// The byte offset of an event into the array or buffer access `a` targets, in replay `r`.
pub fn target_offset(launch: &Launch, trace: &Trace, a: &Access, e: &AccessEvent) -> Option<u64> {
    match a.base? {
        Base::Var(_) if e.space == model::ops::Space::Shared => trace.shared_var_at(e.addr).map(|(_, off)| off),
        Base::Var(_) => None,
        base => e.addr.checked_sub(buffer_address(launch, base)?),
    }
}

/// Where the buffer a pointer parameter or pointer field points to starts, in a launch: the
/// parameter's value, or the eight bytes of the struct that hold the pointer.
pub fn buffer_address(launch: &Launch, base: Base) -> Option<u64> {
    match (base, launch.args.get(base.param()? as usize)?) {
        (Base::Param(_), Arg::Buffer(id)) => Some(Memory::base(*id)),
        (Base::Field { offset, .. }, Arg::Bytes(bytes)) => crate::bind::read_le(bytes, offset as u64, 8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::ops::Space;

    /// The fills' elements, value by value: 1 for `One`, pseudo-random values below 8 for
    /// `Random` (other values for another seed), each encoded in the buffer's type, the last
    /// element cut at the buffer's end.
    #[test]
    fn fills_encode_each_element_in_the_buffer_type() {
        use spec::DType;
        let element = |dtype: DType, v: u64| -> Vec<u8> {
            let bits = match dtype {
                DType::F32 => (v as f32).to_bits() as u64,
                DType::F64 => (v as f64).to_bits(),
                DType::F16 => [0u64, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700][v as usize],
                DType::BF16 => ((v as f32).to_bits() >> 16) as u64,
                _ => v,
            };
            bits.to_le_bytes()[..dtype.bytes() as usize].to_vec()
        };
        for dtype in [DType::F16, DType::BF16, DType::F32, DType::F64, DType::I8, DType::I32, DType::U64] {
            let len = 64 * dtype.bytes() + 1;
            let ones: Vec<u8> = (0..65).flat_map(|_| element(dtype, 1)).take(len as usize).collect();
            assert_eq!(fill_pattern(Some(dtype), Fill::One).bytes(len), ones, "{dtype:?}");
            let seven = fill_pattern(Some(dtype), Fill::Random(7));
            let random: Vec<u8> = (0..65).flat_map(|i| element(dtype, seven.value(i) as u64)).take(len as usize).collect();
            assert_eq!(seven.bytes(len), random, "{dtype:?}");
            let values: std::collections::BTreeSet<usize> = (0..64).map(|i| seven.value(i)).collect();
            assert_eq!(values.len(), 8, "{dtype:?}: 64 random elements take every value: {values:?}");
            assert_ne!(seven.bytes(len), fill_pattern(Some(dtype), Fill::Random(8)).bytes(len), "{dtype:?}");
            assert!(fill_pattern(Some(dtype), Fill::Zero).bytes(len).iter().all(|&b| b == 0));
        }
    }

    /// A witness that asks for more iterations of a loop than the step limit has steps is not
    /// run (no run could reach it; vLLM's MoE alignment asked for iteration 2^31); one a run
    /// can reach is run and judged.
    #[test]
    fn a_witness_past_the_step_limit_is_not_run() {
        use crate::witness::WitnessThread;
        use std::collections::BTreeMap;
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/real/vllm_moe_align_small.ptx")).unwrap();
        let parsed = ptx::parse(&text);
        let (_, kernel) = model::lower_module(&parsed.module).into_iter().next().unwrap();
        let k = kernel.unwrap();
        let l = model::symbolic::lift(&k);
        let bind = Binding::new(&k, None, None);
        let thread = |x: u32, iterations: BTreeMap<u32, u64>| WitnessThread {
            id: crate::query::ThreadId { block: [0; 3], thread: [x, 0, 0] },
            iterations,
            offset: None,
        };
        let witness = |iteration: u64| Witness {
            grid: [1, 1, 1],
            block: [256, 1, 1],
            params: BTreeMap::new(),
            fields: Vec::new(),
            threads: vec![thread(0, BTreeMap::new()), thread(64, [(0, iteration)].into())],
            memory: Vec::new(),
            missing_lane: None,
            fill: None,
        };
        let (runs, budget, min_bytes) = (crate::runs::Runs::default(), model::budget::Budget::unlimited(), HashMap::new());
        let judged = std::cell::Cell::new(0);
        for (iteration, runs_made) in [(STEP_LIMIT, 0), (3, 1)] {
            let w = witness(iteration);
            let inputs =
                ReplayInputs { k: &k, l: &l, bind: &bind, w: &w, min_bytes: &min_bytes, budget: &budget, recording: interp::Recording::Off, runs: &runs };
            judged.set(0);
            let reproduced = first_reproduction(&inputs, |_, _, _| {
                judged.set(judged.get() + 1);
                Some(())
            });
            assert_eq!(judged.get(), runs_made, "iteration {iteration}");
            assert_eq!(reproduced.unwrap().is_some(), runs_made > 0, "iteration {iteration}");
        }
    }

    fn access(inst: usize, kind: AccessKind) -> Access {
        Access {
            kind,
            space: Space::Shared,
            base: Some(Base::Var(0)),
            addr: 0,
            offset: None,
            bytes: 4,
            pc: 0,
            block: 0,
            inst,
            loops: vec![],
            span: ptx::Span::default(),
            line: None,
        }
    }

    fn event(inst: usize, thread: u32, kind: interp::AccessKind, addr: u64) -> AccessEvent {
        AccessEvent {
            block: [0; 3],
            thread: [thread, 0, 0],
            inst: (0, inst),
            space: Space::Shared,
            addr,
            bytes: 4,
            kind,
            phase: 0,
            iterations: vec![],
            line: None,
            written: None,
        }
    }

    /// A write by thread 31 and a read by thread 0 of the same word in one phase race; the
    /// same pair inside one warp is not taken when warp syncs could order it, and a pair in
    /// different warps still is.
    #[test]
    fn any_race_finds_other_threads_and_leaves_warp_synced_lanes_alone() {
        let (w, r) = (access(1, AccessKind::Write), access(2, AccessKind::Read));
        let accesses =
            vec![event(1, 31, interp::AccessKind::Write, 128), event(2, 0, interp::AccessKind::Read, 128), event(2, 5, interp::AccessKind::Read, 64)];
        let mut trace = Trace { accesses, ..Trace::default() };
        let block = [64, 1, 1];
        let (e1, e2) = any_race(&trace, &w, &r, false, block).expect("a race in the run");
        assert_eq!((e1.thread[0], e2.thread[0]), (31, 0));
        assert!(any_race(&trace, &w, &r, true, block).is_none(), "threads 31 and 0 share a warp");
        trace.accesses.push(event(2, 40, interp::AccessKind::Read, 130));
        let (_, e2) = any_race(&trace, &w, &r, true, block).expect("thread 40 is in another warp");
        assert_eq!(e2.thread[0], 40);
        // Reads alone never race.
        assert!(any_race(&trace, &r, &r, false, block).is_none());
    }
}
