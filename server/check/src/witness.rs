//! A counterexample as data: the launch, the scalar parameters, the threads with their loop
//! iterations and the byte offsets they touch, and the memory contents the witness relies on.
//!
//! Both ways of finding a witness produce this type: exhaustive enumeration builds it directly,
//! and the solver's model (named constants such as `tid_x_1`) is read into it in one place,
//! [`Witness::from_model`]. Everything downstream — replay, reports, the editor — sees only
//! this type.

use crate::query::ThreadId;
use model::cfg::LoopId;
use model::symbolic::Base;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// One thread of a witness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WitnessThread {
    pub id: ThreadId,
    /// Iterations of the loops that matter at the access or barrier (loop id → iteration).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub iterations: BTreeMap<LoopId, u64>,
    /// The byte offset (into the accessed array or buffer) this thread touches, for accesses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

/// Raw bits of the field at byte `offset` of aggregate parameter `param`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ParamField {
    pub param: u32,
    pub offset: u32,
    pub value: u64,
}

/// A value the witness needs to find in memory: `bytes` little-endian bytes at `byte_offset`
/// of the buffer behind parameter `param` (behind the pointer at byte `field` of it, for a
/// struct passed by value).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryCell {
    pub param: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<u32>,
    pub byte_offset: u64,
    pub bytes: u32,
    pub value: u64,
}

/// How the buffers were filled in the replay that reproduced a witness (the witness itself
/// says nothing about memory beyond its [`MemoryCell`]s, so several fills are tried).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fill {
    Zero,
    /// Every element 1 (or 1.0).
    One,
    /// Small pseudo-random elements (0..8), from this seed.
    Random(u64),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Witness {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Raw bits of the scalar parameters the witness fixes, by parameter index.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<u32, u64>,
    /// Fields of aggregate parameters (a `struct` passed by value, `.param .b8 p[N]`) the
    /// witness fixes, past each one's first field (which is in `params`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<ParamField>,
    /// One thread (out-of-bounds) or two (races, divergence).
    pub threads: Vec<WitnessThread>,
    /// Loaded values the witness relies on, written into memory before it is replayed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemoryCell>,
    /// For a warp collective: the lane its mask names that does not arrive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_lane: Option<u32>,
    /// The fill under which the replay reproduced it (set by replay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill: Option<Fill>,
}

/// A symbolic value of a witness, resolved against the solver's model: a constant's name or a
/// literal. Memory cells of SMT witnesses are described this way until the model is read.
#[derive(Clone, Debug)]
pub enum Term {
    Name(String),
    Const(u64),
}

impl Term {
    pub fn of(text: String) -> Term {
        match crate::races::parse_const(&text) {
            Some(v) => Term::Const(v),
            None => Term::Name(text),
        }
    }

    fn value(&self, model: &HashMap<String, u64>) -> Option<u64> {
        match self {
            Term::Name(n) => model.get(n).copied(),
            Term::Const(v) => Some(*v),
        }
    }
}

impl MemoryCell {
    pub fn new(buffer: Base, byte_offset: u64, bytes: u32, value: u64) -> MemoryCell {
        let (param, field) = match buffer {
            Base::Field { param, offset } => (param, Some(offset)),
            other => (other.param().unwrap_or(u32::MAX), None),
        };
        MemoryCell { param, field, byte_offset, bytes, value }
    }

    /// The buffer the cell is in.
    pub fn buffer(&self) -> Base {
        match self.field {
            Some(offset) => Base::Field { param: self.param, offset },
            None => Base::Param(self.param),
        }
    }
}

/// A loaded value an SMT witness relies on, before the model is read.
#[derive(Clone, Debug)]
pub struct Seed {
    pub buffer: Base,
    pub offset: Term,
    pub value: Term,
    pub bytes: u32,
}

/// How to read one thread copy out of a solver model.
pub struct ThreadSpec<'a> {
    /// The copy's index in the query (1 or 2).
    pub copy: u8,
    pub loops: &'a [LoopId],
    /// The offset's term (a constant name or a literal), for accesses.
    pub offset: Option<&'a Term>,
}

impl Witness {
    /// Reads a witness out of a solver model in the encoding's naming (`ntid_x`, `tid_x_1`,
    /// `k3_2`, `p0_0`).
    pub fn from_model(model: &HashMap<String, u64>, threads: &[ThreadSpec], param_count: u32, seeds: &[Seed]) -> Witness {
        let dims = |prefix: &str| -> [u32; 3] { ["x", "y", "z"].map(|d| model.get(&format!("{prefix}_{d}")).copied().unwrap_or(1) as u32) };
        let get = |n: String| model.get(&n).copied().unwrap_or(0) as u32;
        let threads = threads
            .iter()
            .map(|t| WitnessThread {
                id: ThreadId {
                    block: ["x", "y", "z"].map(|d| get(format!("ctaid_{d}_{}", t.copy))),
                    thread: ["x", "y", "z"].map(|d| get(format!("tid_{d}_{}", t.copy))),
                },
                iterations: t.loops.iter().filter_map(|&lp| model.get(&format!("k{lp}_{}", t.copy)).map(|v| (lp, *v))).collect(),
                offset: t.offset.and_then(|o| o.value(model)),
            })
            .collect();
        let params =
            (0..param_count).filter_map(|i| model.get(&crate::encode::sym_name(model::expr::Sym::Param { index: i, offset: 0 }, 0)).map(|v| (i, *v))).collect();
        // `p{index}_{offset}` for a field past the first of an aggregate parameter.
        let mut fields: Vec<ParamField> = model
            .iter()
            .filter_map(|(name, &value)| {
                let (index, offset) = name.strip_prefix('p')?.split_once('_')?;
                let (param, offset) = (index.parse().ok()?, offset.parse().ok()?);
                (offset != 0 && param < param_count).then_some(ParamField { param, offset, value })
            })
            .collect();
        fields.sort_by_key(|f| (f.param, f.offset));
        let mut memory: Vec<MemoryCell> = Vec::new();
        for s in seeds {
            if let (Some(byte_offset), Some(value)) = (s.offset.value(model), s.value.value(model)) {
                let cell = MemoryCell::new(s.buffer, byte_offset, s.bytes, value);
                if !memory.contains(&cell) {
                    memory.push(cell);
                }
            }
        }
        Witness {
            grid: dims("nctaid"),
            block: dims("ntid"),
            params,
            fields,
            threads,
            memory,
            missing_lane: model.get("lane_missing").map(|&l| l as u32),
            fill: None,
        }
    }

    pub fn thread(&self, i: usize) -> ThreadId {
        self.threads.get(i).map_or(ThreadId { block: [0; 3], thread: [0; 3] }, |t| t.id)
    }

    pub fn offset(&self, i: usize) -> Option<u64> {
        self.threads.get(i).and_then(|t| t.offset)
    }

    /// The blocks the witness involves, without repeats.
    pub fn blocks(&self) -> Vec<[u32; 3]> {
        let mut out: Vec<[u32; 3]> = Vec::new();
        for t in &self.threads {
            if !out.contains(&t.id.block) {
                out.push(t.id.block);
            }
        }
        out
    }
}
