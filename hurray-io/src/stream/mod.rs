//! The bare streaming format (`streams-and-transport.md` Part A): tensors back to
//! back, each an encoded descriptor followed by its buffers in buffer-table order,
//! with no header, framing, padding or end marker. The stream ends at end of input.
//!
//! Two sans-io cores hold all of the format logic, and the front ends only move bytes:
//!
//! - [`StreamDecoder`] is fed bytes and yields [`Item`](crate::Item)s. It hands the
//!   caller a writable slice ([`demand`](StreamDecoder::demand)) that is either a small
//!   scratch area (descriptor bytes) or the unfilled part of the final 64-byte-aligned
//!   allocation of the buffer being read, so payload bytes are written exactly once,
//!   by the caller's own read call.
//! - [`StreamEncoder`] turns an item into the descriptor bytes it must emit plus
//!   borrowed views of the caller's buffers ([`Encoded`]); nothing is copied.
//!
//! Front ends: [`StreamReader`] / [`StreamWriter`] over `std::io`, and (feature
//! `tokio`) `AsyncStreamReader` / `AsyncStreamWriter` over tokio's async I/O.
//!
//! ```
//! use hurray_io::stream::{StreamReader, StreamWriter};
//! use hurray_io::{Item, Tensor};
//! use hurray_core::ElementType;
//!
//! let t = Tensor::from_dense(ElementType::Float32, &[2], &[0, 0, 128, 63, 0, 0, 0, 64])?;
//! let mut w = StreamWriter::new(Vec::new());
//! w.write_tensor(&t)?;
//! let bytes = w.into_inner();
//! let items: Vec<Item> = StreamReader::new(&bytes[..]).collect::<Result<_, _>>()?;
//! assert_eq!(items, vec![Item::Tensor(t)]);
//! # Ok::<(), hurray_io::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod blocking;
mod decoder;
mod encoder;
#[cfg(feature = "tokio")]
mod tokio;

#[cfg(feature = "tokio")]
pub use self::tokio::{AsyncStreamReader, AsyncStreamWriter};
pub use blocking::{StreamReader, StreamWriter};
pub use decoder::{StreamDecoder, DEFAULT_EAGER_ALLOC, MAX_HONORED_ALIGNMENT};
pub use encoder::{Encoded, StreamEncoder};

/// The error of a stream writer whose earlier write failed or was cancelled
/// part-way through an item: the stream holds part of that item and is abandoned.
pub(crate) fn poisoned() -> crate::Error {
    crate::Error::Io(std::io::Error::other(
        "an earlier write to this stream failed or was cancelled part-way through an \
         item; the stream is abandoned",
    ))
}
