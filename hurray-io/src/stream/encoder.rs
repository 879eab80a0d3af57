//! The sans-io stream encoder (`streams-and-transport.md` A.3, A.4).

use super::decoder::{check_descriptor_len, check_handle};
use crate::composite;
use crate::error::{Error, FormatRule, Result};
use crate::limits::Limits;
use crate::tensor::{check_buffers, is_head, Composite, Item, Tensor};
use hurray_core::Layout;
use std::ops::Range;

/// A sans-io encoder of the bare streaming format: turns an [`Item`] into the bytes
/// that represent it on the stream, as an [`Encoded`] sequence of chunks: descriptor
/// bytes the encoder produced, and borrowed views of the caller's buffers (never
/// copied).
///
/// Before producing anything for an item it checks the whole item (A.3): for every
/// tensor, the number of supplied buffers equals `buffer_count` and each length equals
/// its `byte_size` (`BufferMismatch`); in cross-machine mode ([`Limits::cross_machine`],
/// A.5) every handle has `sync_mode = 0` (`SyncMode`); every descriptor encodes
/// (validates); a composite passes [`composite::validate`] at every level, within
/// [`Limits::max_composite_depth`] and [`Limits::max_composite_members`]; a bare
/// composite head is only accepted with `member_count = 0`. So an invalid or torn
/// composite never reaches the output.
///
/// It also refuses, with the rule a [`StreamDecoder`](super::StreamDecoder) with the
/// same limits would report (`Limit`), whatever that decoder would refuse to read: a
/// descriptor longer than [`Limits::max_descriptor_bytes`], a buffer larger than
/// [`Limits::max_buffer_bytes`], a non-empty buffer declaring an alignment above
/// [`MAX_HONORED_ALIGNMENT`](super::MAX_HONORED_ALIGNMENT). A stream it emits is read
/// back by such a decoder.
///
/// The encoder counts the bytes of the items it encoded ([`position`](Self::position))
/// so that errors name the absolute stream offset where the rejected item would have
/// started; it assumes the caller writes every chunk it is given.
#[derive(Clone, Debug, Default)]
pub struct StreamEncoder {
    limits: Limits,
    pos: u64,
}

/// One encoded item: the chunks to write, in order. Descriptor bytes are owned by
/// this value; buffer chunks borrow the item's buffers (lifetime `'a`).
#[derive(Debug)]
pub struct Encoded<'a> {
    descriptors: Vec<u8>,
    chunks: Vec<Chunk<'a>>,
    len: u64,
}

#[derive(Debug)]
enum Chunk<'a> {
    /// A range of `Encoded::descriptors` (consecutive descriptors are merged).
    Descriptor(Range<usize>),
    /// A caller's buffer.
    Buffer(&'a [u8]),
}

impl StreamEncoder {
    /// An encoder enforcing `limits` as a decoder with the same limits would
    /// (`cross_machine` (A.5), descriptor and buffer sizes, composite depth and
    /// members), so that such a decoder reads back everything it emits.
    pub fn new(limits: Limits) -> StreamEncoder {
        StreamEncoder { limits, pos: 0 }
    }

    /// Bytes of all items encoded so far: the stream offset the next item starts at.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Encodes a plain tensor (a composite head is accepted only with
    /// `member_count = 0`). See [`encode_item`](Self::encode_item).
    pub fn encode_tensor<'a>(&mut self, tensor: &'a Tensor) -> Result<Encoded<'a>> {
        self.check_tensor(tensor)?;
        self.check_heads(&Item::Tensor(tensor.clone()), 0)?;
        let mut out = Encoded::empty();
        self.emit(tensor, &mut out)?;
        self.pos += out.len;
        Ok(out)
    }

    /// Checks the whole item, then returns its encoding: descriptors in pre-order
    /// (head, then each member; nested heads expanded in place, A.4), each followed by
    /// its buffers in buffer-table order.
    ///
    /// Errors (nothing is produced, [`position`](Self::position) unchanged; offsets are
    /// the item's start): [`Error::Content`] when a tensor's buffer contents break a
    /// content rule, `BufferMismatch`, `SyncMode`, `Limit`, `CompositeMember`,
    /// `TornComposite`, `CompositeDepth` (format errors), or a descriptor error when a
    /// descriptor does not validate.
    pub fn encode_item<'a>(&mut self, item: &'a Item) -> Result<Encoded<'a>> {
        self.check_item(item)?;
        let mut out = Encoded::empty();
        let mut result = Ok(());
        item.for_each_tensor(&mut |t| {
            if result.is_ok() {
                result = self.emit(t, &mut out);
            }
        });
        result?;
        self.pos += out.len;
        Ok(out)
    }

    fn check_item(&self, item: &Item) -> Result<()> {
        if let Item::Composite(c) = item {
            composite::validate(
                c,
                self.limits.composite_depth(),
                self.limits.max_composite_members,
            )
            .map_err(|e| self.rebase(e))?;
        }
        let mut result = Ok(());
        item.for_each_tensor(&mut |t| {
            if result.is_ok() {
                result = self.check_tensor(t);
            }
        });
        result?;
        self.check_heads(item, 0)
    }

    /// Supplied buffers against the table; then what a decoder with the same limits
    /// checks before reading the tensor's buffers (the same functions): the
    /// descriptor's length, and each handle's sync mode (cross-machine mode), size
    /// and alignment.
    fn check_tensor(&self, t: &Tensor) -> Result<()> {
        let d = t.descriptor();
        check_buffers(d, t.buffers().iter().map(|b| b.len())).map_err(|e| self.rebase(e))?;
        t.validate_content()?;
        check_descriptor_len(&self.limits, d.encoded_len() as u64, self.pos)?;
        for (i, h) in d.buffers.iter().enumerate() {
            if let Err(v) = check_handle(&self.limits, i, h) {
                return Err(Error::format(v.rule, self.pos, v.detail));
            }
        }
        Ok(())
    }

    /// A head given as a plain tensor (`Item::Tensor`) would promise members that are
    /// not there: accepted only with `member_count = 0`, and only within the depth
    /// limit (`depth` = composites enclosing it).
    fn check_heads(&self, item: &Item, depth: u32) -> Result<()> {
        match item {
            Item::Composite(c) => c
                .members
                .iter()
                .try_for_each(|m| self.check_heads(m, depth + 1)),
            Item::Tensor(t) => {
                let Layout::CompositeHead(h) = &t.descriptor().layout else {
                    return Ok(());
                };
                if depth >= self.limits.composite_depth() {
                    return Err(Error::format(
                        FormatRule::CompositeDepth,
                        self.pos,
                        format_args!(
                            "composites nested deeper than {} levels",
                            self.limits.composite_depth()
                        ),
                    ));
                }
                if h.member_count != 0 {
                    return Err(Error::format(
                        FormatRule::TornComposite,
                        self.pos,
                        format_args!(
                            "a composite head with member_count {} must be written as a \
                             composite with its members",
                            h.member_count
                        ),
                    ));
                }
                let empty = Composite {
                    head: t.clone(),
                    members: Vec::new(),
                };
                composite::validate(&empty, u32::MAX, self.limits.max_composite_members)
                    .map_err(|e| self.rebase(e))
            }
        }
    }

    /// Puts the offset of the item being encoded into an error found at offset 0.
    fn rebase(&self, e: Error) -> Error {
        match e {
            Error::Format {
                rule,
                offset,
                detail,
            } => Error::Format {
                rule,
                offset: offset + self.pos,
                detail,
            },
            other => other,
        }
    }

    fn emit<'a>(&self, t: &'a Tensor, out: &mut Encoded<'a>) -> Result<()> {
        let d = t.descriptor();
        let from = out.descriptors.len();
        let at = self.pos + out.len;
        d.encode_into(&mut out.descriptors)
            .map_err(|source| Error::Descriptor { at, source })?;
        let to = out.descriptors.len();
        out.len += (to - from) as u64;
        match out.chunks.last_mut() {
            Some(Chunk::Descriptor(r)) if r.end == from => r.end = to,
            _ => out.chunks.push(Chunk::Descriptor(from..to)),
        }
        for b in t.buffers() {
            if !b.is_empty() {
                out.len += b.len() as u64;
                out.chunks.push(Chunk::Buffer(b.as_slice()));
            }
        }
        debug_assert!(!is_head(d) || t.buffers().is_empty());
        Ok(())
    }
}

impl<'a> Encoded<'a> {
    fn empty() -> Encoded<'a> {
        Encoded {
            descriptors: Vec::new(),
            chunks: Vec::new(),
            len: 0,
        }
    }

    /// Total bytes of the item on the stream.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the encoding has no bytes (never the case for a real item).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of chunks (descriptor runs and non-empty buffers).
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Chunk `i` (borrowed from this value or from the item's buffers), or `None`
    /// past the end.
    pub fn chunk(&self, i: usize) -> Option<&[u8]> {
        self.chunks.get(i).map(|c| match c {
            Chunk::Descriptor(r) => &self.descriptors[r.clone()],
            Chunk::Buffer(b) => *b,
        })
    }

    /// The chunks in the order they must be written.
    pub fn chunks(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.chunks.len()).filter_map(move |i| self.chunk(i))
    }

    /// The descriptor bytes this encoding owns (all descriptors of the item,
    /// concatenated; the buffers are not included).
    pub fn descriptor_bytes(&self) -> &[u8] {
        &self.descriptors
    }
}
