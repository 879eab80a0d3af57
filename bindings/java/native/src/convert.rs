//! Small conversions between Java values (arrays, strings) and Rust values.

use std::sync::OnceLock;

use jni::objects::{GlobalRef, JByteArray, JLongArray, JString};
use jni::JNIEnv;

use crate::errors::{Fail, R};

pub(crate) fn longs(env: &mut JNIEnv, a: &JLongArray) -> R<Vec<i64>> {
    if a.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(a)? as usize;
    let mut v = vec![0i64; n];
    env.get_long_array_region(a, 0, &mut v)?;
    Ok(v)
}

pub(crate) fn new_longs<'l>(env: &mut JNIEnv<'l>, v: &[i64]) -> R<JLongArray<'l>> {
    let a = env.new_long_array(v.len() as i32)?;
    env.set_long_array_region(&a, 0, v)?;
    Ok(a)
}

pub(crate) fn bytes(env: &mut JNIEnv, a: &JByteArray) -> R<Vec<u8>> {
    if a.is_null() {
        return Err(Fail::Arg("a byte array is null".into()));
    }
    Ok(env.convert_byte_array(a)?)
}

/// `java.lang.String`, looked up once (a global reference, kept for the life of the
/// library): `JNIEnv::get_string` looks the class up on every call, which costs more
/// than the rest of a short string's conversion.
fn string_class(env: &mut JNIEnv) -> R<&'static GlobalRef> {
    static CLASS: OnceLock<GlobalRef> = OnceLock::new();
    if let Some(c) = CLASS.get() {
        return Ok(c);
    }
    let class = env.find_class("java/lang/String")?;
    let global = env.new_global_ref(&class)?;
    env.delete_local_ref(class)?;
    Ok(CLASS.get_or_init(|| global))
}

/// A Java string as a Rust string; null or a non-`String` object is an argument error.
pub(crate) fn string(env: &mut JNIEnv, s: &JString) -> R<String> {
    if s.is_null() {
        return Err(Fail::Arg("a string is null".into()));
    }
    let class = string_class(env)?;
    if !env.is_instance_of(s, class)? {
        return Err(Fail::Arg("an argument is not a String".into()));
    }
    // SAFETY: `s` is a non-null java.lang.String (checked above).
    Ok(unsafe { env.get_string_unchecked(s) }?.into())
}
