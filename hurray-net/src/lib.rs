//! # hurray-net
//!
//! The network transport of `streams-and-transport.md` Part B over TCP, on tokio:
//!
//! - [`server`]: serves every tensor of `.hrry` files by name straight from their
//!   memory mapping (vectored writes: a 20-byte prefix and slices of the mapping,
//!   no per-request copy of tensor bytes), takes PUTs into a bounded
//!   [`store::Store`], enforces limits for untrusted peers and shuts down
//!   gracefully;
//! - [`client`]: [`Client`] (async: get, put, parallel get as B.13 shards) and
//!   [`BlockingClient`] (its own current-thread runtime).
//!
//! Every protocol rule lives in `hurray-proto`'s sans-io state machines
//! (`hurray_proto::Server`, `hurray_proto::Client`); this crate owns the sockets,
//! the clocks, the store and the limits, and writes what the state machines queue.
//!
//! See `docs/network.md` ("Server, client and CLI") for limits, defaults and the
//! readings of the spec's ambiguities this crate depends on.

pub mod client;
mod drive;
pub mod error;
pub mod server;
pub mod store;
pub mod wire;

pub use client::{BlockingClient, Client, ClientOptions, GetOptions, ProgressFn};
pub use error::{NetError, Result};
pub use server::{RunningServer, Server, ServerConfig, ServerStats};
