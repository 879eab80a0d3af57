//! # hurray-net
//!
//! The network transport of `streams-and-transport.md` Part B over TCP, on tokio:
//!
//! - [`server`]: serves every tensor of `.hrry` files by name straight from their
//!   memory mapping (vectored writes: a 20-byte prefix and slices of the mapping,
//!   no per-request copy of tensor bytes), takes PUTs into a bounded
//!   [`store::Store`], enforces limits for untrusted peers and shuts down
//!   gracefully;
//! - [`client`]: [`Client`] (async: get, put, parallel get over several
//!   connections per B.13) and [`BlockingClient`] (its own current-thread runtime).
//!
//! Messages are encoded and decoded by `hurray-proto`; this crate owns the sockets,
//! the clocks and the limits. One TCP connection is one transport stream: an
//! `ERROR` sent or received closes the connection (B.16).
//!
//! See `docs/network.md` ("Server, client and CLI") for limits, defaults and the
//! readings of the spec's ambiguities this crate depends on.

pub mod client;
pub mod error;
pub mod server;
pub mod store;
pub mod wire;
mod xfer;

pub use client::{BlockingClient, Client, ClientOptions, GetOptions};
pub use error::{NetError, Result};
pub use server::{RunningServer, Server, ServerConfig, ServerStats};
pub use xfer::ProgressFn;
