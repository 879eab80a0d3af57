//! KV values of a file reader as JS values: strings, `bigint` for int64/uint64,
//! numbers for float64, booleans, `Buffer` for bytes (copies), and arrays of those,
//! whole or a window of `[offset, offset + count)` elements.
//!
//! Values come from hurray-ffi's reader face (`HurrayFileReader::kv_value`, decoded
//! from the mapping on demand, strings and bytes borrowed from it). Arrays are built
//! element by element straight into the JS array, each run of [`SCOPE`] elements
//! inside a handle scope of its own, so what a whole array costs is what V8 needs
//! for it: a pointer-size slot per element (the same `""` for every empty string,
//! the same `true`/`false`), plus a string, `bigint` or `Buffer` object per
//! non-empty string, integer or byte element. That is up to 8 times the file's 1
//! byte per bool and twice its 4 bytes per empty string, so `metadataRange` reads
//! huge arrays a window at a time.

use hurray_ffi::{HurrayFileReader, KvArrayRef, KvValueRef};
use napi::bindgen_prelude::*;

use crate::error::{err, ffi, napi_err, Result};

/// Elements made inside one handle scope.
const SCOPE: u32 = 4096;

/// The number a KV value reports as its length: elements of an array, bytes of a
/// string (UTF-8) or byte sequence, 1 for other scalars.
pub(crate) fn kv_len(v: &KvValueRef<'_>) -> usize {
    match v {
        KvValueRef::String(s) => s.len(),
        KvValueRef::Bytes(b) => b.len(),
        KvValueRef::Array(a) => a.len(),
        _ => 1,
    }
}

/// A JS array of `count` elements, element `k` made by `elem(k)` (a handle scope per
/// [`SCOPE`] elements, closed before the next run).
fn js_array<'e>(
    env: &'e Env,
    count: u32,
    mut elem: impl FnMut(u32) -> Result<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    let mut arr = env.create_array(count).map_err(napi_err)?;
    let mut k = 0;
    while k < count {
        let end = k.saturating_add(SCOPE).min(count);
        // Our error (with its `code`) is kept aside: the scope speaks napi's.
        let mut failed = None;
        env.run_in_scope(|| {
            for j in k..end {
                match elem(j) {
                    Ok(v) => arr.set(j, v)?,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            Ok(())
        })
        .map_err(napi_err)?;
        if let Some(e) = failed {
            return Err(e);
        }
        k = end;
    }
    arr.into_unknown(env).map_err(napi_err)
}

/// One scalar (or array element) as a JS value.
fn scalar<'e>(env: &'e Env, v: KvValueRef<'_>) -> Result<Unknown<'e>> {
    match v {
        KvValueRef::String(s) => s.into_unknown(env),
        KvValueRef::Int64(x) => BigInt::from(x).into_unknown(env),
        KvValueRef::UInt64(x) => BigInt::from(x).into_unknown(env),
        KvValueRef::Float64(x) => x.into_unknown(env),
        KvValueRef::Bool(x) => x.into_unknown(env),
        KvValueRef::Bytes(b) => BufferSlice::copy_from(env, b).and_then(|b| b.into_unknown(env)),
        KvValueRef::Array(_) => Err(napi::Error::from_reason("nested KV array")),
    }
    .map_err(napi_err)
}

/// Elements `[from, from + count)` of `a` (the window checked by the caller) as a JS
/// array.
fn array<'e>(env: &'e Env, a: &KvArrayRef<'_>, from: usize, count: u32) -> Result<Unknown<'e>> {
    if !matches!(a.element_tag(), 0x01..=0x06) {
        return Err(err(
            "HURRAY_ERR_NOT_APPLICABLE",
            format!(
                "KV array of element type {} is not supported",
                a.element_tag()
            ),
        ));
    }
    // One pass from the window's start: string and byte elements carry length
    // prefixes, so element k is found by stepping over those before it.
    let mut it = a.iter().skip(from);
    js_array(env, count, |_| {
        let v = it.next().ok_or_else(|| {
            err(
                "HURRAY_ERR_INTERNAL_PANIC",
                "KV array shorter than its count",
            )
        })?;
        scalar(env, v)
    })
}

/// KV entry `index` of `r` as a JS value; for an array, only elements `[from, from +
/// count)` when `window` is `Some((from, count))` (checked against its length).
///
/// Errors: `ERR_HURRAY_INVALID_ARGUMENT` (`HURRAY_ERR_OUT_OF_RANGE`: the index or the
/// window), `ERR_HURRAY_UNSUPPORTED` (a window of a value that is not an array).
pub(crate) fn kv_value<'env>(
    env: &'env Env,
    r: &HurrayFileReader,
    index: u64,
    window: Option<(u64, u64)>,
) -> Result<Unknown<'env>> {
    if window.is_none() {
        // A whole value: the same bound on a huge array as every binding.
        r.kv_check_whole(index).map_err(ffi)?;
    }
    let v = r.kv_value(index).map_err(ffi)?;
    let KvValueRef::Array(a) = v else {
        if window.is_some() {
            return Err(err(
                "HURRAY_ERR_NOT_APPLICABLE",
                "the KV value is not an array",
            ));
        }
        return scalar(env, v);
    };
    let n = a.len() as u64;
    let (from, count) = window.unwrap_or((0, n));
    if from.checked_add(count).is_none_or(|end| end > n) {
        return Err(err(
            "HURRAY_ERR_OUT_OF_RANGE",
            format!("the window [{from}, +{count}) is past the array's {n} elements"),
        ));
    }
    // Both fit: the window lies inside an array of at most 2^32 - 1 elements.
    array(env, &a, from as usize, count as u32)
}

/// The tensor names of `r`, in index order, as a JS array of strings.
pub(crate) fn names<'e>(env: &'e Env, r: &HurrayFileReader) -> Result<Unknown<'e>> {
    let n = u32::try_from(r.tensor_count())
        .map_err(|_| err("HURRAY_ERR_LIMIT", "more tensors than a JS array holds"))?;
    js_array(env, n, |i| {
        let name = r.tensor_name(u64::from(i)).map_err(ffi)?;
        name.into_unknown(env).map_err(napi_err)
    })
}
