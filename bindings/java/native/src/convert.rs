//! Small conversions between Java values (arrays, strings) and Rust values.

use std::sync::OnceLock;

use jni::objects::{GlobalRef, JByteArray, JLongArray, JString};
use jni::JNIEnv;

use hurray_ffi::{FfiError, HURRAY_ERR_INVALID_ARGUMENT};

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

/// A Java string as a Rust string; null or a non-`String` object is an argument
/// error. The string's UTF-16 units are read as they are (JNI `GetStringRegion`) and
/// decoded strictly: a lone (unpaired) surrogate, which has no UTF-8 form, is the
/// library's `HURRAY_ERR_INVALID_ARGUMENT` (a `HurrayException`) naming its UTF-16
/// index, never a silent U+FFFD, so two different Java names cannot collide.
pub(crate) fn string(env: &mut JNIEnv, s: &JString) -> R<String> {
    if s.is_null() {
        return Err(Fail::Arg("a string is null".into()));
    }
    let class = string_class(env)?;
    if !env.is_instance_of(s, class)? {
        return Err(Fail::Arg("an argument is not a String".into()));
    }
    let raw = env.get_raw();
    // SAFETY: `raw` is this thread's live JNIEnv (from `env`) and every JNI 1.2+
    // function table has `GetStringLength`/`GetStringRegion`; `s` is a non-null
    // java.lang.String (checked above), a valid local reference for this call.
    let len = unsafe {
        ((**raw)
            .GetStringLength
            .ok_or(jni::errors::Error::JNIEnvMethodNotFound("GetStringLength"))?)(
            raw, s.as_raw()
        )
    };
    let len =
        usize::try_from(len).map_err(|_| Fail::Arg("a string has a negative length".into()))?;
    let mut stack = [0u16; 256];
    let mut heap = Vec::new();
    let units: &mut [u16] = if len <= stack.len() {
        &mut stack[..len]
    } else {
        heap.resize(len, 0);
        &mut heap
    };
    // SAFETY: as above; `units` holds exactly `len` writable u16s and the region
    // 0..len is within the string (its length was just read, and strings are
    // immutable), so `GetStringRegion` writes `len` units and throws nothing.
    unsafe {
        ((**raw)
            .GetStringRegion
            .ok_or(jni::errors::Error::JNIEnvMethodNotFound("GetStringRegion"))?)(
            raw,
            s.as_raw(),
            0,
            len as jni::sys::jsize,
            units.as_mut_ptr(),
        )
    };
    utf16(units).map_err(|(index, unit)| {
        Fail::Status(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!(
                "a string has a lone surrogate U+{unit:04X} at UTF-16 index {index}; \
                 names, keys and string values must be valid Unicode"
            ),
        ))
    })
}

/// UTF-16 units as a Rust string; `Err((index, unit))` names the first lone
/// surrogate (an index in UTF-16 units).
fn utf16(units: &[u16]) -> Result<String, (usize, u16)> {
    let mut out = String::with_capacity(units.len());
    let mut index = 0;
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok(c) => {
                out.push(c);
                index += c.len_utf16();
            }
            Err(e) => return Err((index, e.unpaired_surrogate())),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::utf16;

    #[test]
    fn lone_surrogates_are_refused_with_their_index() {
        let ok: Vec<u16> = "a\0\u{e9}\u{1F600}z".encode_utf16().collect();
        assert_eq!(utf16(&ok), Ok("a\0\u{e9}\u{1F600}z".to_string()));
        assert_eq!(utf16(&[0x61, 0xD83D]), Err((1, 0xD83D)));
        assert_eq!(utf16(&[0xDE00, 0x61]), Err((0, 0xDE00)));
        assert_eq!(
            utf16(&[0xD83D, 0xDE00, 0x61, 0xD83D, 0x62]),
            Err((3, 0xD83D))
        );
    }
}
