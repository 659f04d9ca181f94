//! Segment specifications for shared memory, as Lean: for a segment that ends at a barrier, the
//! value each shared cell it wrote holds when a block passes that barrier
//! (`Lark.SharedAgree` over `Lark.Snapshot`s), as nodes of `stateGraph` — the reference's nodes
//! followed by the kernel's own partial results ([`equiv::state`]).
//!
//! These are intermediate statements, not required for a certificate: `correct` follows from
//! the other obligations alone. They are there for proofs, which can establish a segment's
//! shared state once and use it for the segments after it.

use crate::obligations::rat;
use crate::segment::{self, Segment};
use equiv::state::{SharedSpecs, StateNode, StateRef};
use model::Kernel;
use reference::NodeId;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// The most shared cells, and the most nodes of their own, a module states; beyond, the shared
/// specifications are left out (the module would be megabytes no one can read).
pub const MAX_SHARED_CELLS: usize = 20_000;
pub const MAX_STATE_NODES: usize = 20_000;

/// The Lean definitions of the shared specifications.
#[derive(Default)]
pub struct SharedDefs {
    /// `stateGraph` (when a cell needs a node of its own) and one cell list per segment.
    pub defs: String,
    /// Per segment with a specification: its index, the cell list's name, one line for people.
    pub segments: Vec<(usize, String, String)>,
    /// The graph the cells' nodes are in: `stateGraph` or `reference`.
    pub graph: &'static str,
}

/// The reference nodes the specifications name (the reference graph must state them).
pub fn referenced_nodes(specs: &SharedSpecs) -> Vec<NodeId> {
    let from_nodes = specs.nodes.iter().flat_map(|n| n.operands());
    let from_cells = specs.cells.iter().map(|c| c.value);
    from_nodes
        .chain(from_cells)
        .filter_map(|r| match r {
            StateRef::Reference(n) => Some(n),
            StateRef::State(_) => None,
        })
        .collect()
}

/// The cells each segment leaves at its last barrier: at each pass of that barrier, the cells
/// written since the block's previous pass of a barrier that ends a segment (barriers inside a
/// segment, as in an unrolled tree reduction, do not end what it leaves).
fn cells_by_segment<'a>(k: &Kernel, specs: &'a SharedSpecs, segments: &[Segment]) -> BTreeMap<usize, Vec<&'a equiv::state::SharedCellSpec>> {
    let ends: HashMap<usize, usize> = segments.iter().enumerate().filter_map(|(i, s)| segment::last_barrier(k, s).map(|b| (b, i))).collect();
    let ending = |b: model::interp::InstRef| ends.get(&segment::flat_index(k, b.0, b.1)).copied();
    // For each (block, phase) that ends a segment: the phase of the block's previous such pass.
    let mut since: HashMap<(u64, u32), u32> = HashMap::new();
    let mut last: HashMap<u64, u32> = HashMap::new();
    for p in specs.passes.iter().filter(|p| ending(p.barrier).is_some()) {
        since.insert((p.block, p.phase), last.get(&p.block).copied().unwrap_or(0));
        last.insert(p.block, p.phase);
    }
    let mut out: BTreeMap<usize, Vec<_>> = BTreeMap::new();
    for c in &specs.cells {
        let Some(seg) = ending(c.barrier) else { continue };
        if since.get(&(c.block, c.phase)).is_some_and(|&from| c.written >= from) {
            out.entry(seg).or_default().push(c);
        }
    }
    for cells in out.values_mut() {
        cells.sort_by_key(|c| (c.phase, c.block, c.var, c.offset));
    }
    out
}

/// The definitions, with reference nodes numbered by `renumber` (the emitted reference has
/// `reference_len` nodes).
pub fn shared_defs(
    k: &Kernel,
    specs: &SharedSpecs,
    segments: &[Segment],
    renumber: &HashMap<NodeId, usize>,
    reference_len: usize,
    notes: &mut Vec<String>,
) -> SharedDefs {
    let mut out = SharedDefs { graph: "reference", ..SharedDefs::default() };
    if let Some(why) = &specs.missing {
        notes.push(format!("no shared-memory specification: {why}"));
        return out;
    }
    if specs.unmatched && !specs.cells.is_empty() {
        notes.push(format!(
            "shared-memory specifications state the kernel's own terms: the reference ({} nodes at most) or the cells' values ({} terms at most) are too large to compare them with reference nodes",
            equiv::state::MAX_MATCHED_NODES,
            equiv::state::MAX_MATCHED_TERMS
        ));
    }
    for (why, n) in &specs.left_out {
        notes.push(format!("{n} shared cell(s) have no stated value: {why}"));
    }
    let by_segment = cells_by_segment(k, specs, segments);
    let total: usize = by_segment.values().map(Vec::len).sum();
    if total > MAX_SHARED_CELLS {
        notes.push(format!("the segments leave {total} shared cells at their barriers, more than {MAX_SHARED_CELLS} a module states: no shared-memory specification (declare a smaller first shape)"));
        return out;
    }
    // The state nodes the chosen cells reach, numbered after the reference's.
    let mut needed = vec![false; specs.nodes.len()];
    let mut stack: Vec<u32> = by_segment.values().flatten().filter_map(|c| state_index(c.value)).collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut needed[i as usize], true) {
            continue;
        }
        stack.extend(specs.nodes[i as usize].operands().into_iter().filter_map(state_index));
    }
    let own = needed.iter().filter(|n| **n).count();
    if own > MAX_STATE_NODES {
        notes.push(format!("the kernel's partial results in shared memory need {own} scalar operations, more than {MAX_STATE_NODES} a module states: no shared-memory specification (declare a smaller first shape)"));
        return out;
    }
    // Operands come before their users, so numbering the needed nodes in order is enough.
    let state_number: HashMap<u32, usize> = (0..specs.nodes.len()).filter(|&i| needed[i]).enumerate().map(|(k, i)| (i as u32, reference_len + k)).collect();
    let number = |r: StateRef| match r {
        StateRef::Reference(n) => renumber[&n],
        StateRef::State(j) => state_number[&j],
    };
    let rendered: Vec<String> = specs.nodes.iter().enumerate().filter(|(i, _)| needed[*i]).map(|(_, node)| render(node, &number)).collect();
    if !rendered.is_empty() {
        out.graph = "stateGraph";
        out.defs.push_str(
            "/-- The reference's nodes followed by the kernel's partial results that shared memory holds at\nbarriers (the same `RNode`s, numbered on from the reference's). -/\ndef stateGraph : RGraph := reference ++ ([\n",
        );
        const PER_LINE: usize = 6;
        for (line, chunk) in rendered.chunks(PER_LINE).enumerate() {
            let last = (line + 1) * PER_LINE >= rendered.len();
            let _ = writeln!(out.defs, "    /- {} -/ {}{}", reference_len + line * PER_LINE, chunk.join(", "), if last { "" } else { "," });
        }
        out.defs.push_str("  ] : RGraph)\n\n");
    }
    for (seg, cells) in &by_segment {
        let s = &segments[*seg];
        let name = format!("{}_shared", s.name);
        let barrier = segment::last_barrier(k, s).and_then(|b| segment_line(k, b));
        let at = barrier.map_or(String::new(), |l| format!(" at line {l}"));
        let mut vars: Vec<u32> = cells.iter().map(|c| c.var).collect();
        vars.dedup();
        vars.sort_unstable();
        vars.dedup();
        let names: Vec<String> = vars.iter().map(|v| format!("{v} = `{}`", crate::emit::names::comment_text(&k.vars[*v as usize].name))).collect();
        let items: Vec<String> = cells.iter().map(|c| format!("⟨{}, {}, {}, {}, {}⟩", c.var, c.offset, c.block, c.phase, number(c.value))).collect();
        let from_reference = cells.iter().filter(|c| matches!(c.value, StateRef::Reference(_))).count();
        let _ = write!(
            out.defs,
            "/-- What segment `{}` leaves in shared memory when a block passes its barrier{at}: shared\nvariable ({}), byte offset, block, barriers passed, node of `{}`. -/\ndef {name} : List SharedCell := [\n    {}\n  ]\n\n",
            s.name,
            names.join(", "),
            out.graph,
            items.chunks(6).map(|c| c.join(", ")).collect::<Vec<_>>().join(",\n    ")
        );
        let summary = format!(
            "what segment `{}` leaves in shared memory at its barrier{at}: {} cell(s), {from_reference} of them reference sub-expressions (intermediate: not required for the certificate)",
            s.name,
            cells.len()
        );
        out.segments.push((*seg, name, summary));
    }
    out
}

fn state_index(r: StateRef) -> Option<u32> {
    match r {
        StateRef::State(i) => Some(i),
        StateRef::Reference(_) => None,
    }
}

fn segment_line(k: &Kernel, flat: usize) -> Option<u32> {
    k.cfg.blocks.iter().flat_map(|b| b.insts.iter()).nth(flat).and_then(|i| i.line)
}

fn render(node: &StateNode, r: &dyn Fn(StateRef) -> usize) -> String {
    match node {
        StateNode::Input { arg, index } => format!(".input {arg} {index}"),
        StateNode::Const(q) => format!(".const {}", rat(q)),
        StateNode::Add(a, b) => format!(".add {} {}", r(*a), r(*b)),
        StateNode::Sub(a, b) => format!(".sub {} {}", r(*a), r(*b)),
        StateNode::Mul(a, b) => format!(".mul {} {}", r(*a), r(*b)),
        StateNode::Div(a, b) => format!(".div {} {}", r(*a), r(*b)),
        StateNode::Neg(a) => format!(".neg {}", r(*a)),
        StateNode::Max(a, b) => format!(".max {} {}", r(*a), r(*b)),
        StateNode::Min(a, b) => format!(".min {} {}", r(*a), r(*b)),
        StateNode::Unary(f, a) => format!(".unary .{} {}", f.lean_name(), r(*a)),
        StateNode::Cmp(op, a, b) => format!(".cmp .{op} {} {}", r(*a), r(*b)),
        StateNode::Select(c, a, b) => format!(".select {} {} {}", r(*c), r(*a), r(*b)),
    }
}
