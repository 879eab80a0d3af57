//! The file reader's KV getters: one entry's value as a Java object, or a window of
//! an array's elements (`fileKvRange`), which is how a huge array is read with
//! bounded memory.
//!
//! What a value costs on the Java heap: numeric and bool arrays (or windows) are
//! copied by the library straight into the new Java array (8 or 1 bytes per element,
//! their size in the file); a `String[]` is one reference per element (4 bytes with compressed
//! oops), every empty element the same `""`, and a `String` of its own (about 40
//! bytes and more) per non-empty one; a `byte[][]` a `byte[]` per element.

use std::ffi::c_char;
use std::ptr;

use hurray_ffi::file::{
    hurray_file_reader_kv_array_bytes, hurray_file_reader_kv_array_string,
    hurray_file_reader_kv_array_window, hurray_file_reader_kv_bool, hurray_file_reader_kv_bytes,
    hurray_file_reader_kv_find, hurray_file_reader_kv_float64, hurray_file_reader_kv_int64,
    hurray_file_reader_kv_string, hurray_file_reader_kv_type, hurray_file_reader_kv_uint64,
};
use hurray_ffi::HurrayFileReader;
use jni::objects::{JClass, JObject, JPrimitiveArray, JString, JValue, ReleaseMode};
use jni::sys::{jint, jlong, jobject};
use jni::JNIEnv;

use crate::convert::{borrowed_str, cstring};
use crate::errors::{ck, run, Fail, R};
use crate::file::reader;

fn big_integer<'l>(env: &mut JNIEnv<'l>, v: u64) -> R<JObject<'l>> {
    let s = env.new_string(v.to_string())?;
    Ok(env.new_object(
        "java/math/BigInteger",
        "(Ljava/lang/String;)V",
        &[JValue::Object(&s)],
    )?)
}

fn boxed<'l>(env: &mut JNIEnv<'l>, class: &str, sig: &str, v: JValue) -> R<JObject<'l>> {
    Ok(env.call_static_method(class, "valueOf", sig, &[v])?.l()?)
}

/// Copies a borrowed byte slice into a new Java `byte[]`.
///
/// # Safety
/// `p` valid for `len` reads (or `len` 0).
unsafe fn borrowed_bytes<'l>(env: &mut JNIEnv<'l>, p: *const u8, len: u64) -> R<JObject<'l>> {
    let s = if len == 0 {
        &[][..]
    } else {
        // SAFETY: caller contract.
        unsafe { std::slice::from_raw_parts(p, len as usize) }
    };
    Ok(env.byte_array_from_slice(s)?.into())
}

/// `Native.fileKv(long, String key)`: the value of a KV entry as a Java object:
/// `String`, `Long` (int64), `java.math.BigInteger` (uint64), `Double`, `Boolean`,
/// `byte[]`, or an array: `long[]`, `BigInteger[]`, `double[]`, `boolean[]`,
/// `String[]`, `byte[][]`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileKv<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
    key: JString<'l>,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let r = reader(r);
        let (i, ty, et, n) = lookup(env, r, &key)?;
        let obj: JObject = match ty {
            1 => {
                let (mut p, mut len) = (ptr::null::<c_char>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_string(r, i, &mut p, &mut len) })?;
                // SAFETY: borrowed string of len bytes.
                unsafe { borrowed_str(env, p, len)? }.into()
            }
            2 => {
                let mut v = 0i64;
                // SAFETY: r live; v writable.
                ck(unsafe { hurray_file_reader_kv_int64(r, i, &mut v) })?;
                boxed(
                    env,
                    "java/lang/Long",
                    "(J)Ljava/lang/Long;",
                    JValue::Long(v),
                )?
            }
            3 => {
                let mut v = 0u64;
                // SAFETY: r live; v writable.
                ck(unsafe { hurray_file_reader_kv_uint64(r, i, &mut v) })?;
                big_integer(env, v)?
            }
            4 => {
                let mut v = 0f64;
                // SAFETY: r live; v writable.
                ck(unsafe { hurray_file_reader_kv_float64(r, i, &mut v) })?;
                boxed(
                    env,
                    "java/lang/Double",
                    "(D)Ljava/lang/Double;",
                    JValue::Double(v),
                )?
            }
            5 => {
                let mut v = 0u8;
                // SAFETY: r live; v writable.
                ck(unsafe { hurray_file_reader_kv_bool(r, i, &mut v) })?;
                boxed(
                    env,
                    "java/lang/Boolean",
                    "(Z)Ljava/lang/Boolean;",
                    JValue::Bool(v),
                )?
            }
            6 => {
                let (mut p, mut len) = (ptr::null::<u8>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_bytes(r, i, &mut p, &mut len) })?;
                // SAFETY: borrowed bytes of len bytes.
                unsafe { borrowed_bytes(env, p, len)? }
            }
            7 => kv_array(env, r, i, et, 0, n)?,
            _ => {
                return Err(Fail::Status(
                    hurray_ffi::HURRAY_ERR_NOT_APPLICABLE,
                    format!("KV type {ty} is not known to the Java binding"),
                ))
            }
        };
        Ok(obj.into_raw())
    })
}

/// The position, type, element type and count of the KV entry `key`.
fn lookup(
    env: &mut JNIEnv<'_>,
    r: *const HurrayFileReader,
    key: &JString<'_>,
) -> R<(u64, u8, u8, u64)> {
    let key = cstring(env, key)?;
    let mut i = 0u64;
    // SAFETY: r live; key NUL-terminated; i writable.
    ck(unsafe { hurray_file_reader_kv_find(r, key.as_ptr(), &mut i) })?;
    let (mut ty, mut et, mut n) = (0u8, 0u8, 0u64);
    // SAFETY: r live; outs writable.
    ck(unsafe { hurray_file_reader_kv_type(r, i, &mut ty, &mut et, &mut n) })?;
    Ok((i, ty, et, n))
}

/// `Native.fileKvLength(long, String key)`: elements of an array, bytes of a string
/// or byte value, 1 for other scalars.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileKvLength<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
    key: JString<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let (_, _, _, n) = lookup(env, reader(r), &key)?;
        Ok(n as jlong)
    })
}

/// `Native.fileKvRange(long, String key, long offset, int count)`: elements
/// `[offset, offset + count)` of a KV array, typed as `fileKv` types whole arrays.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileKvRange<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
    key: JString<'l>,
    offset: jlong,
    count: jint,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let r = reader(r);
        let (i, ty, et, n) = lookup(env, r, &key)?;
        if ty != 7 {
            return Err(Fail::Status(
                hurray_ffi::HURRAY_ERR_NOT_APPLICABLE,
                "the KV value is not an array".into(),
            ));
        }
        let (Ok(from), Ok(count)) = (u64::try_from(offset), u64::try_from(count)) else {
            return Err(Fail::Status(
                hurray_ffi::HURRAY_ERR_OUT_OF_RANGE,
                format!("the window offset {offset}, count {count} is negative"),
            ));
        };
        if from.checked_add(count).is_none_or(|end| end > n) {
            return Err(Fail::Status(
                hurray_ffi::HURRAY_ERR_OUT_OF_RANGE,
                format!("the window [{from}, +{count}) is past the array's {n} elements"),
            ));
        }
        Ok(kv_array(env, r, i, et, from, count)?.into_raw())
    })
}

/// Fills the new Java array `a` (`count` elements of `size` bytes) with elements
/// `[from, from + count)` of the numeric or bool KV array `i`, copied by the library
/// straight into the Java array's memory.
fn fill<'l, T: jni::objects::TypeArray>(
    env: &mut JNIEnv<'l>,
    a: JPrimitiveArray<'l, T>,
    (r, i): (*const HurrayFileReader, u64),
    (from, count): (u64, u64),
) -> R<JObject<'l>> {
    if count > 0 {
        let size = std::mem::size_of::<T>() as u64;
        // SAFETY: no JNI call is made while the elements are held.
        let e = unsafe { env.get_array_elements_critical(&a, ReleaseMode::CopyBack)? };
        // SAFETY: r live; `e` holds `count` writable elements of `size` bytes.
        let st = unsafe {
            hurray_file_reader_kv_array_window(r, i, from, count, e.as_ptr().cast(), count * size)
        };
        drop(e);
        ck(st)?;
    }
    Ok(a.into())
}

/// Elements `[from, from + count)` of the KV array `i` (element type `et`; the
/// window checked by the caller) as a Java array.
fn kv_array<'l>(
    env: &mut JNIEnv<'l>,
    r: *const HurrayFileReader,
    i: u64,
    et: u8,
    from: u64,
    count: u64,
) -> R<JObject<'l>> {
    let len = i32::try_from(count).map_err(|_| Fail::Arg("KV array too long for Java".into()))?;
    let (src, w) = ((r, i), (from, count));
    Ok(match et {
        2 => {
            let a = env.new_long_array(len)?;
            fill(env, a, src, w)?
        }
        3 => {
            let mut v = vec![0u64; count as usize];
            // SAFETY: r live; v holds `count` writable u64.
            ck(unsafe {
                hurray_file_reader_kv_array_window(
                    r,
                    i,
                    from,
                    count,
                    v.as_mut_ptr().cast(),
                    count * 8,
                )
            })?;
            let a = env.new_object_array(len, "java/math/BigInteger", JObject::null())?;
            for (k, &x) in v.iter().enumerate() {
                let b = big_integer(env, x)?;
                env.set_object_array_element(&a, k as i32, &b)?;
                env.delete_local_ref(b)?;
            }
            a.into()
        }
        4 => {
            let a = env.new_double_array(len)?;
            fill(env, a, src, w)?
        }
        5 => {
            // The library writes bytes 0 and 1, which is what a jboolean holds.
            let a = env.new_boolean_array(len)?;
            fill(env, a, src, w)?
        }
        1 => {
            let a = env.new_object_array(len, "java/lang/String", JObject::null())?;
            // One "" for every empty element: an array of them costs a reference each.
            let empty = env.new_string("")?;
            for k in 0..count {
                let (mut p, mut l) = (ptr::null::<c_char>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_array_string(r, i, from + k, &mut p, &mut l) })?;
                if l == 0 {
                    env.set_object_array_element(&a, k as i32, &empty)?;
                    continue;
                }
                // SAFETY: borrowed string of l bytes.
                let s = unsafe { borrowed_str(env, p, l)? };
                env.set_object_array_element(&a, k as i32, &s)?;
                env.delete_local_ref(s)?;
            }
            env.delete_local_ref(empty)?;
            a.into()
        }
        6 => {
            let a = env.new_object_array(len, "[B", JObject::null())?;
            for k in 0..count {
                let (mut p, mut l) = (ptr::null::<u8>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_array_bytes(r, i, from + k, &mut p, &mut l) })?;
                // SAFETY: borrowed bytes of l bytes.
                let b = unsafe { borrowed_bytes(env, p, l)? };
                env.set_object_array_element(&a, k as i32, &b)?;
                env.delete_local_ref(b)?;
            }
            a.into()
        }
        _ => {
            return Err(Fail::Status(
                hurray_ffi::HURRAY_ERR_NOT_APPLICABLE,
                format!("KV array element type {et} is not known to the Java binding"),
            ))
        }
    })
}
