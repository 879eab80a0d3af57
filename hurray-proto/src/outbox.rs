//! What a state machine asks its I/O layer to send: [`Transmit`]s, produced lazily so
//! a large tensor's frames are not materialised up front.

use crate::frames::split_frames;
use crate::message::{Message, TensorData, DATA_PREFIX_LEN};
use crate::{ErrorCode, ProtoError, Result};
use hurray_io::Buffer;
use std::collections::{HashSet, VecDeque};
use std::ops::Range;

/// One unit for the I/O layer to write, in order.
#[derive(Clone, Debug)]
pub enum Transmit {
    /// One or more complete encoded messages.
    Bytes {
        /// The transport stream they belong to (0 for connection-level messages).
        stream_id: u32,
        /// Header(s) + payload(s).
        bytes: Vec<u8>,
    },
    /// One `TENSOR_DATA` message: write `prefix` then `buffer.as_slice()[range]` (a
    /// vectored write; the bytes are not copied into the message).
    Data {
        /// The transport stream.
        stream_id: u32,
        /// Header + `byte_offset_in_buffer`.
        prefix: [u8; DATA_PREFIX_LEN],
        /// The tensor buffer the data lives in (a mapping, an aligned allocation, …).
        buffer: Buffer,
        /// The frame's bytes within `buffer`.
        range: Range<usize>,
    },
    /// Flush what came before, then close the connection (B.7 rule 3, B.16).
    CloseConnection,
}

impl Transmit {
    /// Bytes this transmit puts on the wire.
    pub fn wire_len(&self) -> usize {
        match self {
            Transmit::Bytes { bytes, .. } => bytes.len(),
            Transmit::Data { range, .. } => DATA_PREFIX_LEN + range.len(),
            Transmit::CloseConnection => 0,
        }
    }
}

#[derive(Debug)]
pub(crate) enum Pending {
    /// An `ERROR` message (kept apart so that shutdown can tell a stream that is
    /// only being told it closed from one with a transfer under way).
    Error(u32, Vec<u8>),
    Bytes(u32, Vec<u8>),
    /// Frames of `buffer[range]`, whose first byte is at `offset` in the tensor's
    /// concatenated data, each at most `per` bytes.
    Frames {
        stream_id: u32,
        buffer: Buffer,
        range: Range<usize>,
        offset: u64,
        per: usize,
    },
    Close,
}

impl Pending {
    fn stream_id(&self) -> Option<u32> {
        match self {
            Pending::Bytes(s, _) | Pending::Error(s, _) | Pending::Frames { stream_id: s, .. } => {
                Some(*s)
            }
            Pending::Close => None,
        }
    }
}

/// Builder for one response: everything is checked before anything is queued.
#[derive(Debug, Default)]
pub(crate) struct Batch(pub(crate) Vec<Pending>);

impl Batch {
    pub(crate) fn msg(&mut self, stream_id: u32, m: &Message) -> Result<()> {
        let bytes = m.encode(stream_id)?;
        match self.0.last_mut() {
            Some(Pending::Bytes(s, b)) if *s == stream_id && b.len() < 64 * 1024 => {
                b.extend_from_slice(&bytes)
            }
            _ => self.0.push(Pending::Bytes(stream_id, bytes)),
        }
        Ok(())
    }

    /// Frames for `buffer[range]`, starting at tensor data offset `offset`.
    pub(crate) fn frames(
        &mut self,
        stream_id: u32,
        buffer: Buffer,
        range: Range<usize>,
        offset: u64,
        peer_max: u32,
        local_cap: u64,
    ) -> Result<()> {
        let len = range.len();
        if len == 0 {
            return Ok(());
        }
        let mut plan = split_frames(len as u64, peer_max, local_cap)?;
        let per = plan.next().map_or(len, |(_, l)| l as usize);
        self.0.push(Pending::Frames {
            stream_id,
            buffer,
            range,
            offset,
            per,
        });
        Ok(())
    }
}

/// The queue behind `poll_transmit`.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    q: VecDeque<Pending>,
}

impl Outbox {
    pub(crate) fn push_batch(&mut self, b: Batch) {
        self.q.extend(b.0);
    }

    pub(crate) fn push_msg(&mut self, stream_id: u32, m: &Message) {
        let mut b = Batch::default();
        // Messages the state machines build themselves always encode.
        if b.msg(stream_id, m).is_ok() {
            self.push_batch(b);
        }
    }

    pub(crate) fn error(&mut self, stream_id: u32, e: &ProtoError) {
        let mut msg = e.detail.clone();
        if msg.len() > 1024 {
            let mut cut = 1024;
            while !msg.is_char_boundary(cut) {
                cut -= 1;
            }
            msg.truncate(cut);
        }
        let m = Message::Error {
            code: e.code,
            message: msg,
        };
        if let Ok(bytes) = m.encode(stream_id) {
            self.q.push_back(Pending::Error(stream_id, bytes));
        }
    }

    pub(crate) fn close(&mut self) {
        self.q.push_back(Pending::Close);
    }

    /// Drops everything queued for `stream_id` (the stream was closed by an ERROR).
    pub(crate) fn cancel(&mut self, stream_id: u32) -> bool {
        let before = self.q.len();
        self.q.retain(|p| p.stream_id() != Some(stream_id));
        self.q.len() != before
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Stream ids with something other than an `ERROR` queued, each once, in queue
    /// order.
    pub(crate) fn streams(&self) -> Vec<u32> {
        let mut v: Vec<u32> = Vec::new();
        let busy = self.q.iter().filter(|p| !matches!(p, Pending::Error(..)));
        for id in busy.filter_map(Pending::stream_id) {
            if !v.contains(&id) {
                v.push(id);
            }
        }
        v
    }

    pub(crate) fn pop(&mut self) -> Option<Transmit> {
        let front = self.q.front_mut()?;
        if let Pending::Frames {
            stream_id,
            buffer,
            range,
            offset,
            per,
        } = front
        {
            let n = (*per).min(range.len());
            let r = range.start..range.start + n;
            let prefix = TensorData::encode_prefix(*stream_id, *offset, n).ok()?;
            let t = Transmit::Data {
                stream_id: *stream_id,
                prefix,
                buffer: buffer.clone(),
                range: r,
            };
            range.start += n;
            *offset += n as u64;
            if range.start >= range.end {
                self.q.pop_front();
            }
            return Some(t);
        }
        Some(match self.q.pop_front()? {
            Pending::Bytes(stream_id, bytes) | Pending::Error(stream_id, bytes) => {
                Transmit::Bytes { stream_id, bytes }
            }
            Pending::Close => Transmit::CloseConnection,
            Pending::Frames { .. } => unreachable!("handled above"),
        })
    }
}

/// Recently closed stream ids, so that messages still in flight on them are dropped
/// instead of answered (which would make both peers trade ERRORs). Bounded.
#[derive(Debug, Default)]
pub(crate) struct Closed {
    set: HashSet<u32>,
    order: VecDeque<u32>,
}

const CLOSED_KEEP: usize = 4096;

impl Closed {
    pub(crate) fn insert(&mut self, id: u32) {
        if self.set.insert(id) {
            self.order.push_back(id);
            if self.order.len() > CLOSED_KEEP {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }
    pub(crate) fn remove(&mut self, id: u32) {
        if self.set.remove(&id) {
            self.order.retain(|&x| x != id);
        }
    }
    pub(crate) fn contains(&self, id: u32) -> bool {
        self.set.contains(&id)
    }
}

pub(crate) fn unexpected(m: &Message, state: &str) -> ProtoError {
    ProtoError::new(
        ErrorCode::InvalidMessage,
        format!("{} not expected {state}", m.name()),
    )
}
