//! The tokio server: GET from memory-mapped `.hrry` files and the PUT store, PUT
//! into the store, limits for untrusted peers, graceful shutdown.
//!
//! Per connection (one transport stream): `CLIENT_HELLO` within
//! [`handshake_timeout`](ServerConfig::handshake_timeout), then requests until the
//! peer closes, stays idle past [`idle_timeout`](ServerConfig::idle_timeout), breaks
//! a rule (`ERROR` with the B.16 code, then close) or the server shuts down.

use crate::error::{NetError, Result};
use crate::store::{Reservation, Store};
use crate::wire::{
    capability, code, msg, parse_parallel_stream_id, request_flags, ErrorCode, Hello, LayoutEntry,
    Message, PutMsg, TensorRequest, PROTOCOL_VERSION,
};
use crate::xfer::{self, Incoming, RecvLimits, Tail};
use hurray_core::{Layout, Shard, TensorDescriptor};
use hurray_io::file::WriteOptions;
use hurray_io::{Composite, FileReader, FileWriter, Item, Tensor};
use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Limits and options of a [`Server`]. Every limit protects the server from
/// untrusted peers; defaults suit a loopback or LAN model server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Most connections served at once (default 1024); one more is answered
    /// `ERROR BUSY` (private `0xF2`) and closed.
    pub max_connections: usize,
    /// Largest message payload accepted, bytes (default 16 MiB); advertised in
    /// `SERVER_HELLO`. A larger `payload_length` gets `ERROR MESSAGE_TOO_LARGE`.
    pub max_message_size: u32,
    /// Largest `TENSOR_DATA` frame content sent, bytes (default 8 MiB; also capped
    /// by the client's `max_message_size - 8`).
    pub frame_bytes: u32,
    /// Time for a new connection to deliver its `CLIENT_HELLO` (default 10 s).
    pub handshake_timeout: Duration,
    /// Time a connection may wait between requests, and the longest any single
    /// read or write may stall mid-transfer (default 60 s).
    pub idle_timeout: Duration,
    /// Bytes the PUT store may hold, stored plus in progress (default 1 GiB).
    pub store_cap: u64,
    /// Largest single PUT (a tensor, or a whole composite), bytes (default: the
    /// store cap).
    pub max_put_bytes: u64,
    /// Bytes of control-message payloads (hellos, requests, PUT headers) buffered
    /// by all connections at once (default 256 MiB); beyond it `ERROR BUSY`. Each
    /// connection buffers at most one payload, at most `max_message_size`.
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
            max_connections: 1024,
            max_message_size: 16 << 20,
            frame_bytes: 8 << 20,
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
    /// Control-payload bytes buffered right now.
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

/// Control-payload bytes counted against `max_buffered_bytes` until dropped.
struct Buffered(Arc<Shared>, u64);

impl Drop for Buffered {
    fn drop(&mut self) {
        self.0.buffered.fetch_sub(self.1, Ordering::SeqCst);
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

    /// Serves until `stop` completes, then shuts down: stops accepting, tells idle
    /// connections to close, gives transfers in progress
    /// [`shutdown_grace`](ServerConfig::shutdown_grace) to finish, aborts the rest
    /// (their peers see the connection close before `TENSOR_DATA_END`), and
    /// writes the store to [`persist`](ServerConfig::persist) when set.
    ///
    /// Errors: persisting failed ([`NetError::Format`]).
    pub async fn run(self, stop: impl Future<Output = ()>) -> Result<ShutdownReport> {
        let Server { listener, shared } = self;
        let (down_tx, down_rx) = watch::channel(false);
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
        let _ = down_tx.send(true);
        let grace = shared.cfg.shutdown_grace;
        let drained =
            tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
        let aborted = if drained.is_err() {
            let n = tasks.len();
            tasks.abort_all();
            while tasks.join_next().await.is_some() {}
            n
        } else {
            0
        };
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

/// Why a connection ended; the error (if any) was already sent.
async fn serve_connection(mut sock: TcpStream, sh: Arc<Shared>, mut down: watch::Receiver<bool>) {
    let _ = sock.set_nodelay(true);
    let cfg = &sh.cfg;
    let io = cfg.idle_timeout;
    let peer = match tokio::time::timeout(cfg.handshake_timeout, handshake(&mut sock, &sh)).await {
        Ok(Ok(h)) => h,
        Ok(Err(e)) => return close_with(&mut sock, 1, &e, io).await,
        Err(_) => {
            let e = NetError::protocol(
                code::TIMEOUT,
                "no CLIENT_HELLO within the handshake timeout",
            );
            return close_with(&mut sock, 1, &e, io).await;
        }
    };
    let frame_max =
        u64::from(peer.max_message_size.saturating_sub(8)).min(u64::from(cfg.frame_bytes));
    loop {
        let header = tokio::select! {
            r = xfer::read_header(&mut sock, cfg.idle_timeout, "idle connection") => r,
            _ = down.wait_for(|d| *d) => return,
        };
        let h = match header {
            Ok(h) => h,
            Err(NetError::Timeout(w)) => {
                let e = NetError::protocol(code::TIMEOUT, format!("{w}: closed"));
                return close_with(&mut sock, 1, &e, io).await;
            }
            Err(_) => return, // peer closed or reset
        };
        let sid = h.stream_id.max(1);
        let r = async {
            xfer::check_header(&h, cfg.max_message_size)?;
            if h.stream_id == 0 {
                return Err(NetError::protocol(
                    ErrorCode::InvalidMessage,
                    "stream_id 0 is reserved (B.3)",
                ));
            }
            if h.message_type == msg::TENSOR_DATA {
                return Err(NetError::protocol(
                    ErrorCode::InvalidMessage,
                    "TENSOR_DATA outside a PUT",
                ));
            }
            let n = u64::from(h.payload_length);
            if sh.buffered.fetch_add(n, Ordering::SeqCst) + n > cfg.max_buffered_bytes {
                sh.buffered.fetch_sub(n, Ordering::SeqCst);
                return Err(NetError::protocol(code::BUSY, "server buffers are full"));
            }
            let hold = Buffered(sh.clone(), n);
            let p = xfer::read_payload(&mut sock, h.payload_length, io).await?;
            let m = Message::decode_owned(&h, p)?;
            drop(hold);
            match m {
                Message::TensorRequest(r) => {
                    serve_get(&mut sock, &sh, h.stream_id, r, frame_max).await
                }
                Message::TensorPut(p) => serve_put(&mut sock, &sh, h.stream_id, p).await,
                Message::Ping(p) => {
                    let b = Message::Pong(p).encode(h.stream_id)?;
                    xfer::write_all_vectored(&mut sock, &mut [std::io::IoSlice::new(&b)], io).await
                }
                Message::Pong(_) => Ok(()),
                Message::Error { code, message } => Err(NetError::Remote { code, message }),
                m => Err(NetError::protocol(
                    ErrorCode::InvalidMessage,
                    format!("{} is not expected from a client here", m.name()),
                )),
            }
        }
        .await;
        match r {
            Ok(()) => {}
            Err(NetError::Remote { .. }) | Err(NetError::Io(_)) => return,
            Err(e) => return close_with(&mut sock, sid, &e, io).await,
        }
    }
}

/// Reads `CLIENT_HELLO`, answers `SERVER_HELLO` (B.7 rules 1–3).
async fn handshake(sock: &mut TcpStream, sh: &Shared) -> Result<Hello> {
    let cfg = &sh.cfg;
    let h = xfer::read_header(sock, cfg.handshake_timeout, "handshake").await?;
    if h.message_type != msg::CLIENT_HELLO {
        return Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            format!(
                "the first message must be CLIENT_HELLO, got type {:#x} (B.7 rule 1)",
                h.message_type
            ),
        ));
    }
    // A hello is small: refuse big ones before buffering.
    xfer::check_header(&h, cfg.max_message_size.min(64 << 10))?;
    let p = xfer::read_payload(sock, h.payload_length, cfg.handshake_timeout).await?;
    let Message::ClientHello(hello) = Message::decode_owned(&h, p)? else {
        return Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            "not a CLIENT_HELLO",
        ));
    };
    if hello.protocol_version < PROTOCOL_VERSION {
        return Err(NetError::protocol(
            ErrorCode::ProtocolVersionMismatch,
            format!(
                "client speaks version {}, this server only {PROTOCOL_VERSION}",
                hello.protocol_version
            ),
        ));
    }
    if hello.capability_flags & !capability::DEFINED != 0 {
        return Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            "reserved capability bits set (S16, strict)",
        ));
    }
    if hello.max_message_size < 64 {
        return Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            format!(
                "max_message_size {} leaves no room for data frames",
                hello.max_message_size
            ),
        ));
    }
    if !hello.memory_classes().contains(&0) {
        return Err(NetError::protocol(
            ErrorCode::DeviceUnavailable,
            "the client accepts no STANDARD memory, the only class served (S11)",
        ));
    }
    let reply = Message::ServerHello(Hello {
        protocol_version: PROTOCOL_VERSION,
        max_message_size: cfg.max_message_size,
        capability_flags: capability::PARALLEL_STREAMS,
        supported_layouts: (0x01..=0x0B).map(LayoutEntry::Tag).collect(),
        supported_devices: vec![0x00],
        supported_memory_classes: Some(vec![0x00]),
    })
    .encode(h.stream_id.max(1))?;
    xfer::write_all_vectored(sock, &mut [std::io::IoSlice::new(&reply)], cfg.idle_timeout).await?;
    Ok(hello)
}

/// Sends `ERROR` for `e`, half-closes, and drains what the peer still sends for a
/// moment (bounded) so the `ERROR` is not lost to a reset.
async fn close_with(sock: &mut TcpStream, sid: u32, e: &NetError, io: Duration) {
    let (code, message) = match e {
        NetError::Protocol { code, message } => (*code, message.clone()),
        NetError::Timeout(w) => (code::TIMEOUT, (*w).to_owned()),
        NetError::Format(f) => (ErrorCode::InvalidMessage, f.to_string()),
        NetError::Remote { .. } | NetError::Io(_) => return,
    };
    let limit = io.min(Duration::from_secs(2));
    xfer::send_error(sock, sid, code, &message, limit).await;
    let _ = sock.shutdown().await;
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
fn lookup(sh: &Shared, key: &str) -> Result<Option<Item>> {
    if let Some(i) = sh.store.get(key) {
        return Ok(Some(i));
    }
    match sh.names.get(key) {
        Some(&f) => Ok(sh.files[f].item(key)?),
        None => Ok(None),
    }
}

/// Answers a `TENSOR_REQUEST` (B.8–B.13). Layouts: always the stored one (this
/// server does not transcode, so it never advertises `TRANSCODING`; B.9 step 2).
async fn serve_get(
    sock: &mut TcpStream,
    sh: &Shared,
    sid: u32,
    r: TensorRequest,
    frame_max: u64,
) -> Result<()> {
    let io = sh.cfg.idle_timeout;
    if r.request_flags & !request_flags::DEFINED != 0 {
        return Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            "reserved request_flags bits set (S16, strict)",
        ));
    }
    if r.preferred_device != 0x00 {
        return Err(NetError::protocol(
            ErrorCode::DeviceUnavailable,
            format!(
                "device {:#04x} is not served; only CPU (0x00) (B.10 rule 3)",
                r.preferred_device
            ),
        ));
    }
    if !r.min_alignment.is_power_of_two() || r.min_alignment > 64 {
        return Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            format!(
                "min_alignment {} is not a power of two ≤ 64 (S16)",
                r.min_alignment
            ),
        ));
    }
    let Some(item) = lookup(sh, &r.tensor_key)? else {
        return Err(NetError::protocol(
            ErrorCode::UnknownTensor,
            format!("no tensor named {:?}", r.tensor_key),
        ));
    };
    let counter = |n: u64| {
        sh.sent.fetch_add(n, Ordering::Relaxed);
    };
    let parallel = (r.request_flags & request_flags::PARALLEL_OK != 0)
        .then(|| parse_parallel_stream_id(sid))
        .flatten();
    let before = data_bytes(&item);
    match (parallel, &item) {
        (Some((i, n)), Item::Tensor(t)) => {
            let plan = shard_plan(t, n);
            let k = plan.len() as u32;
            if i >= k {
                xfer::send_error(sock, sid, code::NO_SHARD, "served on fewer streams", io).await;
                return Err(NetError::Io(std::io::ErrorKind::ConnectionAborted.into()));
            }
            let (d, range) = shard_descriptor(t, &plan, i as usize)?;
            let bytes = &t.buffers().iter().map(|b| b.as_slice()).collect::<Vec<_>>();
            let slices: Vec<&[u8]> = if k == 1 {
                bytes.clone()
            } else {
                vec![&bytes[0][range.clone()]]
            };
            let tail = Tail {
                total_data_bytes: slices.iter().map(|s| s.len() as u64).sum(),
                shard_index: i,
                total_shards: k,
            };
            xfer::send_tensor(sock, sid, &d, &slices, tail, frame_max, io, None).await?;
            counter(tail.total_data_bytes);
        }
        (Some((i, _)), Item::Composite(_)) if i > 0 => {
            xfer::send_error(
                sock,
                sid,
                code::NO_SHARD,
                "a composite is served whole on stream 0",
                io,
            )
            .await;
            return Err(NetError::Io(std::io::ErrorKind::ConnectionAborted.into()));
        }
        _ => {
            xfer::send_item(sock, sid, &item, frame_max, io, None).await?;
            counter(before);
        }
    }
    Ok(())
}

fn data_bytes(item: &Item) -> u64 {
    let mut n = 0;
    item.for_each_tensor(&mut |t| n += t.data_len());
    n
}

/// Row ranges (dimension 0) of each shard when `t` is split over `n` streams: a
/// dense row-major tensor of whole-byte rows with at least `n` rows is split into
/// `n` near-equal slabs; anything else is one "shard", the whole tensor.
fn shard_plan(t: &Tensor, n: u32) -> Vec<(u64, u64)> {
    let d = t.descriptor();
    let whole = vec![(0, d.shape.first().copied().unwrap_or(1))];
    let plain = matches!(d.layout, Layout::RowMajor)
        && d.buffers.len() == 1
        && d.quantization.is_none()
        && d.shard.is_none()
        && d.composite_member.is_none()
        && d.byte_offset == 0
        && !d.shape.is_empty();
    if !plain || n <= 1 {
        return whole;
    }
    let rows = d.shape[0];
    let total = t.data_len();
    if rows < u64::from(n) || total == 0 || total % rows != 0 {
        return whole;
    }
    let n = u64::from(n);
    (0..n).map(|i| (rows * i / n, rows * (i + 1) / n)).collect()
}

/// The descriptor and byte range of shard `i` of `plan` (B.13: `HAS_SHARD` with
/// the parent shape and the shard's offset; statistics dropped, they describe the
/// parent). With a one-shard plan: the tensor itself, whole.
fn shard_descriptor(
    t: &Tensor,
    plan: &[(u64, u64)],
    i: usize,
) -> Result<(TensorDescriptor, std::ops::Range<usize>)> {
    let d = t.descriptor();
    if plan.len() == 1 {
        return Ok((d.clone(), 0..t.data_len() as usize));
    }
    let row = t.data_len() / d.shape[0];
    let (a, b) = plan[i];
    let mut s = d.clone();
    s.shape[0] = b - a;
    s.buffers[0].byte_size = (b - a) * row;
    s.statistics = None;
    let mut offset = vec![0u64; d.shape.len()];
    offset[0] = a;
    s.shard = Some(Shard {
        parent_shape: d.shape.clone(),
        offset,
    });
    Ok((s, (a * row) as usize..(b * row) as usize))
}

/// Receives a PUT (B.15) into the store: reserve, receive, check, commit, ACK.
/// A composite is PUT as its head's `TENSOR_PUT` (0 data bytes, `TENSOR_DATA_END`)
/// followed by one `TENSOR_PUT` sequence per member in pre-order, all under the same
/// key; one `TENSOR_PUT_ACK` answers the whole composite (reading of S6).
async fn serve_put(sock: &mut TcpStream, sh: &Shared, sid: u32, p: PutMsg) -> Result<()> {
    let key = p.tensor_key.clone();
    let lim = RecvLimits {
        max_message: sh.cfg.max_message_size,
        // Size limits are the Budget's (STORE_FULL), checked before any allocation.
        max_tensor_bytes: u64::MAX,
        io_timeout: sh.cfg.idle_timeout,
    };
    let mut budget = Budget {
        res: None,
        used: 0,
        max: sh.cfg.max_put_bytes,
        store: &sh.store,
    };
    let item = recv_put_item(sock, p, &key, &lim, &mut budget, 1).await?;
    if let Item::Composite(c) = &item {
        xfer::check_composite(c)?;
    }
    let res = budget
        .res
        .take()
        .expect("a reservation was made for the head");
    sh.store.commit(res, key, item);
    let ack = Message::TensorPutAck.encode(sid)?;
    xfer::write_all_vectored(sock, &mut [std::io::IoSlice::new(&ack)], lim.io_timeout).await
}

/// The reservation of one PUT, grown tensor by tensor.
struct Budget<'a> {
    res: Option<Reservation>,
    used: u64,
    max: u64,
    store: &'a Arc<Store>,
}

impl Budget<'_> {
    fn take(&mut self, bytes: u64) -> Result<()> {
        let full = || NetError::protocol(code::STORE_FULL, "the PUT store is full; PUT refused");
        self.used = self.used.saturating_add(bytes);
        if self.used > self.max {
            return Err(NetError::protocol(
                code::STORE_FULL,
                format!(
                    "PUT of {} bytes exceeds the per-PUT limit {}",
                    self.used, self.max
                ),
            ));
        }
        match &mut self.res {
            None => self.res = Some(self.store.reserve(bytes).ok_or_else(full)?),
            Some(r) => {
                if !r.grow(bytes) {
                    return Err(full());
                }
            }
        }
        Ok(())
    }
}

fn recv_put_item<'a>(
    sock: &'a mut TcpStream,
    p: PutMsg,
    key: &'a str,
    lim: &'a RecvLimits,
    budget: &'a mut Budget<'_>,
    depth: u32,
) -> std::pin::Pin<Box<dyn Future<Output = Result<Item>> + Send + 'a>> {
    Box::pin(async move {
        let d = xfer::accept_descriptor(&p.descriptor, p.total_data_bytes, lim)?;
        budget.take(p.total_data_bytes.saturating_add(p.descriptor.len() as u64))?;
        let members = xfer::member_count(&d);
        if members.is_some() && depth > xfer::MAX_DEPTH {
            return Err(NetError::protocol(
                ErrorCode::InvalidMessage,
                format!(
                    "composite nested deeper than {} levels (S13)",
                    xfer::MAX_DEPTH
                ),
            ));
        }
        let t = xfer::recv_tensor_body(sock, d, lim, None).await?;
        let Some(n) = members else {
            return Ok(Item::Tensor(t));
        };
        if n > xfer::MAX_MEMBERS {
            return Err(NetError::protocol(
                ErrorCode::InvalidMessage,
                format!(
                    "composite head declares {n} members, above {}",
                    xfer::MAX_MEMBERS
                ),
            ));
        }
        let mut c = Composite {
            head: t,
            members: Vec::new(),
        };
        for i in 0..n {
            let m = match xfer::next_message(sock, lim).await? {
                Incoming::Msg(Message::TensorPut(m)) if m.tensor_key == key => m,
                _ => {
                    return Err(NetError::protocol(
                        ErrorCode::InvalidMessage,
                        format!("composite {key:?}: member {i} of {n} must come as TENSOR_PUT under the same key"),
                    ))
                }
            };
            c.members
                .push(recv_put_item(sock, m, key, lim, budget, depth + 1).await?);
        }
        Ok(Item::Composite(c))
    })
}
