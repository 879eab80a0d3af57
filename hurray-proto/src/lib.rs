//! # hurray-proto
//!
//! The Hurray network transport (`streams-and-transport.md` Part B, Compliance
//! Level 3) as a sans-io core: no sockets, no clocks, no `unsafe`. A server or client
//! (tokio, blocking, C) owns the I/O and drives the types below.
//!
//! ## Layers (one module per spec section)
//!
//! | Module | Spec | What |
//! |--------|------|------|
//! | [`header`] | B.3 | [`Header`]: 12 bytes, three little-endian `u32`s |
//! | [`message`] | B.4–B.8, B.11, B.14–B.16 | [`Message`] (one variant per type), `encode_into`, `decode`, [`TensorData::encode_prefix`] |
//! | [`error`] | B.16 | [`ErrorCode`] (spec values), [`ProtoError`] (code + detail) |
//! | [`framer`] | B.2, B.17 | [`Framer`]: bytes in, [`Frame`]s out; oversized payloads refused before buffering |
//!
//! ## Sending
//!
//! ```
//! use hurray_proto::{Message, Hello, LayoutEntry, TensorData, PROTOCOL_VERSION};
//! let hello = Message::ClientHello(Hello {
//!     protocol_version: PROTOCOL_VERSION,
//!     max_message_size: 1 << 20,
//!     capability_flags: 0,
//!     supported_layouts: vec![LayoutEntry::Tag(0x01)],
//!     supported_devices: vec![0x00],
//!     supported_memory_classes: None,
//! });
//! let mut out = Vec::new();
//! hello.encode_into(1, &mut out)?;
//! assert_eq!(&out[..4], &[1, 0, 0, 0]);
//! // A data frame's 20-byte prefix; the data itself goes out by a vectored write.
//! let prefix = TensorData::encode_prefix(1, 0, 4096)?;
//! assert_eq!(&prefix[8..12], &(4096u32 + 8).to_le_bytes());
//! # Ok::<(), hurray_proto::ProtoError>(())
//! ```
//!
//! ## Receiving
//!
//! ```
//! use hurray_proto::{Framer, FrameEvent, Message};
//! let mut framer = Framer::new(1 << 20);
//! let bytes = Message::TensorDataEnd.encode(7)?;
//! // Either `push(&bytes)` (copies), or read into `framer.read_buf()` and `advance(n)`.
//! let p = framer.push(&bytes);
//! let Some(FrameEvent::Frame(f)) = p.event else { panic!() };
//! assert_eq!(f.header.stream_id, 7);
//! assert_eq!(f.decode()?, Message::TensorDataEnd);
//! # Ok::<(), hurray_proto::ProtoError>(())
//! ```
//!
//! A header announcing more than the framer's maximum yields
//! [`FrameEvent::TooLarge`]: answer `ERROR MESSAGE_TOO_LARGE` on that stream; the
//! framer discards the payload itself (Ambiguity S17) and stays in sync.
//!
//! The readings adopted for the spec's ambiguities are in `docs/network.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod error;
pub mod framer;
pub mod header;
pub mod message;

pub use client::{Client, ClientConfig, ClientEvent, GetOptions};
pub use error::{ErrorCode, ProtoError, Result};
pub use framer::{Frame, FrameEvent, Framer, Pushed};
pub use frames::{split_frames, FrameChecker};
pub use header::{Header, HEADER_LEN};
pub use message::{
    capability, is_ext_tag, message_type, request_flags, type_name, DescriptorMsg, Hello,
    LayoutEntry, Message, PutMsg, RdmaRegister, TensorData, TensorRequest, DATA_PREFIX_LEN,
    PROTOCOL_VERSION,
};
pub use negotiate::{LayoutFallback, MAX_SHARDS};
pub use outbox::Transmit;
pub use receive::{ItemReceiver, ReceiveOptions, LIMIT_EXCEEDED};
pub use server::{Server, ServerConfig, ServerEvent};
pub mod client;
pub mod frames;
pub mod negotiate;
pub mod outbox;
pub mod receive;
pub mod server;
pub mod transcode;
