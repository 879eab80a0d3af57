//! Where a stream decoder gets the memory it reads buffers into.
//!
//! By default a [`StreamDecoder`](crate::StreamDecoder) allocates fresh, zeroed,
//! 64-byte-aligned memory per buffer ([`AlignedBuf`](crate::AlignedBuf)). A
//! [`BufferAllocator`] replaces that: a [`BufferPool`](crate::BufferPool) recycles
//! the memory of dropped tensors, and a language binding can hand out memory its
//! own runtime manages (a garbage-collected language whose views of that memory then
//! keep it alive by themselves).

use crate::buffer::BufferOwner;
use std::ops::Range;

/// A writable allocation a decoder reads one buffer into. Once the buffer is
/// complete the decoder stops writing and hands the allocation to the tensor, which
/// drops it (releasing the memory however the allocator arranged) when its last
/// [`Buffer`](crate::Buffer) goes.
///
/// Implementors must return the same memory (same address, same length) from every
/// call for as long as the value lives, and that memory must stay valid until it is
/// dropped, on any thread.
pub trait BufferMemory: Send + Sync + 'static {
    /// The whole allocation.
    fn as_slice(&self) -> &[u8];
    /// The whole allocation, writable (only the decoder writes, before the buffer is
    /// handed out).
    fn as_mut_slice(&mut self) -> &mut [u8];
}

/// A source of memory for a stream decoder's buffers
/// ([`StreamDecoder::with_allocator`](crate::StreamDecoder::with_allocator)).
///
/// Called from the thread driving the decoder; the memory it returns may be dropped
/// on any thread.
pub trait BufferAllocator: Send + Sync {
    /// At least `len` bytes whose first byte is `align`-aligned (`align` a power of
    /// two from 64, [`BUFFER_ALIGN`](crate::BUFFER_ALIGN), up to 2 MiB,
    /// [`MAX_HONORED_ALIGNMENT`](crate::stream::MAX_HONORED_ALIGNMENT): the
    /// buffer's declared alignment), or `None` to refuse. The contents need not be
    /// zero: the decoder overwrites every byte it hands out. The decoder checks the
    /// length and the alignment and fails the stream (`FormatRule::Limit`) on a
    /// refusal or an allocation that misses either.
    ///
    /// `len` follows the decoder's allocation policy (module docs of
    /// [`StreamDecoder`](crate::StreamDecoder)): up to the eager ceiling at once,
    /// beyond it by doubling as bytes arrive. An allocator whose memory is committed
    /// when allocated (a garbage-collected heap) should be paired with a small eager
    /// ceiling ([`StreamDecoder::with_eager_alloc`](crate::StreamDecoder::with_eager_alloc)),
    /// so that a hostile claim costs memory only as bytes arrive.
    fn allocate(&self, len: usize, align: usize) -> Option<Box<dyn BufferMemory>>;
}

/// The part of a larger allocation starting at `start`, `len` bytes long: how the
/// default memory and a [`BufferPool`](crate::BufferPool) meet an alignment above
/// 64 bytes (slack before the buffer, untouched address space for large ones).
pub(crate) struct Window<M> {
    pub(crate) mem: M,
    pub(crate) start: usize,
    pub(crate) len: usize,
}

impl<M: BufferMemory> BufferMemory for Window<M> {
    fn as_slice(&self) -> &[u8] {
        &self.mem.as_slice()[self.start..self.start + self.len]
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        let (s, l) = (self.start, self.len);
        &mut self.mem.as_mut_slice()[s..s + l]
    }
}

/// `len` bytes at an `align`-aligned address inside `mem` (64-byte aligned, at
/// least `len + align - 64` bytes long), or `None` when `mem` is too short.
pub(crate) fn window<M: BufferMemory>(mem: M, len: usize, align: usize) -> Option<Window<M>> {
    let s = mem.as_slice();
    let addr = s.as_ptr() as usize;
    let start = (align - addr % align) % align;
    (start.checked_add(len)? <= s.len()).then_some(Window { mem, start, len })
}

/// An allocation handed to a tensor: exposes exactly the range the buffer occupies
/// (no alignment slack, no stale tail of a larger reused allocation).
pub(crate) struct Shown {
    pub(crate) mem: Box<dyn BufferMemory>,
    pub(crate) range: Range<usize>,
}

impl BufferOwner for Shown {
    fn bytes(&self) -> &[u8] {
        &self.mem.as_slice()[self.range.clone()]
    }
}
