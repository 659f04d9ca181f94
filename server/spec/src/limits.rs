//! CUDA's launch limits, checked for every launch an interface declares (lark.toml and
//! SentryWard JSON alike).

use crate::interface::{Dim, DimRange};

/// At most this many threads in a block.
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;
/// Per-dimension limits of a block (x, y, z).
pub const MAX_BLOCK: [u64; 3] = [1024, 1024, 64];
/// Per-dimension limits of a grid (x, y, z).
pub const MAX_GRID: [u64; 3] = [0x7fff_ffff, 65535, 65535];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launch {
    Grid,
    Block,
}

impl Launch {
    pub fn limits(self) -> [u64; 3] {
        match self {
            Launch::Grid => MAX_GRID,
            Launch::Block => MAX_BLOCK,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Launch::Grid => "grid",
            Launch::Block => "block",
        }
    }

    /// What the hardware allows when the interface says nothing.
    pub fn default_ranges(self) -> [DimRange; 3] {
        self.limits().map(|hi| DimRange { lo: 1, hi })
    }
}

const AXES: [char; 3] = ['x', 'y', 'z'];

/// A launch that breaks a limit: the offending dimension (`None` for the thread count of a
/// whole block) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitError {
    pub dim: Option<usize>,
    pub message: String,
}

/// Checks what can be checked before scalar values are known: numbers and ranges against the
/// per-dimension limits, and the smallest possible block against the thread limit.
pub fn check_launch(kind: Launch, dims: &[Dim; 3]) -> Vec<LimitError> {
    let mut out = Vec::new();
    for (d, dim) in dims.iter().enumerate() {
        let Dim::Range(r) = dim else { continue };
        let max = kind.limits()[d];
        if r.lo == 0 {
            out.push(LimitError { dim: Some(d), message: format!("{} {} is at least 1, found 0", kind.name(), AXES[d]) });
        } else if r.hi > max {
            out.push(LimitError { dim: Some(d), message: format!("{} {} is at most {max} (CUDA's limit), found {}", kind.name(), AXES[d], r.hi) });
        }
    }
    if kind == Launch::Block {
        let smallest: u64 = dims.iter().map(|d| if let Dim::Range(r) = d { r.lo.max(1) } else { 1 }).product();
        if smallest > MAX_THREADS_PER_BLOCK && out.is_empty() {
            out.push(LimitError { dim: None, message: format!("a block has at most {MAX_THREADS_PER_BLOCK} threads (CUDA's limit), found {smallest}") });
        }
    }
    out
}

/// Checks a concrete launch (after scalar values are fixed).
pub fn check_concrete(kind: Launch, dims: [u64; 3]) -> Result<(), LimitError> {
    match check_launch(kind, &dims.map(Dim::exact)).into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_of_cuda() {
        assert_eq!(check_concrete(Launch::Block, [1024, 1, 1]), Ok(()));
        assert_eq!(check_concrete(Launch::Block, [32, 1, 65]).unwrap_err().message, "block z is at most 64 (CUDA's limit), found 65");
        assert_eq!(check_concrete(Launch::Block, [64, 32, 1]).unwrap_err().message, "a block has at most 1024 threads (CUDA's limit), found 2048");
        assert_eq!(check_concrete(Launch::Grid, [0x7fff_ffff, 65535, 65535]), Ok(()));
        assert_eq!(
            check_concrete(Launch::Grid, [1, 70000, 1]).unwrap_err(),
            LimitError { dim: Some(1), message: "grid y is at most 65535 (CUDA's limit), found 70000".into() }
        );
        assert_eq!(check_concrete(Launch::Grid, [0, 1, 1]).unwrap_err().message, "grid x is at least 1, found 0");
    }
}
