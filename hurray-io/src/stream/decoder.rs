//! The sans-io stream decoder (`streams-and-transport.md` A.2, A.4–A.6).
//!
//! # Driving it
//!
//! ```text
//! loop {
//!     while let Some(item) = dec.next_item() { use(item?) }   // completed items first
//!     let want = dec.demand();                                // where the next bytes go
//!     if want.is_empty() { break }                            // failed or finished
//!     let n = source.read(want)?;                             // the caller's own I/O
//!     if n == 0 { dec.finish()?; break }                      // end of input: classify it
//!     dec.advance(n);                                         // n bytes were written
//! }
//! ```
//!
//! # Where bytes land
//!
//! [`demand`](StreamDecoder::demand) returns one of three regions:
//!
//! 1. the first 10 bytes of a descriptor, in a fixed scratch array;
//! 2. the rest of the descriptor, in a scratch vector sized only after
//!    `descriptor_length` passed [`Limits::max_descriptor_bytes`];
//! 3. the unfilled part of the allocation that becomes the buffer handed out in the
//!    tensor, 64-byte aligned (or aligned to the handle's declared `alignment`, up to
//!    [`MAX_HONORED_ALIGNMENT`]). Payload bytes are therefore written once, by the
//!    caller's read, and never moved again (but see the allocation policy).
//!
//! # Allocation policy
//!
//! A byte stream carries no total length, so a reader cannot check a claimed
//! `byte_size` against the bytes that exist; the claim is all it has until the bytes
//! arrive. Every `byte_size` is first checked against [`Limits::max_buffer_bytes`] (a
//! hard rejection before anything is allocated). Below that ceiling:
//!
//! - a buffer of at most `eager_alloc` bytes ([`DEFAULT_EAGER_ALLOC`], 1 GiB, by
//!   default; see [`with_eager_alloc`](StreamDecoder::with_eager_alloc)) is allocated
//!   once, at its final size, and filled in place. The allocation is zeroed memory
//!   from the OS ([`AlignedBuf::zeroed`](crate::AlignedBuf::zeroed)), so it reserves address space but commits
//!   physical pages only as payload bytes arrive: resident memory follows the input,
//!   not the claim;
//! - a larger buffer starts with a 16 MiB allocation and doubles each time the
//!   received bytes fill it (each growth copies the bytes received so far), so even
//!   the address space reserved is at most `max(16 MiB, 2 × bytes received)`: a short
//!   hostile input claiming 4 GiB costs 16 MiB, not 4 GiB. The price for an honest
//!   buffer above the ceiling is the growth copies (less than one extra pass in
//!   total); a caller reading a trusted source raises `eager_alloc`.
//!
//! Descriptor scratch grows the same way from 4 KiB, so a descriptor claiming 16 MiB
//! costs memory only as its bytes arrive.
//!
//! With a [`BufferPool`] ([`with_pool`](StreamDecoder::with_pool)) the same sizes are
//! requested from the pool, which hands back an idle allocation of a fitting size
//! (already mapped, so filling it takes no page faults, but also already resident:
//! up to twice the request is committed from the start) or a fresh one.
//!
//! # Pushing bytes in
//!
//! A decoder is also a [`std::io::Write`]: whatever is written to it is decoded, as
//! by [`feed`](StreamDecoder::feed). A [`StreamWriter`](crate::StreamWriter) over a
//! `&mut StreamDecoder` is an in-process stream whose payload bytes are copied once,
//! from the writer's buffers straight into the reader's final buffers.

use crate::alloc::{BufferAllocator, BufferMemory, Shown};
use crate::buffer::{Buffer, BUFFER_ALIGN};
use crate::composite::CompositeChecker;
use crate::error::{Error, FormatRule, Result};
use crate::limits::Limits;
use crate::pool::{BufferPool, PooledBuf};
use crate::tensor::{is_head, Composite, Item, Tensor};
use hurray_core::{
    peek_descriptor_length, BufferHandle, DecodeOptions, SyncMode, TensorDescriptor, HEADER_LEN,
};
use std::collections::VecDeque;
use std::sync::Arc;

/// Default for [`StreamDecoder::with_eager_alloc`]: buffers up to 1 GiB are
/// allocated at their final size as soon as their descriptor is accepted (address
/// space only; pages are committed as bytes arrive).
pub const DEFAULT_EAGER_ALLOC: usize = 1 << 30;

/// Largest declared buffer `alignment` (bytes) the decoder honours by placing the
/// buffer at such an address (`streams-and-transport.md` A.2 step 4): 2 MiB, the
/// largest `data_buffer_alignment` a file may use
/// ([`MAX_DATA_ALIGNMENT`](crate::file::MAX_DATA_ALIGNMENT)).
///
/// Honouring an alignment costs up to `alignment - 64` bytes of slack before the
/// buffer. Once that makes the allocation 1 MiB or more it is an anonymous mapping
/// ([`AlignedBuf::zeroed`](crate::AlignedBuf::zeroed)): the slack is address space that is never touched, so it
/// commits no memory. A non-empty buffer declaring more is rejected with
/// [`FormatRule::Limit`], and the stream encoders refuse to emit one (same rule), so
/// a writer never produces a stream this reader rejects.
pub const MAX_HONORED_ALIGNMENT: u32 = crate::file::MAX_DATA_ALIGNMENT;

/// Bytes of a descriptor read before `descriptor_length` is known (A.2 step 2).
const PEEK_LEN: usize = 10;
/// First size of the descriptor scratch window.
const DESC_FIRST_WINDOW: usize = 4096;
/// First allocation for a buffer larger than `eager_alloc`; it then doubles.
const GROW_START: usize = 16 << 20;
/// Descriptor scratch above this capacity is released after use.
const DESC_KEEP_CAPACITY: usize = 64 << 10;

/// A sans-io decoder of the bare streaming format: the caller moves bytes in, the
/// decoder yields whole [`Item`]s (a tensor, or a composite with all of its members).
///
/// See the module documentation for the driving loop and the allocation policy. The
/// state machine is explicit: it is always in exactly one of *header* (first 10
/// descriptor bytes), *descriptor* (the rest), *buffer* (payload of one buffer),
/// *failed* or *finished*, and [`demand`](Self::demand) is empty exactly in the last
/// two.
///
/// Checks, all before any allocation for the data they describe: descriptor length
/// against [`Limits::max_descriptor_bytes`]; full strict (or configured) descriptor
/// decoding; each buffer's `byte_size` against [`Limits::max_buffer_bytes`] and its
/// `alignment` against [`MAX_HONORED_ALIGNMENT`]; in cross-machine mode
/// ([`Limits::cross_machine`], A.5) `sync_mode = 0` on every handle; composite
/// per-member rules as each member's descriptor arrives, close-time rules at the last
/// member, nesting against [`Limits::max_composite_depth`] and each head's
/// `member_count` against [`Limits::max_composite_members`] (A.4, `layouts.md`
/// §2.11). Every error offset is an absolute byte offset in the stream.
///
/// After the first error the decoder is *failed*: items completed before the error
/// are still returned by [`next_item`](Self::next_item), then the error once, then
/// `None`.
pub struct StreamDecoder {
    limits: Limits,
    opts: DecodeOptions,
    eager: usize,
    /// Where buffer allocations come from (fresh memory when `None`).
    alloc: Option<Arc<dyn BufferAllocator>>,
    phase: Phase,
    /// Bytes consumed so far (absolute stream offset of the next byte).
    pos: u64,
    /// Absolute offset of the tensor being read.
    tensor_at: u64,
    /// The first 10 bytes of the descriptor being read.
    peek: [u8; PEEK_LEN],
    /// Descriptor scratch; its length is the window currently allocated.
    desc: Vec<u8>,
    /// Open composites, outermost first.
    stack: Vec<Frame>,
    /// Completed top-level items not yet taken.
    ready: VecDeque<Item>,
}

/// The decoder's state (data carried by the state that needs it).
enum Phase {
    /// Reading bytes `filled..10` of a descriptor header.
    Header { filled: usize },
    /// Reading bytes `filled..len` of a descriptor (into `StreamDecoder::desc`).
    Descriptor { len: usize, filled: usize },
    /// Reading buffer `tensor.buffers.len()` of a tensor.
    Buffer { tensor: Pending, fill: Fill },
    /// An error was found; `reported` once it was handed out.
    Failed { error: Error, reported: bool },
    /// `finish` saw a clean end of stream.
    Finished,
}

/// A tensor whose descriptor was accepted and whose buffers are arriving.
struct Pending {
    at: u64,
    /// Absolute offset of the tensor's first buffer byte (just past the descriptor).
    data_at: u64,
    descriptor: Arc<TensorDescriptor>,
    buffers: Vec<Buffer>,
}

/// The allocation a buffer is read into.
struct Fill {
    /// Starts at the buffer's first byte (aligned as declared).
    buf: Box<dyn BufferMemory>,
    /// Bytes of the buffer the allocation can hold now (`≤ size`).
    cap: usize,
    /// Bytes received.
    filled: usize,
    /// The buffer's `byte_size`.
    size: usize,
    /// Alignment the first byte must have.
    align: usize,
}

/// An open composite.
struct Frame {
    head: Tensor,
    checker: CompositeChecker,
    members: Vec<Item>,
}

/// What `advance` has to do after counting the bytes.
enum Step {
    Nothing,
    HeaderDone,
    DescriptorDone,
    GrowDescriptor,
    BufferDone,
    GrowBuffer,
}

impl Default for StreamDecoder {
    fn default() -> Self {
        StreamDecoder::new(Limits::default())
    }
}

impl StreamDecoder {
    /// A decoder with these limits, strict descriptor decoding and the default eager
    /// allocation ceiling ([`DEFAULT_EAGER_ALLOC`]).
    pub fn new(limits: Limits) -> StreamDecoder {
        StreamDecoder {
            limits,
            opts: DecodeOptions::default(),
            eager: DEFAULT_EAGER_ALLOC,
            alloc: None,
            phase: Phase::Header { filled: 0 },
            pos: 0,
            tensor_at: 0,
            peek: [0; PEEK_LEN],
            desc: Vec::new(),
            stack: Vec::new(),
            ready: VecDeque::new(),
        }
    }

    /// Uses these descriptor decoding options (permissive mode, private-tag
    /// agreement, tiling depth; `descriptor.md` §15) instead of strict decoding.
    pub fn with_decode_options(mut self, opts: DecodeOptions) -> StreamDecoder {
        self.opts = opts;
        self
    }

    /// Sets the eager allocation ceiling, in bytes: a buffer of at most this size is
    /// allocated at its final size when its descriptor is accepted (payload written
    /// once); a larger one grows by doubling as bytes arrive. `usize::MAX` trusts every
    /// claim up to [`Limits::max_buffer_bytes`]. See the module documentation.
    pub fn with_eager_alloc(mut self, bytes: usize) -> StreamDecoder {
        self.eager = bytes;
        self
    }

    /// Takes buffer allocations from `pool` (and so returns them there when the
    /// tensors that hold them are dropped) instead of fresh memory from the system.
    ///
    /// For a steady flow of tensors of similar sizes this turns the first-touch page
    /// faults of fresh memory into a copy into memory that is already mapped. A
    /// reused allocation is at most twice the size of the buffer read into it. See
    /// [`BufferPool`](crate::pool::BufferPool).
    pub fn with_pool(self, pool: BufferPool) -> StreamDecoder {
        self.with_allocator(Arc::new(pool))
    }

    /// Sets or removes (`None`: fresh memory) the pool buffers are allocated from,
    /// for buffers started after the call; see [`with_pool`](Self::with_pool).
    pub fn set_pool(&mut self, pool: Option<BufferPool>) {
        self.set_allocator(pool.map(|p| Arc::new(p) as Arc<dyn BufferAllocator>));
    }

    /// Takes buffer memory from `alloc` instead of fresh memory from the system
    /// (see [`BufferAllocator`](crate::alloc::BufferAllocator)). Each buffer's
    /// memory is requested once its descriptor is accepted, with the same sizes as
    /// the default policy (module documentation), and dropped when the last
    /// [`Buffer`] over it goes.
    pub fn with_allocator(mut self, alloc: Arc<dyn BufferAllocator>) -> StreamDecoder {
        self.alloc = Some(alloc);
        self
    }

    /// Sets or removes (`None`: fresh memory) the allocator of buffers started after
    /// the call; see [`with_allocator`](Self::with_allocator).
    pub fn set_allocator(&mut self, alloc: Option<Arc<dyn BufferAllocator>>) {
        self.alloc = alloc;
    }

    /// The limits this decoder enforces.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Bytes consumed so far: the absolute stream offset of the next byte expected.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Bytes of the allocation the buffer being received is read into (0 when no
    /// buffer is in progress): never more than `max(eager_alloc, 2 × bytes received
    /// of it)`. Alignment slack, and the unused tail of a larger allocation reused
    /// from a [pool](Self::with_pool) (at most twice the request), come on top. Lets
    /// a caller (and the tests) see what a claim costs.
    pub fn buffer_capacity(&self) -> usize {
        match &self.phase {
            Phase::Buffer { fill, .. } => fill.buf.as_slice().len(),
            _ => 0,
        }
    }

    /// True when the decoder sits on a tensor boundary outside any composite: ending
    /// the input here is a clean end of stream.
    pub fn is_clean_boundary(&self) -> bool {
        matches!(self.phase, Phase::Header { filled: 0 }) && self.stack.is_empty()
    }

    /// Where the next input bytes must be written (borrowed from the decoder; write
    /// any prefix of it, then call [`advance`](Self::advance) with the count).
    ///
    /// The slice is empty only when the decoder has failed (the error comes from
    /// [`next_item`](Self::next_item)) or has finished; otherwise it holds at least
    /// one byte and never extends past what the stream grammar expects next, so the
    /// caller cannot over-read into the following tensor. During a buffer it is part
    /// of the buffer's final 64-byte-aligned allocation.
    pub fn demand(&mut self) -> &mut [u8] {
        match &mut self.phase {
            Phase::Header { filled } => &mut self.peek[*filled..],
            Phase::Descriptor { filled, .. } => &mut self.desc[*filled..],
            Phase::Buffer { fill, .. } => {
                let (from, to) = (fill.filled, fill.cap);
                &mut fill.buf.as_mut_slice()[from..to]
            }
            Phase::Failed { .. } | Phase::Finished => &mut [],
        }
    }

    /// Length of [`demand`](Self::demand) without borrowing it mutably.
    pub fn demand_len(&self) -> usize {
        match &self.phase {
            Phase::Header { filled } => PEEK_LEN - filled,
            Phase::Descriptor { filled, .. } => self.desc.len() - filled,
            Phase::Buffer { fill, .. } => fill.cap - fill.filled,
            Phase::Failed { .. } | Phase::Finished => 0,
        }
    }

    /// Records that the caller wrote `n` bytes at the start of the slice
    /// [`demand`](Self::demand) returned. Completing a descriptor decodes and checks
    /// it; completing a tensor (or the last member of a composite) queues an item for
    /// [`next_item`](Self::next_item); any error moves the decoder to *failed*.
    ///
    /// # Panics
    ///
    /// If `n` exceeds [`demand_len`](Self::demand_len) (a caller bug, never caused by
    /// input). The C ABI checks this before calling.
    pub fn advance(&mut self, n: usize) {
        let avail = self.demand_len();
        assert!(
            n <= avail,
            "StreamDecoder::advance({n}) but only {avail} bytes were demanded"
        );
        if n == 0 {
            return;
        }
        self.pos += n as u64;
        let step = match &mut self.phase {
            Phase::Header { filled } => {
                *filled += n;
                if *filled == PEEK_LEN {
                    Step::HeaderDone
                } else {
                    Step::Nothing
                }
            }
            Phase::Descriptor { len, filled } => {
                *filled += n;
                if *filled == *len {
                    Step::DescriptorDone
                } else if *filled == self.desc.len() {
                    Step::GrowDescriptor
                } else {
                    Step::Nothing
                }
            }
            Phase::Buffer { fill, .. } => {
                fill.filled += n;
                if fill.filled == fill.size {
                    Step::BufferDone
                } else if fill.filled == fill.cap {
                    Step::GrowBuffer
                } else {
                    Step::Nothing
                }
            }
            Phase::Failed { .. } | Phase::Finished => Step::Nothing,
        };
        let result = match step {
            Step::Nothing => Ok(()),
            Step::HeaderDone => self.on_header(),
            Step::DescriptorDone => self.on_descriptor(),
            Step::GrowDescriptor => {
                self.grow_descriptor();
                Ok(())
            }
            Step::BufferDone => self.on_buffer_done(),
            Step::GrowBuffer => self.grow_buffer(),
        };
        if let Err(e) = result {
            self.fail(e);
        }
    }

    /// Copies as much of `bytes` as the decoder accepts, in as many
    /// [`demand`](Self::demand)/[`advance`](Self::advance) steps as needed, and returns
    /// the number of bytes consumed: all of them, unless the decoder failed or had
    /// finished. Completed items queue up for [`next_item`](Self::next_item).
    ///
    /// This is the convenience path for callers that already hold the bytes; the
    /// demand/advance path avoids this extra copy.
    pub fn feed(&mut self, mut bytes: &[u8]) -> usize {
        let mut used = 0;
        while !bytes.is_empty() {
            let want = self.demand();
            if want.is_empty() {
                break;
            }
            let n = want.len().min(bytes.len());
            want[..n].copy_from_slice(&bytes[..n]);
            self.advance(n);
            bytes = &bytes[n..];
            used += n;
        }
        used
    }

    /// Why a write into a decoder that accepts nothing more fails (`std::io::Write`
    /// front end): its error, or "finished".
    pub(crate) fn refusal(&self) -> std::io::Error {
        match &self.phase {
            Phase::Failed { error, .. } => {
                std::io::Error::new(std::io::ErrorKind::InvalidData, duplicate(error))
            }
            _ => std::io::Error::other("the stream decoder has finished; it accepts no more bytes"),
        }
    }

    /// The next completed item, in stream order: a tensor, or a composite with all
    /// of its members (owned by the caller). After a failure: the items completed
    /// before it, then `Some(Err)` once, then `None`. `None` also means "feed more".
    pub fn next_item(&mut self) -> Option<Result<Item>> {
        if let Some(item) = self.ready.pop_front() {
            return Some(Ok(item));
        }
        match &mut self.phase {
            Phase::Failed { error, reported } if !*reported => {
                *reported = true;
                Some(Err(duplicate(error)))
            }
            _ => None,
        }
    }

    /// Classifies end of input (A.2): `Ok` for a clean end on a tensor boundary
    /// outside any composite; `Truncated` when input ended inside a descriptor or a
    /// buffer; `TornComposite` when it ended on a boundary while a composite still
    /// expected members (A.4, strict receiver). Errors carry the absolute offset where
    /// input ended. A failed decoder returns its error again.
    ///
    /// Items completed before the end stay available from
    /// [`next_item`](Self::next_item). After `finish` the decoder demands nothing.
    pub fn finish(&mut self) -> Result<()> {
        let at = self.pos;
        let error = match &mut self.phase {
            Phase::Finished => return Ok(()),
            Phase::Failed { error, reported } => {
                *reported = true;
                return Err(duplicate(error));
            }
            Phase::Header { filled: 0 } => match self.stack.last() {
                None => {
                    self.phase = Phase::Finished;
                    return Ok(());
                }
                Some(top) => top.checker.close(at).err().unwrap_or_else(|| {
                    Error::format(FormatRule::TornComposite, at, "composite left open")
                }),
            },
            Phase::Header { filled } => Error::format(
                FormatRule::Truncated,
                at,
                format_args!(
                    "input ended after {filled} of the first {PEEK_LEN} bytes of the \
                     descriptor at byte {}",
                    self.tensor_at
                ),
            ),
            Phase::Descriptor { len, filled } => Error::format(
                FormatRule::Truncated,
                at,
                format_args!(
                    "input ended after {filled} of the {len} bytes of the descriptor at \
                     byte {}",
                    self.tensor_at
                ),
            ),
            Phase::Buffer { tensor, fill } => Error::format(
                FormatRule::Truncated,
                at,
                format_args!(
                    "input ended after {} of the {} bytes of buffer {} of the tensor at \
                     byte {}",
                    fill.filled,
                    fill.size,
                    tensor.buffers.len(),
                    tensor.at
                ),
            ),
        };
        let copy = duplicate(&error);
        self.phase = Phase::Failed {
            error,
            reported: true,
        };
        self.stack.clear();
        Err(copy)
    }

    fn fail(&mut self, error: Error) {
        self.phase = Phase::Failed {
            error,
            reported: false,
        };
        self.stack.clear();
        self.desc = Vec::new();
    }

    /// The first 10 bytes are in: check magic, version and `descriptor_length`.
    fn on_header(&mut self) -> Result<()> {
        let at = self.pos - PEEK_LEN as u64;
        self.tensor_at = at;
        let len = peek_descriptor_length(&self.peek)
            .map_err(|source| Error::Descriptor { at, source })?;
        check_descriptor_len(&self.limits, u64::from(len), at + 6)?;
        let len = usize::try_from(len).map_err(|_| {
            Error::format(FormatRule::Limit, at + 6, "descriptor_length exceeds usize")
        })?;
        let window = len.min(DESC_FIRST_WINDOW.max(self.desc.capacity()));
        self.desc.clear();
        self.desc.resize(window, 0);
        self.desc[..PEEK_LEN].copy_from_slice(&self.peek);
        self.phase = Phase::Descriptor {
            len,
            filled: PEEK_LEN,
        };
        Ok(())
    }

    fn grow_descriptor(&mut self) {
        if let Phase::Descriptor { len, .. } = self.phase {
            let window = len.min(self.desc.len().saturating_mul(2));
            self.desc.resize(window, 0);
        }
    }

    /// The whole descriptor is in: decode it, check its handles against the limits
    /// and the composite rules, then start its buffers (or open a composite).
    fn on_descriptor(&mut self) -> Result<()> {
        let at = self.tensor_at;
        let Phase::Descriptor { len, .. } = self.phase else {
            return Ok(());
        };
        let d = TensorDescriptor::decode_with(&self.desc[..len], &self.opts)
            .map_err(|source| Error::Descriptor { at, source })?;
        if self.desc.capacity() > DESC_KEEP_CAPACITY {
            self.desc = Vec::new();
        }
        self.check_handles(&d, at)?;
        if let Some(top) = self.stack.last_mut() {
            top.checker.member(&d, at)?;
        }
        if is_head(&d) {
            let depth = self.stack.len() as u64 + 1;
            if depth > u64::from(self.limits.composite_depth()) {
                return Err(Error::format(
                    FormatRule::CompositeDepth,
                    at,
                    format_args!(
                        "composite nested {depth} levels deep; the limit is {}",
                        self.limits.composite_depth()
                    ),
                ));
            }
            let checker = CompositeChecker::new(&d, at, self.limits.max_composite_members)?;
            let head = Tensor::new(d, Vec::new())?;
            self.phase = Phase::Header { filled: 0 };
            if checker.remaining() == 0 {
                checker.close(self.pos)?;
                return self.complete(Item::Composite(Composite {
                    head,
                    members: Vec::new(),
                }));
            }
            self.stack.push(Frame {
                head,
                checker,
                members: Vec::new(),
            });
            return Ok(());
        }
        let n = d.buffers.len();
        let tensor = Pending {
            at,
            data_at: at + len as u64,
            descriptor: Arc::new(d),
            buffers: Vec::with_capacity(n),
        };
        self.next_buffer(tensor)
    }

    /// Pairs a complete tensor's buffers with its descriptor and, unless decoding is
    /// permissive, checks their contents (`hurray_core::content`); a content error
    /// names the absolute stream offset of the offending entry.
    fn finish_tensor(&self, p: Pending) -> Result<Tensor> {
        let t = Tensor::new_unvalidated(p.descriptor, p.buffers)?;
        if self.opts.permissive {
            return Ok(t);
        }
        // Buffers follow the descriptor back to back (no padding in a stream).
        let mut starts = Vec::with_capacity(t.buffers().len());
        let mut next = p.data_at;
        for b in t.buffers() {
            starts.push(next);
            next = next.saturating_add(b.len() as u64);
        }
        t.check_content_at(&|i| starts.get(i).copied().unwrap_or(p.data_at))?;
        Ok(t.into_validated())
    }

    /// Limits on each buffer handle, before any of its bytes are allocated.
    fn check_handles(&self, d: &TensorDescriptor, at: u64) -> Result<()> {
        let table = at + (HEADER_LEN + 8 * d.rank() + 8 + d.layout.encoded_len() + 1) as u64;
        for (i, h) in d.buffers.iter().enumerate() {
            if let Err(v) = check_handle(&self.limits, i, h) {
                return Err(Error::format(
                    v.rule,
                    table + 16 * i as u64 + v.field,
                    v.detail,
                ));
            }
        }
        Ok(())
    }

    /// Starts the next non-empty buffer of `tensor`, or completes the tensor.
    fn next_buffer(&mut self, mut tensor: Pending) -> Result<()> {
        loop {
            let i = tensor.buffers.len();
            let Some(h) = tensor.descriptor.buffers.get(i) else {
                self.phase = Phase::Header { filled: 0 };
                let t = self.finish_tensor(tensor)?;
                return self.complete(Item::Tensor(t));
            };
            if h.byte_size == 0 {
                tensor.buffers.push(Buffer::empty());
                continue;
            }
            // Both checked against the limits in `check_handles`.
            let size = h.byte_size as usize;
            let align = (h.alignment as usize).max(BUFFER_ALIGN);
            let cap = if size <= self.eager {
                size
            } else {
                GROW_START.min(self.eager.max(64 << 10)).min(size)
            };
            let fill = allocate(self.alloc.as_deref(), size, cap, align, self.pos)?;
            self.phase = Phase::Buffer { tensor, fill };
            return Ok(());
        }
    }

    /// The buffer's allocation is full but the buffer is not: double it.
    fn grow_buffer(&mut self) -> Result<()> {
        let at = self.pos;
        let Phase::Buffer { fill, .. } = &mut self.phase else {
            return Ok(());
        };
        let cap = fill.cap.saturating_mul(2).min(fill.size);
        let mut next = allocate(self.alloc.as_deref(), fill.size, cap, fill.align, at)?;
        next.filled = fill.filled;
        next.buf.as_mut_slice()[..fill.filled].copy_from_slice(&fill.buf.as_slice()[..fill.filled]);
        *fill = next;
        Ok(())
    }

    /// A buffer is complete: hand its allocation to the tensor, start the next.
    fn on_buffer_done(&mut self) -> Result<()> {
        let Phase::Buffer { mut tensor, fill } =
            std::mem::replace(&mut self.phase, Phase::Header { filled: 0 })
        else {
            return Ok(());
        };
        // The owner shows exactly the buffer: neither alignment slack nor the tail of
        // a larger reused allocation is visible through the tensor.
        let owner = Shown {
            mem: fill.buf,
            range: 0..fill.size,
        };
        let buffer = Buffer::slice_of(Arc::new(owner), 0..fill.size).ok_or_else(|| {
            Error::format(FormatRule::Limit, self.pos, "buffer window out of range")
        })?;
        tensor.buffers.push(buffer);
        self.next_buffer(tensor)
    }

    /// A tensor or composite is complete: give it to the open composite (closing it,
    /// and its parents, when that was their last member) or queue it.
    fn complete(&mut self, mut item: Item) -> Result<()> {
        loop {
            let Some(top) = self.stack.last_mut() else {
                self.ready.push_back(item);
                return Ok(());
            };
            top.members.push(item);
            if top.checker.remaining() > 0 {
                return Ok(());
            }
            top.checker.close(self.pos)?;
            let Some(frame) = self.stack.pop() else {
                return Ok(());
            };
            item = Item::Composite(Composite {
                head: frame.head,
                members: frame.members,
            });
        }
    }
}

/// `descriptor_length` against [`Limits::max_descriptor_bytes`] (`Limit` at `at`).
/// Shared with the encoder, which must not emit what a decoder refuses.
pub(crate) fn check_descriptor_len(limits: &Limits, len: u64, at: u64) -> Result<()> {
    if len > u64::from(limits.max_descriptor_bytes) {
        return Err(Error::format(
            FormatRule::Limit,
            at,
            format_args!(
                "descriptor_length {len} exceeds the limit of {} bytes",
                limits.max_descriptor_bytes
            ),
        ));
    }
    Ok(())
}

/// A buffer handle a decoder with given limits refuses.
pub(crate) struct HandleViolation {
    pub rule: FormatRule,
    /// Offset of the offending field in the 16-byte handle.
    pub field: u64,
    pub detail: String,
}

/// Buffer `i`'s handle against the limits: `sync_mode` in cross-machine mode
/// (`SyncMode`), `byte_size` against [`Limits::max_buffer_bytes`] and the address
/// space, `alignment` of a non-empty buffer against [`MAX_HONORED_ALIGNMENT`]
/// (`Limit`). Shared with the encoder, which must not emit what a decoder refuses.
pub(crate) fn check_handle(
    limits: &Limits,
    i: usize,
    h: &BufferHandle,
) -> std::result::Result<(), HandleViolation> {
    if limits.cross_machine && h.sync_mode != SyncMode::ProducerSynced {
        return Err(HandleViolation {
            rule: FormatRule::SyncMode,
            field: 13,
            detail: format!(
                "buffer {i} has sync_mode {}; a cross-machine stream needs 0 (producer-synced)",
                h.sync_mode.tag()
            ),
        });
    }
    if h.byte_size > limits.max_buffer_bytes || usize::try_from(h.byte_size).is_err() {
        return Err(HandleViolation {
            rule: FormatRule::Limit,
            field: 0,
            detail: format!(
                "buffer {i} byte_size {} exceeds the limit of {} bytes",
                h.byte_size, limits.max_buffer_bytes
            ),
        });
    }
    if h.byte_size > 0 && h.alignment > MAX_HONORED_ALIGNMENT {
        return Err(HandleViolation {
            rule: FormatRule::Limit,
            field: 8,
            detail: format!(
                "buffer {i} declares alignment {}; stream readers place buffers at most \
                 {MAX_HONORED_ALIGNMENT}-byte aligned",
                h.alignment
            ),
        });
    }
    Ok(())
}

/// Allocates room for `cap` bytes of a `size`-byte buffer whose first byte must be
/// `align`-aligned (`align` a power of two ≥ 64, ≤ [`MAX_HONORED_ALIGNMENT`]), from
/// `alloc` when there is one, and checks what an allocator returned.
fn allocate(
    alloc: Option<&dyn BufferAllocator>,
    size: usize,
    cap: usize,
    align: usize,
    at: u64,
) -> Result<Fill> {
    let refused = || {
        Error::format(
            FormatRule::Limit,
            at,
            format_args!(
                "cannot allocate {cap} bytes aligned to {align} for a {size}-byte buffer \
                 (the buffer allocator refused)"
            ),
        )
    };
    let buf: Box<dyn BufferMemory> = match alloc {
        Some(a) => a.allocate(cap, align).ok_or_else(refused)?,
        None => {
            // Fresh memory: slack before the buffer meets alignments above 64 (for
            // 1 MiB and more it is address space that is never touched).
            let len = cap.checked_add(align - BUFFER_ALIGN).ok_or_else(refused)?;
            let mem = PooledBuf::unpooled(len).ok_or_else(refused)?;
            Box::new(crate::alloc::window(mem, cap, align).ok_or_else(refused)?)
        }
    };
    let mem = buf.as_slice();
    let addr = mem.as_ptr() as usize;
    if mem.len() < cap || addr % align != 0 {
        return Err(Error::format(
            FormatRule::Limit,
            at,
            format_args!(
                "the buffer allocator returned {} bytes at address {addr:#x}; the decoder \
                 asked for {cap} bytes aligned to {align}",
                mem.len()
            ),
        ));
    }
    Ok(Fill {
        buf,
        cap,
        filled: 0,
        size,
        align,
    })
}

/// A copy of an error the decoder keeps (decoder errors are format or descriptor
/// errors; both are plain data).
fn duplicate(e: &Error) -> Error {
    if let Error::Format {
        rule,
        offset,
        detail,
    } = e
    {
        return Error::Format {
            rule: *rule,
            offset: *offset,
            detail: detail.clone(),
        };
    }
    if let Error::Descriptor { at, source } = e {
        return Error::Descriptor {
            at: *at,
            source: source.clone(),
        };
    }
    if let Error::Content { at, source } = e {
        return Error::Content {
            at: *at,
            source: source.clone(),
        };
    }
    if let Error::Io(io) = e {
        return Error::Io(std::io::Error::new(io.kind(), io.to_string()));
    }
    Error::Io(std::io::Error::other(e.to_string()))
}
