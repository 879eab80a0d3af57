//! Descriptors: decode Java's bytes (`descriptorDecode`) or make a dense one
//! (`descriptorDense`) through `HurrayDescriptor` and the hurray-core model; Java
//! gets a typed `Descriptor` (`descriptor_access::java_descriptor`).

use std::ptr;
use std::sync::Arc;

use hurray_core::{ElementType, TensorDescriptor};
use hurray_ffi::{
    FfiError, HurrayDescriptor, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_ERR_NULL_POINTER,
};
use jni::objects::{JByteArray, JClass, JLongArray};
use jni::sys::{jint, jobject};
use jni::JNIEnv;

use crate::convert::{bytes, longs};
use crate::descriptor_access::java_descriptor;
use crate::errors::{run, Fail, R};

/// The element type of a Java type tag (a wire byte).
pub(crate) fn element_type(type_tag: jint) -> R<ElementType> {
    let tag = u8::try_from(type_tag).map_err(|_| Fail::Arg(format!("type tag {type_tag}")))?;
    ElementType::from_tag(tag).ok_or_else(|| {
        Fail::from(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("type_tag {tag:#04x} is not an assigned or private element type"),
        ))
    })
}

/// Decodes and validates one encoded descriptor from Java.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` for no bytes (as the C ABI's
/// `hurray_descriptor_decode`); `HURRAY_ERR_DESCRIPTOR` naming the rule and offset.
pub(crate) fn decode(env: &mut JNIEnv, b: &JByteArray) -> R<HurrayDescriptor> {
    let b = bytes(env, b)?;
    if b.is_empty() {
        return Err(
            FfiError::new(HURRAY_ERR_NULL_POINTER, "the descriptor bytes are empty").into(),
        );
    }
    Ok(HurrayDescriptor::decode(&b)?)
}

/// `Native.descriptorDecode(byte[])`: decodes and validates the bytes, as a Java
/// `Descriptor` ([`java_descriptor`]).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_descriptorDecode<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    b: JByteArray<'l>,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let d = decode(env, &b)?;
        Ok(java_descriptor(env, &d)?.into_raw())
    })
}

/// `Native.descriptorDense(int type, long[] shape)`: a row-major CPU descriptor with
/// one buffer of the contiguous size, as a Java `Descriptor`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_descriptorDense<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    type_tag: jint,
    shape: JLongArray<'l>,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let shape: Vec<u64> = longs(env, &shape)?.iter().map(|&x| x as u64).collect();
        let model =
            TensorDescriptor::dense(element_type(type_tag)?, &shape).map_err(FfiError::from)?;
        let d = HurrayDescriptor::new(Arc::new(model))?;
        Ok(java_descriptor(env, &d)?.into_raw())
    })
}
