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
    /// At least `len` bytes whose first byte is 64-byte aligned
    /// ([`BUFFER_ALIGN`](crate::BUFFER_ALIGN)), or `None` when the memory cannot be
    /// had. The contents need not be zero: the decoder overwrites every byte it
    /// hands out. The decoder checks the length and the alignment and fails the
    /// stream (`FormatRule::Limit`) on an allocation that misses either.
    fn allocate(&self, len: usize) -> Option<Box<dyn BufferMemory>>;
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
