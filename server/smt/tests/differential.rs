//! The solvers must agree (z3 and cvc5 everywhere, Yices on bit-vectors): on bit-vector
//! identities (true and false), on real arithmetic with uninterpreted functions, and on real
//! queries LARK's engine asked (`fixtures/*.smt2`). Models are cross-checked too: the values
//! read from one solver's model are pinned as assertions and each other solver must find them
//! consistent, which tests the model reading of all of them.

mod common;

use common::{installed, solver, EASY};
use smt::{Logic, Model, Never, Query, SatResult, Solver, Sort, Term};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Sat,
    Unsat,
}

fn answer(s: &mut Solver, q: &Query) -> (Expect, Option<Model>) {
    match s.check(q, EASY, &Never) {
        Ok(SatResult::Sat(m)) => (Expect::Sat, Some(m)),
        Ok(SatResult::Unsat) => (Expect::Unsat, None),
        other => panic!("{}: no decision: {other:?}\n{}", s.kind(), q.to_smtlib()),
    }
}

/// Pins every constant to its value in `model` and asks `s` whether that is consistent.
fn model_satisfies(s: &mut Solver, q: &mut Query, model: &Model) -> bool {
    let mark = q.mark();
    for (name, value) in model.iter() {
        let (Some(term), Ok(value)) = (q.lookup(name), value) else { continue };
        q.assert(q.eq(term, q.literal(value)));
    }
    let consistent = matches!(s.check(q, EASY, &Never), Ok(SatResult::Sat(_)));
    q.rollback(mark);
    consistent
}

/// Runs `q` on every solver asked in its logic (z3 and cvc5; Yices too on bit-vectors): all
/// must give `expect`, and each satisfying model must satisfy the query for every other solver.
fn agree(what: &str, mut q: Query, expect: Expect) {
    let mut solvers: Vec<Solver> = installed().into_iter().filter(|k| k.supports(q.logic())).map(solver).collect();
    let answers: Vec<(Expect, Option<Model>)> = solvers.iter_mut().map(|s| answer(s, &q)).collect();
    for (s, (got, _)) in solvers.iter().zip(&answers) {
        assert_eq!(*got, expect, "{what}: {} said {got:?}\n{}", s.kind(), q.to_smtlib());
    }
    for (i, (_, model)) in answers.iter().enumerate() {
        let Some(model) = model else { continue };
        for j in (0..solvers.len()).filter(|&j| j != i) {
            let (from, by) = (solvers[i].kind(), solvers[j].kind());
            assert!(model_satisfies(&mut solvers[j], &mut q, model), "{what}: {by} rejects {from}'s model\n{model}");
        }
    }
}

/// Asserts that `claim` does not hold for every value, i.e. its negation is satisfiable
/// (`Sat`), or that it is an identity (`Unsat`).
fn identity(what: &str, bits: u32, claim: impl Fn(&Query, Term, Term) -> Term, expect: Expect) {
    let mut q = Query::new(Logic::QfBv);
    let x = q.declare_const("x", Sort::BitVec(bits));
    let y = q.declare_const("y", Sort::BitVec(bits));
    q.assert(q.not(claim(&q, x, y)));
    agree(what, q, expect);
}

#[test]
fn bit_vector_identities_true_and_false() {
    use Expect::{Sat, Unsat};
    identity("(x + y) - y = x", 32, |q, x, y| q.eq(q.bv_sub(q.bv_add(x, y), y), x), Unsat);
    identity("x * 2 = x << 1", 32, |q, x, _| q.eq(q.bv_mul(x, q.bv(2, 32)), q.bv_shl(x, q.bv(1, 32))), Unsat);
    identity("(x & y) + (x | y) = x + y", 16, |q, x, y| q.eq(q.bv_add(q.bv_and(x, y), q.bv_or(x, y)), q.bv_add(x, y)), Unsat);
    identity("-x = ~x + 1", 64, |q, x, _| q.eq(q.bv_neg(x), q.bv_add(q.bv_not(x), q.bv(1, 64))), Unsat);
    identity("x / 0 = all ones", 32, |q, x, _| q.eq(q.bv_udiv(x, q.bv(0, 32)), q.bv(u32::MAX.into(), 32)), Unsat);
    identity("x = concat(extract hi, extract lo)", 32, |q, x, _| q.eq(q.concat(q.extract(31, 16, x), q.extract(15, 0, x)), x), Unsat);
    identity("sext(x) < 0 iff x < 0", 8, |q, x, _| q.eq(q.bv_slt(q.sign_extend(24, x), q.bv(0, 32)), q.bv_slt(x, q.bv(0, 8))), Unsat);
    identity(
        "zext(x) * zext(y) fits in 64 bits",
        32,
        |q, x, y| q.bv_ule(q.bv_mul(q.zero_extend(32, x), q.zero_extend(32, y)), q.bv(u64::MAX.into(), 64)),
        Unsat,
    );
    identity("(x >> 1) << 1 = x", 32, |q, x, _| q.eq(q.bv_shl(q.bv_lshr(x, q.bv(1, 32)), q.bv(1, 32)), x), Sat);
    identity("x + 1 > x (unsigned)", 32, |q, x, _| q.bv_ugt(q.bv_add(x, q.bv(1, 32)), x), Sat);
    identity("x * x = y * y implies x = ±y", 8, |q, x, y| q.implies(q.eq(q.bv_mul(x, x), q.bv_mul(y, y)), q.or(&[q.eq(x, y), q.eq(x, q.bv_neg(y))])), Sat);
    identity("signed and unsigned order agree", 16, |q, x, y| q.eq(q.bv_slt(x, y), q.bv_ult(x, y)), Sat);
    identity("x srem 2 is 0 or 1", 32, |q, x, _| q.bv_ule(q.bv_srem(x, q.bv(2, 32)), q.bv(1, 32)), Sat);
}

#[test]
fn real_arithmetic_with_uninterpreted_functions() {
    use Expect::{Sat, Unsat};
    let setup = |logic| {
        let mut q = Query::new(logic);
        let f = q.declare_fun("f", &[Sort::Real], Sort::Real);
        let x = q.declare_const("x", Sort::Real);
        let y = q.declare_const("y", Sort::Real);
        (q, f, x, y)
    };

    let (mut q, f, x, y) = setup(Logic::QfUfLra);
    q.assert(q.eq(x, y));
    q.assert(q.distinct(&[q.apply(&f, &[x]), q.apply(&f, &[y])]));
    agree("congruence", q, Unsat);

    let (mut q, f, x, _) = setup(Logic::QfUfLra);
    q.assert(q.eq(q.apply(&f, &[x]), q.add(&[q.div(x, q.rational(3, 1)), q.rational(1, 1)])));
    q.assert(q.eq(q.apply(&f, &[x]), q.rational(2, 1)));
    q.assert(q.distinct(&[x, q.rational(3, 1)]));
    agree("f(x) = x/3 + 1 = 2 forces x = 3", q, Unsat);

    let (mut q, f, x, y) = setup(Logic::QfUfLra);
    q.assert(q.eq(q.add(&[x, y]), q.rational(1, 1)));
    q.assert(q.eq(q.sub(x, y), q.rational(1, 3)));
    q.assert(q.gt(q.apply(&f, &[x]), q.apply(&f, &[y])));
    agree("x = 2/3, y = 1/3, f(x) > f(y)", q, Sat);

    let (mut q, f, x, _) = setup(Logic::QfUfLra);
    q.assert(q.eq(q.apply(&f, &[q.apply(&f, &[x])]), x));
    q.assert(q.distinct(&[q.apply(&f, &[x]), x]));
    agree("an involution that moves x", q, Sat);

    // Exact arithmetic: a sum reordered is the same sum; a real kernel's reduction relies on it.
    let (mut q, f, x, y) = setup(Logic::QfUfLra);
    let (a, b) = (q.apply(&f, &[x]), q.apply(&f, &[y]));
    q.assert(q.distinct(&[q.add(&[q.add(&[a, b]), x]), q.add(&[x, q.add(&[b, a])])]));
    agree("addition reassociates and commutes", q, Unsat);

    let (mut q, f, x, y) = setup(Logic::QfUfNra);
    q.assert(q.eq(q.mul(&[x, y]), q.rational(1, 1)));
    q.assert(q.eq(x, q.rational(3, 1)));
    q.assert(q.lt(q.apply(&f, &[y]), q.mul(&[y, y])));
    agree("x * y = 1 with x = 3", q, Sat);

    let (mut q, _, x, _) = setup(Logic::QfUfNra);
    q.assert(q.lt(q.mul(&[x, x]), q.rational(0, 1)));
    agree("squares are not negative", q, Unsat);
}

#[test]
fn engine_queries_from_the_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "smt2")).collect();
    files.sort();
    assert_eq!(files.len(), 20, "the fixtures are 20 engine queries");
    let mut counts = [0, 0];
    let started = Instant::now();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let expect = match text.lines().find_map(|l| l.strip_prefix("; expect: ")) {
            Some("sat") => Expect::Sat,
            Some("unsat") => Expect::Unsat,
            other => panic!("{name}: no `; expect:` line ({other:?})"),
        };
        counts[(expect == Expect::Unsat) as usize] += 1;
        let q = Query::from_script(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(q.logic(), Logic::QfBv);
        agree(&name, q, expect);
    }
    eprintln!("20 fixtures on every solver (with model cross-checks) in {:?}", started.elapsed());
    assert!(counts[0] >= 5 && counts[1] >= 5, "both answers are represented: {counts:?}");
}
