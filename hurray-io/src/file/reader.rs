//! [`FileReader`]: random access to a whole file held in memory or memory-mapped.
//! Tensors are zero-copy [`Buffer`] views into the file bytes; each keeps those bytes
//! (the mapping) alive on its own, so the reader may be dropped first.

use super::catalog::{Catalog, FileInfo, ReadOptions};
use super::header::FileHeader;
use super::index::IndexEntry;
use super::kv::{KvEntry, KvValue};
use super::window::AlignedWindow;
use super::{HEADER_LEN, MAX_DATA_ALIGNMENT, MIN_DATA_ALIGNMENT};
use crate::buffer::{Buffer, BufferOwner, BUFFER_ALIGN};
use crate::error::{Error, FormatRule, Result};
use crate::mmap::MappedFile;
use crate::tensor::{Item, Tensor};
use hurray_core::TensorDescriptor;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// A validated file, ready for random access (`file-format.md` §11).
///
/// Opening validates the header, trailer, index (CRC included), KV, every descriptor
/// and the composite structure, but never reads payload bytes; afterwards lookups
/// cannot fail on file content. Tensors handed out are views into the file bytes
/// (owned: each holds a reference to them) and honour every buffer's declared
/// `alignment`; a non-empty buffer declaring more than the file's
/// `data_buffer_alignment` is refused at open with `Limit`, since no placement in
/// the file can promise it. `FileReader` is `Send + Sync`.
///
/// ```
/// use hurray_io::file::{FileReader, FileWriterTo, WriteOptions};
/// use hurray_io::Tensor;
/// use hurray_core::ElementType;
/// let t = Tensor::from_dense(ElementType::Int8, &[3], &[1, 2, 3]).unwrap();
/// let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
/// w.write_tensor("bias", &t).unwrap();
/// let bytes = w.finish().unwrap();
/// let r = FileReader::from_bytes(&bytes).unwrap();
/// assert_eq!(r.tensor("bias").unwrap().buffers()[0].as_slice(), &[1, 2, 3]);
/// ```
pub struct FileReader {
    owner: Arc<dyn BufferOwner>,
    catalog: Catalog,
}

impl std::fmt::Debug for FileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReader")
            .field("info", self.catalog.info())
            .field("tensors", &self.catalog.entries().len())
            .finish()
    }
}

impl FileReader {
    /// Memory-maps the file at `path` (a private, copy-on-write, read-only mapping:
    /// nothing a process does to its views can reach the file) and validates it with
    /// default [`ReadOptions`].
    ///
    /// The file must not be truncated or modified by anyone while mapped: the
    /// operating system would then change or revoke the mapped bytes.
    ///
    /// Errors: [`Error::Io`] when the file cannot be opened or mapped; otherwise see
    /// [`Catalog::parse`].
    pub fn open(path: impl AsRef<Path>) -> Result<FileReader> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// [`open`](Self::open) with explicit options.
    pub fn open_with(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<FileReader> {
        let map = MappedFile::open(path.as_ref())?;
        Self::from_owner(Arc::new(map), opts)
    }

    /// Copies `bytes` into a 64-byte-aligned allocation (so buffers keep the file's
    /// alignment) and validates it with default options.
    ///
    /// Errors: see [`Catalog::parse`].
    pub fn from_bytes(bytes: &[u8]) -> Result<FileReader> {
        Self::from_bytes_with(bytes, &ReadOptions::default())
    }

    /// [`from_bytes`](Self::from_bytes) with explicit options. The copy starts at an
    /// address aligned to the file's `data_buffer_alignment` (read from the header
    /// when valid, else 4096), so buffer views are aligned like the file offsets.
    pub fn from_bytes_with(bytes: &[u8], opts: &ReadOptions) -> Result<FileReader> {
        let align = FileHeader::parse(bytes)
            .map(|h| h.data_buffer_alignment)
            .unwrap_or(MIN_DATA_ALIGNMENT);
        let copy = AlignedWindow::copy_from(bytes, align as usize).ok_or_else(|| {
            Error::format(FormatRule::Limit, 0, "cannot allocate a copy of the file")
        })?;
        Self::from_owner(Arc::new(copy), opts)
    }

    /// Reads a whole file into memory (aligned like [`from_bytes`](Self::from_bytes))
    /// and validates it; tensors are views into that one allocation.
    ///
    /// Errors: [`Error::Io`]; `Limit` when it cannot be held in memory; see
    /// [`Catalog::parse`].
    pub fn read(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<FileReader> {
        let mut f = std::fs::File::open(path)?;
        let len = f.metadata()?.len();
        let mut head = [0u8; HEADER_LEN];
        let n = usize::try_from(len).unwrap_or(usize::MAX).min(HEADER_LEN);
        f.read_exact(&mut head[..n])?;
        let mut w = window_for(len, &head[..n])?;
        let buf = w.as_mut_slice();
        buf[..n].copy_from_slice(&head[..n]);
        f.read_exact(&mut buf[n..])?;
        Self::from_owner(Arc::new(w), opts)
    }

    /// Validates the file held by `owner` (all of its bytes) without copying; tensors
    /// are views into it and share its ownership.
    ///
    /// Buffers sit at multiples of `data_buffer_alignment` from the owner's first
    /// byte, so for zero-copy views the owner's bytes should start at an address
    /// aligned at least to every buffer's declared `alignment` (a memory map or
    /// [`from_bytes`](Self::from_bytes) copy always is). A buffer whose view would
    /// fall short of its declared alignment is copied to an aligned allocation when
    /// its tensor is requested.
    ///
    /// Errors: see [`Catalog::parse`].
    pub fn from_owner(owner: Arc<dyn BufferOwner>, opts: &ReadOptions) -> Result<FileReader> {
        let catalog = Catalog::parse(owner.bytes(), opts)?;
        Ok(FileReader { owner, catalog })
    }

    /// File-level facts: version, flags, alignment, count hint, CRC status, sections.
    pub fn info(&self) -> &FileInfo {
        self.catalog.info()
    }

    /// The validated catalog (index entries, descriptors, file order).
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The whole file (borrowed).
    pub fn bytes(&self) -> &[u8] {
        self.owner.bytes()
    }

    /// Number of tensors in the index (composite heads and members included).
    pub fn len(&self) -> usize {
        self.catalog.entries().len()
    }

    /// True when the file holds no tensors.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tensor names in index order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.catalog.entries().iter().map(|e| e.name.as_str())
    }

    /// Index entries in index order.
    pub fn entries(&self) -> &[IndexEntry] {
        self.catalog.entries()
    }

    /// KV entries in file order (empty when the file has no KV section).
    pub fn kv(&self) -> &[KvEntry] {
        self.catalog.kv()
    }

    /// The KV value under `key` (byte-exact).
    pub fn kv_get(&self, key: &str) -> Option<&KvValue> {
        self.catalog.kv_get(key)
    }

    /// The decoded descriptor of the tensor named `name` (borrowed).
    pub fn descriptor(&self, name: &str) -> Option<&TensorDescriptor> {
        let i = self.catalog.position(name)?;
        self.catalog.descriptor_at(i).map(|d| &**d)
    }

    /// The tensor named `name`: its descriptor and zero-copy views of its buffers.
    /// For a composite head this is the head alone (no buffers); see
    /// [`item`](Self::item). `None` when no tensor has that name.
    pub fn tensor(&self, name: &str) -> Option<Tensor> {
        self.catalog.position(name).map(|i| self.tensor_at(i))
    }

    /// The item named `name`: a tensor, or for a composite head the whole composite
    /// (members found by ascending `descriptor_offset`, §6.4).
    pub fn item(&self, name: &str) -> Option<Item> {
        let i = self.catalog.position(name)?;
        Some(self.catalog.build_item(i, &mut |j| self.tensor_at(j)))
    }

    /// Top-level items in file order, each with the name of its tensor or head;
    /// composites are assembled with all their members.
    pub fn items(&self) -> Vec<(String, Item)> {
        self.catalog
            .build_items(&mut |j| self.tensor_at(j))
            .into_iter()
            .map(|(i, item)| (self.catalog.entries()[i].name.clone(), item))
            .collect()
    }

    /// All tensors (heads and members included) in index order with their names.
    pub fn tensors(&self) -> impl Iterator<Item = (&str, Tensor)> + '_ {
        self.catalog
            .entries()
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.as_str(), self.tensor_at(i)))
    }

    /// The tensor at index position `i` (which exists). A non-empty buffer whose view
    /// does not meet its declared `alignment` (a handle declaring more than the file's
    /// placement gives, e.g. 8192 in a 4096-aligned file) is copied to an allocation
    /// that does: a reader never hands out less than the descriptor promises.
    fn tensor_at(&self, i: usize) -> Tensor {
        let d = self
            .catalog
            .descriptor_at(i)
            .expect("index position")
            .clone();
        let buffers = self
            .catalog
            .buffer_ranges(i)
            .unwrap_or_default()
            .into_iter()
            .zip(&d.buffers)
            .map(|(r, h)| {
                // Validated against the file size at open; the file is in memory, so
                // both ends fit in usize.
                let b = Buffer::slice_of(self.owner.clone(), r.start as usize..r.end as usize)
                    .expect("buffer range validated at open");
                let align = (h.alignment as usize).max(BUFFER_ALIGN);
                if b.is_empty() || b.as_slice().as_ptr() as usize % align == 0 {
                    b
                } else {
                    // `alignment` ≤ data_buffer_alignment ≤ 2 MiB was checked at open.
                    let copy = AlignedWindow::copy_from(b.as_slice(), align)
                        .expect("allocation of a buffer that exists in memory");
                    Buffer::new(Arc::new(copy))
                }
            })
            .collect();
        Tensor::new(d, buffers).expect("buffer sizes validated at open")
    }
}

/// An aligned window for a file of `len` bytes whose first bytes are `head`.
pub(crate) fn window_for(len: u64, head: &[u8]) -> Result<AlignedWindow> {
    let align = FileHeader::parse(head)
        .map(|h| h.data_buffer_alignment)
        .unwrap_or(MIN_DATA_ALIGNMENT)
        .min(MAX_DATA_ALIGNMENT);
    usize::try_from(len)
        .ok()
        .and_then(|n| AlignedWindow::zeroed(n, align as usize))
        .ok_or_else(|| {
            Error::format(
                FormatRule::Limit,
                0,
                format_args!("cannot hold a file of {len} bytes in memory"),
            )
        })
}
