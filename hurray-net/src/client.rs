//! Clients: [`Client`] (async, tokio) and [`BlockingClient`] (the same calls on its
//! own current-thread runtime).
//!
//! A client is one connection driving a `hurray_proto::Client`. Calls are
//! sequential (`&mut self`); each get or put is one transport stream (a parallel get
//! uses the block of shard streams `hurray-proto` reserves). An `ERROR` closes only
//! its stream (B.16): the connection stays usable unless the failure was at
//! connection level.

use crate::drive::{self, Wrote};
use crate::error::{NetError, Result};
use hurray_io::{Item, Tensor};
use hurray_proto::{ClientConfig, ClientEvent};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{lookup_host, TcpStream};

/// Progress of a transfer: called with the bytes just moved and the total to move.
/// A put reports data bytes against the item's data size; a get reports every byte
/// read from the connection (messages included) with total 0 (not known before the
/// descriptors arrive).
pub type ProgressFn = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// Options of a connection.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Protocol settings (`hurray-proto`): advertised `max_message_size`, layouts,
    /// devices, receive limits (`receive.max_item_bytes`, default 4 GiB), PUT frame
    /// size.
    pub proto: ClientConfig,
    /// Time to connect and finish the handshake. Default 10 s.
    pub connect_timeout: Duration,
    /// Longest any single read or write may stall. Default 60 s.
    pub io_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            proto: ClientConfig::default(),
            connect_timeout: Duration::from_secs(10),
            io_timeout: Duration::from_secs(60),
        }
    }
}

/// Options of one get.
#[derive(Clone, Default)]
pub struct GetOptions {
    /// The request (`hurray-proto`): preferred layouts, `ALLOW_TRANSCODE`,
    /// `PARALLEL_OK`, `min_alignment`, `preferred_device`.
    pub request: hurray_proto::GetOptions,
    /// Called after every read from the connection (see [`ProgressFn`]).
    pub progress: Option<ProgressFn>,
}

impl GetOptions {
    /// Options asking for parallel shards (B.13; honoured when the server
    /// advertises `PARALLEL_STREAMS`).
    pub fn parallel() -> GetOptions {
        GetOptions {
            request: hurray_proto::GetOptions {
                parallel: true,
                ..hurray_proto::GetOptions::default()
            },
            progress: None,
        }
    }
}

impl std::fmt::Debug for GetOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GetOptions")
            .field("request", &self.request)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// An async client connection.
pub struct Client {
    sock: Option<TcpStream>,
    addr: SocketAddr,
    proto: hurray_proto::Client,
    io_timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("addr", &self.addr)
            .field("open", &self.sock.is_some())
            .finish()
    }
}

fn not_connected() -> NetError {
    NetError::Io(std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        "the connection is closed; connect again",
    ))
}

/// What the socket pump watches for.
struct Watch<'a> {
    stream_id: u32,
    progress: Option<&'a ProgressFn>,
    total: u64,
}

impl Client {
    /// Connects to `addr` and does the handshake (B.7).
    ///
    /// Errors: [`NetError::Io`] (refused, reset), [`NetError::Timeout`],
    /// [`NetError::Remote`] when the server answers `ERROR` (e.g.
    /// `PROTOCOL_VERSION_MISMATCH`, private `BUSY`), [`NetError::Protocol`] when its
    /// `SERVER_HELLO` breaks a rule (this side then sends `ERROR` and closes).
    pub async fn connect(
        addr: impl tokio::net::ToSocketAddrs,
        opts: ClientOptions,
    ) -> Result<Client> {
        let t = opts.connect_timeout;
        tokio::time::timeout(t, Self::connect_inner(addr, opts))
            .await
            .map_err(|_| NetError::Timeout("connecting"))?
    }

    async fn connect_inner(
        addr: impl tokio::net::ToSocketAddrs,
        opts: ClientOptions,
    ) -> Result<Client> {
        let addr = lookup_host(addr)
            .await?
            .next()
            .ok_or_else(|| NetError::Io(std::io::ErrorKind::AddrNotAvailable.into()))?;
        let sock = TcpStream::connect(addr).await?;
        sock.set_nodelay(true)?;
        let proto = hurray_proto::Client::new(opts.proto.clone());
        let mut c = Client {
            sock: Some(sock),
            addr,
            proto,
            io_timeout: opts.io_timeout,
        };
        let mut w = Watch {
            stream_id: 0,
            progress: None,
            total: 0,
        };
        match c.pump(&mut w).await? {
            ClientEvent::Connected { .. } => Ok(c),
            ev => Err(c.fail(ev).await),
        }
    }

    /// The server's `SERVER_HELLO`.
    pub fn server_hello(&self) -> Option<&hurray_proto::Hello> {
        self.proto.server_hello()
    }

    /// The server's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Gets the item named `key`: a tensor, or a whole composite (head and members,
    /// checked as A.4 says). With `opts.request.parallel` and a server advertising
    /// `PARALLEL_STREAMS`, the server may answer in shards on several streams; they
    /// are checked (B.13, `SHARD_MISMATCH`) and reassembled into one tensor.
    ///
    /// Errors: [`NetError::Remote`] (`UNKNOWN_TENSOR`, `DEVICE_UNAVAILABLE`, …; the
    /// connection stays usable), [`NetError::Protocol`] when the server broke a rule
    /// (this side sent `ERROR` on the stream), [`NetError::Io`],
    /// [`NetError::Timeout`] (the connection is then closed).
    pub async fn get(&mut self, key: &str, opts: &GetOptions) -> Result<Item> {
        let sid = self.proto.get(key, &opts.request)?;
        let mut w = Watch {
            stream_id: sid,
            progress: opts.progress.as_ref(),
            total: 0,
        };
        match self.pump(&mut w).await? {
            ClientEvent::Got { item, .. } => Ok(item),
            ev => Err(self.fail(ev).await),
        }
    }

    /// [`get`](Self::get) for a plain tensor.
    ///
    /// Errors: as `get`; [`NetError::Protocol`] `INVALID_MESSAGE` (local, nothing
    /// sent) when `key` names a composite.
    pub async fn get_tensor(&mut self, key: &str, opts: &GetOptions) -> Result<Tensor> {
        match self.get(key, opts).await? {
            Item::Tensor(t) => Ok(t),
            Item::Composite(_) => Err(NetError::protocol(
                hurray_proto::ErrorCode::InvalidMessage,
                format!("{key:?} is a composite; use get"),
            )),
        }
    }

    /// Puts `item` under `key` (B.15); returns once the server acknowledged it.
    /// Frames are written vectored from the item's own buffers.
    ///
    /// Errors: [`NetError::Remote`] when refused (private `STORE_FULL` when the
    /// server's store cannot take it, `DEVICE_UNAVAILABLE`, `INVALID_MESSAGE`, …),
    /// [`NetError::Io`], timeouts.
    pub async fn put(&mut self, key: &str, item: &Item) -> Result<()> {
        self.put_with_progress(key, item, None).await
    }

    /// [`put`](Self::put), calling `progress` after every data frame written.
    ///
    /// Errors: as `put`.
    pub async fn put_with_progress(
        &mut self,
        key: &str,
        item: &Item,
        progress: Option<ProgressFn>,
    ) -> Result<()> {
        let sid = self.proto.put(key, item)?;
        let mut total = 0;
        item.for_each_tensor(&mut |t| total += t.data_len());
        let mut w = Watch {
            stream_id: sid,
            progress: progress.as_ref(),
            total,
        };
        match self.pump(&mut w).await? {
            ClientEvent::PutAcked { .. } => Ok(()),
            ev => Err(self.fail(ev).await),
        }
    }

    /// [`put`](Self::put) for a plain tensor.
    ///
    /// Errors: as `put`.
    pub async fn put_tensor(&mut self, key: &str, t: &Tensor) -> Result<()> {
        self.put(key, &Item::Tensor(t.clone())).await
    }

    /// Sends `PING`, waits for its `PONG`.
    ///
    /// Errors: [`NetError::Io`], [`NetError::Timeout`].
    pub async fn ping(&mut self) -> Result<()> {
        let sid = self.proto.ping();
        let mut w = Watch {
            stream_id: sid,
            progress: None,
            total: 0,
        };
        match self.pump(&mut w).await? {
            ClientEvent::Pong { .. } => Ok(()),
            ev => Err(self.fail(ev).await),
        }
    }

    /// Turns a final event other than the wanted one into an error; closes the
    /// socket after a connection-level failure.
    async fn fail(&mut self, ev: ClientEvent) -> NetError {
        let (e, conn) = match ev {
            ClientEvent::Failed { error, sent, .. } => (remote_or_local(error, sent), false),
            ClientEvent::ConnectionFailed { error, sent } => (remote_or_local(error, sent), true),
            ev => (
                NetError::protocol(
                    hurray_proto::ErrorCode::InvalidMessage,
                    format!("unexpected client event {ev:?}"),
                ),
                true,
            ),
        };
        if conn {
            // Write what the state machine still has (its ERROR), then close.
            if let Some(s) = self.sock.as_mut() {
                while let Some(t) = self.proto.poll_transmit() {
                    if !matches!(
                        drive::write_transmit(s, t, self.io_timeout).await,
                        Ok(Wrote::Data(_))
                    ) {
                        break;
                    }
                }
                let _ = s.shutdown().await;
            }
            self.sock = None;
        }
        e
    }

    /// Writes what the state machine queued, feeds it what the socket brings, until
    /// an event for `w.stream_id` (or the connection) ends the wait. I/O errors and
    /// timeouts close the connection.
    async fn pump(&mut self, w: &mut Watch<'_>) -> Result<ClientEvent> {
        let r = self.pump_inner(w).await;
        if r.is_err() {
            if let Some(mut s) = self.sock.take() {
                let _ = s.shutdown().await;
            }
        }
        r
    }

    async fn pump_inner(&mut self, w: &mut Watch<'_>) -> Result<ClientEvent> {
        let io = self.io_timeout;
        loop {
            let sock = self.sock.as_mut().ok_or_else(not_connected)?;
            while let Some(t) = self.proto.poll_transmit() {
                match drive::write_transmit(sock, t, io).await? {
                    Wrote::Data(n) if n > 0 => {
                        if let Some(f) = w.progress {
                            f(n, w.total);
                        }
                    }
                    Wrote::Data(_) => {}
                    Wrote::Close => {
                        let _ = sock.shutdown().await;
                    }
                }
            }
            while let Some(ev) = self.proto.poll_event() {
                let ours = match &ev {
                    ClientEvent::Connected { .. } | ClientEvent::ConnectionFailed { .. } => true,
                    ClientEvent::Got { stream_id, .. }
                    | ClientEvent::PutAcked { stream_id }
                    | ClientEvent::Failed { stream_id, .. }
                    | ClientEvent::Pong { stream_id, .. } => *stream_id == w.stream_id,
                };
                if ours {
                    return Ok(ev);
                }
            }
            // Data bytes land in the tensor's buffer itself (hurray-proto's
            // in-place receive path).
            let n =
                drive::read_into(sock, self.proto.read_buf(), io, "waiting for the server").await?;
            self.proto.advance(n);
            if let Some(p) = w.progress {
                p(n as u64, w.total);
            }
        }
    }
}

fn remote_or_local(e: hurray_proto::ProtoError, sent: bool) -> NetError {
    if sent {
        NetError::from(e)
    } else {
        NetError::Remote {
            code: e.code,
            message: e.detail,
        }
    }
}

/// A blocking client: a [`Client`] driven by its own current-thread tokio runtime.
/// Do not use it from inside an async runtime (tokio refuses nested `block_on`).
#[derive(Debug)]
pub struct BlockingClient {
    rt: tokio::runtime::Runtime,
    inner: Client,
}

impl BlockingClient {
    /// Connects (see [`Client::connect`]).
    ///
    /// Errors: as `Client::connect`; [`NetError::Io`] when the runtime cannot start.
    pub fn connect(
        addr: impl tokio::net::ToSocketAddrs,
        opts: ClientOptions,
    ) -> Result<BlockingClient> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let inner = rt.block_on(Client::connect(addr, opts))?;
        Ok(BlockingClient { rt, inner })
    }

    /// See [`Client::get`].
    ///
    /// Errors: as `Client::get`.
    pub fn get(&mut self, key: &str, opts: &GetOptions) -> Result<Item> {
        self.rt.block_on(self.inner.get(key, opts))
    }

    /// See [`Client::get_tensor`].
    ///
    /// Errors: as `Client::get_tensor`.
    pub fn get_tensor(&mut self, key: &str, opts: &GetOptions) -> Result<Tensor> {
        self.rt.block_on(self.inner.get_tensor(key, opts))
    }

    /// See [`Client::put`].
    ///
    /// Errors: as `Client::put`.
    pub fn put(&mut self, key: &str, item: &Item) -> Result<()> {
        self.rt.block_on(self.inner.put(key, item))
    }

    /// See [`Client::put_with_progress`].
    ///
    /// Errors: as `Client::put`.
    pub fn put_with_progress(
        &mut self,
        key: &str,
        item: &Item,
        progress: Option<ProgressFn>,
    ) -> Result<()> {
        self.rt
            .block_on(self.inner.put_with_progress(key, item, progress))
    }

    /// See [`Client::ping`].
    ///
    /// Errors: as `Client::ping`.
    pub fn ping(&mut self) -> Result<()> {
        self.rt.block_on(self.inner.ping())
    }

    /// The server's `SERVER_HELLO`.
    pub fn server_hello(&self) -> Option<&hurray_proto::Hello> {
        self.inner.server_hello()
    }
}
