//! B.16 error codes and this crate's error type.

use std::fmt;

/// An `ERROR` message's `error_code` (B.16), with the spec's numeric values.
///
/// Codes the spec does not name are kept verbatim: `0xF0`–`0xFE` as
/// [`ErrorCode::Private`], anything else as [`ErrorCode::Other`] (a receiver must still
/// close the transport stream on them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `0x01` protocol versions cannot be reconciled.
    ProtocolVersionMismatch,
    /// `0x02` no tensor under the requested key.
    UnknownTensor,
    /// `0x03` none of the acceptable layouts can be delivered.
    LayoutUnavailable,
    /// `0x04` transcode declined: the result would exceed the size limit.
    TranscodeLimitExceeded,
    /// `0x05` requested / declared device not available.
    DeviceUnavailable,
    /// `0x06` malformed message.
    InvalidMessage,
    /// `0x07` `payload_length` above the receiver's limit.
    MessageTooLarge,
    /// `0x08` inconsistent parallel shard descriptors.
    ShardMismatch,
    /// `0xF0`–`0xFE` implementation-defined.
    Private(u8),
    /// Any other value (not defined by the spec).
    Other(u32),
}

impl ErrorCode {
    /// The wire value.
    pub fn as_u32(self) -> u32 {
        match self {
            ErrorCode::ProtocolVersionMismatch => 0x01,
            ErrorCode::UnknownTensor => 0x02,
            ErrorCode::LayoutUnavailable => 0x03,
            ErrorCode::TranscodeLimitExceeded => 0x04,
            ErrorCode::DeviceUnavailable => 0x05,
            ErrorCode::InvalidMessage => 0x06,
            ErrorCode::MessageTooLarge => 0x07,
            ErrorCode::ShardMismatch => 0x08,
            ErrorCode::Private(v) => u32::from(v),
            ErrorCode::Other(v) => v,
        }
    }

    /// The code for a wire value (total: every `u32` maps to a code and back).
    pub fn from_u32(v: u32) -> ErrorCode {
        match v {
            0x01 => ErrorCode::ProtocolVersionMismatch,
            0x02 => ErrorCode::UnknownTensor,
            0x03 => ErrorCode::LayoutUnavailable,
            0x04 => ErrorCode::TranscodeLimitExceeded,
            0x05 => ErrorCode::DeviceUnavailable,
            0x06 => ErrorCode::InvalidMessage,
            0x07 => ErrorCode::MessageTooLarge,
            0x08 => ErrorCode::ShardMismatch,
            0xF0..=0xFE => ErrorCode::Private(v as u8),
            _ => ErrorCode::Other(v),
        }
    }

    /// The spec's name (`PROTOCOL_VERSION_MISMATCH`, …), `PRIVATE` or `UNDEFINED`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::ProtocolVersionMismatch => "PROTOCOL_VERSION_MISMATCH",
            ErrorCode::UnknownTensor => "UNKNOWN_TENSOR",
            ErrorCode::LayoutUnavailable => "LAYOUT_UNAVAILABLE",
            ErrorCode::TranscodeLimitExceeded => "TRANSCODE_LIMIT_EXCEEDED",
            ErrorCode::DeviceUnavailable => "DEVICE_UNAVAILABLE",
            ErrorCode::InvalidMessage => "INVALID_MESSAGE",
            ErrorCode::MessageTooLarge => "MESSAGE_TOO_LARGE",
            ErrorCode::ShardMismatch => "SHARD_MISMATCH",
            ErrorCode::Private(_) => "PRIVATE",
            ErrorCode::Other(_) => "UNDEFINED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (0x{:08X})", self.name(), self.as_u32())
    }
}

/// This implementation's codes in the implementation-defined range `0xF0`–`0xFE`
/// (B.16), in one table for the protocol core and the server built on it. Peers of
/// other implementations see them as implementation-defined; every one closes its
/// stream like any `ERROR`.
pub mod private_code {
    use super::ErrorCode;

    /// `0xF0`: a local resource limit refuses the tensor or stream (item bytes, PUT
    /// bytes in flight, open streams, composite members).
    pub const LIMIT_EXCEEDED: ErrorCode = ErrorCode::Private(0xF0);
    /// `0xF1`: the server's PUT store is full (hurray-net).
    pub const STORE_FULL: ErrorCode = ErrorCode::Private(0xF1);
    /// `0xF2`: too many connections; sent on stream 1, then the connection closes
    /// (hurray-net).
    pub const BUSY: ErrorCode = ErrorCode::Private(0xF2);
    /// `0xF3`: a handshake or idle timeout (hurray-net).
    pub const TIMEOUT: ErrorCode = ErrorCode::Private(0xF3);
    /// `0xF4`: the server is shutting down: no new requests or PUTs, or a transfer
    /// aborted by the shutdown.
    pub const SHUTTING_DOWN: ErrorCode = ErrorCode::Private(0xF4);

    /// The name of one of these codes (`None` for other values).
    pub fn name(code: ErrorCode) -> Option<&'static str> {
        Some(match code {
            LIMIT_EXCEEDED => "LIMIT_EXCEEDED",
            STORE_FULL => "STORE_FULL",
            BUSY => "BUSY",
            TIMEOUT => "TIMEOUT",
            SHUTTING_DOWN => "SHUTTING_DOWN",
            _ => return None,
        })
    }
}

/// A protocol failure: the B.16 code to send (or that was received) and a detail for
/// people naming the rule (spec section) and, where it applies, the byte offset.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct ProtoError {
    /// The code an `ERROR` message for this failure carries.
    pub code: ErrorCode,
    /// Human-readable detail; goes into the `ERROR` message's `message` field.
    pub detail: String,
}

impl ProtoError {
    /// A failure with `code` and `detail`.
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        ProtoError {
            code,
            detail: detail.into(),
        }
    }

    /// An `INVALID_MESSAGE` failure.
    pub fn invalid(detail: impl Into<String>) -> Self {
        ProtoError::new(ErrorCode::InvalidMessage, detail)
    }
}

/// `Result` with [`ProtoError`].
pub type Result<T> = std::result::Result<T, ProtoError>;
