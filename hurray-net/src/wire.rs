//! What this crate adds to `hurray-proto`: the private `ERROR` codes of its I/O
//! layer (`hurray-proto` itself uses `0xF0`, `LIMIT_EXCEEDED`). Every message is
//! encoded and decoded by `hurray-proto`; its names are re-exported here.

pub use hurray_proto::{
    capability, message_type as msg, request_flags, DescriptorMsg, ErrorCode, Header, Hello,
    LayoutEntry, Message, PutMsg, TensorData, TensorRequest, DATA_PREFIX_LEN, HEADER_LEN,
    PROTOCOL_VERSION,
};

/// Private `ERROR` codes of this implementation (`0xF0`–`0xFE`, B.16).
pub mod code {
    use super::ErrorCode;
    /// `hurray-proto`'s resource refusal (streams per connection, PUT bytes in
    /// flight, item size).
    pub const LIMIT_EXCEEDED: ErrorCode = hurray_proto::LIMIT_EXCEEDED;
    /// The PUT store cannot take the tensor: its size cap (or the per-PUT limit)
    /// would be exceeded. The PUT is refused; nothing is evicted.
    pub const STORE_FULL: ErrorCode = ErrorCode::Private(0xF1);
    /// The server is at its connection or buffered-bytes limit; sent on stream 1
    /// before it closes the connection.
    pub const BUSY: ErrorCode = ErrorCode::Private(0xF2);
    /// A timeout ran out (handshake, idle, or a stalled transfer); sent on stream 1
    /// before the server closes the connection.
    pub const TIMEOUT: ErrorCode = ErrorCode::Private(0xF3);
}
