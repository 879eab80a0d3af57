//! Tensor buffers: immutable, cheaply clonable byte ranges whose memory is kept
//! alive by a reference-counted owner (an aligned heap allocation, a memory map,
//! or anything a producer hands in), plus the 64-byte-aligned allocation that
//! stream readers fill in place.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// Alignment of every buffer this crate allocates, in bytes (`descriptor.md` §6.1:
/// ≥ 64 for non-empty buffers).
pub const BUFFER_ALIGN: usize = 64;

/// Something that owns bytes and keeps them at a fixed address while it lives.
///
/// Implementors must return the same slice (same address, same length) on every
/// call for as long as the owner is alive: views hand that address across the C ABI.
pub trait BufferOwner: Send + Sync + 'static {
    /// The owned bytes.
    fn bytes(&self) -> &[u8];
}

/// Allocations at least this large come straight from the OS as an anonymous
/// mapping, advised to use transparent huge pages.
const ANON_THRESHOLD: usize = 1 << 20;

/// A zero-initialised allocation of `len` bytes whose first byte is 64-byte aligned.
///
/// Stream readers allocate one per buffer and read payload bytes straight into
/// [`as_mut_slice`](Self::as_mut_slice): each byte is written once.
///
/// Nothing is written to the memory up front: small buffers come from a zeroed heap
/// allocation (`calloc`) with the aligned start found inside it; buffers of 1 MiB
/// and more are an anonymous private mapping (page-aligned, zero pages from the OS)
/// advised to use transparent huge pages, so filling a large buffer takes 512 times
/// fewer page faults. Either way pages commit physical memory only once touched.
pub struct AlignedBuf {
    mem: Mem,
    len: usize,
}

enum Mem {
    Heap { bytes: Vec<u8>, start: usize },
    Anon(memmap2::MmapMut),
}

impl AlignedBuf {
    /// Allocates `len` zero bytes, 64-byte aligned. Returns `None` if the allocation
    /// size overflows or the system refuses it (the caller checks `len` against its
    /// limits first).
    pub fn zeroed(len: usize) -> Option<AlignedBuf> {
        let total = len.checked_add(BUFFER_ALIGN - 1)?;
        if isize::try_from(total).is_err() {
            return None;
        }
        if len >= ANON_THRESHOLD {
            let map = memmap2::MmapMut::map_anon(len).ok()?;
            // Advice only: without transparent huge pages the mapping still works.
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            return Some(AlignedBuf {
                mem: Mem::Anon(map),
                len,
            });
        }
        let mut probe = Vec::<u8>::new();
        probe.try_reserve_exact(total).ok()?;
        drop(probe);
        // `vec![0; n]` is a zeroed allocation (calloc): no memset for fresh pages.
        let bytes = vec![0u8; total];
        let start = (BUFFER_ALIGN - bytes.as_ptr() as usize % BUFFER_ALIGN) % BUFFER_ALIGN;
        Some(AlignedBuf {
            mem: Mem::Heap { bytes, start },
            len,
        })
    }

    /// Copies `bytes` into a new aligned allocation.
    ///
    /// # Panics
    ///
    /// When the system cannot provide the memory (as `Vec` and `Box` do; the length
    /// of an existing slice cannot overflow the size computation).
    pub fn copy_from(bytes: &[u8]) -> AlignedBuf {
        let mut b = AlignedBuf::zeroed(bytes.len()).unwrap_or_else(|| {
            panic!(
                "out of memory: cannot allocate {} bytes for an aligned copy",
                bytes.len()
            )
        });
        b.as_mut_slice().copy_from_slice(bytes);
        b
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the length is 0.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &self.mem {
            Mem::Heap { bytes, start } => &bytes[*start..*start + self.len],
            Mem::Anon(map) => &map[..self.len],
        }
    }

    /// The bytes, writable (for reading payload into).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match &mut self.mem {
            Mem::Heap { bytes, start } => &mut bytes[*start..*start + self.len],
            Mem::Anon(map) => &mut map[..self.len],
        }
    }
}

impl BufferOwner for AlignedBuf {
    fn bytes(&self) -> &[u8] {
        self.as_slice()
    }
}

impl BufferOwner for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// An immutable view of one tensor buffer: a byte range of a shared owner.
///
/// Cloning is cheap (a reference count); the owner's memory is released when the last
/// `Buffer` that refers to it is dropped. This is how a tensor read from a mapped
/// file keeps the mapping alive after the reader is gone.
#[derive(Clone)]
pub struct Buffer {
    owner: Arc<dyn BufferOwner>,
    range: Range<usize>,
}

impl Buffer {
    /// A buffer over the whole of `owner`.
    pub fn new(owner: Arc<dyn BufferOwner>) -> Buffer {
        let len = owner.bytes().len();
        Buffer {
            owner,
            range: 0..len,
        }
    }

    /// A buffer over `range` of `owner`, or `None` if the range is out of bounds.
    pub fn slice_of(owner: Arc<dyn BufferOwner>, range: Range<usize>) -> Option<Buffer> {
        (range.start <= range.end && range.end <= owner.bytes().len())
            .then_some(Buffer { owner, range })
    }

    /// A buffer owning an aligned allocation.
    pub fn from_aligned(buf: AlignedBuf) -> Buffer {
        Buffer::new(Arc::new(buf))
    }

    /// Copies `bytes` into a new 64-byte-aligned buffer.
    pub fn copy_from(bytes: &[u8]) -> Buffer {
        Buffer::from_aligned(AlignedBuf::copy_from(bytes))
    }

    /// An empty buffer.
    pub fn empty() -> Buffer {
        Buffer::from_aligned(AlignedBuf::zeroed(0).expect("zero-length allocation"))
    }

    /// The bytes (borrowed from the owner).
    pub fn as_slice(&self) -> &[u8] {
        &self.owner.bytes()[self.range.clone()]
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// True when the length is 0.
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// The owner keeping these bytes alive (shared).
    pub fn owner(&self) -> &Arc<dyn BufferOwner> {
        &self.owner
    }
}

impl AsRef<[u8]> for Buffer {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("len", &self.len())
            .field("addr", &self.as_slice().as_ptr())
            .finish()
    }
}

impl PartialEq for Buffer {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_are_aligned_and_sized() {
        for len in [0usize, 1, 63, 64, 65, 4097] {
            let mut b = AlignedBuf::zeroed(len).unwrap();
            assert_eq!(b.len(), len);
            assert_eq!(b.as_slice().as_ptr() as usize % BUFFER_ALIGN, 0);
            b.as_mut_slice().fill(7);
            assert!(b.as_slice().iter().all(|&x| x == 7));
        }
        assert!(AlignedBuf::zeroed(usize::MAX).is_none());
    }

    #[test]
    fn slices_keep_the_owner_alive() {
        let owner: Arc<dyn BufferOwner> = Arc::new(vec![1u8, 2, 3, 4]);
        let b = Buffer::slice_of(owner.clone(), 1..3).unwrap();
        drop(owner);
        assert_eq!(b.as_slice(), &[2, 3]);
        assert!(Buffer::slice_of(b.owner().clone(), 3..5).is_none());
    }
}
