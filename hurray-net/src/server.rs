//! The tokio server: GET from memory-mapped `.hrry` files and the PUT store, PUT
//! into the store, limits for untrusted peers, graceful shutdown.
//!
//! Every protocol rule is `hurray-proto`'s (`hurray_proto::Server`, one per
//! connection); this module moves bytes, applies timeouts and limits, and answers
//! the protocol server's events from the files and the store. A connection lives
//! until the peer closes, stays silent past
//! [`idle_timeout`](ServerConfig::idle_timeout) (or past
//! [`handshake_timeout`](ServerConfig::handshake_timeout) before its hello), fails
//! at connection level (hello failure: `ERROR`, then close), or the server shuts
//! down. An `ERROR` on one transport stream closes only that stream (B.16).

use crate::drive::{self, Wrote};
use crate::error::{NetError, Result};
use crate::store::{CommitError, Reservation, Store};
use crate::wire::{code, ErrorCode, Message};
use hurray_io::file::WriteOptions;
use hurray_io::{FileReader, FileWriter, Item};
use hurray_proto::{ProtoError, ServerEvent};
use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Limits and options of a [`Server`]. Every limit protects the server from
/// untrusted peers; defaults suit a loopback or LAN model server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The protocol settings (`hurray-proto`): `max_message_size` (advertised;
    /// a larger `payload_length` gets `ERROR MESSAGE_TOO_LARGE`), frame size,
    /// parallel shards, transcoding cap, PUT receive limits, streams per connection.
    /// [`Default`] takes `hurray-proto`'s defaults except shards from 1 MiB up.
    pub proto: hurray_proto::ServerConfig,
    /// Most connections served at once (default 1024); one more is answered
    /// `ERROR BUSY` (private `0xF2`) and closed.
    pub max_connections: usize,
    /// Time for a new connection to complete its handshake (default 10 s); past it
    /// the server sends `ERROR TIMEOUT` (private `0xF3`) and closes.
    pub handshake_timeout: Duration,
    /// Time a connection may stay silent (between requests or inside a message), and
    /// the longest any single write may stall (default 60 s); then `ERROR TIMEOUT`
    /// and close.
    pub idle_timeout: Duration,
    /// Bytes the PUT store may hold, stored plus in progress (default 1 GiB).
    pub store_cap: u64,
    /// Largest single PUT (its `total_data_bytes`), bytes (default 1 GiB).
    pub max_put_bytes: u64,
    /// Bytes of partly received messages held by all connections at once (default
    /// 256 MiB): what each connection has read of the message it is in the middle
    /// of (at most one message, at most `max_message_size`). A connection that
    /// would pass it gets `ERROR BUSY` and is closed.
    pub max_buffered_bytes: u64,
    /// How long a shutdown lets transfers in progress finish before aborting
    /// them (default 10 s).
    pub shutdown_grace: Duration,
    /// Where to write the store's items as a `.hrry` at shutdown (none by default).
    pub persist: Option<PathBuf>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            proto: hurray_proto::ServerConfig {
                min_shard_bytes: 1 << 20,
                ..hurray_proto::ServerConfig::default()
            },
            max_connections: 1024,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            store_cap: 1 << 30,
            max_put_bytes: 1 << 30,
            max_buffered_bytes: 256 << 20,
            shutdown_grace: Duration::from_secs(10),
            persist: None,
        }
    }
}

/// Counters a running server exposes (shared, cheap to clone).
#[derive(Clone, Debug)]
pub struct ServerStats {
    shared: Arc<Shared>,
}

impl ServerStats {
    /// Connections currently open (handshaking or serving).
    pub fn live_connections(&self) -> usize {
        self.shared.live.load(Ordering::SeqCst)
    }
    /// Connections accepted since start (refused ones included).
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }
    /// Tensor data bytes sent in `TENSOR_DATA` frames since start.
    pub fn bytes_sent(&self) -> u64 {
        self.shared.sent.load(Ordering::SeqCst)
    }
    /// Bytes held by the PUT store (stored plus reserved; never above its cap).
    pub fn store_bytes(&self) -> u64 {
        self.shared.store.used()
    }
    /// Connection tasks that panicked (a bug; tests assert 0). A panic ends only
    /// its own connection.
    pub fn panics(&self) -> u64 {
        self.shared.panics.load(Ordering::SeqCst)
    }
    /// Keys in the PUT store.
    pub fn store_len(&self) -> usize {
        self.shared.store.len()
    }
    /// Bytes of partly received messages buffered by all connections right now.
    pub fn buffered_bytes(&self) -> u64 {
        self.shared.buffered.load(Ordering::SeqCst)
    }
}

#[derive(Debug)]
struct Shared {
    cfg: ServerConfig,
    files: Vec<FileReader>,
    /// Tensor name to the index of its file in `files`.
    names: HashMap<String, usize>,
    store: Arc<Store>,
    live: AtomicUsize,
    accepted: AtomicU64,
    sent: AtomicU64,
    buffered: AtomicU64,
    panics: AtomicU64,
}

/// What a shutdown did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Connections still busy after the grace period, aborted.
    pub aborted: usize,
    /// Items written to [`ServerConfig::persist`].
    pub persisted: usize,
}

/// A bound, not yet running server.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// A server running on the current tokio runtime (see [`Server::spawn`]).
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    stats: ServerStats,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<ShutdownReport>>,
}

impl RunningServer {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
    /// Its counters.
    pub fn stats(&self) -> &ServerStats {
        &self.stats
    }
    /// Stops accepting, lets transfers finish within the grace period, aborts the
    /// rest, persists the store when configured.
    ///
    /// Errors: persisting failed; [`NetError::Io`] when the server task panicked.
    pub async fn shutdown(mut self) -> Result<ShutdownReport> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        (&mut self.task)
            .await
            .map_err(|e| NetError::Io(std::io::Error::other(e.to_string())))?
    }
}

/// Decrements the live-connection count when a connection task ends or is aborted.
struct LiveGuard(Arc<Shared>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Server {
    /// Binds `addr` and indexes the tensors of `files` by name (heads, members and
    /// plain tensors; a composite head's name serves the whole composite).
    ///
    /// Errors: [`NetError::Io`] when binding fails; [`NetError::Protocol`]
    /// (`INVALID_MESSAGE`) when two files hold the same tensor name.
    pub async fn bind(
        addr: SocketAddr,
        files: Vec<FileReader>,
        cfg: ServerConfig,
    ) -> Result<Server> {
        let mut names = HashMap::new();
        for (i, f) in files.iter().enumerate() {
            for n in f.names() {
                if names.insert(n.to_owned(), i).is_some() {
                    return Err(NetError::protocol(
                        ErrorCode::InvalidMessage,
                        format!("tensor name {n:?} appears in two served files"),
                    ));
                }
            }
        }
        let listener = TcpListener::bind(addr).await?;
        let store = Arc::new(Store::new(cfg.store_cap));
        Ok(Server {
            listener,
            shared: Arc::new(Shared {
                cfg,
                files,
                names,
                store,
                live: AtomicUsize::new(0),
                accepted: AtomicU64::new(0),
                sent: AtomicU64::new(0),
                buffered: AtomicU64::new(0),
                panics: AtomicU64::new(0),
            }),
        })
    }

    /// The bound address (port resolved when bound to port 0).
    ///
    /// Errors: [`NetError::Io`] from the socket.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        Ok(self.listener.local_addr()?)
    }

    /// Its counters.
    pub fn stats(&self) -> ServerStats {
        ServerStats {
            shared: self.shared.clone(),
        }
    }

    /// Runs on the current runtime; stop it with [`RunningServer::shutdown`].
    ///
    /// Errors: [`NetError::Io`] when the local address cannot be read.
    pub fn spawn(self) -> Result<RunningServer> {
        let addr = self.local_addr()?;
        let stats = self.stats();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(self.run(async move {
            let _ = rx.await;
        }));
        Ok(RunningServer {
            addr,
            stats,
            stop: Some(tx),
            task,
        })
    }

    /// Serves until `stop` completes, then shuts down: stops accepting, drains every
    /// connection (new requests and PUTs get `ERROR SHUTTING_DOWN`, idle connections
    /// close), gives transfers in progress
    /// [`shutdown_grace`](ServerConfig::shutdown_grace) to finish, aborts the rest
    /// (`ERROR SHUTTING_DOWN` on each open stream, then close; a connection still
    /// blocked in a write 2 s later is cancelled), and writes the store to
    /// [`persist`](ServerConfig::persist) when set.
    ///
    /// Errors: persisting failed ([`NetError::Format`]).
    pub async fn run(self, stop: impl Future<Output = ()>) -> Result<ShutdownReport> {
        let Server { listener, shared } = self;
        let (down_tx, down_rx) = watch::channel(Phase::Serving);
        let mut tasks = JoinSet::new();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => break,
                Some(r) = tasks.join_next(), if !tasks.is_empty() => note_panic(&shared, r),
                r = listener.accept() => {
                    let Ok((sock, _)) = r else {
                        // Out of descriptors or a reset before accept: back off a little.
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        continue;
                    };
                    shared.accepted.fetch_add(1, Ordering::SeqCst);
                    if shared.live.load(Ordering::SeqCst) >= shared.cfg.max_connections {
                        refuse_busy(&sock);
                        continue;
                    }
                    shared.live.fetch_add(1, Ordering::SeqCst);
                    let guard = LiveGuard(shared.clone());
                    let sh = shared.clone();
                    let rx = down_rx.clone();
                    tasks.spawn(async move {
                        let _guard = guard;
                        serve_connection(sock, sh, rx).await;
                    });
                }
            }
        }
        drop(listener);
        // Drain: no new requests, transfers under way finish, idle connections close.
        let _ = down_tx.send(Phase::Draining);
        let grace = shared.cfg.shutdown_grace;
        let mut aborted = 0;
        if !join_within(&mut tasks, &shared, grace).await {
            // Abort: every open stream gets ERROR SHUTTING_DOWN, then the connection
            // closes; a connection stuck in a write is cancelled after 2 s more.
            aborted = tasks.len();
            let _ = down_tx.send(Phase::Aborting);
            if !join_within(&mut tasks, &shared, Duration::from_secs(2)).await {
                tasks.abort_all();
                while tasks.join_next().await.is_some() {}
            }
        }
        let persisted = match shared.cfg.persist.clone() {
            Some(path) => {
                let items = shared.store.snapshot();
                tokio::task::spawn_blocking(move || persist(&path, &items))
                    .await
                    .map_err(|e| NetError::Io(std::io::Error::other(e.to_string())))??
            }
            None => 0,
        };
        Ok(ShutdownReport { aborted, persisted })
    }
}

/// Joins every task within `limit`; false when some are still running.
async fn join_within(tasks: &mut JoinSet<()>, sh: &Shared, limit: Duration) -> bool {
    tokio::time::timeout(limit, async {
        while let Some(r) = tasks.join_next().await {
            note_panic(sh, r);
        }
    })
    .await
    .is_ok()
}

fn note_panic(sh: &Shared, r: std::result::Result<(), tokio::task::JoinError>) {
    if matches!(&r, Err(e) if e.is_panic()) {
        sh.panics.fetch_add(1, Ordering::SeqCst);
    }
}

/// Writes the stored items to `path` (written aside and renamed into place).
fn persist(path: &std::path::Path, items: &[(String, Item)]) -> Result<usize> {
    let mut w = FileWriter::create(path, WriteOptions::default())?;
    for (k, item) in items {
        match item {
            Item::Tensor(t) => w.write_tensor(k, t)?,
            Item::Composite(c) => w.write_composite(k, c)?,
        }
    }
    w.finish()?;
    Ok(items.len())
}

/// Answers a connection over the limit with `ERROR BUSY` without waiting on it.
fn refuse_busy(sock: &TcpStream) {
    if let Ok(b) = (Message::Error {
        code: code::BUSY,
        message: "connection limit reached".into(),
    })
    .encode(1)
    {
        let _ = sock.try_write(&b);
    }
}

/// This connection's share of [`ServerConfig::max_buffered_bytes`]: the bytes of
/// the message it is in the middle of receiving.
struct Held {
    sh: Arc<Shared>,
    bytes: u64,
}

impl Held {
    /// Records that the connection now holds `bytes`; false when the total over all
    /// connections passes the limit.
    fn set(&mut self, bytes: u64) -> bool {
        let total = if bytes >= self.bytes {
            self.sh
                .buffered
                .fetch_add(bytes - self.bytes, Ordering::SeqCst)
                + (bytes - self.bytes)
        } else {
            self.sh
                .buffered
                .fetch_sub(self.bytes - bytes, Ordering::SeqCst)
                - (self.bytes - bytes)
        };
        self.bytes = bytes;
        total <= self.sh.cfg.max_buffered_bytes
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.sh.buffered.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

/// What the server asks of its connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Serving,
    /// Refuse new requests (`SHUTTING_DOWN`), finish transfers under way, then close.
    Draining,
    /// Send `ERROR SHUTTING_DOWN` on every open stream and close now.
    Aborting,
}

/// Serves one connection: socket bytes into the `hurray-proto` server's
/// `read_buf()` (PUT data lands straight in the tensor's buffer), its events
/// answered from the files and the store, its transmits written out (data frames
/// vectored from the served tensors' buffers).
async fn serve_connection(mut sock: TcpStream, sh: Arc<Shared>, mut phase: watch::Receiver<Phase>) {
    let _ = sock.set_nodelay(true);
    let cfg = &sh.cfg;
    let io = cfg.idle_timeout;
    let mut p = hurray_proto::Server::new(cfg.proto.clone());
    let mut held = Held {
        sh: sh.clone(),
        bytes: 0,
    };
    let mut puts: HashMap<u32, Reservation> = HashMap::new();
    let handshake_end = Instant::now() + cfg.handshake_timeout;
    let mut draining = false;
    loop {
        while let Some(ev) = p.poll_event() {
            on_event(&sh, &mut p, &mut puts, ev);
        }
        while let Some(t) = p.poll_transmit() {
            match drive::write_transmit(&mut sock, t, io).await {
                Ok(Wrote::Data(n)) => {
                    sh.sent.fetch_add(n, Ordering::Relaxed);
                }
                Ok(Wrote::Close) => return linger_close(&mut sock, io).await,
                Err(_) => return,
            }
        }
        if draining && p.is_drained() && p.between_messages() {
            // Nothing in flight either way: a plain close, no lingering.
            let _ = tokio::time::timeout(io, sock.shutdown()).await;
            return;
        }
        let (limit, what) = if p.is_connected() {
            (io, "idle connection")
        } else {
            (
                handshake_end.saturating_duration_since(Instant::now()),
                "handshake",
            )
        };
        let now = *phase.borrow_and_update();
        match now {
            Phase::Serving => {}
            Phase::Draining if !draining => {
                draining = true;
                p.drain();
                continue;
            }
            Phase::Draining => {}
            Phase::Aborting => {
                p.abort_all(ProtoError::new(
                    code::SHUTTING_DOWN,
                    "the server is shutting down",
                ));
                continue;
            }
        }
        let r = tokio::select! {
            r = drive::read_into(&mut sock, p.read_buf(), limit, what) => r,
            _ = phase.changed() => continue,
        };
        match r {
            Ok(n) => {
                p.advance(n);
                let partial = if p.between_messages() {
                    0
                } else {
                    held.bytes + n as u64
                };
                if !held.set(partial) {
                    return close_with(&mut sock, code::BUSY, "server buffers are full", io).await;
                }
            }
            Err(NetError::Timeout(w)) => {
                return close_with(&mut sock, code::TIMEOUT, &format!("{w} timed out"), io).await
            }
            Err(_) => return, // the peer closed or reset
        }
    }
}

/// Answers one event of the protocol server.
fn on_event(
    sh: &Shared,
    p: &mut hurray_proto::Server,
    puts: &mut HashMap<u32, Reservation>,
    ev: ServerEvent,
) {
    match ev {
        ServerEvent::Connected { .. } => {}
        ServerEvent::Request { stream_id, request } => match lookup(sh, &request.tensor_key) {
            // `respond` sends its own ERROR when the item cannot be served.
            Ok(Some(item)) => {
                let _ = p.respond(stream_id, &item);
            }
            Ok(None) => p.reject(
                stream_id,
                ProtoError::new(
                    ErrorCode::UnknownTensor,
                    format!("no tensor named {:?}", request.tensor_key),
                ),
            ),
            Err(e) => p.reject(stream_id, ProtoError::invalid(e.to_string())),
        },
        ServerEvent::PutStarted {
            stream_id,
            key,
            total_data_bytes,
        } => {
            if key.is_empty() || key.len() > hurray_io::file::MAX_NAME_LEN {
                // The key becomes a tensor name when the store is persisted.
                p.reject(
                    stream_id,
                    ProtoError::invalid(format!(
                        "PUT key of {} bytes: a key must be 1 to {} bytes (it names a \
                         tensor of a .hrry file)",
                        key.len(),
                        hurray_io::file::MAX_NAME_LEN
                    )),
                );
                return;
            }
            let refused = if total_data_bytes > sh.cfg.max_put_bytes {
                Some(format!(
                    "PUT {key:?} of {total_data_bytes} bytes exceeds the per-PUT limit {}",
                    sh.cfg.max_put_bytes
                ))
            } else {
                match sh.store.reserve(total_data_bytes) {
                    Some(r) => {
                        puts.insert(stream_id, r);
                        None
                    }
                    None => Some(format!(
                        "PUT {key:?} of {total_data_bytes} bytes refused: the store holds {} of {} bytes",
                        sh.store.used(),
                        sh.store.cap()
                    )),
                }
            };
            if let Some(m) = refused {
                p.reject(stream_id, ProtoError::new(code::STORE_FULL, m));
            }
        }
        ServerEvent::Put {
            stream_id,
            key,
            item,
        } => {
            let stored = match puts.remove(&stream_id) {
                Some(r) => sh.store.commit(r, key, item),
                None => Err(CommitError::Full),
            };
            match stored {
                Ok(()) => {
                    let _ = p.put_ack(stream_id);
                }
                Err(CommitError::Full) => p.reject(
                    stream_id,
                    ProtoError::new(code::STORE_FULL, "the store cannot hold the complete item"),
                ),
                Err(CommitError::NameClash(m)) => p.reject(stream_id, ProtoError::invalid(m)),
            }
        }
        ServerEvent::StreamClosed { stream_id, .. } => {
            puts.remove(&stream_id);
        }
        ServerEvent::Pong { .. } | ServerEvent::ConnectionFailed { .. } => {}
    }
}

/// Sends a connection-level `ERROR` (stream 1) and closes.
async fn close_with(sock: &mut TcpStream, code: ErrorCode, message: &str, io: Duration) {
    if let Ok(b) = (Message::Error {
        code,
        message: message.to_owned(),
    })
    .encode(1)
    {
        let _ = drive::write_all_vectored(
            sock,
            &mut [std::io::IoSlice::new(&b)],
            io.min(Duration::from_secs(2)),
        )
        .await;
    }
    linger_close(sock, io).await;
}

/// Half-closes, then drains what the peer still sends for a moment (bounded), so
/// an `ERROR` just written is not lost to a reset.
async fn linger_close(sock: &mut TcpStream, io: Duration) {
    let limit = io.min(Duration::from_secs(2));
    let _ = tokio::time::timeout(limit, sock.shutdown()).await;
    let mut sink = vec![0u8; 64 << 10];
    let mut left: u64 = 256 << 20;
    let _ = tokio::time::timeout(limit, async {
        while left > 0 {
            match sock.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n as u64),
            }
        }
    })
    .await;
}

/// The item under `key`: the PUT store first, then the files.
fn lookup(sh: &Shared, key: &str) -> hurray_io::Result<Option<Item>> {
    if let Some(i) = sh.store.get(key) {
        return Ok(Some(i));
    }
    match sh.names.get(key) {
        Some(&f) => sh.files[f].item(key),
        None => Ok(None),
    }
}
