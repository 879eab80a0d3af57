//! Argument types for the Python API: conversions whose refusals read as Python's
//! own, instead of PyO3's internal wording.

use pyo3::conversion::FromPyObjectOwned;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};
use pyo3::Borrowed;

/// A sequence argument (a list, tuple or any other sequence) of `T`s: strides,
/// shapes, offsets and bit counts of the layout and shard constructors.
///
/// A `str`, `bytes` or `bytearray` is refused with `TypeError: expected a sequence
/// of integers, not str` (PyO3 prefixes the argument's name); PyO3's own refusal
/// of a `str` for a `Vec` names Rust types. Elements convert as `T` does (an
/// out-of-range integer is an `OverflowError`, a non-integer a `TypeError`).
pub struct Seq<T>(pub Vec<T>);

impl<'a, 'py, T: FromPyObjectOwned<'py>> FromPyObject<'a, 'py> for Seq<T> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if obj.is_instance_of::<PyString>()
            || obj.is_instance_of::<PyBytes>()
            || obj.is_instance_of::<PyByteArray>()
        {
            let name = obj
                .get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string());
            return Err(PyTypeError::new_err(format!(
                "expected a sequence of integers, not {name}"
            )));
        }
        let v: Vec<T> = obj.extract()?;
        Ok(Seq(v))
    }
}
