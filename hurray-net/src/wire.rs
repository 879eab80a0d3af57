//! The protocol names this crate's API uses, re-exported from `hurray-proto` (which
//! encodes and decodes every message), and the private `ERROR` codes.

pub use hurray_proto::{
    capability, message_type as msg, request_flags, DescriptorMsg, ErrorCode, Header, Hello,
    LayoutEntry, Message, PutMsg, TensorData, TensorRequest, DATA_PREFIX_LEN, HEADER_LEN,
    PROTOCOL_VERSION,
};

/// Private `ERROR` codes (`0xF0`–`0xFE`, B.16): `hurray-proto`'s one table
/// (`LIMIT_EXCEEDED 0xF0`, `STORE_FULL 0xF1`, `BUSY 0xF2`, `TIMEOUT 0xF3`,
/// `SHUTTING_DOWN 0xF4`).
pub use hurray_proto::error::private_code as code;
