//! The obligations of one kernel: a Lean module that states, for one launch and one shape, what
//! LARK claims about the kernel, cut along its segments.
//!
//! The module defines the kernel (`lean::emit::kernel_term`), the launch, the segmentation, the
//! interface as `Assumptions` (parameter values, buffers apart and aligned, where the reference's
//! tensors live), the memory extents, and — with a reference bound — the reference as a scalar
//! graph and the output cells each segment writes. Each obligation is a `def … : Prop`, never an
//! axiom and never a theorem with a missing proof:
//!
//! * `race_free`, `barrier_aligned`, `in_bounds`, `completes` (the run finishes without a fault);
//! * per segment that writes outputs, `<segment>_agrees`: every finished run leaves those cells
//!   equal to the reference (its refinement against the reference sub-expressions it computes);
//! * `untouched_agree` for output cells no instruction writes (an in-place buffer's rest);
//! * `correct`, the main statement: race-free, aligned, in bounds, and the outputs equal the
//!   reference's, for every input the interface allows.
//!
//! When the equivalence engine read kernel literals as constants (`1.4426950f` as `log2(e)`),
//! the readings that have a model are stated as `def LiteralConstants (I : Ideal) : Prop`, a
//! hypothesis of the agreement obligations and of `correct` ([`crate::constants`]); the others are
//! named in a comment and in the notes.
//!
//! LARK proves two theorems itself: `segments_cover` (by `decide`: the segmentation is sound) and
//! `correct_of_obligations` (the main statement from the others, a few lines of term-mode
//! proof), and, with literal hypotheses, `literal_constants_satisfiable` (by computation on the
//! model `Ideal.withConstants`). A certificate for an obligation is a theorem `… : LarkGen.<module>.<obligation>` that
//! Lean accepts; each obligation's text is pinned by a SHA-256 of the module's definitions and
//! its own, so a proof is checked against exactly this statement.

use crate::audit::sha256_hex;
use crate::emit::kernel::dim3;
use crate::emit::kernel_term;
use crate::emit::names::{comment_text, lean_ident, lean_string};
use crate::segment::{self, Segment};
use equiv::facts::ShapeFacts;
use model::ops::Space;
use model::Kernel;
use num_traits::{Signed, ToPrimitive};
use reference::{Node, NodeId};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// The most reference nodes and output cells a module states; beyond, the equivalence
/// obligations are left out with a note (the module would be megabytes no one can read).
pub const MAX_REFERENCE_NODES: usize = 50_000;
pub const MAX_OUTPUT_CELLS: usize = 20_000;
/// The longest reference function the module quotes in a comment.
const MAX_SOURCE_LINES: usize = 40;

/// A launch with every dimension known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchFacts {
    pub grid: [u64; 3],
    pub block: [u64; 3],
    pub dynamic_shared_bytes: u64,
}

/// What one parameter is, as far as the interface says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamFact {
    /// A buffer of this many bytes (`None`: unknown size).
    Buffer { bytes: Option<u64> },
    /// A scalar with these raw bits.
    Fixed(u64),
    /// A scalar the interface does not fix.
    Open,
}

/// Everything the generator needs about a kernel.
pub struct Subject<'a> {
    pub kernel: &'a Kernel,
    /// The source file, as the header names it.
    pub source: String,
    /// The name of the module: the namespace is `LarkGen.<module>`.
    pub module: String,
    pub launch: Option<LaunchFacts>,
    /// Per PTX parameter.
    pub params: Vec<ParamFact>,
    /// The reference at one shape, when one is bound and could be evaluated.
    pub facts: Option<&'a ShapeFacts>,
    /// Why there are no `facts` although a reference is bound.
    pub facts_missing: Option<String>,
    /// A validated segmentation; `None` for LARK's own.
    pub segments: Option<Vec<Segment>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ObligationKind {
    RaceFree,
    BarrierAligned,
    InBounds,
    Completes,
    SegmentAgrees,
    /// What a segment leaves in shared memory at its last barrier: an intermediate statement
    /// for proofs, not required for a certificate.
    SegmentEstablishes,
    UntouchedAgree,
    Correct,
}

impl ObligationKind {
    /// Must a certificate prove it? `correct` is LARK's to derive and the shared-memory
    /// specifications are stepping stones.
    pub fn required(self) -> bool {
        !matches!(self, ObligationKind::Correct | ObligationKind::SegmentEstablishes)
    }
}

/// One statement LARK asks Lean to prove.
#[derive(Clone, Debug, Serialize)]
pub struct Obligation {
    /// The `def`'s name in the module.
    pub name: String,
    pub kind: ObligationKind,
    /// `def name : Prop :=` and its body, as in the module.
    pub statement: String,
    /// SHA-256 of the module's definitions and this statement.
    pub hash: String,
    /// The segment it is about (segment agreement obligations).
    pub segment: Option<usize>,
    /// One line for people.
    pub summary: String,
}

/// The generated module and what it contains.
#[derive(Clone, Debug, Serialize)]
pub struct Generated {
    pub module: String,
    pub text: String,
    pub segments: Vec<Segment>,
    pub obligations: Vec<Obligation>,
    /// What the statements leave out, and why.
    pub notes: Vec<String>,
}

impl Generated {
    /// The obligations a certificate must prove (all but `correct`, which LARK derives, and the
    /// intermediate shared-memory specifications).
    pub fn open_obligations(&self) -> impl Iterator<Item = &Obligation> {
        self.obligations.iter().filter(|o| o.kind.required())
    }
}

/// The binders every obligation quantifies over; an equivalence obligation of a module with
/// literal hypotheses (`crate::constants`) also assumes `LiteralConstants I`.
fn binders(literal_constants: bool) -> String {
    format!(
        "∀ (I : Ideal) (inputs : Inputs) (arg : Nat → Nat) (x : Nat → Nat → Rat),\n    {}Assumptions inputs arg x →",
        if literal_constants { "LiteralConstants I → " } else { "" }
    )
}

pub fn generate(s: &Subject) -> Generated {
    let k = s.kernel;
    // The kernel is `kernel` in every module, so that no kernel name can clash with the names
    // the module defines (`launch`, `reference`, `correct`, ...).
    let ident = "kernel".to_string();
    let ns = format!("LarkGen.{}", lean_ident(&s.module));
    let segments = s.segments.clone().unwrap_or_else(|| segment::propose(k));
    let mut notes = Vec::new();
    let mut defs = String::new();
    let header = header(s, &mut notes);
    defs.push_str(&header);
    let _ = write!(defs, "namespace {ns}\n\nopen Lark\n\n");
    let _ = write!(
        defs,
        "/-- PTX kernel `{}`: {} blocks, {} registers, {} parameters. -/\ndef kernel : Kernel :=\n  {}\n\n",
        comment_text(&k.name).replace("-/", "- /"),
        k.cfg.blocks.len(),
        k.regs.len(),
        k.params.len(),
        kernel_term(k, 2)
    );
    defs.push_str(&segments_def(&segments));
    let Some(launch) = s.launch else {
        notes.push("the launch is not fixed (declare `grid` and `block` in lark.toml): no obligation is stated, only the kernel and its segments".into());
        let mut text = defs;
        text.push_str(&segments_theorems(&ident));
        let _ = writeln!(text, "end {ns}");
        return Generated { module: ns, text, segments, obligations: vec![], notes };
    };
    let _ = write!(
        defs,
        "/-- The launch the obligations are about. -/\ndef launch : Launch :=\n  {{ grid := {}\n    block := {}\n    dynamicSharedBytes := {} }}\n\n",
        dim3(launch.grid[0], launch.grid[1], launch.grid[2]),
        dim3(launch.block[0], launch.block[1], launch.block[2]),
        launch.dynamic_shared_bytes
    );
    // The readings of literals as constants the engine used: hypotheses, or reference constants
    // stated at the literal's value (equivalence only).
    let literals = match s.facts {
        Some(f) if !f.literal_constants.is_empty() => crate::constants::plan(&f.literal_constants, &f.graph),
        _ => crate::constants::Plan::default(),
    };
    let equivalence = s.facts.and_then(|f| match reference_defs(k, f, &segments, &literals.restated) {
        Ok(mut r) => {
            notes.append(&mut r.notes);
            Some(r)
        }
        Err(why) => {
            notes.push(why);
            None
        }
    });
    if let Some(why) = &s.facts_missing {
        notes.push(format!("no equivalence obligation: {why}"));
    }
    let literals = if equivalence.is_some() { literals } else { crate::constants::Plan::default() };
    notes.extend(literals.notes());
    let hypothesis = !literals.stated.is_empty();
    if let Some(eq) = &equivalence {
        defs.push_str(&eq.defs);
        defs.push_str(&literals.defs());
    } else {
        defs.push_str("/-- No reference is stated: nothing binds the inputs. -/\ndef inputBindings : List InputBinding := []\n\n");
    }
    defs.push_str(&assumptions_def(k, s, &mut notes));
    let extents = extents_def(k, s, launch);
    if let Some(e) = &extents {
        defs.push_str(e);
    } else {
        notes.push("some buffer's size is not declared (`len` in lark.toml): no in-bounds obligation".into());
    }

    // The obligations.
    let launch_args = format!("{ident} I launch inputs");
    let mut items: Vec<(String, ObligationKind, Option<usize>, String, String)> = vec![
        (
            "race_free".into(),
            ObligationKind::RaceFree,
            None,
            format!("RaceFree {launch_args}"),
            "no two threads race on a byte of shared or global memory".into(),
        ),
        (
            "barrier_aligned".into(),
            ObligationKind::BarrierAligned,
            None,
            format!("BarrierAligned {launch_args}"),
            "every barrier and warp collective is reached by all the threads it waits for".into(),
        ),
    ];
    if extents.is_some() {
        items.push((
            "in_bounds".into(),
            ObligationKind::InBounds,
            None,
            format!("InBounds (extents inputs arg) {launch_args}"),
            "every access lies inside a declared buffer or shared array".into(),
        ));
    }
    items.push(("completes".into(), ObligationKind::Completes, None, format!("∃ g, Computes {launch_args} g"), "the kernel finishes without a fault".into()));
    if let Some(eq) = &equivalence {
        for (seg, cells) in &eq.segment_cells {
            let name = format!("{}_agrees", segments[*seg].name);
            items.push((
                name,
                ObligationKind::SegmentAgrees,
                Some(*seg),
                format!("∀ g, Computes {launch_args} g →\n      OutputsAgree g arg (RGraph.value I x reference) {cells}"),
                format!("the output cells segment `{}` stores equal the reference", segments[*seg].name),
            ));
        }
        for (seg, cells, summary) in &eq.shared.segments {
            items.push((
                format!("{}_establishes", segments[*seg].name),
                ObligationKind::SegmentEstablishes,
                Some(*seg),
                format!(
                    "∀ fuel r, runKernel {launch_args} fuel = some r →\n      SharedAgree inputs r.snapshots (RGraph.value I x {}) {cells}",
                    eq.shared.graph
                ),
                summary.clone(),
            ));
        }
        if eq.untouched {
            items.push((
                "untouched_agree".into(),
                ObligationKind::UntouchedAgree,
                None,
                format!("∀ g, Computes {launch_args} g →\n      OutputsAgree g arg (RGraph.value I x reference) untouchedCells"),
                "the output cells no instruction stores to already hold the reference's values".into(),
            ));
        }
    }
    let mut main = vec!["RaceFree".to_string(), "BarrierAligned".to_string()];
    if extents.is_some() {
        main.push("InBounds (extents inputs arg)".into());
    }
    let mut main: Vec<String> = main.into_iter().map(|p| format!("{p} {launch_args}")).collect();
    main.push(match equivalence {
        Some(_) => format!("∃ g, Computes {launch_args} g ∧\n        OutputsAgree g arg (RGraph.value I x reference) outputCells"),
        None => format!("∃ g, Computes {launch_args} g"),
    });
    items.push((
        "correct".into(),
        ObligationKind::Correct,
        None,
        main.join(" ∧\n      "),
        if equivalence.is_some() {
            "the kernel is race-free, aligned and in bounds, and leaves the reference's values in its outputs".into()
        } else {
            "the kernel is race-free, aligned and in bounds, and finishes".into()
        },
    ));

    let mut text = defs.clone();
    text.push_str("/-! ## Obligations\n\nEach is a proposition for a certificate to prove; none is assumed. -/\n\n");
    let mut obligations = Vec::new();
    for (name, kind, segment, body, summary) in items {
        let assumes = hypothesis
            && matches!(kind, ObligationKind::SegmentAgrees | ObligationKind::SegmentEstablishes | ObligationKind::UntouchedAgree | ObligationKind::Correct);
        let statement = format!("def {name} : Prop :=\n  {}\n      {body}", binders(assumes));
        let hash = sha256_hex(&format!("{defs}{statement}"));
        let _ = write!(text, "/-- {} (pinned: sha256 {}). -/\n{statement}\n\n", comment_text(&summary), &hash[..16]);
        obligations.push(Obligation { name, kind, statement, hash, segment, summary });
    }
    text.push_str("/-! ## Proved by LARK (checked by Lean when this module is built) -/\n\n");
    text.push_str(&segments_theorems(&ident));
    text.push_str(&literals.satisfiable_theorem());
    text.push_str(&correct_proof(&obligations, hypothesis));
    let _ = writeln!(text, "end {ns}");
    Generated { module: ns, text, segments, obligations, notes }
}

fn header(s: &Subject, notes: &mut Vec<String>) -> String {
    let mut h = format!("-- Generated by LARK from `{}`, kernel `{}` — do not edit.\n", comment_text(&s.source), comment_text(&s.kernel.name));
    if let Some(f) = s.facts {
        let shape: Vec<String> = f.scalars.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let _ = writeln!(h, "-- Stated at the shape {}.", if shape.is_empty() { "of the interface".into() } else { shape.join(", ") });
        for n in &f.notes {
            notes.push(n.clone());
        }
    }
    h.push_str("-- Floats are exact rationals and `exp`, `sqrt`, … the ideal functions of an `Ideal` (lean/README.md).\nimport Lark\n\n");
    h
}

fn segments_def(segments: &[Segment]) -> String {
    let mut out = String::from("/-- The kernel's instructions cut into segments (`Lark.Segment`). -/\ndef segments : List Segment := [\n");
    for (i, s) in segments.iter().enumerate() {
        let lines = s.lines.map_or(String::new(), |(a, b)| if a == b { format!(", line {a}") } else { format!(", lines {a}–{b}") });
        let _ = writeln!(
            out,
            "    {{ name := {}, start := {}, stop := {} }}{}  -- {}{lines}",
            lean_string(&s.name),
            s.start,
            s.stop,
            if i + 1 < segments.len() { "," } else { "" },
            comment_text(&s.title)
        );
    }
    out.push_str("  ]\n\n");
    out
}

fn segments_theorems(kernel: &str) -> String {
    format!(
        "/-- The segmentation is sound: its segments are non-empty, contiguous and cover the kernel. -/\n\
         theorem segments_cover : covers segments 0 {kernel}.flatInsts.length = true := by decide\n\n\
         /-- The segments' instructions, concatenated, are the kernel's. -/\n\
         theorem segments_concat : segmentInsts segments {kernel}.flatInsts = {kernel}.flatInsts :=\n  \
         concat_segmentInsts {kernel} segments segments_cover\n\n"
    )
}

/// LARK's proof of `correct` from the other obligations. With literal hypotheses, `correct`
/// and the agreement obligations assume `LiteralConstants I` (`hc`), the others do not.
fn correct_proof(obligations: &[Obligation], literal_constants: bool) -> String {
    let hyp = |o: &Obligation| format!("h_{}", o.name);
    let open: Vec<&Obligation> = obligations.iter().filter(|o| o.kind.required()).collect();
    let binders: Vec<String> = open.iter().map(|o| format!("({} : {})", hyp(o), o.name)).collect();
    let apply = |o: &Obligation| {
        let agreement = matches!(o.kind, ObligationKind::SegmentAgrees | ObligationKind::UntouchedAgree);
        format!("{} I inputs arg x{} h", hyp(o), if literal_constants && agreement { " hc" } else { "" })
    };
    let intro = if literal_constants { "I inputs arg x hc h" } else { "I inputs arg x h" };
    let mut parts: Vec<String> = open
        .iter()
        .filter(|o| matches!(o.kind, ObligationKind::RaceFree | ObligationKind::BarrierAligned | ObligationKind::InBounds))
        .map(|o| apply(o))
        .collect();
    parts.push("g".into());
    parts.push("hg".into());
    let agrees: Vec<String> = open
        .iter()
        .filter(|o| matches!(o.kind, ObligationKind::SegmentAgrees | ObligationKind::UntouchedAgree))
        .map(|o| format!("({} g hg)", apply(o)))
        .collect();
    if let Some(last) = agrees.last() {
        // outputCells is the segments' cells appended from the right: `a ++ (b ++ c)`.
        let proof = agrees[..agrees.len() - 1].iter().rev().fold(last.clone(), |acc, a| format!("(OutputsAgree.append {a} {acc})"));
        parts.push(proof);
    }
    let completes = open.iter().find(|o| o.kind == ObligationKind::Completes).map(|o| apply(o)).unwrap_or_default();
    format!(
        "/-- The main statement follows from the obligations above (LARK's proof). -/\n\
         theorem correct_of_obligations\n    {} :\n    correct := by\n  \
         intro {intro}\n  obtain ⟨g, hg⟩ := {completes}\n  exact ⟨{}⟩\n\n",
        binders.join("\n    "),
        parts.join(",\n    ")
    )
}

fn assumptions_def(k: &Kernel, s: &Subject, notes: &mut Vec<String>) -> String {
    let n = k.params.len();
    let args: Vec<String> = (0..n).map(|i| format!("arg {i}")).collect();
    let mut facts = vec![format!("inputs.args = [{}]", args.join(", "))];
    let mut buffers = Vec::new();
    for (i, p) in s.params.iter().enumerate().take(n) {
        let bits = k.params[i].bits.max(k.params[i].bytes * 8).min(64);
        match p {
            ParamFact::Fixed(v) => facts.push(format!("arg {i} = {v}")),
            ParamFact::Open => facts.push(format!("arg {i} < 2 ^ {bits}")),
            ParamFact::Buffer { bytes: Some(b) } => buffers.push(format!("({i}, {b})")),
            ParamFact::Buffer { bytes: None } => {
                notes.push(format!("parameter {i} (`{}`) is a buffer of undeclared size: it is assumed apart from no other", k.params[i].name));
            }
        }
    }
    facts.push(format!("BuffersApart arg [{}]", buffers.join(", ")));
    let dynamic = s.launch.map_or(0, |l| l.dynamic_shared_bytes);
    let shared: Vec<String> = k
        .vars
        .iter()
        .enumerate()
        .filter(|(_, v)| v.space == Space::Shared)
        .map(|(i, v)| format!("({i}, {}, {})", v.size.unwrap_or(dynamic), v.align.max(1)))
        .collect();
    if !shared.is_empty() {
        facts.push(format!("SharedApart inputs [{}]", shared.join(", ")));
    }
    if k.vars.iter().any(|v| matches!(v.space, Space::Global | Space::Const)) {
        notes.push("the kernel uses module-scope `.global`/`.const` variables: their placement and initial contents are not among the assumptions".into());
    }
    facts.push("InputsHold inputs.global arg x inputBindings".into());
    format!(
        "/-- What the interface says about a launch's inputs: parameter `i` is passed `arg i` (an address\nfor a buffer), buffers and shared arrays are aligned and apart, and the reference's tensors `x`\nare in the buffers. -/\n\
         def Assumptions (inputs : Inputs) (arg : Nat → Nat) (x : Nat → Nat → Rat) : Prop :=\n  {}\n\n",
        facts.join(" ∧\n  ")
    )
}

fn extents_def(k: &Kernel, s: &Subject, launch: LaunchFacts) -> Option<String> {
    let mut items = Vec::new();
    for (i, p) in s.params.iter().enumerate() {
        match p {
            ParamFact::Buffer { bytes: Some(b) } => items.push(format!("{{ region := .global, base := arg {i}, size := {b} }}")),
            ParamFact::Buffer { bytes: None } => return None,
            _ => {}
        }
    }
    for (v, info) in k.vars.iter().enumerate() {
        let size = info.size.or((info.space == Space::Shared).then_some(launch.dynamic_shared_bytes));
        let Some(size) = size else { continue };
        let addr = format!("(inputs.varAddr {v})");
        match info.space {
            Space::Shared => items.push(format!("{{ region := .shared, base := (windowOffset sharedBase {addr}).toNat, size := {size} }}")),
            Space::Global | Space::Const => items.push(format!("{{ region := .global, base := {addr}.toNat, size := {size} }}")),
            _ => {}
        }
    }
    Some(format!(
        "/-- Where the kernel may access memory: its buffers and its shared and global arrays. -/\n\
         def extents (inputs : Inputs) (arg : Nat → Nat) : List Extent := [\n    {}\n  ]\n\n",
        items.join(",\n    ")
    ))
}

/// The reference, its bindings and the output cells grouped by the segment that stores them.
struct ReferenceDefs {
    defs: String,
    /// Per segment that stores outputs: the name of its cell list.
    segment_cells: Vec<(usize, String)>,
    untouched: bool,
    /// What segments leave in shared memory.
    shared: crate::shared_state::SharedDefs,
    notes: Vec<String>,
}

fn reference_defs(k: &Kernel, f: &ShapeFacts, segments: &[Segment], restated: &[crate::constants::Restated]) -> Result<ReferenceDefs, String> {
    if let Some(b) = f.buffers.iter().find(|b| b.zeroed) {
        return Err(format!(
            "`{}` is zeroed before the launch (`assume = [\"zeroed\"]`), which the Lean model does not state: no equivalence obligation",
            b.name
        ));
    }
    let restated_at: HashMap<NodeId, &crate::constants::Restated> = restated.iter().map(|r| (r.node, r)).collect();
    if f.outputs.len() > MAX_OUTPUT_CELLS {
        return Err(format!("the reference has {} output elements at this shape, more than {MAX_OUTPUT_CELLS} a module states: no equivalence obligation (declare a smaller first shape)", f.outputs.len()));
    }
    // The nodes the outputs reach, in creation order (operands before their users).
    let mut reach = vec![false; f.graph.len()];
    let mut stack: Vec<NodeId> = f.outputs.iter().map(|o| o.root).collect();
    if f.shared.missing.is_none() {
        stack.extend(crate::shared_state::referenced_nodes(&f.shared));
    }
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut reach[id.index()], true) {
            continue;
        }
        if let (Some(n), false) = (f.graph.get(id), restated_at.contains_key(&id)) {
            stack.extend(n.children());
        }
    }
    let order: Vec<NodeId> = (0..f.graph.len()).filter(|i| reach[*i]).map(|i| NodeId(i as u32)).collect();
    if order.len() > MAX_REFERENCE_NODES {
        return Err(format!(
            "the reference needs {} scalar operations at this shape, more than {MAX_REFERENCE_NODES} a module states: no equivalence obligation (declare a smaller first shape)",
            order.len()
        ));
    }
    let renumber: HashMap<NodeId, usize> = order.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut nodes = Vec::with_capacity(order.len());
    for id in &order {
        let node = f.graph.get(*id).ok_or("a reference node is missing")?;
        let r = |c: &NodeId| renumber[c];
        let term = match node {
            _ if restated_at.contains_key(id) => format!(".const {}", rat(&restated_at[id].value)),
            Node::Input { arg, index } => format!(".input {arg} {index}"),
            Node::Const(q) => format!(".const {}", rat(q)),
            Node::Pi => ".pi".into(),
            Node::E => ".e".into(),
            Node::Add(a, b) => format!(".add {} {}", r(a), r(b)),
            Node::Sub(a, b) => format!(".sub {} {}", r(a), r(b)),
            Node::Mul(a, b) => format!(".mul {} {}", r(a), r(b)),
            Node::Div(a, b) => format!(".div {} {}", r(a), r(b)),
            Node::Neg(a) => format!(".neg {}", r(a)),
            Node::Pow(a, e) => format!(".pow {} ({e})", r(a)),
            Node::Unary(fun, a) => format!(".unary .{} {}", fun.name(), r(a)),
            Node::Max(a, b) => format!(".max {} {}", r(a), r(b)),
            Node::Min(a, b) => format!(".min {} {}", r(a), r(b)),
            Node::Cmp(op, a, b) => format!(".cmp .{} {} {}", format!("{op:?}").to_lowercase(), r(a), r(b)),
            Node::Select(c, a, b) => format!(".select {} {} {}", r(c), r(a), r(b)),
            Node::FloorDiv(a, b) => format!(".floorDiv {} {}", r(a), r(b)),
            Node::Mod(a, b) => format!(".mod {} {}", r(a), r(b)),
        };
        nodes.push(term);
    }
    let mut doc = String::from(
        "The reference at this shape as a scalar graph (`Lark.RGraph`): node `i` is computed from\ninput elements `.input arg index`, constants, and earlier nodes by their numbers. Each line\nstarts with the number of its first node.",
    );
    let mut shown: Vec<&crate::constants::Restated> = restated.iter().filter(|r| renumber.contains_key(&r.node)).collect();
    shown.sort_by_key(|r| renumber[&r.node]);
    if !shown.is_empty() {
        doc.push_str(
            "\n\nConstants stated at the value of the kernel's literal (PyTorch converts a Python scalar to a\n`float32` tensor's type before using it; rounding is out of scope, ARCHITECTURE.md):",
        );
        for r in shown {
            let _ = write!(doc, "\n* node {}: {}", renumber[&r.node], comment_text(&r.about));
        }
    }
    // The PyTorch function itself, for people (a Lean comment may not open or close another).
    let source: Vec<&str> = f.reference_source.lines().collect();
    if !source.is_empty() && source.len() <= MAX_SOURCE_LINES {
        let text = source.join("\n").replace("/-", "/ -").replace("-/", "- /");
        let _ = write!(doc, "\n\nThe PyTorch reference it is evaluated from:\n\n```python\n{text}\n```\n");
    }
    let close = if doc.ends_with('\n') { "-/" } else { " -/" };
    let mut defs = format!("/-- {doc}{close}\ndef reference : RGraph := [\n");
    const PER_LINE: usize = 6;
    for (line, chunk) in nodes.chunks(PER_LINE).enumerate() {
        let last = (line + 1) * PER_LINE >= nodes.len();
        let _ = writeln!(defs, "    /- {} -/ {}{}", line * PER_LINE, chunk.join(", "), if last { "" } else { "," });
    }
    defs.push_str("  ]\n\n");
    let bindings: Vec<String> = f
        .buffers
        .iter()
        .filter_map(|b| {
            b.arg.map(|arg| format!("{{ arg := {arg}, param := {}, count := {}, bytes := {}, float := {} }}", b.param, b.len, b.elem_bytes, b.float))
        })
        .collect();
    let _ = write!(
        defs,
        "/-- Where the reference's tensor arguments live in the kernel's buffers. -/\ndef inputBindings : List InputBinding := [\n    {}\n  ]\n\n",
        bindings.join(",\n    ")
    );
    // Output cells by the segment whose store wrote them last.
    let mut by_segment: BTreeMap<Option<usize>, Vec<String>> = BTreeMap::new();
    for o in &f.outputs {
        let seg = o.writer.and_then(|(b, i)| segment::segment_of(segments, segment::flat_index(k, b, i)));
        by_segment.entry(seg).or_default().push(format!("⟨{}, {}, {}⟩", o.param, o.byte_offset, renumber[&o.root]));
    }
    let mut names = Vec::new();
    let mut segment_cells = Vec::new();
    let mut untouched = false;
    for (seg, cells) in &by_segment {
        let (name, doc) = match seg {
            Some(s) => (
                format!("{}_cells", segments[*s].name),
                format!("The output cells segment `{}` stores last: parameter, byte offset, reference node.", segments[*s].name),
            ),
            None => {
                untouched = true;
                ("untouchedCells".to_string(), "The output cells no instruction stores to: parameter, byte offset, reference node.".to_string())
            }
        };
        let _ = write!(defs, "/-- {doc} -/\ndef {name} : List OutputCell := [\n    {}\n  ]\n\n", wrap(cells, 6));
        if let Some(s) = seg {
            segment_cells.push((*s, name.clone()));
        }
        names.push(name);
    }
    // Segment cells first, untouched last, matching the order of the obligations.
    names.sort_by_key(|n| n == "untouchedCells");
    let all = match names.split_last() {
        Some((last, rest)) => rest.iter().rev().fold(last.clone(), |acc, n| format!("{n} ++ ({acc})")),
        None => "[]".into(),
    };
    let _ = write!(defs, "/-- Every output cell. -/\ndef outputCells : List OutputCell := {all}\n\n");
    let mut notes = Vec::new();
    let shared = crate::shared_state::shared_defs(k, &f.shared, segments, &renumber, order.len(), &mut notes);
    defs.push_str(&shared.defs);
    Ok(ReferenceDefs { defs, segment_cells, untouched, shared, notes })
}

/// A rational as a Lean `Rat` term.
pub(crate) fn rat(q: &num_rational::BigRational) -> String {
    let num = q.numer();
    let den = q.denom();
    if den.to_u64() == Some(1) {
        if num.is_negative() {
            format!("(mkRat ({num}) 1)")
        } else {
            format!("(mkRat {num} 1)")
        }
    } else if num.is_negative() {
        format!("(mkRat ({num}) {den})")
    } else {
        format!("(mkRat {num} {den})")
    }
}

/// Items separated by `, `, `per_line` to a line.
fn wrap(items: &[String], per_line: usize) -> String {
    items.chunks(per_line).map(|c| c.join(", ")).collect::<Vec<_>>().join(",\n    ")
}

/// The launch and what each parameter is, from the interface and (when a reference is bound)
/// the shape the obligations are stated at, whose values win.
pub fn interface_facts(
    k: &Kernel,
    spec: Option<&spec::KernelSpec>,
    source_names: Option<&[String]>,
    facts: Option<&ShapeFacts>,
) -> (Option<LaunchFacts>, Vec<ParamFact>) {
    let binding = check::Binding::new(k, spec, source_names);
    let launch = match facts {
        Some(f) => Some(LaunchFacts { grid: f.grid.map(u64::from), block: f.block.map(u64::from), dynamic_shared_bytes: f.dynamic_shared_bytes }),
        None => (|| {
            let dims = |d: &[spec::DimRange; 3]| Some([d[0].value()?, d[1].value()?, d[2].value()?]);
            Some(LaunchFacts { grid: dims(&binding.grid)?, block: dims(&binding.block)?, dynamic_shared_bytes: binding.dynamic_shared_bytes.unwrap_or(0) })
        })(),
    };
    let params = (0..k.params.len() as u32)
        .map(|i| {
            if let Some(b) = facts.and_then(|f| f.buffers.iter().find(|b| b.param == i)) {
                return ParamFact::Buffer { bytes: Some(b.len * b.elem_bytes) };
            }
            if let Some(bits) = facts.and_then(|f| f.scalar_args.get(&i)) {
                return ParamFact::Fixed(*bits);
            }
            let width = k.params[i as usize].bits;
            match binding.params.get(i as usize).and_then(|p| p.as_ref()) {
                Some(spec::ParamSpec::Buffer { .. }) => ParamFact::Buffer {
                    bytes: match binding.buffer_bytes(i) {
                        Some(check::ByteSize::Fixed(n)) => Some(n),
                        _ => None,
                    },
                },
                Some(spec::ParamSpec::Scalar { value: Some(spec::Scalar::Int(v)), .. }) => ParamFact::Fixed((*v as u64) & model::ops::mask(width.max(1))),
                Some(spec::ParamSpec::Scalar { value: Some(spec::Scalar::Float(f)), .. }) => {
                    ParamFact::Fixed(if width == 32 { u64::from((*f as f32).to_bits()) } else { f.to_bits() })
                }
                Some(spec::ParamSpec::Scalar { .. }) => ParamFact::Open,
                // Undeclared: a 64-bit parameter may be a pointer, so it is treated as a buffer of
                // unknown size (which only leaves the in-bounds obligation out).
                None if width == 64 => ParamFact::Buffer { bytes: None },
                None => ParamFact::Open,
            }
        })
        .collect();
    (launch, params)
}
