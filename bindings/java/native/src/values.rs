//! Element values Java has no type for: float16 and bfloat16 widened to `float` (and
//! narrowed back) with the `half` crate, and sub-byte types (bool, int4, ...) unpacked
//! to one byte per element and packed back with `hurray_core::packing`
//! (element-types.md §5). Every function copies: the result is a fresh Java array or
//! the caller's direct buffer.

use half::{bf16, f16};
use hurray_core::packing::{self, PackingError};
use hurray_core::ElementType;
use hurray_ffi::{
    FfiError, HURRAY_ERR_FORMAT, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_ERR_NOT_APPLICABLE,
};
use jni::objects::{JByteArray, JByteBuffer, JClass, JFloatArray};
use jni::sys::{jboolean, jint, jlong, jobject};
use jni::JNIEnv;

use crate::convert::bytes;
use crate::errors::{run, Fail, R};

/// The bytes of a direct buffer (its whole capacity), borrowed for one native call.
///
/// The returned slice is valid while `b` is reachable, which the caller's local
/// reference guarantees for the duration of the entry point.
fn direct_bytes<'a>(env: &mut JNIEnv, b: &JByteBuffer) -> R<&'a mut [u8]> {
    if b.is_null() {
        return Err(Fail::Arg("a buffer is null".into()));
    }
    let p = env
        .get_direct_buffer_address(b)
        .map_err(|_| Fail::Arg("the buffer is not a direct ByteBuffer".into()))?;
    let n = env.get_direct_buffer_capacity(b)?;
    if n == 0 {
        return Ok(&mut []);
    }
    // SAFETY: a direct ByteBuffer's memory is `n` bytes at `p` that Java does not move
    // and does not free while the buffer is reachable; the caller's local reference
    // keeps it reachable until the entry point returns, and the slice does not escape
    // it. Java code may write the same memory concurrently: the binding's views are
    // documented as unsynchronised memory, like any direct buffer.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// The element type behind a Java tag.
fn element_type(tag: jint) -> R<ElementType> {
    u8::try_from(tag)
        .ok()
        .and_then(ElementType::from_tag)
        .ok_or_else(|| Fail::Arg(format!("element type tag {tag} is not a built-in type")))
}

/// A packing refusal as a library error: a type without sub-byte packing does not
/// apply; short data is a format error; an element too wide is the caller's argument.
fn packing_error(e: PackingError) -> Fail {
    let status = match e {
        PackingError::NotSubByte(_) => HURRAY_ERR_NOT_APPLICABLE,
        PackingError::Short { .. } => HURRAY_ERR_FORMAT,
        _ => HURRAY_ERR_INVALID_ARGUMENT,
    };
    FfiError::new(status, e.to_string()).into()
}

/// `Native.halfToFloats(ByteBuffer src, int count, boolean bfloat16)`: the first
/// `count` little-endian float16 (or bfloat16) values of a direct buffer, widened
/// exactly to a new `float[]` (NaN stays NaN, quiet).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_halfToFloats<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    src: JByteBuffer<'l>,
    count: jint,
    bfloat16: jboolean,
) -> jobject {
    run(&mut env, std::ptr::null_mut(), |env| {
        let n = usize::try_from(count).map_err(|_| Fail::Arg(format!("count {count}")))?;
        let bytes = direct_bytes(env, &src)?;
        if bytes.len() / 2 < n {
            return Err(Fail::Arg(format!(
                "{n} 16-bit values need {} bytes, the buffer has {}",
                2 * n,
                bytes.len()
            )));
        }
        let words = bytes[..2 * n]
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]));
        let out: Vec<f32> = if bfloat16 != 0 {
            words.map(|w| bf16::from_bits(w).to_f32()).collect()
        } else {
            words.map(|w| f16::from_bits(w).to_f32()).collect()
        };
        let a = env.new_float_array(count)?;
        env.set_float_array_region(&a, 0, &out)?;
        Ok(a.into_raw())
    })
}

/// `Native.floatsToHalf(float[] src, ByteBuffer dst, boolean bfloat16)`: narrows every
/// value to float16 (or bfloat16), rounding to nearest even (overflow to infinity,
/// NaN kept quiet), written little-endian from the start of direct buffer `dst`,
/// which holds at least `2 * src.length` bytes.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_floatsToHalf<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    src: JFloatArray<'l>,
    dst: JByteBuffer<'l>,
    bfloat16: jboolean,
) {
    run(&mut env, (), |env| {
        if src.is_null() {
            return Err(Fail::Arg("the float array is null".into()));
        }
        let n = env.get_array_length(&src)? as usize;
        let mut values = vec![0f32; n];
        env.get_float_array_region(&src, 0, &mut values)?;
        let out = direct_bytes(env, &dst)?;
        if out.len() / 2 < n {
            return Err(Fail::Arg(format!(
                "{n} 16-bit values need {} bytes, the buffer has {}",
                2 * n,
                out.len()
            )));
        }
        for (v, o) in values.iter().zip(out.chunks_exact_mut(2)) {
            let w = if bfloat16 != 0 {
                bf16::from_f32(*v).to_bits()
            } else {
                f16::from_f32(*v).to_bits()
            };
            o.copy_from_slice(&w.to_le_bytes());
        }
        Ok(())
    })
}

/// `Native.unpack(int typeTag, ByteBuffer packed, long count)`: the first `count`
/// elements of a sub-byte buffer (direct, from its start), one byte each: bool 0/1,
/// int4/int2 sign-extended, other codes as they are (`hurray_core::packing::unpack`).
/// `HurrayException` `NOT_APPLICABLE` for a type without sub-byte packing,
/// `FormatException` when the buffer holds fewer than `count` elements.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_unpack<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    tag: jint,
    packed: JByteBuffer<'l>,
    count: jlong,
) -> jobject {
    run(&mut env, std::ptr::null_mut(), |env| {
        let ty = element_type(tag)?;
        let count = u64::try_from(count).map_err(|_| Fail::Arg(format!("count {count}")))?;
        if count > i32::MAX as u64 {
            return Err(Fail::Unsupported(format!(
                "{count} elements: a Java array holds at most 2^31-1"
            )));
        }
        let src = direct_bytes(env, &packed)?;
        let out = packing::unpack(ty, src, count).map_err(packing_error)?;
        Ok(env.byte_array_from_slice(&out)?.into_raw())
    })
}

/// `Native.pack(int typeTag, byte[] elements)`: one byte per element packed into the
/// type's sub-byte stream (`hurray_core::packing::pack`), padding bits zero.
/// `HurrayException` `INVALID_ARGUMENT` naming the first element that does not fit.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_pack<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    tag: jint,
    elements: JByteArray<'l>,
) -> jobject {
    run(&mut env, std::ptr::null_mut(), |env| {
        let ty = element_type(tag)?;
        let v = bytes(env, &elements)?;
        let out = packing::pack(ty, &v).map_err(packing_error)?;
        Ok(env.byte_array_from_slice(&out)?.into_raw())
    })
}
