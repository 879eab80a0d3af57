//! `hurray.type_name(tag)` and `hurray.layout_name(tag)`: a wire tag rendered as
//! every language renders it, straight from the one declaration
//! (`hurray_core::tables`), the same strings as C's `hurray_type_name` /
//! `hurray_layout_name`.
//!
//! The reference API's `Dtype.name` and `Layout.name` keep their documented values
//! (`"extension"` for a private or unknown tag, `"col_major"`, `"composite"`;
//! `docs/spec/python-api.md` §3.1, §7.1): these two functions are the additions that
//! give the shared rendering.

use pyo3::prelude::*;

/// The name of element type ``tag`` (0..255) as every language renders it: the
/// spec's name (``"float32"``), ``"private(0xf3)"`` for a private tag
/// (0xF0..0xFE), ``"unknown(0x2a)"`` for any other tag.
///
/// Raises:
///     OverflowError: ``tag`` is outside 0..255.
#[pyfunction]
pub fn type_name(tag: u8) -> &'static str {
    hurray_core::tables::type_name(tag)
}

/// The name of layout ``tag`` (0..255) as every language renders it: the spec's
/// name (``"row_major"``, ``"column_major"``, ``"composite_head"``),
/// ``"private(0xf3)"`` for a private extension tag, ``"unknown(0x2a)"`` otherwise.
///
/// Raises:
///     OverflowError: ``tag`` is outside 0..255.
#[pyfunction]
pub fn layout_name(tag: u8) -> &'static str {
    hurray_core::tables::layout_name(tag)
}

/// Adds both functions to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(type_name, m)?)?;
    m.add_function(wrap_pyfunction!(layout_name, m)?)?;
    Ok(())
}
