//! [`SequentialReader`]: the optional non-seeking mode of `file-format.md` §12 over
//! any `std::io::Read`. It keeps a running byte offset, finds every boundary by
//! arithmetic, reads tensors as they come, then reads the KV section, index and
//! trailer at the end and checks that the index describes exactly what was read.
//!
//! Where the tensor region ends: with a `tensor_count_hint`, after that many
//! tensors. Without one, at the first 8-aligned boundary that does not start with
//! `HRRY` — unless it holds zeros up to the next `data_buffer_alignment` boundary and
//! `HRRY` there, the padding a writer leaves after a composite head under the
//! reference's reading (A5); inside a composite a descriptor must follow, at one of
//! those two places. This looks only where a descriptor would begin, never searches
//! data; and neither section after the region can start with those bytes: a
//! KV section would need `kv_count = 0x59525248` entries of at least 5 bytes each,
//! more than a u32 `kv_length` can hold, and an index would need more than
//! 1.4 × 10⁹ entries, far beyond [`Limits::max_tensors`](crate::Limits).
//!
//! Names are in the index, at the end of the file: items are yielded with their
//! descriptor offset, and names become available once the end has been read (or use
//! [`SequentialReader::read_all`]).

use super::catalog::over_aligned;
use super::catalog::{parse_tail, FileInfo, ReadOptions, Tail};
use super::header::FileHeader;
use super::kv::KvEntry;
use super::window::AlignedWindow;
use super::{align_up, HEADER_LEN, TRAILER_LEN};
use crate::buffer::{Buffer, BufferOwner};
use crate::composite::CompositeChecker;
use crate::error::{Error, FormatRule, Result};
use crate::tensor::{Composite, Item, Tensor};
use hurray_core::{peek_descriptor_length, Layout, TensorDescriptor, MAGIC};
use std::collections::HashMap;
use std::io::{self, Read};
use std::sync::Arc;

/// Buffers larger than this are read in growing steps, so a descriptor that claims
/// more bytes than the input holds cannot make the reader allocate them up front.
const FIRST_READ: u64 = 16 << 20;

/// What the reader recorded about one tensor, to check the index against.
#[derive(Clone, Copy, Debug)]
struct Seen {
    descriptor_offset: u64,
    descriptor_length: u32,
    /// `Some((data_offset, data_length))` for a tensor with buffers.
    data: Option<(u64, u64)>,
}

enum State {
    Tensors,
    Done,
    Failed,
}

/// Everything a sequential read produced: file facts, top-level items with names, KV.
#[derive(Clone, Debug)]
pub struct FileContents {
    /// File-level facts.
    pub info: FileInfo,
    /// Top-level items in file order with the name of their tensor or head.
    pub items: Vec<(String, Item)>,
    /// KV entries in file order.
    pub kv: Vec<KvEntry>,
}

/// Reads a file front to back without seeking (`file-format.md` §12).
///
/// Yields top-level items (tensors, and composites with all their members) with the
/// absolute offset of their (head) descriptor. After the last item the KV section,
/// index and trailer have been read and verified; [`name_of`](Self::name_of),
/// [`kv`](Self::kv) and [`info`](Self::info) then answer. Buffers are read into
/// 64-byte-aligned allocations (each payload byte written once, except for buffers
/// over 16 MiB, which grow in steps while they arrive).
pub struct SequentialReader<R: Read> {
    r: R,
    opts: ReadOptions,
    header: FileHeader,
    offset: u64,
    seen: Vec<Seen>,
    /// Bytes already read past the end of the tensor region.
    stash: Vec<u8>,
    state: State,
    tail: Option<Tail>,
    names: HashMap<u64, usize>,
}

impl<R: Read> SequentialReader<R> {
    /// Reads and checks the header (and the zero padding up to the first descriptor).
    ///
    /// Errors: see [`FileHeader::parse`]; `Truncated` when the input ends early;
    /// [`Error::Io`] from the reader.
    pub fn new(r: R) -> Result<Self> {
        Self::with_options(r, &ReadOptions::default())
    }

    /// [`new`](Self::new) with explicit options.
    pub fn with_options(mut r: R, opts: &ReadOptions) -> Result<Self> {
        let mut h = [0u8; HEADER_LEN];
        let got = read_full(&mut r, &mut h)?;
        let header = FileHeader::parse(&h[..got])?;
        let mut s = SequentialReader {
            r,
            opts: *opts,
            header,
            offset: HEADER_LEN as u64,
            seen: Vec::new(),
            stash: Vec::new(),
            state: State::Tensors,
            tail: None,
            names: HashMap::new(),
        };
        s.skip_to(header.first_descriptor_offset)?;
        Ok(s)
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// Absolute offset of the next byte to read.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// File facts, once the end of the file has been read.
    pub fn info(&self) -> Option<&FileInfo> {
        self.tail.as_ref().map(|t| &t.info)
    }

    /// KV entries, once the end of the file has been read.
    pub fn kv(&self) -> Option<&[KvEntry]> {
        self.tail.as_ref().map(|t| t.kv.as_slice())
    }

    /// The name of the tensor whose descriptor starts at `descriptor_offset`, once
    /// the end of the file has been read.
    pub fn name_of(&self, descriptor_offset: u64) -> Option<&str> {
        let t = self.tail.as_ref()?;
        self.names
            .get(&descriptor_offset)
            .map(|&i| t.entries[i].name.as_str())
    }

    /// Reads the whole file: every item with its name, the KV entries and file facts.
    ///
    /// Errors: any error of [`next_item`](Self::next_item).
    pub fn read_all(mut self) -> Result<FileContents> {
        let mut items = Vec::new();
        while let Some(it) = self.next_item()? {
            items.push(it);
        }
        let tail = self.tail.as_ref().expect("the end was read");
        let items = items
            .into_iter()
            .map(|(at, item)| {
                let name = self.names.get(&at).map(|&i| tail.entries[i].name.clone());
                (name.unwrap_or_default(), item)
            })
            .collect();
        let tail = self.tail.take().expect("the end was read");
        Ok(FileContents {
            info: tail.info,
            items,
            kv: tail.kv,
        })
    }

    /// The next top-level item and its descriptor offset; `None` after the last one,
    /// once the KV section, index and trailer have been read and checked.
    ///
    /// Errors: `Truncated` when the input ends early; the descriptor's error
    /// ([`Error::Descriptor`]); `Limit` for sizes over the [`Limits`](crate::Limits);
    /// `TornComposite`, `CompositeMember`, `CompositeDepth` for composites;
    /// `TensorCountHint` when the count hint is wrong; the rules of
    /// [`Catalog::parse`](super::Catalog::parse) for the trailer, index and KV;
    /// `IndexEntry` when the index disagrees with what was read; `Placement` when
    /// the sections do not start where the tensor region ends. After an error the
    /// reader yields nothing more.
    pub fn next_item(&mut self) -> Result<Option<(u64, Item)>> {
        match self.state {
            State::Tensors => {}
            State::Done => return Ok(None),
            State::Failed => {
                return Err(Error::Io(io::Error::other(
                    "the sequential reader failed earlier",
                )))
            }
        }
        match self.read_item() {
            Ok(Some(x)) => Ok(Some(x)),
            Ok(None) => match self.read_tail() {
                Ok(()) => {
                    self.state = State::Done;
                    Ok(None)
                }
                Err(e) => {
                    self.state = State::Failed;
                    Err(e)
                }
            },
            Err(e) => {
                self.state = State::Failed;
                Err(e)
            }
        }
    }

    fn read_item(&mut self) -> Result<Option<(u64, Item)>> {
        struct Open {
            head: Tensor,
            checker: CompositeChecker,
            members: Vec<Item>,
            remaining: u32,
            at: u64,
        }
        let mut stack: Vec<Open> = Vec::new();
        let mut first_at = None;
        loop {
            let Some((at, t)) = self.read_tensor(!stack.is_empty())? else {
                return Ok(None);
            };
            first_at.get_or_insert(at);
            if let Some(top) = stack.last_mut() {
                top.checker.member(t.descriptor(), at)?;
                top.remaining -= 1;
            }
            let mut done = match &t.descriptor().layout {
                Layout::CompositeHead(h) => {
                    let max = self.opts.limits.composite_depth();
                    if stack.len() as u64 + 1 > u64::from(max) {
                        return Err(Error::format(
                            FormatRule::CompositeDepth,
                            at,
                            format_args!("composites nested deeper than {max} levels"),
                        ));
                    }
                    stack.push(Open {
                        checker: CompositeChecker::new(
                            t.descriptor(),
                            at,
                            self.opts.limits.max_composite_members,
                        )?,
                        remaining: h.member_count,
                        head: t,
                        members: Vec::new(),
                        at,
                    });
                    None
                }
                _ => Some(Item::Tensor(t)),
            };
            loop {
                if let Some(item) = done.take() {
                    match stack.last_mut() {
                        None => return Ok(Some((first_at.unwrap_or(at), item))),
                        Some(top) => top.members.push(item),
                    }
                }
                match stack.last() {
                    Some(top) if top.remaining == 0 => {
                        let top = stack.pop().expect("checked");
                        top.checker.close(top.at)?;
                        done = Some(Item::Composite(Composite {
                            head: top.head,
                            members: top.members,
                        }));
                    }
                    _ => break,
                }
            }
        }
    }

    /// Reads the next tensor, or returns `None` at the end of the tensor region.
    /// `member` is true while a composite still expects members.
    fn read_tensor(&mut self, member: bool) -> Result<Option<(u64, Tensor)>> {
        let hint = self.header.count_hint();
        let expected = member || hint.is_some_and(|h| (self.seen.len() as u64) < h);
        if let Some(h) = hint {
            if self.seen.len() as u64 >= h {
                if member {
                    return Err(Error::format(
                        FormatRule::TornComposite,
                        self.offset,
                        format_args!("tensor_count_hint {h} ends the file inside a composite"),
                    ));
                }
                return Ok(None);
            }
        }
        if self.seen.len() as u64 >= self.opts.limits.max_tensors {
            return Err(Error::format(
                FormatRule::Limit,
                self.offset,
                format_args!("more than {} tensors", self.opts.limits.max_tensors),
            ));
        }
        let mut magic = [0u8; 4];
        self.read_exact_at(&mut magic)?;
        if magic != MAGIC {
            let a = u64::from(self.header.data_buffer_alignment);
            let here = self.offset - 4;
            // A writer that pads to the data alignment after a composite head (A5)
            // or after a last buffer (A1) leaves zeros here, and the next descriptor
            // starts at the aligned offset.
            let aligned = align_up(here, a).unwrap_or(here);
            let padded = magic == [0; 4] && aligned != here;
            if !expected {
                // Look ahead (at most `a` bytes, kept for the tail if no descriptor is
                // there). A tail cannot show zeros up to an aligned `HRRY`: its first
                // non-zero bytes are a count or a trailer offset.
                self.stash.extend_from_slice(&magic);
                if padded {
                    let want = aligned + 4 - self.offset;
                    let got = (&mut self.r).take(want).read_to_end(&mut self.stash)? as u64;
                    self.offset += got;
                    let gap = (aligned - here) as usize;
                    if got == want
                        && self.stash[..gap].iter().all(|&b| b == 0)
                        && self.stash[gap..] == MAGIC
                    {
                        self.stash.clear();
                        return self.read_descriptor_and_data(aligned).map(Some);
                    }
                }
                return Ok(None);
            }
            if !padded {
                return Err(self.missing_descriptor(here, member));
            }
            self.skip_to(aligned)?;
            self.read_exact_at(&mut magic)?;
            if magic != MAGIC {
                return Err(self.missing_descriptor(here, member));
            }
        }
        self.read_descriptor_and_data(self.offset - 4).map(Some)
    }

    /// Reads the rest of the tensor whose descriptor starts at `at` (its 4 magic
    /// bytes already consumed).
    fn read_descriptor_and_data(&mut self, at: u64) -> Result<(u64, Tensor)> {
        let magic = MAGIC;
        let mut head = [0u8; 10];
        head[..4].copy_from_slice(&magic);
        self.read_exact_at(&mut head[4..])?;
        let len =
            peek_descriptor_length(&head).map_err(|source| Error::Descriptor { at, source })?;
        if len > self.opts.limits.max_descriptor_bytes {
            return Err(Error::format(
                FormatRule::Limit,
                at + 6,
                format_args!(
                    "descriptor_length {len} exceeds the limit of {}",
                    self.opts.limits.max_descriptor_bytes
                ),
            ));
        }
        let mut bytes = head.to_vec();
        let rest = u64::from(len) - 10;
        let got = (&mut self.r).take(rest).read_to_end(&mut bytes)?;
        self.offset += got as u64;
        if (got as u64) < rest {
            return Err(truncated(self.offset));
        }
        let d = TensorDescriptor::decode_with(&bytes, &self.opts.decode)
            .map_err(|source| Error::Descriptor { at, source })?;
        let e = at + u64::from(len);
        let overflow = || Error::format(FormatRule::OutOfBounds, at, "file offsets overflow u64");
        let mut buffers = Vec::with_capacity(d.buffers.len());
        let mut starts = Vec::with_capacity(d.buffers.len());
        let data = if d.buffers.is_empty() {
            None
        } else {
            if let Some(b) = d
                .buffers
                .iter()
                .find(|b| b.byte_size > self.opts.limits.max_buffer_bytes)
            {
                return Err(Error::format(
                    FormatRule::Limit,
                    at,
                    format_args!(
                        "a buffer of {} bytes exceeds the limit of {}",
                        b.byte_size, self.opts.limits.max_buffer_bytes
                    ),
                ));
            }
            let a = u64::from(self.header.data_buffer_alignment);
            if let Some(b) = d
                .buffers
                .iter()
                .find(|b| b.byte_size > 0 && u64::from(b.alignment) > a)
            {
                return Err(over_aligned(at, b.alignment, a));
            }
            let b0 = align_up(e, a).ok_or_else(overflow)?;
            for (i, h) in d.buffers.iter().enumerate() {
                let start = if i == 0 {
                    b0
                } else {
                    align_up(self.offset, a).ok_or_else(overflow)?
                };
                self.skip_to(start)?;
                starts.push(start);
                buffers.push(self.read_buffer(h.byte_size, h.alignment as usize)?);
            }
            Some((b0, self.offset - b0))
        };
        let next = align_up(self.offset, 8).ok_or_else(overflow)?;
        self.skip_to(next)?;
        self.seen.push(Seen {
            descriptor_offset: at,
            descriptor_length: len,
            data,
        });
        let t = Tensor::new_unvalidated(d, buffers)?;
        if self.opts.decode.permissive {
            return Ok((at, t));
        }
        t.check_content_at(&|i| starts.get(i).copied().unwrap_or(at))?;
        Ok((at, t.into_validated()))
    }

    fn missing_descriptor(&self, at: u64, member: bool) -> Error {
        if member {
            Error::format(
                FormatRule::TornComposite,
                at,
                "a composite expects more members but no descriptor follows",
            )
        } else {
            Error::format(
                FormatRule::TensorCountHint,
                at,
                "tensor_count_hint promises more tensors but no descriptor follows",
            )
        }
    }

    /// Reads the KV section, index and trailer, then checks them against what was read.
    fn read_tail(&mut self) -> Result<()> {
        let region_end = self.offset - self.stash.len() as u64;
        let l = &self.opts.limits;
        let cap = l
            .max_kv_bytes
            .saturating_add(l.max_index_bytes)
            .saturating_add(8 + TRAILER_LEN as u64);
        let mut tail = std::mem::take(&mut self.stash);
        let got = (&mut self.r)
            .take(cap.saturating_add(1))
            .read_to_end(&mut tail)?;
        self.offset += got as u64;
        if tail.len() as u64 > cap {
            return Err(Error::format(
                FormatRule::Limit,
                region_end,
                format_args!("more than {cap} bytes follow the tensor region"),
            ));
        }
        let t = parse_tail(&tail, region_end, region_end, &self.header, &self.opts)?;
        let first_section = match t.info.trailer.kv() {
            Some((o, _)) => o.min(t.info.trailer.index_offset),
            None => t.info.trailer.index_offset,
        };
        if first_section != region_end {
            let rule = if self.header.count_hint().is_some() {
                FormatRule::TensorCountHint
            } else {
                FormatRule::Placement
            };
            return Err(Error::format(
                rule,
                region_end,
                format_args!(
                    "the tensor region ends at {region_end} but the first section starts at {first_section}"
                ),
            ));
        }
        if t.entries.len() != self.seen.len() {
            return Err(Error::format(
                FormatRule::IndexEntry,
                t.info.trailer.index_offset,
                format_args!(
                    "the index lists {} tensors but {} were read",
                    t.entries.len(),
                    self.seen.len()
                ),
            ));
        }
        let mut order: Vec<usize> = (0..t.entries.len()).collect();
        order.sort_by_key(|&i| t.entries[i].descriptor_offset);
        for (s, &i) in self.seen.iter().zip(&order) {
            let e = &t.entries[i];
            let ok = e.descriptor_offset == s.descriptor_offset
                && e.descriptor_length == s.descriptor_length
                && match s.data {
                    Some((o, l)) => e.data_offset == o && e.data_length == l,
                    None => e.data_length == 0,
                };
            if !ok {
                return Err(Error::format(
                    FormatRule::IndexEntry,
                    t.entry_offsets[i],
                    format_args!(
                        "index entry {:?} does not describe the tensor read at {}",
                        e.name, s.descriptor_offset
                    ),
                ));
            }
            self.names.insert(e.descriptor_offset, i);
        }
        self.tail = Some(t);
        Ok(())
    }

    /// Reads a buffer of `size` bytes into an allocation aligned to `align` (at least
    /// 64; at most `data_buffer_alignment`, checked by the caller).
    fn read_buffer(&mut self, size: u64, align: usize) -> Result<Buffer> {
        if size == 0 {
            return Ok(Buffer::empty());
        }
        let at = self.offset;
        let too_big = || {
            Error::format(
                FormatRule::Limit,
                at,
                format_args!("cannot allocate a buffer of {size} bytes"),
            )
        };
        usize::try_from(size).map_err(|_| too_big())?;
        let mut cap = size.min(FIRST_READ);
        let mut buf = AlignedWindow::zeroed(cap as usize, align).ok_or_else(too_big)?;
        let mut filled = 0usize;
        loop {
            let got = read_full(&mut self.r, &mut buf.as_mut_slice()[filled..])?;
            self.offset += got as u64;
            filled += got;
            if filled < cap as usize {
                return Err(truncated(self.offset));
            }
            if cap == size {
                return Ok(Buffer::new(Arc::new(buf)));
            }
            cap = cap.saturating_mul(2).min(size);
            let mut bigger = AlignedWindow::zeroed(cap as usize, align).ok_or_else(too_big)?;
            bigger.as_mut_slice()[..filled].copy_from_slice(&buf.bytes()[..filled]);
            buf = bigger;
        }
    }

    /// Reads exactly `buf.len()` bytes or fails with `Truncated`.
    fn read_exact_at(&mut self, buf: &mut [u8]) -> Result<()> {
        let got = read_full(&mut self.r, buf)?;
        self.offset += got as u64;
        if got < buf.len() {
            return Err(truncated(self.offset));
        }
        Ok(())
    }

    /// Skips (padding) bytes up to absolute offset `to`.
    fn skip_to(&mut self, to: u64) -> Result<()> {
        let n = to.saturating_sub(self.offset);
        let got = io::copy(&mut (&mut self.r).take(n), &mut io::sink())?;
        self.offset += got;
        if got < n {
            return Err(truncated(self.offset));
        }
        Ok(())
    }
}

impl<R: Read> Iterator for SequentialReader<R> {
    type Item = Result<(u64, Item)>;

    /// Same as [`SequentialReader::next_item`]; stops after the first error.
    fn next(&mut self) -> Option<Self::Item> {
        match self.state {
            State::Failed => None,
            _ => self.next_item().transpose(),
        }
    }
}

fn truncated(at: u64) -> Error {
    Error::format(FormatRule::Truncated, at, "the input ended early")
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}
