//! Messages, rendered from the typed results at the output edge (CLI text, JSON, SARIF, the
//! editor). Nothing upstream stores English: a report moved onto a new version of the text
//! (lines shifted) renders its messages with the new lines.

use crate::report::*;
use crate::witness::Fill;

/// One sentence with the counterexample in it.
pub fn finding_message(f: &Finding) -> String {
    let message = match f.kind {
        FindingKind::Race => race_message(f),
        FindingKind::BarrierDivergence => divergence_message(f),
        FindingKind::OutOfBounds => out_of_bounds_message(f),
        FindingKind::Mismatch => mismatch_message(f),
    };
    let message = match &f.assumed_launch {
        Some(why) => format!("{message} (only under an assumed launch: {why})"),
        None => message,
    };
    let message = match &f.assumed_scalars {
        Some(why) => format!("{message} (only for undeclared scalar values: {why})"),
        None => message,
    };
    match &f.benign {
        Some(why) => format!("{message}; tolerated: {why} (--strict-races reports it as a race)"),
        None => message,
    }
}

fn mismatch_message(f: &Finding) -> String {
    let Some(m) = &f.mismatch else { return "the output differs from the reference".into() };
    let index = m.index.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    let at = f.accesses.first().map_or(String::new(), |a| format!(" (written by thread {} at line {})", thread(f, a.thread), a.location.line));
    let shape = if m.shape.is_empty() { String::new() } else { format!(" for {}", shape(&m.shape)) };
    let formulas = match &m.actual_expr {
        Some(kernel) => format!("the kernel computes {kernel} where the reference computes {}", m.expected_expr),
        None => format!("the reference computes {}", m.expected_expr),
    };
    let message =
        format!("mismatch with the reference{shape}: {}[{index}] is {} but the reference computes {}{at}; {formulas}", m.buffer, m.actual, m.expected);
    match &m.hint {
        Some(hint) => format!("{message} ({hint})"),
        None => message,
    }
}

/// `rows=4, cols=1000`.
pub fn shape(s: &std::collections::BTreeMap<String, i128>) -> String {
    s.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}

fn verb(kind: &str) -> &'static str {
    match kind {
        "read" => "reads",
        "write" => "writes",
        _ => "atomically updates",
    }
}

fn race_message(f: &Finding) -> String {
    let (Some(a1), Some(a2), Some(addr)) = (f.accesses.first(), f.accesses.get(1), &f.address) else { return "data race".into() };
    let (t1, t2) = (thread(f, a1.thread), thread(f, a2.thread));
    let element = addr.element.unwrap_or(addr.offset);
    let target = &addr.target;
    let sep = if f.threads.first().map(|t| t.block) != f.threads.get(1).map(|t| t.block) {
        "in another block (blocks are unordered)"
    } else {
        "with no barrier between them"
    };
    let mut message = format!(
        "data race on {} {target}[{element}]: thread {t1} {} {target}[{element}] at line {} while thread {t2} {} it at line {}, {sep}",
        addr.space,
        verb(a1.kind),
        a1.location.line,
        verb(a2.kind),
        a2.location.line
    );
    message.push_str(&input_suffix(f));
    message
}

/// The index-buffer values a finding needs, and how to exclude it if they cannot occur.
fn input_suffix(f: &Finding) -> String {
    if f.inputs.is_empty() {
        contents_suffix(f)
    } else if f.inputs.iter().all(|i| i.declared) {
        format!(" (with the declared contents {})", inputs(f))
    } else {
        format!(" (with input {}){}", inputs(f), input_hint(f))
    }
}

/// For a finding the replay shows with filled buffers and not with zeros: the buffers whose
/// contents it needs, and how to exclude it if they cannot occur.
fn contents_suffix(f: &Finding) -> String {
    if f.contents_needed.is_empty() {
        return String::new();
    }
    let names = f.contents_needed.iter().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ");
    let fill = match f.witness.fill {
        Some(Fill::One) => "ones",
        Some(Fill::Random(_)) => "small pseudo-random values",
        Some(Fill::Zero) | None => "the replay's values",
    };
    format!(
        " (the replay shows it with {names} filled with {fill}, and not with zeros there); it needs these contents of {names}: if they cannot occur, declare assume = [\"in_range(lo, hi)\"] (or the buffer's values) in lark.toml"
    )
}

/// For a finding that needs particular values in index buffers: how to exclude it if those
/// values cannot occur (for the buffers whose contents the interface does not declare).
fn input_hint(f: &Finding) -> String {
    // Each buffer once, in the order the values are listed (they alternate between buffers
    // when both threads read several).
    let mut buffers: Vec<&str> = Vec::new();
    for i in f.inputs.iter().filter(|i| !i.declared) {
        if !buffers.contains(&i.buffer.as_str()) {
            buffers.push(&i.buffer);
        }
    }
    let names = buffers.iter().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ");
    // Past the end of an array of `n` elements, the bound an index needs is `in_range(0, n)`.
    let elements = f.address.as_ref().and_then(|a| a.size).zip(f.accesses.first()).map(|(size, a)| size / u64::from(a.bytes.max(1)));
    match (f.kind, elements) {
        (FindingKind::OutOfBounds, Some(n)) => {
            format!("; it needs these values of {names}: if they cannot occur, declare assume = [\"in_range(0, {n})\"] (or the buffer's values) in lark.toml")
        }
        _ => format!("; it needs these values of {names}: if they cannot occur, declare assume = [\"injective\"] (or \"in_range(lo, hi)\", or the buffer's values) in lark.toml"),
    }
}

fn divergence_message(f: &Finding) -> String {
    let line = f.barrier.as_ref().map_or(0, |b| b.line);
    match &f.divergence {
        Some(Divergence::Barrier { other }) => {
            format!("barrier divergence at line {line}: thread {} waits at the barrier while thread {} {}", thread(f, 0), thread(f, 1), whereabouts(other))
        }
        Some(Divergence::Warp { warp, mask, lane, other }) => {
            format!("warp divergence at line {line}: member mask {mask:#010x} of warp {warp} names lane {lane}, which {}", whereabouts(other))
        }
        Some(Divergence::OutsideMask { warp, mask, lane }) => format!(
            "warp divergence at line {line}: lane {lane} of warp {warp} runs the warp collective with member mask {mask:#010x}, which does not name it (undefined in the PTX ISA: the executing lane must be in the mask)"
        ),
        None => format!("barrier divergence at line {line}"),
    }
}

fn whereabouts(w: &Whereabouts) -> String {
    match w {
        Whereabouts::Exited => "has exited".into(),
        Whereabouts::AtBarrier { location } => format!("waits at the barrier at line {}", location.line),
        Whereabouts::AtCollective { location } => format!("waits at the warp collective at line {}", location.line),
        Whereabouts::NoSuchThread => "is not a thread of the block".into(),
        Whereabouts::DoesNotArrive => "does not arrive".into(),
    }
}

fn out_of_bounds_message(f: &Finding) -> String {
    let (Some(a), Some(addr)) = (f.accesses.first(), &f.address) else { return "out-of-bounds access".into() };
    let offset = addr.offset as i64;
    let element = addr.element.map_or(offset, |e| e as i64);
    let size = addr.size.map_or(String::new(), |s| format!("; `{}` has {s} bytes", addr.target));
    format!(
        "out-of-bounds {} of {}[{element}] ({} bytes at byte offset {offset}{size}) by thread {} at line {}{}",
        a.kind,
        addr.target,
        a.bytes,
        thread(f, a.thread),
        a.location.line,
        input_suffix(f)
    )
}

fn thread(f: &Finding, i: usize) -> String {
    f.threads.get(i).map_or_else(|| "?".into(), |t| t.to_string())
}

/// `slot_mapping[0] = 1023, slot_mapping[1] = 1023`.
pub fn inputs(f: &Finding) -> String {
    f.inputs.iter().map(|i| format!("{}[{}] = {}", i.buffer, i.element, i.value)).collect::<Vec<_>>().join(", ")
}

/// Loop iterations of an access: `k0=7, k1=0`.
pub fn iterations(a: &AccessReport) -> String {
    a.iterations.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}

fn question(q: Question) -> &'static str {
    match q {
        Question::Race => "race freedom",
        Question::Barrier => "barrier uniformity",
        Question::WarpCollective => "warp-collective uniformity",
        Question::Bounds => "bounds",
    }
}

/// The reason an uncertified region is left open.
pub fn uncertified_message(u: &Uncertified) -> String {
    let here = u.location.as_ref().map(|l| l.line);
    let pair = match (here, u.related.first()) {
        (Some(a), Some(b)) => format!(" between lines {a} and {}", b.line),
        (Some(a), None) => format!(" at line {a}"),
        _ => String::new(),
    };
    match &u.reason {
        Reason::UnsupportedInstruction { opcode, why } => format!("unsupported: `{opcode}`: {why}"),
        Reason::UntrackedAddress { access } => {
            format!("the address of this {access} is not derived from a kernel parameter or a declared variable, so it is not checked")
        }
        Reason::LoadedValues { question: q, buffers } => format!(
            "{}{pair} depends on the values read from {}: declare them in lark.toml, e.g. assume = [\"injective\"] or [\"in_range(lo, hi)\"], or their values",
            question(*q),
            buffers.iter().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ")
        ),
        Reason::SolverTimeout { question: q, millis } => format!("{}{pair} not decided: the solver did not answer within {millis} ms", question(*q)),
        Reason::SolverFailure { question: q, message } => format!("{}{pair} not decided: {message}", question(*q)),
        Reason::BudgetExhausted { question: q } => format!("{}{pair} not decided: the time budget for this kernel ran out before this check", question(*q)),
        Reason::MemoryExhausted { question: q, ceiling_mb } => {
            format!("{}{pair} not decided: the memory ceiling for checks ({ceiling_mb} MB, LARK_MEMORY_MB) was reached before this check", question(*q))
        }
        Reason::Unreproduced { question: q } => match q {
            Question::Race => format!("possible race{pair} that the interpreter did not reproduce; the engine over-approximates here"),
            Question::Barrier => format!("the barrier{pair} may not be reached by all threads; the interpreter did not reproduce it"),
            Question::WarpCollective => {
                format!("the warp collective{pair} may not be reached by every lane its mask names; the interpreter did not reproduce it")
            }
            Question::Bounds => format!("possible out-of-bounds access{pair} that the interpreter did not reproduce"),
        },
        Reason::IncompleteParse { message } => format!("the kernel's body did not parse completely ({message}), so it is not checked"),
        Reason::NotLowered { message } => message.clone(),
        Reason::EngineError { message } => format!("internal error in the engine: {message}"),
        Reason::ReferenceError { file, line, column, message } => format!("the reference {file}:{line}:{column}: {message}"),
        Reason::ShapeNotChecked { shape, why } => format!("equivalence not checked{}: {why}", for_shape(shape)),
        Reason::EquivalenceUnsupported { shape, what } => format!("equivalence not decided{}: {what}", for_shape(shape)),
        Reason::EquivalenceNotProved { shape, output, kernel, reference } => format!(
            "equivalence not proved{} for {output}: the kernel computes {kernel} and the reference {reference}; they agree on the inputs tried but their normal forms differ",
            for_shape(shape)
        ),
    }
}

fn for_shape(shape: &str) -> String {
    if shape.is_empty() {
        String::new()
    } else {
        format!(" for {shape}")
    }
}

pub fn note_message(n: &Note) -> String {
    match n {
        Note::NoInterface { kernel } => format!(
            "no interface for `{kernel}` (lark.toml): checked for every launch within hardware limits with unbounded buffers; declaring the launch makes the check exact and fast"
        ),
        Note::AssumedLaunch { facts } => {
            format!("assumed for the launch the interface leaves open: {}; declare the launch in lark.toml if it is launched otherwise", facts.join("; "))
        }
        Note::InferredLaunch { site, facts } => {
            format!("launch read from its launch site at {site}: {}; declare the launch in lark.toml to check others", facts.join(", "))
        }
        Note::IndexNoWrap => "assumed: signed 32-bit index arithmetic (`row * ld + col` with `0 <= col < ld`) does not overflow, as C++ requires and compilers assume; some races were ruled out on that basis (an index past 2^31 elements would need 64-bit indexing)".into(),
        Note::UnmatchedParameter { name } => format!("the interface names `{name}`, which is not a parameter of this kernel"),
        Note::UnresolvedField { key, why } => format!("the interface's `{key}` names no field this check can place, so it is ignored: {why}"),
        Note::CheckedShapes { shapes } => format!(
            "checked for the shapes the reference binding lists ({}): races, divergence, bounds and equivalence at each; other values within the declared ranges are not covered",
            shapes.join(" · ")
        ),
    }
}
