//! Building terms: literals, boolean connectives, bit-vector and arithmetic operators,
//! uninterpreted function application. Each operation checks its operands' sorts; a mismatch is
//! recorded on the query (see [`BuildError`]) and a term of the intended sort is returned so
//! building can go on.

use crate::query::{BuildError, Func, Query, Term};
use crate::sort::Sort;
use crate::value::Value;
use easy_smt::SExpr;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Signed;

/// A bit-vector operator with two operands of one width and a result of that width.
macro_rules! bv_binary {
    ($($(#[$doc:meta])* $name:ident => $ctx:ident, $op:literal;)*) => {$(
        $(#[$doc])*
        pub fn $name(&self, a: Term, b: Term) -> Term {
            let sort = self.same_bv($op, a, b);
            self.term(self.ctx.$ctx(a.expr, b.expr), sort)
        }
    )*};
}

/// A bit-vector comparison: two operands of one width, a Bool result.
macro_rules! bv_compare {
    ($($name:ident => $ctx:ident, $op:literal;)*) => {$(
        #[doc = concat!("`(", $op, " a b)`")]
        pub fn $name(&self, a: Term, b: Term) -> Term {
            self.same_bv($op, a, b);
            self.term(self.ctx.$ctx(a.expr, b.expr), Sort::Bool)
        }
    )*};
}

/// An arithmetic comparison: two operands of one arithmetic sort, a Bool result.
macro_rules! arith_compare {
    ($($name:ident => $ctx:ident, $op:literal;)*) => {$(
        #[doc = concat!("`(", $op, " a b)` over `Int` or `Real`")]
        pub fn $name(&self, a: Term, b: Term) -> Term {
            self.same_arith($op, &[a, b]);
            self.term(self.ctx.$ctx(a.expr, b.expr), Sort::Bool)
        }
    )*};
}

impl Query {
    pub(crate) fn term(&self, expr: SExpr, sort: Sort) -> Term {
        Term { expr, sort, query: self.id }
    }

    fn mismatch(&self, op: &str, expected: &str, found: &[Term]) {
        let found = if found.is_empty() { "nothing".to_string() } else { found.iter().map(|t| t.sort.to_string()).collect::<Vec<_>>().join(" and ") };
        self.error(BuildError::SortMismatch { op: op.to_string(), expected: expected.to_string(), found });
    }

    /// Both operands bit-vectors of one width: that sort.
    fn same_bv(&self, op: &str, a: Term, b: Term) -> Sort {
        if self.own(op, &[a, b]) && !(matches!(a.sort, Sort::BitVec(_)) && a.sort == b.sort) {
            self.mismatch(op, "two bit-vectors of one width", &[a, b]);
        }
        if matches!(a.sort, Sort::BitVec(_)) {
            a.sort
        } else {
            b.sort
        }
    }

    fn one_bv(&self, op: &str, a: Term) -> u32 {
        match a.sort {
            Sort::BitVec(n) => n,
            _ => {
                if self.own(op, &[a]) {
                    self.mismatch(op, "a bit-vector", &[a]);
                }
                1
            }
        }
    }

    /// All operands of one arithmetic sort (`Int` or `Real`): that sort.
    fn same_arith(&self, op: &str, terms: &[Term]) -> Sort {
        let sort = terms.first().map_or(Sort::Int, |t| t.sort);
        if self.own(op, terms) && !(sort.is_arithmetic() && terms.iter().all(|t| t.sort == sort)) {
            self.mismatch(op, "operands of one sort, Int or Real", terms);
        }
        sort
    }

    fn all_bool(&self, op: &str, terms: &[Term]) {
        if self.own(op, terms) && terms.iter().any(|t| t.sort != Sort::Bool) {
            self.mismatch(op, "Bool operands", terms);
        }
    }

    fn app(&self, op: &str, terms: &[Term]) -> SExpr {
        let mut items = Vec::with_capacity(terms.len() + 1);
        items.push(self.ctx.atom(op));
        items.extend(terms.iter().map(|t| t.expr));
        self.ctx.list(items)
    }

    /// `(_ op n)` applied to `t`.
    fn indexed(&self, op: &str, indices: &[u32], t: Term) -> SExpr {
        let mut head = vec![self.ctx.atom("_"), self.ctx.atom(op)];
        head.extend(indices.iter().map(|i| self.ctx.numeral(*i)));
        self.ctx.list(vec![self.ctx.list(head), t.expr])
    }

    // ---- literals ----

    pub fn bool(&self, b: bool) -> Term {
        self.term(if b { self.ctx.true_() } else { self.ctx.false_() }, Sort::Bool)
    }

    /// The bit-vector `value` of width `bits`, taken modulo 2^bits (PTX's wrap-around), written
    /// `(_ bvN bits)`.
    pub fn bv(&self, value: u128, bits: u32) -> Term {
        if bits == 0 {
            self.error(BuildError::ZeroWidth { op: "bv".into() });
        }
        let value = if bits >= 128 { value } else { value & ((1u128 << bits) - 1) };
        self.term(self.ctx.list(vec![self.ctx.atom("_"), self.ctx.atom(format!("bv{value}")), self.ctx.numeral(bits)]), Sort::BitVec(bits))
    }

    /// An integer literal, `(- 5)` when negative.
    pub fn int(&self, value: impl Into<BigInt>) -> Term {
        let value: BigInt = value.into();
        let magnitude = self.ctx.atom(value.abs().to_string());
        let expr = if value.is_negative() { self.ctx.negate(magnitude) } else { magnitude };
        self.term(expr, Sort::Int)
    }

    /// A rational literal, written with decimals (`(/ 1.0 3.0)`, `(- 2.0)`), which are reals in
    /// every logic.
    pub fn real(&self, value: &BigRational) -> Term {
        let magnitude = value.abs();
        let decimal = |n: &BigInt| self.ctx.atom(format!("{n}.0"));
        let positive = if magnitude.is_integer() { decimal(magnitude.numer()) } else { self.ctx.rdiv(decimal(magnitude.numer()), decimal(magnitude.denom())) };
        let expr = if value.is_negative() { self.ctx.negate(positive) } else { positive };
        self.term(expr, Sort::Real)
    }

    /// The rational `numer / denom` as a real literal.
    pub fn rational(&self, numer: i64, denom: i64) -> Term {
        if denom == 0 {
            self.error(BuildError::ZeroDenominator { numer });
            return self.real(&BigRational::from_integer(numer.into()));
        }
        self.real(&BigRational::new(numer.into(), denom.into()))
    }

    /// The literal for a model value (to pin a variable to the value a model gave it).
    pub fn literal(&self, value: &Value) -> Term {
        match value {
            Value::Bool(b) => self.bool(*b),
            Value::BitVec { bits, value } => self.bv(*value, *bits),
            Value::Int(i) => self.int(i.clone()),
            Value::Real(r) => self.real(r),
        }
    }

    // ---- booleans ----

    pub fn not(&self, a: Term) -> Term {
        self.all_bool("not", &[a]);
        self.term(self.ctx.not(a.expr), Sort::Bool)
    }

    /// `(and ...)`; `true` when empty.
    pub fn and(&self, terms: &[Term]) -> Term {
        self.all_bool("and", terms);
        match terms {
            [] => self.bool(true),
            [t] => *t,
            _ => self.term(self.app("and", terms), Sort::Bool),
        }
    }

    /// `(or ...)`; `false` when empty.
    pub fn or(&self, terms: &[Term]) -> Term {
        self.all_bool("or", terms);
        match terms {
            [] => self.bool(false),
            [t] => *t,
            _ => self.term(self.app("or", terms), Sort::Bool),
        }
    }

    pub fn xor(&self, a: Term, b: Term) -> Term {
        self.all_bool("xor", &[a, b]);
        self.term(self.ctx.xor(a.expr, b.expr), Sort::Bool)
    }

    pub fn implies(&self, a: Term, b: Term) -> Term {
        self.all_bool("=>", &[a, b]);
        self.term(self.ctx.imp(a.expr, b.expr), Sort::Bool)
    }

    /// `(= a b)` for two terms of one sort.
    pub fn eq(&self, a: Term, b: Term) -> Term {
        if self.own("=", &[a, b]) && a.sort != b.sort {
            self.mismatch("=", "two terms of one sort", &[a, b]);
        }
        self.term(self.ctx.eq(a.expr, b.expr), Sort::Bool)
    }

    /// `(distinct ...)` for terms of one sort; `true` for fewer than two.
    pub fn distinct(&self, terms: &[Term]) -> Term {
        if self.own("distinct", terms) && terms.iter().any(|t| t.sort != terms[0].sort) {
            self.mismatch("distinct", "terms of one sort", terms);
        }
        if terms.len() < 2 {
            return self.bool(true);
        }
        self.term(self.app("distinct", terms), Sort::Bool)
    }

    /// `(ite c a b)`: `a` and `b` of one sort.
    pub fn ite(&self, c: Term, a: Term, b: Term) -> Term {
        if self.own("ite", &[c, a, b]) && (c.sort != Sort::Bool || a.sort != b.sort) {
            self.mismatch("ite", "a Bool condition and two branches of one sort", &[c, a, b]);
        }
        self.term(self.ctx.ite(c.expr, a.expr, b.expr), a.sort)
    }

    // ---- bit-vectors ----

    bv_binary! {
        /// `(bvadd a b)`, modulo 2^width.
        bv_add => bvadd, "bvadd";
        /// `(bvsub a b)`, modulo 2^width.
        bv_sub => bvsub, "bvsub";
        /// `(bvmul a b)`, modulo 2^width.
        bv_mul => bvmul, "bvmul";
        /// `(bvudiv a b)`; division by zero gives all ones, as SMT-LIB defines it.
        bv_udiv => bvudiv, "bvudiv";
        /// `(bvsdiv a b)`.
        bv_sdiv => bvsdiv, "bvsdiv";
        /// `(bvurem a b)`; remainder by zero gives `a`.
        bv_urem => bvurem, "bvurem";
        /// `(bvsrem a b)`, with the sign of `a`.
        bv_srem => bvsrem, "bvsrem";
        /// `(bvshl a b)`; shifting by the width or more gives zero.
        bv_shl => bvshl, "bvshl";
        /// `(bvlshr a b)`.
        bv_lshr => bvlshr, "bvlshr";
        /// `(bvashr a b)`.
        bv_ashr => bvashr, "bvashr";
        /// `(bvand a b)`.
        bv_and => bvand, "bvand";
        /// `(bvor a b)`.
        bv_or => bvor, "bvor";
        /// `(bvxor a b)`.
        bv_xor => bvxor, "bvxor";
    }

    bv_compare! {
        bv_ult => bvult, "bvult";
        bv_ule => bvule, "bvule";
        bv_ugt => bvugt, "bvugt";
        bv_uge => bvuge, "bvuge";
        bv_slt => bvslt, "bvslt";
        bv_sle => bvsle, "bvsle";
        bv_sgt => bvsgt, "bvsgt";
        bv_sge => bvsge, "bvsge";
    }

    /// `(bvnot a)`.
    pub fn bv_not(&self, a: Term) -> Term {
        let bits = self.one_bv("bvnot", a);
        self.term(self.ctx.bvnot(a.expr), Sort::BitVec(bits))
    }

    /// `(bvneg a)`, two's complement negation.
    pub fn bv_neg(&self, a: Term) -> Term {
        let bits = self.one_bv("bvneg", a);
        self.term(self.ctx.bvneg(a.expr), Sort::BitVec(bits))
    }

    /// `((_ extract hi lo) a)`: bits `hi` down to `lo`, a bit-vector of `hi - lo + 1` bits.
    pub fn extract(&self, hi: u32, lo: u32, a: Term) -> Term {
        let bits = self.one_bv("extract", a);
        if a.sort.bits().is_some() && (hi < lo || hi >= bits) {
            self.error(BuildError::BadExtract { hi, lo, bits });
        }
        let width = hi.saturating_sub(lo) + 1;
        self.term(self.indexed("extract", &[hi, lo], a), Sort::BitVec(width))
    }

    /// `(concat hi lo)`: `hi`'s bits above `lo`'s.
    pub fn concat(&self, hi: Term, lo: Term) -> Term {
        let (a, b) = (self.one_bv("concat", hi), self.one_bv("concat", lo));
        self.term(self.ctx.concat(hi.expr, lo.expr), Sort::BitVec(a + b))
    }

    /// `((_ zero_extend extra) a)`: `extra` more bits, zero.
    pub fn zero_extend(&self, extra: u32, a: Term) -> Term {
        let bits = self.one_bv("zero_extend", a);
        if extra == 0 {
            return a;
        }
        self.term(self.indexed("zero_extend", &[extra], a), Sort::BitVec(bits + extra))
    }

    /// `((_ sign_extend extra) a)`: `extra` more bits, copies of the sign bit.
    pub fn sign_extend(&self, extra: u32, a: Term) -> Term {
        let bits = self.one_bv("sign_extend", a);
        if extra == 0 {
            return a;
        }
        self.term(self.indexed("sign_extend", &[extra], a), Sort::BitVec(bits + extra))
    }

    // ---- Int and Real arithmetic ----

    /// `(+ ...)` over one arithmetic sort; needs at least one operand.
    pub fn add(&self, terms: &[Term]) -> Term {
        self.variadic_arith("+", terms)
    }

    /// `(* ...)` over one arithmetic sort; needs at least one operand. A product of two
    /// non-constant terms needs a nonlinear logic (`QF_NRA`, `QF_UFNRA`).
    pub fn mul(&self, terms: &[Term]) -> Term {
        self.variadic_arith("*", terms)
    }

    fn variadic_arith(&self, op: &str, terms: &[Term]) -> Term {
        let sort = self.same_arith(op, terms);
        match terms {
            [] => {
                self.mismatch(op, "at least one operand", terms);
                self.int(0)
            }
            [t] => *t,
            _ => self.term(self.app(op, terms), sort),
        }
    }

    /// `(- a b)`.
    pub fn sub(&self, a: Term, b: Term) -> Term {
        let sort = self.same_arith("-", &[a, b]);
        self.term(self.ctx.sub(a.expr, b.expr), sort)
    }

    /// `(- a)`.
    pub fn neg(&self, a: Term) -> Term {
        let sort = self.same_arith("-", &[a]);
        self.term(self.ctx.negate(a.expr), sort)
    }

    /// `(/ a b)` over reals (exact division; SMT-LIB leaves division by zero unspecified, so
    /// a query that may divide by zero should say what it assumes).
    pub fn div(&self, a: Term, b: Term) -> Term {
        if self.own("/", &[a, b]) && (a.sort != Sort::Real || b.sort != Sort::Real) {
            self.mismatch("/", "two Reals", &[a, b]);
        }
        self.term(self.ctx.rdiv(a.expr, b.expr), Sort::Real)
    }

    /// `(to_real a)`: an integer as a real.
    pub fn to_real(&self, a: Term) -> Term {
        if self.own("to_real", &[a]) && a.sort != Sort::Int {
            self.mismatch("to_real", "an Int", &[a]);
        }
        self.term(self.ctx.conv_to_real(a.expr), Sort::Real)
    }

    arith_compare! {
        lt => lt, "<";
        le => lte, "<=";
        gt => gt, ">";
        ge => gte, ">=";
    }

    // ---- uninterpreted functions ----

    /// `(f args...)`; the arguments must match the declared sorts.
    pub fn apply(&self, f: &Func, args: &[Term]) -> Term {
        let op = f.name.as_str();
        if f.query != self.id {
            self.error(BuildError::ForeignTerm { op: op.to_string() });
        } else if self.own(op, args) && (args.len() != f.args.len() || args.iter().zip(f.args.iter()).any(|(a, s)| a.sort != *s)) {
            let expected = format!("arguments ({})", f.args.iter().map(Sort::to_string).collect::<Vec<_>>().join(" "));
            self.mismatch(op, &expected, args);
        }
        if args.is_empty() {
            return self.term(f.expr, f.ret);
        }
        let mut items = Vec::with_capacity(args.len() + 1);
        items.push(f.expr);
        items.extend(args.iter().map(|t| t.expr));
        self.term(self.ctx.list(items), f.ret)
    }
}

#[cfg(test)]
mod tests {
    use crate::sort::{Logic, Sort};
    use crate::{BuildError, Query};
    use expect_test::expect;
    use num_rational::BigRational;

    #[test]
    fn terms_render_as_smtlib() {
        let mut q = Query::new(Logic::All);
        let x = q.declare_const("x", Sort::BitVec(32));
        let y = q.declare_const("y", Sort::BitVec(32));
        let r = q.declare_const("r", Sort::Real);
        let i = q.declare_const("i", Sort::Int);
        let f = q.declare_fun("f", &[Sort::Real, Sort::Int], Sort::Real);
        let wide = q.zero_extend(32, x);
        let hi = q.extract(63, 32, q.bv_mul(wide, q.sign_extend(32, y)));
        let shared = q.define("hi", hi);
        q.assert(q.and(&[q.bv_ult(shared, q.bv(7, 32)), q.eq(q.concat(x, y), q.bv(u128::MAX, 64)), q.not(q.bool(false))]));
        q.assert(q.implies(q.bv_sle(x, y), q.distinct(&[x, y, q.bv_neg(q.bv_not(x))])));
        let third = BigRational::new(1.into(), 3.into());
        let body = q.add(&[q.mul(&[r, r]), q.real(&-third), q.apply(&f, &[q.div(r, q.real(&BigRational::from_integer(2.into()))), q.int(-5)])]);
        q.assert(q.le(body, q.sub(r, q.to_real(i))));
        q.assert(q.eq(q.ite(q.gt(i, q.int(3)), i, q.neg(i)), q.int(4)));
        q.want("f_at_r", q.apply(&f, &[r, i]));
        assert_eq!(q.build_errors(), vec![]);
        expect![[r#"
            (set-option :produce-models true)
            (set-logic ALL)
            (declare-const x (_ BitVec 32))
            (declare-const y (_ BitVec 32))
            (declare-const r Real)
            (declare-const i Int)
            (declare-fun f (Real Int) Real)
            (define-fun hi () (_ BitVec 32) ((_ extract 63 32) (bvmul ((_ zero_extend 32) x) ((_ sign_extend 32) y))))
            (assert (and (bvult hi (_ bv7 32)) (= (concat x y) (_ bv18446744073709551615 64)) (not false)))
            (assert (=> (bvsle x y) (distinct x y (bvneg (bvnot x)))))
            (assert (<= (+ (* r r) (- (/ 1.0 3.0)) (f (/ r 2.0) (- 5))) (- r (to_real i))))
            (assert (= (ite (> i 3) i (- i)) 4))
            (check-sat)
            (get-value (x y r i (f r i)))
        "#]]
        .assert_eq(&q.to_smtlib());
    }

    #[test]
    fn mistakes_are_collected_not_panicked() {
        let mut q = Query::new(Logic::QfBv);
        let x = q.declare_const("x", Sort::BitVec(8));
        let y = q.declare_const("y", Sort::BitVec(16));
        let p = q.declare_const("p", Sort::Bool);
        q.declare_const("x", Sort::Bool);
        q.declare_const("a|b", Sort::Bool);
        let f = q.declare_fun("f", &[Sort::BitVec(8)], Sort::Bool);
        q.assert(q.bv_add(x, y));
        q.assert(q.apply(&f, &[y]));
        q.assert(q.eq(q.extract(8, 0, x), x));
        let other = Query::new(Logic::QfBv);
        q.assert(q.and(&[p, other.bool(true)]));
        q.assert(q.add(&[]));
        q.assert(q.eq(q.rational(1, 0), q.rational(-3, 6)));
        q.want("x", q.bv_not(x));
        let messages: Vec<String> = q.build_errors().iter().map(BuildError::to_string).collect();
        expect![[r#"
            [
                "`x` is declared twice",
                "`a|b` has no SMT-LIB spelling (a symbol cannot contain `|` or `\\`)",
                "`bvadd` expects two bit-vectors of one width, found (_ BitVec 8) and (_ BitVec 16)",
                "`assert` expects Bool, found (_ BitVec 8)",
                "`f` expects arguments ((_ BitVec 8)), found (_ BitVec 16)",
                "`(_ extract 8 0)` does not fit a bit-vector of 8 bits",
                "`=` expects two terms of one sort, found (_ BitVec 9) and (_ BitVec 8)",
                "`and` was given a term or function built by another query",
                "`+` expects at least one operand, found nothing",
                "`assert` expects Bool, found Int",
                "the rational literal 1/0 has a zero denominator",
                "the model already reports a value named `x`",
            ]
        "#]]
        .assert_debug_eq(&messages);
    }

    #[test]
    fn rollback_forgets_later_commands_and_names() {
        let mut q = Query::new(Logic::QfBv);
        let x = q.declare_const("x", Sort::BitVec(8));
        q.assert(q.bv_ult(x, q.bv(9, 8)));
        let mark = q.mark();
        let y = q.declare_const("y", Sort::BitVec(8));
        q.assert(q.eq(x, y));
        q.rollback(mark);
        q.declare_const("y", Sort::Bool);
        assert_eq!(q.build_errors(), vec![]);
        assert_eq!(
            q.to_smtlib(),
            "(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-const x (_ BitVec 8))\n(assert (bvult x (_ bv9 8)))\n(declare-const y Bool)\n(check-sat)\n(get-value (x y))\n"
        );
    }

    #[test]
    fn literals_wrap_and_quote() {
        let mut q = Query::new(Logic::All);
        assert_eq!(q.display(q.bv(300, 8)), "(_ bv44 8)");
        assert_eq!(q.display(q.bv(u128::MAX, 128)), format!("(_ bv{} 128)", u128::MAX));
        let odd = q.declare_const("a b", Sort::Int);
        assert_eq!(q.display(odd), "|a b|");
        assert_eq!(q.lookup("a b"), Some(odd));
        assert_eq!(q.lookup("nope"), None);
    }
}
