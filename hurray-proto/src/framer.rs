//! B.2/B.17: cutting a byte stream into messages, refusing oversized payloads before
//! buffering them.

use crate::error::{ErrorCode, ProtoError, Result};
use crate::header::{Header, HEADER_LEN};
use crate::message::Message;

/// One complete message as it came off the wire: header and raw payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The header.
    pub header: Header,
    /// Exactly `header.payload_length` bytes.
    pub payload: Vec<u8>,
}

impl Frame {
    /// Decodes the payload (see [`Message::decode_owned`]).
    pub fn decode(self) -> Result<Message> {
        Message::decode_owned(&self.header, self.payload)
    }
}

/// What [`Framer::advance`] / [`Framer::push`] produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameEvent {
    /// A complete message.
    Frame(Frame),
    /// A header whose `payload_length` exceeds the local maximum (B.17). Nothing of
    /// the payload is buffered: the framer now discards the next `payload_length`
    /// bytes (Ambiguity S17) and then continues with the next header. The receiver
    /// must answer `ERROR MESSAGE_TOO_LARGE` on `header.stream_id` (see
    /// [`FrameEvent::too_large_error`]).
    TooLarge(Header),
}

impl FrameEvent {
    /// For [`FrameEvent::TooLarge`], the `MESSAGE_TOO_LARGE` error to send.
    pub fn too_large_error(h: &Header, max: u32) -> ProtoError {
        ProtoError::new(
            ErrorCode::MessageTooLarge,
            format!(
                "B.17: {} payload_length {} exceeds this peer's max_message_size {max}",
                crate::message::type_name(h.message_type),
                h.payload_length
            ),
        )
    }
}

/// Result of [`Framer::push`].
#[derive(Debug)]
pub struct Pushed {
    /// Bytes of the input taken; feed the rest again.
    pub consumed: usize,
    /// An event completed by those bytes, if any.
    pub event: Option<FrameEvent>,
}

const SKIP_CHUNK: usize = 64 * 1024;

/// Incremental message framer.
///
/// Feed it bytes either by copying ([`Framer::push`]) or by reading straight into
/// the slice [`Framer::read_buf`] returns and then calling [`Framer::advance`] (one
/// copy fewer: a payload is read into the `Vec` the [`Frame`] hands out).
///
/// Memory: never holds more than 12 header bytes plus one payload of at most
/// `max_payload` bytes (plus a 64 KiB scratch while skipping an oversized one).
/// A `payload_length` above `max_payload` is reported as [`FrameEvent::TooLarge`]
/// as soon as its header is complete, before any payload byte is stored.
#[derive(Debug)]
pub struct Framer {
    max_payload: u32,
    hdr: [u8; HEADER_LEN],
    hdr_len: usize,
    cur: Option<Header>,
    payload: Vec<u8>,
    filled: usize,
    skip: u64,
    scratch: Vec<u8>,
    /// Split mode: a `TENSOR_DATA` yields its header and offset first; its data
    /// bytes then pass through (see [`Step::DataHead`]).
    split_data: bool,
    data_head: bool,
}

/// What [`Framer::advance_step`] produced (split mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Event(FrameEvent),
    /// A `TENSOR_DATA` header and its `byte_offset_in_buffer`; the next
    /// `payload_length - 8` bytes are its data. The framer discards them through
    /// [`Framer::read_buf`] unless the owner takes them elsewhere and reports them
    /// with [`Framer::discard`].
    DataHead {
        header: Header,
        offset: u64,
    },
}

impl Framer {
    /// A framer accepting payloads up to `max_payload` bytes (this side's advertised
    /// `max_message_size`).
    pub fn new(max_payload: u32) -> Framer {
        Framer {
            max_payload,
            hdr: [0; HEADER_LEN],
            hdr_len: 0,
            cur: None,
            payload: Vec::new(),
            filled: 0,
            skip: 0,
            scratch: Vec::new(),
            split_data: false,
            data_head: false,
        }
    }

    /// A framer in split mode (for the client's in-place receive path).
    pub(crate) fn split(max_payload: u32) -> Framer {
        Framer {
            split_data: true,
            ..Framer::new(max_payload)
        }
    }

    /// Bytes of a passing-through payload that the owner consumed itself.
    pub(crate) fn discard(&mut self, n: usize) {
        assert!(n as u64 <= self.skip, "discard past the payload");
        self.skip -= n as u64;
    }

    /// The configured maximum payload.
    pub fn max_payload(&self) -> u32 {
        self.max_payload
    }

    /// True between messages (no partial header, payload or skip pending): a clean
    /// place for the connection to end.
    pub fn is_idle(&self) -> bool {
        self.hdr_len == 0 && self.cur.is_none() && self.skip == 0
    }

    /// Bytes currently held for a partial message (header + payload buffer).
    pub fn buffered(&self) -> usize {
        self.hdr_len + self.payload.len() + self.scratch.len()
    }

    /// Bytes still missing for the current header or payload, or still to discard.
    pub fn wanted(&self) -> u64 {
        if self.skip > 0 {
            self.skip
        } else if self.cur.is_some() {
            (self.payload.len() - self.filled) as u64
        } else {
            (HEADER_LEN - self.hdr_len) as u64
        }
    }

    /// The slice to read the next bytes into (never empty). Reading into it and
    /// calling [`Framer::advance`] with the count read is equivalent to
    /// [`Framer::push`] of those bytes.
    pub fn read_buf(&mut self) -> &mut [u8] {
        if self.skip > 0 {
            let n = self.skip.min(SKIP_CHUNK as u64) as usize;
            if self.scratch.len() < n {
                self.scratch.resize(n, 0);
            }
            &mut self.scratch[..n]
        } else if self.cur.is_some() {
            &mut self.payload[self.filled..]
        } else {
            &mut self.hdr[self.hdr_len..]
        }
    }

    /// Records that `n` bytes were written at the start of [`Framer::read_buf`].
    ///
    /// # Panics
    /// When `n` exceeds the length of the slice `read_buf` returned (a caller bug).
    pub fn advance(&mut self, n: usize) -> Option<FrameEvent> {
        match self.advance_step(n)? {
            Step::Event(e) => Some(e),
            // Not produced outside split mode; a split framer's owner uses advance_step.
            Step::DataHead { .. } => None,
        }
    }

    pub(crate) fn advance_step(&mut self, n: usize) -> Option<Step> {
        if self.skip > 0 {
            assert!(
                n as u64 <= self.skip && n <= SKIP_CHUNK,
                "advance past read_buf"
            );
            self.skip -= n as u64;
            if self.skip == 0 {
                self.scratch = Vec::new();
            }
            return None;
        }
        if self.cur.is_some() {
            assert!(
                self.filled + n <= self.payload.len(),
                "advance past read_buf"
            );
            self.filled += n;
        } else {
            assert!(self.hdr_len + n <= HEADER_LEN, "advance past read_buf");
            self.hdr_len += n;
            if self.hdr_len < HEADER_LEN {
                return None;
            }
            self.hdr_len = 0;
            let h = Header::decode(&self.hdr).expect("12 bytes");
            if h.payload_length > self.max_payload {
                self.skip = u64::from(h.payload_length);
                return Some(Step::Event(FrameEvent::TooLarge(h)));
            }
            self.cur = Some(h);
            self.data_head = self.split_data
                && h.message_type == crate::message::message_type::TENSOR_DATA
                && h.payload_length > 8;
            let take = if self.data_head {
                8
            } else {
                h.payload_length as usize
            };
            self.payload = vec![0; take];
            self.filled = 0;
        }
        if self.filled == self.payload.len() {
            let header = self.cur.take().expect("current header");
            self.filled = 0;
            if std::mem::take(&mut self.data_head) {
                let offset = u64::from_le_bytes(self.payload[..8].try_into().expect("8 bytes"));
                self.payload = Vec::new();
                self.skip = u64::from(header.payload_length) - 8;
                return Some(Step::DataHead { header, offset });
            }
            return Some(Step::Event(FrameEvent::Frame(Frame {
                header,
                payload: std::mem::take(&mut self.payload),
            })));
        }
        None
    }

    /// Copies bytes from `input` until one event completes or the input is used up.
    pub fn push(&mut self, input: &[u8]) -> Pushed {
        let mut consumed = 0;
        loop {
            if consumed == input.len() {
                return Pushed {
                    consumed,
                    event: None,
                };
            }
            let buf = self.read_buf();
            let n = buf.len().min(input.len() - consumed);
            buf[..n].copy_from_slice(&input[consumed..consumed + n]);
            consumed += n;
            if let Some(event) = self.advance(n) {
                return Pushed {
                    consumed,
                    event: Some(event),
                };
            }
        }
    }

    /// All events in `input` (convenience for tests and small inputs).
    pub fn push_all(&mut self, mut input: &[u8]) -> Vec<FrameEvent> {
        let mut out = Vec::new();
        loop {
            let p = self.push(input);
            input = &input[p.consumed..];
            match p.event {
                Some(e) => out.push(e),
                None if input.is_empty() => return out,
                None => {}
            }
        }
    }
}
