//! The random-access reader core (`file-format.md` §11), sans-io: given the bytes of a
//! whole file (from memory or a mapping), validate everything the index and KV
//! section say, decode every descriptor, check the composite structure, and record
//! where each tensor's buffers lie. Nothing here slices or allocates from a value in
//! the file before checking it against the file size and the [`Limits`].

use super::header::FileHeader;
use super::index::IndexEntry;
use super::index_table::{Index, IndexEntryRef, IndexIter, IndexTable};
use super::kv::KvEntry;
use super::kv_table::{Kv, KvTable, KvValueRef};
use super::placement::relative_buffer_offsets;
use super::trailer::{crc32c, Trailer};
use super::{align_up, flags, MIN_FILE_LEN, TRAILER_LEN};
use crate::buffer::BufferOwner;
use crate::composite::CompositeChecker;
use crate::error::{Error, FormatRule, Result};
use crate::limits::Limits;
use crate::tensor::{Composite, Item, Tensor};
use hurray_core::{peek_descriptor_length, DecodeOptions, Layout, TensorDescriptor};
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

/// What the end of a file holds, validated, as owned values (the sequential reader's
/// form; see [`parse_tail`]).
pub(crate) struct Tail {
    pub(crate) info: FileInfo,
    pub(crate) entries: Vec<IndexEntry>,
    pub(crate) entry_offsets: Vec<u64>,
    pub(crate) kv: Vec<KvEntry>,
}

/// What the end of a file holds, validated, as compact tables over its bytes (the
/// random-access reader's form).
pub(crate) struct TailTables {
    pub(crate) info: FileInfo,
    pub(crate) index: IndexTable,
    /// The index section, relative to the bytes parsed.
    pub(crate) index_range: Range<usize>,
    pub(crate) kv: KvTable,
    /// The KV section (empty when there is none), relative to the bytes parsed.
    pub(crate) kv_range: Range<usize>,
}

/// Parses the end of a file into owned entries: [`parse_tail_tables`], then a copy
/// of every index entry and KV value.
pub(crate) fn parse_tail(
    tail: &[u8],
    base: u64,
    lower: u64,
    header: &FileHeader,
    opts: &ReadOptions,
) -> Result<Tail> {
    let t = parse_tail_tables(tail, base, lower, header, opts)?;
    let index = t
        .index
        .view(&tail[t.index_range.clone()], t.info.trailer.index_offset);
    Ok(Tail {
        info: t.info,
        entries: index.iter().map(|e| e.to_owned()).collect(),
        entry_offsets: index.iter().map(|e| e.offset).collect(),
        kv: t.kv.view(&tail[t.kv_range]).to_vec(),
    })
}

/// Parses the end of a file. `tail` holds the file's bytes from absolute offset
/// `base` to the end; sections must lie at or after `lower` (the first descriptor
/// offset, or where a sequential reader stopped reading tensors).
pub(crate) fn parse_tail_tables(
    tail: &[u8],
    base: u64,
    lower: u64,
    header: &FileHeader,
    opts: &ReadOptions,
) -> Result<TailTables> {
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
    let index_range = section(
        trailer.index_offset,
        trailer.index_length,
        limits.max_index_bytes,
        "index",
        t_at,
        t_at,
        base,
        lower,
    )?;
    let index_bytes = &tail[index_range.clone()];
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
    let index = IndexTable::parse(
        index_bytes,
        trailer.index_offset,
        header.has(flags::SORTED_INDEX),
        limits,
    )?;

    // The KV section (§11 step 8).
    let (kv, kv_range) = match trailer.kv() {
        None => (KvTable::default(), 0..0),
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
            (KvTable::parse(&tail[r.clone()], off, limits)?, r)
        }
    };
    Ok(TailTables {
        info: FileInfo {
            header: *header,
            trailer,
            file_len,
            crc,
        },
        index,
        index_range,
        kv,
        kv_range,
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

/// A validated file: header, trailer, KV, index and every descriptor checked, with
/// the composite structure checked. Built by [`Catalog::parse`] from the whole file,
/// whose owner it keeps (one reference).
///
/// What it holds besides: the index as 4 bytes per entry (plus 4 for the name order
/// unless the names already ascend, plus 4 for the file order unless the index is in
/// ascending `descriptor_offset` order), and the KV section as a [`KvTable`] (8 bytes
/// per entry, a step table for long string arrays). Names, KV values and
/// descriptors are read from the file's bytes when asked for;
/// [`heap_bytes`](Self::heap_bytes) says what the tables cost.
#[derive(Clone)]
pub struct Catalog {
    file: Arc<dyn BufferOwner>,
    info: FileInfo,
    decode: DecodeOptions,
    index: IndexTable,
    index_range: Range<usize>,
    kv: KvTable,
    kv_range: Range<usize>,
    /// Entry positions in ascending `descriptor_offset` (file) order; `None` when
    /// that is the index order.
    order: Option<Vec<u32>>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("info", &self.info)
            .field("tensors", &self.len())
            .field("kv_entries", &self.kv.len())
            .finish()
    }
}

/// An extent of the file that must not overlap another. `rank` is its place in the
/// order extents are listed in: header, index, KV, then per index entry its
/// descriptor and its data; extents sort by `(start, end, rank)`.
#[derive(Clone, Copy)]
struct Extent {
    start: u64,
    end: u64,
    field_at: u64,
    what: &'static str,
    rank: u64,
}

impl Extent {
    fn key(&self) -> (u64, u64, u64) {
        (self.start, self.end, self.rank)
    }
}

impl Catalog {
    /// Validates the file held by `file` (all of its bytes) and records where its
    /// contents lie.
    ///
    /// Checks, in order: header (§3–§5), size ≥ 104, trailer (§9), index bounds, CRC
    /// and entries (§8), KV (§7), then per index entry: descriptor placement, bounds
    /// and limits, `descriptor_length` against the descriptor, the descriptor itself,
    /// data placement (`align(end of descriptor, A)`), `data_length` against the
    /// buffer table (§6.1), data bounds; then that no two descriptors, data ranges or
    /// sections overlap, that the first descriptor sits at `first_descriptor_offset`,
    /// and the composite structure and rules (§6.4).
    ///
    /// Memory: besides the tables it keeps (see [`Catalog`]), one bit per entry and
    /// one descriptor at a time while it checks; strings and bools are checked in
    /// place.
    ///
    /// Errors: a [`FormatRule`] with the absolute offset of the offending field
    /// (index-entry problems point into the index entry), or
    /// [`Error::Descriptor`] with the descriptor's offset. Never panics on any input.
    pub fn parse(file: Arc<dyn BufferOwner>, opts: &ReadOptions) -> Result<Catalog> {
        let bytes = file.bytes();
        let header = FileHeader::parse(bytes)?;
        let tail = parse_tail_tables(bytes, 0, header.first_descriptor_offset, &header, opts)?;
        let limits = &opts.limits;
        let t_at = tail.info.file_len - TRAILER_LEN as u64;
        let a = u64::from(header.data_buffer_alignment);
        let index = tail.index.view(
            &bytes[tail.index_range.clone()],
            tail.info.trailer.index_offset,
        );

        // Every entry, in index order; only whether it is a composite head is kept.
        let mut heads = vec![0u64; index.len().div_ceil(64)];
        for (i, e) in index.iter().enumerate() {
            let d = check_entry(bytes, &e, &header, t_at, a, limits, &opts.decode)?;
            if matches!(d.layout, Layout::CompositeHead(_)) {
                heads[i / 64] |= 1 << (i % 64);
            }
        }
        let order = file_order(&index);
        let at = |p: usize| order.as_ref().map_or(p, |o| o[p] as usize);
        check_overlaps(&index, &at, &header, &tail.info, t_at)?;
        if !index.is_empty() {
            let e = index.get(at(0)).expect("position in range");
            if e.descriptor_offset != header.first_descriptor_offset {
                return Err(Error::format(
                    FormatRule::Placement,
                    e.field_offsets()[0],
                    format_args!(
                        "the first descriptor is at {}, not at first_descriptor_offset {}",
                        e.descriptor_offset, header.first_descriptor_offset
                    ),
                ));
            }
        }
        let is_head = |i: usize| heads[i / 64] & (1 << (i % 64)) != 0;
        check_composites(bytes, &index, &at, &is_head, limits, &opts.decode)?;
        drop(heads);
        Ok(Catalog {
            info: tail.info,
            decode: opts.decode,
            index: tail.index,
            index_range: tail.index_range,
            kv: tail.kv,
            kv_range: tail.kv_range,
            order,
            file,
        })
    }

    /// File-level facts.
    pub fn info(&self) -> &FileInfo {
        &self.info
    }

    /// Number of index entries (tensors, composite heads and members included).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when the file holds no tensors.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    fn index(&self) -> Index<'_> {
        self.index.view(
            &self.file.bytes()[self.index_range.clone()],
            self.info.trailer.index_offset,
        )
    }

    /// Index entries in index order, read from the file (borrowed).
    pub fn entries(&self) -> IndexIter<'_> {
        self.index().iter()
    }

    /// Index entry `i` (index order), `None` past the end.
    pub fn entry(&self, i: usize) -> Option<IndexEntryRef<'_>> {
        self.index().get(i)
    }

    /// KV entries in file order, each value decoded when read (borrowed).
    pub fn kv(&self) -> Kv<'_> {
        self.kv.view(&self.file.bytes()[self.kv_range.clone()])
    }

    /// The value stored under `key` (byte-exact match).
    pub fn kv_get(&self, key: &str) -> Option<KvValueRef<'_>> {
        self.kv().value(key)
    }

    /// Index position of the tensor named `name` (binary search).
    pub fn position(&self, name: &str) -> Option<usize> {
        self.index().position(name)
    }

    /// The descriptor of the entry at index position `i`, decoded from the file (it
    /// was validated at open; each call decodes it again and returns a new value).
    /// `None` past the end, or if the file's bytes changed since they were validated.
    pub fn descriptor_at(&self, i: usize) -> Option<Arc<TensorDescriptor>> {
        let e = self.entry(i)?;
        decode_at(self.file.bytes(), &e, &self.decode)
            .ok()
            .map(Arc::new)
    }

    /// Absolute byte ranges of the buffers of entry `i`, in buffer-table order
    /// (validated at parse time to lie inside the file).
    pub fn buffer_ranges(&self, i: usize) -> Option<Vec<Range<u64>>> {
        let d = self.descriptor_at(i)?;
        let e = self.entry(i)?;
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
    pub fn file_order(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        (0..self.len()).map(|p| self.order_at(p))
    }

    /// The top-level entries in file order, as `(index position, is a composite
    /// head)`: plain tensors and composite heads, without the members of composites
    /// (§6.4), which it skips. Each entry's descriptor is decoded as it is passed
    /// (to find heads and their member counts) and not kept, so walking a file costs
    /// no memory per entry, unlike [`build_items`](Self::build_items).
    pub fn top_level(&self) -> impl Iterator<Item = (usize, bool)> + '_ {
        // Members of the current top-level composite still to skip (nested heads
        // add theirs).
        let mut skip = 0u64;
        self.file_order().filter_map(move |i| {
            let members = self.descriptor_at(i).and_then(|d| match &d.layout {
                Layout::CompositeHead(h) => Some(u64::from(h.member_count)),
                _ => None,
            });
            if skip > 0 {
                skip = skip - 1 + members.unwrap_or(0);
                return None;
            }
            skip = members.unwrap_or(0);
            Some((i, members.is_some()))
        })
    }

    /// The index position at file-order position `p`.
    fn order_at(&self, p: usize) -> usize {
        self.order.as_ref().map_or(p, |o| o[p] as usize)
    }

    /// The file-order position of index position `i` (binary search: descriptor
    /// offsets are distinct and ascending in file order).
    fn rank(&self, i: usize) -> usize {
        let Some(o) = &self.order else {
            return i;
        };
        let index = self.index();
        let key = |j: usize| index.get(j).map_or(0, |e| e.descriptor_offset);
        let want = key(i);
        o.partition_point(|&j| key(j as usize) < want)
    }

    /// Bytes of memory the catalog's tables hold (index, file order, KV), for
    /// accounting; the file's bytes are not counted.
    pub fn heap_bytes(&self) -> usize {
        self.index.heap_bytes()
            + self.kv.heap_bytes()
            + self.order.as_ref().map_or(0, |o| 4 * o.capacity())
    }

    /// Builds the item that starts at entry `i`: the tensor itself, or for a composite
    /// head the composite with all its members (§6.4: the entries that follow it in
    /// file order). `tensor` makes the tensor of an entry.
    pub fn build_item(&self, i: usize, tensor: &mut dyn FnMut(usize) -> Tensor) -> Item {
        let mut pos = self.rank(i);
        self.build_from(&mut pos, tensor)
    }

    /// Top-level items in file order, as `(index position of the tensor or head, item)`.
    pub fn build_items(&self, tensor: &mut dyn FnMut(usize) -> Tensor) -> Vec<(usize, Item)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < self.len() {
            let i = self.order_at(pos);
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
            let i = self.order_at(*pos);
            *pos += 1;
            let t = tensor(i);
            let mut done = match &t.descriptor().layout {
                Layout::CompositeHead(h) => {
                    let remaining = h.member_count;
                    stack.push(Open {
                        head: t,
                        members: Vec::new(),
                        remaining,
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
            if *pos >= self.len() && !stack.is_empty() {
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

/// Entry positions in ascending `(descriptor_offset, end of descriptor, position)`
/// order, or `None` when the index order already has strictly ascending descriptor
/// offsets (what writers produce).
fn file_order(index: &Index<'_>) -> Option<Vec<u32>> {
    let ascending = index
        .iter()
        .zip(index.iter().skip(1))
        .all(|(a, b)| a.descriptor_offset < b.descriptor_offset);
    if ascending {
        return None;
    }
    let key = |i: u32| {
        let e = index.get(i as usize).expect("position in range");
        (
            e.descriptor_offset,
            e.descriptor_offset + u64::from(e.descriptor_length),
            i,
        )
    };
    let mut o: Vec<u32> = (0..index.len() as u32).collect();
    o.sort_unstable_by_key(|&i| key(i));
    Some(o)
}

/// Checks that no two of the header, the index, the KV section, the descriptors and
/// the data ranges overlap (§14 item 27). The extents are visited in `(start, end,
/// rank)` order by merging three sorted runs (sections; descriptors in file order;
/// data ranges in file order), so nothing is allocated per entry; a file whose data
/// ranges are not in the order of their descriptors (only possible in a file that
/// fails this check) is checked by sorting every extent instead. Either way the
/// overlap reported is the first adjacent pair in that order.
fn check_overlaps(
    index: &Index<'_>,
    at: &dyn Fn(usize) -> usize,
    header: &FileHeader,
    info: &FileInfo,
    t_at: u64,
) -> Result<()> {
    let t = &info.trailer;
    let mut sections = vec![
        Extent {
            start: 0,
            end: header.first_descriptor_offset,
            field_at: 20,
            what: "header",
            rank: 0,
        },
        Extent {
            start: t.index_offset,
            end: t.index_offset + t.index_length,
            field_at: t_at,
            what: "index",
            rank: 1,
        },
    ];
    if let Some((o, l)) = t.kv() {
        sections.push(Extent {
            start: o,
            end: o + u64::from(l),
            field_at: t_at + 16,
            what: "KV section",
            rank: 2,
        });
    }
    sections.sort_by_key(Extent::key);
    let descriptor = |i: usize| {
        let e = index.get(i).expect("position in range");
        Extent {
            start: e.descriptor_offset,
            end: e.descriptor_offset + u64::from(e.descriptor_length),
            field_at: e.field_offsets()[0],
            what: "descriptor",
            rank: 3 + 2 * i as u64,
        }
    };
    let data = |i: usize| {
        let e = index.get(i).expect("position in range");
        (e.data_length > 0).then(|| Extent {
            start: e.data_offset,
            end: e.data_offset + e.data_length,
            field_at: e.field_offsets()[2],
            what: "tensor data",
            rank: 4 + 2 * i as u64,
        })
    };
    let n = index.len();
    let descriptors = (0..n).map(|p| descriptor(at(p)));
    let datas = (0..n).filter_map(|p| data(at(p)));
    let in_order = datas
        .clone()
        .zip(datas.clone().skip(1))
        .all(|(a, b)| a.key() <= b.key());
    if !in_order {
        let mut all = sections;
        for i in 0..n {
            all.push(descriptor(i));
            all.extend(data(i));
        }
        all.sort_by_key(Extent::key);
        return first_overlap(all.into_iter());
    }
    first_overlap(Merge {
        runs: [run(sections.into_iter()), run(descriptors), run(datas)],
    })
}

/// The first pair of extents, in the order given, where one starts before the one
/// before it ends.
fn first_overlap(mut extents: impl Iterator<Item = Extent>) -> Result<()> {
    let Some(mut prev) = extents.next() else {
        return Ok(());
    };
    for x in extents {
        if x.start < prev.end {
            return Err(Error::format(
                FormatRule::Overlap,
                x.field_at,
                format_args!(
                    "{} [{}, {}) overlaps {} [{}, {})",
                    x.what, x.start, x.end, prev.what, prev.start, prev.end
                ),
            ));
        }
        prev = x;
    }
    Ok(())
}

type Run<'a> = std::iter::Peekable<Box<dyn Iterator<Item = Extent> + 'a>>;

fn run<'a>(it: impl Iterator<Item = Extent> + 'a) -> Run<'a> {
    let b: Box<dyn Iterator<Item = Extent> + 'a> = Box::new(it);
    b.peekable()
}

/// Merges sorted runs of extents into one sorted sequence.
struct Merge<'a> {
    runs: [Run<'a>; 3],
}

impl Iterator for Merge<'_> {
    type Item = Extent;
    fn next(&mut self) -> Option<Extent> {
        let mut best: Option<usize> = None;
        for k in 0..self.runs.len() {
            if let Some(x) = self.runs[k].peek() {
                let better = match best {
                    None => true,
                    Some(b) => x.key() < self.runs[b].peek().expect("peeked").key(),
                };
                if better {
                    best = Some(k);
                }
            }
        }
        self.runs[best?].next()
    }
}

/// Decodes the descriptor of entry `e` (whose bounds were checked).
fn decode_at(
    file: &[u8],
    e: &IndexEntryRef<'_>,
    decode: &DecodeOptions,
) -> Result<TensorDescriptor> {
    let d0 = e.descriptor_offset;
    let bytes = usize::try_from(d0)
        .ok()
        .and_then(|s| file.get(s..s.checked_add(e.descriptor_length as usize)?))
        .ok_or_else(|| {
            Error::format(
                FormatRule::OutOfBounds,
                e.field_offsets()[0],
                "descriptor outside the file",
            )
        })?;
    TensorDescriptor::decode_with(bytes, decode)
        .map_err(|source| Error::Descriptor { at: d0, source })
}

/// Per-entry checks (§11 steps 9–10, §14 items 12, 16, 26–28); returns the decoded
/// descriptor.
#[allow(clippy::too_many_arguments)]
fn check_entry(
    file: &[u8],
    e: &IndexEntryRef<'_>,
    header: &FileHeader,
    t_at: u64,
    a: u64,
    limits: &Limits,
    decode: &DecodeOptions,
) -> Result<TensorDescriptor> {
    let [d_at, dl_at, data_at, len_at] = e.field_offsets();
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
///
/// `at(p)` is the index position at file-order position `p`; `is_head(i)` says
/// whether entry `i` is a composite head. Only heads and the members of open
/// composites are decoded (again: `parse` decoded every descriptor once to check it).
fn check_composites(
    file: &[u8],
    index: &Index<'_>,
    at: &dyn Fn(usize) -> usize,
    is_head: &dyn Fn(usize) -> bool,
    limits: &Limits,
    decode: &DecodeOptions,
) -> Result<()> {
    struct Level {
        checker: CompositeChecker,
        remaining: u32,
        at: u64,
    }
    let mut stack: Vec<Level> = Vec::new();
    for p in 0..index.len() {
        let i = at(p);
        if stack.is_empty() && !is_head(i) {
            continue;
        }
        let e = index.get(i).expect("position in range");
        let d = decode_at(file, &e, decode)?;
        let d = &d;
        let at = e.descriptor_offset;
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
