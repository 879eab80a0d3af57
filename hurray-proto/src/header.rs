//! B.3: the 12-byte message header.

use crate::error::{ProtoError, Result};

/// Bytes in a message header (B.3).
pub const HEADER_LEN: usize = 12;

/// The message header (B.3): three little-endian `u32`s.
///
/// `stream_id` 0 is reserved; [`Header::decode`] does not reject it (the state
/// machines do, with `INVALID_MESSAGE`), so that a framer can still step over the
/// message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    /// B.4 tag (bytes 0–3).
    pub message_type: u32,
    /// Transport stream id (bytes 4–7).
    pub stream_id: u32,
    /// Payload bytes after the header, header not counted (bytes 8–11).
    pub payload_length: u32,
}

impl Header {
    /// The 12 wire bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&self.message_type.to_le_bytes());
        b[4..8].copy_from_slice(&self.stream_id.to_le_bytes());
        b[8..12].copy_from_slice(&self.payload_length.to_le_bytes());
        b
    }

    /// Reads a header from the first 12 bytes of `bytes`.
    ///
    /// Errors: `INVALID_MESSAGE` when fewer than 12 bytes are given.
    pub fn decode(bytes: &[u8]) -> Result<Header> {
        if bytes.len() < HEADER_LEN {
            return Err(ProtoError::invalid(format!(
                "B.3: a header needs 12 bytes, {} given",
                bytes.len()
            )));
        }
        let u = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        Ok(Header {
            message_type: u(0),
            stream_id: u(4),
            payload_length: u(8),
        })
    }
}
