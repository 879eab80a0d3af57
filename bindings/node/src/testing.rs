//! Test-only natives (feature `test-support`): leak accounting, release counters,
//! an off-thread destroy, buffer addresses, and the external memory V8 counts.

use std::sync::atomic::Ordering;

use napi_derive::napi;

use crate::error::Result;
use crate::release::{RELEASES_CALLED, RELEASES_DONE};
use crate::tensor::Tensor;

/// Live handles this copy of the library holds (`hurray_ffi::live_objects`).
#[napi]
pub fn debug_live_objects() -> i64 {
    hurray_ffi::live_objects()
}

/// C release callbacks invoked so far (any thread).
#[napi]
pub fn debug_releases_called() -> f64 {
    RELEASES_CALLED.load(Ordering::SeqCst) as f64
}

/// Releases completed on the JS thread so far (pins deleted, onRelease run).
#[napi]
pub fn debug_releases_done() -> f64 {
    RELEASES_DONE.load(Ordering::SeqCst) as f64
}

/// Closes `tensor` by dropping its handle on a new OS thread (joined before
/// returning): any release it triggers runs off the JS thread.
#[napi]
pub fn debug_destroy_on_other_thread(tensor: &mut Tensor) -> Result<()> {
    let h = tensor.take()?;
    std::thread::spawn(move || drop(h))
        .join()
        .map_err(|_| crate::error::err("HURRAY_ERR_INTERNAL_PANIC", "the thread panicked"))
}

/// The address of buffer `index` of `tensor`, as a number (for aliasing checks).
#[napi]
pub fn debug_buffer_address(tensor: &Tensor, index: u32) -> Result<f64> {
    let t = tensor.handle()?.tensor()?;
    let b = t
        .buffer_list()
        .buffers()
        .nth(index as usize)
        .ok_or_else(|| {
            crate::error::err("HURRAY_ERR_OUT_OF_RANGE", format!("no buffer {index}"))
        })?;
    Ok(b.raw_parts().0 as usize as f64)
}

/// File mappings alive (`budget::LIVE_MAPPINGS`).
#[napi]
pub fn debug_live_mappings() -> f64 {
    crate::budget::LIVE_MAPPINGS.load(Ordering::SeqCst) as f64
}

/// Bytes of decoded tensors and items alive (`budget::LIVE_DECODED_BYTES`).
#[napi]
pub fn debug_live_decoded_bytes() -> f64 {
    crate::budget::LIVE_DECODED_BYTES.load(Ordering::SeqCst) as f64
}

/// The external memory V8 counts for this thread's isolate, in bytes (what
/// `napi_adjust_external_memory` reports back; it may be negative in between a
/// view's sweep and its finalizer, see `view.rs`).
#[napi]
pub fn debug_external_memory(env: napi::Env) -> f64 {
    // A zero change only reads the total.
    env.adjust_external_memory(0).unwrap_or(0) as f64
}
