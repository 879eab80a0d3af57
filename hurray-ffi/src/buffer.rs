//! `HurrayBuffer` (one buffer: caller or library memory plus its release) and
//! `HurrayBufferList` (the builder that collects a tensor's buffers in buffer-table
//! order). `streams-and-transport.md` Part C: ownership, release, sync payloads.

use crate::handle::{self, kind, Handle, Header, FLAG_BORROWED};
use crate::status::*;
use hurray_core::{device_memory_class_valid, DeviceTag, MemoryClass, SyncMode};
use std::ffi::c_void;
use std::sync::Arc;

/// A release callback: called exactly once with the context it was registered
/// with, possibly from any thread. It must not call back into the library with the
/// handle being destroyed. Frozen for ABI 10.
pub type HurrayReleaseFn = Option<unsafe extern "C" fn(context: *mut c_void)>;

/// Runs a release callback exactly once, when dropped. This is the single place
/// foreign memory is handed back to its producer.
pub struct ReleaseGuard {
    f: unsafe extern "C" fn(*mut c_void),
    ctx: *mut c_void,
}

// SAFETY: the C ABI contract requires release callbacks to be callable from any
// thread with their context; the guard only stores and eventually calls them.
unsafe impl Send for ReleaseGuard {}
// SAFETY: the guard exposes no access to ctx through &self.
unsafe impl Sync for ReleaseGuard {}

impl ReleaseGuard {
    /// A guard for `f(ctx)`; `None` when `f` is NULL (nothing to release).
    pub fn new(f: HurrayReleaseFn, ctx: *mut c_void) -> Option<ReleaseGuard> {
        f.map(|f| ReleaseGuard { f, ctx })
    }

    /// A guard that runs a Rust closure (for binding crates).
    pub fn from_fn(f: impl FnOnce() + Send + 'static) -> ReleaseGuard {
        unsafe extern "C" fn call(ctx: *mut c_void) {
            // SAFETY: ctx is the Box<Box<dyn FnOnce>> leaked in from_fn, used once here.
            let f = unsafe { Box::from_raw(ctx.cast::<Box<dyn FnOnce() + Send>>()) };
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        }
        let b: Box<Box<dyn FnOnce() + Send>> = Box::new(Box::new(f));
        ReleaseGuard {
            f: call,
            ctx: Box::into_raw(b).cast(),
        }
    }
}

impl ReleaseGuard {
    /// Gives up the guard without running it: the callback and its context.
    fn into_parts(self) -> (unsafe extern "C" fn(*mut c_void), *mut c_void) {
        let me = std::mem::ManuallyDrop::new(self);
        (me.f, me.ctx)
    }
}

impl Drop for ReleaseGuard {
    fn drop(&mut self) {
        // SAFETY: f and ctx were registered together by the producer, which promised
        // the call is valid once, from any thread; Drop runs at most once.
        unsafe { (self.f)(self.ctx) }
    }
}

/// Host memory handed in by a caller: readable bytes kept alive until `release` runs.
struct ForeignHost {
    ptr: *const u8,
    len: usize,
    _release: Option<ReleaseGuard>,
}

// SAFETY: the producer promised the bytes are immutable and valid until the release
// callback runs (Part C.5), and release is thread-safe; sharing read-only views is sound.
unsafe impl Send for ForeignHost {}
// SAFETY: as above; only shared reads happen.
unsafe impl Sync for ForeignHost {}

impl hurray_io::BufferOwner for ForeignHost {
    fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: ptr is non-null for len > 0 (checked at creation), points at len
        // readable bytes that stay valid and unmodified until the release runs, which
        // cannot happen while self is alive.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// What backs a buffer handle.
#[derive(Clone)]
pub enum Memory {
    /// Host bytes (library-owned, mapped, or caller memory wrapped as an owner).
    Host(hurray_io::Buffer),
    /// Device memory: never dereferenced by the library.
    Device(Arc<DeviceMemory>),
}

/// A device pointer and its release; the library never reads through it.
pub struct DeviceMemory {
    /// The device address (carried, never dereferenced).
    pub ptr: *const c_void,
    /// Size in bytes.
    pub len: u64,
    _release: Option<ReleaseGuard>,
}

// SAFETY: the pointer is only carried, never dereferenced; release is thread-safe.
unsafe impl Send for DeviceMemory {}
// SAFETY: as above.
unsafe impl Sync for DeviceMemory {}

/// Out-of-band synchronisation payload for a buffer whose `sync_mode` is not 0
/// (`streams-and-transport.md` C.4). Frozen for ABI 10.
#[repr(C)]
pub struct HurrayBufferSync {
    /// `SYNC_EVENT`: the producer's event handle (non-NULL).
    pub event: *mut c_void,
    /// `SYNC_EVENT`: releases the event, exactly once (non-NULL).
    pub event_release: HurrayReleaseFn,
    /// Context passed to `event_release`.
    pub event_release_context: *mut c_void,
    /// `SYNC_CONSUMER_STREAM`: the consumer stream the producer synchronised (non-NULL).
    pub stream: *mut c_void,
    /// Device tag of the event or stream; must equal the buffer's `device_tag`.
    pub device_tag: u8,
}

/// One buffer: frozen public fields (any build reads them) and private state.
#[repr(C)]
pub struct HurrayBuffer {
    header: Header,
    /// First byte (NULL allowed when `byte_size` is 0). Device memory is not readable by the host.
    pub data: *const c_void,
    /// Size in bytes.
    pub byte_size: u64,
    /// Alignment guarantee of `data`, bytes.
    pub alignment: u32,
    /// `device_tag` (`descriptor.md` §6.2).
    pub device_tag: u8,
    /// `sync_mode` (§6.3).
    pub sync_mode: u8,
    /// `memory_class` (§6.4).
    pub memory_class: u8,
    _reserved: u8,
    /// `SYNC_EVENT` event handle, else NULL.
    pub sync_event: *mut c_void,
    /// `SYNC_CONSUMER_STREAM` stream handle, else NULL.
    pub consumer_stream: *mut c_void,
    memory: Memory,
    event_release: Option<ReleaseGuard>,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayBuffer {
    const KIND: u16 = kind::BUFFER;
    const NAME: &'static str = "HurrayBuffer";
    fn header(&self) -> &Header {
        &self.header
    }
}

/// Placement metadata of a buffer (mirrors the descriptor's buffer handle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Alignment guarantee in bytes.
    pub alignment: u32,
    /// Device.
    pub device: DeviceTag,
    /// Sync mode.
    pub sync_mode: SyncMode,
    /// Memory class.
    pub memory_class: MemoryClass,
}

impl Placement {
    /// CPU, producer-synced, standard memory, `alignment` bytes.
    pub fn cpu(alignment: u32) -> Placement {
        Placement {
            alignment,
            device: DeviceTag::Cpu,
            sync_mode: SyncMode::ProducerSynced,
            memory_class: MemoryClass::Standard,
        }
    }
}

impl HurrayBuffer {
    /// A buffer over host bytes the library (or a binding) already owns.
    pub fn host(bytes: hurray_io::Buffer, placement: Placement) -> HurrayBuffer {
        let data = if bytes.is_empty() {
            std::ptr::null()
        } else {
            bytes.as_slice().as_ptr().cast()
        };
        HurrayBuffer::build(
            data,
            bytes.len() as u64,
            placement,
            Memory::Host(bytes),
            None,
            None,
        )
    }

    fn build(
        data: *const c_void,
        byte_size: u64,
        p: Placement,
        memory: Memory,
        sync: Option<(*mut c_void, *mut c_void)>,
        event_release: Option<ReleaseGuard>,
    ) -> HurrayBuffer {
        let (ev, st) = sync.unwrap_or((std::ptr::null_mut(), std::ptr::null_mut()));
        HurrayBuffer {
            header: Header::new(kind::BUFFER, handle::destroy_own::<HurrayBuffer>),
            data,
            byte_size,
            alignment: p.alignment,
            device_tag: p.device.tag(),
            sync_mode: p.sync_mode.tag(),
            memory_class: p.memory_class.tag(),
            _reserved: 0,
            sync_event: ev,
            consumer_stream: st,
            memory,
            event_release,
        }
    }

    /// The backing memory (own-build buffers only).
    pub fn memory(&self) -> &Memory {
        &self.memory
    }

    /// The placement recorded in the public fields.
    pub fn placement(&self) -> Placement {
        placement_of(self)
    }
}

fn placement_of(b: &HurrayBuffer) -> Placement {
    Placement {
        alignment: b.alignment,
        device: DeviceTag::from_tag(b.device_tag).unwrap_or(DeviceTag::Cpu),
        sync_mode: SyncMode::from_tag(b.sync_mode).unwrap_or_default(),
        memory_class: MemoryClass::from_tag(b.memory_class).unwrap_or_default(),
    }
}

/// Validates caller-supplied placement and sync payload (Part C.4 cross-checks).
fn check_placement(
    data: *const c_void,
    byte_size: u64,
    alignment: u32,
    device: u8,
    sync: u8,
    class: u8,
    payload: Option<&HurrayBufferSync>,
) -> FfiResult<Placement> {
    let bad = |m: String| FfiError::new(HURRAY_ERR_INVALID_ARGUMENT, m);
    if !alignment.is_power_of_two() || (byte_size > 0 && alignment < 64) {
        return Err(bad(format!("alignment {alignment} must be a power of two, at least 64 for a non-empty buffer (descriptor.md §6.1)")));
    }
    if byte_size > 0 && data.is_null() {
        return Err(FfiError::null("data"));
    }
    if byte_size > 0 && (data as usize) % alignment as usize != 0 {
        return Err(bad(format!(
            "data {data:p} is not aligned to the declared {alignment} bytes"
        )));
    }
    let device = DeviceTag::from_tag(device)
        .ok_or_else(|| bad(format!("device_tag {device:#04x} is reserved or invalid")))?;
    let memory_class = MemoryClass::from_tag(class)
        .ok_or_else(|| bad(format!("memory_class {class:#04x} is reserved or invalid")))?;
    if !device_memory_class_valid(device, memory_class) {
        return Err(bad(format!(
            "memory_class {class:#04x} is not valid on device {}",
            device.name()
        )));
    }
    let sync_mode = SyncMode::from_tag(sync).ok_or_else(|| {
        FfiError::new(
            HURRAY_ERR_INVALID_SYNC_MODE,
            format!("sync_mode {sync:#04x} is reserved or invalid"),
        )
    })?;
    let mismatch = |m: &str| FfiError::new(HURRAY_ERR_SYNC_MODE_MISMATCH, m.to_string());
    if device == DeviceTag::Cpu && sync_mode != SyncMode::ProducerSynced {
        return Err(mismatch(
            "CPU buffers must use sync_mode 0 (SYNC_PRODUCER_SYNCED)",
        ));
    }
    match (sync_mode, payload) {
        (SyncMode::ProducerSynced, None) => {}
        (SyncMode::ProducerSynced, Some(p)) if p.event.is_null() && p.stream.is_null() => {}
        (SyncMode::ProducerSynced, Some(_)) => {
            return Err(mismatch(
                "sync_mode 0 carries neither an event nor a stream",
            ))
        }
        (SyncMode::Event, Some(p)) => {
            if p.event.is_null() || p.event_release.is_none() {
                return Err(mismatch(
                    "SYNC_EVENT needs a non-NULL event and event_release",
                ));
            }
            if p.device_tag != device.tag() || !p.stream.is_null() {
                return Err(mismatch("SYNC_EVENT: the event's device_tag must equal the buffer's, and no stream is given"));
            }
        }
        (SyncMode::ConsumerStream, Some(p)) => {
            if p.stream.is_null() || p.device_tag != device.tag() || !p.event.is_null() {
                return Err(mismatch("SYNC_CONSUMER_STREAM needs a non-NULL stream on the buffer's device and no event"));
            }
        }
        (_, None) => return Err(mismatch("this sync_mode needs a HurrayBufferSync payload")),
    }
    Ok(Placement {
        alignment,
        device,
        sync_mode,
        memory_class,
    })
}

/// Wraps caller memory in a new buffer (the safe core of `hurray_buffer_new`).
///
/// # Safety
/// `data` must point at `byte_size` bytes that stay valid and unmodified until
/// `release(release_context)` runs; `sync` must be NULL or valid for reads.
pub unsafe fn buffer_from_caller(
    data: *const c_void,
    byte_size: u64,
    alignment: u32,
    device_tag: u8,
    sync_mode: u8,
    memory_class: u8,
    sync: *const HurrayBufferSync,
    release: HurrayReleaseFn,
    release_context: *mut c_void,
) -> FfiResult<HurrayBuffer> {
    // SAFETY: sync is NULL or valid per the caller.
    let payload = unsafe { sync.as_ref() };
    let p = check_placement(
        data,
        byte_size,
        alignment,
        device_tag,
        sync_mode,
        memory_class,
        payload,
    )?;
    // A host slice may span at most isize::MAX bytes, and so may any real buffer.
    let len = usize::try_from(byte_size)
        .ok()
        .filter(|&n| isize::try_from(n).is_ok())
        .ok_or_else(|| {
            FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("byte_size {byte_size} exceeds the address space (isize::MAX bytes)"),
            )
        })?;
    let release = ReleaseGuard::new(release, release_context);
    let memory = if p.device == DeviceTag::Cpu {
        Memory::Host(hurray_io::Buffer::new(Arc::new(ForeignHost {
            ptr: data.cast(),
            len,
            _release: release,
        })))
    } else {
        Memory::Device(Arc::new(DeviceMemory {
            ptr: data,
            len: byte_size,
            _release: release,
        }))
    };
    let (sync_ptrs, event_release) = match payload {
        Some(s) if p.sync_mode != SyncMode::ProducerSynced => (
            Some((s.event, s.stream)),
            ReleaseGuard::new(s.event_release, s.event_release_context),
        ),
        _ => (None, None),
    };
    Ok(HurrayBuffer::build(
        data,
        byte_size,
        p,
        memory,
        sync_ptrs,
        event_release,
    ))
}

/// Ordered buffers of one tensor, in buffer-table order. Frozen public fields.
#[repr(C)]
pub struct HurrayBufferList {
    header: Header,
    /// Number of buffers.
    pub len: u64,
    /// `len` buffer pointers (owned by the list).
    pub items: *const *mut HurrayBuffer,
    owned: Vec<*mut HurrayBuffer>,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayBufferList {
    const KIND: u16 = kind::BUFFER_LIST;
    const NAME: &'static str = "HurrayBufferList";
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Default for HurrayBufferList {
    fn default() -> Self {
        HurrayBufferList {
            header: Header::new(kind::BUFFER_LIST, handle::destroy_own::<HurrayBufferList>),
            len: 0,
            items: std::ptr::null(),
            owned: Vec::new(),
        }
    }
}

impl HurrayBufferList {
    /// Marks the list as owned by a tensor: it cannot be destroyed, pushed to or
    /// moved on its own.
    pub(crate) fn set_borrowed(&mut self) {
        self.header.flags |= FLAG_BORROWED;
    }

    /// Appends an own-build buffer; the list owns it from now on.
    pub fn push(&mut self, b: Box<HurrayBuffer>) {
        let mut b = b;
        handle::register(&*b);
        b.header.flags |= FLAG_BORROWED;
        self.owned.push(Box::into_raw(b));
        self.len = self.owned.len() as u64;
        self.items = self.owned.as_ptr();
    }

    /// The buffers (own-build list).
    pub fn buffers(&self) -> impl ExactSizeIterator<Item = &HurrayBuffer> {
        // SAFETY: every pointer in `owned` came from Box::into_raw in push and lives
        // until the list is dropped.
        self.owned.iter().map(|&p| unsafe { &*p })
    }

    /// Removes and returns all buffers (own-build list), leaving it empty.
    pub fn take_all(&mut self) -> Vec<Box<HurrayBuffer>> {
        let v = std::mem::take(&mut self.owned);
        self.len = 0;
        self.items = std::ptr::null();
        v.into_iter()
            .map(|p| {
                // SAFETY: p came from Box::into_raw in push and is removed from the list here.
                let mut b = unsafe { Box::from_raw(p) };
                b.header.flags &= !FLAG_BORROWED;
                b
            })
            .collect()
    }
}

impl Drop for HurrayBufferList {
    fn drop(&mut self) {
        for b in self.take_all() {
            drop(b);
        }
    }
}

/// Public fields of a buffer of any build, read through its frozen prefix.
///
/// # Safety
/// `p` must be NULL or a live `HurrayBuffer` of some build.
pub(crate) unsafe fn buffer_ref<'a>(
    p: *const HurrayBuffer,
    arg: &str,
) -> FfiResult<&'a HurrayBuffer> {
    // SAFETY: forwarded.
    let h = unsafe { handle::header(p.cast(), arg)? };
    handle::check_kind::<HurrayBuffer>(h, arg)?;
    // SAFETY: kind checked; only the frozen public fields are read through this
    // reference when the buffer is foreign (callers check is_own before touching private state).
    Ok(unsafe { &*p })
}

/// A list of any build, read through its frozen prefix.
///
/// # Safety
/// `p` must be NULL or a live `HurrayBufferList` of some build.
pub(crate) unsafe fn list_ref<'a>(
    p: *const HurrayBufferList,
    arg: &str,
) -> FfiResult<&'a HurrayBufferList> {
    // SAFETY: forwarded.
    let h = unsafe { handle::header(p.cast(), arg)? };
    handle::check_kind::<HurrayBufferList>(h, arg)?;
    // SAFETY: kind checked; foreign lists are read through public fields only.
    Ok(unsafe { &*p })
}

/// Item `i` of a list of any build (borrowed).
pub(crate) fn list_get(l: &HurrayBufferList, i: u64) -> FfiResult<*const HurrayBuffer> {
    if i >= l.len {
        return Err(FfiError::new(
            HURRAY_ERR_OUT_OF_RANGE,
            format!("index {i} is past the list's {} buffers", l.len),
        ));
    }
    // SAFETY: items holds len valid pointers (frozen prefix contract of every build).
    Ok(unsafe { *l.items.add(i as usize) })
}

impl HurrayBuffer {
    /// Releases the `SYNC_EVENT` event now (exactly once; later calls do nothing).
    pub fn release_event(&mut self) {
        self.event_release = None;
    }

    /// The buffer's bytes when they are host memory (own-build buffers).
    pub fn host_bytes(&self) -> Option<&hurray_io::Buffer> {
        match &self.memory {
            Memory::Host(b) => Some(b),
            Memory::Device(_) => None,
        }
    }

    /// Raw pointer and length of any buffer's bytes, from the public fields.
    pub fn raw_parts(&self) -> (*const c_void, u64) {
        (self.data, self.byte_size)
    }

    /// The buffer's bytes (`byte_size` of them) when they are host memory; `None` for
    /// device memory, which the host must not read. Borrowed from the buffer.
    pub fn bytes(&self) -> Option<&[u8]> {
        self.host_bytes().map(|b| b.as_slice())
    }

    /// Wraps memory a language runtime holds (a direct `ByteBuffer`, a Node `Buffer`,
    /// a NumPy array) as a buffer without copying: the Rust face of
    /// `hurray_buffer_new` for producer-synced memory. `len` is in bytes; `ptr` may be
    /// NULL only when `len` is 0. CPU memory becomes host bytes the library may read;
    /// other devices' memory is carried, never read. `release` runs exactly once, from
    /// any thread, when the last handle needing the memory is dropped — also when this
    /// call fails (the memory is then handed straight back).
    ///
    /// Errors (`HURRAY_ERR_*`): `NULL_POINTER` (`ptr` NULL with `len` > 0);
    /// `INVALID_ARGUMENT` (alignment not a power of two or below 64 for a non-empty
    /// buffer, `ptr` not aligned to it, memory class invalid on the device, `len`
    /// above `isize::MAX`); `SYNC_MODE_MISMATCH` (a sync mode other than
    /// producer-synced, which needs an event or stream: use `hurray_buffer_new`).
    ///
    /// # Safety
    /// `ptr` must point at `len` bytes that stay valid and unmodified until `release`
    /// runs.
    pub unsafe fn foreign(
        ptr: *const c_void,
        len: u64,
        placement: Placement,
        release: ReleaseGuard,
    ) -> FfiResult<HurrayBuffer> {
        let (f, ctx) = release.into_parts();
        // SAFETY: the caller's promise is exactly buffer_from_caller's; no sync payload.
        unsafe {
            buffer_from_caller(
                ptr,
                len,
                placement.alignment,
                placement.device.tag(),
                placement.sync_mode.tag(),
                placement.memory_class.tag(),
                std::ptr::null(),
                Some(f),
                ctx,
            )
        }
        .inspect_err(|_| {
            // buffer_from_caller leaves the release to its caller on error; run it.
            drop(ReleaseGuard { f, ctx });
        })
    }
}

/// What wrapping foreign memory does when the memory does not meet the declared
/// alignment (ARCHITECTURE decision 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AlignmentPolicy {
    /// Copy the bytes once into library-owned memory aligned as declared (the
    /// default: a plain `Float32Array` or direct `ByteBuffer` just works).
    #[default]
    CopyWhenUnaligned,
    /// Refuse with `HURRAY_ERR_INVALID_ARGUMENT` instead of copying (Python's
    /// `copy=False` manner: zero-copy or an error, never a silent copy).
    Strict,
}

/// How [`HurrayBuffer::wrap_or_copy`] took the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrapped {
    /// The buffer points at the caller's memory (zero-copy).
    ZeroCopy,
    /// The bytes were copied once into aligned library memory; the caller's release
    /// already ran.
    Copied,
}

/// The alignment memory at `addr` actually has: the largest power of two dividing
/// the address, capped at 4096 (a page; NULL counts as 4096). For messages and
/// tests: "the address is 16-byte aligned".
pub fn address_alignment(addr: usize) -> usize {
    if addr == 0 {
        4096
    } else {
        (1usize << addr.trailing_zeros()).min(4096)
    }
}

/// True when `len` bytes at `ptr` meet a declared `alignment` (ARCHITECTURE
/// decision 5): empty memory always does; otherwise the address must be a multiple
/// of `alignment`. An `alignment` that is not a power of two never is met (a
/// descriptor cannot declare one).
pub fn meets_alignment(ptr: *const c_void, len: u64, alignment: u32) -> bool {
    len == 0 || (alignment.is_power_of_two() && (ptr as usize) % alignment as usize == 0)
}

/// The refusal of [`AlignmentPolicy::Strict`] for unaligned memory at `ptr`: an
/// `INVALID_ARGUMENT` error naming the address, its own alignment and the declared
/// one, and how to get aligned memory.
pub fn strict_refusal(ptr: *const c_void, alignment: u32) -> FfiError {
    FfiError::new(
        HURRAY_ERR_INVALID_ARGUMENT,
        format!(
            "data {ptr:p} ({}-byte aligned) is not aligned to the declared {alignment} bytes \
             and the strict option refuses to copy it; allocate the memory with the binding's \
             aligned allocator, or leave strict off to copy it once (ARCHITECTURE decision 5)",
            address_alignment(ptr as usize)
        ),
    )
}

/// `src` copied once into library-owned memory aligned to `alignment`.
///
/// Errors: `INVALID_ARGUMENT` when `alignment` is above what a copy can promise (64
/// bytes below 1 MiB, the page size from 1 MiB); `LIMIT` when the copy cannot be
/// allocated.
fn aligned_copy(src: &[u8], alignment: u32) -> FfiResult<hurray_io::Buffer> {
    let len = src.len();
    let Some(mut copy) = hurray_io::AlignedBuf::zeroed(len) else {
        return Err(FfiError::new(
            HURRAY_ERR_LIMIT,
            format!("cannot allocate {len} bytes for an aligned copy"),
        ));
    };
    if !meets_alignment(copy.as_slice().as_ptr().cast(), len as u64, alignment) {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!(
                "an aligned copy of {len} bytes cannot promise the declared {alignment}-byte \
                 alignment; declare 64 or supply memory aligned to {alignment}"
            ),
        ));
    }
    copy.as_mut_slice().copy_from_slice(src);
    Ok(hurray_io::Buffer::from_aligned(copy))
}

impl HurrayBuffer {
    /// Wraps memory a language runtime holds, zero-copy when it meets
    /// `placement.alignment`, otherwise (under [`AlignmentPolicy::CopyWhenUnaligned`])
    /// copying its `len` bytes once into library-owned memory that does, so a tensor
    /// never declares more alignment than its memory has (ARCHITECTURE decision 5).
    /// After a copy, `release` runs before this returns: the caller's memory is no
    /// longer needed. Only CPU memory is ever copied. [`align_host`] is the same rule
    /// for bytes a binding already holds as a `hurray_io::Buffer`.
    ///
    /// Errors (`HURRAY_ERR_*`): those of [`HurrayBuffer::foreign`]; `INVALID_ARGUMENT`
    /// when the memory is unaligned and the policy is `Strict` (the message says how to
    /// get aligned memory: [`strict_refusal`]), when unaligned memory is not on the CPU
    /// (it cannot be copied here), or when `placement.alignment` is above what a copy
    /// can promise (64 bytes below 1 MiB, the page size from 1 MiB); `LIMIT` when the
    /// copy cannot be allocated. `release` runs on every error path too.
    ///
    /// # Safety
    /// `ptr` must point at `len` readable bytes that stay valid and unmodified until
    /// `release` runs.
    pub unsafe fn wrap_or_copy(
        ptr: *const c_void,
        len: u64,
        placement: Placement,
        release: ReleaseGuard,
        policy: AlignmentPolicy,
    ) -> FfiResult<(HurrayBuffer, Wrapped)> {
        let align = placement.alignment;
        if ptr.is_null() || !align.is_power_of_two() || meets_alignment(ptr, len, align) {
            // Aligned (or an argument foreign() refuses with its own message).
            // SAFETY: the caller's promise is foreign()'s.
            let b = unsafe { HurrayBuffer::foreign(ptr, len, placement, release) }?;
            return Ok((b, Wrapped::ZeroCopy));
        }
        // On every error path below `release` is dropped (and so runs) on return.
        let bad = |m: String| Err(FfiError::new(HURRAY_ERR_INVALID_ARGUMENT, m));
        if policy == AlignmentPolicy::Strict {
            return Err(strict_refusal(ptr, align));
        }
        if placement.device != DeviceTag::Cpu {
            return bad(format!(
                "data {ptr:p} on device {} is not aligned to the declared {align} bytes, \
                 and device memory cannot be copied here",
                placement.device.name()
            ));
        }
        let Ok(n) = usize::try_from(len) else {
            return bad(format!(
                "length {len} does not fit this platform's address space"
            ));
        };
        if isize::try_from(n).is_err() {
            return bad(format!("length {len} is above isize::MAX"));
        }
        // SAFETY: the caller promises `len` readable bytes at `ptr` until release runs,
        // and release runs only after this copy (when `release` is dropped below).
        let copy = aligned_copy(
            unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), n) },
            align,
        )?;
        drop(release);
        Ok((HurrayBuffer::host(copy, placement), Wrapped::Copied))
    }
}

/// ARCHITECTURE decision 5 for host bytes a binding already holds as a
/// `hurray_io::Buffer` (a view of a NumPy array, of a DLPack producer's memory):
/// `bytes` itself when it meets `alignment` ([`Wrapped::ZeroCopy`]), otherwise,
/// under [`AlignmentPolicy::CopyWhenUnaligned`], an owned copy aligned to
/// `alignment` ([`Wrapped::Copied`]; `bytes`, and with it the producer's memory, is
/// dropped). The binding then builds its tensor over the result with
/// [`HurrayBuffer::host`] and declares `alignment`, which the memory now meets.
///
/// Errors (`HURRAY_ERR_*`): `INVALID_ARGUMENT` when the bytes are unaligned and the
/// policy is `Strict` ([`strict_refusal`]'s message: bindings whose language has its
/// own error for a refused copy map this case by the policy they passed), or when
/// `alignment` is not a power of two or above what a copy can promise (64 bytes
/// below 1 MiB, the page size from 1 MiB); `LIMIT` when the copy cannot be
/// allocated.
pub fn align_host(
    bytes: hurray_io::Buffer,
    alignment: u32,
    policy: AlignmentPolicy,
) -> FfiResult<(hurray_io::Buffer, Wrapped)> {
    let ptr: *const c_void = bytes.as_slice().as_ptr().cast();
    if meets_alignment(ptr, bytes.len() as u64, alignment) {
        return Ok((bytes, Wrapped::ZeroCopy));
    }
    if !alignment.is_power_of_two() {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("alignment {alignment} is not a power of two (descriptor.md §6.1)"),
        ));
    }
    if policy == AlignmentPolicy::Strict {
        return Err(strict_refusal(ptr, alignment));
    }
    let copy = aligned_copy(bytes.as_slice(), alignment)?;
    Ok((copy, Wrapped::Copied))
}

// ---------------------------------------------------------------- C exports

/// Wraps caller memory as a buffer.
///
/// `data` points at `byte_size` bytes aligned to `alignment` (a power of two, ≥ 64
/// when non-empty; NULL allowed when `byte_size` is 0). `device_tag`, `sync_mode` and
/// `memory_class` are the descriptor byte values. When `sync_mode` is 1
/// (`SYNC_EVENT`) or 2 (`SYNC_CONSUMER_STREAM`), `sync` carries the event or stream
/// (`streams-and-transport.md` C.4); otherwise it is NULL. `release(release_context)`
/// runs exactly once, from any thread, when the last handle needing the memory is
/// destroyed; NULL `release` means the memory outlives the library's use of it.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`, or `data` with `byte_size` > 0);
/// `HURRAY_ERR_INVALID_ARGUMENT` (alignment, misaligned `data`, device or memory
/// class values or pair); `HURRAY_ERR_INVALID_SYNC_MODE` (reserved `sync_mode`);
/// `HURRAY_ERR_SYNC_MODE_MISMATCH` (payload does not match `sync_mode`). On error
/// `release` is not called and the caller keeps its memory.
///
/// Ownership: `*out` owned; destroy with `hurray_buffer_destroy` or move it into a
/// list with `hurray_buffer_list_push`.
///
/// # Safety
/// `data` must stay valid and unmodified until `release` runs; `sync` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_new(
    data: *const c_void,
    byte_size: u64,
    alignment: u32,
    device_tag: u8,
    sync_mode: u8,
    memory_class: u8,
    sync: *const HurrayBufferSync,
    release: HurrayReleaseFn,
    release_context: *mut c_void,
    out: *mut *mut HurrayBuffer,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded caller contract.
        let b = unsafe {
            buffer_from_caller(
                data,
                byte_size,
                alignment,
                device_tag,
                sync_mode,
                memory_class,
                sync,
                release,
                release_context,
            )?
        };
        // SAFETY: out checked non-null.
        unsafe { put(out, "out", handle::into_raw(b)) }
    })
}

/// Destroys a buffer that was not moved into a list and nulls `*buffer`; its release
/// runs if nothing else holds the memory. NULL and `*buffer == NULL` are no-ops.
///
/// Errors: `HURRAY_ERR_INVALID_ARGUMENT` for a buffer owned by a list or tensor;
/// `HURRAY_ERR_DOUBLE_DESTROY` (debug builds) for a stale pointer.
///
/// Ownership: the handle is freed; its memory is released when nothing else holds it.
///
/// # Safety
/// `buffer` must be NULL or point at NULL or a live buffer handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_destroy(buffer: *mut *mut HurrayBuffer) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(buffer, "buffer") })
}

/// The buffer's first byte (`*out_data`, NULL allowed for an empty buffer) and size in
/// bytes. Works on buffers of any copy of the library.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_ABI_VERSION`.
/// Ownership: `*out_data` borrowed, valid while the buffer (or its tensor) lives.
///
/// # Safety
/// `buffer` must be NULL or a live buffer handle; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_data(
    buffer: *const HurrayBuffer,
    out_data: *mut *const c_void,
    out_byte_size: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let b = unsafe { buffer_ref(buffer, "buffer")? };
        need(out_data, "out_data")?;
        need(out_byte_size, "out_byte_size")?;
        // SAFETY: both checked non-null.
        unsafe {
            put(out_data, "out_data", b.data)?;
            put(out_byte_size, "out_byte_size", b.byte_size)
        }
    })
}

/// The buffer's placement: alignment in bytes, device tag, sync mode and memory class
/// (descriptor byte values). Any out-pointer may be NULL to skip it.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`buffer`), `HURRAY_ERR_ABI_VERSION`.
///
/// Ownership: values written by value; nothing to free.
///
/// # Safety
/// `buffer` must be NULL or a live buffer handle; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_placement(
    buffer: *const HurrayBuffer,
    out_alignment: *mut u32,
    out_device_tag: *mut u8,
    out_sync_mode: *mut u8,
    out_memory_class: *mut u8,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let b = unsafe { buffer_ref(buffer, "buffer")? };
        // SAFETY: each out is NULL (skipped) or writable.
        unsafe {
            if let Some(o) = out_alignment.as_mut() {
                *o = b.alignment;
            }
            if let Some(o) = out_device_tag.as_mut() {
                *o = b.device_tag;
            }
            if let Some(o) = out_sync_mode.as_mut() {
                *o = b.sync_mode;
            }
            if let Some(o) = out_memory_class.as_mut() {
                *o = b.memory_class;
            }
        }
        Ok(())
    })
}

/// The sync payload of a buffer: its `SYNC_EVENT` event and its
/// `SYNC_CONSUMER_STREAM` stream (NULL when not applicable).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_ABI_VERSION`.
/// Ownership: both borrowed; release the event with `hurray_buffer_release_event`.
///
/// # Safety
/// `buffer` must be NULL or a live buffer handle; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_sync(
    buffer: *const HurrayBuffer,
    out_event: *mut *mut c_void,
    out_stream: *mut *mut c_void,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let b = unsafe { buffer_ref(buffer, "buffer")? };
        need(out_event, "out_event")?;
        need(out_stream, "out_stream")?;
        // SAFETY: both checked non-null.
        unsafe {
            put(out_event, "out_event", b.sync_event)?;
            put(out_stream, "out_stream", b.consumer_stream)
        }
    })
}

/// Releases a `SYNC_EVENT` buffer's event now, after the consumer issued its stream
/// waits (`streams-and-transport.md` C.4). Exactly once: later calls, and the
/// buffer's destruction, do not release it again. A no-op for other sync modes.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_ABI_VERSION`,
/// `HURRAY_ERR_INVALID_ARGUMENT` (buffer made by another copy of the library).
///
/// Ownership: the event is released; the buffer stays where it was.
///
/// # Safety
/// `buffer` must be NULL or a live buffer handle not used by another thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_release_event(buffer: *mut HurrayBuffer) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let b = unsafe { handle::own_mut(buffer, "buffer")? };
        b.release_event();
        Ok(())
    })
}

/// A new, empty buffer list.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`).
/// Ownership: `*out` owned; destroy with `hurray_buffer_list_destroy`, or move it into
/// a tensor with `hurray_tensor_new`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_list_new(out: *mut *mut HurrayBufferList) -> HurrayStatus {
    // SAFETY: out is NULL (reported) or writable.
    boundary(|| unsafe { put(out, "out", handle::into_raw(HurrayBufferList::default())) })
}

/// Moves `*buffer` to the end of the list and nulls `*buffer`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (the buffer already belongs to a list, or either
/// handle was made by another copy of the library); `HURRAY_ERR_OUT_OF_RANGE` (a
/// 256th buffer: a descriptor holds at most 255). On error nothing moves.
///
/// Ownership: on success `*buffer` moves into the list (borrow it back with
/// `hurray_buffer_list_get`).
///
/// # Safety
/// `list` must be a live list; `buffer` a valid pointer to a live buffer pointer.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_list_push(
    list: *mut HurrayBufferList,
    buffer: *mut *mut HurrayBuffer,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let l = unsafe { handle::owned_mut(list, "list")? };
        if buffer.is_null() {
            return Err(FfiError::null("buffer"));
        }
        // SAFETY: buffer is non-null and points at the caller's pointer slot.
        let b = unsafe { *buffer };
        // SAFETY: forwarded.
        let bh = unsafe { handle::own(b, "*buffer")? };
        if bh.header().flags & FLAG_BORROWED != 0 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "the buffer already belongs to a list or tensor",
            ));
        }
        if l.len >= 255 {
            return Err(FfiError::new(
                HURRAY_ERR_OUT_OF_RANGE,
                "a descriptor holds at most 255 buffers",
            ));
        }
        // SAFETY: own-build, not borrowed: it came from into_raw and the caller owns it.
        let boxed = unsafe { handle::from_raw(b) };
        l.push(boxed);
        // SAFETY: the slot is valid; ownership moved into the list.
        unsafe { *buffer = std::ptr::null_mut() };
        Ok(())
    })
}

/// Number of buffers in a list of any copy of the library.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_ABI_VERSION`.
///
/// Ownership: `*out_len` written by value; nothing to free.
///
/// # Safety
/// `list` NULL or live; `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_list_len(
    list: *const HurrayBufferList,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let l = unsafe { list_ref(list, "list")? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out_len, "out_len", l.len) }
    })
}

/// Borrows buffer `index` of a list of any copy of the library.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_ABI_VERSION`, `HURRAY_ERR_OUT_OF_RANGE`.
/// Ownership: `*out` borrowed, valid until the list (or its tensor) is destroyed.
///
/// # Safety
/// `list` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_list_get(
    list: *const HurrayBufferList,
    index: u64,
    out: *mut *const HurrayBuffer,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let l = unsafe { list_ref(list, "list")? };
        need(out, "out")?;
        let b = list_get(l, index)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", b) }
    })
}

/// Destroys a list that was not moved into a tensor, with its buffers, and nulls
/// `*list`. NULL and `*list == NULL` are no-ops.
///
/// Errors: `HURRAY_ERR_INVALID_ARGUMENT` for a list owned by a tensor.
///
/// Ownership: the list and its buffers are freed.
///
/// # Safety
/// `list` must be NULL or point at NULL or a live list handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_list_destroy(
    list: *mut *mut HurrayBufferList,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(list, "list") })
}
