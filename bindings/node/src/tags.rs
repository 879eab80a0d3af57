//! `typeName(tag)` and `layoutName(tag)`: a wire tag rendered as every language
//! renders it, from the one declaration (`hurray_core::tables`): the same strings
//! as `Tensor.dtype` / `Tensor.layout` and C's `hurray_type_name` /
//! `hurray_layout_name`.

use napi_derive::napi;

use crate::error::{err, Result};

/// The tag as a byte; `ERR_HURRAY_INVALID_ARGUMENT` past 255.
fn byte(tag: u32) -> Result<u8> {
    u8::try_from(tag).map_err(|_| {
        err(
            "HURRAY_ERR_INVALID_ARGUMENT",
            format!("tag {tag} is not a byte (0..255)"),
        )
    })
}

/// The name of element type `tag` (0..255) as every language renders it: the
/// spec's name (`"float32"`), `"private(0xf3)"` for a private tag (0xF0..0xFE),
/// `"unknown(0x2a)"` for any other tag.
///
/// Throws: `ERR_HURRAY_INVALID_ARGUMENT` when `tag` is above 255.
#[napi(ts_return_type = "import('./tables').ElementTypeName | import('./tables').UnknownTagName")]
pub fn type_name(tag: u32) -> Result<String> {
    Ok(hurray_core::tables::type_name(byte(tag)?).to_string())
}

/// The name of layout `tag` (0..255) as every language renders it: the spec's name
/// (`"row_major"`, `"csr"`), `"private(0xf3)"` for a private extension tag,
/// `"unknown(0x2a)"` otherwise.
///
/// Throws: `ERR_HURRAY_INVALID_ARGUMENT` when `tag` is above 255.
#[napi(ts_return_type = "import('./tables').LayoutName | import('./tables').UnknownTagName")]
pub fn layout_name(tag: u32) -> Result<String> {
    Ok(hurray_core::tables::layout_name(byte(tag)?).to_string())
}
