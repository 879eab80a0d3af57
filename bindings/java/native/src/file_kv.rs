//! The file reader's KV getters: one entry's value as a Java object, or a window of
//! an array's elements (`fileKvRange`), which is how a huge array is read with
//! bounded memory. Values are read from the mapped file through
//! the reader's KV section (`KvValueRef`, decoded on demand).
//!
//! What a value costs on the Java heap: numeric and bool arrays (or windows) are
//! written straight into the new Java array (8 or 1 bytes per element, their size in
//! the file); a `String[]` is one reference per element (4 bytes with compressed
//! oops), every empty element the same `""`, and a `String` of its own (about 40
//! bytes and more) per non-empty one; a `byte[][]` a `byte[]` per element.

use std::ptr;

use hurray_ffi::{FfiError, HURRAY_ERR_NOT_APPLICABLE, HURRAY_ERR_OUT_OF_RANGE};
use hurray_ffi::{KvArrayRef, KvValueRef};
use jni::objects::{JClass, JObject, JPrimitiveArray, JString, JValue, ReleaseMode, TypeArray};
use jni::sys::{jint, jlong, jobject};
use jni::JNIEnv;

use crate::convert::string;
use crate::errors::{run, Fail, R};
use crate::file::{no_key, reader};

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

/// The KV value of `key` in the reader behind `r`.
fn lookup<'a>(env: &mut JNIEnv, r: jlong, key: &JString) -> R<KvValueRef<'a>> {
    let key = string(env, key)?;
    let r = reader(r)?;
    let i = r.kv_find(&key).ok_or_else(|| no_key(&key))?;
    Ok(r.kv_value(i)?)
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
        let name = string(env, &key)?;
        let rd = reader(r)?;
        let i = rd.kv_find(&name).ok_or_else(|| no_key(&name))?;
        // A whole value: the same bound on a huge array as every binding.
        rd.kv_check_whole(i)?;
        let v = rd.kv_value(i)?;
        let obj: JObject = match v {
            KvValueRef::String(s) => env.new_string(s)?.into(),
            KvValueRef::Int64(v) => boxed(
                env,
                "java/lang/Long",
                "(J)Ljava/lang/Long;",
                JValue::Long(v),
            )?,
            KvValueRef::UInt64(v) => big_integer(env, v)?,
            KvValueRef::Float64(v) => boxed(
                env,
                "java/lang/Double",
                "(D)Ljava/lang/Double;",
                JValue::Double(v),
            )?,
            KvValueRef::Bool(v) => boxed(
                env,
                "java/lang/Boolean",
                "(Z)Ljava/lang/Boolean;",
                JValue::Bool(u8::from(v)),
            )?,
            KvValueRef::Bytes(b) => env.byte_array_from_slice(b)?.into(),
            KvValueRef::Array(a) => kv_array(env, &a, 0, a.len())?,
        };
        Ok(obj.into_raw())
    })
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
        let n = match lookup(env, r, &key)? {
            KvValueRef::String(s) => s.len(),
            KvValueRef::Bytes(b) => b.len(),
            KvValueRef::Array(a) => a.len(),
            _ => 1,
        };
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
        let v = lookup(env, r, &key)?;
        let KvValueRef::Array(a) = v else {
            return Err(
                FfiError::new(HURRAY_ERR_NOT_APPLICABLE, "the KV value is not an array").into(),
            );
        };
        let n = a.len();
        let window = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(count).ok())
            .filter(|&(from, count)| from.checked_add(count).is_some_and(|end| end <= n));
        let Some((from, count)) = window else {
            return Err(FfiError::new(
                HURRAY_ERR_OUT_OF_RANGE,
                format!("the window [{offset}, +{count}) is past the array's {n} elements"),
            )
            .into());
        };
        Ok(kv_array(env, &a, from, count)?.into_raw())
    })
}

/// Fills the new Java array `a` with `value(k)` for `k` in `[from, from + count)`,
/// written straight into the Java array's memory (no second copy of the window).
fn fill<'l, T: TypeArray>(
    env: &mut JNIEnv<'l>,
    a: JPrimitiveArray<'l, T>,
    (from, count): (usize, usize),
    value: impl Fn(usize) -> T,
) -> R<JObject<'l>> {
    if count > 0 {
        // SAFETY: no JNI call is made while the elements are held (only `value`,
        // which reads the mapped file).
        let mut e = unsafe { env.get_array_elements_critical(&a, ReleaseMode::CopyBack)? };
        for (k, slot) in e.iter_mut().enumerate() {
            *slot = value(from + k);
        }
    }
    Ok(a.into())
}

/// Elements `[from, from + count)` of the array `a` (the window checked by the
/// caller) as a Java array.
fn kv_array<'l>(
    env: &mut JNIEnv<'l>,
    a: &KvArrayRef<'_>,
    from: usize,
    count: usize,
) -> R<JObject<'l>> {
    let len = i32::try_from(count).map_err(|_| Fail::Arg("KV array too long for Java".into()))?;
    let w = (from, count);
    let get = |k: usize| a.get(k).unwrap_or(KvValueRef::Bool(false));
    Ok(match a.element_tag() {
        2 => {
            let arr = env.new_long_array(len)?;
            fill(env, arr, w, |k| match get(k) {
                KvValueRef::Int64(x) => x,
                _ => 0,
            })?
        }
        4 => {
            let arr = env.new_double_array(len)?;
            fill(env, arr, w, |k| match get(k) {
                KvValueRef::Float64(x) => x,
                _ => 0.0,
            })?
        }
        5 => {
            let arr = env.new_boolean_array(len)?;
            fill(env, arr, w, |k| match get(k) {
                KvValueRef::Bool(x) => u8::from(x),
                _ => 0,
            })?
        }
        3 => {
            let arr = env.new_object_array(len, "java/math/BigInteger", JObject::null())?;
            for k in 0..count {
                let KvValueRef::UInt64(x) = get(from + k) else {
                    continue;
                };
                let b = big_integer(env, x)?;
                env.set_object_array_element(&arr, k as i32, &b)?;
                env.delete_local_ref(b)?;
            }
            arr.into()
        }
        1 => {
            let arr = env.new_object_array(len, "java/lang/String", JObject::null())?;
            // One "" for every empty element: an array of them costs a reference each.
            let empty = env.new_string("")?;
            for k in 0..count {
                let KvValueRef::String(s) = get(from + k) else {
                    continue;
                };
                if s.is_empty() {
                    env.set_object_array_element(&arr, k as i32, &empty)?;
                    continue;
                }
                let js = env.new_string(s)?;
                env.set_object_array_element(&arr, k as i32, &js)?;
                env.delete_local_ref(js)?;
            }
            env.delete_local_ref(empty)?;
            arr.into()
        }
        6 => {
            let arr = env.new_object_array(len, "[B", JObject::null())?;
            for k in 0..count {
                let KvValueRef::Bytes(b) = get(from + k) else {
                    continue;
                };
                let jb = env.byte_array_from_slice(b)?;
                env.set_object_array_element(&arr, k as i32, &jb)?;
                env.delete_local_ref(jb)?;
            }
            arr.into()
        }
        et => {
            return Err(FfiError::new(
                HURRAY_ERR_NOT_APPLICABLE,
                format!("KV array element type {et} is not known to the Java binding"),
            )
            .into())
        }
    })
}
