//! placeholder
pub mod dtype;
pub mod error;
pub mod front;
pub mod graph;
pub mod ir;
pub mod ops;
pub use dtype::DType;
