//! The native part of the `hurray` Python package (`hurray._native`): every class
//! and function of the public API that touches tensor memory, over the one
//! `HurrayTensor` handle of hurray-ffi. The pure-Python package `hurray/` re-exports
//! it and adds the glue that talks to NumPy, SciPy and PyTorch.

mod args;
mod build;
mod capsule;
mod composite;
mod device;
mod dlpack;
mod dtype;
mod errors;
mod interop;
mod io;
mod layout;
mod net;
mod owner;
mod quant;
mod tags;
mod tensor;

use pyo3::prelude::*;

#[pymodule(gil_used = true)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    errors::register(m)?;
    m.add_class::<dtype::Dtype>()?;
    m.add_class::<device::Device>()?;
    m.add_class::<tensor::Tensor>()?;
    layout::register(m)?;
    quant::register(m)?;
    build::register(m)?;
    interop::register(m)?;
    io::register(m)?;
    composite::register(m)?;
    net::register(m)?;
    tags::register(m)?;
    m.add("_DTYPES", dtype::constants(py)?)?;
    m.add("_DEVICES", device::constants(py)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("HURRAY_C_ABI_VERSION", hurray_ffi::HURRAY_C_ABI_VERSION)?;
    m.add_function(wrap_pyfunction!(owner::_mark_finalizing, m)?)?;
    py.import("atexit")?
        .getattr("register")?
        .call1((m.getattr("_mark_finalizing")?,))?;
    Ok(())
}
