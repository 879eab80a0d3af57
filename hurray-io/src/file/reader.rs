//! [`FileReader`]: random access to a whole file held in memory or memory-mapped.
//! Tensors are zero-copy [`Buffer`] views into the file bytes; each keeps those bytes
//! (the mapping) alive on its own, so the reader may be dropped first.

use super::catalog::{Catalog, FileInfo, ReadOptions};
use super::header::FileHeader;
use super::index_table::IndexIter;
use super::kv_table::{Kv, KvValueRef};
use super::window::AlignedWindow;
use super::{HEADER_LEN, MAX_DATA_ALIGNMENT, MIN_DATA_ALIGNMENT};
use crate::buffer::{Buffer, BufferOwner, BUFFER_ALIGN};
use crate::error::{Error, FormatRule, Result};
use crate::mmap::MappedFile;
use crate::tensor::{Item, Tensor};
use hurray_core::TensorDescriptor;
use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A validated file, ready for random access (`file-format.md` §11).
///
/// Opening validates the header, trailer, index (CRC included), KV, every descriptor
/// and the composite structure, but never reads payload bytes, so it costs the same
/// whatever the tensors' sizes. The buffer contents of a tensor that has content
/// rules (sparse, block-paged, quantized with parameter buffers; see
/// [`hurray_core::content`]) are checked when that tensor is first requested, before
/// any view of it is handed out: a lookup fails with [`Error::Content`] naming the
/// rule and the absolute byte offset, and a tensor that passed is not checked again
/// by this reader. A reader opened with permissive decoding skips the check; its
/// tensors report [`Tensor::content_validated`] `false`. Tensors handed out are views into the file bytes
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
/// let bias = r.tensor("bias").unwrap().expect("a tensor named bias");
/// assert_eq!(bias.buffers()[0].as_slice(), &[1, 2, 3]);
/// ```
pub struct FileReader {
    owner: Arc<dyn BufferOwner>,
    catalog: Catalog,
    /// Permissive decoding: contents are not checked on lookup.
    permissive: bool,
    /// Index positions whose contents passed the check (only tensors with content
    /// rules are ever added).
    validated: Mutex<HashSet<usize>>,
}

impl std::fmt::Debug for FileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReader")
            .field("info", self.catalog.info())
            .field("tensors", &self.catalog.len())
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
        let catalog = Catalog::parse(owner.clone(), opts)?;
        Ok(FileReader {
            owner,
            catalog,
            permissive: opts.decode.permissive,
            validated: Mutex::new(HashSet::new()),
        })
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
        self.catalog.len()
    }

    /// True when the file holds no tensors.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tensor names in index order (borrowed from the file's bytes).
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.catalog.entries().map(|e| e.name)
    }

    /// Index entries in index order, read from the file (borrowed).
    pub fn entries(&self) -> IndexIter<'_> {
        self.catalog.entries()
    }

    /// KV entries in file order (empty when the file has no KV section): a view that
    /// decodes each value from the file's bytes when it is read.
    pub fn kv(&self) -> Kv<'_> {
        self.catalog.kv()
    }

    /// The KV value under `key` (byte-exact).
    pub fn kv_get(&self, key: &str) -> Option<KvValueRef<'_>> {
        self.catalog.kv_get(key)
    }

    /// The descriptor of the tensor named `name`, decoded from the file (each call
    /// returns a new value; tensors share theirs).
    pub fn descriptor(&self, name: &str) -> Option<Arc<TensorDescriptor>> {
        let i = self.catalog.position(name)?;
        self.catalog.descriptor_at(i)
    }

    /// The tensor named `name`: its descriptor and zero-copy views of its buffers.
    /// For a composite head this is the head alone (no buffers); see
    /// [`item`](Self::item). `Ok(None)` when no tensor has that name.
    ///
    /// Errors: [`Error::Content`] when its buffer contents break a content rule
    /// (strict readers, first lookup of the tensor).
    pub fn tensor(&self, name: &str) -> Result<Option<Tensor>> {
        self.catalog
            .position(name)
            .map(|i| self.tensor_at(i))
            .transpose()
    }

    /// The item named `name`: a tensor, or for a composite head the whole composite
    /// (members found by ascending `descriptor_offset`, §6.4). `Ok(None)` when no
    /// tensor has that name.
    ///
    /// Errors: [`Error::Content`] when any tensor of the item breaks a content rule.
    pub fn item(&self, name: &str) -> Result<Option<Item>> {
        let Some(i) = self.catalog.position(name) else {
            return Ok(None);
        };
        let mut failed = None;
        let item = self
            .catalog
            .build_item(i, &mut |j| self.tensor_or_note(j, &mut failed));
        failed.map_or(Ok(Some(item)), Err)
    }

    /// Top-level items in file order, each with the name of its tensor or head;
    /// composites are assembled with all their members.
    ///
    /// Errors: [`Error::Content`] when any tensor breaks a content rule.
    pub fn items(&self) -> Result<Vec<(String, Item)>> {
        let mut failed = None;
        let items = self
            .catalog
            .build_items(&mut |j| self.tensor_or_note(j, &mut failed));
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(items
            .into_iter()
            .map(|(i, item)| {
                let name = self.catalog.entry(i).map_or("", |e| e.name);
                (name.to_owned(), item)
            })
            .collect())
    }

    /// All tensors (heads and members included) in index order with their names;
    /// each is `Err` when its buffer contents break a content rule.
    pub fn tensors(&self) -> impl Iterator<Item = (&str, Result<Tensor>)> + '_ {
        self.catalog
            .entries()
            .enumerate()
            .map(|(i, e)| (e.name, self.tensor_at(i)))
    }

    /// Checks the buffer contents of every tensor (whatever the decoding mode), in
    /// index order, as `hurray validate` does. Reads every index and parameter
    /// buffer of the file; plain dense tensors cost nothing.
    ///
    /// Errors: the first [`Error::Content`] found, with the tensor's name in
    /// `Err.0`.
    pub fn validate_contents(&self) -> std::result::Result<(), (String, Error)> {
        for (i, e) in self.catalog.entries().enumerate() {
            self.check_at(i, &self.view_at(i))
                .map_err(|err| (e.name.to_owned(), err))?;
        }
        Ok(())
    }

    /// The tensor at index position `i` (which exists), its contents checked unless
    /// the reader is permissive.
    fn tensor_at(&self, i: usize) -> Result<Tensor> {
        let t = self.view_at(i);
        if self.permissive {
            return Ok(t);
        }
        self.check_at(i, &t)?;
        Ok(t.into_validated())
    }

    /// Runs the content check of position `i` over its view `t` unless it passed
    /// before; errors carry the absolute file offset.
    fn check_at(&self, i: usize, t: &Tensor) -> Result<()> {
        if t.content_validated() || self.validated_set().contains(&i) {
            return Ok(());
        }
        let ranges = self.catalog.buffer_ranges(i).unwrap_or_default();
        t.check_content_at(&|b| ranges.get(b).map_or(0, |r| r.start))?;
        self.validated_set().insert(i);
        Ok(())
    }

    /// [`tensor_at`](Self::tensor_at) for item assembly, which needs a tensor for
    /// every position: on a content error, the unchecked view stands in and the first
    /// error is kept in `failed` (the caller then discards the item).
    fn tensor_or_note(&self, i: usize, failed: &mut Option<Error>) -> Tensor {
        match self.tensor_at(i) {
            Ok(t) => t,
            Err(e) => {
                failed.get_or_insert(e);
                self.view_at(i)
            }
        }
    }

    fn validated_set(&self) -> std::sync::MutexGuard<'_, HashSet<usize>> {
        // The set only grows with positions that passed; a panic elsewhere while it
        // was held cannot leave it wrong, so a poisoned lock is still usable.
        self.validated.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The views of position `i` (which exists), contents not checked. A non-empty
    /// buffer whose view does not meet its declared `alignment` (a handle declaring
    /// more than the file's placement gives, e.g. 8192 in a 4096-aligned file) is
    /// copied to an allocation that does: a reader never hands out less than the
    /// descriptor promises.
    fn view_at(&self, i: usize) -> Tensor {
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
        Tensor::new_unvalidated(d, buffers).expect("buffer sizes validated at open")
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
