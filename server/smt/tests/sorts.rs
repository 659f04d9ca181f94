//! Each sort and operator family against every real solver that is asked in its logic, with the typed model values.

mod common;

use common::{installed, solver, EASY};
use num_bigint::BigInt;
use num_rational::BigRational;
use smt::{Logic, Never, Query, SatResult, SolverKind, Sort, Value};

fn sat(kind: SolverKind, q: &Query) -> smt::Model {
    match solver(kind).check(q, EASY, &Never) {
        Ok(SatResult::Sat(m)) => m,
        other => panic!("{kind}: expected sat, got {other:?}\n{}", q.to_smtlib()),
    }
}

fn unsat(kind: SolverKind, q: &Query) {
    let answer = solver(kind).check(q, EASY, &Never);
    assert_eq!(answer, Ok(SatResult::Unsat), "{kind}:\n{}", q.to_smtlib());
}

/// The solvers LARK asks in `logic` (Yices only bit-vector queries).
fn solvers_for(logic: Logic) -> impl Iterator<Item = SolverKind> {
    installed().into_iter().filter(move |k| k.supports(logic))
}

fn ratio(n: i64, d: i64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

#[test]
fn booleans() {
    for kind in installed() {
        let mut q = Query::new(Logic::QfBv);
        let p = q.declare_const("p", Sort::Bool);
        let r = q.declare_const("r", Sort::Bool);
        q.assert(q.xor(p, r));
        q.assert(q.implies(p, q.not(p)));
        let m = sat(kind, &q);
        assert_eq!((m.bool("p"), m.bool("r")), (Ok(false), Ok(true)), "{kind}");

        q.assert(q.or(&[q.and(&[p, r]), q.distinct(&[p, q.bool(false)])]));
        unsat(kind, &q);
    }
}

#[test]
fn bit_vector_arithmetic_extract_concat_extend() {
    for kind in installed() {
        let mut q = Query::new(Logic::QfBv);
        let x = q.declare_const("x", Sort::BitVec(8));
        let y = q.declare_const("y", Sort::BitVec(16));
        let wide = q.declare_const("wide", Sort::BitVec(128));
        // x is negative as a signed byte, and sign extension copies its sign bit.
        q.assert(q.eq(q.sign_extend(8, x), q.bv(0xff80, 16)));
        q.assert(q.eq(y, q.concat(q.extract(3, 0, x), q.zero_extend(8, q.extract(7, 4, x)))));
        q.assert(q.eq(wide, q.bv_add(q.bv(u128::MAX, 128), q.bv(6, 128))));
        q.assert(q.bv_slt(x, q.bv(0, 8)));
        q.assert(q.bv_ugt(x, q.bv(0x7f, 8)));
        let m = sat(kind, &q);
        assert_eq!(m.get("x"), Ok(&Value::BitVec { bits: 8, value: 0x80 }), "{kind}");
        assert_eq!(m.bv("y"), Ok(0x0008), "{kind}: low nibble 0 on top, high nibble 8 zero-extended below");
        assert_eq!(m.bv("wide"), Ok(5), "{kind}: 128-bit arithmetic wraps");
    }
}

#[test]
fn bit_vector_operators_agree_with_smtlib_semantics() {
    // Each line: an operator applied to constants, and the result SMT-LIB defines.
    type Operator = fn(&Query, smt::Term, smt::Term) -> smt::Term;
    let cases: [(&str, Operator, u128, u128, u128); 14] = [
        ("bvadd wraps", Query::bv_add, 0xf0, 0x20, 0x10),
        ("bvsub wraps", Query::bv_sub, 0x01, 0x02, 0xff),
        ("bvmul wraps", Query::bv_mul, 0x10, 0x11, 0x10),
        ("bvudiv by zero is all ones", Query::bv_udiv, 7, 0, 0xff),
        ("bvurem by zero is the dividend", Query::bv_urem, 7, 0, 7),
        ("bvsdiv rounds toward zero", Query::bv_sdiv, 0xf9, 2, 0xfd),
        ("bvsrem has the dividend's sign", Query::bv_srem, 0xf9, 2, 0xff),
        ("bvshl past the width is zero", Query::bv_shl, 1, 9, 0),
        ("bvlshr", Query::bv_lshr, 0x80, 7, 1),
        ("bvashr copies the sign", Query::bv_ashr, 0x80, 7, 0xff),
        ("bvand", Query::bv_and, 0b1100, 0b1010, 0b1000),
        ("bvor", Query::bv_or, 0b1100, 0b1010, 0b1110),
        ("bvxor", Query::bv_xor, 0b1100, 0b1010, 0b0110),
        ("bvadd again", Query::bv_add, 1, 1, 2),
    ];
    for kind in installed() {
        let mut q = Query::new(Logic::QfBv);
        let mut results = Vec::new();
        for (i, (_, op, a, b, _)) in cases.iter().enumerate() {
            let r = q.declare_const(&format!("r{i}"), Sort::BitVec(8));
            q.assert(q.eq(r, op(&q, q.bv(*a, 8), q.bv(*b, 8))));
            results.push(r);
        }
        let x = q.declare_const("x", Sort::BitVec(8));
        q.assert(q.eq(x, q.bv_neg(q.bv_not(q.bv(5, 8)))));
        let m = sat(kind, &q);
        for (i, (what, _, _, _, expected)) in cases.iter().enumerate() {
            assert_eq!(m.bv(&format!("r{i}")), Ok(*expected), "{kind}: {what}");
        }
        assert_eq!(m.bv("x"), Ok(6), "{kind}: -(~5) = 6");
        let comparisons = [
            (q.bv_ult(q.bv(1, 8), q.bv(0xff, 8)), true),
            (q.bv_slt(q.bv(1, 8), q.bv(0xff, 8)), false),
            (q.bv_ule(q.bv(3, 8), q.bv(3, 8)), true),
            (q.bv_sle(q.bv(0x80, 8), q.bv(0x7f, 8)), true),
            (q.bv_uge(q.bv(0x80, 8), q.bv(0x7f, 8)), true),
            (q.bv_sge(q.bv(0x80, 8), q.bv(0x7f, 8)), false),
            (q.bv_ugt(q.bv(0, 8), q.bv(0, 8)), false),
            (q.bv_sgt(q.bv(0, 8), q.bv(0xff, 8)), true),
        ];
        for (i, (c, expected)) in comparisons.into_iter().enumerate() {
            let name = format!("c{i}");
            q.want(&name, c);
            assert_eq!(sat(kind, &q).bool(&name), Ok(expected), "{kind}: comparison {i}");
        }
    }
}

#[test]
fn integers() {
    for kind in solvers_for(Logic::QfLia) {
        let mut q = Query::new(Logic::QfLia);
        let x = q.declare_const("x", Sort::Int);
        let y = q.declare_const("y", Sort::Int);
        let z = q.declare_const("z", Sort::Int);
        q.assert(q.eq(q.add(&[x, y]), q.int(10)));
        q.assert(q.eq(q.sub(x, y), q.int(4)));
        q.assert(q.eq(z, q.neg(q.mul(&[q.int(3), x]))));
        let big: BigInt = "-123456789012345678901234567890".parse().unwrap();
        let w = q.declare_const("w", Sort::Int);
        q.assert(q.eq(w, q.int(big.clone())));
        let m = sat(kind, &q);
        assert_eq!(m.int("x"), Ok(&7.into()), "{kind}");
        assert_eq!(m.int("y"), Ok(&3.into()), "{kind}");
        assert_eq!(m.int("z"), Ok(&(-21).into()), "{kind}");
        assert_eq!(m.int("w"), Ok(&big), "{kind}");

        q.assert(q.gt(y, x));
        unsat(kind, &q);
    }
}

#[test]
fn reals_with_rational_constants() {
    for kind in solvers_for(Logic::QfLra) {
        let mut q = Query::new(Logic::QfLra);
        let x = q.declare_const("x", Sort::Real);
        let y = q.declare_const("y", Sort::Real);
        let z = q.declare_const("z", Sort::Real);
        let n = q.declare_const("n", Sort::Int);
        q.assert(q.eq(q.mul(&[q.real(&ratio(3, 1)), x]), q.real(&ratio(1, 1))));
        q.assert(q.eq(y, q.real(&ratio(-2, 1))));
        q.assert(q.eq(z, q.sub(q.neg(x), q.real(&ratio(0, 1)))));
        q.assert(q.eq(q.to_real(n), q.add(&[y, q.real(&ratio(1, 2)), q.real(&ratio(1, 2))])));
        q.set_logic(Logic::QfLira);
        let m = sat(kind, &q);
        assert_eq!(m.real("x"), Ok(&ratio(1, 3)), "{kind}");
        assert_eq!(m.real("y"), Ok(&ratio(-2, 1)), "{kind}");
        assert_eq!(m.real("z"), Ok(&ratio(-1, 3)), "{kind}");
        assert_eq!(m.int("n"), Ok(&(-1).into()), "{kind}");
    }
}

#[test]
fn real_division_and_nonlinear_products() {
    for kind in solvers_for(Logic::QfNra) {
        let mut q = Query::new(Logic::QfNra);
        let x = q.declare_const("x", Sort::Real);
        let y = q.declare_const("y", Sort::Real);
        // x * y = 1 with x = 3: y = 1/3; and x / 4 is exact.
        q.assert(q.eq(x, q.real(&ratio(3, 1))));
        q.assert(q.eq(q.mul(&[x, y]), q.real(&ratio(1, 1))));
        let quarter = q.div(x, q.real(&ratio(4, 1)));
        q.want("x/4", quarter);
        let m = sat(kind, &q);
        assert_eq!(m.real("y"), Ok(&ratio(1, 3)), "{kind}");
        assert_eq!(m.real("x/4"), Ok(&ratio(3, 4)), "{kind}");

        q.assert(q.lt(q.mul(&[y, y]), q.real(&ratio(0, 1))));
        unsat(kind, &q);
    }
}

#[test]
fn uninterpreted_functions_over_reals() {
    for kind in solvers_for(Logic::QfUfLra) {
        let mut q = Query::new(Logic::QfUfLra);
        let f = q.declare_fun("f", &[Sort::Real], Sort::Real);
        let g = q.declare_fun("g", &[Sort::Real, Sort::Int], Sort::Bool);
        let x = q.declare_const("x", Sort::Real);
        q.assert(q.eq(q.mul(&[q.real(&ratio(3, 1)), x]), q.real(&ratio(1, 1))));
        q.assert(q.gt(q.apply(&f, &[x]), q.real(&ratio(5, 1))));
        q.assert(q.apply(&g, &[q.apply(&f, &[x]), q.int(2)]));
        q.set_logic(Logic::All);
        q.want("f(x)", q.apply(&f, &[x]));
        let m = sat(kind, &q);
        assert_eq!(m.real("x"), Ok(&ratio(1, 3)), "{kind}");
        let fx = m.real("f(x)").unwrap();
        assert!(*fx > ratio(5, 1), "{kind}: f(x) = {fx}");

        // Congruence: equal arguments, equal results.
        let y = q.declare_const("y", Sort::Real);
        q.assert(q.eq(x, y));
        q.assert(q.distinct(&[q.apply(&f, &[x]), q.apply(&f, &[y])]));
        unsat(kind, &q);
    }
}

/// `x * x = 2` has only irrational solutions. z3 answers with an algebraic number, which the
/// model keeps as "not available" (no exact rational exists); Debian's cvc5 1.0.3 is built
/// without libpoly, so its nonlinear reasoning is incomplete: it gives up, or (under `QF_NRA`)
/// searches until its time limit.
#[test]
fn irrational_witnesses() {
    let mut q = Query::new(Logic::QfNra);
    let x = q.declare_const("x", Sort::Real);
    q.assert(q.eq(q.mul(&[x, x]), q.rational(2, 1)));
    match solver(SolverKind::Z3).check(&q, EASY, &Never) {
        Ok(SatResult::Sat(m)) => assert_eq!(
            m.real("x").unwrap_err().to_string(),
            "the value of `x` is not available: `(root-obj (+ (^ x 2) (- 2)) 1)` is an irrational algebraic number, which has no exact rational value"
        ),
        other => panic!("z3: expected sat, got {other:?}"),
    }
    match solver(SolverKind::Cvc5).check(&q, std::time::Duration::from_millis(500), &Never) {
        Ok(SatResult::Unknown(reason)) => assert!(["the solver gave up: incomplete", "timeout after 500 ms"].contains(&reason.as_str()), "{reason}"),
        // A cvc5 built with libpoly decides it; then its model must not claim a rational root.
        Ok(SatResult::Sat(m)) => assert!(m.real("x").is_err(), "{m}"),
        other => panic!("cvc5: expected unknown, got {other:?}"),
    }
}
