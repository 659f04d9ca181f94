import Lark.Ideal

/-!
# Tensors

The semantics of PyTorch references, over exact rationals: what a kernel is compared with.
A tensor is a shape and a function from flat row-major offsets to values; reductions are folds
over `List.range`, so that a concrete shape unfolds to a finite expression. Transcendental
functions come from an `I : Ideal`, as in the kernel semantics.

These are definitions only; obligations (see `lean/README.md`) state that a kernel run computes,
at every output offset, the value these functions give.
-/

namespace Lark

/-- A tensor shape: sizes of the dimensions, outermost first. -/
abbrev Shape := List Nat

/-- Number of elements of a shape. -/
def Shape.numel (s : Shape) : Nat := s.foldr (fun d acc => d * acc) 1

/-- The flat row-major offset of an index (`((i₀ * d₁ + i₁) * d₂ + i₂) ...`). -/
def rowMajor (s : Shape) (idx : List Nat) : Nat :=
  (s.zip idx).foldl (fun acc p => acc * p.1 + p.2) 0

/-- A tensor: its shape and its elements by flat row-major offset. -/
structure Tensor where
  shape : Shape
  data : Nat → Rat

namespace Tensor

/-- The element at an index. -/
def get (t : Tensor) (idx : List Nat) : Rat := t.data (rowMajor t.shape idx)

/-- A tensor of the given shape from a function of the flat offset. -/
def ofFn (s : Shape) (f : Nat → Rat) : Tensor := { shape := s, data := f }

/-- Applies `f` to every element. -/
def map (f : Rat → Rat) (t : Tensor) : Tensor := { shape := t.shape, data := fun i => f (t.data i) }

/-- Combines two tensors of the same shape element by element (the shape of `a` is kept). -/
def zipWith (f : Rat → Rat → Rat) (a b : Tensor) : Tensor :=
  { shape := a.shape, data := fun i => f (a.data i) (b.data i) }

end Tensor

/-- `∑_{i < n} f i`, folded left to right from 0 (the order a sequential loop adds in). -/
def sumRange (n : Nat) (f : Nat → Rat) : Rat := (List.range n).foldl (fun acc i => acc + f i) 0

/-- `max_{i < n} f i`, starting from `init` (pass `f 0` for a non-empty range). -/
def maxRange (n : Nat) (init : Rat) (f : Nat → Rat) : Rat :=
  (List.range n).foldl (fun acc i => if acc < f i then f i else acc) init

/-- The sum of each row of a `rows × cols` matrix. -/
def rowSum (rows cols : Nat) (x : Nat → Rat) : Nat → Rat :=
  fun r => if r < rows then sumRange cols (fun c => x (r * cols + c)) else 0

/-- Matrix product of an `m × k` and a `k × n` matrix, row-major. -/
def matmul (m k n : Nat) (a b : Nat → Rat) : Tensor :=
  Tensor.ofFn [m, n] (fun o => sumRange k (fun p => a ((o / n) * k + p) * b (p * n + o % n)))

/-- Softmax of one row of length `n`: `exp (x i - max x) / ∑ exp (x j - max x)`. -/
def softmaxRow (I : Ideal) (n : Nat) (x : Nat → Rat) : Nat → Rat :=
  let mx := maxRange n (x 0) x
  let e := fun i => I.exp (x i - mx)
  let s := sumRange n e
  fun i => e i / s

/-- Softmax along the last dimension of a `rows × cols` matrix. -/
def softmax (I : Ideal) (rows cols : Nat) (x : Nat → Rat) : Tensor :=
  Tensor.ofFn [rows, cols] (fun o => softmaxRow I cols (fun c => x ((o / cols) * cols + c)) (o % cols))

/-- RMS normalisation of one row of length `n` with weight `w`:
`x i * rsqrt (mean (x²) + eps) * w i`. -/
def rmsNormRow (I : Ideal) (eps : Rat) (n : Nat) (w x : Nat → Rat) : Nat → Rat :=
  let ms := sumRange n (fun i => x i * x i) / (n : Rat)
  fun i => x i * I.rsqrt (ms + eps) * w i

/-- RMS normalisation along the last dimension of a `rows × cols` matrix. -/
def rmsNorm (I : Ideal) (eps : Rat) (rows cols : Nat) (w x : Nat → Rat) : Tensor :=
  Tensor.ofFn [rows, cols] (fun o => rmsNormRow I eps cols w (fun c => x ((o / cols) * cols + c)) (o % cols))

/-- Sum over all elements of a flat tensor of `n` elements. -/
def sumAll (n : Nat) (x : Nat → Rat) : Rat := sumRange n x

end Lark
