//! The tagged KV value (`file-format.md` §7.3): one `repr(C)` struct that carries any
//! KV value across the C ABI, read in one call (`hurray_file_reader_kv_value`) and
//! added in one call (`hurray_file_writer_add_kv`), instead of one function per type.
//!
//! Reading, by `type_tag`:
//!
//! | `type_tag` | fields set |
//! |---|---|
//! | `HURRAY_KV_TYPE_STRING` | `data`: UTF-8, NUL-terminated; `len`: bytes without the NUL |
//! | `HURRAY_KV_TYPE_INT64` / `UINT64` / `FLOAT64` | `int64_value` / `uint64_value` / `float64_value` |
//! | `HURRAY_KV_TYPE_BOOL` | `bool_value` (0 or 1) |
//! | `HURRAY_KV_TYPE_BYTES` | `data`, `len` bytes (`data` NULL when empty) |
//! | `HURRAY_KV_TYPE_ARRAY` | `element_type`; `len`: element count; `data` as below |
//!
//! Array `data`: int64, uint64 and float64 elements as stored, 8 little-endian bytes
//! each (the native form on little-endian hosts), **not necessarily aligned** (copy
//! them with `memcpy`, or take an aligned native copy of any window with
//! `hurray_file_reader_kv_array_window`); bool elements 1 byte (0 or 1) each; string
//! and byte-sequence arrays have `data` NULL: read element `k` with
//! `hurray_file_reader_kv_array_element`. Every pointer is borrowed from the reader,
//! valid until it is destroyed; unused fields are 0 / NULL.
//!
//! Adding (`hurray_file_writer_add_kv`) reads the same fields, except that array
//! `data` holds `len` native-endian elements (`int64_t`, `uint64_t`, `double`, any
//! alignment; bools as bytes 0 or 1), or for string and byte-sequence arrays `len`
//! `HurrayKvValue`s of type `element_type`.

use crate::file::{bool_in, kv_wrong_type, out_of_range, HurrayFileReader, HurrayFileWriter};
use crate::handle;
use crate::status::*;
use hurray_io::file::kv::tag;
use hurray_io::file::{KvArray, KvValue, KvValueRef};
use std::ffi::{c_char, c_void};

/// One KV value of any type, tagged by `type_tag` (`file-format.md` §7.3). Frozen
/// for ABI 10; 48 bytes on 64-bit targets. Fields by `type_tag`; unused ones are 0
/// or NULL:
///
/// - `HURRAY_KV_TYPE_STRING`: `data` UTF-8 (NUL-terminated when read), `len` bytes
///   without the NUL.
/// - `HURRAY_KV_TYPE_INT64`, `_UINT64`, `_FLOAT64`: `int64_value`, `uint64_value`,
///   `float64_value`.
/// - `HURRAY_KV_TYPE_BOOL`: `bool_value`, 0 or 1.
/// - `HURRAY_KV_TYPE_BYTES`: `data`, `len` bytes (`data` NULL when empty).
/// - `HURRAY_KV_TYPE_ARRAY`: `element_type`, `len` elements at `data`. Read: int64,
///   uint64 and float64 elements as stored, 8 little-endian bytes each (native on
///   little-endian hosts) and NOT necessarily aligned (`memcpy` them, or copy an
///   aligned native window with `hurray_file_reader_kv_array_window`); bools one
///   byte (0 or 1) each; string and byte-sequence arrays have `data` NULL: read
///   element k with `hurray_file_reader_kv_array_element`. Added: `len`
///   native-endian elements (`int64_t`, `uint64_t`, `double`, any alignment; bools
///   bytes 0 or 1), or for string and byte-sequence arrays `len` `HurrayKvValue`s of
///   type `element_type`.
///
/// Pointers in a value read from a reader are borrowed, valid until the reader is
/// destroyed; a value passed in is only read during the call.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HurrayKvValue {
    /// `HURRAY_KV_TYPE_*` of the value.
    pub type_tag: u8,
    /// For `HURRAY_KV_TYPE_ARRAY`: the `HURRAY_KV_TYPE_*` of its elements
    /// (`STRING` .. `BYTES`); 0 otherwise.
    pub element_type: u8,
    /// For `HURRAY_KV_TYPE_BOOL`: 0 or 1.
    pub bool_value: u8,
    /// Zero.
    pub reserved: [u8; 5],
    /// For `HURRAY_KV_TYPE_INT64`.
    pub int64_value: i64,
    /// For `HURRAY_KV_TYPE_UINT64`.
    pub uint64_value: u64,
    /// For `HURRAY_KV_TYPE_FLOAT64` (any bit pattern, NaN included).
    pub float64_value: f64,
    /// String, byte or array data (see the module docs); NULL when empty or unused.
    pub data: *const c_void,
    /// String or byte length in bytes (a string's without its NUL), or array element
    /// count; 0 otherwise.
    pub len: u64,
}

impl Default for HurrayKvValue {
    fn default() -> Self {
        HurrayKvValue {
            type_tag: 0,
            element_type: 0,
            bool_value: 0,
            reserved: [0; 5],
            int64_value: 0,
            uint64_value: 0,
            float64_value: 0.0,
            data: std::ptr::null(),
            len: 0,
        }
    }
}

/// `data` for a borrowed slice: NULL when empty.
fn ptr_of(b: &[u8]) -> *const c_void {
    if b.is_empty() {
        std::ptr::null()
    } else {
        b.as_ptr().cast()
    }
}

impl HurrayKvValue {
    /// The C form of a value read from a reader. `text` is the NUL-terminated copy
    /// of a string value (its NUL included), ignored for other types.
    fn from_ref(v: KvValueRef<'_>, text: Option<&[u8]>) -> HurrayKvValue {
        let mut c = HurrayKvValue {
            type_tag: v.tag(),
            ..HurrayKvValue::default()
        };
        match v {
            KvValueRef::String(s) => {
                // The copy has the value's bytes plus a NUL; without one (never the
                // case for a string entry) fall back to a static empty string.
                let t = text.filter(|t| t.len() == s.len() + 1).unwrap_or(b"\0");
                c.data = t.as_ptr().cast();
                c.len = (t.len() - 1) as u64;
            }
            KvValueRef::Int64(x) => c.int64_value = x,
            KvValueRef::UInt64(x) => c.uint64_value = x,
            KvValueRef::Float64(x) => c.float64_value = x,
            KvValueRef::Bool(b) => c.bool_value = u8::from(b),
            KvValueRef::Bytes(b) => {
                c.data = ptr_of(b);
                c.len = b.len() as u64;
            }
            KvValueRef::Array(a) => {
                c.element_type = a.element_tag();
                c.len = a.len() as u64;
                c.data = a.fixed_bytes().map_or(std::ptr::null(), ptr_of);
            }
        }
        c
    }

    /// The owned value this C value stands for (what the writer adds).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (unknown `type_tag` or `element_type`,
    /// a string not UTF-8, a bool not 0 or 1, an array element of another type);
    /// `HURRAY_ERR_NULL_POINTER` (`data` NULL with `len` > 0).
    ///
    /// # Safety
    /// `data` must be NULL or valid for reads of what `type_tag` says it holds.
    unsafe fn owned_value(&self, arg: &str) -> FfiResult<KvValue> {
        let bad = |m: String| FfiError::new(HURRAY_ERR_INVALID_ARGUMENT, m);
        // SAFETY: forwarded: `data` valid for `len` bytes of a string or byte value.
        let bytes = |n: u64| unsafe { slice_in(self.data.cast::<u8>(), n, arg) };
        Ok(match self.type_tag {
            tag::STRING => KvValue::String(utf8(bytes(self.len)?, arg)?.to_owned()),
            tag::INT64 => KvValue::Int64(self.int64_value),
            tag::UINT64 => KvValue::UInt64(self.uint64_value),
            tag::FLOAT64 => KvValue::Float64(self.float64_value),
            tag::BOOL => KvValue::Bool(bool_in(self.bool_value, arg)?),
            tag::BYTES => KvValue::Bytes(bytes(self.len)?.to_vec()),
            tag::ARRAY => {
                let wide = |n: u64| {
                    let b = n
                        .checked_mul(8)
                        .ok_or_else(|| bad(format!("`{arg}` length {n} is too large")))?;
                    bytes(b).map(|b| b.chunks_exact(8).map(|c| c.try_into().unwrap_or([0; 8])))
                };
                KvValue::Array(match self.element_type {
                    tag::INT64 => KvArray::Int64(wide(self.len)?.map(i64::from_ne_bytes).collect()),
                    tag::UINT64 => {
                        KvArray::UInt64(wide(self.len)?.map(u64::from_ne_bytes).collect())
                    }
                    tag::FLOAT64 => {
                        KvArray::Float64(wide(self.len)?.map(f64::from_ne_bytes).collect())
                    }
                    tag::BOOL => KvArray::Bool(
                        bytes(self.len)?
                            .iter()
                            .map(|&b| bool_in(b, arg))
                            .collect::<FfiResult<_>>()?,
                    ),
                    t @ (tag::STRING | tag::BYTES) => {
                        // SAFETY: for these arrays `data` holds `len` HurrayKvValues.
                        let items =
                            unsafe { slice_in(self.data.cast::<HurrayKvValue>(), self.len, arg)? };
                        if let Some((k, e)) =
                            items.iter().enumerate().find(|(_, e)| e.type_tag != t)
                        {
                            return Err(bad(format!(
                                "`{arg}` element {k} has type_tag {:#04x}, the array's element_type is {t:#04x}",
                                e.type_tag
                            )));
                        }
                        // SAFETY: each element's `data` is valid per the caller.
                        let owned = items
                            .iter()
                            .map(|e| unsafe { e.owned_value(arg) })
                            .collect::<FfiResult<Vec<_>>>()?;
                        if t == tag::STRING {
                            KvArray::String(
                                owned
                                    .into_iter()
                                    .map(|v| match v {
                                        KvValue::String(s) => s,
                                        _ => String::new(),
                                    })
                                    .collect(),
                            )
                        } else {
                            KvArray::Bytes(
                                owned
                                    .into_iter()
                                    .map(|v| match v {
                                        KvValue::Bytes(b) => b,
                                        _ => Vec::new(),
                                    })
                                    .collect(),
                            )
                        }
                    }
                    t => {
                        return Err(bad(format!(
                            "`{arg}` element_type {t:#04x} is not a KV element type (0x01..0x06)"
                        )))
                    }
                })
            }
            t => {
                return Err(bad(format!(
                    "`{arg}` type_tag {t:#04x} is not a KV value type (0x01..0x07)"
                )))
            }
        })
    }
}

fn utf8<'a>(b: &'a [u8], arg: &str) -> FfiResult<&'a str> {
    std::str::from_utf8(b).map_err(|e| {
        FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` is not valid UTF-8 ({e})"),
        )
    })
}

/// The value of KV entry `index` (file order) as one tagged value, in one call: see
/// `HurrayKvValue` for which fields each `type_tag` sets. Strings come NUL-terminated
/// (the reader copies the KV text once, on the first string asked for); bytes and
/// array elements are borrowed from the mapping; the elements of a string or
/// byte-sequence array are read with `hurray_file_reader_kv_array_element`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`reader`, `out`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a reader of this copy of the library);
/// `HURRAY_ERR_OUT_OF_RANGE` (`index` >= the KV count).
///
/// Ownership: `*out` is written by value; its `data` is borrowed, valid until the
/// reader is destroyed.
///
/// # Safety
/// `reader` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_kv_value(
    reader: *const HurrayFileReader,
    index: u64,
    out: *mut HurrayKvValue,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        need(out, "out")?;
        let v = r.kv_value(index)?;
        let text = match v {
            KvValueRef::String(_) => r.text.string(&r.reader, index as usize),
            _ => None,
        };
        // SAFETY: checked non-null.
        unsafe { put(out, "out", HurrayKvValue::from_ref(v, text)) }
    })
}

/// Element `element` of the array in KV entry `index`, as a tagged value of the
/// array's element type (a string NUL-terminated, bytes borrowed from the mapping):
/// the window of one element for string and byte-sequence arrays, whose `data` is
/// NULL in `hurray_file_reader_kv_value`. Works for every element type.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a reader of this copy);
/// `HURRAY_ERR_OUT_OF_RANGE` (`index`, or `element` >= the array's length);
/// `HURRAY_ERR_NOT_APPLICABLE` (the value is not an array).
///
/// Ownership: `*out` is written by value; its `data` is borrowed, valid until the
/// reader is destroyed.
///
/// # Safety
/// `reader` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_kv_array_element(
    reader: *const HurrayFileReader,
    index: u64,
    element: u64,
    out: *mut HurrayKvValue,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        need(out, "out")?;
        let v = r.kv_value(index)?;
        let a = v
            .as_array()
            .ok_or_else(|| kv_wrong_type(&v, "homogeneous array"))?;
        let x = usize::try_from(element)
            .ok()
            .and_then(|k| a.get(k))
            .ok_or_else(|| out_of_range("array element", element, a.len()))?;
        let text = match x {
            KvValueRef::String(_) => r.text.element(&r.reader, index as usize, element as usize),
            _ => None,
        };
        // SAFETY: checked non-null.
        unsafe { put(out, "out", HurrayKvValue::from_ref(x, text)) }
    })
}

/// Adds a KV entry of any type in one call: `key` is `key_len` bytes of UTF-8 (no
/// NUL needed; 1..=65535 bytes, unique), `value` a tagged value as described for
/// `HurrayKvValue` (array data: native-endian elements, any alignment; string and
/// byte-sequence arrays: `len` `HurrayKvValue`s). Entries are written after the
/// tensors, in the order added. Everything is copied during the call.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`writer`, `value`, `key` or a `data` NULL with
/// a length > 0); `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not a
/// writer of this copy, text not UTF-8, a bool not 0 or 1, an unknown type or
/// element type, an element of another type than `element_type`);
/// `HURRAY_ERR_STATE` (finished writer); `HURRAY_ERR_FORMAT` (empty or duplicate
/// key); `HURRAY_ERR_LIMIT` (key over 65535 bytes, the KV section would reach 4 GiB).
///
/// Ownership: `key` and `value` (and what it points at) stay the caller's.
///
/// # Safety
/// `writer` NULL or live; `key` valid for `key_len` reads; `value` NULL or valid,
/// with `data` valid for what its type says.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_add_kv(
    writer: *mut HurrayFileWriter,
    key: *const c_char,
    key_len: u64,
    value: *const HurrayKvValue,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let w = unsafe { handle::own_mut(writer, "writer")? };
        if key.is_null() {
            return Err(FfiError::null("key"));
        }
        // SAFETY: valid for key_len reads per the caller.
        let key = utf8(
            unsafe { slice_in(key.cast::<u8>(), key_len, "key")? },
            "key",
        )?;
        // SAFETY: NULL or valid per the caller.
        let value = unsafe { value.as_ref() }.ok_or_else(|| FfiError::null("value"))?;
        // SAFETY: forwarded.
        let v = unsafe { value.owned_value("value")? };
        w.add_kv(key, v)
    })
}
