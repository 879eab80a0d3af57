//! `cargo xtask dist`: build the release artifacts. For now: the Python wheel
//! (abi3, CPython 3.10+) into `target/dist/`, and the Go module archive with its
//! prebuilt static library as a file-based GOPROXY in `target/dist/go-proxy/`.

use crate::util::Result;

/// Builds every distributable artifact and prints where each one is.
pub fn run() -> Result {
    let wheel = crate::python::build_wheel()?;
    println!("dist: python wheel {}", wheel.display());
    let go_proxy = crate::go::dist()?;
    println!("dist: go module proxy {}", go_proxy.display());
    Ok(())
}
