//! What the Lean obligations state about a kernel and its reference at one shape: the launch,
//! where the reference's tensors live in the kernel's buffers, the reference's scalar graph, and
//! which store instruction last wrote each output cell (so that each segment of the kernel can be
//! given the output cells it is responsible for).
//!
//! The facts come from one concrete run with the symbolic shadow, the same run the equivalence
//! check starts with; nothing here decides equivalence. They include which kernel literals the
//! engine reads as constants of the reference or of its catalogue (`1.4426950f` as `log2(e)`),
//! so that the Lean module can state those readings as hypotheses instead of leaving the
//! literal's exact value where the proof needs the constant.

use crate::constants::{Constants, Origin};
use crate::nf::Nf;
use crate::setup::{self, BufferRole, Draw};
use crate::shadow::Shadow;
use crate::state::{self, SharedSpecs};
use crate::term::{FloatValKey, Term, TermId};
use crate::Request;
use model::interp::{self, InstRef};
use num_rational::BigRational;
use reference::NodeId;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A kernel buffer at the shape.
#[derive(Clone, Debug)]
pub struct BufferFact {
    pub param: u32,
    pub name: String,
    pub elem_bytes: u64,
    pub len: u64,
    pub float: bool,
    /// The reference tensor argument whose elements it holds, when it is one.
    pub arg: Option<u32>,
    /// The caller zeroes it before the launch (`assume = ["zeroed"]`).
    pub zeroed: bool,
}

/// One output element: where the kernel must leave it, the reference node it must equal, and
/// the store instruction that wrote it last (none when the kernel left it untouched).
#[derive(Clone, Debug)]
pub struct OutputCell {
    pub param: u32,
    pub byte_offset: u64,
    pub root: NodeId,
    pub writer: Option<InstRef>,
}

/// A literal of the kernel that the equivalence engine reads as a constant (see
/// [`crate::constants`]): exactly the replacements `Constants::recognise` makes for the literals
/// the outputs and the run's path conditions depend on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LiteralConstant {
    /// The literal's width in bits.
    pub bits: u32,
    /// The literal's exact value.
    pub value: BigRational,
    /// The constant it is read as.
    pub origin: Origin,
    /// Read as the negation of that constant (`-1.4426950f` as `-log2(e)`).
    pub negated: bool,
    /// Read as the reciprocal of that constant (`0.0883883f` as `1/sqrt(128)`), before any
    /// negation.
    pub reciprocal: bool,
    /// The engine's name for the constant (`log2(e)`, `reference constant #3`).
    pub name: String,
}

/// Everything the obligations of one shape need.
pub struct ShapeFacts {
    /// The scalar values of the shape, by name.
    pub scalars: BTreeMap<String, i128>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u64,
    /// Scalar parameters' raw bits, by PTX parameter index.
    pub scalar_args: HashMap<u32, u64>,
    pub buffers: Vec<BufferFact>,
    pub graph: reference::Graph,
    pub outputs: Vec<OutputCell>,
    /// What the reference's lowering assumed (casts as identities, ...).
    pub notes: Vec<String>,
    /// The literals the engine reads as constants, sorted, without duplicates.
    pub literal_constants: Vec<LiteralConstant>,
    /// What the kernel leaves in shared memory at its barriers ([`crate::state`]).
    pub shared: SharedSpecs,
    /// The reference function's source text, as the `.py` file writes it.
    pub reference_source: String,
}

/// The facts of the first shape the interface lists; `Err` says why there are none.
pub fn shape_facts(req: &Request) -> Result<ShapeFacts, String> {
    let reference = req.spec.reference.as_ref().ok_or("the kernel has no reference bound")?;
    let program = reference::parse(req.reference_text, reference.function.as_deref()).map_err(|e| {
        let (line, column) = e.line_col(req.reference_text);
        format!("{}:{line}:{column}: {}", req.reference_file, e.message)
    })?;
    let reference_source = req.reference_text.get(program.entry_function().span.clone()).unwrap_or_default().to_string();
    let shapes = setup::shapes(req.spec, reference).map_err(|e| e.to_string())?;
    let scalars = shapes.into_iter().next().ok_or("the interface lists no shape to check")?;
    let plan = setup::plan(req.kernel, req.spec, req.source_names, &req.sources.field_names, &scalars).map_err(|e| e.to_string())?;
    // The Lean model binds the reference's tensors to the kernel's arguments; a buffer behind a
    // pointer inside a struct is not one of them.
    if let Some(b) = plan.buffers.iter().find(|b| b.field.is_some()) {
        return Err(format!("`{}` is a pointer inside a struct passed by value, which the Lean obligations do not state yet", b.name));
    }
    let lowered = reference::lower(&program, &plan.ref_args).map_err(|e| {
        let (line, column) = e.line_col(req.reference_text);
        format!("{}:{line}:{column}: {}", req.reference_file, e.message)
    })?;
    let mut run = setup::prepare(req.kernel, &plan, Draw::Integers(1), &req.budget);
    let roles = setup::roles(&plan, &run);
    let mut shadow = Shadow::new(req.kernel, roles);
    shadow.record_shared_states();
    let (trace, result) = interp::run_observed(req.kernel, &run.launch, &mut run.mem, &mut shadow);
    result.map_err(|e| format!("the kernel does not run at {}: {e:?}", check::render::shape(&scalars)))?;
    let mut outputs = Vec::new();
    let mut roots: Vec<TermId> = shadow.path_conditions.iter().map(|p| p.term).collect();
    for (o, lo) in lowered.outputs.iter().enumerate() {
        let p = &plan.outputs[o];
        let b = plan.buffers.iter().find(|b| b.param == p.param).ok_or_else(|| format!("output `{}` is bound to no buffer", p.buffer))?;
        let w = b.dtype.bytes();
        let id = run.ids[&p.param];
        for (flat, root) in lo.elements.iter().enumerate() {
            let byte_offset = p.element(flat) * w;
            let writer = shadow.stores.get(&(id, byte_offset)).map(|s| s.pc);
            if let Ok(Some(t)) = shadow.global_term(id, byte_offset, w as u32) {
                roots.push(t);
            }
            outputs.push(OutputCell { param: p.param, byte_offset, root: *root, writer });
        }
    }
    let buffers: Vec<BufferFact> = plan
        .buffers
        .iter()
        .map(|b| BufferFact {
            param: b.param,
            name: b.name.clone(),
            elem_bytes: b.dtype.bytes(),
            len: b.len,
            float: b.dtype.is_float(),
            arg: match b.role {
                BufferRole::Input { arg } => Some(arg),
                _ => None,
            },
            zeroed: b.zeroed,
        })
        .collect();
    let mut nf = Nf::default();
    let consts = Constants::for_reference(&mut nf, &lowered.graph, &req.budget);
    let literal_constants = literal_constants(&shadow, &roots, &consts);
    let sources =
        state::Sources { shadow: &shadow, shared_vars: &trace.shared_vars, grid: plan.grid, graph: &lowered.graph, buffers: &buffers, consts: &consts };
    let shared = state::shared_specs(&sources, &mut nf, &req.budget);
    Ok(ShapeFacts {
        scalars: plan.scalars.clone(),
        grid: plan.grid,
        block: plan.block,
        dynamic_shared_bytes: plan.dynamic_shared_bytes,
        scalar_args: plan.scalar_bits.clone(),
        buffers,
        graph: lowered.graph,
        outputs,
        notes: lowered.notes.into_iter().map(|n| n.message).collect(),
        literal_constants,
        shared,
        reference_source,
    })
}

/// The literals reachable from `roots` that `consts` reads as constants.
fn literal_constants(shadow: &Shadow, roots: &[TermId], consts: &Constants) -> Vec<LiteralConstant> {
    let mut seen = vec![false; shadow.terms.len()];
    let mut stack: Vec<TermId> = roots.to_vec();
    let mut found = BTreeSet::new();
    while let Some(t) = stack.pop() {
        let Some(slot) = seen.get_mut(t.0 as usize) else { continue };
        if std::mem::replace(slot, true) {
            continue;
        }
        let term = shadow.terms.get(t);
        if let Term::Literal { value: FloatValKey::Finite(r), bits } = term {
            if let Some(c) = consts.recognise(r, *bits) {
                found.insert(LiteralConstant {
                    bits: *bits,
                    value: r.clone(),
                    origin: c.origin,
                    negated: c.negated,
                    reciprocal: c.reciprocal,
                    name: c.name.clone(),
                });
            }
        }
        stack.extend(term.children());
    }
    found.into_iter().collect()
}
