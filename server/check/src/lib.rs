pub mod smt;
