//! Moving messages and tensors over one transport stream (a TCP connection here):
//! shared by the server and the client so both apply the same B.11 rules.

use crate::error::{NetError, Result};
use crate::wire::{msg, DescriptorMsg, ErrorCode, Header, Message, TensorData, HEADER_LEN};
use hurray_core::{DeviceTag, Layout, SyncMode, TensorDescriptor};
use hurray_io::{AlignedBuf, Buffer, Composite, Item, Tensor};
use std::future::Future;
use std::io::IoSlice;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Progress of a transfer: called with the tensor data bytes just moved and the
/// total data bytes of the tensor (or shard) being moved, after every frame.
pub type ProgressFn = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// Runs `f` under `limit`; `what` names the timeout in the error.
pub(crate) async fn timed<T>(
    limit: Duration,
    what: &'static str,
    f: impl Future<Output = std::io::Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(limit, f).await {
        Ok(r) => Ok(r?),
        Err(_) => Err(NetError::Timeout(what)),
    }
}

/// Reads one header.
pub(crate) async fn read_header<S: AsyncRead + Unpin>(
    s: &mut S,
    limit: Duration,
    what: &'static str,
) -> Result<Header> {
    let mut b = [0u8; HEADER_LEN];
    timed(limit, what, s.read_exact(&mut b)).await?;
    Ok(Header::decode(&b)?)
}

/// Reads a payload of `len` bytes (the caller checked `len` against its limit).
pub(crate) async fn read_payload<S: AsyncRead + Unpin>(
    s: &mut S,
    len: u32,
    limit: Duration,
) -> Result<Vec<u8>> {
    let mut v = vec![0u8; len as usize];
    timed(limit, "reading a message payload", s.read_exact(&mut v)).await?;
    Ok(v)
}

/// Writes every byte of `bufs` (vectored; partial writes resume where they stopped).
pub(crate) async fn write_all_vectored<S: AsyncWrite + Unpin>(
    s: &mut S,
    mut bufs: &mut [IoSlice<'_>],
    limit: Duration,
) -> Result<()> {
    while !bufs.is_empty() {
        let n = timed(limit, "writing to a stalled peer", s.write_vectored(bufs)).await?;
        if n == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::WriteZero).into());
        }
        IoSlice::advance_slices(&mut bufs, n);
    }
    Ok(())
}

/// Sends `ERROR` (best effort: a peer that is gone does not make this fail).
pub(crate) async fn send_error<S: AsyncWrite + Unpin>(
    s: &mut S,
    stream_id: u32,
    code: ErrorCode,
    message: &str,
    limit: Duration,
) {
    let p = match (Message::Error {
        code,
        message: message.to_owned(),
    })
    .encode(stream_id)
    {
        Ok(p) => p,
        Err(_) => return,
    };
    let _ = write_all_vectored(s, &mut [IoSlice::new(&p)], limit).await;
    let _ = timed(limit, "flush", s.flush()).await;
}

/// The descriptor as it goes over a network: every buffer producer-synced (A.5).
pub(crate) fn network_descriptor(d: &TensorDescriptor) -> TensorDescriptor {
    let mut d = d.clone();
    for b in &mut d.buffers {
        b.sync_mode = SyncMode::ProducerSynced;
    }
    d
}

/// Sends one tensor (or shard): `TENSOR_DESCRIPTOR`, `TENSOR_DATA` × k,
/// `TENSOR_DATA_END` (B.11). Buffers are concatenated in buffer-table order
/// (Ambiguity S7); each frame is a 20-byte prefix plus slices of the buffers,
/// written vectored, so tensor bytes are never copied in user space.
/// `frame_max` is the largest frame content (peer's `max_message_size - 8`).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn send_tensor<S: AsyncWrite + Unpin>(
    s: &mut S,
    stream_id: u32,
    d: &TensorDescriptor,
    buffers: &[&[u8]],
    tail: Tail,
    frame_max: u64,
    limit: Duration,
    progress: Option<&ProgressFn>,
) -> Result<()> {
    let descriptor = network_descriptor(d)
        .encode()
        .map_err(|source| NetError::Format(hurray_io::Error::Descriptor { at: 0, source }))?;
    let m = Message::TensorDescriptor(DescriptorMsg {
        descriptor,
        total_data_bytes: tail.total_data_bytes,
        shard_index: tail.shard_index,
        total_shards: tail.total_shards,
    })
    .encode(stream_id)?;
    write_all_vectored(s, &mut [IoSlice::new(&m)], limit).await?;
    send_frames(
        s,
        stream_id,
        buffers,
        tail.total_data_bytes,
        frame_max,
        limit,
        progress,
    )
    .await
}

/// Sends `total` bytes of `buffers` (concatenated) as `TENSOR_DATA` frames of at
/// most `frame_max` bytes, then `TENSOR_DATA_END` (B.11; the PUT direction too).
pub(crate) async fn send_frames<S: AsyncWrite + Unpin>(
    s: &mut S,
    stream_id: u32,
    buffers: &[&[u8]],
    total: u64,
    frame_max: u64,
    limit: Duration,
    progress: Option<&ProgressFn>,
) -> Result<()> {
    let frame_max = frame_max.max(1);
    let mut offset = 0u64;
    let (mut bi, mut pos) = (0usize, 0usize);
    while offset < total {
        let len = frame_max.min(total - offset);
        let prefix = TensorData::encode_prefix(stream_id, offset, len as usize)?;
        let mut slices = vec![IoSlice::new(&prefix)];
        let mut need = len as usize;
        while need > 0 {
            let b = buffers[bi];
            let take = (b.len() - pos).min(need);
            if take > 0 {
                slices.push(IoSlice::new(&b[pos..pos + take]));
            }
            need -= take;
            pos += take;
            if pos == b.len() {
                bi += 1;
                pos = 0;
            }
        }
        write_all_vectored(s, &mut slices, limit).await?;
        if let Some(f) = progress {
            f(len, total);
        }
        offset += len;
    }
    let end = Header {
        message_type: msg::TENSOR_DATA_END,
        stream_id,
        payload_length: 0,
    }
    .encode();
    write_all_vectored(s, &mut [IoSlice::new(&end)], limit).await
}

/// Sends an item: a tensor, or a composite head then its members in pre-order
/// (B.12, A.4).
pub(crate) fn send_item<'a, S: AsyncWrite + Unpin + Send>(
    s: &'a mut S,
    stream_id: u32,
    item: &'a Item,
    frame_max: u64,
    limit: Duration,
    progress: Option<&'a ProgressFn>,
) -> std::pin::Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>> {
    Box::pin(async move {
        match item {
            Item::Tensor(t) => send_whole(s, stream_id, t, frame_max, limit, progress).await,
            Item::Composite(c) => {
                send_whole(s, stream_id, &c.head, frame_max, limit, progress).await?;
                for m in &c.members {
                    send_item(s, stream_id, m, frame_max, limit, progress).await?;
                }
                Ok(())
            }
        }
    })
}

async fn send_whole<S: AsyncWrite + Unpin>(
    s: &mut S,
    stream_id: u32,
    t: &Tensor,
    frame_max: u64,
    limit: Duration,
    progress: Option<&ProgressFn>,
) -> Result<()> {
    let slices: Vec<&[u8]> = t.buffers().iter().map(Buffer::as_slice).collect();
    let tail = Tail {
        total_data_bytes: t.data_len(),
        shard_index: 0,
        total_shards: 1,
    };
    send_tensor(
        s,
        stream_id,
        t.descriptor(),
        &slices,
        tail,
        frame_max,
        limit,
        progress,
    )
    .await
}

/// Limits a receiver applies to what it reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecvLimits {
    /// Largest payload accepted (our advertised `max_message_size`).
    pub max_message: u32,
    /// Largest `total_data_bytes` of one tensor.
    pub max_tensor_bytes: u64,
    /// Per-read timeout.
    pub io_timeout: Duration,
}

/// What [`next_message`] read.
pub(crate) enum Incoming {
    /// A `TENSOR_DATA` header: its payload is still on the socket.
    Data(Header),
    /// Any other message, decoded.
    Msg(Message),
}

/// Reads the next message header and, for anything but `TENSOR_DATA`, its payload.
/// `ERROR` becomes [`NetError::Remote`]; a payload above the limit is
/// `MESSAGE_TOO_LARGE`; an unrecognised type is `INVALID_MESSAGE`.
pub(crate) async fn next_message<S: AsyncRead + Unpin>(
    s: &mut S,
    lim: &RecvLimits,
) -> Result<Incoming> {
    let h = read_header(s, lim.io_timeout, "waiting for the peer's next message").await?;
    check_header(&h, lim.max_message)?;
    if h.message_type == msg::TENSOR_DATA {
        return Ok(Incoming::Data(h));
    }
    let p = read_payload(s, h.payload_length, lim.io_timeout).await?;
    match Message::decode_owned(&h, p)? {
        Message::Error { code, message } => Err(NetError::Remote { code, message }),
        m => Ok(Incoming::Msg(m)),
    }
}

/// B.4 and B.17 checks on a header.
pub(crate) fn check_header(h: &Header, max_message: u32) -> Result<()> {
    if !(msg::CLIENT_HELLO..=msg::RDMA_READY).contains(&h.message_type) {
        return Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            format!("unrecognised message_type {:#010x}", h.message_type),
        ));
    }
    if h.payload_length > max_message {
        return Err(NetError::protocol(
            ErrorCode::MessageTooLarge,
            format!(
                "payload_length {} exceeds max_message_size {max_message}",
                h.payload_length
            ),
        ));
    }
    Ok(())
}

/// Decodes and checks a received descriptor against the transport rules:
/// every buffer CPU and producer-synced (A.5, B.10), `total_data_bytes` equal to
/// the sum of `byte_size` (S7) and within `max_tensor_bytes`.
pub(crate) fn accept_descriptor(
    bytes: &[u8],
    total_data_bytes: u64,
    lim: &RecvLimits,
) -> Result<TensorDescriptor> {
    let d = TensorDescriptor::decode(bytes)
        .map_err(|e| NetError::protocol(ErrorCode::InvalidMessage, format!("descriptor: {e}")))?;
    let mut sum = 0u64;
    for (i, b) in d.buffers.iter().enumerate() {
        if b.sync_mode != SyncMode::ProducerSynced {
            return Err(NetError::protocol(
                ErrorCode::InvalidMessage,
                format!("buffer {i}: sync_mode must be 0x00 across machines (A.5)"),
            ));
        }
        if b.device != DeviceTag::Cpu {
            return Err(NetError::protocol(
                ErrorCode::DeviceUnavailable,
                format!(
                    "buffer {i}: device {:?} is not CPU, the only device here",
                    b.device
                ),
            ));
        }
        sum = sum.checked_add(b.byte_size).ok_or_else(|| {
            NetError::protocol(ErrorCode::InvalidMessage, "buffer sizes overflow u64")
        })?;
    }
    if sum != total_data_bytes {
        return Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            format!(
                "total_data_bytes {total_data_bytes} differs from the buffers' {sum} bytes (S7)"
            ),
        ));
    }
    if sum > lim.max_tensor_bytes {
        return Err(NetError::protocol(
            ErrorCode::MessageTooLarge,
            format!(
                "tensor of {sum} bytes exceeds this receiver's limit {}",
                lim.max_tensor_bytes
            ),
        ));
    }
    Ok(d)
}

/// Allocates one aligned buffer per handle.
pub(crate) fn alloc_buffers(d: &TensorDescriptor) -> Result<Vec<AlignedBuf>> {
    d.buffers
        .iter()
        .map(|b| {
            usize::try_from(b.byte_size)
                .ok()
                .and_then(AlignedBuf::zeroed)
                .ok_or_else(|| {
                    NetError::protocol(
                        ErrorCode::MessageTooLarge,
                        format!("cannot allocate a buffer of {} bytes", b.byte_size),
                    )
                })
        })
        .collect()
}

/// Receives the `TENSOR_DATA` frames and the `TENSOR_DATA_END` of one tensor into
/// `dest` (its buffers, concatenated), enforcing B.11: first frame at 0, each next
/// one where the previous ended, nothing past `dest`, and the sum equal to its
/// size. Bytes go straight from the socket into `dest`.
pub(crate) async fn recv_data<S: AsyncRead + Unpin>(
    s: &mut S,
    dest: &mut [&mut [u8]],
    lim: &RecvLimits,
    progress: Option<&ProgressFn>,
) -> Result<()> {
    let total: u64 = dest.iter().map(|b| b.len() as u64).sum();
    let mut offset = 0u64;
    let (mut bi, mut pos) = (0usize, 0usize);
    loop {
        match next_message(s, lim).await? {
            Incoming::Msg(Message::TensorDataEnd) => {
                if offset != total {
                    return Err(NetError::protocol(
                        ErrorCode::InvalidMessage,
                        format!("TENSOR_DATA_END after {offset} of {total} bytes"),
                    ));
                }
                return Ok(());
            }
            Incoming::Data(h) => {
                if h.payload_length < 8 {
                    return Err(NetError::protocol(
                        ErrorCode::InvalidMessage,
                        "TENSOR_DATA payload shorter than its 8-byte offset",
                    ));
                }
                let mut ob = [0u8; 8];
                timed(lim.io_timeout, "reading a frame", s.read_exact(&mut ob)).await?;
                let at = u64::from_le_bytes(ob);
                let len = u64::from(h.payload_length - 8);
                if at != offset {
                    return Err(NetError::protocol(
                        ErrorCode::InvalidMessage,
                        format!("frame at byte_offset_in_buffer {at}, expected {offset} (B.11)"),
                    ));
                }
                if len > total - offset {
                    return Err(NetError::protocol(
                        ErrorCode::InvalidMessage,
                        format!("frame of {len} bytes at {at} passes total_data_bytes {total}"),
                    ));
                }
                let mut need = len as usize;
                while need > 0 {
                    while dest[bi].len() == pos {
                        bi += 1;
                        pos = 0;
                    }
                    let b = &mut dest[bi];
                    let take = (b.len() - pos).min(need);
                    timed(
                        lim.io_timeout,
                        "reading a frame",
                        s.read_exact(&mut b[pos..pos + take]),
                    )
                    .await?;
                    pos += take;
                    need -= take;
                }
                offset += len;
                if let Some(f) = progress {
                    f(len, total);
                }
            }
            Incoming::Msg(m) => {
                return Err(NetError::protocol(
                    ErrorCode::InvalidMessage,
                    format!("{} inside a tensor's data frames (B.11)", m.name()),
                ))
            }
        }
    }
}

/// Receives one tensor's data into fresh buffers and builds it (content checked).
pub(crate) async fn recv_tensor_body<S: AsyncRead + Unpin>(
    s: &mut S,
    d: TensorDescriptor,
    lim: &RecvLimits,
    progress: Option<&ProgressFn>,
) -> Result<Tensor> {
    let mut bufs = alloc_buffers(&d)?;
    {
        let mut dest: Vec<&mut [u8]> = bufs.iter_mut().map(AlignedBuf::as_mut_slice).collect();
        recv_data(s, &mut dest, lim, progress).await?;
    }
    let buffers = bufs.into_iter().map(Buffer::from_aligned).collect();
    Tensor::new(d, buffers)
        .map_err(|e| NetError::protocol(ErrorCode::InvalidMessage, e.to_string()))
}

/// The member count when `d` is a composite head.
pub(crate) fn member_count(d: &TensorDescriptor) -> Option<u32> {
    match &d.layout {
        Layout::CompositeHead(h) => Some(h.member_count),
        _ => None,
    }
}

/// Most composite nesting levels accepted (Ambiguity S13).
pub(crate) const MAX_DEPTH: u32 = 8;
/// Most members of one composite head accepted.
pub(crate) const MAX_MEMBERS: u32 = 65_536;

/// Checks a received composite (A.4 close-time rules).
pub(crate) fn check_composite(c: &Composite) -> Result<()> {
    hurray_io::composite::validate(c, MAX_DEPTH, MAX_MEMBERS)
        .map_err(|e| NetError::protocol(ErrorCode::InvalidMessage, format!("composite: {e}")))
}

/// Checks a `TENSOR_DESCRIPTOR` message: descriptor decoded and accepted, tail.
pub(crate) fn parse_descriptor(m: Message, lim: &RecvLimits) -> Result<(TensorDescriptor, Tail)> {
    let Message::TensorDescriptor(dm) = m else {
        return Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            format!("expected TENSOR_DESCRIPTOR, got {}", m.name()),
        ));
    };
    let d = accept_descriptor(&dm.descriptor, dm.total_data_bytes, lim)?;
    Ok((
        d,
        Tail {
            total_data_bytes: dm.total_data_bytes,
            shard_index: dm.shard_index,
            total_shards: dm.total_shards,
        },
    ))
}

/// The fields after the descriptor in `TENSOR_DESCRIPTOR` (B.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tail {
    /// Bytes of frame content that follow.
    pub total_data_bytes: u64,
    /// 0 when not parallel.
    pub shard_index: u32,
    /// 1 when not parallel.
    pub total_shards: u32,
}
