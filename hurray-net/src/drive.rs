//! The I/O half shared by the server and the client: write what a `hurray-proto`
//! state machine queues ([`Transmit`]), read socket bytes into its `read_buf()`.
//! Every socket operation runs under a timeout.

use crate::error::{NetError, Result};
use hurray_proto::Transmit;
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

/// Reads once into `buf` (at most 1 MiB), which is the state machine's
/// `read_buf()`: a framer slot, or the destination tensor buffer itself while a data
/// frame streams in (so data bytes are written once, by the read). Returns the count
/// read, for `advance`.
///
/// Errors: [`NetError::Io`] with `UnexpectedEof` when the peer closed,
/// [`NetError::Timeout`].
pub(crate) async fn read_into<S: AsyncRead + Unpin>(
    s: &mut S,
    buf: &mut [u8],
    limit: Duration,
    what: &'static str,
) -> Result<usize> {
    let cap = buf.len().min(1 << 20);
    let n = timed(limit, what, s.read(&mut buf[..cap])).await?;
    if n == 0 {
        return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
    }
    Ok(n)
}
