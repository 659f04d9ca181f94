//! The PyTorch reference: a restricted subset of Python/PyTorch, parsed with a real Python parser
//! (`ruff_python_parser`) into a typed tensor IR, lowered for concrete shapes to a hash-consed
//! scalar graph, and evaluated exactly.
//!
//! ```text
//! .py ──front::parse──► ir::Program ──lower::lower(args)──► Lowered { graph, outputs, notes }
//!                                                              │
//!                                          eval::evaluate(graph, roots, inputs) ──► Value per element
//! ```
//!
//! # The subset
//! A reference is a top-level `def reference(...)`, or the `forward` of an `nn.Module` subclass
//! whose `__init__` only sets constant attributes (`self.eps = eps`, with defaults, or with the
//! values KernelBench's `get_init_inputs()` returns). Helper
//! functions and methods of the same file are inlined; `import torch`, `import
//! torch.nn.functional as F`, `from torch import nn`, `import math` and similar forms resolve
//! names. Supported: elementwise arithmetic (`+ - * / // % **` with integer powers, unary `-`),
//! comparisons, `relu/sigmoid/silu/gelu(approximate="none"|"tanh")/exp/log/sqrt/rsqrt/tanh/abs/
//! neg/erf/sin/cos/maximum/minimum/where/clamp/pow/masked_fill`, the activations `F.leaky_relu/elu/
//! selu/celu/softplus/softsign/mish/hardtanh/relu6/hardsigmoid/hardswish/logsigmoid/tanhshrink`
//! (with their parameters, as ATen computes them), broadcasting; `sum/mean/prod/
//! amax/amin/max/min/argmax/argmin/cumsum/softmax/log_softmax/var/std` with `dim` (negative,
//! tuples) and `keepdim`; `matmul/@/mm/bmm/einsum` (with `...`)`/F.linear`; `view/reshape/transpose/permute/T/
//! mT/unsqueeze/squeeze/expand/contiguous/flatten/chunk/split/unbind/narrow/cat/stack/repeat/
//! tril/triu`; slicing with steps, negative indices, `None` and `...`; integer-tensor indexing,
//! `index_select`, `gather`, `F.embedding`, and index assignment (a scatter); `F.rms_norm`,
//! `F.layer_norm`; `torch.zeros/ones/full/empty/arange/*_like/tensor`; `x.shape`, `x.size()`,
//! `x.numel()`, `len(x)`, `torch.finfo(dtype).eps/min/max`; `math` constants and functions;
//! locals, tuple unpacking, `for` over `range(...)`/`enumerate`/`zip`/tuples (unrolled), `if` on
//! values known at lowering, list comprehensions, `assert`.
//! The full list of names is [`ops`]. Anything else is a [`RefError`] with the byte span of
//! the construct ("unsupported: `torch.fft.fft` is not in the supported subset"); LARK never
//! guesses.
//!
//! # Semantics (PyTorch's, exactly)
//! `var`/`std` default to the unbiased estimator; `F.layer_norm` uses the biased variance and
//! `eps = 1e-5`; `F.rms_norm` with `eps=None` uses `torch.finfo(x.dtype).eps`; softmax is
//! `exp(x - max) / sum(exp(x - max))` and log_softmax `x - max - log(sum(exp(x - max)))`;
//! integer tensors stay integers (`//` floors, `%` takes the divisor's sign); int with float
//! promotes to float following `torch.result_type`; `max(dim)`/`argmax` break ties at the first
//! index. Reductions are left folds in index order (`((x0 + x1) + x2) ...`).
//!
//! `-inf`/`inf` (`float("-inf")`, `math.inf`) are modelled exactly as masks: `max(x, -inf) = x`,
//! `exp(-inf) = 0`, `x + -inf = -inf`, `1 / inf = 0`, so a causal softmax with
//! `masked_fill(mask, -inf)` or an additive `triu` mask lowers to plain real arithmetic. An
//! infinity that reaches an output, `inf - inf`, or `-inf` chosen by a data-dependent condition
//! is an error. Writes through an alias (`y = x.view(...); y[0] = 1` while `x` is live) are
//! refused rather than mis-modelled; `torch.empty` memory read before it is written is an error
//! if it reaches an output.
//!
//! # The exact-arithmetic contract
//! Values are ideal: integers exact, floats exact rationals, `exp`/`log`/`sqrt`/`tanh`/`erf`/
//! `sin`/`cos`/`pi`/`e` ideal real functions and constants. Float literals are their exact
//! decimal value (`1e-6` is 1/1000000). Casts between float types (and int to float) are the
//! identity — rounding is not modelled, and [`lower::Lowered::notes`] says so where a cast
//! occurs. The graph builder folds exact rational arithmetic on constants only; it never
//! simplifies algebraically. The evaluator ([`eval`]) is exact on rationals and bounds the
//! error of every irrational value (f64, 53 bits).

pub mod dtype;
pub mod error;
pub mod eval;
pub mod front;
pub mod graph;
pub mod ir;
pub mod lower;
pub mod ops;

pub use dtype::DType;
pub use error::RefError;
pub use eval::{evaluate, EvalError, Invalid, Value};
pub use front::parse;
pub use graph::{CmpOp, Graph, Node, NodeId, UnaryFn};
pub use ir::Program;
pub use lower::{infer_shapes, lower, ArgValue, Lowered, LoweredTensor, Note, Number};

use num_rational::BigRational;

/// A concrete argument for [`run`]: like [`ArgValue`], with the tensor's element values.
#[derive(Debug, Clone, PartialEq)]
pub enum ConcreteArg {
    Tensor { shape: Vec<usize>, dtype: DType, values: Vec<BigRational> },
    Scalar(Number),
    IntTensor { shape: Vec<usize>, values: Vec<i64> },
}

/// One returned tensor with the value of every element (row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct TensorValue {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub values: Vec<Value>,
}

/// Runs the reference on concrete tensors: lowering for their shapes, then evaluation.
pub fn run(program: &Program, args: &[ConcreteArg]) -> Result<(Vec<TensorValue>, Vec<Note>), RefError> {
    let entry = program.entry_function();
    let mut shapes = Vec::with_capacity(args.len());
    let mut inputs = Vec::with_capacity(args.len());
    for (i, arg) in args.iter().enumerate() {
        match arg {
            ConcreteArg::Tensor { shape, dtype, values } => {
                let expected: usize = shape.iter().product();
                if expected != values.len() {
                    let span = entry.params.get(i).map_or(entry.span.clone(), |p| p.span.clone());
                    return Err(RefError::new(span, format!("argument {i} has shape {:?} but {} values", shape, values.len())));
                }
                shapes.push(ArgValue::Tensor { shape: shape.clone(), dtype: *dtype });
                inputs.push(values.clone());
            }
            ConcreteArg::Scalar(n) => {
                shapes.push(ArgValue::Scalar(n.clone()));
                inputs.push(Vec::new());
            }
            ConcreteArg::IntTensor { shape, values } => {
                shapes.push(ArgValue::IntTensor { shape: shape.clone(), values: values.clone() });
                inputs.push(Vec::new());
            }
        }
    }
    let lowered = lower(program, &shapes)?;
    let mut outputs = Vec::with_capacity(lowered.outputs.len());
    for out in &lowered.outputs {
        let values = evaluate(&lowered.graph, &out.elements, &inputs).map_err(|e| RefError::new(entry.span.clone(), e.to_string()))?;
        outputs.push(TensorValue { shape: out.shape.clone(), dtype: out.dtype, values });
    }
    Ok((outputs, lowered.notes))
}
