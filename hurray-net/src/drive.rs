//! The I/O half shared by the server and the client: write what a `hurray-proto`
//! state machine queues ([`Transmit`]), read socket bytes into its [`Framer`].
//! Every socket operation runs under a timeout.

use crate::error::{NetError, Result};
use hurray_proto::{FrameEvent, Framer, Transmit};
use std::future::Future;
use std::io::IoSlice;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

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

/// Writes every byte of `bufs` (vectored; partial writes resume where they stopped).
/// `limit` bounds each write call, so a peer that stops reading is detected.
pub(crate) async fn write_all_vectored<S: AsyncWrite + Unpin>(
    s: &mut S,
    mut bufs: &mut [IoSlice<'_>],
    limit: Duration,
) -> Result<()> {
    while !bufs.is_empty() {
        let n = timed(
            limit,
            "writing to a peer that stopped reading",
            s.write_vectored(bufs),
        )
        .await?;
        if n == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::WriteZero).into());
        }
        IoSlice::advance_slices(&mut bufs, n);
    }
    Ok(())
}

/// What writing one [`Transmit`] did.
pub(crate) enum Wrote {
    /// Bytes of a `TENSOR_DATA` frame's data (0 for other messages).
    Data(u64),
    /// The state machine asked to close the connection.
    Close,
}

/// Writes one transmit: messages as they are, a data frame as its 20-byte prefix
/// plus a slice of the tensor's own buffer (a memory mapping for a served file) in
/// one vectored write, so tensor bytes are not copied in user space.
pub(crate) async fn write_transmit<S: AsyncWrite + Unpin>(
    s: &mut S,
    t: Transmit,
    limit: Duration,
) -> Result<Wrote> {
    match t {
        Transmit::Bytes { bytes, .. } => {
            write_all_vectored(s, &mut [IoSlice::new(&bytes)], limit).await?;
            Ok(Wrote::Data(0))
        }
        Transmit::Data {
            prefix,
            buffer,
            range,
            ..
        } => {
            let data = &buffer.as_slice()[range];
            write_all_vectored(s, &mut [IoSlice::new(&prefix), IoSlice::new(data)], limit).await?;
            Ok(Wrote::Data(data.len() as u64))
        }
        Transmit::CloseConnection => Ok(Wrote::Close),
    }
}

/// Reads what the framer wants next (at most 1 MiB at a time) and feeds it;
/// returns the completed frame event, if any, or `Ok(None)` for a partial read.
///
/// Errors: [`NetError::Io`] with `UnexpectedEof` when the peer closed (clean or
/// not: see [`Framer::is_idle`] before calling), [`NetError::Timeout`].
pub(crate) async fn read_frame<S: AsyncRead + Unpin>(
    s: &mut S,
    framer: &mut Framer,
    limit: Duration,
    what: &'static str,
) -> Result<Option<FrameEvent>> {
    let buf = framer.read_buf();
    let cap = buf.len().min(1 << 20);
    let n = timed(limit, what, s.read(&mut buf[..cap])).await?;
    if n == 0 {
        return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
    }
    Ok(framer.advance(n))
}

/// Reads one whole message without a [`Framer`]: the 12-byte header, then the
/// payload into a fresh `Vec` filled straight from the socket (never zeroed first,
/// the allocation reused by the allocator from frame to frame). A payload above
/// `max` is read and discarded (Ambiguity S17) and reported as
/// [`FrameEvent::TooLarge`], exactly as a `Framer` bounded by `max` would.
/// Used by the client on its receive path, where the bytes are tensor data.
///
/// Errors: as [`read_frame`]; `limit` bounds each read.
pub(crate) async fn read_message<S: AsyncRead + Unpin>(
    s: &mut S,
    max: u32,
    limit: Duration,
    what: &'static str,
) -> Result<FrameEvent> {
    let mut h = [0u8; hurray_proto::HEADER_LEN];
    timed(limit, what, s.read_exact(&mut h)).await?;
    let header = hurray_proto::Header::decode(&h)?;
    let len = u64::from(header.payload_length);
    if header.payload_length > max {
        let mut sink = vec![0u8; 64 << 10];
        let mut left = len;
        while left > 0 {
            let n = left.min(sink.len() as u64) as usize;
            timed(limit, what, s.read_exact(&mut sink[..n])).await?;
            left -= n as u64;
        }
        return Ok(FrameEvent::TooLarge(header));
    }
    let mut payload = Vec::with_capacity(len as usize);
    let mut take = (&mut *s).take(len);
    while (payload.len() as u64) < len {
        let n = timed(limit, what, take.read_buf(&mut payload)).await?;
        if n == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
    }
    Ok(FrameEvent::Frame(hurray_proto::Frame { header, payload }))
}
