//! The Rust producer and consumer of the cross-language matrix.
//!
//! `tests/cases/cases.txt` lists the cases (syntax: `tests/cases/README.md`); every
//! language has a producer that writes each case as an HRRYFILE and as a stream, and
//! a consumer that checks every producer's outputs against the cases.
//! `cargo xtask matrix` runs them all (`tests/matrix/README.md`). This crate is the
//! Rust pair, plus the reference parser of the case syntax.

pub mod amplify;
pub mod build;
pub mod case;
pub mod check;
pub mod hostile;
pub mod net;
pub mod run;
