//! The random-access reader core (`file-format.md` §11), sans-io: given the bytes of a
//! whole file (from memory or a mapping), validate everything the index and KV
//! section say, decode every descriptor, check the composite structure, and record
//! where each tensor's buffers lie. Nothing here slices or allocates from a value in
//! the file before checking it against the file size and the [`Limits`].

use super::header::FileHeader;
use super::index::{parse_located, IndexEntry};
use super::kv::{parse_kv, KvEntry, KvValue};
use super::placement::relative_buffer_offsets;
use super::trailer::{crc32c, Trailer};
use super::{align_up, flags, MIN_FILE_LEN, TRAILER_LEN};
use crate::composite::CompositeChecker;
use crate::error::{Error, FormatRule, Result};
use crate::limits::Limits;
use crate::tensor::{Composite, Item, Tensor};
use hurray_core::{peek_descriptor_length, DecodeOptions, Layout, TensorDescriptor};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// How to read a file: limits for untrusted input and descriptor strictness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Ceilings on section sizes, counts, descriptor and buffer sizes, nesting.
    pub limits: Limits,
    /// How descriptors are decoded (strict by default).
    pub decode: DecodeOptions,
}

/// Whether the index CRC was checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrcStatus {
    /// `HAS_INDEX_CRC32C` was set and the CRC-32C of the index matched this value.
    Verified(u32),
    /// The flag was clear (and the stored value 0): nothing to check.
    Absent,
}

/// File-level facts of a file that opened successfully.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileInfo {
    /// The header.
    pub header: FileHeader,
    /// The trailer.
    pub trailer: Trailer,
    /// File size in bytes.
    pub file_len: u64,
    /// Index CRC status.
    pub crc: CrcStatus,
}

impl FileInfo {
    /// Container version as `(major, minor)`.
    pub fn version(&self) -> (u8, u8) {
        (self.header.version_major, self.header.version_minor)
    }
    /// `file_flags`.
    pub fn flags(&self) -> u32 {
        self.header.flags
    }
    /// `data_buffer_alignment` in bytes.
    pub fn data_buffer_alignment(&self) -> u32 {
        self.header.data_buffer_alignment
    }
    /// `tensor_count_hint`, `None` when the writer did not know.
    pub fn tensor_count_hint(&self) -> Option<u64> {
        self.header.count_hint()
    }
    /// True when the index is sorted by name (`SORTED_INDEX`).
    pub fn sorted_index(&self) -> bool {
        self.header.has(flags::SORTED_INDEX)
    }
    /// The KV section as `(offset, length)` in bytes, when present.
    pub fn kv_section(&self) -> Option<(u64, u32)> {
        self.trailer.kv()
    }
}

/// What the end of a file holds: trailer, index and KV, validated (shared by the
/// random-access and the sequential reader).
pub(crate) struct Tail {
    pub(crate) info: FileInfo,
    pub(crate) entries: Vec<IndexEntry>,
    pub(crate) entry_offsets: Vec<u64>,
    pub(crate) kv: Vec<KvEntry>,
}

/// Parses the end of a file. `tail` holds the file's bytes from absolute offset
/// `base` to the end; sections must lie at or after `lower` (the first descriptor
/// offset, or where a sequential reader stopped reading tensors).
pub(crate) fn parse_tail(
    tail: &[u8],
    base: u64,
    lower: u64,
    header: &FileHeader,
    opts: &ReadOptions,
) -> Result<Tail> {
    let limits = &opts.limits;
    let file_len = base
        .checked_add(tail.len() as u64)
        .ok_or_else(|| Error::format(FormatRule::OutOfBounds, base, "file size overflows"))?;
    if file_len < MIN_FILE_LEN || tail.len() < TRAILER_LEN {
        return Err(Error::format(
            FormatRule::Truncated,
            file_len,
            format_args!("a file of {file_len} bytes cannot hold header and trailer"),
        ));
    }
    let t_at = file_len - TRAILER_LEN as u64;
    let t_rel = tail.len() - TRAILER_LEN;
    let trailer = Trailer::parse(&tail[t_rel..], t_at, header.flags)?;

    // The index (§11 steps 4–7).
    let index = section(
        trailer.index_offset,
        trailer.index_length,
        limits.max_index_bytes,
        "index",
        t_at,
        t_at,
        base,
        lower,
    )?;
    let index_bytes = &tail[index.clone()];
    let crc = if header.has(flags::HAS_INDEX_CRC32C) {
        let c = crc32c(index_bytes);
        if c != trailer.index_crc32c {
            return Err(Error::format(
                FormatRule::CrcMismatch,
                t_at + 28,
                format_args!(
                    "index CRC-32C is {c:#010x}, the trailer says {:#010x}",
                    trailer.index_crc32c
                ),
            ));
        }
        CrcStatus::Verified(c)
    } else {
        CrcStatus::Absent
    };
    let (entries, entry_offsets) = parse_located(
        index_bytes,
        trailer.index_offset,
        header.has(flags::SORTED_INDEX),
        limits,
    )?;

    // The KV section (§11 step 8).
    let kv = match trailer.kv() {
        None => Vec::new(),
        Some((off, len)) => {
            let r = section(
                off,
                u64::from(len),
                limits.max_kv_bytes,
                "KV",
                t_at + 16,
                t_at,
                base,
                lower,
            )?;
            let (k0, k1) = (off, off + u64::from(len));
            let (i0, i1) = (
                trailer.index_offset,
                trailer.index_offset + trailer.index_length,
            );
            if k0 < i1 && i0 < k1 {
                return Err(Error::format(
                    FormatRule::Overlap,
                    t_at + 16,
                    format_args!("the KV section [{k0}, {k1}) overlaps the index [{i0}, {i1})"),
                ));
            }
            parse_kv(&tail[r], off, limits)?
        }
    };
    Ok(Tail {
        info: FileInfo {
            header: *header,
            trailer,
            file_len,
            crc,
        },
        entries,
        entry_offsets,
        kv,
    })
}

/// Checks a section's offset and length (the offset field at absolute `field_at` in
/// the trailer, the length field 8 bytes later; the trailer starts at `t_at`) and
/// returns its range relative to `base`.
#[allow(clippy::too_many_arguments)]
fn section(
    offset: u64,
    length: u64,
    limit: u64,
    what: &str,
    field_at: u64,
    t_at: u64,
    base: u64,
    lower: u64,
) -> Result<Range<usize>> {
    if length > limit {
        return Err(Error::format(
            FormatRule::Limit,
            field_at + 8,
            format_args!("{what} section of {length} bytes exceeds the limit of {limit}"),
        ));
    }
    if offset % 8 != 0 {
        return Err(Error::format(
            FormatRule::Placement,
            field_at,
            format_args!("{what} offset {offset} is not a multiple of 8"),
        ));
    }
    if offset.checked_add(length).is_none_or(|e| e > t_at) {
        return Err(Error::format(
            FormatRule::OutOfBounds,
            field_at,
            format_args!(
                "{what} section [{offset}, +{length}) runs past the start of the trailer at {t_at}"
            ),
        ));
    }
    let lower = lower.max(base);
    if offset < lower {
        return Err(Error::format(
            FormatRule::Placement,
            field_at,
            format_args!(
                "{what} offset {offset} lies before {lower}, in the header or tensor region"
            ),
        ));
    }
    let start = (offset - base) as usize;
    Ok(start..start + length as usize)
}

/// A validated file: header, trailer, KV, index and every decoded descriptor, with
/// the composite structure checked. Built by [`Catalog::parse`] from the whole file;
/// holds no file bytes itself (tensor views are made by the caller from the ranges
/// it reports).
#[derive(Clone, Debug)]
pub struct Catalog {
    info: FileInfo,
    entries: Vec<IndexEntry>,
    descriptors: Vec<Arc<TensorDescriptor>>,
    by_name: HashMap<String, usize>,
    kv: Vec<KvEntry>,
    kv_by_key: HashMap<String, usize>,
    /// Entry indices in ascending `descriptor_offset` (file) order.
    order: Vec<usize>,
    /// Position of each entry in `order`.
    rank: Vec<usize>,
}

/// An extent of the file that must not overlap another.
struct Extent {
    start: u64,
    end: u64,
    field_at: u64,
    what: &'static str,
}

impl Catalog {
    /// Validates the file `file` (all of its bytes) and records its contents.
    ///
    /// Checks, in order: header (§3–§5), size ≥ 104, trailer (§9), index bounds, CRC
    /// and entries (§8), KV (§7), then per index entry: descriptor placement, bounds
    /// and limits, `descriptor_length` against the descriptor, the descriptor itself,
    /// data placement (`align(end of descriptor, A)`), `data_length` against the
    /// buffer table (§6.1), data bounds; then that no two descriptors, data ranges or
    /// sections overlap, that the first descriptor sits at `first_descriptor_offset`,
    /// and the composite structure and rules (§6.4).
    ///
    /// Errors: a [`FormatRule`] with the absolute offset of the offending field
    /// (index-entry problems point into the index entry), or
    /// [`Error::Descriptor`] with the descriptor's offset. Never panics on any input.
    pub fn parse(file: &[u8], opts: &ReadOptions) -> Result<Catalog> {
        let header = FileHeader::parse(file)?;
        let tail = parse_tail(file, 0, header.first_descriptor_offset, &header, opts)?;
        let limits = &opts.limits;
        let t_at = tail.info.file_len - TRAILER_LEN as u64;
        let a = u64::from(header.data_buffer_alignment);
        let mut extents = vec![Extent {
            start: 0,
            end: header.first_descriptor_offset,
            field_at: 20,
            what: "header",
        }];
        let t = &tail.info.trailer;
        extents.push(Extent {
            start: t.index_offset,
            end: t.index_offset + t.index_length,
            field_at: t_at,
            what: "index",
        });
        if let Some((o, l)) = t.kv() {
            extents.push(Extent {
                start: o,
                end: o + u64::from(l),
                field_at: t_at + 16,
                what: "KV section",
            });
        }
        let mut descriptors = Vec::with_capacity(tail.entries.len());
        for (e, &at) in tail.entries.iter().zip(&tail.entry_offsets) {
            let d = check_entry(file, e, at, &header, t_at, a, limits, &opts.decode)?;
            let [d_at, _, data_at, _] = e.field_offsets(at);
            extents.push(Extent {
                start: e.descriptor_offset,
                end: e.descriptor_offset + u64::from(e.descriptor_length),
                field_at: d_at,
                what: "descriptor",
            });
            if !d.buffers.is_empty() && e.data_length > 0 {
                extents.push(Extent {
                    start: e.data_offset,
                    end: e.data_offset + e.data_length,
                    field_at: data_at,
                    what: "tensor data",
                });
            }
            descriptors.push(Arc::new(d));
        }
        extents.sort_by_key(|x| (x.start, x.end));
        for w in extents.windows(2) {
            if w[1].start < w[0].end {
                return Err(Error::format(
                    FormatRule::Overlap,
                    w[1].field_at,
                    format_args!(
                        "{} [{}, {}) overlaps {} [{}, {})",
                        w[1].what, w[1].start, w[1].end, w[0].what, w[0].start, w[0].end
                    ),
                ));
            }
        }

        let mut order: Vec<usize> = (0..tail.entries.len()).collect();
        order.sort_by_key(|&i| tail.entries[i].descriptor_offset);
        if let Some(&first) = order.first() {
            let e = &tail.entries[first];
            if e.descriptor_offset != header.first_descriptor_offset {
                return Err(Error::format(
                    FormatRule::Placement,
                    e.field_offsets(tail.entry_offsets[first])[0],
                    format_args!(
                        "the first descriptor is at {}, not at first_descriptor_offset {}",
                        e.descriptor_offset, header.first_descriptor_offset
                    ),
                ));
            }
        }
        let mut rank = vec![0; order.len()];
        for (p, &i) in order.iter().enumerate() {
            rank[i] = p;
        }
        check_composites(&order, &tail.entries, &descriptors, limits)?;

        let by_name = tail
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        let kv_by_key = tail
            .kv
            .iter()
            .enumerate()
            .map(|(i, e)| (e.key.clone(), i))
            .collect();
        Ok(Catalog {
            info: tail.info,
            entries: tail.entries,
            descriptors,
            by_name,
            kv: tail.kv,
            kv_by_key,
            order,
            rank,
        })
    }

    /// File-level facts.
    pub fn info(&self) -> &FileInfo {
        &self.info
    }

    /// Index entries in index order.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// KV entries in file order.
    pub fn kv(&self) -> &[KvEntry] {
        &self.kv
    }

    /// The value stored under `key` (byte-exact match).
    pub fn kv_get(&self, key: &str) -> Option<&KvValue> {
        self.kv_by_key.get(key).map(|&i| &self.kv[i].value)
    }

    /// Index position of the tensor named `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The decoded descriptor of the entry at index position `i`.
    pub fn descriptor_at(&self, i: usize) -> Option<&Arc<TensorDescriptor>> {
        self.descriptors.get(i)
    }

    /// Absolute byte ranges of the buffers of entry `i`, in buffer-table order
    /// (validated at parse time to lie inside the file).
    pub fn buffer_ranges(&self, i: usize) -> Option<Vec<Range<u64>>> {
        let d = self.descriptors.get(i)?;
        let e = &self.entries[i];
        let sizes = d.buffers.iter().map(|b| b.byte_size);
        let (rel, _) =
            relative_buffer_offsets(sizes, u64::from(self.info.header.data_buffer_alignment))?;
        Some(
            rel.iter()
                .zip(&d.buffers)
                .map(|(r, b)| {
                    let s = e.data_offset + r;
                    s..s + b.byte_size
                })
                .collect(),
        )
    }

    /// Index positions in file (ascending `descriptor_offset`) order.
    pub fn file_order(&self) -> &[usize] {
        &self.order
    }

    /// Builds the item that starts at entry `i`: the tensor itself, or for a composite
    /// head the composite with all its members (§6.4: the entries that follow it in
    /// file order). `tensor` makes the tensor of an entry.
    pub fn build_item(&self, i: usize, tensor: &mut dyn FnMut(usize) -> Tensor) -> Item {
        let mut pos = self.rank[i];
        self.build_from(&mut pos, tensor)
    }

    /// Top-level items in file order, as `(index position of the tensor or head, item)`.
    pub fn build_items(&self, tensor: &mut dyn FnMut(usize) -> Tensor) -> Vec<(usize, Item)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < self.order.len() {
            let i = self.order[pos];
            out.push((i, self.build_from(&mut pos, tensor)));
        }
        out
    }

    /// Builds one item from file-order position `*pos`, advancing past it. The
    /// structure was validated by `parse`; the walk is iterative, so hostile nesting
    /// cannot exhaust the stack.
    fn build_from(&self, pos: &mut usize, tensor: &mut dyn FnMut(usize) -> Tensor) -> Item {
        struct Open {
            head: Tensor,
            members: Vec<Item>,
            remaining: u32,
        }
        let mut stack: Vec<Open> = Vec::new();
        loop {
            let i = self.order[*pos];
            *pos += 1;
            let t = tensor(i);
            let mut done = match &self.descriptors[i].layout {
                Layout::CompositeHead(h) => {
                    stack.push(Open {
                        head: t,
                        members: Vec::new(),
                        remaining: h.member_count,
                    });
                    None
                }
                _ => Some(Item::Tensor(t)),
            };
            loop {
                if let Some(item) = done.take() {
                    match stack.last_mut() {
                        None => return item,
                        Some(top) => {
                            top.members.push(item);
                            top.remaining -= 1;
                        }
                    }
                }
                match stack.last() {
                    Some(top) if top.remaining == 0 => {
                        let top = stack.pop().expect("checked");
                        done = Some(Item::Composite(Composite {
                            head: top.head,
                            members: top.members,
                        }));
                    }
                    _ => break,
                }
            }
            if *pos >= self.order.len() && !stack.is_empty() {
                // Unreachable after `parse` validated the structure; return what
                // exists rather than panic.
                let top = stack.remove(0);
                return Item::Composite(Composite {
                    head: top.head,
                    members: top.members,
                });
            }
        }
    }
}

/// Per-entry checks (§11 steps 9–10, §14 items 12, 16, 26–28); returns the decoded
/// descriptor.
#[allow(clippy::too_many_arguments)]
fn check_entry(
    file: &[u8],
    e: &IndexEntry,
    at: u64,
    header: &FileHeader,
    t_at: u64,
    a: u64,
    limits: &Limits,
    decode: &DecodeOptions,
) -> Result<TensorDescriptor> {
    let [d_at, dl_at, data_at, len_at] = e.field_offsets(at);
    let d0 = e.descriptor_offset;
    if d0 % 8 != 0 || d0 < header.first_descriptor_offset {
        return Err(Error::format(
            FormatRule::Placement,
            d_at,
            format_args!(
                "descriptor_offset {d0} is not a multiple of 8 at or after first_descriptor_offset {}",
                header.first_descriptor_offset
            ),
        ));
    }
    if e.descriptor_length > limits.max_descriptor_bytes {
        return Err(Error::format(
            FormatRule::Limit,
            dl_at,
            format_args!(
                "descriptor_length {} exceeds the limit of {}",
                e.descriptor_length, limits.max_descriptor_bytes
            ),
        ));
    }
    let d_end = d0
        .checked_add(u64::from(e.descriptor_length))
        .filter(|&x| x <= t_at)
        .ok_or_else(|| {
            Error::format(
                FormatRule::OutOfBounds,
                d_at,
                format_args!(
                    "descriptor [{d0}, +{}) runs past the start of the trailer at {t_at}",
                    e.descriptor_length
                ),
            )
        })?;
    // Both bounds are ≤ t_at < file.len(), so they fit in usize.
    let own = peek_descriptor_length(&file[d0 as usize..t_at as usize])
        .map_err(|source| Error::Descriptor { at: d0, source })?;
    if own != e.descriptor_length {
        return Err(Error::format(
            FormatRule::IndexEntry,
            dl_at,
            format_args!(
                "index descriptor_length {} differs from the descriptor's own {own}",
                e.descriptor_length
            ),
        ));
    }
    let d = TensorDescriptor::decode_with(&file[d0 as usize..d_end as usize], decode)
        .map_err(|source| Error::Descriptor { at: d0, source })?;
    if d.buffers.is_empty() {
        if e.data_length != 0 {
            return Err(Error::format(
                FormatRule::IndexEntry,
                len_at,
                format_args!(
                    "a tensor without buffers has data_length {}, not 0",
                    e.data_length
                ),
            ));
        }
        return Ok(d);
    }
    if let Some(b) = d
        .buffers
        .iter()
        .find(|b| b.byte_size > limits.max_buffer_bytes)
    {
        return Err(Error::format(
            FormatRule::Limit,
            d0,
            format_args!(
                "a buffer of {} bytes exceeds the limit of {}",
                b.byte_size, limits.max_buffer_bytes
            ),
        ));
    }
    if let Some(b) = d
        .buffers
        .iter()
        .find(|b| b.byte_size > 0 && u64::from(b.alignment) > a)
    {
        return Err(over_aligned(d0, b.alignment, a));
    }
    let b0 = align_up(d_end, a);
    if b0 != Some(e.data_offset) {
        return Err(Error::format(
            FormatRule::Placement,
            data_at,
            format_args!(
                "data_offset {} is not align(end of descriptor {d_end}, {a})",
                e.data_offset
            ),
        ));
    }
    let implied =
        relative_buffer_offsets(d.buffers.iter().map(|b| b.byte_size), a).map(|(_, len)| len);
    if implied != Some(e.data_length) {
        return Err(Error::format(
            FormatRule::IndexEntry,
            len_at,
            format_args!(
                "data_length {} differs from the {} bytes the buffer table implies",
                e.data_length,
                implied.map_or("overflowing".to_owned(), |v| v.to_string())
            ),
        ));
    }
    if e.data_offset
        .checked_add(e.data_length)
        .is_none_or(|x| x > t_at)
    {
        return Err(Error::format(
            FormatRule::OutOfBounds,
            data_at,
            format_args!(
                "data [{}, +{}) runs past the start of the trailer at {t_at}",
                e.data_offset, e.data_length
            ),
        ));
    }
    Ok(d)
}

/// Walks the entries in file order and checks every composite (§6.4): members are
/// the next `member_count` entries, nested in pre-order, at most
/// `limits.max_composite_depth` levels, each head declaring at most
/// `limits.max_composite_members` members; per-member and close-time rules apply.
/// Iterative, so hostile nesting cannot exhaust the stack.
fn check_composites(
    order: &[usize],
    entries: &[IndexEntry],
    descriptors: &[Arc<TensorDescriptor>],
    limits: &Limits,
) -> Result<()> {
    struct Level {
        checker: CompositeChecker,
        remaining: u32,
        at: u64,
    }
    let mut stack: Vec<Level> = Vec::new();
    for &i in order {
        let d = &descriptors[i];
        let at = entries[i].descriptor_offset;
        if let Some(top) = stack.last_mut() {
            top.checker.member(d, at)?;
            top.remaining -= 1;
        }
        if let Layout::CompositeHead(h) = &d.layout {
            if stack.len() as u64 + 1 > u64::from(limits.composite_depth()) {
                return Err(Error::format(
                    FormatRule::CompositeDepth,
                    at,
                    format_args!(
                        "composites nested deeper than {} levels",
                        limits.composite_depth()
                    ),
                ));
            }
            stack.push(Level {
                checker: CompositeChecker::new(d, at, limits.max_composite_members)?,
                remaining: h.member_count,
                at,
            });
        }
        while let Some(top) = stack.last() {
            if top.remaining > 0 {
                break;
            }
            top.checker.close(top.at)?;
            stack.pop();
        }
    }
    match stack.last() {
        None => Ok(()),
        Some(top) => {
            top.checker.close(top.at)?;
            Err(Error::format(
                FormatRule::TornComposite,
                top.at,
                "composite is missing members",
            ))
        }
    }
}

/// A non-empty buffer declaring more alignment than the file's
/// `data_buffer_alignment` `a`: no reader can keep that promise from the file's
/// placement alone, so this implementation refuses it (`Limit`, at `at`).
pub(crate) fn over_aligned(at: u64, declared: u32, a: u64) -> Error {
    Error::format(
        FormatRule::Limit,
        at,
        format_args!(
            "a buffer declares alignment {declared}, more than the file's data_buffer_alignment {a}"
        ),
    )
}
