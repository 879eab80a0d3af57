//! The frozen handle prefix shared by every build of this library, the live-object
//! counter, and the checked casts every export uses (no hand casts in exports).
//!
//! # Cross-build handles
//!
//! Two copies of this library may live in one process (the Python extension links
//! one; a C extension that receives a `HurrayTensor *` from a Python capsule links
//! another). Nothing may depend on them agreeing on Rust's layout of internal types,
//! so every handle starts with [`Header`], a `repr(C)` prefix frozen for ABI version
//! 10, followed by kind-specific `repr(C)` public fields (also frozen) and only then
//! by build-private state:
//!
//! | offset | field | meaning |
//! |---|---|---|
//! | 0 | `u32 abi_version` | `HURRAY_C_ABI_VERSION` of the creating build; readable by any build ever |
//! | 4 | `u16 kind` | which handle type ([`kind`]) |
//! | 6 | `u16 flags` | bit 0: part of a parent (never destroyed on its own) |
//! | 8 | `const void *impl_id` | identity of the creating build (address of a static) |
//! | 16 | `void (*destroy)(void *)` | the creating build's destructor for this handle |
//!
//! A build reading a foreign handle uses only these prefixes: descriptor accessors
//! decode the descriptor's encoded bytes (a stable wire format), buffer accessors read
//! the buffer's public fields, and destroy calls the creator's function pointer,
//! which runs the creator's release machinery.

use crate::status::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI64, Ordering};

/// `HURRAY_C_ABI_VERSION`: a consumer compares it for exact equality before touching
/// anything else. Bumped whenever any exported signature or frozen prefix changes.
pub const HURRAY_C_ABI_VERSION: u32 = 10;

/// Handle kinds stored in [`Header::kind`].
pub mod kind {
    /// `HurrayTensor`.
    pub const TENSOR: u16 = 1;
    /// `HurrayDescriptor`.
    pub const DESCRIPTOR: u16 = 2;
    /// `HurrayBuffer`.
    pub const BUFFER: u16 = 3;
    /// `HurrayBufferList`.
    pub const BUFFER_LIST: u16 = 4;
    /// `HurrayItem`.
    pub const ITEM: u16 = 5;
    /// Retired: was `HurrayDescriptorBuilder` (replaced by
    /// `hurray_descriptor_from_view`). The number is never reused.
    pub const DESCRIPTOR_BUILDER: u16 = 6;
    /// `HurrayStreamDecoder`.
    pub const STREAM_DECODER: u16 = 7;
    /// `HurrayStreamEncoder`.
    pub const STREAM_ENCODER: u16 = 8;
    /// `HurrayFileReader`.
    pub const FILE_READER: u16 = 9;
    /// `HurrayFileWriter`.
    pub const FILE_WRITER: u16 = 10;
    /// `HurrayBufferPool`.
    pub const BUFFER_POOL: u16 = 11;
    /// `HurrayNetClient` (feature `net`).
    pub const NET_CLIENT: u16 = 12;
    /// `HurrayNetConn` (feature `net`).
    pub const NET_CONN: u16 = 13;
}

/// `Header::flags` bit: the handle is owned by a parent (a tensor's descriptor or
/// buffer list, a list's buffers) and must not be destroyed on its own.
pub const FLAG_BORROWED: u16 = 1;

/// The frozen prefix of every handle (ABI 10). See the module docs.
#[repr(C)]
pub struct Header {
    /// ABI version of the creating build.
    pub abi_version: u32,
    /// Handle kind ([`kind`]).
    pub kind: u16,
    /// [`FLAG_BORROWED`] or 0.
    pub flags: u16,
    /// Identity of the creating build.
    pub impl_id: *const c_void,
    /// The creating build's destructor for this handle.
    pub destroy: unsafe extern "C" fn(*mut c_void),
}

// SAFETY: nothing in a header is tied to a thread: `impl_id` is only compared, never
// dereferenced (the address of an immutable static), `destroy` is a plain function
// pointer, and the rest are integers. A handle is then `Send`/`Sync` exactly when its
// own fields are (a file reader is; a tensor, with pointers to its parts, is not).
unsafe impl Send for Header {}
// SAFETY: as above; a header is never written after the handle is made but through
// `&mut`.
unsafe impl Sync for Header {}

static IMPL_ID: u8 = 0;

/// This build's identity: the address of a private static, unique per loaded copy.
pub(crate) fn impl_id() -> *const c_void {
    std::ptr::addr_of!(IMPL_ID).cast()
}

impl Header {
    /// A header for a new own-build handle; counts it as live until dropped.
    pub(crate) fn new(kind: u16, destroy: unsafe extern "C" fn(*mut c_void)) -> Header {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Header {
            abi_version: HURRAY_C_ABI_VERSION,
            kind,
            flags: 0,
            impl_id: impl_id(),
            destroy,
        }
    }

    /// True when this build created the handle (its private state may be used).
    pub fn is_own(&self) -> bool {
        self.impl_id == impl_id()
    }
}

static LIVE: AtomicI64 = AtomicI64::new(0);

/// Live handles of this build: incremented by every handle created, decremented when
/// it is freed. Tests assert it returns to zero.
pub fn live_objects() -> i64 {
    LIVE.load(Ordering::SeqCst)
}

impl Drop for Header {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
        #[cfg(debug_assertions)]
        registry::remove(self as *const Header as usize);
    }
}

mod sealed {
    /// Only this crate's handle types implement [`super::Handle`].
    pub trait Sealed {}
}

macro_rules! sealed {
    ($($t:ty),*) => { $(impl sealed::Sealed for $t {})* };
}

sealed!(
    crate::HurrayTensor,
    crate::HurrayDescriptor,
    crate::HurrayBuffer,
    crate::HurrayBufferList,
    crate::HurrayItem,
    crate::HurrayStreamDecoder,
    crate::HurrayStreamEncoder,
    crate::HurrayFileReader,
    crate::HurrayFileWriter,
    crate::HurrayBufferPool
);
#[cfg(feature = "net")]
sealed!(crate::net::HurrayNetClient, crate::net_conn::HurrayNetConn);

/// A `repr(C)` handle type that starts with a [`Header`]: one of the handle
/// kinds of this crate ([`kind`]). Public so [`crate::raw`] can be generic over it;
/// sealed, so no type outside this crate can claim to be a handle.
///
/// # Safety
/// Implementors must be `#[repr(C)]` with `Header` as their first field.
pub unsafe trait Handle: Sized + sealed::Sealed {
    /// The [`kind`] value stored in the header.
    const KIND: u16;
    /// The C type name, used in error messages.
    const NAME: &'static str;
    /// The frozen prefix.
    fn header(&self) -> &Header;
}

#[cfg(debug_assertions)]
mod registry {
    //! Debug builds remember live own-build handles so a second destroy through a
    //! stale pointer is reported instead of freeing twice.
    use std::collections::HashSet;
    use std::sync::Mutex;
    static LIVE_ADDRS: Mutex<Option<HashSet<usize>>> = Mutex::new(None);
    pub(crate) fn insert(a: usize) {
        LIVE_ADDRS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashSet::new)
            .insert(a);
    }
    pub(crate) fn remove(a: usize) {
        if let Some(s) = LIVE_ADDRS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            s.remove(&a);
        }
    }
    pub(crate) fn contains(a: usize) -> bool {
        LIVE_ADDRS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|s| s.contains(&a))
    }

    // Quarantine: the allocations of the last [`QUARANTINE_LEN`] handles destroyed
    // through `destroy_own` are kept (their contents dropped) instead of freed, so a
    // stale second destroy within that window is recognised by address alone —
    // without reading freed memory, and without false positives: while quarantined,
    // the address cannot be reused by any allocation (another copy's handles included).
    use std::alloc::Layout;
    use std::collections::VecDeque;

    /// Destroyed handles whose memory is held back.
    pub(crate) const QUARANTINE_LEN: usize = 4096;

    struct Quarantine {
        order: VecDeque<(usize, Layout)>,
        set: HashSet<usize>,
    }

    static QUARANTINE: Mutex<Option<Quarantine>> = Mutex::new(None);

    /// Holds back the allocation at `a` (contents already dropped); frees the oldest
    /// one when the window is full.
    pub(crate) fn quarantine(a: usize, layout: Layout) {
        let evicted = {
            let mut g = QUARANTINE.lock().unwrap_or_else(|e| e.into_inner());
            let q = g.get_or_insert_with(|| Quarantine {
                order: VecDeque::new(),
                set: HashSet::new(),
            });
            q.order.push_back((a, layout));
            q.set.insert(a);
            if q.order.len() > QUARANTINE_LEN {
                let old = q.order.pop_front();
                if let Some((o, _)) = old {
                    q.set.remove(&o);
                }
                old
            } else {
                None
            }
        };
        if let Some((o, l)) = evicted {
            // SAFETY: `o` was allocated by the global allocator with layout `l` (a Box of
            // a handle) and its contents were dropped when it entered the quarantine; it
            // leaves the quarantine exactly once, here.
            unsafe { std::alloc::dealloc(o as *mut u8, l) };
        }
    }

    /// Whether `a` is a destroyed handle still in quarantine.
    pub(crate) fn quarantined(a: usize) -> bool {
        QUARANTINE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|q| q.set.contains(&a))
    }
}

/// Moves a handle to the heap at its final address (registered in debug builds so a
/// stale second destroy is detected; the header unregisters itself when dropped).
pub(crate) fn boxed<T: Handle>(h: T) -> Box<T> {
    let b = Box::new(h);
    #[cfg(debug_assertions)]
    registry::insert(&*b as *const T as usize);
    b
}

/// Registers a boxed handle's final address (debug builds), for boxes made elsewhere
/// than [`boxed`] (a binding's `Box::new`) that are moved into a parent: lookups
/// through the parent then find it live. Registering twice is harmless.
pub(crate) fn register<T: Handle>(_b: &T) {
    #[cfg(debug_assertions)]
    registry::insert(_b as *const T as usize);
}

/// Moves a handle to the heap and returns the pointer the caller will own.
pub(crate) fn into_raw<T: Handle>(h: T) -> *mut T {
    Box::into_raw(boxed(h))
}

/// Takes ownership back from a pointer made by [`into_raw`] (own-build only).
///
/// # Safety
/// `p` must come from `into_raw::<T>` of this build and not have been freed.
pub(crate) unsafe fn from_raw<T: Handle>(p: *mut T) -> Box<T> {
    // SAFETY: the caller guarantees p came from Box::into_raw in into_raw::<T>.
    unsafe { Box::from_raw(p) }
}

/// Takes ownership back for a caller that will keep the box ([`crate::raw::take`]).
/// Debug builds move the handle into a fresh box and hold the old allocation in
/// quarantine, so a stale pointer is still recognised as destroyed (handles are
/// plain movable values: no handle points into itself).
///
/// # Safety
/// As [`from_raw`].
pub(crate) unsafe fn take_own<T: Handle>(p: *mut T) -> Box<T> {
    #[cfg(debug_assertions)]
    {
        // SAFETY: p is a live Box<T> allocation of this build (caller); its value is
        // moved out exactly once and the allocation is never read again: it is only
        // freed by the quarantine.
        let v = unsafe { std::ptr::read(p) };
        registry::remove(p as usize);
        registry::quarantine(p as usize, std::alloc::Layout::new::<T>());
        boxed(v)
    }
    #[cfg(not(debug_assertions))]
    // SAFETY: forwarded contract.
    unsafe {
        from_raw(p)
    }
}

/// Reads and checks the header of any handle: non-NULL and the right ABI version.
///
/// # Safety
/// `p` must be NULL or point at a live handle of some build of this library.
pub(crate) unsafe fn header<'a>(p: *const c_void, arg: &str) -> FfiResult<&'a Header> {
    if p.is_null() {
        return Err(FfiError::null(arg));
    }
    #[cfg(debug_assertions)]
    if registry::quarantined(p as usize) {
        return Err(FfiError::new(
            HURRAY_ERR_DOUBLE_DESTROY,
            format!("`{arg}` points at a handle that was already destroyed"),
        ));
    }
    #[cfg(debug_assertions)]
    if std::ptr::eq(unsafe { (*p.cast::<Header>()).impl_id }, impl_id())
        && !registry::contains(p as usize)
    {
        return Err(FfiError::new(
            HURRAY_ERR_DOUBLE_DESTROY,
            format!("`{arg}` points at a handle that was already destroyed"),
        ));
    }
    // SAFETY: p is non-null and, per the caller, points at a handle whose first bytes
    // are a Header (the frozen prefix every build writes).
    let h = unsafe { &*p.cast::<Header>() };
    if h.abi_version != HURRAY_C_ABI_VERSION {
        return Err(FfiError::new(
            HURRAY_ERR_ABI_VERSION,
            format!(
                "`{arg}` has ABI version {}, this library speaks {HURRAY_C_ABI_VERSION}",
                h.abi_version
            ),
        ));
    }
    Ok(h)
}

/// A checked borrow of a handle of kind `T` that this build created.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_ABI_VERSION`,
/// `HURRAY_ERR_INVALID_ARGUMENT` (wrong kind, or made by another copy of the library
/// where this call needs the creator's private state).
///
/// # Safety
/// As [`header`].
pub(crate) unsafe fn own<'a, T: Handle>(p: *const T, arg: &str) -> FfiResult<&'a T> {
    // SAFETY: forwarded contract.
    let h = unsafe { header(p.cast(), arg)? };
    check_kind::<T>(h, arg)?;
    if !h.is_own() {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` was made by another copy of the library; this call needs one made by this copy"),
        ));
    }
    // SAFETY: kind and impl_id say this build created it as a T (repr(C), Header first).
    Ok(unsafe { &*p })
}

/// Mutable variant of [`own`].
///
/// # Safety
/// As [`header`], and no other reference to the handle may be live (handles are used
/// by one thread at a time).
pub(crate) unsafe fn own_mut<'a, T: Handle>(p: *mut T, arg: &str) -> FfiResult<&'a mut T> {
    // SAFETY: forwarded contract.
    unsafe { own::<T>(p, arg)? };
    // SAFETY: checked above; exclusivity is the caller's contract.
    Ok(unsafe { &mut *p })
}

/// Like [`own_mut`], for calls that consume or restructure the handle (moving a
/// list into a tensor, pushing into a list): a handle borrowed from its parent is
/// refused with `HURRAY_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// As [`own_mut`].
pub(crate) unsafe fn owned_mut<'a, T: Handle>(p: *mut T, arg: &str) -> FfiResult<&'a mut T> {
    // SAFETY: forwarded contract.
    let h = unsafe { own_mut::<T>(p, arg)? };
    if h.header().flags & FLAG_BORROWED != 0 {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` is borrowed from its parent (a tensor or item) and cannot be moved or changed"),
        ));
    }
    Ok(h)
}

pub(crate) fn check_kind<T: Handle>(h: &Header, arg: &str) -> FfiResult<()> {
    if h.kind != T::KIND {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` is not a {} (kind {})", T::NAME, h.kind),
        ));
    }
    Ok(())
}

/// Destroys the handle `*pp` of kind `T` (any build) and nulls `*pp`.
/// NULL or `*pp == NULL` is a no-op. Borrowed handles are refused.
///
/// # Safety
/// `pp` must be NULL or a valid pointer to a handle pointer as described in [`header`].
pub(crate) unsafe fn destroy<T: Handle>(pp: *mut *mut T, arg: &str) -> FfiResult<()> {
    if pp.is_null() {
        return Ok(());
    }
    // SAFETY: pp is non-null and points at a caller-owned pointer slot.
    let p = unsafe { *pp };
    if p.is_null() {
        return Ok(());
    }
    // SAFETY: forwarded contract.
    let h = unsafe { header(p.cast(), arg)? };
    check_kind::<T>(h, arg)?;
    if h.flags & FLAG_BORROWED != 0 {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` is borrowed from its parent and cannot be destroyed"),
        ));
    }
    let f = h.destroy;
    // SAFETY: pp is valid for writes; null it before freeing so a panic cannot leave it dangling.
    unsafe { *pp = std::ptr::null_mut() };
    // SAFETY: destroy is the creating build's destructor for exactly this handle.
    unsafe { f(p.cast()) };
    Ok(())
}

/// The destructor stored in own-build headers for `T`.
///
/// # Safety
/// `p` must be a handle of this build created by `into_raw::<T>`.
pub(crate) unsafe extern "C" fn destroy_own<T: Handle>(p: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        #[cfg(debug_assertions)]
        {
            // Debug builds drop the contents but hold the allocation in quarantine, so
            // a stale second destroy is detected without reading freed memory.
            let raw: *mut T = p.cast();
            // SAFETY: the header's destroy pointer is only ever called on handles
            // created as T by into_raw (a Box); the contents are dropped exactly once
            // here and the allocation is freed later by the quarantine, never read.
            unsafe { std::ptr::drop_in_place(raw) };
            registry::quarantine(raw as usize, std::alloc::Layout::new::<T>());
        }
        #[cfg(not(debug_assertions))]
        // SAFETY: the header's destroy pointer is only ever called on handles created as T.
        drop(unsafe { from_raw::<T>(p.cast()) });
    });
}
