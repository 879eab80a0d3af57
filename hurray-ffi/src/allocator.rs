//! A stream decoder reading into the caller's memory
//! (`hurray_stream_decoder_set_allocator`): the decoder asks the caller for each
//! buffer's memory, reads the payload straight into it, and hands it back through
//! its release callback when the last handle holding the buffer is destroyed. A
//! garbage-collected language can so give out memory its own runtime manages, whose
//! views then keep it alive by themselves.

use crate::buffer::{HurrayReleaseFn, ReleaseGuard};
use crate::handle;
use crate::status::*;
use crate::stream::HurrayStreamDecoder;
use hurray_io::{BufferAllocator, BufferMemory};
use std::ffi::c_void;
use std::sync::Arc;

/// Allocates memory for one buffer of a stream decoder: writes to `*out_data` the
/// address of at least `len` writable bytes, aligned to `alignment` (a power of two
/// from 64 to 2 MiB: the buffer's declared alignment), and to `*out_release`
/// and `*out_release_context` the callback that gives them back (called exactly
/// once, from any thread, when the last handle holding the buffer is destroyed, or
/// when the decoder abandons the buffer; `*out_release` may be left NULL when
/// nothing needs to be done). The contents need not be zeroed. Returns 0 on
/// success; any other value refuses, and the decoder fails with `HURRAY_ERR_LIMIT`.
///
/// `len` follows the decoder's allocation policy: up to `eager_alloc_bytes`
/// (`HurrayStreamLimits`) at once, beyond it by doubling as bytes arrive. If your
/// memory is committed when allocated (a garbage-collected heap), lower
/// `eager_alloc_bytes`, or a short hostile stream can claim that much at once.
///
/// Called during `hurray_stream_decoder_advance`, `_feed` or `_demand`, on the
/// thread making that call; it must not call back into the same decoder.
pub type HurrayAllocFn = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        len: u64,
        alignment: u64,
        out_data: *mut *mut u8,
        out_release: *mut HurrayReleaseFn,
        out_release_context: *mut *mut c_void,
    ) -> i32,
>;

/// The caller's allocation callback and its context.
struct ForeignAllocator {
    f: unsafe extern "C" fn(
        *mut c_void,
        u64,
        u64,
        *mut *mut u8,
        *mut HurrayReleaseFn,
        *mut *mut c_void,
    ) -> i32,
    ctx: *mut c_void,
}

// SAFETY: the callback is only called from calls on the decoder that holds it, and
// a decoder is used by one thread at a time (the C ABI's handle rule); the caller
// keeps `ctx` valid for the thread driving the decoder, as documented on
// `hurray_stream_decoder_set_allocator`.
unsafe impl Send for ForeignAllocator {}
// SAFETY: as above; `&self` is only used to call the callback.
unsafe impl Sync for ForeignAllocator {}

impl BufferAllocator for ForeignAllocator {
    fn allocate(&self, len: usize, align: usize) -> Option<Box<dyn BufferMemory>> {
        let mut data: *mut u8 = std::ptr::null_mut();
        let mut release: HurrayReleaseFn = None;
        let mut release_ctx: *mut c_void = std::ptr::null_mut();
        // SAFETY: the out-pointers are valid locals; the callback's contract is the
        // caller's (HurrayAllocFn).
        let rc = unsafe {
            (self.f)(
                self.ctx,
                len as u64,
                align as u64,
                &mut data,
                &mut release,
                &mut release_ctx,
            )
        };
        // Whatever was handed over is released exactly once, even on refusal.
        let guard = ReleaseGuard::new(release, release_ctx);
        if rc != 0 || data.is_null() {
            return None;
        }
        Some(Box::new(ForeignMemory {
            data,
            len,
            _guard: guard,
        }))
    }
}

/// `len` bytes at `data`, given back by the guard when dropped.
struct ForeignMemory {
    data: *mut u8,
    len: usize,
    _guard: Option<ReleaseGuard>,
}

// SAFETY: the allocator's contract makes the memory valid until the release
// callback runs (from any thread); only the decoder writes, before the buffer is
// shared, and shared access is read-only.
unsafe impl Send for ForeignMemory {}
// SAFETY: as above.
unsafe impl Sync for ForeignMemory {}

impl BufferMemory for ForeignMemory {
    fn as_slice(&self) -> &[u8] {
        // SAFETY: `data` points at `len` bytes valid until the guard runs (contract
        // of HurrayAllocFn); the decoder checked nothing else aliases them mutably.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` is the only access while the
        // decoder fills the buffer (it is handed out only afterwards).
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }
}

/// Makes the decoder ask `alloc` for the memory of each buffer it starts from now on
/// (NULL: fresh memory from the library, the default; this also replaces a pool set
/// with `hurray_stream_decoder_set_pool`). Payload bytes are read straight into that
/// memory, and the tensors the decoder yields point at it. See `HurrayAllocFn`.
///
/// `context` is passed to every call of `alloc` and must stay valid until the
/// decoder is destroyed or given another allocator. A refusal, or a NULL or
/// misaligned allocation, fails the stream with `HURRAY_ERR_LIMIT` (the allocation
/// is released).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`decoder`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a decoder of this copy of the library).
///
/// Ownership: the decoder keeps `alloc` and `context` (it owns neither); each
/// allocation is owned by the tensor holding its buffer, which releases it.
///
/// # Safety
/// `decoder` NULL or live; `alloc`, when not NULL, a function honouring the
/// `HurrayAllocFn` contract with `context`.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_set_allocator(
    decoder: *mut HurrayStreamDecoder,
    alloc: HurrayAllocFn,
    context: *mut c_void,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { handle::own_mut(decoder, "decoder")? };
        let a = alloc
            .map(|f| Arc::new(ForeignAllocator { f, ctx: context }) as Arc<dyn BufferAllocator>);
        d.decoder().set_allocator(a);
        Ok(())
    })
}
