//! Descriptors: Java holds the encoded bytes; these decode them (`descriptorInfo`)
//! or make a dense one (`descriptorDense`).

use std::ptr;

use hurray_ffi::descriptor::{
    hurray_descriptor_decode, hurray_descriptor_dense, hurray_descriptor_destroy,
    hurray_descriptor_encode,
};
use hurray_ffi::descriptor_access::{hurray_descriptor_buffer, hurray_descriptor_header};
use hurray_ffi::{HurrayBufferEntry, HurrayDescriptor, HurrayDescriptorHeader};
use jni::objects::{JByteArray, JClass, JLongArray};
use jni::sys::{jbyteArray, jint, jlongArray};
use jni::JNIEnv;

use crate::convert::{bytes, longs, new_longs};
use crate::descriptor_access::pack;
use crate::errors::{ck, run, Fail, R};

/// An owned descriptor handle, destroyed on drop.
pub(crate) struct Desc(pub(crate) *mut HurrayDescriptor);

impl Drop for Desc {
    fn drop(&mut self) {
        // SAFETY: self.0 is NULL or an owned descriptor made by decode/dense/finish.
        unsafe { hurray_descriptor_destroy(&mut self.0) };
    }
}

pub(crate) fn decode(b: &[u8]) -> R<Desc> {
    let mut d = ptr::null_mut();
    // SAFETY: b is valid for b.len() reads; d is writable.
    ck(unsafe { hurray_descriptor_decode(b.as_ptr(), b.len() as u64, &mut d) })?;
    Ok(Desc(d))
}

pub(crate) fn encode(d: *const HurrayDescriptor) -> R<Vec<u8>> {
    let mut n = 0u64;
    // SAFETY: d is a live descriptor; a NULL buffer asks for the length only.
    ck(unsafe { hurray_descriptor_encode(d, ptr::null_mut(), 0, &mut n) })?;
    let mut v = vec![0u8; n as usize];
    // SAFETY: v holds n writable bytes.
    ck(unsafe { hurray_descriptor_encode(d, v.as_mut_ptr(), n, &mut n) })?;
    v.truncate(n as usize);
    Ok(v)
}

pub(crate) fn header(d: *const HurrayDescriptor) -> R<HurrayDescriptorHeader> {
    let mut h = HurrayDescriptorHeader::default();
    // SAFETY: d is a live descriptor; h is writable.
    ck(unsafe { hurray_descriptor_header(d, &mut h) })?;
    Ok(h)
}

pub(crate) fn entry(d: *const HurrayDescriptor, i: u32) -> R<HurrayBufferEntry> {
    let mut e = HurrayBufferEntry::default();
    // SAFETY: d is a live descriptor; e is writable.
    ck(unsafe { hurray_descriptor_buffer(d, i, &mut e) })?;
    Ok(e)
}

/// `Native.descriptorInfo(byte[])`: decodes and validates the bytes, then packs them
/// ([`pack`]).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_descriptorInfo<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    b: JByteArray<'l>,
) -> jlongArray {
    run(&mut env, ptr::null_mut(), |env| {
        let b = bytes(env, &b)?;
        let d = decode(&b)?;
        // SAFETY: `d` owns a live descriptor of this build (just decoded); the borrow
        // ends before `d` is dropped.
        let packed = pack(unsafe { &*d.0 });
        Ok(new_longs(env, &packed)?.into_raw())
    })
}

/// `Native.descriptorDense(int type, long[] shape)`: `hurray_descriptor_dense`, encoded.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_descriptorDense<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    type_tag: jint,
    shape: JLongArray<'l>,
) -> jbyteArray {
    run(&mut env, ptr::null_mut(), |env| {
        let shape: Vec<u64> = longs(env, &shape)?.iter().map(|&x| x as u64).collect();
        let tag = u8::try_from(type_tag).map_err(|_| Fail::Arg(format!("type tag {type_tag}")))?;
        let mut d = Desc(ptr::null_mut());
        // SAFETY: shape holds rank readable values; d.0 is writable.
        ck(unsafe { hurray_descriptor_dense(tag, shape.len() as u32, shape.as_ptr(), &mut d.0) })?;
        Ok(env.byte_array_from_slice(&encode(d.0)?)?.into_raw())
    })
}
