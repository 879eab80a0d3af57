//! Direct `ByteBuffer`s: views of C memory handed to Java, and Java producer buffers
//! wrapped (without copying) as C buffers whose release drops JNI global references.

use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, Mutex};

use hurray_ffi::{
    AlignmentPolicy, HurrayBuffer, HurrayDescriptor, HurrayTensor, Placement, ReleaseGuard,
};
use jni::objects::{GlobalRef, JByteBuffer, JClass, JObject};
use jni::sys::{jlong, jobject};
use jni::{JNIEnv, JavaVM};

use crate::errors::{run, Fail, R};

/// A direct `ByteBuffer` over `len` bytes at `p`, or null when `len` is 0 (the Java
/// side substitutes an empty buffer: JNI refuses a zero-length direct buffer).
///
/// # Safety
/// `p` must be valid for reads and writes of `len` bytes for as long as Java can
/// reach the buffer (the Java side keeps the owning handle alive until then).
pub(crate) unsafe fn direct<'l>(env: &mut JNIEnv<'l>, p: *const u8, len: u64) -> R<jobject> {
    if len == 0 || p.is_null() {
        return Ok(ptr::null_mut());
    }
    let len = usize::try_from(len).map_err(|_| Fail::Arg("buffer larger than memory".into()))?;
    // SAFETY: forwarded caller contract.
    let b = unsafe { env.new_direct_byte_buffer(p.cast_mut(), len)? };
    Ok(b.into_raw())
}

/// `Native.directAddress(ByteBuffer)`: the address of a direct buffer (tests prove
/// zero-copy with it).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_directAddress(
    mut env: JNIEnv,
    _c: JClass,
    buf: JObject,
) -> jlong {
    run(&mut env, 0, |env| {
        let b = JByteBuffer::from(buf);
        Ok(env.get_direct_buffer_address(&b)? as jlong)
    })
}

/// What a Java producer lends: global references to its direct buffers (which keep
/// the memory alive) and an optional `Runnable` to run once it is all released.
/// Shared by the buffers of one tensor through an `Arc`; each buffer's release
/// drops one count, and the last drop runs [`Producer::drop`], exactly once.
pub(crate) struct Producer {
    pub(crate) vm: JavaVM,
    pub(crate) buffers: Vec<GlobalRef>,
    /// Taken (disarmed) when the construction fails: the callback runs only for a
    /// tensor that was handed to Java.
    pub(crate) on_release: Mutex<Option<GlobalRef>>,
}

impl Drop for Producer {
    fn drop(&mut self) {
        // May run on any thread (a Cleaner thread, a native thread): attach if needed
        // (the guard detaches only what it attached), run the callback, then delete
        // the global references while attached.
        if let Ok(mut env) = self.vm.attach_current_thread() {
            let callback = self.on_release.get_mut().ok().and_then(Option::take);
            if let Some(r) = callback {
                let _ = env.call_method(r.as_obj(), "run", "()V", &[]);
                if env.exception_check().unwrap_or(false) {
                    let _ = env.exception_describe();
                    let _ = env.exception_clear();
                }
            }
            self.buffers.clear();
        }
    }
}

/// Wraps each region as a buffer with the placement of its buffer-table entry, and
/// makes the tensor (ARCHITECTURE decision 5): a region that meets the entry's
/// alignment is wrapped without copying (one `Arc<Producer>` count each, dropped by
/// the buffer's release); one that does not is copied once into aligned memory
/// (its count is dropped at once), unless `policy` is [`AlignmentPolicy::Strict`],
/// which refuses it (`HURRAY_ERR_INVALID_ARGUMENT`, naming the buffer and the
/// alignment). On error every count taken so far is dropped again.
pub(crate) fn wrap_regions(
    d: HurrayDescriptor,
    regions: &[(*mut u8, usize)],
    producer: &Arc<Producer>,
    policy: AlignmentPolicy,
) -> R<HurrayTensor> {
    let mut bufs = Vec::with_capacity(regions.len());
    for (i, &(addr, cap)) in regions.iter().enumerate() {
        let placement = d
            .model()
            .buffers
            .get(i)
            .map_or(Placement::cpu(64), |e| Placement {
                alignment: e.alignment,
                device: e.device,
                sync_mode: e.sync_mode,
                memory_class: e.memory_class,
            });
        let data: *const c_void = if cap == 0 { ptr::null() } else { addr.cast() };
        let count = producer.clone();
        let release = ReleaseGuard::from_fn(move || drop(count));
        // SAFETY: data is valid for cap bytes (a direct ByteBuffer's memory, which Java
        // does not move) while the global reference in `producer` keeps the ByteBuffer
        // reachable, and the release drops that count only when the library is done
        // (at once when the bytes were copied).
        let (b, _how) =
            unsafe { HurrayBuffer::wrap_or_copy(data, cap as u64, placement, release, policy) }
                .map_err(|mut e| {
                    e.message = if policy == AlignmentPolicy::Strict {
                        format!(
                            "buffer {i}: {} (in Java: Tensor.allocate, or Copy.IF_NEEDED)",
                            e.message
                        )
                    } else {
                        format!("buffer {i}: {}", e.message)
                    };
                    e
                })?;
        bufs.push(Box::new(b));
    }
    Ok(HurrayTensor::new(d, bufs, None)?)
}
