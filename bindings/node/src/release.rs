//! Caller memory lent to a tensor: a napi reference pins the caller's object, and the
//! C release callback (exactly once, from any thread) sends that reference through a
//! threadsafe function to the JS thread, which deletes it and runs `onRelease`.
//!
//! The release always goes through the threadsafe function, even when it happens on
//! the JS thread: it may happen inside a garbage-collection finalizer, where calling
//! JS is not allowed. So the pin is dropped, and `onRelease` runs, in a later turn of
//! the event loop. The threadsafe function is unreferenced while nothing is queued,
//! so live tensors never keep the process alive; a release queued on the JS thread
//! references it until delivered, so `onRelease` runs before the loop exits. A
//! release queued from another thread cannot reference it (that needs the JS
//! thread): if the process or worker exits first, or at any environment teardown,
//! pending releases are freed without running JS (the references die with the
//! environment).
//!
//! At environment teardown Node destroys the threadsafe function (its mutex
//! included) before it runs the finalizers of the objects still alive, and a
//! finalizer may release a tensor. So each threadsafe function is entered in
//! `LIVE`, and an environment cleanup hook (registered after the function, so it
//! runs before Node's own teardown of it) takes it out: a release that finds its
//! function gone never calls it, and frees the hold without touching its
//! references, which die with the environment.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use napi::sys;

use crate::error::{napi_check, Result};

/// Releases completed on the JS thread (pins deleted, callbacks run); test support
/// reads it.
pub static RELEASES_DONE: AtomicU64 = AtomicU64::new(0);
/// Release callbacks the C library invoked (on any thread); test support reads it.
pub static RELEASES_CALLED: AtomicU64 = AtomicU64::new(0);

/// What one C release callback must undo: a pin on a JS object and/or a JS callback
/// to run, both napi references of `env`.
pub struct Hold {
    pin: sys::napi_ref,
    on_release: sys::napi_ref,
    tsfn: sys::napi_threadsafe_function,
    /// Queued from the JS thread, which referenced the threadsafe function for it.
    counted: bool,
}

/// The release threadsafe functions whose environment is not tearing down (as
/// addresses). A release calls its function only while holding this lock and
/// finding it here; the cleanup hook removes it under the same lock, so no call can
/// race the function's destruction.
static LIVE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Environment cleanup hook of one release threadsafe function (`arg`): from now on
/// releases leave it alone (see the module doc).
unsafe extern "C" fn env_closing(arg: *mut c_void) {
    let tsfn = arg as usize;
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&t| t != tsfn);
    // The hook runs on the environment's own thread: forget its cached function and
    // its count of queued releases.
    TSFN.with(|c| {
        if c.get().1 as usize == tsfn {
            c.set((ptr::null_mut(), ptr::null_mut()));
        }
    });
    PENDING.with(|p| p.set(0));
}

thread_local! {
    /// The release threadsafe function of the environment on this thread.
    static TSFN: Cell<(sys::napi_env, sys::napi_threadsafe_function)> =
        const { Cell::new((ptr::null_mut(), ptr::null_mut())) };
    /// Releases queued on this JS thread and not yet delivered (the threadsafe
    /// function is referenced while this is above zero).
    static PENDING: Cell<usize> = const { Cell::new(0) };
}

/// Runs on the JS thread for each release (or with a NULL env at teardown).
unsafe extern "C" fn call_js(
    env: sys::napi_env,
    _js_callback: sys::napi_value,
    _context: *mut c_void,
    data: *mut c_void,
) {
    if data.is_null() {
        return;
    }
    // SAFETY: `data` is the `Box<Hold>` leaked by `Hold::into_context` and handed to
    // the threadsafe function exactly once by `release`; it is reclaimed only here.
    let hold = unsafe { Box::from_raw(data.cast::<Hold>()) };
    if hold.counted {
        let left = PENDING.with(|p| {
            p.set(p.get().saturating_sub(1));
            p.get()
        });
        if left == 0 && !env.is_null() {
            // SAFETY: on the JS thread of `env`, which owns the threadsafe function.
            unsafe { sys::napi_unref_threadsafe_function(env, hold.tsfn) };
        }
    }
    if !env.is_null() {
        // SAFETY: `env` is the live environment the references were made in (this
        // callback runs on its thread); each reference is deleted exactly once, here.
        unsafe {
            if !hold.pin.is_null() {
                sys::napi_delete_reference(env, hold.pin);
            }
            if !hold.on_release.is_null() {
                let mut f = ptr::null_mut();
                let mut undefined = ptr::null_mut();
                sys::napi_get_reference_value(env, hold.on_release, &mut f);
                sys::napi_get_undefined(env, &mut undefined);
                sys::napi_delete_reference(env, hold.on_release);
                if !f.is_null() {
                    let mut result = ptr::null_mut();
                    let status =
                        sys::napi_call_function(env, undefined, f, 0, ptr::null(), &mut result);
                    if status == sys::Status::napi_pending_exception {
                        // An exception thrown by onRelease must not vanish: report
                        // it like any uncaught exception.
                        let mut exc = ptr::null_mut();
                        sys::napi_get_and_clear_last_exception(env, &mut exc);
                        sys::napi_fatal_exception(env, exc);
                    }
                }
            }
        }
    }
    RELEASES_DONE.fetch_add(1, Ordering::SeqCst);
}

/// The release threadsafe function of `env`, created on first use.
fn tsfn_for(env: sys::napi_env) -> Result<sys::napi_threadsafe_function> {
    let (cached_env, cached) = TSFN.with(Cell::get);
    if cached_env == env && !cached.is_null() {
        return Ok(cached);
    }
    let mut name = ptr::null_mut();
    let mut tsfn = ptr::null_mut();
    // SAFETY: `env` is the current call's environment, on its own thread; the name
    // string is a literal of the given length; a NULL JS function is allowed because
    // `call_js` is given; the threadsafe function is unreferenced so it never keeps
    // the event loop alive.
    unsafe {
        napi_check(
            sys::napi_create_string_utf8(env, c"hurray release".as_ptr(), 14, &mut name),
            "napi_create_string_utf8",
        )?;
        napi_check(
            sys::napi_create_threadsafe_function(
                env,
                ptr::null_mut(),
                ptr::null_mut(),
                name,
                0,
                1,
                ptr::null_mut(),
                None,
                ptr::null_mut(),
                Some(call_js),
                &mut tsfn,
            ),
            "napi_create_threadsafe_function",
        )?;
        napi_check(
            sys::napi_unref_threadsafe_function(env, tsfn),
            "napi_unref_threadsafe_function",
        )?;
        // Registered after the threadsafe function's own teardown hook, so it runs
        // before it (hooks run in reverse order).
        napi_check(
            sys::napi_add_env_cleanup_hook(env, Some(env_closing), tsfn.cast()),
            "napi_add_env_cleanup_hook",
        )?;
    }
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(tsfn as usize);
    TSFN.with(|c| c.set((env, tsfn)));
    Ok(tsfn)
}

impl Hold {
    /// A hold that pins `pin` (any JS value, or NULL) and runs `on_release` (a JS
    /// function, or NULL) when released. Must be called on the JS thread of `env`.
    ///
    /// # Safety
    /// `env` is the current call's environment; `pin` and `on_release` are NULL or
    /// values of it.
    pub unsafe fn new(
        env: sys::napi_env,
        pin: sys::napi_value,
        on_release: sys::napi_value,
    ) -> Result<Box<Hold>> {
        let tsfn = tsfn_for(env)?;
        let mut hold = Box::new(Hold {
            pin: ptr::null_mut(),
            on_release: ptr::null_mut(),
            tsfn,
            counted: false,
        });
        // SAFETY: per this function's contract; a reference with count 1 keeps its
        // value alive until deleted (in `call_js`, or by `Drop` when never handed to
        // the library).
        unsafe {
            if !pin.is_null() {
                napi_check(
                    sys::napi_create_reference(env, pin, 1, &mut hold.pin),
                    "napi_create_reference",
                )?;
            }
            if !on_release.is_null() {
                napi_check(
                    sys::napi_create_reference(env, on_release, 1, &mut hold.on_release),
                    "napi_create_reference",
                )?;
            }
        }
        Ok(hold)
    }

    /// The context pointer for a C release callback ([`release`]): ownership moves to
    /// the library, which calls `release` with it exactly once.
    pub fn into_context(self: Box<Hold>) -> *mut c_void {
        Box::into_raw(self).cast()
    }

    /// Takes back a context the library refused (its constructor failed, so it will
    /// never call `release`), so the hold can be dropped on this thread.
    ///
    /// # Safety
    /// `ctx` came from [`Hold::into_context`] and the library did not take it.
    pub unsafe fn from_context(ctx: *mut c_void) -> Box<Hold> {
        // SAFETY: per this function's contract.
        unsafe { Box::from_raw(ctx.cast()) }
    }

    /// Deletes the references now (JS thread only): a hold the library never took.
    ///
    /// # Safety
    /// On the JS thread of `env`, which made the references.
    pub unsafe fn discard(self, env: sys::napi_env) {
        // SAFETY: per this function's contract; each reference is deleted once.
        unsafe {
            if !self.pin.is_null() {
                sys::napi_delete_reference(env, self.pin);
            }
            if !self.on_release.is_null() {
                sys::napi_delete_reference(env, self.on_release);
            }
        }
    }
}

/// The C release callback (`HurrayReleaseFn`) of every hold: may run on any thread,
/// exactly once per context. Queues the hold for the JS thread.
///
/// # Safety
/// `ctx` is NULL or a context from [`Hold::into_context`], passed once.
pub unsafe extern "C" fn release(ctx: *mut c_void) {
    RELEASES_CALLED.fetch_add(1, Ordering::SeqCst);
    if ctx.is_null() {
        return;
    }
    // SAFETY: `ctx` is a `Hold` from `into_context`, ours until queued below;
    // ownership then passes to `call_js` through the queue.
    let hold = unsafe { &mut *ctx.cast::<Hold>() };
    let tsfn = hold.tsfn;
    // On the JS thread that owns the threadsafe function, keep the loop alive until
    // the release is delivered.
    let (env, here) = TSFN.with(Cell::get);
    if here == tsfn && !env.is_null() {
        hold.counted = true;
        if PENDING.with(|p| {
            p.set(p.get() + 1);
            p.get()
        }) == 1
        {
            // SAFETY: on the JS thread of `env`, which owns the threadsafe function.
            unsafe { sys::napi_ref_threadsafe_function(env, tsfn) };
        }
    }
    let status = {
        let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        if live.contains(&(tsfn as usize)) {
            // SAFETY: the function is in `LIVE`, so its environment's cleanup hook has
            // not run, and it cannot run (and Node cannot destroy the function) while
            // this lock is held; a threadsafe function may be called from any thread.
            unsafe {
                sys::napi_call_threadsafe_function(
                    tsfn,
                    ctx,
                    sys::ThreadsafeFunctionCallMode::nonblocking,
                )
            }
        } else {
            sys::Status::napi_closing
        }
    };
    if status != sys::Status::napi_ok {
        // The environment is closing: its references die with it. Free the hold
        // without touching them.
        if hold.counted {
            PENDING.with(|p| p.set(p.get().saturating_sub(1)));
        }
        // SAFETY: the queue refused `ctx`, so it is still ours, once.
        drop(unsafe { Box::from_raw(ctx.cast::<Hold>()) });
        RELEASES_DONE.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: a Hold is only raw napi handles; the references are touched only on the
// JS thread (`call_js`, `discard`), and `napi_call_threadsafe_function` is callable
// from any thread. The library may run `release` on any thread, so the context must
// be able to cross threads.
unsafe impl Send for Hold {}
