//! The file reader's KV getters: one entry's value as a Java object.

use std::ffi::c_char;
use std::ptr;

use hurray_ffi::file::{
    hurray_file_reader_kv_array_bool, hurray_file_reader_kv_array_bytes,
    hurray_file_reader_kv_array_float64, hurray_file_reader_kv_array_int64,
    hurray_file_reader_kv_array_string, hurray_file_reader_kv_array_uint64,
    hurray_file_reader_kv_bool, hurray_file_reader_kv_bytes, hurray_file_reader_kv_find,
    hurray_file_reader_kv_float64, hurray_file_reader_kv_int64, hurray_file_reader_kv_string,
    hurray_file_reader_kv_type, hurray_file_reader_kv_uint64,
};
use hurray_ffi::HurrayFileReader;
use jni::objects::{JClass, JDoubleArray, JObject, JString, JValue};
use jni::sys::{jlong, jobject};
use jni::JNIEnv;

use crate::convert::{borrowed_str, cstring, new_longs, u64s_to_i64};
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
        let key = cstring(env, &key)?;
        let r = reader(r);
        let mut i = 0u64;
        // SAFETY: r live; key NUL-terminated; i writable.
        ck(unsafe { hurray_file_reader_kv_find(r, key.as_ptr(), &mut i) })?;
        let (mut ty, mut et, mut n) = (0u8, 0u8, 0u64);
        // SAFETY: r live; outs writable.
        ck(unsafe { hurray_file_reader_kv_type(r, i, &mut ty, &mut et, &mut n) })?;
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
            7 => kv_array(env, r, i, et, n)?,
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

fn kv_array<'l>(
    env: &mut JNIEnv<'l>,
    r: *const HurrayFileReader,
    i: u64,
    et: u8,
    n: u64,
) -> R<JObject<'l>> {
    let len = i32::try_from(n).map_err(|_| Fail::Arg("KV array too long for Java".into()))?;
    let mut got = 0u64;
    Ok(match et {
        2 | 3 => {
            let mut v = vec![0u64; n as usize];
            if et == 2 {
                // SAFETY: v holds n writable values (i64 and u64 share a layout).
                ck(unsafe {
                    hurray_file_reader_kv_array_int64(r, i, v.as_mut_ptr().cast(), n, &mut got)
                })?;
                new_longs(env, &u64s_to_i64(&v))?.into()
            } else {
                // SAFETY: v holds n writable values.
                ck(unsafe {
                    hurray_file_reader_kv_array_uint64(r, i, v.as_mut_ptr(), n, &mut got)
                })?;
                let a = env.new_object_array(len, "java/math/BigInteger", JObject::null())?;
                for (k, &x) in v.iter().enumerate() {
                    let b = big_integer(env, x)?;
                    env.set_object_array_element(&a, k as i32, &b)?;
                    env.delete_local_ref(b)?;
                }
                a.into()
            }
        }
        4 => {
            let mut v = vec![0f64; n as usize];
            // SAFETY: v holds n writable values.
            ck(unsafe { hurray_file_reader_kv_array_float64(r, i, v.as_mut_ptr(), n, &mut got) })?;
            let a: JDoubleArray = env.new_double_array(len)?;
            env.set_double_array_region(&a, 0, &v)?;
            a.into()
        }
        5 => {
            let mut v = vec![0u8; n as usize];
            // SAFETY: v holds n writable values.
            ck(unsafe { hurray_file_reader_kv_array_bool(r, i, v.as_mut_ptr(), n, &mut got) })?;
            let a = env.new_boolean_array(len)?;
            env.set_boolean_array_region(&a, 0, &v)?;
            a.into()
        }
        1 => {
            let a = env.new_object_array(len, "java/lang/String", JObject::null())?;
            for k in 0..n {
                let (mut p, mut l) = (ptr::null::<c_char>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_array_string(r, i, k, &mut p, &mut l) })?;
                // SAFETY: borrowed string of l bytes.
                let s = unsafe { borrowed_str(env, p, l)? };
                env.set_object_array_element(&a, k as i32, &s)?;
                env.delete_local_ref(s)?;
            }
            a.into()
        }
        6 => {
            let a = env.new_object_array(len, "[B", JObject::null())?;
            for k in 0..n {
                let (mut p, mut l) = (ptr::null::<u8>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_array_bytes(r, i, k, &mut p, &mut l) })?;
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
