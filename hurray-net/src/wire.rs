//! The message encodings this crate's server and client speak
//! (`streams-and-transport.md` B.3–B.8, B.11, B.15, B.16).
//!
//! A thin adapter: only what the tokio front ends need to encode and decode, with
//! every length checked against the bytes present. The full sans-io protocol core
//! (state machines, every message, RDMA answers) is the `hurray-proto` crate's job;
//! when it lands on main these functions become calls into it.

use std::fmt;

/// Length of the message header (B.3): `message_type`, `stream_id`, `payload_length`.
pub const HEADER_LEN: usize = 12;
/// The protocol version this crate speaks (B.7).
pub const PROTOCOL_VERSION: u32 = 1;

/// Message types (B.4).
pub mod msg {
    /// `CLIENT_HELLO`
    pub const CLIENT_HELLO: u32 = 0x01;
    /// `SERVER_HELLO`
    pub const SERVER_HELLO: u32 = 0x02;
    /// `TENSOR_REQUEST`
    pub const TENSOR_REQUEST: u32 = 0x03;
    /// `TENSOR_DESCRIPTOR`
    pub const TENSOR_DESCRIPTOR: u32 = 0x04;
    /// `TENSOR_DATA`
    pub const TENSOR_DATA: u32 = 0x05;
    /// `TENSOR_DATA_END`
    pub const TENSOR_DATA_END: u32 = 0x06;
    /// `TENSOR_PUT`
    pub const TENSOR_PUT: u32 = 0x07;
    /// `TENSOR_PUT_ACK`
    pub const TENSOR_PUT_ACK: u32 = 0x08;
    /// `ERROR`
    pub const ERROR: u32 = 0x09;
    /// `PING` (empty payload, Ambiguity S9)
    pub const PING: u32 = 0x0A;
    /// `PONG` (empty payload, echoes the `PING`'s `stream_id`)
    pub const PONG: u32 = 0x0B;
    /// `RDMA_REGISTER`
    pub const RDMA_REGISTER: u32 = 0x0C;
    /// `RDMA_READY`
    pub const RDMA_READY: u32 = 0x0D;

    /// True for the tags B.4 defines (private extensions `0xF0`–`0xFE` are not
    /// recognised: this implementation agreed none).
    pub fn is_known(t: u32) -> bool {
        (CLIENT_HELLO..=RDMA_READY).contains(&t)
    }
}

/// `ERROR` codes (B.16), plus this implementation's private ones (`0xF0`–`0xFE`).
pub mod code {
    /// Protocol versions cannot be reconciled.
    pub const PROTOCOL_VERSION_MISMATCH: u32 = 0x01;
    /// No tensor under the requested key.
    pub const UNKNOWN_TENSOR: u32 = 0x02;
    /// None of the acceptable layouts can be delivered.
    pub const LAYOUT_UNAVAILABLE: u32 = 0x03;
    /// Transcode declined.
    pub const TRANSCODE_LIMIT_EXCEEDED: u32 = 0x04;
    /// Requested or declared device not available.
    pub const DEVICE_UNAVAILABLE: u32 = 0x05;
    /// Malformed message (or one not allowed in the current state).
    pub const INVALID_MESSAGE: u32 = 0x06;
    /// `payload_length` above the receiver's limit.
    pub const MESSAGE_TOO_LARGE: u32 = 0x07;
    /// Inconsistent parallel shard descriptors.
    pub const SHARD_MISMATCH: u32 = 0x08;
    /// Private: in a parallel get, this stream carries no shard (the server chose
    /// fewer shards than the client opened streams).
    pub const NO_SHARD: u32 = 0xF0;
    /// Private: the PUT store cannot take the tensor (its size cap, or the
    /// per-PUT limit, would be exceeded). The PUT is refused, nothing is evicted.
    pub const STORE_FULL: u32 = 0xF1;
    /// Private: the server is at its connection or buffered-bytes limit, or is
    /// shutting down.
    pub const BUSY: u32 = 0xF2;
    /// Private: a timeout ran out (handshake, idle, or a stalled transfer).
    pub const TIMEOUT: u32 = 0xF3;

    /// The spec's name for a code (`"0xF1 STORE_FULL"` style for private ones).
    pub fn name(c: u32) -> &'static str {
        match c {
            PROTOCOL_VERSION_MISMATCH => "PROTOCOL_VERSION_MISMATCH",
            UNKNOWN_TENSOR => "UNKNOWN_TENSOR",
            LAYOUT_UNAVAILABLE => "LAYOUT_UNAVAILABLE",
            TRANSCODE_LIMIT_EXCEEDED => "TRANSCODE_LIMIT_EXCEEDED",
            DEVICE_UNAVAILABLE => "DEVICE_UNAVAILABLE",
            INVALID_MESSAGE => "INVALID_MESSAGE",
            MESSAGE_TOO_LARGE => "MESSAGE_TOO_LARGE",
            SHARD_MISMATCH => "SHARD_MISMATCH",
            NO_SHARD => "NO_SHARD (private)",
            STORE_FULL => "STORE_FULL (private)",
            BUSY => "BUSY (private)",
            TIMEOUT => "TIMEOUT (private)",
            _ => "unknown code",
        }
    }
}

/// Capability flags (B.7).
pub mod cap {
    /// Converts to a requested layout while serving.
    pub const TRANSCODING: u64 = 1 << 0;
    /// Delivers one tensor as shards over several transport streams.
    pub const PARALLEL_STREAMS: u64 = 1 << 1;
    /// RDMA data plane.
    pub const RDMA_DATA_PLANE: u64 = 1 << 2;
    /// GPUDirect destination registration.
    pub const RDMA_GPUDIRECT: u64 = 1 << 3;
}

/// Request flags (B.8).
pub mod req {
    /// The server may transcode to a preferred layout.
    pub const ALLOW_TRANSCODE: u32 = 1 << 0;
    /// The client accepts parallel shards.
    pub const PARALLEL_OK: u32 = 1 << 1;
}

/// A message header (B.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// B.4 tag.
    pub message_type: u32,
    /// Opaque per-stream id (0 reserved).
    pub stream_id: u32,
    /// Payload bytes after the header.
    pub payload_length: u32,
}

impl Header {
    /// Decodes the 12 header bytes (little-endian u32s).
    pub fn decode(b: &[u8; HEADER_LEN]) -> Header {
        let u = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Header {
            message_type: u(0),
            stream_id: u(4),
            payload_length: u(8),
        }
    }

    /// Encodes the header.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&self.message_type.to_le_bytes());
        b[4..8].copy_from_slice(&self.stream_id.to_le_bytes());
        b[8..12].copy_from_slice(&self.payload_length.to_le_bytes());
        b
    }
}

/// A payload that does not follow its B.5–B.16 encoding: what was wrong and the
/// byte offset inside the payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// Offset inside the payload where decoding failed.
    pub offset: usize,
    /// What was expected.
    pub what: String,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (payload offset {})", self.what, self.offset)
    }
}

type Res<T> = std::result::Result<T, Malformed>;

/// A bounds-checked little-endian cursor over a payload.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(b: &'a [u8]) -> Self {
        Cursor { b, at: 0 }
    }
    fn bad<T>(&self, what: impl Into<String>) -> Res<T> {
        Err(Malformed {
            offset: self.at,
            what: what.into(),
        })
    }
    fn take(&mut self, n: usize, what: &str) -> Res<&'a [u8]> {
        if self.b.len() - self.at < n {
            return self.bad(format!(
                "{what}: needs {n} bytes, {} left",
                self.b.len() - self.at
            ));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Res<u8> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Res<u16> {
        let s = self.take(2, what)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }
    fn u32(&mut self, what: &str) -> Res<u32> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes(s.try_into().expect("4 bytes")))
    }
    fn u64(&mut self, what: &str) -> Res<u64> {
        let s = self.take(8, what)?;
        Ok(u64::from_le_bytes(s.try_into().expect("8 bytes")))
    }
    fn bytes(&mut self, what: &str) -> Res<&'a [u8]> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }
    fn string(&mut self, what: &str) -> Res<String> {
        let at = self.at;
        let s = self.bytes(what)?;
        std::str::from_utf8(s)
            .map(str::to_owned)
            .map_err(|_| Malformed {
                offset: at + 4,
                what: format!("{what}: not UTF-8"),
            })
    }
    fn end(&self, what: &str) -> Res<()> {
        if self.at != self.b.len() {
            return self.bad(format!(
                "{what}: {} trailing bytes",
                self.b.len() - self.at
            ));
        }
        Ok(())
    }
    fn layouts(&mut self) -> Res<Vec<u8>> {
        let n = self.u16("layout list count")?;
        let mut v = Vec::new();
        for _ in 0..n {
            let tag = self.u8("layout tag")?;
            if (0xF0..=0xFE).contains(&tag) {
                // B.6: skip extension metadata we do not understand.
                let len = self.u16("ext_metadata_length")? as usize;
                self.take(len, "ext_metadata")?;
            }
            v.push(tag);
        }
        Ok(v)
    }
    fn u8_list(&mut self, what: &str) -> Res<Vec<u8>> {
        let n = self.u16(what)? as usize;
        Ok(self.take(n, what)?.to_vec())
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// `CLIENT_HELLO` / `SERVER_HELLO` payload (B.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// Version (client: its own; server: the one it will use, ≤ client's).
    pub protocol_version: u32,
    /// Largest payload the sender accepts.
    pub max_message_size: u32,
    /// Capability bits ([`cap`]).
    pub capability_flags: u64,
    /// Layout tags (extension entries keep only their tag).
    pub layouts: Vec<u8>,
    /// Device tags.
    pub devices: Vec<u8>,
    /// Memory classes (empty = `STANDARD` only).
    pub memory_classes: Vec<u8>,
}

impl Hello {
    /// Encodes the payload (extension layouts are not emitted by this crate).
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(32);
        o.extend_from_slice(&self.protocol_version.to_le_bytes());
        o.extend_from_slice(&self.max_message_size.to_le_bytes());
        o.extend_from_slice(&self.capability_flags.to_le_bytes());
        o.extend_from_slice(&(self.layouts.len() as u16).to_le_bytes());
        o.extend_from_slice(&self.layouts);
        o.extend_from_slice(&(self.devices.len() as u16).to_le_bytes());
        o.extend_from_slice(&self.devices);
        o.extend_from_slice(&(self.memory_classes.len() as u16).to_le_bytes());
        o.extend_from_slice(&self.memory_classes);
        o
    }

    /// Decodes a payload; the memory-class list may be absent.
    ///
    /// Errors: [`Malformed`] for short lists or trailing bytes.
    pub fn decode(p: &[u8]) -> Res<Hello> {
        let mut c = Cursor::new(p);
        let protocol_version = c.u32("protocol_version")?;
        let max_message_size = c.u32("max_message_size")?;
        let capability_flags = c.u64("capability_flags")?;
        let layouts = c.layouts()?;
        let devices = c.u8_list("supported_devices")?;
        let memory_classes = if c.at == p.len() {
            Vec::new()
        } else {
            c.u8_list("supported_memory_classes")?
        };
        c.end("hello")?;
        Ok(Hello {
            protocol_version,
            max_message_size,
            capability_flags,
            layouts,
            devices,
            memory_classes,
        })
    }
}

/// `TENSOR_REQUEST` payload (B.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Key of the wanted tensor.
    pub key: String,
    /// Preferred layout tags, most preferred first.
    pub preferred_layouts: Vec<u8>,
    /// Device tag wanted.
    pub preferred_device: u8,
    /// Minimum buffer alignment (power of two).
    pub min_alignment: u32,
    /// [`req`] bits.
    pub flags: u32,
}

impl Request {
    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(16 + self.key.len());
        put_bytes(&mut o, self.key.as_bytes());
        o.extend_from_slice(&(self.preferred_layouts.len() as u16).to_le_bytes());
        o.extend_from_slice(&self.preferred_layouts);
        o.push(self.preferred_device);
        o.extend_from_slice(&self.min_alignment.to_le_bytes());
        o.extend_from_slice(&self.flags.to_le_bytes());
        o
    }

    /// Decodes a payload.
    ///
    /// Errors: [`Malformed`].
    pub fn decode(p: &[u8]) -> Res<Request> {
        let mut c = Cursor::new(p);
        let key = c.string("tensor_key")?;
        let preferred_layouts = c.layouts()?;
        let preferred_device = c.u8("preferred_device")?;
        let min_alignment = c.u32("min_alignment")?;
        let flags = c.u32("request_flags")?;
        c.end("request")?;
        Ok(Request {
            key,
            preferred_layouts,
            preferred_device,
            min_alignment,
            flags,
        })
    }
}

/// The 16 bytes after the descriptor in `TENSOR_DESCRIPTOR` (B.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescriptorTail {
    /// Bytes of `TENSOR_DATA` content that follow for this tensor or shard.
    pub total_data_bytes: u64,
    /// 0 when not parallel.
    pub shard_index: u32,
    /// 1 when not parallel.
    pub total_shards: u32,
}

impl DescriptorTail {
    /// Encodes the 16 bytes.
    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..8].copy_from_slice(&self.total_data_bytes.to_le_bytes());
        b[8..12].copy_from_slice(&self.shard_index.to_le_bytes());
        b[12..16].copy_from_slice(&self.total_shards.to_le_bytes());
        b
    }
}

/// Splits a `TENSOR_DESCRIPTOR` payload into descriptor bytes and tail; the
/// descriptor length is read from the descriptor's own bytes 6–9.
///
/// Errors: [`Malformed`] when `payload_length ≠ descriptor_length + 16`.
pub fn split_descriptor(p: &[u8]) -> Res<(&[u8], DescriptorTail)> {
    if p.len() < 26 {
        return Err(Malformed {
            offset: 0,
            what: format!("TENSOR_DESCRIPTOR payload of {} bytes is too short", p.len()),
        });
    }
    let dl = u32::from_le_bytes(p[6..10].try_into().expect("4 bytes")) as usize;
    if dl.checked_add(16) != Some(p.len()) {
        return Err(Malformed {
            offset: 6,
            what: format!(
                "descriptor_length {dl} + 16 differs from payload_length {}",
                p.len()
            ),
        });
    }
    let mut c = Cursor::new(&p[dl..]);
    let tail = DescriptorTail {
        total_data_bytes: c.u64("total_data_bytes")?,
        shard_index: c.u32("shard_index")?,
        total_shards: c.u32("total_shards")?,
    };
    Ok((&p[..dl], tail))
}

/// `TENSOR_PUT` payload (B.15).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Put {
    /// Key for the pushed tensor.
    pub key: String,
    /// Serialised descriptor.
    pub descriptor: Vec<u8>,
    /// Bytes of `TENSOR_DATA` content the client will send.
    pub total_data_bytes: u64,
}

impl Put {
    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(16 + self.key.len() + self.descriptor.len());
        put_bytes(&mut o, self.key.as_bytes());
        put_bytes(&mut o, &self.descriptor);
        o.extend_from_slice(&self.total_data_bytes.to_le_bytes());
        o
    }

    /// Decodes a payload.
    ///
    /// Errors: [`Malformed`].
    pub fn decode(p: &[u8]) -> Res<Put> {
        let mut c = Cursor::new(p);
        let key = c.string("tensor_key")?;
        let descriptor = c.bytes("descriptor")?.to_vec();
        let total_data_bytes = c.u64("total_data_bytes")?;
        c.end("TENSOR_PUT")?;
        Ok(Put {
            key,
            descriptor,
            total_data_bytes,
        })
    }
}

/// `ERROR` payload (B.16).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorMsg {
    /// [`code`] value.
    pub code: u32,
    /// Human-readable text.
    pub message: String,
}

impl ErrorMsg {
    /// Encodes the payload (`message` cut to 4096 bytes at a char boundary).
    pub fn encode(&self) -> Vec<u8> {
        let mut end = self.message.len().min(4096);
        while !self.message.is_char_boundary(end) {
            end -= 1;
        }
        let mut o = Vec::with_capacity(8 + end);
        o.extend_from_slice(&self.code.to_le_bytes());
        put_bytes(&mut o, &self.message.as_bytes()[..end]);
        o
    }

    /// Decodes a payload.
    ///
    /// Errors: [`Malformed`].
    pub fn decode(p: &[u8]) -> Res<ErrorMsg> {
        let mut c = Cursor::new(p);
        let code = c.u32("error_code")?;
        let message = c.string("message")?;
        c.end("ERROR")?;
        Ok(ErrorMsg { code, message })
    }
}

/// A whole message: header then payload.
pub fn message(message_type: u32, stream_id: u32, payload: &[u8]) -> Vec<u8> {
    let mut o = Vec::with_capacity(HEADER_LEN + payload.len());
    o.extend_from_slice(
        &Header {
            message_type,
            stream_id,
            payload_length: payload.len() as u32,
        }
        .encode(),
    );
    o.extend_from_slice(payload);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_bytes_follow_b3() {
        let h = Header {
            message_type: msg::TENSOR_DATA,
            stream_id: 7,
            payload_length: 0x0102_0304,
        };
        assert_eq!(
            h.encode(),
            [5, 0, 0, 0, 7, 0, 0, 0, 0x04, 0x03, 0x02, 0x01]
        );
        assert_eq!(Header::decode(&h.encode()), h);
    }

    #[test]
    fn hello_round_trips_and_memory_classes_may_be_absent() {
        let h = Hello {
            protocol_version: 1,
            max_message_size: 1 << 20,
            capability_flags: cap::PARALLEL_STREAMS,
            layouts: vec![1, 2],
            devices: vec![0],
            memory_classes: vec![],
        };
        let b = h.encode();
        assert_eq!(&b[..4], &[1, 0, 0, 0]);
        assert_eq!(&b[8..16], &[2, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Hello::decode(&b).unwrap(), h);
        // Memory-class list absent entirely (payload ends before it).
        assert_eq!(Hello::decode(&b[..b.len() - 2]).unwrap(), h);
        // An extension layout with 2 metadata bytes is skipped, not rejected.
        let mut x = b[..16].to_vec();
        x.extend_from_slice(&[2, 0, 0xF3, 2, 0, 0xAA, 0xBB, 0x01, 1, 0, 0]);
        assert_eq!(Hello::decode(&x).unwrap().layouts, vec![0xF3, 1]);
        assert!(Hello::decode(&b[..10]).is_err());
    }

    #[test]
    fn request_put_error_round_trip() {
        let r = Request {
            key: "w".into(),
            preferred_layouts: vec![],
            preferred_device: 0,
            min_alignment: 64,
            flags: req::PARALLEL_OK,
        };
        let b = r.encode();
        assert_eq!(b, [1, 0, 0, 0, b'w', 0, 0, 0, 64, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(Request::decode(&b).unwrap(), r);
        let p = Put {
            key: "k".into(),
            descriptor: vec![9; 3],
            total_data_bytes: 5,
        };
        assert_eq!(Put::decode(&p.encode()).unwrap(), p);
        let e = ErrorMsg {
            code: code::MESSAGE_TOO_LARGE,
            message: "x".into(),
        };
        assert_eq!(e.encode(), [7, 0, 0, 0, 1, 0, 0, 0, b'x']);
        assert_eq!(ErrorMsg::decode(&e.encode()).unwrap(), e);
        assert!(ErrorMsg::decode(&[7, 0, 0, 0, 9, 0, 0, 0]).is_err());
    }
}
