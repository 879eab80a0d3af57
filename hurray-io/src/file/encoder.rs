//! The single-pass writer core (`file-format.md` §13), sans-io: it is told about
//! tensors, composites and KV entries, and answers with the [`Piece`]s to append to
//! the file. It never seeks back and never copies payload: a [`Piece::Buffer`] names
//! a caller's buffer to write as it is.

use super::header::FileHeader;
use super::index::{encode_index, IndexEntry};
use super::kv::{check_key, encode_kv, entry_len, KvEntry, KvValue};
use super::placement::place;
use super::trailer::{crc32c, Trailer};
use super::{align_up, flags, valid_data_alignment, COUNT_UNKNOWN, HEADER_LEN};
use crate::composite;
use crate::error::{Error, FormatRule, Result};
use crate::limits::Limits;
use crate::tensor::{is_head, Composite, Item, Tensor};
use hurray_core::TensorDescriptor;
use std::collections::HashSet;

/// How to write a file.
///
/// The default follows the spec's adopted readings (see the [module docs](super)):
/// `data_buffer_alignment` 4096, CRC-32C on, index in write order, count hint
/// unknown, padding after a tensor's last buffer only to 8 (A1), `HAS_KV_METADATA`
/// set when KV was added before the first tensor (A2), no padding after composite
/// heads (A5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Alignment of every data buffer in bytes: a power of two in 4096..=2 MiB.
    pub data_buffer_alignment: u32,
    /// Sort index entries by name bytes and set `SORTED_INDEX`.
    pub sorted_index: bool,
    /// Compute the index CRC-32C and set `HAS_INDEX_CRC32C` (recommended).
    pub index_crc: bool,
    /// Write this `tensor_count_hint` (all tensors, heads and members included);
    /// `finish` fails with `TensorCountHint` if the count differs. `None` writes the
    /// "unknown" sentinel.
    pub tensor_count_hint: Option<u64>,
    /// Reproduce the reference writer byte for byte (`basic.hrry`): never set
    /// `HAS_KV_METADATA` (A2) and pad composite heads to `data_buffer_alignment` (A5).
    pub reference_compat: bool,
    /// Deepest composite nesting accepted, counting the outermost head (default 8;
    /// values above [`COMPOSITE_DEPTH_CEILING`](crate::limits::COMPOSITE_DEPTH_CEILING),
    /// 64, act as 64).
    pub max_composite_depth: u32,
    /// Path writers only: `fsync` the file before renaming it into place and (on
    /// Unix) its directory after, so the new file survives an OS crash or a power
    /// loss. Default `true`; turn it off for scratch files. Either way a killed
    /// process never leaves a partial destination (see
    /// [`commit`](super::commit)).
    pub durable: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            data_buffer_alignment: 4096,
            sorted_index: false,
            index_crc: true,
            tensor_count_hint: None,
            reference_compat: false,
            max_composite_depth: 8,
            durable: true,
        }
    }
}

impl WriteOptions {
    /// The profile that reproduces the reference writer's files, `basic.hrry`
    /// included (§13 "byte-exact profile"): alignment 4096, CRC on, unsorted index,
    /// count unknown, [`reference_compat`](Self::reference_compat) set.
    pub fn reference_compatible() -> Self {
        WriteOptions {
            reference_compat: true,
            ..Self::default()
        }
    }
}

/// One step of output: append these bytes, this many zero bytes, or buffer `buffer`
/// (buffer-table index) of tensor `tensor` (0 for a plain tensor; for a composite, the
/// tensor's position in pre-order: head 0, then members depth-first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Bytes to append.
    Bytes(Vec<u8>),
    /// Zero padding, in bytes.
    Zeros(u64),
    /// A caller's buffer, written exactly as it is.
    Buffer {
        /// Tensor position (pre-order).
        tensor: usize,
        /// Buffer-table index.
        buffer: usize,
    },
}

/// The writer core. Feed it tensors, composites and KV; append every returned
/// [`Piece`] to the output in order. A call that returns an error changes nothing,
/// so the caller may carry on; a failure to append the returned pieces, however,
/// leaves the core ahead of the output and that file must be abandoned.
#[derive(Debug)]
pub struct FileEncoder {
    opts: WriteOptions,
    header_written: bool,
    offset: u64,
    entries: Vec<IndexEntry>,
    names: HashSet<String>,
    kv: Vec<KvEntry>,
    kv_keys: HashSet<String>,
    kv_len: u64,
    finished: bool,
}

/// Default names for a composite's tensors in pre-order: the head is `name`, member
/// `i` is `name/i`, a nested member `j` of member `i` is `name/i/j`, and so on.
pub fn member_names(name: &str, c: &Composite) -> Vec<String> {
    fn walk(prefix: &str, c: &Composite, out: &mut Vec<String>) {
        out.push(prefix.to_owned());
        for (i, m) in c.members.iter().enumerate() {
            let n = format!("{prefix}/{i}");
            match m {
                Item::Tensor(_) => out.push(n),
                Item::Composite(inner) => walk(&n, inner, out),
            }
        }
    }
    let mut out = Vec::new();
    walk(name, c, &mut out);
    out
}

fn finished_error() -> Error {
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "the file writer has already finished",
    ))
}

impl FileEncoder {
    /// A core for a new file.
    ///
    /// Errors: `DataAlignment` when `data_buffer_alignment` is not a power of two in
    /// 4096..=2 MiB.
    pub fn new(opts: WriteOptions) -> Result<FileEncoder> {
        if !valid_data_alignment(opts.data_buffer_alignment) {
            return Err(Error::format(
                FormatRule::DataAlignment,
                16,
                format_args!(
                    "data_buffer_alignment {} is not a power of two in 4096..=2097152",
                    opts.data_buffer_alignment
                ),
            ));
        }
        Ok(FileEncoder {
            opts,
            header_written: false,
            offset: 0,
            entries: Vec::new(),
            names: HashSet::new(),
            kv: Vec::new(),
            kv_keys: HashSet::new(),
            kv_len: 4,
            finished: false,
        })
    }

    /// The options this core writes with.
    pub fn options(&self) -> &WriteOptions {
        &self.opts
    }

    /// Bytes the returned pieces add up to so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Index entries of the tensors written so far, in write order.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// Records a KV entry, written after the tensors in the order added. Can be
    /// called at any time before [`finish`](Self::finish).
    ///
    /// Errors: `Utf8` (empty key), `Limit` (key over 65 535 bytes, a length over its
    /// u32 prefix, or the section reaching 4 GiB), `DuplicateKey`, `ReservedKey` (the
    /// key is [`DATA_CRC32C_KEY`](super::data_crc::DATA_CRC32C_KEY), which writers
    /// record themselves: ask for it with `with_data_crc32c`).
    pub fn add_kv(&mut self, key: impl Into<String>, value: KvValue) -> Result<()> {
        let key = key.into();
        if key == super::data_crc::DATA_CRC32C_KEY {
            return Err(Error::format(
                FormatRule::ReservedKey,
                self.offset,
                format_args!(
                    "KV key {key:?} is reserved for the per-tensor data CRC-32C values the \
                     writer records itself (ask for them with the data CRC-32C write option)"
                ),
            ));
        }
        self.add_kv_unchecked(key, value)
    }

    /// Records the reserved `hurray.data_crc32c` entry
    /// ([`file::data_crc`](super::data_crc)): `crcs` holds one CRC-32C per tensor
    /// written, in file order (what [`tensor_crc32c`](super::data_crc::tensor_crc32c)
    /// gives for each tensor's buffers). For encoders whose caller computes the values
    /// as it writes the buffers; path and sink writers do it themselves.
    ///
    /// Errors: `DataCrcEntry` when `crcs` does not hold one value per tensor written;
    /// those of [`add_kv`](Self::add_kv) otherwise (`DuplicateKey` when called twice).
    pub fn add_data_crc32c(&mut self, crcs: Vec<u64>) -> Result<()> {
        if crcs.len() != self.entries.len() {
            return Err(Error::format(
                FormatRule::DataCrcEntry,
                self.offset,
                format_args!(
                    "{} data CRC-32C values for {} tensors written",
                    crcs.len(),
                    self.entries.len()
                ),
            ));
        }
        self.add_kv_unchecked(
            super::data_crc::DATA_CRC32C_KEY.to_string(),
            KvValue::Array(super::kv::KvArray::UInt64(crcs)),
        )
    }

    /// [`add_kv`](Self::add_kv) without the reserved-key refusal.
    pub(crate) fn add_kv_unchecked(&mut self, key: String, value: KvValue) -> Result<()> {
        if self.finished {
            return Err(finished_error());
        }
        let entry = KvEntry { key, value };
        check_key(&entry.key, self.offset, "KV key")?;
        if self.kv_keys.contains(&entry.key) {
            return Err(Error::format(
                FormatRule::DuplicateKey,
                self.offset,
                format_args!("KV key {:?} was already added", entry.key),
            ));
        }
        let len = entry_len(&entry)
            .and_then(|n| self.kv_len.checked_add(n))
            .filter(|&n| n <= u64::from(u32::MAX))
            .ok_or_else(|| {
                Error::format(
                    FormatRule::Limit,
                    self.offset,
                    "the KV section would reach 4 GiB (kv_length is a u32)",
                )
            })?;
        self.kv_len = len;
        self.kv_keys.insert(entry.key.clone());
        self.kv.push(entry);
        Ok(())
    }

    /// Plans one tensor named `name`.
    ///
    /// Errors: `Utf8`/`Limit` (empty or over-long name), `DuplicateName`,
    /// `CompositeMember` for a composite head (use [`composite`](Self::composite)),
    /// `Limit` when a non-empty buffer declares an alignment above
    /// `data_buffer_alignment` (the file could not keep that promise),
    /// `TensorCountHint` when more tensors than the hint, `Descriptor` when the
    /// descriptor does not encode, `OutOfBounds` when offsets overflow.
    pub fn tensor(&mut self, name: &str, descriptor: &TensorDescriptor) -> Result<Vec<Piece>> {
        if is_head(descriptor) {
            return Err(Error::format(
                FormatRule::CompositeMember,
                self.offset,
                "a composite head must be written with its members (composite)",
            ));
        }
        self.plan(&[name], &[descriptor])
    }

    /// Plans a whole composite, its tensors named `names` in pre-order (head first;
    /// see [`member_names`]). The composite is validated (per-member and close-time
    /// rules, nesting depth, members per composite) before anything is planned.
    ///
    /// Errors: those of [`tensor`](Self::tensor), `BufferMismatch` when `names` does
    /// not have one name per tensor, the composite rules (`CompositeMember`,
    /// `TornComposite`, `CompositeDepth`), and `Limit` when a head declares more than
    /// [`Limits::max_composite_members`] members (the default, which a default reader
    /// enforces too).
    pub fn composite(&mut self, names: &[&str], c: &Composite) -> Result<Vec<Piece>> {
        composite::validate(
            c,
            self.opts
                .max_composite_depth
                .min(crate::limits::COMPOSITE_DEPTH_CEILING),
            Limits::default().max_composite_members,
        )?;
        let mut tensors = Vec::new();
        collect(c, &mut tensors);
        let descriptors: Vec<&TensorDescriptor> = tensors.iter().map(|t| t.descriptor()).collect();
        if names.len() != descriptors.len() {
            return Err(Error::format(
                FormatRule::BufferMismatch,
                self.offset,
                format_args!(
                    "{} names for a composite of {} tensors",
                    names.len(),
                    descriptors.len()
                ),
            ));
        }
        self.plan(names, &descriptors)
    }

    /// Plans tensors in order; all-or-nothing.
    fn plan(&mut self, names: &[&str], descriptors: &[&TensorDescriptor]) -> Result<Vec<Piece>> {
        if self.finished {
            return Err(finished_error());
        }
        let mut pieces = Vec::new();
        let mut offset = self.offset;
        let header = (!self.header_written).then(|| self.header());
        if let Some(h) = &header {
            pieces.push(Piece::Bytes(h.encode().to_vec()));
            offset = h.first_descriptor_offset;
        }
        if let Some(hint) = self.opts.tensor_count_hint {
            if self.entries.len() as u64 + descriptors.len() as u64 > hint {
                return Err(Error::format(
                    FormatRule::TensorCountHint,
                    offset,
                    format_args!("more tensors than the tensor_count_hint of {hint}"),
                ));
            }
        }
        let mut seen = HashSet::new();
        let mut entries = Vec::with_capacity(descriptors.len());
        let a = u64::from(self.opts.data_buffer_alignment);
        for (t, (&name, d)) in names.iter().zip(descriptors).enumerate() {
            check_key(name, offset, "tensor name")?;
            if self.names.contains(name) || !seen.insert(name) {
                return Err(Error::format(
                    FormatRule::DuplicateName,
                    offset,
                    format_args!("tensor name {name:?} is already used"),
                ));
            }
            if let Some(b) = d
                .buffers
                .iter()
                .find(|b| b.byte_size > 0 && u64::from(b.alignment) > a)
            {
                return Err(super::catalog::over_aligned(offset, b.alignment, a));
            }
            let bytes = d
                .encode()
                .map_err(|source| Error::Descriptor { at: offset, source })?;
            let p = place(
                offset,
                bytes.len() as u64,
                d.buffers.iter().map(|b| b.byte_size),
                a,
                self.opts.reference_compat,
            )
            .ok_or_else(|| {
                Error::format(FormatRule::OutOfBounds, offset, "file offsets overflow u64")
            })?;
            entries.push(IndexEntry {
                name: name.to_owned(),
                descriptor_offset: offset,
                descriptor_length: bytes.len() as u32,
                data_offset: p.data_offset,
                data_length: p.data_length,
            });
            pieces.push(Piece::Bytes(bytes));
            let mut end = p.descriptor_end;
            for (i, (&start, h)) in p.buffer_offsets.iter().zip(&d.buffers).enumerate() {
                zeros(&mut pieces, start - end);
                pieces.push(Piece::Buffer {
                    tensor: t,
                    buffer: i,
                });
                end = start + h.byte_size;
            }
            zeros(&mut pieces, p.next - end);
            offset = p.next;
        }
        // Commit.
        if header.is_some() {
            self.header_written = true;
        }
        self.offset = offset;
        for e in entries {
            self.names.insert(e.name.clone());
            self.entries.push(e);
        }
        Ok(pieces)
    }

    /// The header as it will be written now.
    fn header(&self) -> FileHeader {
        let mut f = 0;
        if self.opts.index_crc {
            f |= flags::HAS_INDEX_CRC32C;
        }
        if self.opts.sorted_index {
            f |= flags::SORTED_INDEX;
        }
        if !self.opts.reference_compat && !self.kv.is_empty() {
            f |= flags::HAS_KV_METADATA;
        }
        let mut h = FileHeader::new(f, self.opts.data_buffer_alignment);
        h.tensor_count_hint = self.opts.tensor_count_hint.unwrap_or(COUNT_UNKNOWN);
        h
    }

    /// Plans the end of the file: the header (if no tensor was written), the KV
    /// section (if any KV was added), the index, the trailer. After this the core
    /// accepts nothing more.
    ///
    /// Errors: `TensorCountHint` when a hint was given and fewer tensors were written;
    /// `Limit` when the KV section would not fit its u32 length.
    pub fn finish(&mut self) -> Result<Vec<Piece>> {
        if self.finished {
            return Err(finished_error());
        }
        if let Some(hint) = self.opts.tensor_count_hint {
            if hint != self.entries.len() as u64 {
                return Err(Error::format(
                    FormatRule::TensorCountHint,
                    self.offset,
                    format_args!(
                        "tensor_count_hint is {hint} but {} tensors were written",
                        self.entries.len()
                    ),
                ));
            }
        }
        let mut pieces = Vec::new();
        let mut offset = self.offset;
        if !self.header_written {
            let h = self.header();
            pieces.push(Piece::Bytes(h.encode().to_vec()));
            offset = HEADER_LEN as u64;
        }
        let start = offset;
        let overflow =
            || Error::format(FormatRule::OutOfBounds, start, "file offsets overflow u64");
        let mut trailer = Trailer::default();
        if !self.kv.is_empty() {
            let kv = encode_kv(&self.kv)?;
            trailer.kv_offset = offset;
            trailer.kv_length = u32::try_from(kv.len()).map_err(|_| {
                Error::format(FormatRule::Limit, offset, "KV section reaches 4 GiB")
            })?;
            let end = offset.checked_add(kv.len() as u64).ok_or_else(overflow)?;
            let next = align_up(end, 8).ok_or_else(overflow)?;
            pieces.push(Piece::Bytes(kv));
            zeros(&mut pieces, next - end);
            offset = next;
        }
        let mut entries = self.entries.clone();
        if self.opts.sorted_index {
            entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        }
        let index = encode_index(&entries)?;
        trailer.index_offset = offset;
        trailer.index_length = index.len() as u64;
        if self.opts.index_crc {
            trailer.index_crc32c = crc32c(&index);
        }
        offset = offset
            .checked_add(index.len() as u64 + super::TRAILER_LEN as u64)
            .ok_or_else(overflow)?;
        pieces.push(Piece::Bytes(index));
        pieces.push(Piece::Bytes(trailer.encode().to_vec()));
        self.header_written = true;
        self.offset = offset;
        self.finished = true;
        Ok(pieces)
    }
}

fn zeros(pieces: &mut Vec<Piece>, n: u64) {
    if n > 0 {
        pieces.push(Piece::Zeros(n));
    }
}

/// The tensors of a composite in pre-order (head, then members depth-first).
pub(crate) fn collect<'a>(c: &'a Composite, out: &mut Vec<&'a Tensor>) {
    out.push(&c.head);
    for m in &c.members {
        match m {
            Item::Tensor(t) => out.push(t),
            Item::Composite(inner) => collect(inner, out),
        }
    }
}
