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
//! | [`frames`] | B.11 | [`split_frames`] (sender), [`FrameChecker`] (receiver) |
//! | [`negotiate`] | B.7, B.9, B.10 | hello checks, layout selection, placement, [`MAX_SHARDS`] |
//! | [`transcode`] | B.9 | row-major ↔ column-major (whole-byte types) |
//! | [`receive`] | B.11, B.12, A.5 | [`ItemReceiver`]: descriptor / frames / end → validated [`hurray_io::Item`] |
//! | [`server`] | B.7–B.17 | [`Server`] state machine, [`ServerConfig`], [`ServerEvent`] |
//! | [`client`] | B.7–B.17 | [`Client`] state machine, [`ClientConfig`], [`GetOptions`], [`ClientEvent`] |
//! | [`outbox`] | — | [`Transmit`]: what to write, data frames as (prefix, buffer, range) |
//!
//! ## Driving a server (one per connection)
//!
//! ```text
//! let mut server = Server::new(ServerConfig { .. });
//! let mut framer = server.framer();
//! loop {
//!     let n = socket.read(framer.read_buf())?;          // EOF: framer.is_idle() says whether clean
//!     if let Some(ev) = framer.advance(n) { server.on_frame(ev); }
//!     while let Some(ev) = server.poll_event() {
//!         match ev {
//!             ServerEvent::Request { stream_id, request } => match store.get(&request.tensor_key) {
//!                 Some(item) => { let _ = server.respond(stream_id, item); } // errors already queued as ERROR
//!                 None => server.reject(stream_id, ProtoError::new(ErrorCode::UnknownTensor, "…")),
//!             },
//!             ServerEvent::PutStarted { stream_id, total_data_bytes, .. } => { /* reserve or reject */ }
//!             ServerEvent::Put { stream_id, key, item } => { store.insert(key, item); server.put_ack(stream_id)?; }
//!             _ => {}
//!         }
//!     }
//!     while let Some(t) = server.poll_transmit() {
//!         match t {
//!             Transmit::Bytes { bytes, .. } => socket.write_all(&bytes)?,
//!             Transmit::Data { prefix, buffer, range, .. } =>   // one vectored write, no copy
//!                 socket.write_all_vectored(&mut [IoSlice::new(&prefix), IoSlice::new(&buffer.as_slice()[range])])?,
//!             Transmit::CloseConnection => return Ok(()),
//!         }
//!     }
//! }
//! ```
//!
//! ## Driving a client
//!
//! [`Client::new`] queues the `CLIENT_HELLO`; write [`Client::poll_transmit`]s, read
//! into [`Client::read_buf`] and call [`Client::advance`] (data frames are read straight
//! into the tensor's buffer), wait for [`ClientEvent::Connected`], then
//! [`Client::get`] / [`Client::put`] return a stream id whose outcome arrives as
//! [`ClientEvent::Got`] / [`ClientEvent::PutAcked`] / [`ClientEvent::Failed`].
//! A parallel GET ([`GetOptions::parallel`]) reserves stream ids `s .. s + MAX_SHARDS`
//! and reports one reassembled tensor on `s`.
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
pub use receive::{ItemReceiver, ReceiveOptions, LIMIT_EXCEEDED, SHUTTING_DOWN};
pub use server::{Server, ServerConfig, ServerEvent};
pub mod client;
pub mod frames;
pub mod negotiate;
pub mod outbox;
pub mod receive;
pub mod server;
pub mod transcode;
