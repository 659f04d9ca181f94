//! The PTX syntax tree. Every instruction keeps its opcode, dotted modifiers and operands in a
//! generic form, so that parsing never depends on whether a later stage understands it.

use crate::Span;
use smol_str::SmolStr;

pub type Name = SmolStr;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub version: Option<(u32, u32)>,
    pub targets: Vec<Name>,
    pub address_size: Option<u32>,
    /// `.file N "name"` directives, in source order.
    pub files: Vec<FileDecl>,
    /// Module-scope variables (`.global`, `.shared`, `.const`, ...).
    pub variables: Vec<VarDecl>,
    pub functions: Vec<Function>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FileDecl {
    pub index: u32,
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// `.entry`: a kernel.
    Entry,
    /// `.func`: a device function.
    Func,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    Visible,
    Extern,
    Weak,
    Common,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub kind: FunctionKind,
    pub linkage: Option<Linkage>,
    pub name: Name,
    pub name_span: Span,
    /// Return parameters of a `.func`.
    pub returns: Vec<Param>,
    pub params: Vec<Param>,
    /// Performance directives such as `.maxntid 256, 1, 1` or `.reqntid 128`.
    pub directives: Vec<PerfDirective>,
    /// `None` for a prototype (`.func foo(...);`).
    pub body: Option<Vec<Statement>>,
    /// From the linkage (or `.entry`) to the closing brace.
    pub span: Span,
}

impl Function {
    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.body.iter().flatten().filter_map(|s| match s {
            Statement::Instruction(i) => Some(i),
            _ => None,
        })
    }

    /// The launch bound of `.reqntid` (exact block shape) if present.
    pub fn reqntid(&self) -> Option<&[u64]> {
        self.directives.iter().find(|d| d.name == ".reqntid").map(|d| d.values.as_slice())
    }

    /// The launch bound of `.maxntid` (`__launch_bounds__`): the most threads per block, as the
    /// extents whose product bounds the block's thread count.
    pub fn maxntid(&self) -> Option<&[u64]> {
        self.directives.iter().find(|d| d.name == ".maxntid").map(|d| d.values.as_slice())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PerfDirective {
    pub name: Name,
    pub values: Vec<u64>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// `.param` for kernel and function parameters, `.reg` for some `.func` parameters.
    pub space: Name,
    /// The scalar type, e.g. `.u64` or `.b8` for byte arrays.
    pub ty: Name,
    pub align: Option<u32>,
    /// `.ptr .global` annotations that nvcc emits on kernel pointer params.
    pub ptr_space: Option<Name>,
    pub name: Name,
    pub array_len: Option<u64>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Instruction(Instruction),
    Label(Label),
    Reg(RegDecl),
    Var(VarDecl),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub name: Name,
    pub span: Span,
}

/// `.reg .b32 %r<9>;` declares `%r0`..`%r8`; `.reg .pred %p, %q;` declares two.
#[derive(Clone, Debug, PartialEq)]
pub struct RegDecl {
    pub ty: Name,
    pub vector: Option<u32>,
    pub names: Vec<RegName>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RegName {
    pub name: Name,
    /// `Some(n)` for the parameterised form `%r<n>`.
    pub count: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// `.global`, `.shared`, `.const`, `.local`, `.param`.
    pub space: Name,
    pub linkage: Option<Linkage>,
    pub ty: Name,
    pub vector: Option<u32>,
    pub align: Option<u32>,
    pub name: Name,
    /// Array dimensions; `Some(None)` is an unsized `[]` (extern shared memory).
    pub dims: Vec<Option<u64>>,
    pub has_initializer: bool,
    pub span: Span,
}

impl VarDecl {
    /// Size in bytes, when every dimension is known.
    pub fn size_bytes(&self) -> Option<u64> {
        let elem = crate::types::type_bits(&self.ty)? as u64 / 8 * self.vector.unwrap_or(1) as u64;
        self.dims.iter().try_fold(elem.max(1), |acc, d| acc.checked_mul((*d)?))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceLoc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub guard: Option<Guard>,
    pub opcode: Name,
    /// Dotted modifiers in order, with their dots: `["global", "v4", "f32"]` is stored as
    /// `[".global", ".v4", ".f32"]`.
    pub modifiers: Vec<Name>,
    pub operands: Vec<Operand>,
    pub span: Span,
    /// The `.loc` in force when the instruction appeared.
    pub loc: Option<SourceLoc>,
}

impl Instruction {
    pub fn has_modifier(&self, m: &str) -> bool {
        self.modifiers.iter().any(|x| x == m)
    }

    /// The last modifier that names a type (`.f32`, `.u64`, ...), which is the operation type.
    pub fn ty(&self) -> Option<&str> {
        self.modifiers.iter().rev().map(|m| m.as_str()).find(|m| crate::types::type_bits(m).is_some())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    pub negated: bool,
    pub reg: Name,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register, including special registers (`%tid.x`) and vector elements (`%v.x`).
    Reg(Name),
    /// A negated predicate operand, `!%p`.
    NotReg(Name),
    /// The two destinations of `setp` written `%p|%q`.
    RegPair(Name, Name),
    /// A variable, function or label name.
    Symbol(Name),
    Imm(Immediate),
    /// `{%r1, %r2}`; `_` elements are `Sink`.
    Vector(Vec<Operand>),
    /// `[base+offset]`.
    Address(Address),
    /// A parenthesised list in a `call`: `(retval0)` or `(param0, param1)`.
    List(Vec<Operand>),
    /// `_`, the bit bucket.
    Sink,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Address {
    pub base: AddressBase,
    pub offset: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AddressBase {
    Reg(Name),
    Symbol(Name),
    /// `[1024]`: an absolute address.
    None,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Immediate {
    Int(i128),
    /// `0f...` literal: the IEEE single bits.
    F32(u32),
    /// `0d...` literal: the IEEE double bits.
    F64(u64),
    /// A decimal literal such as `1.5`.
    Decimal(f64),
}
