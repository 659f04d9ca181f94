//! Equivalence of a kernel with its PyTorch reference, for concrete shapes, under exact
//! arithmetic: integers exact, floats exact rationals, approximate instructions as the ideal
//! functions they approximate (`ex2.approx(x·1.4426950f)` is `exp(x)`), literals as the constants
//! they round (rounding, overflow, accumulation order and approximation error are out of scope,
//! as ARCHITECTURE.md's contract says).
//!
//! For each shape (scalar parameter values) the engine:
//! 1. runs the kernel in the reference interpreter (`model::interp`) on drawn inputs and the
//!    reference's exact evaluator on the same inputs; an element that differs by more than
//!    rounding could explain is a **mismatch** at once (the fast path);
//! 2. otherwise runs the kernel again with a symbolic shadow ([`shadow`]): every value is also a
//!    term over the input elements, while the concrete run decides control flow and addresses;
//! 3. brings each output element's term and the reference's expression into a normal form
//!    ([`nf`]) and compares them: equal forms are **verified**;
//! 4. for differing forms, searches for inputs where the two differ numerically ([`numeric`])
//!    and confirms the difference by running the kernel and the reference again: a confirmed
//!    difference is a **mismatch**;
//! 5. forms still apart are evaluated modulo a prime at random points ([`fingerprint`]): forms
//!    that agree are **verified**, with the method named in the report's assumptions;
//! 6. a few small forms still apart go to an SMT solver over the reals ([`solve`]), which
//!    decides what order decides (`max`, `abs`, `sqrt`); anything else stays **uncertified**
//!    with both expressions.
//!
//! Input-dependent control flow or addressing, and operations the shadow does not follow, are
//! reported as uncertified, never verified.

pub mod classes;
pub mod constants;
pub mod convert;
pub mod facts;
pub mod fingerprint;
pub mod nf;
pub mod numeric;
pub mod render;
pub mod setup;
pub mod shadow;
pub mod solve;
pub mod state;
pub mod term;

use check::report::{
    AccessReport, EquivalenceSummary, Finding, FindingKind, InputSample, LaunchReport, Location, MismatchReport, Reason, ShapeSummary, StoreFormula,
    Uncertified, Verdict,
};
use check::witness::{Witness, WitnessThread};
use check::ThreadId;
use constants::Constants;
use model::budget::Budget;
use model::interp::{self, FloatVal, InstRef};
use model::Kernel;
use nf::{Nf, Val};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use reference::NodeId;
use setup::{BufferRole, Draw, Plan, Run};
use shadow::Shadow;
use spec::KernelSpec;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// What the caller knows: the kernel, its interface (with the reference binding), the
/// reference's source text and where positions are reported.
pub struct Request<'a> {
    pub kernel: &'a Kernel,
    pub spec: &'a KernelSpec,
    /// Parameter names from the `.cu` signature.
    pub source_names: Option<&'a [String]>,
    /// The reference `.py` file's name (for messages) and text.
    pub reference_file: &'a str,
    pub reference_text: &'a str,
    pub sources: &'a check::Sources<'a>,
    pub budget: Budget,
    /// The SMT solver for forms nothing else decides (none: they stay uncertified).
    pub solver: Option<smt::SolverKind>,
}

/// The equivalence check's contribution to a kernel report.
#[derive(Default)]
pub struct Outcome {
    pub findings: Vec<Finding>,
    pub uncertified: Vec<Uncertified>,
    pub summary: Option<EquivalenceSummary>,
}

/// Checks every shape; the result goes into the kernel's report.
pub fn check(req: &Request) -> Outcome {
    let mut out = Outcome::default();
    let Some(reference) = req.spec.reference.as_ref() else { return out };
    let program = match reference::parse(req.reference_text, reference.function.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            out.uncertified.push(reference_error(req, &e));
            return out;
        }
    };
    let mut summary = EquivalenceSummary {
        reference: format!("{}{}", req.reference_file, reference.function.as_deref().map_or(String::new(), |f| format!(" ({f})"))),
        shapes: vec![],
        assumptions: vec![],
        stores: vec![],
    };
    let shapes = match setup::shapes(req.spec, reference) {
        Ok(s) => s,
        Err(why) => {
            out.uncertified.push(Uncertified { reason: Reason::ShapeNotChecked { shape: String::new(), why }, location: None, related: vec![] });
            return out;
        }
    };
    // Smallest shapes first: a bug shows at the smallest shape as often as at a large one, so
    // the first counterexample comes sooner and is smaller (a verified kernel checks them all).
    let mut planned: Vec<(BTreeMap<String, i128>, Result<Plan, setup::SetupError>)> = shapes
        .into_iter()
        .map(|s| {
            let p = setup::plan(req.kernel, req.spec, req.source_names, &req.sources.field_names, &s);
            (s, p)
        })
        .collect();
    planned.sort_by_key(|(_, p)| p.as_ref().map_or(0, plan_size));
    if reference.shapes.is_empty() {
        // Shapes derived from ranges: beyond the smallest, only those within the budget.
        let mut first = true;
        planned.retain(|(scalars, p)| match p {
            _ if std::mem::take(&mut first) => true,
            Ok(p) if plan_size(p) > setup::LARGEST_SHAPE_SIZE => {
                summary.assumptions.push(too_large(scalars, p, " (the largest the declared ranges allow)"));
                false
            }
            _ => true,
        });
    }
    let mut found_mismatch = false;
    for (scalars, plan) in planned {
        let Some(status) = check_shape(req, &program, &scalars, plan, &mut summary, &mut out) else { break };
        if status == Verdict::Mismatch {
            found_mismatch = true;
            break; // one counterexample is enough
        }
    }
    if !found_mismatch {
        check_probes(req, &program, reference, &mut summary, &mut out);
    }
    out.summary = Some(summary);
    out
}

/// Checks one shape: its status, or `None` when the reference cannot be lowered for it (that
/// ends the check; the reason is in `out`).
fn check_shape(
    req: &Request,
    program: &reference::Program,
    scalars: &BTreeMap<String, i128>,
    plan: Result<Plan, setup::SetupError>,
    summary: &mut EquivalenceSummary,
    out: &mut Outcome,
) -> Option<Verdict> {
    let started = Instant::now();
    let shape_name = check::render::shape(scalars);
    let plan = match plan {
        Ok(p) => p,
        Err(why) => {
            out.uncertified.push(Uncertified { reason: Reason::ShapeNotChecked { shape: shape_name, why }, location: None, related: vec![] });
            return Some(Verdict::Uncertified);
        }
    };
    let lowered = match reference::lower(program, &plan.ref_args) {
        Ok(l) => l,
        Err(e) => {
            out.uncertified.push(reference_error(req, &e));
            return None;
        }
    };
    for b in plan.buffers.iter().filter(|b| b.drawn_index) {
        let a = format!("the index buffer `{}` holds one assignment satisfying its assumptions (not every one)", b.name);
        if !summary.assumptions.contains(&a) {
            summary.assumptions.push(a);
        }
    }
    for n in &lowered.notes {
        if !summary.assumptions.contains(&n.message) {
            summary.assumptions.push(n.message.clone());
        }
    }
    let mut shape = ShapeCheck { req, plan: &plan, lowered: &lowered, shape_name, summary };
    let status = shape.run(out);
    let outputs = lowered.outputs.iter().map(|o| o.elements.len()).sum();
    summary.shapes.push(ShapeSummary {
        scalars: plan
            .scalars
            .iter()
            .filter(|(k, _)| scalars.contains_key(*k) || req.spec.required_scalars().contains(*k))
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
        grid: plan.grid,
        block: plan.block,
        status,
        outputs,
        millis: started.elapsed().as_secs_f64() * 1e3,
    });
    Some(status)
}

/// The assumption line of a derived shape too large to check (`which` says what shape it is).
fn too_large(scalars: &BTreeMap<String, i128>, plan: &Plan, which: &str) -> String {
    format!(
        "{}{which} was not checked: {} threads and elements are more than the {} a shape derived from ranges may have; list it in [[kernel.<name>.reference.shapes]] to check it",
        check::render::shape(scalars),
        plan_size(plan),
        setup::LARGEST_SHAPE_SIZE
    )
}

/// The share of the time left each probe shape may take.
const PROBE_SHARE: u32 = 4;

/// Checks the probe shapes ([`setup::probe_shapes`]), smallest first, each within a share of
/// the time left: a probe that does not finish in its share is named among the assumptions
/// (like a derived shape too large to check), not made the kernel's verdict, since the shapes
/// the interface implies were all checked. A mismatch in a probe is a mismatch.
fn check_probes(req: &Request, program: &reference::Program, reference: &spec::ReferenceSpec, summary: &mut EquivalenceSummary, out: &mut Outcome) {
    let mut probes: Vec<(BTreeMap<String, i128>, Plan)> = setup::probe_shapes(req.spec, reference)
        .into_iter()
        .filter_map(|s| {
            let p = setup::plan(req.kernel, req.spec, req.source_names, &req.sources.field_names, &s).ok()?;
            Some((s, p))
        })
        .collect();
    probes.sort_by_key(|(_, p)| plan_size(p));
    for (scalars, plan) in probes {
        if plan_size(&plan) > setup::LARGEST_SHAPE_SIZE {
            summary.assumptions.push(too_large(&scalars, &plan, ""));
            continue;
        }
        if req.budget.check().is_err() {
            return;
        }
        let share = req.budget.remaining().map(|left| left / PROBE_SHARE);
        let budget = share.map_or_else(|| req.budget.clone(), |d| req.budget.within(d));
        let probe_req = Request { budget, ..*req };
        let mut probe_out = Outcome::default();
        let checked = summary.shapes.len();
        let Some(status) = check_shape(&probe_req, program, &scalars, Ok(plan), summary, &mut probe_out) else { return };
        if status == Verdict::Uncertified && probe_req.budget.check().is_err() && req.budget.check().is_ok() {
            summary.shapes.truncate(checked);
            summary.assumptions.push(format!(
                "{} was not checked: it did not finish within its share of the time budget ({} ms)",
                check::render::shape(&scalars),
                share.map_or(0, |d| d.as_millis())
            ));
            continue;
        }
        out.findings.extend(probe_out.findings);
        out.uncertified.extend(probe_out.uncertified);
        if status == Verdict::Mismatch {
            return;
        }
    }
}

/// Representatives sent to the solver per shape, and the time each may take: the solver is for
/// the odd formula the rules miss, not for a whole output (a class that needs it usually needs
/// it for one representative per formula).
const SOLVER_PAIRS: usize = 8;
const SOLVER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The time the formulas of a mismatch report may take (the counterexample is found and
/// replayed before; on long rows the formulas alone took a second).
const REPORT_TIME: std::time::Duration = std::time::Duration::from_millis(100);

/// A shape's rough cost: threads launched plus buffer elements.
fn plan_size(p: &Plan) -> u64 {
    let threads: u64 = p.grid.iter().chain(&p.block).map(|&d| d as u64).product();
    threads + p.buffers.iter().map(|b| b.len).sum::<u64>()
}

fn reference_error(req: &Request, e: &reference::RefError) -> Uncertified {
    let (line, column) = e.line_col(req.reference_text);
    Uncertified {
        reason: Reason::ReferenceError { file: req.reference_file.to_string(), line: line as u32, column: column as u32, message: e.message.clone() },
        location: None,
        related: vec![],
    }
}

/// The relative difference rounding cannot explain, by output type: exact arithmetic with
/// literals rounded to their format (and f16/bf16 outputs rounded on store).
fn tolerance(dtype: spec::DType) -> f64 {
    match dtype {
        spec::DType::F16 => 4e-3,
        spec::DType::BF16 => 3e-2,
        d if d.is_float() => 1e-4,
        _ => 0.0,
    }
}

struct ShapeCheck<'a, 'r> {
    req: &'a Request<'r>,
    plan: &'a Plan,
    lowered: &'a reference::Lowered,
    shape_name: String,
    summary: &'a mut EquivalenceSummary,
}

/// One output element where kernel and reference differ.
struct Difference {
    output: usize,
    flat: usize,
    expected: reference::Value,
    actual: FloatVal,
}

impl ShapeCheck<'_, '_> {
    fn uncertified(&self, out: &mut Outcome, reason: Reason, line: Option<(InstRef, u32)>) {
        let location = line.and_then(|(pc, _)| self.location(pc));
        out.uncertified.push(Uncertified { reason, location, related: vec![] });
    }

    fn location(&self, pc: InstRef) -> Option<Location> {
        let inst = self.req.kernel.cfg.blocks.get(pc.0 as usize)?.insts.get(pc.1)?;
        Some(self.req.sources.location(inst.span, inst.line))
    }

    fn roots(&self) -> Vec<NodeId> {
        self.lowered.outputs.iter().flat_map(|o| o.elements.iter().copied()).collect()
    }

    /// Runs the kernel concretely on `draw` and compares every output element with the
    /// reference; the first difference rounding cannot explain.
    fn concrete(&self, draw: Draw) -> Result<(Run, Option<Difference>), String> {
        let mut run = setup::prepare(self.req.kernel, self.plan, draw, &self.req.budget);
        let initial = self.initial_outputs(&run);
        let (_, result) = interp::run_traced(self.req.kernel, &run.launch, &mut run.mem);
        if let Err(e) = result {
            return Err(run_failure(&e));
        }
        let diff = self.compare(&run, &initial)?;
        Ok((run, diff))
    }

    /// The bytes of the output buffers before a run.
    fn initial_outputs(&self, run: &Run) -> HashMap<u32, Vec<u8>> {
        self.plan.outputs.iter().filter_map(|o| Some((o.param, run.mem.bytes(*run.ids.get(&o.param)?).to_vec()))).collect()
    }

    /// Compares every output element of a completed run with the reference on the same inputs:
    /// the first difference rounding cannot explain.
    fn compare(&self, run: &Run, initial: &HashMap<u32, Vec<u8>>) -> Result<Option<Difference>, String> {
        let inputs = setup::reference_inputs(self.plan, run);
        let values = reference::evaluate(&self.lowered.graph, &self.roots(), &inputs).map_err(|e| format!("the reference cannot be evaluated: {e:?}"))?;
        let scale = values.iter().filter_map(value_f64).fold(0.0f64, |m, v| m.max(v.abs()));
        let mut k = 0;
        for (o, out) in self.lowered.outputs.iter().enumerate() {
            let plan_out = &self.plan.outputs[o];
            let dtype = self.plan.buffers.iter().find(|b| b.param == plan_out.param).map(|b| b.dtype).unwrap_or(spec::DType::F32);
            let w = dtype.bytes();
            for flat in 0..out.elements.len() {
                let expected = &values[k];
                let root = out.elements[flat];
                k += 1;
                let elem = plan_out.element(flat);
                // The reference returns an input element the kernel left as it was (most of a
                // cache): equal, without decoding it.
                if self.returns_input_element(root, plan_out.param, elem) {
                    let at = (elem * w) as usize..((elem + 1) * w) as usize;
                    let id = run.ids[&plan_out.param];
                    if initial.get(&plan_out.param).and_then(|b| b.get(at.clone())) == run.mem.bytes(id).get(at) {
                        continue;
                    }
                }
                let Some(actual) = setup::output_value(self.plan, run, plan_out.param, plan_out.element(flat)) else { continue };
                if differs(&actual, expected, tolerance(dtype), scale) {
                    return Ok(Some(Difference { output: o, flat, expected: expected.clone(), actual }));
                }
            }
        }
        Ok(None)
    }

    fn run(&mut self, out: &mut Outcome) -> Verdict {
        // 1. One run, concrete with a symbolic shadow: the concrete outputs are the fast path
        //    to a mismatch, the shadow names the store and the expressions.
        let first = Draw::Integers(1);
        let roundings = interp::wide_roundings();
        let mut run2 = setup::prepare(self.req.kernel, self.plan, first, &self.req.budget);
        let initial = self.initial_outputs(&run2);
        let roles = setup::roles(self.plan, &run2);
        let mut shadow = Shadow::new(self.req.kernel, roles);
        let (trace, result) = interp::run_observed(self.req.kernel, &run2.launch, &mut run2.mem, &mut shadow);
        if let Err(e) = result {
            self.uncertified(out, Reason::ShapeNotChecked { shape: self.shape_name.clone(), why: run_failure(&e) }, None);
            return Verdict::Uncertified;
        }
        let diff = match self.compare(&run2, &initial) {
            Ok(d) => d,
            Err(why) => {
                self.uncertified(out, Reason::ShapeNotChecked { shape: self.shape_name.clone(), why }, None);
                return Verdict::Uncertified;
            }
        };
        let run = &run2;
        let rounded = interp::wide_roundings() - roundings;
        if rounded > 0 {
            self.summary.assumptions.push(format!(
                "for {}, the concrete run rounded {rounded} value{} whose exact form grew past {} bits to {}-bit mantissas (iterations that double a value's size each step): it was exact to about 300 digits, not exactly",
                self.shape_name,
                if rounded == 1 { "" } else { "s" },
                interp::MAX_EXACT_BITS,
                interp::WIDE_MANTISSA_BITS
            ));
        }
        let report_budget = if diff.is_some() { self.req.budget.within(REPORT_TIME) } else { self.req.budget.clone() };
        let mut nf = Nf::default();
        let consts = self.constants(&mut nf);
        // Normal forms of every output element, both sides.
        // Elements the kernel leaves as the very input element the reference returns (an
        // untouched part of an in-place buffer, often most of a cache) are equal without terms
        // or normal forms.
        let plan = self.plan;
        let ref_roots = self.roots();
        let mut kernel_terms = Vec::new();
        let mut concrete_outputs: Vec<Option<FloatVal>> = Vec::new();
        let mut trivial: Vec<bool> = Vec::new();
        let mut k = 0;
        for (o, lo) in self.lowered.outputs.iter().enumerate() {
            let p = &self.plan.outputs[o];
            let Some(b) = self.plan.buffers.iter().find(|b| b.param == p.param) else { continue };
            let id = run2.ids[&p.param];
            let w = b.dtype.bytes() as u32;
            for flat in 0..lo.elements.len() {
                let elem = p.element(flat);
                let root = ref_roots[k];
                k += 1;
                let same_input = self.returns_input_element(root, p.param, elem);
                if same_input && shadow.untouched(id, elem * w as u64, w) {
                    kernel_terms.push(None);
                    concrete_outputs.push(None);
                    trivial.push(true);
                    continue;
                }
                let t = shadow.global_term(id, elem * w as u64, w).unwrap_or(None);
                let is_input = |t: term::TermId| matches!(shadow.terms.get(t), term::Term::Input { param, elem: e } if *param == p.param && *e == elem);
                trivial.push(same_input && t.is_some_and(is_input));
                kernel_terms.push(t);
                concrete_outputs.push(if t.is_none() { setup::output_value(self.plan, &run2, p.param, elem) } else { None });
            }
        }
        // One representative per class of elements computing the same formula on other inputs
        // ([`classes`]); the rest stand or fall with it.
        let arg_param = |arg: u32| plan.buffers.iter().find(|b| b.role == BufferRole::Input { arg }).map(|b| b.param);
        let mut classes = classes::Classes::new(&shadow.terms, &self.lowered.graph, &arg_param);
        let rep: Vec<usize> = (0..kernel_terms.len())
            .map(|k| match kernel_terms[k] {
                Some(t) if !trivial[k] && diff.is_none() => classes.representative(k, t, ref_roots[k]),
                _ => k,
            })
            .collect();
        // With a difference already found, only the differing element's forms are needed (for
        // the report): nothing is converted in bulk.
        let checked: Vec<bool> = (0..rep.len()).map(|k| diff.is_none() && !trivial[k] && rep[k] == k).collect();
        let roots: Vec<term::TermId> = kernel_terms.iter().zip(&checked).filter(|(_, c)| **c).filter_map(|(t, _)| *t).collect();
        let mut converted = convert::kernel_vals(&mut nf, &consts, &shadow.terms, &roots, &self.req.budget).into_iter();
        let same = || Ok(Val::Finite(nf::Poly::zero()));
        let in_class = || Err(nf::NfError::Unsupported("decided with its class".into()));
        let kernel_vals: Vec<Result<Val, nf::NfError>> = (0..rep.len())
            .map(|k| match kernel_terms[k] {
                _ if trivial[k] => same(),
                _ if !checked[k] => in_class(),
                Some(_) => converted.next().unwrap_or(Err(nf::NfError::Unsupported("missing".into()))),
                None => match &concrete_outputs[k] {
                    Some(FloatVal::Finite(r)) => Ok(Nf::constant(r.clone())),
                    _ => Err(nf::NfError::Unsupported("an output the kernel leaves as a non-finite constant".into())),
                },
            })
            .collect();
        let input_atom = |nf: &mut Nf, arg: u32, index: u64| -> nf::R<Val> {
            let b = plan
                .buffers
                .iter()
                .find(|b| b.role == BufferRole::Input { arg })
                .ok_or_else(|| nf::NfError::Unsupported(format!("reference input {arg} is not a kernel buffer")))?;
            Ok(nf.input(b.param, index))
        };
        let wanted: Vec<NodeId> = ref_roots.iter().zip(&checked).filter(|(_, c)| **c).map(|(r, _)| *r).collect();
        let mut converted_ref = convert::reference_vals(&mut nf, &self.lowered.graph, &wanted, &input_atom, &self.req.budget).into_iter();
        let ref_vals: Vec<Result<Val, nf::NfError>> = (0..rep.len())
            .map(|k| match () {
                _ if trivial[k] => same(),
                _ if !checked[k] => in_class(),
                _ => converted_ref.next().unwrap_or(Err(nf::NfError::Unsupported("missing".into()))),
            })
            .collect();
        // An element's own forms (a member of a class has only its representative's).
        let own = |nf: &mut Nf, i: usize| -> (Result<Val, nf::NfError>, Result<Val, nf::NfError>) {
            if checked[i] || trivial[i] {
                return (kernel_vals[i].clone(), ref_vals[i].clone());
            }
            let k = match (kernel_terms[i], &concrete_outputs[i]) {
                (Some(t), _) => convert::kernel_vals(nf, &consts, &shadow.terms, &[t], &report_budget).pop().unwrap_or_else(in_class),
                (None, Some(FloatVal::Finite(r))) => Ok(Nf::constant(r.clone())),
                (None, _) => Err(nf::NfError::Unsupported("an output the kernel leaves as a non-finite constant".into())),
            };
            let r = convert::reference_vals(nf, &self.lowered.graph, &[ref_roots[i]], &input_atom, &report_budget).pop();
            (k, r.unwrap_or_else(in_class))
        };
        // With a mismatch, only the store that wrote the wrong element gets its formula (the
        // others' can take a second on long rows, and the diagnostic sits on that one), and the
        // formulas of the report get [`REPORT_TIME`]: the counterexample's values are exact
        // without them.
        let wrong_store = diff.as_ref().map(|d| self.store_of(&shadow, run, d));
        self.record_stores(&mut nf, &consts, &shadow, &trace, wrong_store, &report_budget);
        let names = self.names();

        if let Some(d) = diff {
            let (k, r) = own(&mut nf, self.index_of(d.output, d.flat));
            let m = self.mismatch(&nf, &names, &shadow, run, &d, first, Some(&k), &r);
            out.findings.push(m);
            return Verdict::Mismatch;
        }
        // What the shadow could not follow.
        for p in &shadow.problems {
            self.uncertified(out, Reason::EquivalenceUnsupported { shape: self.shape_name.clone(), what: line_prefix(p.line) + &p.what }, None);
        }
        // Whether the kernel's forms hold only on the path this run took (see below).
        let mut path_dependent = false;
        for pc in &shadow.path_conditions {
            let v = convert::kernel_vals(&mut nf, &consts, &shadow.terms, &[pc.term], &self.req.budget).pop();
            let decided = matches!(&v, Some(Ok(Val::Finite(p))) if p.as_constant().is_some_and(|c| c.is_zero() != pc.holds));
            if !decided {
                path_dependent = true;
                self.uncertified(
                    out,
                    Reason::EquivalenceUnsupported {
                        shape: self.shape_name.clone(),
                        what: format!(
                            "{}the kernel branches on input values (the result is proved only for inputs that take the same path)",
                            line_prefix(pc.line)
                        ),
                    },
                    None,
                );
                break;
            }
        }
        if !shadow.roundings.is_empty() {
            let a = "conversions between float formats are the identity under exact arithmetic (their rounding is not modelled)".to_string();
            if !self.summary.assumptions.contains(&a) {
                self.summary.assumptions.push(a);
            }
        }
        // 3. Compare normal forms.
        let mut unproved: Option<(usize, usize)> = None;
        let mut errors: Option<String> = None;
        let mut differing: Vec<(usize, usize)> = Vec::new();
        let mut k = 0;
        for (o, lo) in self.lowered.outputs.iter().enumerate() {
            for flat in 0..lo.elements.len() {
                match (&kernel_vals[rep[k]], &ref_vals[rep[k]]) {
                    (Ok(a), Ok(b)) if a == b => {}
                    (Ok(_), Ok(_)) if rep[k] == k => differing.push((o, flat)),
                    (Ok(_), Ok(_)) => {}
                    (Err(e), _) | (_, Err(e)) => {
                        errors.get_or_insert_with(|| format!("{}: {e}", self.element_name(o, flat)));
                    }
                }
                k += 1;
            }
        }
        // 4. Look for a counterexample where the forms differ.
        if !differing.is_empty() {
            if let Some((d, draw, run)) = self.refute(&nf, &differing, &kernel_vals, &ref_vals) {
                let (k, r) = own(&mut nf, self.index_of(d.output, d.flat));
                // A kernel that branches on input values computed its forms on the first run's
                // path; the refuting run may have taken another (ELU's `x > 0 ? x : ...` run at
                // integers, refuted at x = -1.125), so the kernel's form is not shown as what it
                // computed there. Its values are that run's own.
                let k = (!path_dependent).then_some(&k);
                let m = self.mismatch(&nf, &names, &shadow, &run, &d, draw, k, &r);
                out.findings.push(m);
                return Verdict::Mismatch;
            }
            // 5. Forms the rules left apart and no draw tells apart: random interpretation.
            let before = differing.len();
            let mut points = fingerprint::Points::new(&nf, seed_of(&self.shape_name));
            let mut out_of_time = false;
            differing.retain(|&(o, flat)| {
                out_of_time = out_of_time || self.req.budget.check().is_err();
                let i = self.index_of(o, flat);
                match (&kernel_vals[i], &ref_vals[i]) {
                    (Ok(a), Ok(b)) if !out_of_time => !points.agree(a, b),
                    _ => true,
                }
            });
            if differing.len() < before {
                self.note_random_interpretation(before - differing.len());
            }
            // 6. What order decides (max, min, abs, sqrt): the solver, for a few small forms.
            if let Some(kind) = self.req.solver {
                let stop = || self.req.budget.check().is_err();
                // The check's solver may be one asked only bit-vector questions (Yices); these
                // are over the reals, and z3 answers them.
                let kind = if kind.supports(solve::LOGIC) { kind } else { smt::SolverKind::Z3 };
                let mut solver = smt::Solver::new(kind);
                let mut asked = 0;
                let mut by_solver = 0;
                // One pair the solver does not prove equal leaves the shape unproved whatever
                // the others' answers, so the pairs after it are not asked (three rows of an
                // attention score whose scale literal the rules did not read: 2 s each, 9 s).
                let mut failed = false;
                differing.retain(|&(o, flat)| {
                    let i = self.index_of(o, flat);
                    let (Ok(a), Ok(b)) = (&kernel_vals[i], &ref_vals[i]) else {
                        failed = true;
                        return true;
                    };
                    if failed || asked >= SOLVER_PAIRS || stop() {
                        return true;
                    }
                    asked += 1;
                    let timeout = self.req.budget.remaining().unwrap_or(SOLVER_TIMEOUT).min(SOLVER_TIMEOUT);
                    let equal = solve::equal(&nf, a, b, &mut solver, timeout, &stop) == solve::Answer::Equal;
                    by_solver += equal as usize;
                    failed = !equal;
                    !equal
                });
                if by_solver > 0 {
                    self.summary.assumptions.push(format!(
                        "for {}, {by_solver} output formula{} the rewriting rules left in different forms {} proved equal by {} over the reals (QF_UFNRA), assuming every divisor nonzero and every square root's argument non-negative, as the normal forms do",
                        self.shape_name,
                        if by_solver == 1 { "" } else { "s" },
                        if by_solver == 1 { "was" } else { "were" },
                        kind.name()
                    ));
                }
            }
            unproved = differing.first().copied();
        }
        let mut verdict = if out.uncertified.iter().any(|u| matches!(&u.reason, Reason::EquivalenceUnsupported { shape, .. } if *shape == self.shape_name)) {
            Verdict::Uncertified
        } else {
            Verdict::Verified
        };
        if let Some(e) = errors {
            self.uncertified(out, Reason::EquivalenceUnsupported { shape: self.shape_name.clone(), what: e }, None);
            verdict = Verdict::Uncertified;
        }
        // Forms left apart because the budget ran out are undecided for that reason, not "not
        // proved": the report must say which (a loaded machine stops a slow proof midway).
        if let Some((o, flat)) = unproved.filter(|_| self.req.budget.check().is_err()) {
            let what = format!("the time budget for this kernel ran out before {} was decided", self.element_name(o, flat));
            self.uncertified(out, Reason::EquivalenceUnsupported { shape: self.shape_name.clone(), what }, None);
            verdict = Verdict::Uncertified;
        } else if let Some((o, flat)) = unproved {
            let i = self.index_of(o, flat);
            let show = |v: &Result<Val, nf::NfError>| v.as_ref().map(|v| render::val(&nf, &names, v)).unwrap_or_else(|e| e.to_string());
            self.uncertified(
                out,
                Reason::EquivalenceNotProved {
                    shape: self.shape_name.clone(),
                    output: self.element_name(o, flat),
                    kernel: show(&kernel_vals[i]),
                    reference: show(&ref_vals[i]),
                },
                None,
            );
            verdict = Verdict::Uncertified;
        }
        verdict
    }

    /// Says in the report's assumptions that some elements were shown equal by random
    /// interpretation rather than by the rewriting rules.
    fn note_random_interpretation(&mut self, classes: usize) {
        let note = format!(
            "for {}, {classes} output formula{} the rewriting rules left in different forms {} shown equal by random interpretation: both sides evaluated modulo the prime 2^61-1 at {} independent random points, functions other than + · / as random oracles (two formulas that differ as polynomials of degree d agree at all points with probability at most (d/2^61)^{})",
            self.shape_name,
            if classes == 1 { "" } else { "s" },
            if classes == 1 { "was" } else { "were" },
            fingerprint::TRIALS,
            fingerprint::TRIALS,
        );
        self.summary.assumptions.push(note);
    }

    /// Whether the reference's output node `root` is element `elem` of the input that kernel
    /// parameter `param` also holds (an in-place buffer's element returned as it was).
    fn returns_input_element(&self, root: NodeId, param: u32, elem: u64) -> bool {
        match self.lowered.graph.get(root) {
            Some(reference::Node::Input { arg, index }) => {
                *index == elem && self.plan.buffers.iter().any(|b| b.role == BufferRole::Input { arg: *arg } && b.param == param)
            }
            _ => false,
        }
    }

    fn index_of(&self, output: usize, flat: usize) -> usize {
        self.lowered.outputs[..output].iter().map(|o| o.elements.len()).sum::<usize>() + flat
    }

    fn element_name(&self, output: usize, flat: usize) -> String {
        let p = &self.plan.outputs[output];
        format!("{}[{}]", p.buffer, multi_index(flat, &p.shape).iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "))
    }

    fn names(&self) -> render::Names {
        let mut names = render::Names::default();
        for b in &self.plan.buffers {
            names.buffers.insert(b.param, (b.name.clone(), b.shape.clone()));
        }
        for o in &self.plan.outputs {
            names.buffers.entry(o.param).or_insert((o.buffer.clone(), None)).1.get_or_insert(o.shape.clone());
        }
        names
    }

    /// The catalogue plus the reference's constants (its constant subexpressions).
    fn constants(&self, nf: &mut Nf) -> Constants {
        Constants::for_reference(nf, &self.lowered.graph, &self.req.budget)
    }

    /// Numerically compares the differing forms at a few input draws; a difference confirmed by
    /// a concrete run is a counterexample.
    fn refute(
        &self,
        nf: &Nf,
        differing: &[(usize, usize)],
        kernel: &[Result<Val, nf::NfError>],
        reference: &[Result<Val, nf::NfError>],
    ) -> Option<(Difference, Draw, Run)> {
        for draw in [Draw::Eighths(2), Draw::Tiny(3), Draw::Integers(4), Draw::Eighths(5)] {
            let dtype_of = |param: u32| self.plan.buffers.iter().find(|b| b.param == param).map(|b| b.dtype).unwrap_or(spec::DType::F32);
            let inputs = |param: u32, elem: u64| draw.value(param, elem, dtype_of(param)).to_f64().unwrap_or(0.0);
            let mut ev = numeric::Evaluator::new(nf, numeric::Point { inputs: &inputs, initial: &inputs });
            let promising = differing.iter().take(64).any(|&(o, flat)| {
                let i = self.index_of(o, flat);
                match (&kernel[i], &reference[i]) {
                    (Ok(a), Ok(b)) => {
                        let (x, y) = (ev.val(a), ev.val(b));
                        !(x.is_finite() && y.is_finite()) || (x - y).abs() > 1e-3 * x.abs().max(y.abs()).max(1e-30)
                    }
                    _ => false,
                }
            });
            if !promising {
                continue;
            }
            if let Ok((run, Some(d))) = self.concrete(draw) {
                return Some((d, draw, run));
            }
        }
        None
    }

    /// The value formula of each store instruction, in the first thread that executes it.
    /// Only the store at `only` when it is `Some` (`Some(None)`: no store at all).
    fn record_stores(&mut self, nf: &mut Nf, consts: &Constants, shadow: &Shadow, trace: &interp::Trace, only: Option<Option<InstRef>>, budget: &Budget) {
        let names = self.names();
        let mut samples: Vec<_> = shadow.samples.iter().filter(|(pc, _)| only.is_none_or(|o| o == Some(**pc))).collect();
        samples.sort_by_key(|(pc, _)| **pc);
        for (pc, s) in samples {
            let Some(t) = s.term else { continue };
            let Some(v) = convert::kernel_vals(nf, consts, &shadow.terms, &[t], budget).pop().and_then(Result::ok) else { continue };
            let Some(location) = self.location(*pc) else { continue };
            let target = match s.place {
                interp::observe::Place::Shared { slot, offset } => {
                    let var = trace.shared_vars.iter().find(|v| v.offset / interp::SLOT == slot as u64);
                    let name = var.map_or_else(|| "shared".to_string(), |v| check::demangle_local(&v.name));
                    format!("{name}[{}]", offset / s.bytes.max(1) as u64)
                }
                interp::observe::Place::Global { buffer, offset } => {
                    let param = self.plan.buffers.iter().find(|b| shadow_buffer(self, b.param) == Some(buffer));
                    match param {
                        Some(b) => format!("{}[{}]", b.name, offset / b.dtype.bytes()),
                        None => "global".into(),
                    }
                }
                _ => continue,
            };
            self.summary.stores.push(StoreFormula {
                location,
                thread: ThreadId { block: s.at.ctaid, thread: s.at.tid },
                target,
                formula: render::val(nf, &names, &v),
                scalars: self.plan.scalars.clone(),
            });
        }
    }

    fn element_bytes(&self, param: u32) -> u64 {
        self.plan.buffers.iter().find(|b| b.param == param).map_or(4, |b| b.dtype.bytes())
    }

    /// The store instruction that wrote the differing element last, if any did.
    fn store_of(&self, shadow: &Shadow, run: &Run, d: &Difference) -> Option<InstRef> {
        let p = &self.plan.outputs[d.output];
        let id = run.ids.get(&p.param)?;
        shadow.stores.get(&(*id, p.element(d.flat) * self.element_bytes(p.param))).map(|s| s.pc)
    }

    #[allow(clippy::too_many_arguments)]
    fn mismatch(
        &self,
        nf: &Nf,
        names: &render::Names,
        shadow: &Shadow,
        run: &Run,
        d: &Difference,
        draw: Draw,
        kernel: Option<&Result<Val, nf::NfError>>,
        reference: &Result<Val, nf::NfError>,
    ) -> Finding {
        let p = &self.plan.outputs[d.output];
        let elem = p.element(d.flat);
        let bytes = self.element_bytes(p.param);
        let id = run.ids.get(&p.param).copied();
        let store = id.and_then(|id| shadow.stores.get(&(id, elem * bytes)));
        let show = |v: &Result<Val, nf::NfError>| match v {
            Ok(v) => render::val(nf, names, v),
            Err(nf::NfError::Budget) if self.req.budget.check().is_ok() => {
                format!("(a formula too long to derive within the {} ms a report gets; the values are exact without it)", REPORT_TIME.as_millis())
            }
            Err(e) => format!("(not expressible: {e})"),
        };
        let inputs = self
            .plan
            .buffers
            .iter()
            .filter(|b| matches!(b.role, BufferRole::Input { .. }) || b.values.is_some())
            .map(|b| {
                let vals = run.contents.get(&b.param).cloned().unwrap_or_default();
                InputSample {
                    buffer: b.name.clone(),
                    drawn: if b.values.is_some() { "its declared values".into() } else { draw.describe() },
                    len: b.len,
                    values: vals.iter().take(16).map(show_rational).collect(),
                }
            })
            .collect();
        let (accesses, threads) = match store {
            Some(s) => {
                let location = self.location(s.pc);
                let t = ThreadId { block: s.at.ctaid, thread: s.at.tid };
                let access = location.map(|location| AccessReport {
                    kind: "write",
                    space: "global",
                    target: p.buffer.clone(),
                    bytes: bytes as u32,
                    thread: 0,
                    location,
                    iterations: Default::default(),
                });
                (access.into_iter().collect(), vec![t])
            }
            None => (vec![], vec![]),
        };
        let witness = Witness {
            grid: self.plan.grid,
            block: self.plan.block,
            params: self.plan.scalar_bits.iter().map(|(k, v)| (*k, *v)).collect(),
            threads: threads.iter().map(|t| WitnessThread { id: *t, iterations: Default::default(), offset: Some(elem * bytes) }).collect(),
            memory: vec![],
            missing_lane: None,
            fill: None,
            fields: Vec::new(),
        };
        let params = self.plan.scalars.iter().map(|(k, v)| (k.clone(), *v as i64)).collect();
        Finding {
            kind: FindingKind::Mismatch,
            accesses,
            threads,
            address: None,
            barrier: None,
            divergence: None,
            inputs: vec![],
            mismatch: Some(Box::new(MismatchReport {
                buffer: p.buffer.clone(),
                output: d.output,
                index: multi_index(d.flat, &p.shape),
                element: elem,
                expected: show_value(&d.expected),
                actual: show_float(&d.actual),
                expected_expr: show(reference),
                actual_expr: kernel.map(|k| if store.is_none() { format!("{} (never written)", show(k)) } else { show(k) }),
                shape: self.plan.scalars.clone(),
                inputs,
                hint: shadow.read_initial.contains(&p.param).then(|| {
                    format!(
                        "the kernel adds to what `{0}` held before it ran; if the caller zeroes `{0}` first (torch.zeros, cudaMemset), declare it in lark.toml: `{0} = {{ ..., assume = [\"zeroed\"] }}`",
                        p.buffer
                    )
                }),
            })),
            launch: LaunchReport { grid: self.plan.grid, block: self.plan.block, params },
            witness,
            replayed: true,
            assumed_launch: None,
            assumed_scalars: None,
            benign: None,
            contents_needed: Vec::new(),
        }
    }
}

/// The seed of a shape's random points: fresh per run (the process's hash keys), so no formula
/// can be written to collide at points known in advance.
fn seed_of(shape: &str) -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(shape)
}

fn shadow_buffer(sc: &ShapeCheck, param: u32) -> Option<model::interp::BufferId> {
    // Buffers are added in the plan's order (see `setup::prepare`).
    sc.plan.buffers.iter().position(|b| b.param == param).map(|n| model::interp::BufferId(n as u32))
}

/// Why a run of the kernel on a checked shape did not complete, for people.
fn run_failure(e: &interp::InterpError) -> String {
    match e {
        interp::InterpError::StepLimit { .. } => format!(
            "this shape needs more than {} instructions; the equivalence check handles smaller ones — list a smaller shape in [[kernel.<name>.reference.shapes]]",
            setup::MAX_STEPS
        ),
        interp::InterpError::Stopped(model::budget::Stop::Deadline) => "the time budget for this kernel ran out".into(),
        interp::InterpError::Stopped(model::budget::Stop::Cancelled) => "cancelled".into(),
        interp::InterpError::Stopped(model::budget::Stop::Memory) => memory_message(),
        e => format!("the kernel does not complete on this shape: {e}"),
    }
}

/// The memory ceiling, in the words of a reason.
fn memory_message() -> String {
    format!("the memory ceiling for checks ({} MB) was reached", model::budget::memory_ceiling() >> 20)
}

fn line_prefix(line: Option<u32>) -> String {
    line.map_or(String::new(), |l| format!("line {l}: "))
}

fn multi_index(flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut rest = flat;
    let mut out = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1);
        out[d] = rest % n;
        rest /= n;
    }
    out
}

pub(crate) fn value_f64(v: &reference::Value) -> Option<f64> {
    match v {
        reference::Value::Exact(r) => r.to_f64(),
        reference::Value::Approx { value, .. } => Some(*value),
        reference::Value::Invalid(_) => None,
    }
}

fn show_rational(r: &BigRational) -> String {
    if r.is_integer() {
        r.numer().to_string()
    } else if r.denom().bits() <= 20 {
        format!("{}/{}", r.numer(), r.denom())
    } else {
        format!("{}", r.to_f64().unwrap_or(f64::NAN))
    }
}

fn show_value(v: &reference::Value) -> String {
    match v {
        reference::Value::Exact(r) => show_decimal(r.to_f64().unwrap_or(f64::NAN), Some(r)),
        reference::Value::Approx { value, .. } => show_decimal(*value, None),
        reference::Value::Invalid(i) => format!("undefined ({i:?})"),
    }
}

fn show_float(v: &FloatVal) -> String {
    match v {
        FloatVal::Finite(r) => show_decimal(r.to_f64().unwrap_or(f64::NAN), Some(r)),
        other => other.to_string(),
    }
}

fn show_decimal(x: f64, exact: Option<&BigRational>) -> String {
    match exact {
        Some(r) if r.is_integer() => r.numer().to_string(),
        Some(r) if r.denom().bits() <= 12 => format!("{}/{} ({x})", r.numer(), r.denom()),
        _ => format!("{x}"),
    }
}

/// Whether the kernel's value differs from the reference's by more than rounding explains.
fn differs(actual: &FloatVal, expected: &reference::Value, rel: f64, scale: f64) -> bool {
    let (x, err) = match expected {
        reference::Value::Exact(r) => {
            if let FloatVal::Finite(a) = actual {
                if a == r {
                    return false;
                }
            }
            (r.to_f64().unwrap_or(f64::NAN), 0.0)
        }
        reference::Value::Approx { value, err } => (*value, *err),
        reference::Value::Invalid(_) => return false,
    };
    let a = match actual {
        FloatVal::Finite(r) => r.to_f64().unwrap_or(f64::NAN),
        FloatVal::Inf { negative } => {
            if *negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        FloatVal::NaN => f64::NAN,
    };
    if !a.is_finite() || !x.is_finite() {
        return a.is_finite() != x.is_finite() || (a.is_nan() != x.is_nan());
    }
    if rel == 0.0 {
        return (a - x).abs() > err;
    }
    (a - x).abs() > rel * a.abs().max(x.abs()) + 1e-6 * scale + err + f64::MIN_POSITIVE
}
