//! B.4–B.8, B.11, B.14–B.16: every message type, its payload encoding and decoding.
//!
//! Decoding is strict: a payload must hold exactly its fields (trailing bytes or a
//! short payload are `INVALID_MESSAGE`, naming the field and byte offset within the
//! payload). Lengths read from the payload are checked against the bytes present
//! before anything is allocated.

use crate::error::{ProtoError, Result};
use crate::header::{Header, HEADER_LEN};

/// B.4 message-type tags.
pub mod message_type {
    /// `CLIENT_HELLO` (C→S).
    pub const CLIENT_HELLO: u32 = 0x01;
    /// `SERVER_HELLO` (S→C).
    pub const SERVER_HELLO: u32 = 0x02;
    /// `TENSOR_REQUEST` (C→S).
    pub const TENSOR_REQUEST: u32 = 0x03;
    /// `TENSOR_DESCRIPTOR` (S→C).
    pub const TENSOR_DESCRIPTOR: u32 = 0x04;
    /// `TENSOR_DATA` (S→C; C→S in PUT).
    pub const TENSOR_DATA: u32 = 0x05;
    /// `TENSOR_DATA_END` (S→C; C→S in PUT).
    pub const TENSOR_DATA_END: u32 = 0x06;
    /// `TENSOR_PUT` (C→S).
    pub const TENSOR_PUT: u32 = 0x07;
    /// `TENSOR_PUT_ACK` (S→C).
    pub const TENSOR_PUT_ACK: u32 = 0x08;
    /// `ERROR` (either).
    pub const ERROR: u32 = 0x09;
    /// `PING` (either).
    pub const PING: u32 = 0x0A;
    /// `PONG` (either).
    pub const PONG: u32 = 0x0B;
    /// `RDMA_REGISTER` (either).
    pub const RDMA_REGISTER: u32 = 0x0C;
    /// `RDMA_READY` (either).
    pub const RDMA_READY: u32 = 0x0D;
    /// First private extension tag.
    pub const PRIVATE_FIRST: u32 = 0xF0;
    /// Last private extension tag.
    pub const PRIVATE_LAST: u32 = 0xFE;
    /// Never sent.
    pub const INVALID: u32 = 0xFF;
}

/// Hello `capability_flags` bits (B.7).
pub mod capability {
    /// Bit 0: converts a tensor to a requested layout while serving it.
    pub const TRANSCODING: u64 = 1 << 0;
    /// Bit 1: delivers one tensor as shards over several transport streams.
    pub const PARALLEL_STREAMS: u64 = 1 << 1;
    /// Bit 2: moves tensor bytes by RDMA.
    pub const RDMA_DATA_PLANE: u64 = 1 << 2;
    /// Bit 3: GPUDirect destination writes (requires bit 2).
    pub const RDMA_GPUDIRECT: u64 = 1 << 3;
    /// Bits the spec defines; the others are reserved (must be 0).
    pub const DEFINED: u64 = 0xF;
}

/// `TENSOR_REQUEST.request_flags` bits (B.8).
pub mod request_flags {
    /// Bit 0: the server may transcode to a preferred layout.
    pub const ALLOW_TRANSCODE: u32 = 1 << 0;
    /// Bit 1: the client accepts parallel shards.
    pub const PARALLEL_OK: u32 = 1 << 1;
    /// Bits the spec defines; the others are reserved (must be 0).
    pub const DEFINED: u32 = 0x3;
}

/// The current protocol version (B.7).
pub const PROTOCOL_VERSION: u32 = 1;

/// Bytes of a `TENSOR_DATA` message before its data: header + `byte_offset_in_buffer`.
pub const DATA_PREFIX_LEN: usize = HEADER_LEN + 8;

/// One entry of a layout list (B.6).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LayoutEntry {
    /// A tag outside `0xF0`–`0xFE`: one byte on the wire.
    Tag(u8),
    /// An extension tag `0xF0`–`0xFE` with its opaque metadata (u16 length prefix).
    Extension {
        /// The tag, `0xF0`–`0xFE`.
        tag: u8,
        /// Opaque `ext_metadata` (at most 65 535 bytes).
        metadata: Vec<u8>,
    },
}

impl LayoutEntry {
    /// The layout tag.
    pub fn tag(&self) -> u8 {
        match self {
            LayoutEntry::Tag(t) | LayoutEntry::Extension { tag: t, .. } => *t,
        }
    }
}

/// `CLIENT_HELLO` / `SERVER_HELLO` payload (B.7); both have the same shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hello {
    /// Client: its version; server: the version it will use (≤ the client's).
    pub protocol_version: u32,
    /// Largest payload (bytes, header excluded) the sender accepts (B.17).
    pub max_message_size: u32,
    /// [`capability`] bits; reserved bits are kept as received.
    pub capability_flags: u64,
    /// Layout list, most preferred first (client) / producible (server).
    pub supported_layouts: Vec<LayoutEntry>,
    /// Device tags.
    pub supported_devices: Vec<u8>,
    /// Memory classes; `None` = the list is absent from the payload. Absent or empty
    /// both mean `STANDARD` only.
    pub supported_memory_classes: Option<Vec<u8>>,
}

impl Hello {
    /// The memory classes this hello accepts: the list, or `[STANDARD]` when it is
    /// absent or empty (B.7).
    pub fn memory_classes(&self) -> Vec<u8> {
        match &self.supported_memory_classes {
            Some(v) if !v.is_empty() => v.clone(),
            _ => vec![0x00],
        }
    }
}

/// `TENSOR_REQUEST` payload (B.8).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorRequest {
    /// Key naming the wanted tensor.
    pub tensor_key: String,
    /// Most preferred first; empty = no preference.
    pub preferred_layouts: Vec<LayoutEntry>,
    /// Device tag wanted for the response buffers.
    pub preferred_device: u8,
    /// Minimum buffer alignment in bytes; a power of two.
    pub min_alignment: u32,
    /// [`request_flags`] bits.
    pub request_flags: u32,
}

/// `TENSOR_DESCRIPTOR` payload (B.11).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DescriptorMsg {
    /// The verbatim descriptor (`descriptor_length` bytes, taken from its bytes 6–9).
    pub descriptor: Vec<u8>,
    /// Bytes of `TENSOR_DATA` content that follow for this tensor / shard.
    pub total_data_bytes: u64,
    /// Shard number; 0 when not parallel.
    pub shard_index: u32,
    /// Shard count; 1 when not parallel.
    pub total_shards: u32,
}

/// `TENSOR_PUT` payload (B.15).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PutMsg {
    /// Key for the pushed tensor.
    pub tensor_key: String,
    /// Serialised descriptor (byte sequence: u32 length prefix on the wire).
    pub descriptor: Vec<u8>,
    /// Bytes of `TENSOR_DATA` content the client will send.
    pub total_data_bytes: u64,
}

/// `RDMA_REGISTER` payload (B.14).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RdmaRegister {
    /// Virtual address of the region on the sender of this message.
    pub remote_addr: u64,
    /// Region size in bytes; must equal `total_data_bytes`.
    pub length: u64,
    /// Opaque library-specific key.
    pub rkey: Vec<u8>,
}

/// One message of the protocol (B.4), decoded.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Message {
    /// `0x01`.
    ClientHello(Hello),
    /// `0x02`.
    ServerHello(Hello),
    /// `0x03`.
    TensorRequest(TensorRequest),
    /// `0x04`.
    TensorDescriptor(DescriptorMsg),
    /// `0x05`: `offset` = `byte_offset_in_buffer` (bytes into the concatenation of the
    /// tensor's buffers, Ambiguity S7); `data` the frame's bytes (owned).
    TensorData {
        /// `byte_offset_in_buffer`.
        offset: u64,
        /// Frame bytes.
        data: Vec<u8>,
    },
    /// `0x06`, empty payload.
    TensorDataEnd,
    /// `0x07`.
    TensorPut(PutMsg),
    /// `0x08`, empty payload.
    TensorPutAck,
    /// `0x09`.
    Error {
        /// B.16 code.
        code: crate::ErrorCode,
        /// Human-readable text.
        message: String,
    },
    /// `0x0A`; payload undefined by the spec (S9): sent empty, any payload accepted.
    Ping(Vec<u8>),
    /// `0x0B`; echoes the `PING`'s payload.
    Pong(Vec<u8>),
    /// `0x0C`.
    RdmaRegister(RdmaRegister),
    /// `0x0D`, empty payload.
    RdmaReady,
    /// `0xF0`–`0xFE` private extension, payload opaque.
    Private {
        /// The tag.
        message_type: u32,
        /// Opaque payload.
        payload: Vec<u8>,
    },
    /// Any unrecognised tag (including `0x00`, `0xFF`): kept so a receiver can step
    /// over it and answer `ERROR` (B.4).
    Unknown {
        /// The tag.
        message_type: u32,
        /// Opaque payload.
        payload: Vec<u8>,
    },
}

impl Message {
    /// The B.4 tag of this message.
    pub fn message_type(&self) -> u32 {
        use crate::message::message_type as t;
        match self {
            Message::ClientHello(_) => t::CLIENT_HELLO,
            Message::ServerHello(_) => t::SERVER_HELLO,
            Message::TensorRequest(_) => t::TENSOR_REQUEST,
            Message::TensorDescriptor(_) => t::TENSOR_DESCRIPTOR,
            Message::TensorData { .. } => t::TENSOR_DATA,
            Message::TensorDataEnd => t::TENSOR_DATA_END,
            Message::TensorPut(_) => t::TENSOR_PUT,
            Message::TensorPutAck => t::TENSOR_PUT_ACK,
            Message::Error { .. } => t::ERROR,
            Message::Ping(_) => t::PING,
            Message::Pong(_) => t::PONG,
            Message::RdmaRegister(_) => t::RDMA_REGISTER,
            Message::RdmaReady => t::RDMA_READY,
            Message::Private { message_type, .. } | Message::Unknown { message_type, .. } => {
                *message_type
            }
        }
    }

    /// The spec's name of this message's type (`UNKNOWN` for unrecognised tags).
    pub fn name(&self) -> &'static str {
        type_name(self.message_type())
    }

    /// Appends header + payload to `out`.
    ///
    /// Errors: `INVALID_MESSAGE` when a field cannot be encoded: a string, byte
    /// sequence or payload above `u32::MAX` bytes, a list above `u16::MAX` entries,
    /// extension metadata above `u16::MAX` bytes, an extension tag in a
    /// [`LayoutEntry::Tag`] or the reverse, or a descriptor whose bytes 6–9 disagree
    /// with its length. On error `out` is left as it was.
    pub fn encode_into(&self, stream_id: u32, out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        out.extend_from_slice(&[0u8; HEADER_LEN]);
        if let Err(e) = self.encode_payload(out) {
            out.truncate(start);
            return Err(e);
        }
        let len = out.len() - start - HEADER_LEN;
        let Ok(payload_length) = u32::try_from(len) else {
            out.truncate(start);
            return Err(ProtoError::invalid(format!(
                "B.3: payload of {len} bytes does not fit payload_length (u32)"
            )));
        };
        let h = Header {
            message_type: self.message_type(),
            stream_id,
            payload_length,
        };
        out[start..start + HEADER_LEN].copy_from_slice(&h.encode());
        Ok(())
    }

    /// Header + payload as a new vector (see [`Message::encode_into`]).
    pub fn encode(&self, stream_id: u32) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.encode_into(stream_id, &mut v)?;
        Ok(v)
    }

    fn encode_payload(&self, out: &mut Vec<u8>) -> Result<()> {
        match self {
            Message::ClientHello(h) | Message::ServerHello(h) => {
                out.extend_from_slice(&h.protocol_version.to_le_bytes());
                out.extend_from_slice(&h.max_message_size.to_le_bytes());
                out.extend_from_slice(&h.capability_flags.to_le_bytes());
                put_layouts(out, &h.supported_layouts)?;
                put_u8_list(out, &h.supported_devices, "supported_devices")?;
                if let Some(m) = &h.supported_memory_classes {
                    put_u8_list(out, m, "supported_memory_classes")?;
                }
            }
            Message::TensorRequest(r) => {
                put_bytes(out, r.tensor_key.as_bytes(), "tensor_key")?;
                put_layouts(out, &r.preferred_layouts)?;
                out.push(r.preferred_device);
                out.extend_from_slice(&r.min_alignment.to_le_bytes());
                out.extend_from_slice(&r.request_flags.to_le_bytes());
            }
            Message::TensorDescriptor(d) => {
                check_descriptor_length(&d.descriptor)?;
                out.extend_from_slice(&d.descriptor);
                out.extend_from_slice(&d.total_data_bytes.to_le_bytes());
                out.extend_from_slice(&d.shard_index.to_le_bytes());
                out.extend_from_slice(&d.total_shards.to_le_bytes());
            }
            Message::TensorData { offset, data } => {
                out.extend_from_slice(&offset.to_le_bytes());
                out.extend_from_slice(data);
            }
            Message::TensorPut(p) => {
                put_bytes(out, p.tensor_key.as_bytes(), "tensor_key")?;
                put_bytes(out, &p.descriptor, "descriptor")?;
                out.extend_from_slice(&p.total_data_bytes.to_le_bytes());
            }
            Message::Error { code, message } => {
                out.extend_from_slice(&code.as_u32().to_le_bytes());
                put_bytes(out, message.as_bytes(), "message")?;
            }
            Message::Ping(p) | Message::Pong(p) => out.extend_from_slice(p),
            Message::RdmaRegister(r) => {
                out.extend_from_slice(&r.remote_addr.to_le_bytes());
                out.extend_from_slice(&r.length.to_le_bytes());
                put_bytes(out, &r.rkey, "rkey")?;
            }
            Message::TensorDataEnd | Message::TensorPutAck | Message::RdmaReady => {}
            Message::Private { payload, .. } | Message::Unknown { payload, .. } => {
                out.extend_from_slice(payload)
            }
        }
        Ok(())
    }

    /// Decodes the payload of a message whose header is `header`.
    ///
    /// `payload` must be exactly `header.payload_length` bytes. `stream_id` is not
    /// checked here (the state machines do). Unrecognised tags decode to
    /// [`Message::Unknown`], private ones to [`Message::Private`].
    ///
    /// Errors: `INVALID_MESSAGE` naming the field and payload offset when the payload
    /// is shorter or longer than its fields, a length prefix runs past the payload, a
    /// string is not UTF-8, or a `TENSOR_DESCRIPTOR`'s descriptor length (its bytes
    /// 6–9) is below 20 or disagrees with `payload_length - 16`.
    pub fn decode(header: &Header, payload: &[u8]) -> Result<Message> {
        if payload.len() != header.payload_length as usize {
            return Err(ProtoError::invalid(format!(
                "B.3: payload_length is {} but {} payload bytes were given",
                header.payload_length,
                payload.len()
            )));
        }
        Self::decode_payload(header.message_type, payload)
    }

    /// Like [`Message::decode`], taking ownership of the payload so that `TENSOR_DATA`
    /// (the bulk of the bytes) and opaque payloads are not copied again.
    pub fn decode_owned(header: &Header, mut payload: Vec<u8>) -> Result<Message> {
        if payload.len() != header.payload_length as usize {
            return Err(ProtoError::invalid(format!(
                "B.3: payload_length is {} but {} payload bytes were given",
                header.payload_length,
                payload.len()
            )));
        }
        use crate::message::message_type as t;
        match header.message_type {
            t::TENSOR_DATA => {
                let offset = tensor_data_offset(&payload)?;
                payload.drain(..8);
                Ok(Message::TensorData {
                    offset,
                    data: payload,
                })
            }
            t::PING => Ok(Message::Ping(payload)),
            t::PONG => Ok(Message::Pong(payload)),
            m @ t::PRIVATE_FIRST..=t::PRIVATE_LAST => Ok(Message::Private {
                message_type: m,
                payload,
            }),
            m if type_name(m) == "UNKNOWN" => Ok(Message::Unknown {
                message_type: m,
                payload,
            }),
            m => Self::decode_payload(m, &payload),
        }
    }

    fn decode_payload(message_type: u32, p: &[u8]) -> Result<Message> {
        use crate::message::message_type as t;
        let mut r = Reader {
            p,
            at: 0,
            what: type_name(message_type),
        };
        let m = match message_type {
            t::CLIENT_HELLO | t::SERVER_HELLO => {
                let protocol_version = r.u32("protocol_version")?;
                let max_message_size = r.u32("max_message_size")?;
                let capability_flags = r.u64("capability_flags")?;
                let supported_layouts = r.layouts("supported_layouts")?;
                let supported_devices = r.u8_list("supported_devices")?;
                let supported_memory_classes = if r.at == p.len() {
                    None
                } else {
                    Some(r.u8_list("supported_memory_classes")?)
                };
                let h = Hello {
                    protocol_version,
                    max_message_size,
                    capability_flags,
                    supported_layouts,
                    supported_devices,
                    supported_memory_classes,
                };
                if message_type == t::CLIENT_HELLO {
                    Message::ClientHello(h)
                } else {
                    Message::ServerHello(h)
                }
            }
            t::TENSOR_REQUEST => Message::TensorRequest(TensorRequest {
                tensor_key: r.string("tensor_key")?,
                preferred_layouts: r.layouts("preferred_layouts")?,
                preferred_device: r.u8("preferred_device")?,
                min_alignment: r.u32("min_alignment")?,
                request_flags: r.u32("request_flags")?,
            }),
            t::TENSOR_DESCRIPTOR => {
                let dl = descriptor_length_in(p, 0, "TENSOR_DESCRIPTOR")?;
                if dl as u64 + 16 != p.len() as u64 {
                    return Err(ProtoError::invalid(format!(
                        "B.11: TENSOR_DESCRIPTOR payload_length {} != descriptor_length {dl} + 16",
                        p.len()
                    )));
                }
                let descriptor = r.take(dl as usize, "descriptor")?.to_vec();
                Message::TensorDescriptor(DescriptorMsg {
                    descriptor,
                    total_data_bytes: r.u64("total_data_bytes")?,
                    shard_index: r.u32("shard_index")?,
                    total_shards: r.u32("total_shards")?,
                })
            }
            t::TENSOR_DATA => {
                let offset = tensor_data_offset(p)?;
                return Ok(Message::TensorData {
                    offset,
                    data: p[8..].to_vec(),
                });
            }
            t::TENSOR_DATA_END => Message::TensorDataEnd,
            t::TENSOR_PUT => {
                let tensor_key = r.string("tensor_key")?;
                let at = r.at;
                let descriptor = r.bytes("descriptor")?.to_vec();
                let dl = descriptor_length_in(&descriptor, at + 4, "TENSOR_PUT")?;
                if dl as usize != descriptor.len() {
                    return Err(ProtoError::invalid(format!(
                        "B.15: TENSOR_PUT descriptor byte sequence (offset {at}) is {} bytes \
                         but its descriptor_length is {dl}",
                        descriptor.len()
                    )));
                }
                Message::TensorPut(PutMsg {
                    tensor_key,
                    descriptor,
                    total_data_bytes: r.u64("total_data_bytes")?,
                })
            }
            t::TENSOR_PUT_ACK => Message::TensorPutAck,
            t::ERROR => Message::Error {
                code: crate::ErrorCode::from_u32(r.u32("error_code")?),
                message: r.string("message")?,
            },
            t::PING => return Ok(Message::Ping(p.to_vec())),
            t::PONG => return Ok(Message::Pong(p.to_vec())),
            t::RDMA_REGISTER => Message::RdmaRegister(RdmaRegister {
                remote_addr: r.u64("remote_addr")?,
                length: r.u64("length")?,
                rkey: r.bytes("rkey")?.to_vec(),
            }),
            t::RDMA_READY => Message::RdmaReady,
            m @ t::PRIVATE_FIRST..=t::PRIVATE_LAST => {
                return Ok(Message::Private {
                    message_type: m,
                    payload: p.to_vec(),
                })
            }
            m => {
                return Ok(Message::Unknown {
                    message_type: m,
                    payload: p.to_vec(),
                })
            }
        };
        r.end()?;
        Ok(m)
    }
}

/// The spec's name of a message type, `PRIVATE` for `0xF0`–`0xFE`, else `UNKNOWN`.
pub fn type_name(message_type: u32) -> &'static str {
    use crate::message::message_type as t;
    match message_type {
        t::CLIENT_HELLO => "CLIENT_HELLO",
        t::SERVER_HELLO => "SERVER_HELLO",
        t::TENSOR_REQUEST => "TENSOR_REQUEST",
        t::TENSOR_DESCRIPTOR => "TENSOR_DESCRIPTOR",
        t::TENSOR_DATA => "TENSOR_DATA",
        t::TENSOR_DATA_END => "TENSOR_DATA_END",
        t::TENSOR_PUT => "TENSOR_PUT",
        t::TENSOR_PUT_ACK => "TENSOR_PUT_ACK",
        t::ERROR => "ERROR",
        t::PING => "PING",
        t::PONG => "PONG",
        t::RDMA_REGISTER => "RDMA_REGISTER",
        t::RDMA_READY => "RDMA_READY",
        t::PRIVATE_FIRST..=t::PRIVATE_LAST => "PRIVATE",
        _ => "UNKNOWN",
    }
}

/// `TENSOR_DATA` without its data: the 12-byte header and the 8-byte
/// `byte_offset_in_buffer`, so a sender can write the data bytes straight from where
/// they live (a memory mapping) with a vectored write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorData;

impl TensorData {
    /// The 20 bytes that precede `len` data bytes of a frame starting at `offset`.
    ///
    /// Errors: `INVALID_MESSAGE` when `8 + len` does not fit `payload_length` (u32).
    pub fn encode_prefix(stream_id: u32, offset: u64, len: usize) -> Result<[u8; DATA_PREFIX_LEN]> {
        let Some(pl) = len.checked_add(8).and_then(|n| u32::try_from(n).ok()) else {
            return Err(ProtoError::invalid(format!(
                "B.11: a TENSOR_DATA frame of {len} bytes does not fit payload_length (u32)"
            )));
        };
        let mut b = [0u8; DATA_PREFIX_LEN];
        b[..HEADER_LEN].copy_from_slice(
            &Header {
                message_type: message_type::TENSOR_DATA,
                stream_id,
                payload_length: pl,
            }
            .encode(),
        );
        b[HEADER_LEN..].copy_from_slice(&offset.to_le_bytes());
        Ok(b)
    }
}

fn tensor_data_offset(p: &[u8]) -> Result<u64> {
    if p.len() < 8 {
        return Err(ProtoError::invalid(format!(
            "B.11: TENSOR_DATA payload of {} bytes cannot hold byte_offset_in_buffer (u64 at payload offset 0)",
            p.len()
        )));
    }
    Ok(u64::from_le_bytes(p[..8].try_into().expect("8 bytes")))
}

/// `descriptor_length` (bytes 6–9) of a descriptor starting at `d`, which begins at
/// payload offset `base`; errors name that offset.
fn descriptor_length_in(d: &[u8], base: usize, what: &str) -> Result<u32> {
    hurray_core::peek_descriptor_length(d).map_err(|e| {
        ProtoError::invalid(format!(
            "{what}: descriptor at payload offset {base}: {:?} (descriptor offset {}): {}",
            e.rule, e.offset, e.detail
        ))
    })
}

fn check_descriptor_length(d: &[u8]) -> Result<()> {
    let dl = descriptor_length_in(d, 0, "TENSOR_DESCRIPTOR")?;
    if dl as usize != d.len() {
        return Err(ProtoError::invalid(format!(
            "B.11: descriptor of {} bytes declares descriptor_length {dl}",
            d.len()
        )));
    }
    Ok(())
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8], what: &str) -> Result<()> {
    let n = u32::try_from(b.len()).map_err(|_| {
        ProtoError::invalid(format!("B.5: {what} of {} bytes exceeds u32", b.len()))
    })?;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(b);
    Ok(())
}

fn put_u8_list(out: &mut Vec<u8>, b: &[u8], what: &str) -> Result<()> {
    let n = u16::try_from(b.len()).map_err(|_| {
        ProtoError::invalid(format!("B.5: {what} of {} entries exceeds u16", b.len()))
    })?;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(b);
    Ok(())
}

fn put_layouts(out: &mut Vec<u8>, l: &[LayoutEntry]) -> Result<()> {
    let n = u16::try_from(l.len()).map_err(|_| {
        ProtoError::invalid(format!(
            "B.5: layout list of {} entries exceeds u16",
            l.len()
        ))
    })?;
    out.extend_from_slice(&n.to_le_bytes());
    for e in l {
        match e {
            LayoutEntry::Tag(t) if !is_ext_tag(*t) => out.push(*t),
            LayoutEntry::Extension { tag, metadata } if is_ext_tag(*tag) => {
                let m = u16::try_from(metadata.len()).map_err(|_| {
                    ProtoError::invalid(format!(
                        "B.6: ext_metadata of {} bytes exceeds u16",
                        metadata.len()
                    ))
                })?;
                out.push(*tag);
                out.extend_from_slice(&m.to_le_bytes());
                out.extend_from_slice(metadata);
            }
            e => {
                return Err(ProtoError::invalid(format!(
                    "B.6: layout tag 0x{:02X} needs {} form",
                    e.tag(),
                    if is_ext_tag(e.tag()) {
                        "the extension"
                    } else {
                        "the one-byte"
                    }
                )))
            }
        }
    }
    Ok(())
}

/// `0xF0`–`0xFE`: an extension layout tag (B.6).
pub fn is_ext_tag(t: u8) -> bool {
    (0xF0..=0xFE).contains(&t)
}

struct Reader<'a> {
    p: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8]> {
        let left = self.p.len() - self.at;
        if n > left {
            return Err(ProtoError::invalid(format!(
                "{}: field {field} at payload offset {} needs {n} bytes, {left} left",
                self.what, self.at
            )));
        }
        let s = &self.p[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self, f: &str) -> Result<u8> {
        Ok(self.take(1, f)?[0])
    }
    fn u16(&mut self, f: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take(2, f)?.try_into().expect("2")))
    }
    fn u32(&mut self, f: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4, f)?.try_into().expect("4")))
    }
    fn u64(&mut self, f: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8, f)?.try_into().expect("8")))
    }
    fn bytes(&mut self, f: &str) -> Result<&'a [u8]> {
        let n = self.u32(f)? as usize;
        self.take(n, f)
    }
    fn string(&mut self, f: &str) -> Result<String> {
        let at = self.at + 4;
        let b = self.bytes(f)?;
        String::from_utf8(b.to_vec()).map_err(|e| {
            ProtoError::invalid(format!(
                "{}: field {f} at payload offset {at} is not UTF-8 (byte {})",
                self.what,
                e.utf8_error().valid_up_to()
            ))
        })
    }
    fn u8_list(&mut self, f: &str) -> Result<Vec<u8>> {
        let n = self.u16(f)? as usize;
        Ok(self.take(n, f)?.to_vec())
    }
    fn layouts(&mut self, f: &str) -> Result<Vec<LayoutEntry>> {
        let n = self.u16(f)? as usize;
        // Each entry is at least one byte: bound the allocation by the bytes present.
        let mut v = Vec::with_capacity(n.min(self.p.len() - self.at));
        for _ in 0..n {
            let tag = self.u8(f)?;
            if is_ext_tag(tag) {
                let m = self.u16(f)? as usize;
                v.push(LayoutEntry::Extension {
                    tag,
                    metadata: self.take(m, f)?.to_vec(),
                });
            } else {
                v.push(LayoutEntry::Tag(tag));
            }
        }
        Ok(v)
    }
    fn end(&self) -> Result<()> {
        if self.at != self.p.len() {
            return Err(ProtoError::invalid(format!(
                "{}: {} trailing bytes after the last field (payload offset {})",
                self.what,
                self.p.len() - self.at,
                self.at
            )));
        }
        Ok(())
    }
}
