//! The PyTorch reference a kernel must agree with, and how the kernel's parameters bind to the
//! reference's arguments and results. Read from `[kernel.X.reference]` in lark.toml or from a
//! peer `reference_binding.json` (see `reference_binding.rs`); both give a [`ReferenceSpec`].

use crate::interface::{DType, Scalar};
use crate::size_expr::SizeExpr;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceSpec {
    /// The Python file, resolved relative to the file that named it.
    pub file: PathBuf,
    /// `reference`, or `ClassName.forward` for an `nn.Module`; `None` means the default: a
    /// top-level `reference` if present, else the only `nn.Module`'s `forward`.
    pub function: Option<String>,
    /// The reference's arguments, in the order they were written.
    pub args: Vec<ReferenceArg>,
    /// The i-th entry binds the i-th returned tensor (a single tensor is output 0).
    pub outputs: Vec<ReferenceOutput>,
    /// Concrete values of scalar parameters to check the equivalence at, one map per shape.
    pub shapes: Vec<BTreeMap<String, i128>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceArg {
    /// The reference function's parameter name.
    pub name: String,
    pub binding: ArgBinding,
}

/// What the kernel passes for one reference argument.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgBinding {
    /// A kernel buffer seen as a contiguous row-major tensor of this shape.
    Buffer { buffer: String, shape: Vec<SizeExpr>, dtype: Option<DType> },
    /// The value of a scalar kernel parameter.
    Param(String),
    /// A constant.
    Value(Scalar),
}

/// Where one returned tensor must appear in a kernel buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceOutput {
    pub buffer: String,
    pub shape: Vec<SizeExpr>,
    /// In elements of the buffer, from its start.
    pub offset: SizeExpr,
    /// In elements; `None` means contiguous row-major.
    pub strides: Option<Vec<SizeExpr>>,
}

impl ReferenceSpec {
    /// Every size expression with its key relative to the kernel (`reference.args.x.shape[1]`).
    pub fn exprs(&self) -> Vec<(String, &SizeExpr)> {
        let mut out = Vec::new();
        for a in &self.args {
            if let ArgBinding::Buffer { shape, .. } = &a.binding {
                out.extend(shape.iter().enumerate().map(|(i, e)| (format!("reference.args.{}.shape[{i}]", a.name), e)));
            }
        }
        for (o, out_spec) in self.outputs.iter().enumerate() {
            out.extend(out_spec.shape.iter().enumerate().map(|(i, e)| (format!("reference.outputs[{o}].shape[{i}]"), e)));
            out.push((format!("reference.outputs[{o}].offset"), &out_spec.offset));
            for (i, e) in out_spec.strides.iter().flatten().enumerate() {
                out.push((format!("reference.outputs[{o}].strides[{i}]"), e));
            }
        }
        out
    }

    /// A short description for merge notes.
    pub(crate) fn summary(&self) -> String {
        let f = self.function.as_deref().unwrap_or("(default function)");
        format!("{}:{f}", self.file.display())
    }
}
