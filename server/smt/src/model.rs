//! A satisfying assignment: every declared constant (and every term a query asked for by name)
//! with its typed value.

use crate::sort::Sort;
use crate::value::{Value, ValueError};
use num_bigint::BigInt;
use num_rational::BigRational;
use std::collections::BTreeMap;
use std::fmt;

/// Values by name, in name order (so printing a model is deterministic).
///
/// A value the solver printed in a form LARK cannot hold (an irrational algebraic number, a
/// bit-vector wider than 128 bits) is kept as its error, so the rest of the model stays usable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    values: BTreeMap<String, Result<Value, ValueError>>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("the model has no value for `{name}` (only declared constants and terms the query asked for are reported)")]
    Missing { name: String },
    #[error("`{name}` is {found} in the model, not {expected}")]
    WrongSort { name: String, expected: &'static str, found: Sort },
    #[error("the value of `{name}` is not available: {source}")]
    Unavailable { name: String, source: ValueError },
}

impl Model {
    pub(crate) fn insert(&mut self, name: String, value: Result<Value, ValueError>) {
        self.values.insert(name, value);
    }

    /// The value of `name`, whatever its sort.
    pub fn get(&self, name: &str) -> Result<&Value, ModelError> {
        match self.values.get(name) {
            None => Err(ModelError::Missing { name: name.to_string() }),
            Some(Err(e)) => Err(ModelError::Unavailable { name: name.to_string(), source: e.clone() }),
            Some(Ok(v)) => Ok(v),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, ModelError> {
        match self.get(name)? {
            Value::Bool(b) => Ok(*b),
            other => Err(wrong_sort(name, "a Bool", other)),
        }
    }

    /// A bit-vector's value as an unsigned number (its width is in [`Model::get`]).
    pub fn bv(&self, name: &str) -> Result<u128, ModelError> {
        match self.get(name)? {
            Value::BitVec { value, .. } => Ok(*value),
            other => Err(wrong_sort(name, "a bit-vector", other)),
        }
    }

    pub fn int(&self, name: &str) -> Result<&BigInt, ModelError> {
        match self.get(name)? {
            Value::Int(i) => Ok(i),
            other => Err(wrong_sort(name, "an Int", other)),
        }
    }

    pub fn real(&self, name: &str) -> Result<&BigRational, ModelError> {
        match self.get(name)? {
            Value::Real(r) => Ok(r),
            other => Err(wrong_sort(name, "a Real", other)),
        }
    }

    /// Every entry in name order, with the values that could not be read as errors.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Result<&Value, &ValueError>)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_ref()))
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

fn wrong_sort(name: &str, expected: &'static str, found: &Value) -> ModelError {
    ModelError::WrongSort { name: name.to_string(), expected, found: found.sort() }
}

impl fmt::Display for Model {
    /// One `name = value` line per entry, in name order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, value) in &self.values {
            match value {
                Ok(v) => writeln!(f, "{name} = {v}")?,
                Err(e) => writeln!(f, "{name} = ? ({e})")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getters_say_what_is_missing_or_of_another_sort() {
        let mut m = Model::default();
        m.insert("x".into(), Ok(Value::BitVec { bits: 8, value: 3 }));
        m.insert("p".into(), Ok(Value::Bool(true)));
        m.insert("r".into(), Err(ValueError::Irrational { text: "(root-obj (+ (^ x 2) (- 2)) 1)".into() }));
        assert_eq!(m.bv("x"), Ok(3));
        assert_eq!(m.bool("p"), Ok(true));
        assert_eq!(m.bool("x").unwrap_err().to_string(), "`x` is (_ BitVec 8) in the model, not a Bool");
        assert_eq!(m.int("p").unwrap_err().to_string(), "`p` is Bool in the model, not an Int");
        assert_eq!(m.real("y").unwrap_err().to_string(), "the model has no value for `y` (only declared constants and terms the query asked for are reported)");
        assert_eq!(
            m.real("r").unwrap_err().to_string(),
            "the value of `r` is not available: `(root-obj (+ (^ x 2) (- 2)) 1)` is an irrational algebraic number, which has no exact rational value"
        );
        assert_eq!(
            m.to_string(),
            "p = true\nr = ? (`(root-obj (+ (^ x 2) (- 2)) 1)` is an irrational algebraic number, which has no exact rational value)\nx = (_ bv3 8)\n"
        );
    }
}
