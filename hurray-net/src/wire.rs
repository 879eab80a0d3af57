//! What this crate adds to the message layer of `hurray-proto`: its private
//! `ERROR` codes and the stream-id convention of parallel gets (Ambiguity S8).
//! Every message is encoded and decoded by `hurray-proto`.

pub use hurray_proto::{
    capability, message_type as msg, request_flags, DescriptorMsg, ErrorCode, Header, Hello,
    LayoutEntry, Message, PutMsg, TensorData, TensorRequest, DATA_PREFIX_LEN, HEADER_LEN,
    PROTOCOL_VERSION,
};

/// Private `ERROR` codes of this implementation (`0xF0`–`0xFE`, B.16).
pub mod code {
    use super::ErrorCode;
    /// In a parallel get, this stream carries no shard: the server chose fewer
    /// shards than the client opened streams (or serves the tensor whole on
    /// stream 0). Not a failure of the transfer.
    pub const NO_SHARD: ErrorCode = ErrorCode::Private(0xF0);
    /// The PUT store cannot take the tensor: its size cap (or the per-PUT limit)
    /// would be exceeded. The PUT is refused; nothing is evicted.
    pub const STORE_FULL: ErrorCode = ErrorCode::Private(0xF1);
    /// The server is at its connection or buffered-bytes limit, or shutting down.
    pub const BUSY: ErrorCode = ErrorCode::Private(0xF2);
    /// A timeout ran out (handshake, idle, or a stalled transfer).
    pub const TIMEOUT: ErrorCode = ErrorCode::Private(0xF3);
}

/// Stream-id bit marking one stream of a parallel get (B.13, S8 "agree out of
/// band"): `PARALLEL_STREAM | (n << 12) | i` asks for shard `i` of a transfer the
/// client spread over `n` streams (`1 ≤ n ≤` [`MAX_PARALLEL`], `i < n`). Other
/// non-zero ids are plain streams.
pub const PARALLEL_STREAM: u32 = 0x4000_0000;
/// Most streams of one parallel get.
pub const MAX_PARALLEL: u32 = 256;

/// The stream id of stream `i` of `n` of a parallel get.
pub fn parallel_stream_id(i: u32, n: u32) -> u32 {
    PARALLEL_STREAM | (n << 12) | i
}

/// `(i, n)` when `stream_id` names stream `i` of `n` of a parallel get.
pub fn parse_parallel_stream_id(stream_id: u32) -> Option<(u32, u32)> {
    if stream_id & 0xC000_0000 != PARALLEL_STREAM {
        return None;
    }
    let n = (stream_id >> 12) & 0x3FFFF;
    let i = stream_id & 0xFFF;
    ((1..=MAX_PARALLEL).contains(&n) && i < n).then_some((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_stream_ids_round_trip_and_reject_nonsense() {
        assert_eq!(parallel_stream_id(3, 8), 0x4000_8003);
        assert_eq!(parse_parallel_stream_id(0x4000_8003), Some((3, 8)));
        assert_eq!(parse_parallel_stream_id(1), None);
        assert_eq!(parse_parallel_stream_id(parallel_stream_id(8, 8)), None);
        assert_eq!(parse_parallel_stream_id(PARALLEL_STREAM), None);
        assert_eq!(parse_parallel_stream_id(parallel_stream_id(0, 257)), None);
    }
}
