//! The streaming format across the C ABI, sans-io (`streams-and-transport.md`
//! Part A): `HurrayStreamDecoder` is fed bytes and yields items, `HurrayStreamEncoder`
//! turns an item into descriptor bytes plus pointers at the caller's own buffers.
//! Each language plugs in its own I/O.
//!
//! # Decoding
//!
//! ```c
//! for (;;) {
//!     HurrayItem *item = NULL;
//!     while (hurray_stream_decoder_next(dec, &item) == HURRAY_OK && item) { use(item); }
//!     uint8_t *dst; uint64_t want;
//!     hurray_stream_decoder_demand(dec, &dst, &want);   /* where the next bytes go  */
//!     if (want == 0) break;                              /* failed or finished       */
//!     ssize_t n = read(fd, dst, want);                   /* the caller's own I/O     */
//!     if (n == 0) { status = hurray_stream_decoder_finish(dec); break; }
//!     hurray_stream_decoder_advance(dec, (uint64_t)n);   /* n bytes were written     */
//! }
//! ```
//!
//! During a buffer the demanded slice is the unfilled part of the buffer's final
//! 64-byte-aligned allocation, so payload bytes are written once, by the caller's read.
//!
//! # Encoding
//!
//! `hurray_stream_encoder_begin_tensor` (or `_item`) checks the whole item and splits
//! its encoding into chunks: descriptor bytes the encoder owns, and the caller's
//! buffers themselves (never copied). The encoder holds a reference to those buffers
//! until the next `begin`, `hurray_stream_encoder_end` or destroy, so the tensor may be
//! destroyed meanwhile.

use crate::handle::{self, kind, Handle, Header};
use crate::item::HurrayItem;
use crate::status::*;
use crate::tensor::HurrayTensor;
use hurray_io::{Limits, StreamDecoder, StreamEncoder};
use std::ops::Range;

/// Limits a stream decoder enforces on untrusted input. An encoder enforces the same
/// ones (descriptor size, buffer size, alignment, composite depth, `cross_machine`),
/// so it never writes a stream a decoder with these limits would refuse. Fill it
/// with `hurray_stream_limits_default`, then change what you need.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HurrayStreamLimits {
    /// Largest descriptor accepted, in bytes (default 16 MiB).
    pub max_descriptor_bytes: u32,
    /// Most composite nesting levels, counting the outermost head (default 8;
    /// values above 64 act as 64).
    pub max_composite_depth: u32,
    /// Largest single buffer accepted, in bytes (default 64 GiB).
    pub max_buffer_bytes: u64,
    /// Decoder: a buffer of at most this many bytes is allocated at its final size as
    /// soon as its descriptor is accepted (address space only; pages commit as bytes
    /// arrive); a larger one grows by doubling. Default 1 GiB. Encoders ignore it.
    pub eager_alloc_bytes: u64,
    /// 1: the bytes cross machines (A.5), so every buffer must be producer-synced
    /// (`sync_mode` 0); 0: same machine (default).
    pub cross_machine: u8,
}

impl Default for HurrayStreamLimits {
    fn default() -> Self {
        let l = Limits::default();
        HurrayStreamLimits {
            max_descriptor_bytes: l.max_descriptor_bytes,
            max_composite_depth: l.max_composite_depth,
            max_buffer_bytes: l.max_buffer_bytes,
            eager_alloc_bytes: hurray_io::stream::DEFAULT_EAGER_ALLOC as u64,
            cross_machine: 0,
        }
    }
}

impl HurrayStreamLimits {
    /// The hurray-io limits these stand for.
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` when `cross_machine` is not 0 or 1.
    pub fn to_limits(&self) -> FfiResult<Limits> {
        if self.cross_machine > 1 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("cross_machine is {}, not 0 or 1", self.cross_machine),
            ));
        }
        Ok(Limits {
            max_descriptor_bytes: self.max_descriptor_bytes,
            max_composite_depth: self.max_composite_depth,
            max_buffer_bytes: self.max_buffer_bytes,
            cross_machine: self.cross_machine == 1,
            ..Limits::default()
        })
    }
}

/// Reads optional limits: NULL means the defaults.
///
/// # Safety
/// `p` NULL or valid for a read.
unsafe fn limits_in(p: *const HurrayStreamLimits) -> FfiResult<HurrayStreamLimits> {
    // SAFETY: NULL or valid per the caller.
    Ok(unsafe { p.as_ref() }.copied().unwrap_or_default())
}

// ---------------------------------------------------------------- decoder

/// A sans-io stream decoder (own-build only; opaque in C).
#[repr(C)]
pub struct HurrayStreamDecoder {
    header: Header,
    dec: StreamDecoder,
    /// An item pulled by `next_tensor` that was a composite, kept for `next`.
    pending: Option<hurray_io::Item>,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayStreamDecoder {
    const KIND: u16 = kind::STREAM_DECODER;
    const NAME: &'static str = "HurrayStreamDecoder";
    fn header(&self) -> &Header {
        &self.header
    }
}

impl HurrayStreamDecoder {
    /// A decoder with these limits.
    ///
    /// Errors: those of [`HurrayStreamLimits::to_limits`].
    pub fn new(limits: &HurrayStreamLimits) -> FfiResult<HurrayStreamDecoder> {
        let eager = usize::try_from(limits.eager_alloc_bytes).unwrap_or(usize::MAX);
        Ok(HurrayStreamDecoder {
            header: Header::new(
                kind::STREAM_DECODER,
                handle::destroy_own::<HurrayStreamDecoder>,
            ),
            dec: StreamDecoder::new(limits.to_limits()?).with_eager_alloc(eager),
            pending: None,
        })
    }

    /// The sans-io core.
    pub fn decoder(&mut self) -> &mut StreamDecoder {
        &mut self.dec
    }

    /// Records `n` written bytes, refusing more than were demanded (the core would
    /// panic on that caller bug).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT`.
    pub fn advance(&mut self, n: u64) -> FfiResult<()> {
        let avail = self.dec.demand_len();
        match usize::try_from(n) {
            Ok(n) if n <= avail => {
                self.dec.advance(n);
                Ok(())
            }
            _ => Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("advance({n}) but only {avail} bytes were demanded"),
            )),
        }
    }

    /// The next completed item in hurray-io form: `Ok(None)` when none is complete yet.
    ///
    /// Errors: the decode error, once, after the items completed before it.
    pub fn next_item(&mut self) -> FfiResult<Option<hurray_io::Item>> {
        if let Some(i) = self.pending.take() {
            return Ok(Some(i));
        }
        match self.dec.next_item() {
            None => Ok(None),
            Some(Ok(i)) => Ok(Some(i)),
            Some(Err(e)) => Err(e.into()),
        }
    }

    /// Where the next input bytes must be written: write any prefix of the slice
    /// (one `read`), then call [`advance`](Self::advance) with the count. During a
    /// buffer this is the unfilled part of the buffer's final 64-byte-aligned
    /// allocation, so payload bytes are written once. Never longer than what the
    /// stream grammar expects next. Empty only when the decoder has failed (the
    /// error comes from [`next`](Self::next)) or has finished.
    pub fn demand(&mut self) -> &mut [u8] {
        self.dec.demand()
    }

    /// Copies as much of `bytes` as the decoder accepts and returns that count: all of
    /// them, unless the decoder failed or had finished. Completed items queue up for
    /// [`next`](Self::next). (The demand/advance path avoids this extra copy.)
    pub fn feed(&mut self, bytes: &[u8]) -> u64 {
        self.dec.feed(bytes) as u64
    }

    /// Takes the next completed item, in stream order: a tensor, or a composite with
    /// all its members; `Ok(None)` when none is complete yet (feed more bytes). Its
    /// buffers are library memory and outlive the decoder.
    ///
    /// Errors: once, after the items completed before it, the input's error:
    /// `HURRAY_ERR_DESCRIPTOR`, `HURRAY_ERR_FORMAT`, `HURRAY_ERR_LIMIT`,
    /// `HURRAY_ERR_BUFFER_MISMATCH`, `HURRAY_ERR_INVALID_SYNC_MODE` (the message names
    /// the rule and the absolute stream offset); then `Ok(None)`.
    #[allow(clippy::should_implement_trait)] // a fallible pull, not an iterator
    pub fn next(&mut self) -> FfiResult<Option<HurrayItem>> {
        self.next_item()?.map(HurrayItem::from_io).transpose()
    }

    /// Like [`next`](Self::next), for streams of plain tensors.
    ///
    /// Errors: those of [`next`](Self::next), and `HURRAY_ERR_NOT_APPLICABLE` when the
    /// next item is a composite: it is kept, take it with [`next`](Self::next).
    pub fn next_tensor(&mut self) -> FfiResult<Option<HurrayTensor>> {
        match self.next_item()? {
            None => Ok(None),
            Some(hurray_io::Item::Tensor(t)) => HurrayTensor::from_io(t).map(Some),
            Some(c) => {
                self.pending = Some(c);
                Err(not_applicable(
                    "the next item is a composite; take it with hurray_stream_decoder_next",
                ))
            }
        }
    }

    /// Bytes consumed so far: the absolute stream offset of the next byte expected.
    pub fn position(&self) -> u64 {
        self.dec.position()
    }

    /// Declares the end of input and classifies it (`streams-and-transport.md` A.2):
    /// `Ok` for a clean end on a tensor boundary outside any composite. Items
    /// completed before the end stay available from [`next`](Self::next); afterwards
    /// the decoder demands nothing.
    ///
    /// Errors: `HURRAY_ERR_TRUNCATED` (input ended inside a descriptor or buffer, or
    /// while a composite still expected members; the message names the offset), or
    /// the earlier decode error again.
    pub fn finish(&mut self) -> FfiResult<()> {
        self.dec.finish().map_err(FfiError::from)
    }
}

/// Fills `*out` with the default limits: 16 MiB descriptors, 64 GiB buffers, 1 GiB
/// eager allocation, 8 composite levels, same machine.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`).
///
/// Ownership: `*out` is a plain struct written by value; nothing to free.
///
/// # Safety
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_limits_default(
    out: *mut HurrayStreamLimits,
) -> HurrayStatus {
    // SAFETY: NULL reported, else writable.
    boundary(|| unsafe { put(out, "out", HurrayStreamLimits::default()) })
}

/// Makes a stream decoder. `limits` NULL means `hurray_stream_limits_default`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`); `HURRAY_ERR_INVALID_ARGUMENT`
/// (`cross_machine` not 0 or 1).
///
/// Ownership: `limits` is only read; `*out` owned, destroy with
/// `hurray_stream_decoder_destroy`.
///
/// # Safety
/// `limits` NULL or valid for a read; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_new(
    limits: *const HurrayStreamLimits,
    out: *mut *mut HurrayStreamDecoder,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let limits = unsafe { limits_in(limits)? };
        let d = HurrayStreamDecoder::new(&limits)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(d)) }
    })
}

/// Where the next input bytes must be written: `*out_len` writable bytes at
/// `*out_ptr`. Write any prefix of them (for example with one `read`), then call
/// `hurray_stream_decoder_advance` with the count. During a buffer this is the
/// unfilled part of the buffer's final 64-byte-aligned allocation, so payload bytes
/// are written once. The slice never extends past what the stream grammar expects
/// next, so a read into it cannot consume bytes of the following tensor.
///
/// `*out_len` is 0 (and `*out_ptr` NULL) only when the decoder has failed (the error
/// comes from `hurray_stream_decoder_next`) or has finished.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`decoder`, `out_ptr`, `out_len`);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not a decoder of this copy
/// of the library).
///
/// Ownership: `*out_ptr` borrowed from the decoder, valid until the next call on it.
///
/// # Safety
/// `decoder` NULL or a live decoder used by this thread only; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_demand(
    decoder: *mut HurrayStreamDecoder,
    out_ptr: *mut *mut u8,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { handle::own_mut(decoder, "decoder")? };
        need(out_ptr, "out_ptr")?;
        need(out_len, "out_len")?;
        let slice = d.demand();
        let (p, n) = if slice.is_empty() {
            (std::ptr::null_mut(), 0)
        } else {
            (slice.as_mut_ptr(), slice.len() as u64)
        };
        // SAFETY: both checked non-null.
        unsafe {
            put(out_ptr, "out_ptr", p)?;
            put(out_len, "out_len", n)
        }
    })
}

/// Records that the caller wrote `n` bytes at the start of the slice
/// `hurray_stream_decoder_demand` returned. Completing a descriptor decodes and
/// checks it; completing a tensor (or a composite's last member) queues an item for
/// `hurray_stream_decoder_next`. Bad input is not reported here: the decoder becomes
/// failed, demands nothing more, and `next` returns the error.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (`n` exceeds the bytes demanded; nothing is recorded;
/// or not a decoder of this copy of the library).
///
/// Ownership: nothing changes hands.
///
/// # Safety
/// `decoder` NULL or a live decoder used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_advance(
    decoder: *mut HurrayStreamDecoder,
    n: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { handle::own_mut(decoder, "decoder")? };
        d.advance(n)
    })
}

/// Convenience for callers that already hold the bytes: copies as much of `bytes`
/// (`len` bytes; NULL allowed when `len` is 0) as the decoder accepts and writes the
/// count to `*out_consumed`: all of them, unless the decoder failed or had finished.
/// Completed items queue up for `hurray_stream_decoder_next`. (The demand/advance
/// path avoids this extra copy.)
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`decoder`, `out_consumed`, `bytes` with `len` >
/// 0); `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT`.
///
/// Ownership: `bytes` is only read during the call.
///
/// # Safety
/// `decoder` NULL or live; `bytes` valid for `len` reads; `out_consumed` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_feed(
    decoder: *mut HurrayStreamDecoder,
    bytes: *const u8,
    len: u64,
    out_consumed: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { handle::own_mut(decoder, "decoder")? };
        need(out_consumed, "out_consumed")?;
        // SAFETY: forwarded.
        let input = unsafe { slice_in(bytes, len, "bytes")? };
        let n = d.feed(input);
        // SAFETY: checked non-null.
        unsafe { put(out_consumed, "out_consumed", n) }
    })
}

/// Takes the next completed item, in stream order: a tensor, or a composite with all
/// of its members. When none is complete yet, returns `HURRAY_OK` with `*out` = NULL
/// (feed more bytes). After bad input: the items completed before it, then the error
/// once, then `HURRAY_OK` with NULL.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a decoder of this copy); the input's error:
/// `HURRAY_ERR_DESCRIPTOR`, `HURRAY_ERR_FORMAT`, `HURRAY_ERR_LIMIT`,
/// `HURRAY_ERR_BUFFER_MISMATCH`, `HURRAY_ERR_INVALID_SYNC_MODE` (the message names
/// the rule and the absolute stream offset).
///
/// Ownership: `*out` owned (or NULL); destroy with `hurray_item_destroy`. Its buffers
/// are library memory and outlive the decoder.
///
/// # Safety
/// `decoder` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_next(
    decoder: *mut HurrayStreamDecoder,
    out: *mut *mut HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { handle::own_mut(decoder, "decoder")? };
        need(out, "out")?;
        let p = d.next()?.map_or(std::ptr::null_mut(), handle::into_raw);
        // SAFETY: checked non-null.
        unsafe { put(out, "out", p) }
    })
}

/// Like `hurray_stream_decoder_next`, for streams of plain tensors: takes the next
/// completed item as a tensor (`*out` = NULL with `HURRAY_OK` when none is complete
/// yet). When the next item is a composite it is left in place and
/// `HURRAY_ERR_NOT_APPLICABLE` is returned: take it with `hurray_stream_decoder_next`.
///
/// Errors: those of `hurray_stream_decoder_next`, and `HURRAY_ERR_NOT_APPLICABLE`.
///
/// Ownership: `*out` owned (or NULL); destroy with `hurray_tensor_destroy`.
///
/// # Safety
/// `decoder` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_next_tensor(
    decoder: *mut HurrayStreamDecoder,
    out: *mut *mut HurrayTensor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { handle::own_mut(decoder, "decoder")? };
        need(out, "out")?;
        let p = d
            .next_tensor()?
            .map_or(std::ptr::null_mut(), handle::into_raw);
        // SAFETY: checked non-null.
        unsafe { put(out, "out", p) }
    })
}

/// Declares the end of input and classifies it (A.2): `HURRAY_OK` for a clean end on
/// a tensor boundary outside any composite. Items completed before the end stay
/// available from `hurray_stream_decoder_next`; afterwards the decoder demands
/// nothing. A failed decoder returns its error again.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a decoder of this copy); `HURRAY_ERR_TRUNCATED`
/// (input ended inside a descriptor or buffer, or while a composite still expected
/// members; the message names the offset); or the earlier decode error.
///
/// Ownership: nothing changes hands.
///
/// # Safety
/// `decoder` NULL or a live decoder.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_finish(
    decoder: *mut HurrayStreamDecoder,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { handle::own_mut(decoder, "decoder")? };
        d.finish()
    })
}

/// Bytes consumed so far: the absolute stream offset of the next byte expected.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT`.
///
/// Ownership: `*out` written by value; nothing to free.
///
/// # Safety
/// `decoder` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_position(
    decoder: *const HurrayStreamDecoder,
    out: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { handle::own(decoder, "decoder")? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", d.position()) }
    })
}

/// Destroys a decoder and nulls `*decoder`; items it handed out live on. NULL and
/// `*decoder == NULL` are no-ops.
///
/// Errors: `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not a decoder);
/// `HURRAY_ERR_DOUBLE_DESTROY` (debug builds, stale pointer).
///
/// Ownership: the handle and any bytes it buffered are freed.
///
/// # Safety
/// `decoder` NULL, or pointing at NULL or a live decoder handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_decoder_destroy(
    decoder: *mut *mut HurrayStreamDecoder,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(decoder, "decoder") })
}

// ---------------------------------------------------------------- encoder

/// One chunk of the current item: a range of the encoder's descriptor bytes, or a
/// whole buffer of the item (kept alive by `Current::_item`).
enum ChunkRef {
    Descriptor(Range<usize>),
    Buffer(*const u8, usize),
}

/// The item being written: its encoding, split into chunks.
struct Current {
    /// Holds references to every buffer a `ChunkRef::Buffer` points into.
    _item: hurray_io::Item,
    descriptors: Vec<u8>,
    chunks: Vec<ChunkRef>,
    len: u64,
}

impl Current {
    fn new(item: hurray_io::Item, enc: &mut StreamEncoder) -> FfiResult<Current> {
        let encoded = enc.encode_item(&item)?;
        let descriptors = encoded.descriptor_bytes().to_vec();
        let d = encoded.descriptor_bytes().as_ptr_range();
        let chunks = encoded
            .chunks()
            .map(|c| {
                let p = c.as_ptr();
                if d.contains(&p) {
                    // A descriptor run: an offset into the encoder's own bytes.
                    let start = p as usize - d.start as usize;
                    ChunkRef::Descriptor(start..start + c.len())
                } else {
                    // A caller buffer: its bytes live as long as `item` holds them.
                    ChunkRef::Buffer(p, c.len())
                }
            })
            .collect();
        let len = encoded.len();
        drop(encoded);
        Ok(Current {
            _item: item,
            descriptors,
            chunks,
            len,
        })
    }

    fn chunk(&self, i: u64) -> FfiResult<(*const u8, u64)> {
        let c = usize::try_from(i)
            .ok()
            .and_then(|i| self.chunks.get(i))
            .ok_or_else(|| {
                FfiError::new(
                    HURRAY_ERR_OUT_OF_RANGE,
                    format!("chunk {i} is past the item's {} chunks", self.chunks.len()),
                )
            })?;
        Ok(match c {
            ChunkRef::Descriptor(r) => (self.descriptors[r.clone()].as_ptr(), r.len() as u64),
            ChunkRef::Buffer(p, n) => (*p, *n as u64),
        })
    }
}

/// A sans-io stream encoder (own-build only; opaque in C).
#[repr(C)]
pub struct HurrayStreamEncoder {
    header: Header,
    enc: StreamEncoder,
    current: Option<Current>,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayStreamEncoder {
    const KIND: u16 = kind::STREAM_ENCODER;
    const NAME: &'static str = "HurrayStreamEncoder";
    fn header(&self) -> &Header {
        &self.header
    }
}

impl HurrayStreamEncoder {
    /// An encoder using `limits.cross_machine` and `limits.max_composite_depth`.
    ///
    /// Errors: those of [`HurrayStreamLimits::to_limits`].
    pub fn new(limits: &HurrayStreamLimits) -> FfiResult<HurrayStreamEncoder> {
        Ok(HurrayStreamEncoder {
            header: Header::new(
                kind::STREAM_ENCODER,
                handle::destroy_own::<HurrayStreamEncoder>,
            ),
            enc: StreamEncoder::new(limits.to_limits()?),
            current: None,
        })
    }

    /// Encodes `item` as the current item (replacing any previous one) and returns
    /// its chunk count and byte length.
    pub fn begin(&mut self, item: hurray_io::Item) -> FfiResult<(u64, u64)> {
        self.current = None;
        let c = Current::new(item, &mut self.enc)?;
        let r = (c.chunks.len() as u64, c.len);
        self.current = Some(c);
        Ok(r)
    }

    /// Checks `tensor` (buffers against the buffer table; sync modes in
    /// cross-machine mode) and makes it the current item. Returns its chunk count and
    /// its length in bytes; read the chunks with [`chunk`](Self::chunk) and write them
    /// in order. Buffer chunks are the tensor's own buffers (no copy); the encoder
    /// holds a reference to them until the next begin, [`end`](Self::end) or drop.
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (a device buffer);
    /// `HURRAY_ERR_BUFFER_MISMATCH`; `HURRAY_ERR_INVALID_SYNC_MODE` (cross-machine
    /// mode and a buffer that is not producer-synced); `HURRAY_ERR_FORMAT` (a
    /// composite head: use [`begin_item`](Self::begin_item)). On error there is no
    /// current item.
    pub fn begin_tensor(&mut self, tensor: &HurrayTensor) -> FfiResult<(u64, u64)> {
        self.current = None;
        let t = tensor.to_io()?;
        self.begin_io_tensor(t)
    }

    /// [`begin_tensor`](Self::begin_tensor) for a tensor in hurray-io form.
    pub(crate) fn begin_io_tensor(&mut self, t: hurray_io::Tensor) -> FfiResult<(u64, u64)> {
        self.current = None;
        if matches!(t.descriptor().layout, hurray_core::Layout::CompositeHead(_)) {
            // A writer's mistake, not a cut input: never report it as truncation.
            return Err(FfiError::new(
                HURRAY_ERR_FORMAT,
                "a composite head is written with its members: use hurray_stream_encoder_begin_item",
            ));
        }
        self.begin(hurray_io::Item::Tensor(t))
    }

    /// [`begin_tensor`](Self::begin_tensor) for an item: a tensor, or a composite
    /// whose descriptors go out in pre-order (head, then each member, nested heads
    /// expanded in place), each followed by its buffers. The whole composite is
    /// checked first, so a torn or invalid composite never reaches the output.
    ///
    /// Errors: those of [`begin_tensor`](Self::begin_tensor), and `HURRAY_ERR_STATE`
    /// (a composite with fewer members than its head declares), `HURRAY_ERR_FORMAT`
    /// (a composite rule; the message names it).
    pub fn begin_item(&mut self, item: &HurrayItem) -> FfiResult<(u64, u64)> {
        self.current = None;
        let i = item.to_io()?;
        self.begin(i)
    }

    /// Chunk `index` of the current item (never empty), borrowed until the next
    /// begin, [`end`](Self::end) or drop.
    ///
    /// Errors: `HURRAY_ERR_STATE` (no current item); `HURRAY_ERR_OUT_OF_RANGE`
    /// (`index` >= the chunk count).
    pub fn chunk(&self, index: u64) -> FfiResult<&[u8]> {
        let c = self.current.as_ref().ok_or_else(|| {
            FfiError::new(
                HURRAY_ERR_STATE,
                "no current item: call hurray_stream_encoder_begin_tensor or _item first",
            )
        })?;
        let (p, n) = c.chunk(index)?;
        // SAFETY: a chunk is either the encoder's own descriptor bytes or a whole
        // buffer of the current item, whose memory `Current::_item` keeps alive and
        // unmodified until `current` is replaced, which needs `&mut self`; chunks are
        // never empty, so `p` is non-NULL.
        Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
    }

    /// Lets go of the current item (and its references to the caller's buffers).
    pub fn end(&mut self) {
        self.current = None;
    }

    /// Bytes of all items begun so far (every chunk assumed written): the stream
    /// offset the next item starts at.
    pub fn position(&self) -> u64 {
        self.enc.position()
    }
}

/// Makes a stream encoder. Of `limits` (NULL: defaults) it uses `cross_machine` (every
/// buffer must then be producer-synced) and `max_composite_depth`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`); `HURRAY_ERR_INVALID_ARGUMENT`
/// (`cross_machine` not 0 or 1).
///
/// Ownership: `limits` is only read; `*out` owned, destroy with
/// `hurray_stream_encoder_destroy`.
///
/// # Safety
/// `limits` NULL or valid for a read; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_encoder_new(
    limits: *const HurrayStreamLimits,
    out: *mut *mut HurrayStreamEncoder,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let limits = unsafe { limits_in(limits)? };
        let e = HurrayStreamEncoder::new(&limits)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(e)) }
    })
}

/// Checks `tensor` (buffers against the buffer table; sync modes in cross-machine
/// mode) and makes it the current item: its stream encoding is `*out_chunk_count`
/// chunks, `*out_len` bytes in all, read with `hurray_stream_encoder_chunk` and
/// written in order. The descriptor chunk is the encoder's; buffer chunks point at
/// the tensor's own buffers (no copy). The encoder holds a reference to those buffers
/// until the next begin, `hurray_stream_encoder_end` or destroy, so the tensor may be
/// destroyed meanwhile (its release then runs when the encoder lets go) — except a
/// tensor made by another copy of the library, whose buffers are only borrowed: keep
/// it alive until then.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (an encoder of another copy of the library, or a device
/// buffer); `HURRAY_ERR_BUFFER_MISMATCH`; `HURRAY_ERR_INVALID_SYNC_MODE` (cross-machine
/// mode and a buffer that is not producer-synced); `HURRAY_ERR_FORMAT` (a composite
/// head with members: use `hurray_stream_encoder_begin_item`). On error there is no
/// current item.
///
/// Ownership: `tensor` stays the caller's; nothing is returned to free.
///
/// # Safety
/// `encoder` NULL or live; `tensor` NULL or live; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_encoder_begin_tensor(
    encoder: *mut HurrayStreamEncoder,
    tensor: *const HurrayTensor,
    out_chunk_count: *mut u64,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let e = unsafe { handle::own_mut(encoder, "encoder")? };
        // SAFETY: forwarded.
        let t = unsafe { crate::foreign::io_tensor(tensor, "tensor")? };
        need(out_chunk_count, "out_chunk_count")?;
        need(out_len, "out_len")?;
        let (n, len) = e.begin_io_tensor(t)?;
        // SAFETY: both checked non-null.
        unsafe {
            put(out_chunk_count, "out_chunk_count", n)?;
            put(out_len, "out_len", len)
        }
    })
}

/// `hurray_stream_encoder_begin_tensor` for an item: a tensor, or a composite whose
/// descriptors go out in pre-order (head, then each member, nested heads expanded in
/// place), each followed by its buffers. The whole composite is checked first (member
/// count, shard coverage, roles, nesting), so a torn or invalid composite never
/// reaches the output.
///
/// Errors: those of `hurray_stream_encoder_begin_tensor`, and `HURRAY_ERR_STATE` (a
/// composite with fewer members than its head declares), `HURRAY_ERR_FORMAT` (a
/// composite rule; the message names it).
///
/// Ownership: `item` stays the caller's; nothing is returned to free.
///
/// # Safety
/// `encoder` NULL or live; `item` NULL or live; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_encoder_begin_item(
    encoder: *mut HurrayStreamEncoder,
    item: *const HurrayItem,
    out_chunk_count: *mut u64,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let e = unsafe { handle::own_mut(encoder, "encoder")? };
        // SAFETY: forwarded.
        let i = unsafe { handle::own(item, "item")? };
        need(out_chunk_count, "out_chunk_count")?;
        need(out_len, "out_len")?;
        let (n, len) = e.begin_item(i)?;
        // SAFETY: both checked non-null.
        unsafe {
            put(out_chunk_count, "out_chunk_count", n)?;
            put(out_len, "out_len", len)
        }
    })
}

/// Chunk `index` of the current item: `*out_len` bytes (never 0) at `*out_ptr`, to be
/// written in index order.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not an encoder of this copy); `HURRAY_ERR_STATE` (no
/// current item); `HURRAY_ERR_OUT_OF_RANGE` (`index` >= the chunk count).
///
/// Ownership: `*out_ptr` borrowed, valid until the next begin, end or destroy of the
/// encoder (buffer chunks are the caller's own buffers).
///
/// # Safety
/// `encoder` NULL or live; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_encoder_chunk(
    encoder: *const HurrayStreamEncoder,
    index: u64,
    out_ptr: *mut *const u8,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let e = unsafe { handle::own(encoder, "encoder")? };
        need(out_ptr, "out_ptr")?;
        need(out_len, "out_len")?;
        let c = e.chunk(index)?;
        let (p, n) = (c.as_ptr(), c.len() as u64);
        // SAFETY: both checked non-null.
        unsafe {
            put(out_ptr, "out_ptr", p)?;
            put(out_len, "out_len", n)
        }
    })
}

/// Lets go of the current item (and its references to the caller's buffers). Optional:
/// the next begin and destroy do it too. A no-op without a current item.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT`.
///
/// Ownership: chunk pointers of the current item become invalid.
///
/// # Safety
/// `encoder` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_encoder_end(
    encoder: *mut HurrayStreamEncoder,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let e = unsafe { handle::own_mut(encoder, "encoder")? };
        e.end();
        Ok(())
    })
}

/// Bytes of all items begun so far (the encoder assumes every chunk is written): the
/// stream offset the next item starts at.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT`.
///
/// Ownership: `*out` written by value; nothing to free.
///
/// # Safety
/// `encoder` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_encoder_position(
    encoder: *const HurrayStreamEncoder,
    out: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let e = unsafe { handle::own(encoder, "encoder")? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", e.position()) }
    })
}

/// Destroys an encoder (letting go of its current item) and nulls `*encoder`. NULL
/// and `*encoder == NULL` are no-ops.
///
/// Errors: `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not an encoder);
/// `HURRAY_ERR_DOUBLE_DESTROY` (debug builds, stale pointer).
///
/// Ownership: the handle is freed; chunk pointers become invalid.
///
/// # Safety
/// `encoder` NULL, or pointing at NULL or a live encoder handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_stream_encoder_destroy(
    encoder: *mut *mut HurrayStreamEncoder,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(encoder, "encoder") })
}
