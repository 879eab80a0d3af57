//! Tensors: made over Java's direct buffers, their descriptor and buffer views, and
//! destruction.

use std::ptr;
use std::sync::{Arc, Mutex};

use hurray_ffi::{
    AlignmentPolicy, FfiError, HurrayBuffer, HurrayTensor, HURRAY_ERR_NOT_APPLICABLE,
    HURRAY_ERR_OUT_OF_RANGE,
};
use jni::objects::{JByteArray, JByteBuffer, JClass, JObject, JObjectArray};
use jni::sys::{jboolean, jint, jlong, jobject};
use jni::JNIEnv;

use crate::buffers::{direct, wrap_regions, Producer};
use crate::descriptor::decode;
use crate::descriptor_access::java_descriptor;
use crate::errors::{run, Fail, R};
use crate::handle::{borrow, into_long, take};

/// Borrows the tensor behind a Java handle (see the Java contract in `handle`).
pub(crate) fn tensor_ref<'a>(t: jlong) -> R<&'a HurrayTensor> {
    borrow::<HurrayTensor>(t)
}

/// `Native.tensorNew(byte[] descriptor, ByteBuffer[] buffers, Runnable onRelease,
/// boolean strict)`: a tensor over the caller's direct buffers. Each buffer's whole
/// capacity is used; placement comes from the descriptor's buffer table. A buffer
/// aligned as its entry declares is wrapped without copying; another is copied once
/// into aligned memory, or with `strict` refused (`HurrayException`, status
/// `INVALID_ARGUMENT`): ARCHITECTURE decision 5. Wrapped buffers are held by global
/// references until the last C handle lets go; then `onRelease.run()` (if not null)
/// runs once, on whatever thread that is (at once when every buffer was copied).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    desc: JByteArray<'l>,
    buffers: JObjectArray<'l>,
    on_release: JObject<'l>,
    strict: jboolean,
) -> jlong {
    run(&mut env, 0, |env| {
        let d = decode(env, &desc)?;
        let count = env.get_array_length(&buffers)?;
        let mut globals = Vec::with_capacity(count as usize);
        let mut regions = Vec::with_capacity(count as usize);
        for i in 0..count {
            let o = env.get_object_array_element(&buffers, i)?;
            if o.is_null() {
                return Err(Fail::Arg(format!("buffer {i} is null")));
            }
            let b = JByteBuffer::from(o);
            let addr = env
                .get_direct_buffer_address(&b)
                .map_err(|_| Fail::Arg(format!("buffer {i} is not a direct ByteBuffer")))?;
            let cap = env.get_direct_buffer_capacity(&b)?;
            regions.push((addr, cap));
            globals.push(env.new_global_ref(&b)?);
        }
        let on_release = if on_release.is_null() {
            None
        } else {
            Some(env.new_global_ref(&on_release)?)
        };
        let producer = Arc::new(Producer {
            vm: env.get_java_vm()?,
            buffers: globals,
            on_release: Mutex::new(on_release),
        });
        let policy = if strict != 0 {
            AlignmentPolicy::Strict
        } else {
            AlignmentPolicy::CopyWhenUnaligned
        };
        let made = wrap_regions(d, &regions, &producer, policy);
        if made.is_err() {
            // Everything the C ABI briefly held was dropped inside wrap_regions while
            // `producer` kept a count: disarm the callback before the last count goes.
            if let Ok(mut g) = producer.on_release.lock() {
                g.take();
            }
        }
        drop(producer);
        Ok(into_long(made?))
    })
}

/// `Native.tensorDestroy(long)`: frees an owned tensor (its buffers' releases run
/// when the last view of them goes).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorDestroy(mut env: JNIEnv, _c: JClass, t: jlong) {
    run(&mut env, (), |_| {
        drop(take::<HurrayTensor>(t)?);
        Ok(())
    })
}

/// `Native.tensorDescriptor(long)`: the tensor's descriptor as a Java `Descriptor`
/// ([`java_descriptor`]), read from the descriptor the tensor already holds (decoded
/// and validated when the tensor was made): no decode, no C call.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorDescriptor<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    t: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let t = tensor_ref(t)?;
        Ok(java_descriptor(env, t.descriptor_handle())?.into_raw())
    })
}

/// `Native.tensorBufferCount(long)`: how many buffers the tensor has (its buffer
/// table's length), without building its `Descriptor`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorBufferCount<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    t: jlong,
) -> jint {
    run(&mut env, 0, |_| {
        let t = tensor_ref(t)?;
        // At most 2^16 entries (the buffer table's count is a u16).
        Ok(t.buffer_list().buffers().len() as jint)
    })
}

/// `Native.tensorDescriptorBytes(long)`: the tensor's canonical descriptor bytes (a
/// copy), from which `Descriptor.decode` rebuilds its `Descriptor` once the tensor is
/// gone.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorDescriptorBytes<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    t: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let t = tensor_ref(t)?;
        Ok(env
            .byte_array_from_slice(t.descriptor_handle().bytes())?
            .into_raw())
    })
}

/// Buffer `i` of the tensor behind `t`.
fn buffer_at<'a>(t: jlong, i: jint) -> R<&'a HurrayBuffer> {
    let t = tensor_ref(t)?;
    let list = t.buffer_list();
    Ok(usize::try_from(i)
        .ok()
        .and_then(|i| list.buffers().nth(i))
        .ok_or_else(|| {
            FfiError::new(
                HURRAY_ERR_OUT_OF_RANGE,
                format!("index {i} is past the tensor's {} buffers", list.len),
            )
        })?)
}

/// Address and size in bytes of buffer `i` of the tensor behind `t`.
fn buffer_data(t: jlong, i: jint) -> R<(*const u8, u64)> {
    let (p, n) = buffer_at(t, i)?.raw_parts();
    Ok((p.cast(), n))
}

/// Address and size in bytes of buffer `i` when it is memory the CPU may read;
/// `HURRAY_ERR_NOT_APPLICABLE` for device memory (a buffer wrapped with a CUDA or
/// ROCm placement), which the host must not touch: the rule of every binding (Python
/// refuses its arrays, Go its typed views).
fn host_data(t: jlong, i: jint) -> R<(*const u8, u64)> {
    let b = buffer_at(t, i)?;
    if b.host_bytes().is_none() {
        return Err(FfiError::new(
            HURRAY_ERR_NOT_APPLICABLE,
            format!(
                "buffer {i} is memory of device {}, not of the CPU: no CPU view of it is \
                 given (hand bufferAddress({i}) to that device's API)",
                b.placement().device.name()
            ),
        )
        .into());
    }
    let (p, n) = b.raw_parts();
    Ok((p.cast(), n))
}

/// `Native.tensorBuffer(long, int)`: a direct `ByteBuffer` over buffer `i` (no copy),
/// or null for an empty buffer. The Java side keeps the tensor alive while it is
/// reachable.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorBuffer<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    t: jlong,
    i: jint,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let (p, n) = host_data(t, i)?;
        if n > i32::MAX as u64 {
            return Err(Fail::Unsupported(format!(
                "hurray: buffer {i} is {n} bytes; a ByteBuffer holds at most 2^31-1"
            )));
        }
        // SAFETY: the buffer stays valid until the tensor is destroyed, which the
        // Java side defers until this ByteBuffer is unreachable (Tensor.java). Host
        // buffers of the library are writable (stream: owned allocation; file:
        // private copy-on-write mapping; producer: the producer's own memory).
        unsafe { direct(env, p, n) }
    })
}

/// `Native.tensorBufferAddress(long, int)`: the C pointer of buffer `i`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorBufferAddress(
    mut env: JNIEnv,
    _c: JClass,
    t: jlong,
    i: jint,
) -> jlong {
    run(&mut env, 0, |_| Ok(buffer_data(t, i)?.0 as jlong))
}
