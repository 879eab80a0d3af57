//! A pool of 64-byte-aligned allocations that stream decoders reuse.
//!
//! A stream reader hands out a new buffer per tensor. Fresh memory from the OS costs
//! a page fault and a kernel-zeroed page per 4 KiB (or per 2 MiB with transparent
//! huge pages) on first touch, so a reader filling fresh memory runs well below the
//! speed of a copy into memory that is already mapped. A consumer receiving a steady
//! flow of tensors of similar sizes gets that speed back by giving its decoder a
//! [`BufferPool`] ([`StreamDecoder::with_pool`](crate::StreamDecoder::with_pool)):
//! when the last [`Buffer`](crate::Buffer) over a pooled allocation is dropped (on
//! any thread), the allocation goes back to the pool instead of to the OS, and the
//! next buffer of a fitting size is read into it. This is what general-purpose
//! allocators such as jemalloc or mimalloc do for freed memory; the pool does it for
//! the large, aligned allocations that stream readers make directly from the OS.
//!
//! A reused allocation still holds the bytes of the buffer it held before. A decoder
//! hands a buffer out only once every byte of it has been received, so those stale
//! bytes never reach a tensor; they are visible only to the caller's own `read` call,
//! through the slice [`StreamDecoder::demand`](crate::StreamDecoder::demand) returns.

use crate::alloc::{BufferAllocator, BufferMemory};
use crate::buffer::{AlignedBuf, BufferOwner};
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Default for [`BufferPool::default`]: at most 1 GiB of idle allocations cached.
pub const DEFAULT_POOL_BYTES: usize = 1 << 30;

/// Most idle allocations a pool keeps, whatever their sizes.
const MAX_CACHED_BUFFERS: usize = 256;

/// A thread-safe cache of idle 64-byte-aligned allocations, bounded in bytes.
///
/// Cloning is cheap and gives another handle to the same pool. Allocations taken
/// from the pool return to it when the last [`Buffer`](crate::Buffer) over them is
/// dropped, if the pool still exists and has room; otherwise they are freed. An
/// allocation is reused for a request of `n` bytes when its length is between `n`
/// and `2n` (the smallest such one is chosen), so a pool never pins a large
/// allocation under a small buffer.
///
/// Cached allocations keep their physical pages: a pool's idle memory counts in the
/// process's resident size, up to [`max_cached_bytes`](Self::max_cached_bytes).
/// When a returned allocation does not fit, the oldest idle ones are freed first.
#[derive(Clone)]
pub struct BufferPool {
    inner: Arc<Inner>,
}

struct Inner {
    max_bytes: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Idle allocations, oldest first.
    idle: VecDeque<AlignedBuf>,
    /// Sum of the lengths in `idle`, in bytes.
    idle_bytes: usize,
    reused: u64,
    allocated: u64,
}

/// Counters of a [`BufferPool`] (a snapshot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Requests served by an idle allocation.
    pub reused: u64,
    /// Requests that needed a new allocation from the system.
    pub allocated: u64,
    /// Idle allocations held now.
    pub idle_buffers: usize,
    /// Bytes of idle allocations held now.
    pub idle_bytes: usize,
}

impl Default for BufferPool {
    /// A pool caching up to [`DEFAULT_POOL_BYTES`] (1 GiB) of idle allocations.
    fn default() -> Self {
        BufferPool::new(DEFAULT_POOL_BYTES)
    }
}

impl fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferPool")
            .field("max_cached_bytes", &self.inner.max_bytes)
            .field("stats", &self.stats())
            .finish()
    }
}

impl BufferPool {
    /// A pool that keeps at most `max_cached_bytes` bytes of idle allocations
    /// (and at most 256 of them). `0` makes a pool that never keeps anything.
    pub fn new(max_cached_bytes: usize) -> BufferPool {
        BufferPool {
            inner: Arc::new(Inner {
                max_bytes: max_cached_bytes,
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// The bound on idle bytes this pool keeps.
    pub fn max_cached_bytes(&self) -> usize {
        self.inner.max_bytes
    }

    /// A snapshot of the pool's counters.
    pub fn stats(&self) -> PoolStats {
        let s = self.inner.lock();
        PoolStats {
            reused: s.reused,
            allocated: s.allocated,
            idle_buffers: s.idle.len(),
            idle_bytes: s.idle_bytes,
        }
    }

    /// Frees every idle allocation (allocations in use are unaffected and still
    /// return to the pool later).
    pub fn clear(&self) {
        let idle = {
            let mut s = self.inner.lock();
            s.idle_bytes = 0;
            std::mem::take(&mut s.idle)
        };
        drop(idle); // unmapped outside the lock
    }

    /// An allocation of at least `len` bytes (64-byte aligned): an idle one whose
    /// length is in `len..=2 * len`, or a new zeroed one. `None` when a new
    /// allocation is needed and the system refuses it.
    pub(crate) fn take(&self, len: usize) -> Option<PooledBuf> {
        let reused = {
            let mut s = self.inner.lock();
            let most = len.saturating_mul(2);
            let best = s
                .idle
                .iter()
                .enumerate()
                .filter(|(_, b)| b.len() >= len && b.len() <= most)
                .min_by_key(|(_, b)| b.len())
                .map(|(i, _)| i);
            match best.and_then(|i| s.idle.remove(i)) {
                Some(buf) => {
                    s.idle_bytes -= buf.len();
                    s.reused += 1;
                    Some(buf)
                }
                None => {
                    s.allocated += 1;
                    None
                }
            }
        };
        let buf = match reused {
            Some(buf) => buf,
            None => AlignedBuf::zeroed(len)?,
        };
        Some(PooledBuf {
            buf: Some(buf),
            pool: Arc::downgrade(&self.inner),
        })
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is a list and counters, consistent after every statement: a
        // panic elsewhere while the lock was held cannot leave it half-updated.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `buf` back, evicting the oldest idle allocations to make room; returns
    /// what must be freed (outside the lock).
    fn give_back(&self, buf: AlignedBuf) -> Vec<AlignedBuf> {
        if buf.len() > self.max_bytes {
            return vec![buf];
        }
        let mut s = self.lock();
        let mut evicted = Vec::new();
        while s.idle_bytes + buf.len() > self.max_bytes || s.idle.len() >= MAX_CACHED_BUFFERS {
            let Some(old) = s.idle.pop_front() else { break };
            s.idle_bytes -= old.len();
            evicted.push(old);
        }
        s.idle_bytes += buf.len();
        s.idle.push_back(buf);
        evicted
    }
}

/// An allocation that returns to its [`BufferPool`] when dropped, or a plain one
/// (no pool) that is simply freed. A decoder hands it to a tensor behind an owner
/// that shows only the buffer's range, so the rest of a reused allocation (stale
/// bytes of an earlier, larger buffer) is never visible through a tensor.
pub(crate) struct PooledBuf {
    buf: Option<AlignedBuf>,
    pool: Weak<Inner>,
}

impl PooledBuf {
    /// A new zeroed allocation belonging to no pool.
    pub(crate) fn unpooled(len: usize) -> Option<PooledBuf> {
        Some(PooledBuf {
            buf: Some(AlignedBuf::zeroed(len)?),
            pool: Weak::new(),
        })
    }

    fn aligned(&self) -> &AlignedBuf {
        self.buf.as_ref().expect("present until dropped")
    }

    /// Length in bytes (at least what was requested).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.aligned().len()
    }

    /// The whole allocation.
    pub(crate) fn as_slice(&self) -> &[u8] {
        self.aligned().as_slice()
    }

    /// The whole allocation, writable.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        self.buf
            .as_mut()
            .expect("present until dropped")
            .as_mut_slice()
    }
}

impl BufferOwner for PooledBuf {
    fn bytes(&self) -> &[u8] {
        self.as_slice()
    }
}

impl BufferMemory for PooledBuf {
    fn as_slice(&self) -> &[u8] {
        PooledBuf::as_slice(self)
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        PooledBuf::as_mut_slice(self)
    }
}

/// A pool is an allocator: a stream decoder given one
/// ([`StreamDecoder::with_pool`](crate::StreamDecoder::with_pool)) takes its
/// buffers' memory from it.
impl BufferAllocator for BufferPool {
    fn allocate(&self, len: usize, align: usize) -> Option<Box<dyn BufferMemory>> {
        let slack = align.checked_sub(crate::buffer::BUFFER_ALIGN)?;
        let buf = self.take(len.checked_add(slack)?)?;
        Some(Box::new(crate::alloc::window(buf, len, align)?))
    }
}

impl Drop for PooledBuf {
    fn drop(&mut self) {
        if let (Some(buf), Some(pool)) = (self.buf.take(), self.pool.upgrade()) {
            drop(pool.give_back(buf));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Buffer;

    #[test]
    fn a_dropped_buffer_is_reused_for_a_fitting_request() {
        let pool = BufferPool::new(1 << 20);
        let mut a = pool.take(4096).unwrap();
        a.as_mut_slice().fill(7);
        let addr = a.as_slice().as_ptr();
        let b = Buffer::slice_of(Arc::new(a), 0..4096).unwrap();
        assert_eq!(pool.stats().idle_buffers, 0);
        drop(b);
        let s = pool.stats();
        assert_eq!((s.idle_buffers, s.idle_bytes), (1, 4096));
        // Too small to fit, and more than twice the size: both get new memory.
        assert_ne!(pool.take(8192).unwrap().as_slice().as_ptr(), addr);
        assert_ne!(pool.take(1000).unwrap().as_slice().as_ptr(), addr);
        let c = pool.take(3000).unwrap();
        assert_eq!(c.as_slice().as_ptr(), addr);
        assert_eq!(c.len(), 4096);
        assert_eq!(
            c.as_slice()[0],
            7,
            "a reused allocation keeps its old bytes"
        );
        let s = pool.stats();
        assert_eq!((s.reused, s.allocated), (1, 3));
    }

    #[test]
    fn the_byte_bound_evicts_oldest_first_and_refuses_oversize() {
        let pool = BufferPool::new(10_000);
        let first = pool.take(4000).unwrap();
        let first_addr = first.as_slice().as_ptr();
        let second = pool.take(4000).unwrap();
        let third = pool.take(4000).unwrap();
        let third_addr = third.as_slice().as_ptr();
        drop(first);
        drop(second);
        drop(third); // 12 000 > 10 000: the oldest (first) goes
        let s = pool.stats();
        assert_eq!((s.idle_buffers, s.idle_bytes), (2, 8000));
        drop(pool.take(20_000).unwrap()); // larger than the bound: never cached
        assert_eq!(pool.stats().idle_bytes, 8000);
        let again: Vec<PooledBuf> = (0..2).map(|_| pool.take(4000).unwrap()).collect();
        let addrs: Vec<_> = again.iter().map(|b| b.as_slice().as_ptr()).collect();
        assert!(!addrs.contains(&first_addr));
        assert!(addrs.contains(&third_addr));
        pool.clear();
        drop(again);
        assert_eq!(pool.stats().idle_buffers, 2);
        pool.clear();
        assert_eq!(pool.stats().idle_bytes, 0);
    }

    #[test]
    fn buffers_outliving_their_pool_are_freed_and_cross_threads() {
        let pool = BufferPool::new(1 << 20);
        let b = Buffer::slice_of(Arc::new(pool.take(100).unwrap()), 0..100).unwrap();
        let kept = pool.clone();
        std::thread::spawn(move || drop(b)).join().unwrap();
        assert_eq!(kept.stats().idle_buffers, 1, "returned from another thread");
        let b = Buffer::slice_of(Arc::new(pool.take(100).unwrap()), 0..100).unwrap();
        drop((pool, kept));
        drop(b); // the pool is gone: plain free, no panic
        assert!(BufferPool::new(0).take(64).is_some());
        let zero = BufferPool::new(0);
        drop(zero.take(64));
        assert_eq!(zero.stats().idle_buffers, 0);
        assert_eq!(PooledBuf::unpooled(64).unwrap().len(), 64);
    }
}
