//! Python references held by Rust memory owners, and their release from any thread.
//!
//! A buffer that views Python memory (a NumPy array, a `bytes`, a DLPack producer)
//! holds a strong reference to the Python object. That reference may be dropped by
//! whatever drops the last Rust owner: the thread running a Python `del`, a worker
//! thread, a foreign consumer of a `__hurray__` capsule, or the interpreter while
//! it shuts down. [`PyRef`] makes every one of those safe:
//!
//! - on a thread that may attach to the interpreter, it attaches (taking the GIL)
//!   and decrements the reference count;
//! - once the interpreter began finalizing (our `atexit` hook ran) or is gone, it
//!   deliberately leaks the reference: the process is exiting and touching the
//!   interpreter from a foreign thread then could hang or abort it.

use pyo3::ffi;
use pyo3::prelude::*;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

static FINALIZING: AtomicBool = AtomicBool::new(false);

/// Called by the `atexit` hook registered at import: from now on releases leak.
#[pyfunction]
pub fn _mark_finalizing() {
    FINALIZING.store(true, Ordering::SeqCst);
}

/// True once the interpreter began finalizing (our `atexit` hook ran): native code
/// on another thread must not attach to it any more (see the module docs).
pub fn finalizing() -> bool {
    FINALIZING.load(Ordering::SeqCst)
}

/// A strong reference to a Python object that may be dropped on any thread.
pub struct PyRef(NonNull<ffi::PyObject>);

// SAFETY: the pointer is only dereferenced while attached to the interpreter
// (`bind`, and `Drop` through `Python::try_attach`); a Python object reference may be
// moved between threads as long as its count is changed with the GIL held.
unsafe impl Send for PyRef {}
// SAFETY: `&PyRef` gives no access to the object without attaching.
unsafe impl Sync for PyRef {}

impl PyRef {
    /// A new strong reference to `obj`.
    pub fn new(obj: &Bound<'_, PyAny>) -> PyRef {
        let p = obj.clone().into_ptr();
        PyRef(NonNull::new(p).expect("a bound object is never NULL"))
    }
}

impl Drop for PyRef {
    fn drop(&mut self) {
        let p = self.0.as_ptr();
        if FINALIZING.load(Ordering::SeqCst) {
            return; // leak on purpose; see the module docs
        }
        // try_attach refuses when the interpreter is not initialised or is shutting
        // down; PyGILState_Ensure underneath is re-entrant, so this is also right on
        // a thread that already holds the GIL (a capsule destructor, a `del`).
        let _ = Python::try_attach(|_py| {
            // SAFETY: attached, and we own one strong reference to p.
            unsafe { ffi::Py_DECREF(p) }
        });
    }
}

/// Host memory owned by a Python object (kept alive by a strong reference).
pub struct PyMemory {
    ptr: *const u8,
    len: usize,
    _keep: Arc<PyRef>,
}

// SAFETY: the bytes stay at a fixed address while `_keep` holds the object alive;
// they are only read through shared slices.
unsafe impl Send for PyMemory {}
// SAFETY: as above.
unsafe impl Sync for PyMemory {}

impl PyMemory {
    /// A view of `len` bytes at `ptr`, valid while `keep` is alive.
    ///
    /// # Safety
    /// `ptr` must point at `len` bytes (or be anything when `len == 0`) that stay
    /// valid and at the same address while the object behind `keep` is alive.
    pub unsafe fn new(ptr: *const u8, len: usize, keep: Arc<PyRef>) -> PyMemory {
        PyMemory {
            ptr,
            len,
            _keep: keep,
        }
    }

    /// A shared buffer over this memory.
    pub fn into_buffer(self) -> hurray_io::Buffer {
        hurray_io::Buffer::new(Arc::new(self))
    }
}

impl hurray_io::BufferOwner for PyMemory {
    fn bytes(&self) -> &[u8] {
        if self.len == 0 || self.ptr.is_null() {
            return &[];
        }
        // SAFETY: see `PyMemory::new`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}
