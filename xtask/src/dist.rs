//! `cargo xtask dist`: build the release artifacts. For now: the Python wheel
//! (abi3, CPython 3.10+) into `target/dist/`.

use crate::util::Result;

/// Builds every distributable artifact and prints where each one is.
pub fn run() -> Result {
    let wheel = crate::python::build_wheel()?;
    println!("dist: python wheel {}", wheel.display());
    Ok(())
}
