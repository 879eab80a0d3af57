//! Handles cross as `long` (the C pointer); this is the shared body of the
//! `Native.*Destroy(long)` entry points, which hand an owned handle back to C.

use hurray_ffi::HurrayStatus;
use jni::sys::jlong;
use jni::JNIEnv;

use crate::errors::{ck, run};

/// Runs the C destroy function `destroy` on the owned handle `h` (a `T *`) inside
/// [`run`], so a failure becomes a pending Java exception.
///
/// # Safety
/// `h` must be an owned handle of the type `destroy` takes (or 0), handed here
/// exactly once.
pub(crate) unsafe fn destroy<T>(
    env: &mut JNIEnv,
    h: jlong,
    destroy: unsafe extern "C" fn(*mut *mut T) -> HurrayStatus,
) {
    run(env, (), |_| {
        let mut p = h as *mut T;
        // SAFETY: the caller's contract.
        ck(unsafe { destroy(&mut p) })
    })
}
