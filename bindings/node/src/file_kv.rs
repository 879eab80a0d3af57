//! KV values of a file reader as JS values: strings, `bigint` for int64/uint64,
//! numbers for float64, booleans, `Buffer` for bytes (copies), and arrays of those,
//! whole or a window of `[offset, offset + count)` elements.
//!
//! Numeric and bool elements are copied from the mapping into a buffer of the
//! window's size (`hurray_file_reader_kv_array_window`); arrays are built element by
//! element straight into the JS array, each run of
//! [`SCOPE`] elements inside a handle scope of its own, so what a whole array costs
//! is what V8 needs for it: a pointer-size slot per element (the same `""` for every
//! empty string, the same `true`/`false`), plus a string, `bigint` or `Buffer`
//! object per non-empty string, integer or byte element. That is up to 8 times the
//! file's 1 byte per bool and twice its 4 bytes per empty string, so `metadataRange`
//! reads huge arrays a window at a time.

use std::ffi::c_char;
use std::ptr;

use hurray_ffi::file::*;
use hurray_ffi::HurrayFileReader;
use napi::bindgen_prelude::*;
use napi::sys;

use crate::error::{check, err, napi_check, Result};

/// Elements made inside one handle scope.
const SCOPE: u64 = 4096;

/// Type, element type and count of KV entry `index` (`hurray_file_reader_kv_type`).
///
/// # Safety
/// `r` is a live reader.
pub(crate) unsafe fn kv_type(r: *const HurrayFileReader, index: u64) -> Result<(u8, u8, u64)> {
    let (mut ty, mut et, mut n) = (0u8, 0u8, 0u64);
    // SAFETY: `r` live (the caller's contract); outs are locals.
    check(unsafe { hurray_file_reader_kv_type(r, index, &mut ty, &mut et, &mut n) })?;
    Ok((ty, et, n))
}

fn js<'e, T: ToNapiValue>(env: &'e Env, v: T) -> Result<Unknown<'e>> {
    // SAFETY: `env` is the current call's environment.
    unsafe {
        let raw = T::to_napi_value(env.raw(), v).map_err(crate::error::napi_err)?;
        Ok(Unknown::from_raw_unchecked(env.raw(), raw))
    }
}

/// A JS array of `count` elements, element `k` made by `elem(k)`.
fn js_array<'e>(
    env: &'e Env,
    count: u64,
    mut elem: impl FnMut(sys::napi_env, u64) -> Result<sys::napi_value>,
) -> Result<Unknown<'e>> {
    let raw = env.raw();
    let mut arr = ptr::null_mut();
    // SAFETY: `raw` is the current call's environment; `arr` a local out-pointer.
    napi_check(
        unsafe { sys::napi_create_array_with_length(raw, count as usize, &mut arr) },
        "napi_create_array_with_length",
    )?;
    let mut k = 0;
    while k < count {
        let end = (k + SCOPE).min(count);
        let mut scope = ptr::null_mut();
        // SAFETY: as above; the scope is closed below whatever happens.
        napi_check(
            unsafe { sys::napi_open_handle_scope(raw, &mut scope) },
            "napi_open_handle_scope",
        )?;
        let run = (k..end).try_for_each(|j| {
            let v = elem(raw, j)?;
            // SAFETY: `arr` was made in the enclosing scope, `v` in this one.
            napi_check(
                unsafe { sys::napi_set_element(raw, arr, j as u32, v) },
                "napi_set_element",
            )
        });
        // SAFETY: the scope opened above, innermost.
        let closed = napi_check(
            unsafe { sys::napi_close_handle_scope(raw, scope) },
            "napi_close_handle_scope",
        );
        run?;
        closed?;
        k = end;
    }
    // SAFETY: `arr` is a live value of this call.
    Ok(unsafe { Unknown::from_raw_unchecked(raw, arr) })
}

/// The `n` tensor names of reader `r` as a JS array of strings.
///
/// # Safety
/// `r` is a live reader with `n` tensors.
pub(crate) unsafe fn names<'e>(
    env: &'e Env,
    r: *const HurrayFileReader,
    n: u64,
) -> Result<Unknown<'e>> {
    js_array(env, n, |raw, i| {
        let (mut p, mut len) = (ptr::null::<c_char>(), 0u64);
        // SAFETY: `r` live, `i` < its count; the name is copied into the JS string.
        check(unsafe { hurray_file_reader_tensor_name(r, i, &mut p, &mut len) })?;
        make(
            // SAFETY: `p` is `len` bytes borrowed from the live reader.
            |out| unsafe { sys::napi_create_string_utf8(raw, p, len as isize, out) },
            "napi_create_string_utf8",
        )
    })
}

/// Makes one JS value with a napi constructor writing to `out`.
fn make(
    f: impl FnOnce(*mut sys::napi_value) -> sys::napi_status,
    what: &str,
) -> Result<sys::napi_value> {
    let mut v = ptr::null_mut();
    napi_check(f(&mut v), what)?;
    Ok(v)
}

/// A copy of `len` borrowed bytes at `p` as a `Buffer` value.
///
/// # Safety
/// `p` valid for `len` reads (or `len` 0).
unsafe fn buffer_copy(env: sys::napi_env, p: *const u8, len: u64) -> Result<sys::napi_value> {
    let mut data = ptr::null_mut();
    let src: *const std::ffi::c_void = if len == 0 {
        [0u8].as_ptr().cast()
    } else {
        p.cast()
    };
    make(
        // SAFETY: `src` valid for `len` reads (the caller's contract).
        |out| unsafe { sys::napi_create_buffer_copy(env, len as usize, src, &mut data, out) },
        "napi_create_buffer_copy",
    )
}

/// Elements `[from, from + count)` of the numeric or bool KV array `index`, copied
/// by the library into a buffer of `count` elements, then made JS values by `to_js`.
///
/// # Safety
/// `r` is a live reader and `index` one of its KV entries.
unsafe fn fixed<'e, T: Copy + Default>(
    env: &'e Env,
    (r, index): (*const HurrayFileReader, u64),
    (from, count): (u64, u64),
    to_js: impl Fn(sys::napi_env, T) -> Result<sys::napi_value>,
) -> Result<Unknown<'e>> {
    let mut v = vec![T::default(); count as usize];
    let size = std::mem::size_of::<T>() as u64;
    let out = if count == 0 {
        ptr::null_mut()
    } else {
        v.as_mut_ptr().cast()
    };
    // SAFETY: `r` live (the caller's contract); `v` holds `count` writable `T`.
    check(unsafe { hurray_file_reader_kv_array_window(r, index, from, count, out, count * size) })?;
    js_array(env, count, |raw, k| to_js(raw, v[k as usize]))
}

/// KV entry `index` as a JS value; for an array, only elements `[from, from +
/// count)` when `window` is `Some((from, count))` (checked against its length).
///
/// # Safety
/// `r` is a live reader and `index` one of its KV entries.
pub(crate) unsafe fn kv_value<'env>(
    env: &'env Env,
    r: *const HurrayFileReader,
    index: u64,
    window: Option<(u64, u64)>,
) -> Result<Unknown<'env>> {
    // SAFETY: the caller's contract.
    let (ty, et, n) = unsafe { kv_type(r, index)? };
    if window.is_some() && ty != HURRAY_KV_TYPE_ARRAY {
        return Err(err(
            "HURRAY_ERR_NOT_APPLICABLE",
            "the KV value is not an array",
        ));
    }
    let (from, count) = window.unwrap_or((0, n));
    if from.checked_add(count).is_none_or(|end| end > n) {
        return Err(err(
            "HURRAY_ERR_OUT_OF_RANGE",
            format!("the window [{from}, +{count}) is past the array's {n} elements"),
        ));
    }
    let (src, w) = ((r, index), (from, count));
    // SAFETY (each arm): `r` live, `index` valid, outs locals; borrowed strings and
    // bytes are copied into JS values before the next call.
    unsafe {
        match ty {
            HURRAY_KV_TYPE_STRING => {
                let (mut p, mut len) = (ptr::null(), 0u64);
                check(hurray_file_reader_kv_string(r, index, &mut p, &mut len))?;
                let raw = env.raw();
                let v = make(
                    |out| sys::napi_create_string_utf8(raw, p, len as isize, out),
                    "napi_create_string_utf8",
                )?;
                Ok(Unknown::from_raw_unchecked(raw, v))
            }
            HURRAY_KV_TYPE_INT64 => {
                let mut v = 0i64;
                check(hurray_file_reader_kv_int64(r, index, &mut v))?;
                js(env, BigInt::from(v))
            }
            HURRAY_KV_TYPE_UINT64 => {
                let mut v = 0u64;
                check(hurray_file_reader_kv_uint64(r, index, &mut v))?;
                js(env, BigInt::from(v))
            }
            HURRAY_KV_TYPE_FLOAT64 => {
                let mut v = 0f64;
                check(hurray_file_reader_kv_float64(r, index, &mut v))?;
                js(env, v)
            }
            HURRAY_KV_TYPE_BOOL => {
                let mut v = 0u8;
                check(hurray_file_reader_kv_bool(r, index, &mut v))?;
                js(env, v != 0)
            }
            HURRAY_KV_TYPE_BYTES => {
                let (mut p, mut len) = (ptr::null(), 0u64);
                check(hurray_file_reader_kv_bytes(r, index, &mut p, &mut len))?;
                let raw = env.raw();
                Ok(Unknown::from_raw_unchecked(raw, buffer_copy(raw, p, len)?))
            }
            HURRAY_KV_TYPE_ARRAY => match et {
                HURRAY_KV_TYPE_INT64 => fixed(env, src, w, |raw, x: i64| {
                    make(
                        |out| sys::napi_create_bigint_int64(raw, x, out),
                        "napi_create_bigint_int64",
                    )
                }),
                HURRAY_KV_TYPE_UINT64 => fixed(env, src, w, |raw, x: u64| {
                    make(
                        |out| sys::napi_create_bigint_uint64(raw, x, out),
                        "napi_create_bigint_uint64",
                    )
                }),
                HURRAY_KV_TYPE_FLOAT64 => fixed(env, src, w, |raw, x: f64| {
                    make(
                        |out| sys::napi_create_double(raw, x, out),
                        "napi_create_double",
                    )
                }),
                HURRAY_KV_TYPE_BOOL => fixed(env, src, w, |raw, x: u8| {
                    make(
                        |out| sys::napi_get_boolean(raw, x != 0, out),
                        "napi_get_boolean",
                    )
                }),
                HURRAY_KV_TYPE_STRING => js_array(env, count, |raw, k| {
                    let (mut p, mut len) = (ptr::null::<c_char>(), 0u64);
                    check(hurray_file_reader_kv_array_string(
                        r,
                        index,
                        from + k,
                        &mut p,
                        &mut len,
                    ))?;
                    make(
                        |out| sys::napi_create_string_utf8(raw, p, len as isize, out),
                        "napi_create_string_utf8",
                    )
                }),
                HURRAY_KV_TYPE_BYTES => js_array(env, count, |raw, k| {
                    let (mut p, mut len) = (ptr::null::<u8>(), 0u64);
                    check(hurray_file_reader_kv_array_bytes(
                        r,
                        index,
                        from + k,
                        &mut p,
                        &mut len,
                    ))?;
                    buffer_copy(raw, p, len)
                }),
                other => Err(err(
                    "HURRAY_ERR_NOT_APPLICABLE",
                    format!("KV array of element type {other} is not supported"),
                )),
            },
            other => Err(err(
                "HURRAY_ERR_NOT_APPLICABLE",
                format!("KV type {other} is not supported"),
            )),
        }
    }
}
