//! Receiving side of B.11 (one tensor), B.12 (composites) and A.5: turns a
//! descriptor / data / end sequence into a validated [`Item`].
//!
//! Used by the client for `TENSOR_REQUEST` responses and by the server for `TENSOR_PUT`.

use crate::error::{ErrorCode, ProtoError, Result};
use crate::frames::FrameChecker;
use hurray_core::{DecodeOptions, Layout, SyncMode, TensorDescriptor};
use hurray_io::composite::CompositeChecker;
use hurray_io::{AlignedBuf, Buffer, Composite, Item, Tensor};

pub use crate::error::private_code::{LIMIT_EXCEEDED, SHUTTING_DOWN};

/// Composite nesting accepted over the transport (Ambiguity S13: the composite text's 8).
pub const MAX_COMPOSITE_DEPTH: usize = 8;

/// What a receiver accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiveOptions {
    /// Most data bytes one item (all tensors of a composite together) may carry.
    pub max_item_bytes: u64,
    /// Most members one composite head may declare.
    pub max_composite_members: u32,
    /// Device tags accepted in buffer handles (B.10 rule 6; PUT: the server's devices).
    pub devices: Vec<u8>,
    /// Memory classes accepted (S11).
    pub memory_classes: Vec<u8>,
}

impl Default for ReceiveOptions {
    fn default() -> Self {
        ReceiveOptions {
            max_item_bytes: 1 << 32,
            max_composite_members: 65_536,
            devices: vec![0x00],
            memory_classes: vec![0x00],
        }
    }
}

pub(crate) fn io_err(e: hurray_io::Error) -> ProtoError {
    ProtoError::invalid(e.to_string())
}

struct Level {
    checker: CompositeChecker,
    head: Tensor,
    members: Vec<Item>,
}

struct Current {
    desc: TensorDescriptor,
    bufs: Vec<AlignedBuf>,
    /// Start of each buffer in the concatenated offset space (Ambiguity S7).
    starts: Vec<u64>,
    frames: FrameChecker,
    /// The open frame's next byte and end (concatenated offsets).
    write_at: u64,
    write_end: u64,
}

/// Receiver of one item: a plain tensor, or a composite (head, then its members
/// pre-order, B.12).
pub struct ItemReceiver {
    opts: ReceiveOptions,
    stack: Vec<Level>,
    cur: Option<Current>,
    bytes: u64,
    done: bool,
}

impl ItemReceiver {
    /// A receiver expecting a descriptor.
    pub fn new(opts: ReceiveOptions) -> ItemReceiver {
        ItemReceiver {
            opts,
            stack: Vec::new(),
            cur: None,
            bytes: 0,
            done: false,
        }
    }

    /// Data bytes announced so far by this item's descriptors (what its buffers
    /// take once allocated).
    pub fn reserved_bytes(&self) -> u64 {
        self.bytes
    }

    /// True while a descriptor is expected next (before the first, or between the
    /// members of a composite).
    pub fn wants_descriptor(&self) -> bool {
        self.cur.is_none() && !self.done
    }

    /// True between a descriptor and its `TENSOR_DATA_END`, before any data frame.
    pub fn at_data_start(&self) -> bool {
        self.cur.as_ref().is_some_and(|c| c.frames.received() == 0)
    }

    /// The descriptor of the tensor being received.
    pub fn current(&self) -> Option<&TensorDescriptor> {
        self.cur.as_ref().map(|c| &c.desc)
    }

    /// A `TENSOR_DESCRIPTOR` (or `TENSOR_PUT`'s descriptor) with `total_data_bytes`.
    ///
    /// Errors: `INVALID_MESSAGE` when the descriptor does not decode strictly, a
    /// buffer's `sync_mode` is not `0x00` (A.5), the buffers disagree on device or
    /// memory class (B.10 rule 5), `total_data_bytes` ≠ Σ `byte_size` (S7), a
    /// composite member fails its per-member check (B.12), or nesting passes 8 levels
    /// (S13); `DEVICE_UNAVAILABLE` for a device or memory class not accepted (B.10
    /// rule 6, S11); [`LIMIT_EXCEEDED`] above `max_item_bytes` or the member limit.
    pub fn descriptor(&mut self, bytes: &[u8], total_data_bytes: u64) -> Result<&TensorDescriptor> {
        if !self.wants_descriptor() {
            return Err(ProtoError::invalid(
                "B.11: TENSOR_DESCRIPTOR while a tensor is still open",
            ));
        }
        let d = TensorDescriptor::decode_with(bytes, &DecodeOptions::strict()).map_err(|e| {
            ProtoError::invalid(format!(
                "descriptor rejected: {:?} at descriptor offset {}: {}",
                e.rule, e.offset, e.detail
            ))
        })?;
        let mut sum = 0u64;
        for (i, b) in d.buffers.iter().enumerate() {
            if b.sync_mode != SyncMode::ProducerSynced {
                return Err(ProtoError::invalid(format!(
                    "A.5: buffer {i} has sync_mode 0x{:02X}; across machines it must be 0x00",
                    b.sync_mode.tag()
                )));
            }
            if b.device != d.buffers[0].device || b.memory_class != d.buffers[0].memory_class {
                return Err(ProtoError::invalid(format!(
                    "B.10 rule 5: buffer {i} differs from buffer 0 in device_tag or memory_class"
                )));
            }
            if !self.opts.devices.contains(&b.device.tag()) {
                return Err(ProtoError::new(
                    ErrorCode::DeviceUnavailable,
                    format!(
                        "B.10: buffer {i} is on device 0x{:02X}, not accepted here",
                        b.device.tag()
                    ),
                ));
            }
            if !self.opts.memory_classes.contains(&b.memory_class.tag()) {
                return Err(ProtoError::new(
                    ErrorCode::DeviceUnavailable,
                    format!(
                        "S11: buffer {i} has memory_class 0x{:02X}, not accepted here",
                        b.memory_class.tag()
                    ),
                ));
            }
            sum = sum.saturating_add(b.byte_size);
        }
        if sum != total_data_bytes {
            return Err(ProtoError::invalid(format!(
                "S7: total_data_bytes {total_data_bytes} != sum of buffer byte_size {sum}"
            )));
        }
        let Some(bytes_after) = self
            .bytes
            .checked_add(sum)
            .filter(|&n| n <= self.opts.max_item_bytes)
        else {
            return Err(ProtoError::new(
                LIMIT_EXCEEDED,
                format!(
                    "the item's data reaches {} bytes with this tensor's {sum}, past this receiver's limit of {} bytes per item",
                    self.bytes.saturating_add(sum),
                    self.opts.max_item_bytes
                ),
            ));
        };
        let is_head = matches!(d.layout, Layout::CompositeHead(_));
        if is_head && self.stack.len() >= MAX_COMPOSITE_DEPTH {
            return Err(ProtoError::invalid(format!(
                "S13: composite nesting deeper than {MAX_COMPOSITE_DEPTH} levels"
            )));
        }
        if let Some(top) = self.stack.last_mut() {
            top.checker.member(&d, 0).map_err(io_err)?;
        }
        let mut bufs = Vec::with_capacity(d.buffers.len());
        let mut starts = Vec::with_capacity(d.buffers.len());
        let mut at = 0u64;
        for b in &d.buffers {
            starts.push(at);
            at += b.byte_size;
            let n = usize::try_from(b.byte_size)
                .ok()
                .and_then(AlignedBuf::zeroed)
                .ok_or_else(|| {
                    ProtoError::new(
                        LIMIT_EXCEEDED,
                        format!("cannot allocate {} bytes", b.byte_size),
                    )
                })?;
            bufs.push(n);
        }
        self.bytes = bytes_after;
        self.cur = Some(Current {
            desc: d,
            bufs,
            starts,
            frames: FrameChecker::new(total_data_bytes),
            write_at: 0,
            write_end: 0,
        });
        Ok(&self.cur.as_ref().expect("just set").desc)
    }

    /// A `TENSOR_DATA` frame.
    ///
    /// Errors: `INVALID_MESSAGE` before a descriptor or when the frame breaks a B.11
    /// frame rule ([`FrameChecker::frame`]).
    pub fn data(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.begin_frame(offset, data.len() as u64)?;
        let mut rest = data;
        while !rest.is_empty() {
            let dst = self.frame_slot();
            let n = dst.len().min(rest.len());
            dst[..n].copy_from_slice(&rest[..n]);
            self.commit(n);
            rest = &rest[n..];
        }
        Ok(())
    }

    /// Starts a `TENSOR_DATA` frame of `len` bytes at `offset` whose bytes the caller
    /// will write in place: [`frame_slot`](Self::frame_slot) then
    /// [`commit`](Self::commit) until `len` bytes are in (this is how a client reads
    /// frame data from the socket straight into the tensor's buffer).
    ///
    /// Errors: as [`data`](Self::data).
    pub fn begin_frame(&mut self, offset: u64, len: u64) -> Result<()> {
        let Some(c) = self.cur.as_mut() else {
            return Err(ProtoError::invalid(
                "B.11: TENSOR_DATA before its TENSOR_DESCRIPTOR",
            ));
        };
        c.frames.frame(offset, len)?;
        c.write_at = offset;
        c.write_end = offset + len;
        Ok(())
    }

    /// Where the next bytes of the frame started by [`begin_frame`](Self::begin_frame)
    /// go: the rest of the frame inside the buffer that holds its next byte (a frame
    /// may span buffers; then the next slot is in the following buffer). Empty when
    /// the frame is complete or none is open.
    pub fn frame_slot(&mut self) -> &mut [u8] {
        let Some(c) = self.cur.as_mut() else {
            return &mut [];
        };
        if c.write_at >= c.write_end {
            return &mut [];
        }
        let at = c.write_at;
        let i = c.starts.partition_point(|&s| s <= at) - 1;
        let within = (at - c.starts[i]) as usize;
        let want = (c.write_end - at) as usize;
        let buf = &mut c.bufs[i].as_mut_slice()[within..];
        let n = buf.len().min(want);
        &mut buf[..n]
    }

    /// Records that `n` bytes were written at the start of
    /// [`frame_slot`](Self::frame_slot).
    ///
    /// # Panics
    /// When `n` exceeds what the frame still expects (a caller bug).
    pub fn commit(&mut self, n: usize) {
        let c = self.cur.as_mut().expect("an open frame");
        assert!(
            c.write_at + n as u64 <= c.write_end,
            "commit past the frame"
        );
        c.write_at += n as u64;
    }

    /// `TENSOR_DATA_END`. Returns the whole item once it is complete (a plain tensor
    /// at its end; a composite at the end of its last member, after the close-time
    /// checks).
    ///
    /// Errors: `INVALID_MESSAGE` before a descriptor, when frames add up to less than
    /// `total_data_bytes`, when buffer contents break a content rule (sparse indices,
    /// …), or when a composite fails its close-time check (B.12).
    pub fn end(&mut self) -> Result<Option<Item>> {
        let Some(c) = self.cur.take() else {
            return Err(ProtoError::invalid(
                "B.11: TENSOR_DATA_END before its TENSOR_DESCRIPTOR",
            ));
        };
        c.frames.end()?;
        if c.write_at != c.write_end {
            return Err(ProtoError::invalid(
                "B.11: TENSOR_DATA_END inside a TENSOR_DATA frame",
            ));
        }
        let bufs: Vec<Buffer> = c.bufs.into_iter().map(Buffer::from_aligned).collect();
        let is_head = matches!(c.desc.layout, Layout::CompositeHead(_));
        let t = Tensor::new(c.desc, bufs).map_err(io_err)?;
        if is_head {
            let checker = CompositeChecker::new(t.descriptor(), 0, self.opts.max_composite_members)
                .map_err(|e| {
                    let mut p = io_err(e);
                    if p.detail.contains("limit") {
                        p.code = LIMIT_EXCEEDED;
                    }
                    p
                })?;
            self.stack.push(Level {
                checker,
                head: t,
                members: Vec::new(),
            });
            return self.close_levels(None);
        }
        self.close_levels(Some(Item::Tensor(t)))
    }

    fn close_levels(&mut self, mut item: Option<Item>) -> Result<Option<Item>> {
        loop {
            match (item.take(), self.stack.last_mut()) {
                (Some(it), None) => {
                    self.done = true;
                    return Ok(Some(it));
                }
                (Some(it), Some(top)) => top.members.push(it),
                (None, None) => return Ok(None),
                (None, Some(_)) => {}
            }
            let top = self.stack.last().expect("non-empty");
            if top.checker.remaining() > 0 {
                return Ok(None);
            }
            top.checker.close(0).map_err(io_err)?;
            let l = self.stack.pop().expect("non-empty");
            item = Some(Item::Composite(Composite {
                head: l.head,
                members: l.members,
            }));
        }
    }
}
