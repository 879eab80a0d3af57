//! Buffer pools across the C ABI: a `HurrayBufferPool` given to stream decoders
//! (`hurray_stream_decoder_set_pool`) takes back the allocation of every buffer they
//! read once the last tensor holding it is destroyed, and hands it to the next buffer
//! of a fitting size, so a steady flow of tensors is read into memory that is already
//! mapped instead of fresh pages (see hurray-io's `pool` module and `docs/io.md`).

use crate::handle::{self, kind, Handle, Header};
use crate::status::*;
use crate::stream::HurrayStreamDecoder;
use hurray_io::BufferPool;

/// A thread-safe pool of idle 64-byte-aligned allocations, bounded in bytes (opaque
/// in C; own-build only).
///
/// Decoders that use it hold their own reference: destroying the handle while they
/// (or tensors they read) live is allowed; the pool's memory goes away with the last
/// of them.
#[repr(C)]
pub struct HurrayBufferPool {
    header: Header,
    pool: BufferPool,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayBufferPool {
    const KIND: u16 = kind::BUFFER_POOL;
    const NAME: &'static str = "HurrayBufferPool";
    fn header(&self) -> &Header {
        &self.header
    }
}

impl HurrayBufferPool {
    /// A handle to `pool` (shared, not copied).
    pub fn new(pool: BufferPool) -> HurrayBufferPool {
        HurrayBufferPool {
            header: Header::new(kind::BUFFER_POOL, handle::destroy_own::<HurrayBufferPool>),
            pool,
        }
    }

    /// The pool.
    pub fn pool(&self) -> &BufferPool {
        &self.pool
    }

    /// A new pool that keeps at most `max_cached_bytes` bytes (and at most 256) of
    /// idle allocations; 0 keeps none. The face of `hurray_buffer_pool_new`.
    pub fn with_capacity(max_cached_bytes: u64) -> HurrayBufferPool {
        let max = usize::try_from(max_cached_bytes).unwrap_or(usize::MAX);
        HurrayBufferPool::new(BufferPool::new(max))
    }

    /// The pool's counters (allocations reused and made, idle buffers and bytes).
    pub fn stats(&self) -> HurrayBufferPoolStats {
        let s = self.pool.stats();
        HurrayBufferPoolStats {
            reused: s.reused,
            allocated: s.allocated,
            idle_buffers: s.idle_buffers as u64,
            idle_bytes: s.idle_bytes as u64,
        }
    }

    /// Frees every idle allocation now (allocations in use still come back later).
    pub fn clear(&self) {
        self.pool.clear();
    }
}

impl Default for HurrayBufferPool {
    /// A pool that keeps at most 1 GiB (and at most 256) idle allocations: what a
    /// binding's stream reader uses when its caller gave no pool.
    fn default() -> HurrayBufferPool {
        HurrayBufferPool::new(BufferPool::default())
    }
}

impl crate::HurrayStreamDecoder {
    /// Makes the decoder take the allocations of the buffers it reads from `pool`
    /// (`None`: fresh memory from the system, the default), for buffers started
    /// after the call. The decoder keeps its own reference to the pool.
    pub fn set_pool(&mut self, pool: Option<&HurrayBufferPool>) {
        self.decoder().set_pool(pool.map(|p| p.pool.clone()));
    }
}

/// Counters of a buffer pool, written by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HurrayBufferPoolStats {
    /// Requests served by an idle allocation.
    pub reused: u64,
    /// Requests that needed a new allocation from the system.
    pub allocated: u64,
    /// Idle allocations held now.
    pub idle_buffers: u64,
    /// Bytes of idle allocations held now.
    pub idle_bytes: u64,
}

/// Makes a buffer pool that keeps at most `max_cached_bytes` bytes (and at most 256)
/// of idle allocations; 0 keeps none. Idle allocations stay resident (they count in
/// the process's resident memory); when one more does not fit, the oldest are freed.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`).
///
/// Ownership: `*out` owned; destroy with `hurray_buffer_pool_destroy`.
///
/// # Safety
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_pool_new(
    max_cached_bytes: u64,
    out: *mut *mut HurrayBufferPool,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        let p = HurrayBufferPool::with_capacity(max_cached_bytes);
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(p)) }
    })
}

/// Writes the pool's counters to `*out`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a pool of this copy of the library).
///
/// Ownership: `*out` written by value; the pool is only read.
///
/// # Safety
/// `pool` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_pool_stats(
    pool: *const HurrayBufferPool,
    out: *mut HurrayBufferPoolStats,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let p = unsafe { handle::own(pool, "pool")? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", p.stats()) }
    })
}

/// Frees every idle allocation of the pool now (allocations in use still come back
/// later).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a pool of this copy).
///
/// Ownership: the pool stays owned by the caller.
///
/// # Safety
/// `pool` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_pool_clear(pool: *const HurrayBufferPool) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        unsafe { handle::own(pool, "pool")? }.clear();
        Ok(())
    })
}

/// Destroys the caller's handle to the pool and sets `*pool` to NULL. Decoders and
/// tensors still using the pool keep it alive; its idle memory is freed with the
/// last of them.
///
/// Errors: `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (wrong kind or
/// copy); `HURRAY_ERR_DOUBLE_DESTROY` (debug builds, stale pointer).
///
/// Ownership: the caller's handle is freed; decoders and tensors still using the
/// pool keep it alive.
///
/// # Safety
/// `pool` NULL, or pointing at NULL or a live pool handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_buffer_pool_destroy(
    pool: *mut *mut HurrayBufferPool,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(pool, "pool") })
}

/// Makes the decoder take the allocations of the buffers it reads from `pool` (NULL:
/// fresh memory from the system, the default). Applies to buffers started after the
/// call. The decoder keeps its own reference to the pool.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`decoder`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (a handle of the wrong kind or of another copy of
/// the library).
///
/// Ownership: neither handle changes owner.
///
/// # Safety
/// `decoder` NULL or live; `pool` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_set_pool(
    decoder: *mut HurrayStreamDecoder,
    pool: *const HurrayBufferPool,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { handle::own_mut(decoder, "decoder")? };
        let pool = if pool.is_null() {
            None
        } else {
            // SAFETY: non-null and live per the caller; kind and copy checked.
            Some(unsafe { handle::own(pool, "pool")? })
        };
        d.set_pool(pool);
        Ok(())
    })
}
