//! The reference interpreter: runs a lowered kernel concretely on a launch, records every memory
//! access, and reports out-of-bounds accesses, barrier and warp divergence, non-termination and
//! unsupported instructions as errors (it never panics on any kernel or launch).
//!
//! It is the judge that replays the verifier's counterexamples, so it aims to be simple and
//! obviously right rather than fast. The semantics, following the execution model in
//! ARCHITECTURE.md:
//!
//! - **Values.** Registers hold integer bits or *exact* floats. Float `add/sub/mul/div/fma/neg/
//!   abs/min/max` and `rcp` are computed exactly on rationals; a float only becomes IEEE bits
//!   when bits are needed (a store, `mov.b32` into an integer use, an integer operation), rounded
//!   to nearest even at that width. `cvt` rounds as its modifier says. The transcendental
//!   instructions (`sqrt`, `rsqrt`, `ex2`, `lg2`, `sin`, `cos`, `tanh`) have irrational exact
//!   results: they are computed in f64 and the f64 result is taken exactly (an approximation).
//!   NaN and ±infinity follow IEEE; signed zeros are not kept. A result that rounds to
//!   infinity in its operation's format becomes infinity (as on hardware), and an exact value
//!   grown past [`MAX_EXACT_BITS`] bits (iterations that double its size) is rounded to a
//!   [`WIDE_MANTISSA_BITS`]-bit mantissa, so runs stay bounded. `.ftz`, `.sat` and rounding
//!   modifiers of arithmetic are ignored (the result is exact); `div.approx` and `rcp.approx`
//!   give the exact quotient. Integer semantics are `ops::eval_*`. A launch may ask for
//!   [`FloatArithmetic::Hardware`] instead: f32/f64 results rounded per instruction on native
//!   floats (race and bounds replays, where exact rationals only cost time).
//! - **Memory.** Global buffers live in [`Memory`], each at a distinct base address. A float
//!   stored to memory keeps its exact value in a side table keyed by (address, width), so a
//!   later load of the same address and width gets it back; any overlapping write drops it.
//!   Shared memory is per block; every `.shared` variable has its own slot of [`SLOT`] bytes
//!   (extern, unsized arrays share one slot of `dynamic_shared_bytes`), so an access outside a
//!   variable is out of bounds even where hardware would hit a neighbour. Shared addresses in
//!   registers are `SHARED_BASE + offset` (a 32-bit shared address is the offset itself);
//!   generic accesses are routed by address range. `.local` likewise, per thread. Module
//!   `.global`/`.const` variables become zero-filled global buffers named after the variable
//!   (initialisers are not modelled) unless `Memory` already has a buffer of that name.
//! - **Scheduling.** Blocks run one after another. Within a block, each thread runs alone until
//!   it waits at a barrier (`bar.sync`), waits at a warp collective (`shfl.sync`, `vote.sync`,
//!   `bar.warp.sync`, `activemask`) or exits. A collective completes when every lane named by
//!   the member mask waits at the same instruction in the same loop iterations with the same
//!   mask; a named lane that exited, does not exist, or never arrives is [`InterpError::WarpDivergence`].
//!   When every live thread waits at a barrier they must all wait at the *same* barrier
//!   instruction in the same loop iterations, and no thread of the block may have exited:
//!   following GPUVerify, a thread that exits while others wait at a barrier (or that others
//!   reach a barrier after it exited) is [`InterpError::BarrierDivergence`]. Released threads
//!   start a new *phase*. `bar.arrive` does not wait. Atomics apply immediately (the sequential
//!   order is one legal order). Running race-free threads one at a time is sound by the
//!   phase-independence argument of the execution model; [`Trace::races`] finds the races
//!   that make it unsound.
//! - **Loop iterations.** Each access records, for every loop enclosing it, how many back edges
//!   of that loop the thread has taken since entering it.
//! - **Steps.** Every executed instruction and branch of every thread counts one step; going
//!   past `step_limit` is [`InterpError::StepLimit`].

mod exec;
mod float;
mod hardware;
mod memory;
pub mod observe;
mod race;

pub use float::{wide_roundings, FloatFormat, FloatVal, Rounding, MAX_EXACT_BITS, WIDE_MANTISSA_BITS};
pub use hardware::FloatArithmetic;
pub use memory::{BufferId, Memory, Pattern, PatternValues, Value, BUFFER_STRIDE, GLOBAL_BASE, LOCAL_BASE, SHARED_BASE, SLOT, WINDOW};
pub use race::Race;

use crate::cfg::{BlockId, LoopId};
use crate::ops::{Space, VarId};
use crate::Kernel;
use std::fmt;

/// An instruction: its CFG block and its index in the block's `insts`.
pub type InstRef = (BlockId, usize);

/// One kernel argument, in PTX parameter order.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// Raw little-endian bits of a scalar parameter (floats as their IEEE bits).
    Scalar(u64),
    /// A pointer parameter: the buffer's base address.
    Buffer(BufferId),
    /// The bytes of an aggregate (`.param .b8 p[N]`) parameter.
    Bytes(Vec<u8>),
}

impl Arg {
    pub fn f32(x: f32) -> Arg {
        Arg::Scalar(x.to_bits() as u64)
    }
    pub fn f64(x: f64) -> Arg {
        Arg::Scalar(x.to_bits())
    }
    pub fn i32(x: i32) -> Arg {
        Arg::Scalar(x as u32 as u64)
    }
    pub fn u32(x: u32) -> Arg {
        Arg::Scalar(x as u64)
    }
    pub fn i64(x: i64) -> Arg {
        Arg::Scalar(x as u64)
    }
    pub fn u64(x: u64) -> Arg {
        Arg::Scalar(x)
    }
}

/// Default [`Launch::step_limit`].
pub const DEFAULT_STEP_LIMIT: u64 = 100_000_000;

/// The [`InterpError::WarpDivergence`] reason of a lane that runs a warp collective its own
/// member mask does not name (callers tell this divergence from a missing lane by it).
pub const OUTSIDE_OWN_MASK: &str = "the executing lane is not in its own member mask";

#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<Arg>,
    /// Run only these blocks, in this order (to replay a counterexample); `None` runs all.
    pub blocks: Option<Vec<[u32; 3]>>,
    /// Instructions executed by all threads together before [`InterpError::StepLimit`].
    pub step_limit: u64,
    /// Size of the extern (unsized) `.shared` arrays.
    pub dynamic_shared_bytes: u64,
    /// Which accesses [`Trace::accesses`] records (all by default).
    pub recording: Recording,
    /// Record out-of-bounds accesses in [`Trace::out_of_bounds`] and go on (reads give zeros,
    /// writes are dropped) instead of stopping: replay uses it so that one bug does not hide
    /// another later in the kernel. Off by default.
    pub continue_past_out_of_bounds: bool,
    /// Polled while running: a cancelled or expired budget ends the run with
    /// [`InterpError::Stopped`].
    pub budget: crate::budget::Budget,
    /// Exact floats (the default, the equivalence contract) or rounded per instruction as on
    /// hardware (replays that only follow the control flow and addresses floats steer).
    pub float_arithmetic: FloatArithmetic,
}

impl Launch {
    /// A launch of every block, with the default step limit and no dynamic shared memory.
    pub fn new(grid: [u32; 3], block: [u32; 3], args: Vec<Arg>) -> Launch {
        Launch {
            grid,
            block,
            args,
            blocks: None,
            step_limit: DEFAULT_STEP_LIMIT,
            dynamic_shared_bytes: 0,
            recording: Recording::All,
            continue_past_out_of_bounds: false,
            budget: crate::budget::Budget::unlimited(),
            float_arithmetic: FloatArithmetic::Exact,
        }
    }

    pub fn float_arithmetic(mut self, arithmetic: FloatArithmetic) -> Launch {
        self.float_arithmetic = arithmetic;
        self
    }

    pub fn budget(mut self, budget: crate::budget::Budget) -> Launch {
        self.budget = budget;
        self
    }

    pub fn only_blocks(mut self, blocks: Vec<[u32; 3]>) -> Launch {
        self.blocks = Some(blocks);
        self
    }

    pub fn step_limit(mut self, limit: u64) -> Launch {
        self.step_limit = limit;
        self
    }

    pub fn dynamic_shared(mut self, bytes: u64) -> Launch {
        self.dynamic_shared_bytes = bytes;
        self
    }

    pub fn recording(mut self, recording: Recording) -> Launch {
        self.recording = recording;
        self
    }
}

/// Which accesses a run records in [`Trace::accesses`]. Recording is most of a replay's cost
/// on kernels with long loops (an event per access, each with its loop iterations): a GEMM
/// tile's replay records millions of accesses to judge two instructions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Recording {
    #[default]
    All,
    /// None at all (out-of-bounds accesses are still listed, see
    /// [`Launch::continue_past_out_of_bounds`]).
    Off,
    /// Only the accesses of these instructions (built by [`Recording::only`]).
    Only(InstSet),
}

/// Instructions, sorted so that [`Recording::records`] can search them; only
/// [`Recording::only`] builds one, so an unsorted list cannot silently record nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstSet(Vec<InstRef>);

impl Recording {
    /// Only the accesses of `insts` (in any order, repeats allowed).
    pub fn only(mut insts: Vec<InstRef>) -> Recording {
        insts.sort_unstable();
        insts.dedup();
        Recording::Only(InstSet(insts))
    }

    /// Whether an access by instruction `at` is recorded (asked for every access of a run).
    pub fn records(&self, at: InstRef) -> bool {
        match self {
            Recording::All => true,
            Recording::Off => false,
            Recording::Only(InstSet(insts)) => insts.binary_search(&at).is_ok(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Read,
    Write,
    Atomic,
}

/// One memory access by one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessEvent {
    /// `%ctaid` of the accessing thread.
    pub block: [u32; 3],
    /// `%tid` of the accessing thread.
    pub thread: [u32; 3],
    pub inst: InstRef,
    /// The space accessed: generic accesses are recorded as the space they resolved to
    /// (`Global`, `Shared` or `Local`).
    pub space: Space,
    /// Byte address: for `Global`/`Const`, the 64-bit address; for `Shared`, the offset in the
    /// block's shared memory (slot layout, see [`Trace::shared_vars`]); for `Local`, the offset
    /// in the thread's local memory.
    pub addr: u64,
    pub bytes: u32,
    pub kind: AccessKind,
    /// Number of `bar.sync` this thread had passed.
    pub phase: u32,
    /// Current iteration of each enclosing loop, outermost first.
    pub iterations: Vec<(LoopId, u64)>,
    pub line: Option<u32>,
    /// For a plain write: the bits it stored (so two writes of one byte can be seen to store the
    /// same value, a benign race).
    pub written: Option<u64>,
}

/// Where a `.shared` (or `.local`) variable lives in its window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarPlacement {
    pub var: VarId,
    pub name: String,
    pub offset: u64,
    pub size: u64,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// The memory accesses [`Launch::recording`] asks for, in execution order.
    pub accesses: Vec<AccessEvent>,
    /// Instructions executed.
    pub steps: u64,
    /// The blocks that ran (completely, unless the run ended in an error).
    pub blocks_run: Vec<[u32; 3]>,
    /// Placement of the `.shared` variables (extern arrays share the dynamic slot).
    pub shared_vars: Vec<VarPlacement>,
    /// Placement of the `.local` variables.
    pub local_vars: Vec<VarPlacement>,
    /// Out-of-bounds accesses survived with `Launch::continue_past_out_of_bounds`.
    pub out_of_bounds: Vec<AccessEvent>,
}

impl Trace {
    /// The shared variable a shared offset falls in, and the offset inside it.
    pub fn shared_var_at(&self, addr: u64) -> Option<(&VarPlacement, u64)> {
        self.shared_vars.iter().find(|v| addr >= v.offset && addr - v.offset < v.size.max(1)).map(|v| (v, addr - v.offset))
    }
}

/// Where a thread was when a collective or barrier could not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Whereabouts {
    Exited,
    AtBarrier {
        inst: InstRef,
        line: Option<u32>,
        iterations: Vec<(LoopId, u64)>,
    },
    AtCollective {
        inst: InstRef,
        line: Option<u32>,
        iterations: Vec<(LoopId, u64)>,
        mask: Option<u32>,
    },
    /// The lane names no thread of the block (a partial last warp).
    NoSuchThread,
    Running,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InterpError {
    /// An access outside every buffer, outside a shared/local variable, or beyond the shared
    /// allocation. `region` names the nearest buffer or variable, `offset` is the accessed
    /// offset relative to its start.
    OutOfBounds { access: AccessEvent, region: String, region_size: u64, offset: i64 },
    /// The live threads of a block do not all wait at the same barrier, or some have exited.
    /// `inst` is the barrier where the first waiting thread is.
    BarrierDivergence {
        block: [u32; 3],
        inst: InstRef,
        line: Option<u32>,
        iterations: Vec<(LoopId, u64)>,
        arrived: Vec<[u32; 3]>,
        missing: Vec<([u32; 3], Whereabouts)>,
    },
    /// A warp collective whose member mask names a lane that does not arrive at the same
    /// instruction (or another misuse, said in `reason`). Lanes are numbered within `warp`.
    WarpDivergence {
        block: [u32; 3],
        warp: u32,
        inst: InstRef,
        line: Option<u32>,
        mask: u32,
        arrived: Vec<u32>,
        missing: Vec<(u32, Whereabouts)>,
        reason: String,
    },
    /// More than `limit` instructions: the kernel probably does not terminate.
    StepLimit { limit: u64, block: [u32; 3], thread: [u32; 3], inst: InstRef, line: Option<u32> },
    /// An instruction the interpreter cannot execute.
    Unsupported { block: [u32; 3], thread: [u32; 3], inst: InstRef, line: Option<u32>, opcode: String, reason: String },
    /// The launch does not fit the kernel (shape, arguments, limits).
    BadLaunch(String),
    /// The run was cancelled or ran out of time ([`Launch::budget`]).
    Stopped(crate::budget::Stop),
}

impl std::error::Error for InterpError {}

fn tid(t: [u32; 3]) -> String {
    if t[1] == 0 && t[2] == 0 {
        format!("{}", t[0])
    } else {
        format!("({},{},{})", t[0], t[1], t[2])
    }
}

fn at(inst: InstRef, line: Option<u32>) -> String {
    match line {
        Some(l) => format!("line {l} (block {} inst {})", inst.0, inst.1),
        None => format!("block {} inst {}", inst.0, inst.1),
    }
}

fn list<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    const MAX: usize = 6;
    let mut s: Vec<String> = items.iter().take(MAX).map(show).collect();
    if items.len() > MAX {
        s.push(format!("... ({} in all)", items.len()));
    }
    s.join(", ")
}

impl fmt::Display for Whereabouts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Whereabouts::Exited => write!(f, "exited"),
            Whereabouts::AtBarrier { inst, line, iterations } => write!(f, "waits at the barrier at {}{}", at(*inst, *line), iters(iterations)),
            Whereabouts::AtCollective { inst, line, iterations, .. } => write!(f, "waits at the warp collective at {}{}", at(*inst, *line), iters(iterations)),
            Whereabouts::NoSuchThread => write!(f, "is not a thread of the block"),
            Whereabouts::Running => write!(f, "is running"),
        }
    }
}

fn iters(it: &[(LoopId, u64)]) -> String {
    if it.is_empty() {
        String::new()
    } else {
        format!(" in iteration {}", it.iter().map(|(l, i)| format!("{i} of loop {l}")).collect::<Vec<_>>().join(", "))
    }
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterpError::OutOfBounds { access: a, region, region_size, offset } => {
                let kind = match a.kind {
                    AccessKind::Read => "read",
                    AccessKind::Write => "write",
                    AccessKind::Atomic => "atomic",
                };
                write!(
                    f,
                    "out-of-bounds {} {kind} of {} bytes at offset {offset} of `{region}` ({region_size} bytes) by thread {} of block {} at {}",
                    a.space.name(),
                    a.bytes,
                    tid(a.thread),
                    tid(a.block),
                    at(a.inst, a.line)
                )
            }
            InterpError::BarrierDivergence { block, inst, line, iterations, arrived, missing } => write!(
                f,
                "barrier divergence in block {}: {} thread(s) wait at the barrier at {}{} ({}), but {} do not: {}",
                tid(*block),
                arrived.len(),
                at(*inst, *line),
                iters(iterations),
                list(arrived, |t| tid(*t)),
                missing.len(),
                list(missing, |(t, w)| format!("thread {} {w}", tid(*t)))
            ),
            InterpError::WarpDivergence { block, warp, inst, line, mask, arrived, missing, reason } => write!(
                f,
                "warp divergence in block {}, warp {warp}, at {} (member mask {mask:#010x}): {reason}; arrived lanes: [{}]; missing: {}",
                tid(*block),
                at(*inst, *line),
                list(arrived, |l| l.to_string()),
                list(missing, |(l, w)| format!("lane {l} {w}"))
            ),
            InterpError::StepLimit { limit, block, thread, inst, line } => write!(
                f,
                "step limit of {limit} instructions exceeded (the kernel may not terminate); thread {} of block {} was at {}",
                tid(*thread),
                tid(*block),
                at(*inst, *line)
            ),
            InterpError::Unsupported { block, thread, inst, line, opcode, reason } => {
                write!(f, "cannot execute `{opcode}` at {} (thread {} of block {}): {reason}", at(*inst, *line), tid(*thread), tid(*block))
            }
            InterpError::BadLaunch(m) => write!(f, "bad launch: {m}"),
            InterpError::Stopped(crate::budget::Stop::Cancelled) => write!(f, "cancelled"),
            InterpError::Stopped(crate::budget::Stop::Memory) => write!(f, "the memory ceiling for checks was reached"),
            InterpError::Stopped(crate::budget::Stop::Deadline) => write!(f, "the time budget ran out"),
        }
    }
}

/// Runs `kernel` on `launch`, reading and writing `mem`.
#[allow(clippy::result_large_err)]
pub fn run(kernel: &Kernel, launch: &Launch, mem: &mut Memory) -> Result<Trace, InterpError> {
    let (trace, result) = run_traced(kernel, launch, mem);
    result.map(|()| trace)
}

/// Like [`run`], but also returns the trace up to an error.
pub fn run_traced(kernel: &Kernel, launch: &Launch, mem: &mut Memory) -> (Trace, Result<(), InterpError>) {
    exec::execute(kernel, launch, mem, None)
}

/// Like [`run_traced`], with `observer` watching every step (see [`observe`]).
pub fn run_observed(kernel: &Kernel, launch: &Launch, mem: &mut Memory, observer: &mut dyn observe::Observer) -> (Trace, Result<(), InterpError>) {
    exec::execute(kernel, launch, mem, Some(observer))
}
