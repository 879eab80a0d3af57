//! Direct `ByteBuffer`s: views of C memory handed to Java, and Java producer buffers
//! wrapped (without copying) as C buffers whose release drops JNI global references.

use std::ffi::c_void;
use std::panic::catch_unwind;
use std::ptr;
use std::sync::{Arc, Mutex};

use hurray_ffi::buffer::{
    hurray_buffer_destroy, hurray_buffer_list_destroy, hurray_buffer_list_new,
    hurray_buffer_list_push, hurray_buffer_new,
};
use hurray_ffi::tensor::hurray_tensor_new;
use hurray_ffi::{
    HurrayBuffer, HurrayBufferEntry, HurrayBufferList, HurrayTensor, HURRAY_C_ABI_VERSION,
    HURRAY_OK,
};
use jni::objects::{GlobalRef, JByteBuffer, JClass, JObject};
use jni::sys::{jlong, jobject};
use jni::{JNIEnv, JavaVM};

use crate::descriptor::{entry, header, Desc};
use crate::errors::{ck, last_error, run, Fail, R};

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
/// Shared by the buffers of one tensor through an `Arc`; each C release callback
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

/// The C release callback of a Java producer's buffer: drops one `Arc<Producer>`.
unsafe extern "C" fn release_producer(ctx: *mut c_void) {
    let _ = catch_unwind(|| {
        // SAFETY: ctx came from Arc::into_raw in tensorNew, once per buffer, and the
        // C ABI calls each release exactly once.
        drop(unsafe { Arc::from_raw(ctx.cast_const().cast::<Producer>()) });
    });
}

/// An owned buffer list, destroyed on drop unless moved into a tensor.
struct List(*mut HurrayBufferList);

impl Drop for List {
    fn drop(&mut self) {
        // SAFETY: NULL or an owned list (destroying it releases its buffers).
        unsafe { hurray_buffer_list_destroy(&mut self.0) };
    }
}

/// Builds the buffers (one `Arc<Producer>` count each), the list and the tensor.
pub(crate) fn wrap_regions(
    d: &Desc,
    desc: &[u8],
    regions: &[(*mut u8, usize)],
    producer: &Arc<Producer>,
) -> R<jlong> {
    let mut list = List(ptr::null_mut());
    // SAFETY: list.0 is writable.
    ck(unsafe { hurray_buffer_list_new(&mut list.0) })?;
    let h = header(d.0)?;
    for (i, &(addr, cap)) in regions.iter().enumerate() {
        let e = if (i as u32) < h.buffer_count {
            entry(d.0, i as u32)?
        } else {
            HurrayBufferEntry {
                alignment: 64,
                ..HurrayBufferEntry::default()
            }
        };
        let data: *const c_void = if cap == 0 { ptr::null() } else { addr.cast() };
        let ctx = Arc::into_raw(producer.clone()).cast_mut().cast::<c_void>();
        let mut buf: *mut HurrayBuffer = ptr::null_mut();
        // SAFETY: data is valid for cap bytes while the global reference in
        // `producer` keeps the ByteBuffer (and so its memory) reachable; the
        // release drops that count exactly once.
        let s = unsafe {
            hurray_buffer_new(
                data,
                cap as u64,
                e.alignment,
                e.device_tag,
                e.sync_mode,
                e.memory_class,
                ptr::null(),
                Some(release_producer),
                ctx,
                &mut buf,
            )
        };
        if s != HURRAY_OK {
            let err = Fail::Status(s, last_error());
            // SAFETY: on error the release was not called: the count is ours.
            drop(unsafe { Arc::from_raw(ctx.cast_const().cast::<Producer>()) });
            return Err(err);
        }
        // SAFETY: list.0 and buf are live handles of this copy.
        let s = unsafe { hurray_buffer_list_push(list.0, &mut buf) };
        if s != HURRAY_OK {
            let err = Fail::Status(s, last_error());
            // SAFETY: the push failed, so buf is still ours; destroying it runs
            // its release (one count).
            unsafe { hurray_buffer_destroy(&mut buf) };
            return Err(err);
        }
    }
    let mut t: *mut HurrayTensor = ptr::null_mut();
    // SAFETY: desc readable; list.0 live (moves in on success only); t writable.
    ck(unsafe {
        hurray_tensor_new(
            HURRAY_C_ABI_VERSION,
            desc.as_ptr(),
            desc.len() as u64,
            list.0,
            ptr::null_mut(),
            None,
            &mut t,
        )
    })?;
    list.0 = ptr::null_mut(); // moved into the tensor
    Ok(t as jlong)
}
