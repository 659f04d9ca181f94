import Lark.Value

/-!
# Integer and predicate operations

The integer instruction set of `model::ops` (`BinOp`, `UnOp`, `CmpOp`, `BoolOp`) and its
bit-vector semantics, constructor for constructor and case for case as `eval_bin`, `eval_un`,
`eval_cmp` and `eval_ext`. Division by zero follows SMT-LIB, as in Rust: `x / 0` is all ones,
`x % 0 = x` (`BitVec.smtUDiv`, `BitVec.smtSDiv`, `BitVec.umod`, `BitVec.srem` already do so).
`LarkTest/Conformance.lean`, generated from the Rust functions, checks the two agree.
-/

namespace Lark

/-- Binary integer operators (`model::ops::BinOp`). -/
inductive BinOp where
  | add | sub | mul | mulHiU | mulHiS | divU | divS | remU | remS
  | shl | lShr | aShr | and | or | xor | minU | minS | maxU | maxS
  deriving DecidableEq, Repr

/-- Unary integer operators (`model::ops::UnOp`). -/
inductive UnOp where
  | not | neg | absS | popc | clz | brev
  deriving DecidableEq, Repr

/-- Integer comparisons (`model::ops::CmpOp`). -/
inductive CmpOp where
  | eq | ne | ltU | leU | gtU | geU | ltS | leS | gtS | geS
  deriving DecidableEq, Repr

/-- Predicate combinators (`model::ops::BoolOp`). -/
inductive BoolOp where
  | and | or | xor
  deriving DecidableEq, Repr

/-- The comparison that holds exactly when `op` does not (`CmpOp::negate`). -/
def CmpOp.negate : CmpOp → CmpOp
  | .eq => .ne
  | .ne => .eq
  | .ltU => .geU
  | .leU => .gtU
  | .gtU => .leU
  | .geU => .ltU
  | .ltS => .geS
  | .leS => .gtS
  | .gtS => .leS
  | .geS => .ltS

/-- Number of one bits among the low `n` bits of `x`. -/
def popcountNat : Nat → Nat → Nat
  | 0, _ => 0
  | n + 1, x => x % 2 + popcountNat n (x / 2)

/-- Leading zeros of `x` read as an `n`-bit number (`n` when `x = 0`). -/
def clzNat : Nat → Nat → Nat
  | 0, _ => 0
  | n + 1, x => if x.testBit n then 0 else 1 + clzNat n x

/-- The low `n` bits of `x` in reverse order. -/
def reverseNat : Nat → Nat → Nat
  | 0, _ => 0
  | n + 1, x => (x % 2) * 2 ^ n + reverseNat n (x / 2)

/-- Bit-vector semantics of a binary operator (`eval_bin`). -/
def evalBin {w : Nat} (op : BinOp) (a b : BitVec w) : BitVec w :=
  match op with
  | .add => a + b
  | .sub => a - b
  | .mul => a * b
  | .mulHiU => BitVec.ofNat w ((a.toNat * b.toNat) / 2 ^ w)
  | .mulHiS => BitVec.ofInt w ((a.toInt * b.toInt) >>> w)
  | .divU => BitVec.smtUDiv a b
  | .divS => BitVec.smtSDiv a b
  | .remU => BitVec.umod a b
  | .remS => BitVec.srem a b
  | .shl => BitVec.shiftLeft a b.toNat
  | .lShr => BitVec.ushiftRight a b.toNat
  | .aShr => BitVec.sshiftRight a b.toNat
  | .and => a &&& b
  | .or => a ||| b
  | .xor => a ^^^ b
  | .minU => if BitVec.ult b a then b else a
  | .minS => if BitVec.slt b a then b else a
  | .maxU => if BitVec.ult a b then b else a
  | .maxS => if BitVec.slt a b then b else a

/-- Bit-vector semantics of a unary operator (`eval_un`). -/
def evalUn {w : Nat} (op : UnOp) (a : BitVec w) : BitVec w :=
  match op with
  | .not => ~~~a
  | .neg => -a
  | .absS => BitVec.abs a
  | .popc => BitVec.ofNat w (popcountNat w a.toNat)
  | .clz => BitVec.ofNat w (clzNat w a.toNat)
  | .brev => BitVec.ofNat w (reverseNat w a.toNat)

/-- Integer comparison (`eval_cmp`). -/
def evalCmp {w : Nat} (op : CmpOp) (a b : BitVec w) : Bool :=
  match op with
  | .eq => decide (a = b)
  | .ne => !decide (a = b)
  | .ltU => BitVec.ult a b
  | .leU => BitVec.ule a b
  | .gtU => BitVec.ult b a
  | .geU => BitVec.ule b a
  | .ltS => BitVec.slt a b
  | .leS => BitVec.sle a b
  | .gtS => BitVec.slt b a
  | .geS => BitVec.sle b a

/-- Width change: truncation, or zero- or sign-extension (`eval_ext`). -/
def evalExt {w : Nat} (toBits : Nat) (signed : Bool) (a : BitVec w) : BitVec toBits :=
  if signed then BitVec.signExtend toBits a else BitVec.setWidth toBits a

/-- Predicate combination (`bool_op` in the interpreter). -/
def evalBool (op : BoolOp) (a b : Bool) : Bool :=
  match op with
  | .and => a && b
  | .or => a || b
  | .xor => a != b

end Lark
