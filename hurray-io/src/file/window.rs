//! Heap allocations whose first byte is aligned beyond the crate's 64 bytes: a
//! 64-byte-aligned [`AlignedBuf`] with slack, of which a window is used. In-memory
//! file readers put the file's byte 0 at a `data_buffer_alignment` boundary so every
//! buffer view inherits the file's alignment; copying readers place buffers at
//! their declared alignment.

use crate::buffer::{AlignedBuf, BufferOwner, BUFFER_ALIGN};

/// `len` zero bytes starting at an `align`-aligned address (`align` a power of two).
pub(crate) struct AlignedWindow {
    buf: AlignedBuf,
    start: usize,
    len: usize,
}

impl AlignedWindow {
    /// Allocates; `None` when the size overflows or the allocation fails.
    pub(crate) fn zeroed(len: usize, align: usize) -> Option<AlignedWindow> {
        debug_assert!(align.is_power_of_two());
        let align = align.max(BUFFER_ALIGN);
        let buf = AlignedBuf::zeroed(len.checked_add(align - BUFFER_ALIGN)?)?;
        let addr = buf.as_slice().as_ptr() as usize;
        let start = (align - addr % align) % align;
        Some(AlignedWindow { buf, start, len })
    }

    /// A copy of `bytes` at an `align`-aligned address.
    pub(crate) fn copy_from(bytes: &[u8], align: usize) -> Option<AlignedWindow> {
        let mut w = Self::zeroed(bytes.len(), align)?;
        w.as_mut_slice().copy_from_slice(bytes);
        Some(w)
    }

    /// The window, writable.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.buf.as_mut_slice()[self.start..self.start + self.len]
    }
}

impl BufferOwner for AlignedWindow {
    fn bytes(&self) -> &[u8] {
        &self.buf.as_slice()[self.start..self.start + self.len]
    }
}
