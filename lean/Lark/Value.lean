import Init.Data.Rat.Basic
import Init.Data.Rat.Lemmas

/-!
# Values

What a register or a memory cell holds, mirroring `model::interp::Value` and `FloatVal`:

* integer registers hold raw bits, `BitVec 64`, read and written at the width of the instruction
  that uses them (PTX wrap-around is `BitVec` arithmetic);
* floats are held *exactly*: a rational, or one of the IEEE special values (`±inf`, `nan`);
* predicates are read as `Bool` (bit 0 of the register, as the interpreter's `Value::bool`).

Differences from the Rust interpreter, all consequences of exact arithmetic being the contract
(ARCHITECTURE.md, promise 6): an exact float is never rounded to IEEE bits, so an *integer* use of
a float value (a bit trick such as `mov.b32 %r, %f` followed by `and.b32`) has no meaning here and
the model stops with `Fault.floatAsBits`; the interpreter's overflow-to-infinity and mantissa
budget do not exist here.
-/

namespace Lark

/-- IEEE binary formats, as `model::interp::FloatFormat`. -/
inductive FloatFormat where
  | f16
  | bf16
  | f32
  | f64
  deriving DecidableEq, Repr

namespace FloatFormat

/-- Width of the exponent field. -/
def expBits : FloatFormat → Nat
  | .f16 => 5
  | .bf16 => 8
  | .f32 => 8
  | .f64 => 11

/-- Width of the explicit fraction field. -/
def fracBits : FloatFormat → Nat
  | .f16 => 10
  | .bf16 => 7
  | .f32 => 23
  | .f64 => 52

/-- Width of the whole encoding. -/
def width : FloatFormat → Nat
  | .f16 => 16
  | .bf16 => 16
  | .f32 => 32
  | .f64 => 64

/-- The format a plain float register or memory cell of `w` bits holds. Like the interpreter's
`FloatFormat::for_bits(..).unwrap_or(F32)`, an unexpected width reads as `f32`. -/
def ofWidth (w : Nat) : FloatFormat :=
  if w = 16 then .f16 else if w = 64 then .f64 else .f32

/-- The format a PTX type name denotes (`.f16`, `.bf16`, `.f32`, `.f64`). -/
def ofType? (ty : String) : Option FloatFormat :=
  if ty = ".f16" then some .f16
  else if ty = ".bf16" then some .bf16
  else if ty = ".f32" then some .f32
  else if ty = ".f64" then some .f64
  else none

end FloatFormat

/-- A float value held exactly, as `model::interp::FloatVal`. Signed zeros are not kept. -/
inductive FloatVal where
  | finite (q : Rat)
  | inf (negative : Bool)
  | nan
  deriving DecidableEq, Repr

/-- `2 ^ e` as an exact rational, for any integer exponent. -/
def pow2 (e : Int) : Rat :=
  match e with
  | .ofNat n => ((2 ^ n : Nat) : Rat)
  | .negSucc n => mkRat 1 (2 ^ (n + 1))

/-- The exact value of an IEEE bit pattern (`FloatVal::from_bits`). Only the low
`fmt.width` bits of `bits` are looked at. -/
def FloatVal.ofBits (fmt : FloatFormat) (bits : Nat) : FloatVal :=
  let eb := fmt.expBits
  let fb := fmt.fracBits
  let negative : Bool := decide ((bits / 2 ^ (eb + fb)) % 2 = 1)
  let exp : Nat := (bits / 2 ^ fb) % 2 ^ eb
  let frac : Nat := bits % 2 ^ fb
  let bias : Int := ((2 ^ (eb - 1) : Nat) : Int) - 1
  if exp = 2 ^ eb - 1 then
    (if frac = 0 then FloatVal.inf negative else FloatVal.nan)
  else
    let mant : Nat := if exp = 0 then frac else frac + 2 ^ fb
    let e : Int := (if exp = 0 then 1 - bias else (exp : Int) - bias) - (fb : Int)
    let r : Rat := (mant : Rat) * pow2 e
    FloatVal.finite (if negative then -r else r)

/-- What a register or memory cell holds. -/
inductive Value where
  /-- Raw integer bits (the interpreter's `Value::Bits(u64)`). -/
  | bits (v : BitVec 64)
  /-- An exact float (the interpreter's `Value::Float`). -/
  | float (x : FloatVal)
  deriving DecidableEq, Repr

instance : Inhabited Value := ⟨Value.bits 0⟩

namespace Value

/-- A `w`-bit result stored in a register: zero-extended to 64 bits. -/
def ofBitVec {w : Nat} (x : BitVec w) : Value := .bits (BitVec.ofNat 64 x.toNat)

/-- A predicate result: `1` or `0`. -/
def ofBool (b : Bool) : Value := .bits (if b then 1 else 0)

/-- Keeps the low `w` bits of integer bits; floats are unchanged (`mov`, `selp`, loads). -/
def maskTo (w : Nat) : Value → Value
  | .bits v => .bits (BitVec.ofNat 64 (v.toNat % 2 ^ w))
  | .float x => .float x

/-- The value as `w`-bit integer bits; `none` for an exact float (see the module note). -/
def toBits (w : Nat) : Value → Option (BitVec w)
  | .bits v => some (BitVec.ofNat w v.toNat)
  | .float _ => none

/-- The value as a predicate: bit 0 (`Value::bool`); `none` for an exact float. -/
def toBool : Value → Option Bool
  | .bits v => some (decide (v.toNat % 2 = 1))
  | .float _ => none

/-- The value as a float of the IEEE format of `w` bits (`Value::float`): integer bits are
decoded exactly, an exact float is itself. -/
def toFloat (w : Nat) : Value → FloatVal
  | .float x => x
  | .bits v => FloatVal.ofBits (FloatFormat.ofWidth w) (v.toNat % 2 ^ w)

/-- The value as a float of format `fmt` (`cvt` decodes its source this way, `.bf16` included). -/
def decodeAs (fmt : FloatFormat) : Value → FloatVal
  | .float x => x
  | .bits v => FloatVal.ofBits fmt (v.toNat % 2 ^ fmt.width)

end Value

/-- `l[i]?` written out, so that the model does not depend on the `GetElem?` API of a given
toolchain. -/
def listGet? {α : Type} : List α → Nat → Option α
  | [], _ => none
  | a :: _, 0 => some a
  | _ :: rest, n + 1 => listGet? rest n

end Lark
