import Lark.Value
import Lark.Ideal
import Lark.Ops.Int

/-!
# Float operations

`FloatOp` and `FloatCmp` (`model::ops`) and their exact semantics, following
`model::interp::FloatVal` case for case on the IEEE special values: arithmetic on finite values is
exact rational arithmetic; `sqrt`, `rsqrt`, `ex2`, `lg2`, `sin`, `cos`, `tanh` are the ideal
functions of an `I : Ideal`. Not modelled, by design: rounding of results to a format (the
interpreter's `normalize`), signed zeros, flush-to-zero.

Also here: the PTX type names (`typeBits?`, `TypeClass`) and `cvt`, which rounds to an integer
when its modifier asks for it (`.rni`, `.rzi`, ...) and when it converts to an integer type, and
is otherwise exact.
-/

namespace Lark

/-- Float operations (`model::ops::FloatOp`). -/
inductive FloatOp where
  | add | sub | mul | div | fma | neg | abs | min | max
  | sqrt | rsqrt | rcp | ex2 | lg2 | sin | cos | tanh | erf | other
  deriving DecidableEq, Repr

/-- Float comparisons (`model::ops::FloatCmp`); unordered ones are decoded as negations. -/
inductive FloatCmp where
  | eq | ne | lt | le | gt | ge | other
  deriving DecidableEq, Repr

namespace FloatVal

/-- Zero. -/
def zero : FloatVal := .finite 0

/-- Sign of a value; `nan` counts as non-negative (`FloatVal::is_negative`). -/
def isNeg : FloatVal → Bool
  | .finite q => decide (q < 0)
  | .inf n => n
  | .nan => false

/-- Negation. -/
def neg : FloatVal → FloatVal
  | .finite q => .finite (-q)
  | .inf n => .inf (!n)
  | .nan => .nan

/-- Absolute value. -/
def abs : FloatVal → FloatVal
  | .finite q => .finite (if q < 0 then -q else q)
  | .inf _ => .inf false
  | .nan => .nan

/-- Exact addition with IEEE special values. -/
def add : FloatVal → FloatVal → FloatVal
  | .nan, _ => .nan
  | _, .nan => .nan
  | .inf a, .inf b => if a = b then .inf a else .nan
  | .inf a, .finite _ => .inf a
  | .finite _, .inf b => .inf b
  | .finite x, .finite y => .finite (x + y)

/-- Exact subtraction. -/
def sub (x y : FloatVal) : FloatVal := add x (neg y)

/-- Exact multiplication with IEEE special values. -/
def mul : FloatVal → FloatVal → FloatVal
  | .nan, _ => .nan
  | _, .nan => .nan
  | .finite x, .finite y => .finite (x * y)
  | .finite x, .inf n => if x = 0 then .nan else .inf (n != decide (x < 0))
  | .inf n, .finite y => if y = 0 then .nan else .inf (n != decide (y < 0))
  | .inf a, .inf b => .inf (a != b)

/-- Exact division with IEEE special values. -/
def div : FloatVal → FloatVal → FloatVal
  | .nan, _ => .nan
  | _, .nan => .nan
  | .inf _, .inf _ => .nan
  | .inf n, .finite y => .inf (n != decide (y < 0))
  | .finite _, .inf _ => .finite 0
  | .finite x, .finite y =>
    if y = 0 then (if x = 0 then .nan else .inf (decide (x < 0))) else .finite (x / y)

/-- Fused multiply-add, exactly (`a * b + c`). -/
def fma (a b c : FloatVal) : FloatVal := add (mul a b) c

/-- IEEE comparison; `none` when either side is `nan`. -/
def compare : FloatVal → FloatVal → Option Ordering
  | .nan, _ => none
  | _, .nan => none
  | .finite a, .finite b => some (if a < b then .lt else if a = b then .eq else .gt)
  | .inf a, .inf b => some (if a = b then .eq else if a then .lt else .gt)
  | .inf n, .finite _ => some (if n then .lt else .gt)
  | .finite _, .inf n => some (if n then .gt else .lt)

/-- PTX `min`: a `nan` operand yields the other operand. -/
def min (x y : FloatVal) : FloatVal :=
  match FloatVal.compare x y with
  | none => (match x with | .nan => y | _ => x)
  | some .gt => y
  | some _ => x

/-- PTX `max`: a `nan` operand yields the other operand. -/
def max (x y : FloatVal) : FloatVal :=
  match FloatVal.compare x y with
  | none => (match x with | .nan => y | _ => x)
  | some .lt => y
  | some _ => x

/-- `1 / x`, exactly. -/
def rcp (x : FloatVal) : FloatVal := div (.finite 1) x

/-- Square root: the ideal function on non-negative finite values. -/
def sqrt (I : Ideal) : FloatVal → FloatVal
  | .finite q => if q < 0 then .nan else .finite (I.sqrt q)
  | .inf false => .inf false
  | .inf true => .nan
  | .nan => .nan

/-- Reciprocal square root: `+inf` at zero, the ideal function on positive finite values. -/
def rsqrt (I : Ideal) : FloatVal → FloatVal
  | .finite q => if q < 0 then .nan else if q = 0 then .inf false else .finite (I.rsqrt q)
  | .inf false => .finite 0
  | .inf true => .nan
  | .nan => .nan

/-- `2 ^ x`: `ex2(-inf) = 0`, `ex2(+inf) = +inf`. -/
def ex2 (I : Ideal) : FloatVal → FloatVal
  | .finite q => .finite (I.ex2 q)
  | .inf false => .inf false
  | .inf true => .finite 0
  | .nan => .nan

/-- `log₂ x`: `-inf` at zero, `nan` below. -/
def lg2 (I : Ideal) : FloatVal → FloatVal
  | .finite q => if q < 0 then .nan else if q = 0 then .inf true else .finite (I.lg2 q)
  | .inf false => .inf false
  | .inf true => .nan
  | .nan => .nan

/-- Sine; `nan` at infinity. -/
def sin (I : Ideal) : FloatVal → FloatVal
  | .finite q => .finite (I.sin q)
  | _ => .nan

/-- Cosine; `nan` at infinity. -/
def cos (I : Ideal) : FloatVal → FloatVal
  | .finite q => .finite (I.cos q)
  | _ => .nan

/-- Hyperbolic tangent; `±1` at `±inf`. -/
def tanh (I : Ideal) : FloatVal → FloatVal
  | .finite q => .finite (I.tanh q)
  | .inf n => .finite (if n then -1 else 1)
  | .nan => .nan

/-- The error function (libdevice's `erff`, `FloatOp.erf`); `±1` at `±inf`. -/
def erf (I : Ideal) : FloatVal → FloatVal
  | .finite q => .finite (I.erf q)
  | .inf n => .finite (if n then -1 else 1)
  | .nan => .nan

end FloatVal

/-- A float operation on its operands (the first ones it needs; extra operands are ignored, as in
the interpreter). `none` for `FloatOp.other` or too few operands. -/
def evalFloat (I : Ideal) (op : FloatOp) (xs : List FloatVal) : Option FloatVal :=
  match op, xs with
  | .add, a :: b :: _ => some (FloatVal.add a b)
  | .sub, a :: b :: _ => some (FloatVal.sub a b)
  | .mul, a :: b :: _ => some (FloatVal.mul a b)
  | .div, a :: b :: _ => some (FloatVal.div a b)
  | .fma, a :: b :: c :: _ => some (FloatVal.fma a b c)
  | .neg, a :: _ => some (FloatVal.neg a)
  | .abs, a :: _ => some (FloatVal.abs a)
  | .min, a :: b :: _ => some (FloatVal.min a b)
  | .max, a :: b :: _ => some (FloatVal.max a b)
  | .sqrt, a :: _ => some (FloatVal.sqrt I a)
  | .rsqrt, a :: _ => some (FloatVal.rsqrt I a)
  | .rcp, a :: _ => some (FloatVal.rcp a)
  | .ex2, a :: _ => some (FloatVal.ex2 I a)
  | .lg2, a :: _ => some (FloatVal.lg2 I a)
  | .sin, a :: _ => some (FloatVal.sin I a)
  | .cos, a :: _ => some (FloatVal.cos I a)
  | .tanh, a :: _ => some (FloatVal.tanh I a)
  | .erf, a :: _ => some (FloatVal.erf I a)
  | _, _ => none

/-- A float comparison (`setp.f32`): `none` for `FloatCmp.other`. `ne` is ordered, as in PTX. -/
def evalFloatCmp (c : FloatCmp) (a b : FloatVal) : Option Bool :=
  match c, FloatVal.compare a b with
  | .eq, some .eq => some true
  | .eq, _ => some false
  | .ne, some .eq => some false
  | .ne, some _ => some true
  | .ne, none => some false
  | .lt, some .lt => some true
  | .lt, _ => some false
  | .le, some .lt => some true
  | .le, some .eq => some true
  | .le, _ => some false
  | .gt, some .gt => some true
  | .gt, _ => some false
  | .ge, some .gt => some true
  | .ge, some .eq => some true
  | .ge, _ => some false
  | .other, _ => none

/-! ## PTX types and `cvt` -/

/-- Width of a PTX type name (`ptx::types::type_bits`). -/
def typeBits? (ty : String) : Option Nat :=
  match ty with
  | ".pred" => some 1
  | ".b8" | ".u8" | ".s8" | ".e4m3" | ".e5m2" => some 8
  | ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => some 16
  | ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" | ".tf32" => some 32
  | ".b64" | ".u64" | ".s64" | ".f64" => some 64
  | ".b128" => some 128
  | _ => none

/-- Is the PTX type a float type (`TypeClass::Float`)? -/
def isFloatType (ty : String) : Bool :=
  match ty with
  | ".f16" | ".bf16" | ".f32" | ".f64" | ".f16x2" | ".bf16x2" | ".tf32" | ".e4m3" | ".e5m2" => true
  | _ => false

/-- Is the PTX type a signed integer type (`TypeClass::Signed`)? -/
def isSignedType (ty : String) : Bool :=
  match ty with
  | ".s8" | ".s16" | ".s32" | ".s64" => true
  | _ => false

/-- IEEE rounding directions (`model::interp::Rounding`). -/
inductive Rounding where
  | nearestEven | zero | down | up
  deriving DecidableEq, Repr

/-- The direction of a PTX rounding modifier, and whether it rounds to an integer. -/
def Rounding.ofModifier? (m : String) : Option (Rounding × Bool) :=
  match m with
  | ".rn" => some (.nearestEven, false)
  | ".rz" => some (.zero, false)
  | ".rm" => some (.down, false)
  | ".rp" => some (.up, false)
  | ".rni" => some (.nearestEven, true)
  | ".rzi" => some (.zero, true)
  | ".rmi" => some (.down, true)
  | ".rpi" => some (.up, true)
  | _ => none

/-- A rational rounded to an integer in direction `mode` (ties to even for `nearestEven`). -/
def roundRat (mode : Rounding) (q : Rat) : Int :=
  match mode with
  | .down => q.floor
  | .up => q.ceil
  | .zero => if q < 0 then q.ceil else q.floor
  | .nearestEven =>
    let f := q.floor
    let diff := q - (f : Rat)
    if diff < (1 : Rat) / 2 then f
    else if (1 : Rat) / 2 < diff then f + 1
    else if f % 2 = 0 then f else f + 1

/-- A float rounded to an integer value; special values unchanged (`round_to_integer`). -/
def FloatVal.roundToInteger (mode : Rounding) : FloatVal → FloatVal
  | .finite q => .finite (roundRat mode q : Rat)
  | x => x

/-- Float to integer as PTX does it: round, then saturate to the range of a `bits`-bit signed or
unsigned integer; `nan` converts to 0 (`to_int_bits`). -/
def FloatVal.toIntBits (mode : Rounding) (bits : Nat) (signed : Bool) (x : FloatVal) : BitVec bits :=
  let lo : Int := if signed then -((2 ^ (bits - 1) : Nat) : Int) else 0
  let hi : Int := if signed then ((2 ^ (bits - 1) : Nat) : Int) - 1 else ((2 ^ bits : Nat) : Int) - 1
  let v : Int :=
    match x with
    | .nan => 0
    | .inf true => lo
    | .inf false => hi
    | .finite q =>
      let i := roundRat mode q
      if i < lo then lo else if hi < i then hi else i
  BitVec.ofInt bits v

/-- `.sat` on a float result: clamp to `[0, 1]`, `nan` to 0. -/
def FloatVal.saturate (x : FloatVal) : FloatVal :=
  match FloatVal.compare x FloatVal.zero with
  | none => FloatVal.zero
  | some .lt => FloatVal.zero
  | some _ => FloatVal.min x (.finite 1)

/-- `cvt` with a float on at least one side, or between integer types (`cvt` in the interpreter),
under exact arithmetic: float-to-float and integer-to-float conversions are exact (no rounding to
the destination format), rounding to an integer happens when the modifier or the destination type
asks for it. `none` when a type is not modelled or an integer operand holds an exact float. -/
def evalCvt (x : Value) (fromTy toTy : String) (rnd : Option String) (sat : Bool) : Option Value :=
  let fb := (typeBits? fromTy).getD 32
  let tb := (typeBits? toTy).getD 32
  let mode := rnd.bind Rounding.ofModifier?
  let finish := fun (v : FloatVal) => Value.float (if sat then FloatVal.saturate v else v)
  match FloatFormat.ofType? fromTy, FloatFormat.ofType? toTy with
  | some ff, some _ =>
    let (m, integral) := mode.getD (.nearestEven, false)
    let v := x.decodeAs ff
    some (finish (if integral then FloatVal.roundToInteger m v else v))
  | none, some _ =>
    if isFloatType fromTy then none
    else
      match x.toBits fb with
      | none => none
      | some raw =>
        let i : Int := if isSignedType fromTy then raw.toInt else (raw.toNat : Int)
        some (finish (.finite (i : Rat)))
  | some ff, none =>
    if isFloatType toTy then none
    else
      let (m, _) := mode.getD (.zero, true)
      some (Value.ofBitVec (FloatVal.toIntBits m tb (isSignedType toTy) (x.decodeAs ff)))
  | none, none =>
    if isFloatType fromTy || isFloatType toTy then none
    else (x.toBits fb).map (fun raw => Value.ofBitVec (evalExt tb (isSignedType fromTy) raw))

end Lark
