//! Sorts and logics: the small part of SMT-LIB's type system LARK uses.

use std::fmt;

/// The sort of a term or a declared constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sort {
    Bool,
    /// A bit-vector of the given width (at least 1).
    BitVec(u32),
    Int,
    Real,
}

impl Sort {
    /// Whether `+ - * <` and friends apply (SMT-LIB's `Int` and `Real` arithmetic).
    pub fn is_arithmetic(self) -> bool {
        matches!(self, Sort::Int | Sort::Real)
    }

    /// The width, for bit-vectors.
    pub fn bits(self) -> Option<u32> {
        match self {
            Sort::BitVec(n) => Some(n),
            _ => None,
        }
    }
}

impl fmt::Display for Sort {
    /// The SMT-LIB spelling: `Bool`, `(_ BitVec 32)`, `Int`, `Real`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sort::Bool => f.write_str("Bool"),
            Sort::BitVec(n) => write!(f, "(_ BitVec {n})"),
            Sort::Int => f.write_str("Int"),
            Sort::Real => f.write_str("Real"),
        }
    }
}

/// The SMT-LIB logic a query is stated in. Solvers pick their decision procedures from it, so a
/// bit-vector query under `QF_BV` is decided by the bit-blaster and a real one under `QF_UFLRA`
/// by simplex; `ALL` works everywhere but may be slower.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Logic {
    /// Bit-vectors (the race, divergence and bounds questions).
    QfBv,
    /// Bit-vectors with uninterpreted functions.
    QfUfBv,
    /// Linear integer arithmetic.
    QfLia,
    /// Linear real arithmetic.
    QfLra,
    /// Linear arithmetic over integers and reals together (`to_real`).
    QfLira,
    /// Linear real arithmetic with uninterpreted functions (equivalence under exact arithmetic).
    QfUfLra,
    /// Nonlinear integer arithmetic.
    QfNia,
    /// Nonlinear real arithmetic.
    QfNra,
    /// Nonlinear real arithmetic with uninterpreted functions.
    QfUfNra,
    /// Every theory the solver supports.
    All,
}

impl Logic {
    pub const EVERY: [Logic; 10] =
        [Logic::QfBv, Logic::QfUfBv, Logic::QfLia, Logic::QfLra, Logic::QfLira, Logic::QfUfLra, Logic::QfNia, Logic::QfNra, Logic::QfUfNra, Logic::All];

    /// The name `set-logic` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Logic::QfBv => "QF_BV",
            Logic::QfUfBv => "QF_UFBV",
            Logic::QfLia => "QF_LIA",
            Logic::QfLra => "QF_LRA",
            Logic::QfLira => "QF_LIRA",
            Logic::QfUfLra => "QF_UFLRA",
            Logic::QfNia => "QF_NIA",
            Logic::QfNra => "QF_NRA",
            Logic::QfUfNra => "QF_UFNRA",
            Logic::All => "ALL",
        }
    }

    /// The logic named `name` (as `set-logic` spells it), if LARK knows it.
    pub fn from_name(name: &str) -> Option<Logic> {
        Logic::EVERY.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for Logic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_print_as_smtlib() {
        let printed: Vec<String> = [Sort::Bool, Sort::BitVec(32), Sort::Int, Sort::Real].iter().map(Sort::to_string).collect();
        assert_eq!(printed, ["Bool", "(_ BitVec 32)", "Int", "Real"]);
    }

    #[test]
    fn logic_names_round_trip() {
        for l in Logic::EVERY {
            assert_eq!(Logic::from_name(l.as_str()), Some(l));
        }
        assert_eq!(Logic::from_name("QF_ABV"), None);
    }
}
