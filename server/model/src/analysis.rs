//! A kernel's lifted model with its phases: what every consumer (the engine, hovers, dumps,
//! the Lean emitter) starts from.

use crate::phases::Phases;
use crate::symbolic::{self, Lifted};
use crate::Kernel;

/// The lifted model of a kernel and its barrier intervals.
pub struct Analysis {
    pub lifted: Lifted,
    pub phases: Phases,
}

/// Lifts a kernel and computes its phases.
pub fn analyse(k: &Kernel) -> Analysis {
    let lifted = symbolic::lift(k);
    let phases = Phases::compute(k, &lifted);
    Analysis { lifted, phases }
}
