//! Clients: [`Client`] (async, tokio) and [`BlockingClient`] (the same calls on its
//! own current-thread runtime).
//!
//! A client is one connection (one transport stream). Calls are sequential on it
//! (the protocol is half-duplex per stream, B.2). After an `ERROR`, sent or
//! received, the connection is closed (B.16) and every later call fails with
//! [`NetError::Io`] (`NotConnected`); connect again.

use crate::error::{NetError, Result};
use crate::wire::{
    capability, code, parallel_stream_id, request_flags, ErrorCode, Hello, LayoutEntry, Message,
    PutMsg, TensorRequest, MAX_PARALLEL, PROTOCOL_VERSION,
};
use crate::xfer::{self, Incoming, ProgressFn, RecvLimits, Tail};
use futures_util::future::join_all;
use hurray_core::{Layout, TensorDescriptor};
use hurray_io::{AlignedBuf, Buffer, Composite, Item, Tensor};
use std::io::IoSlice;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{lookup_host, TcpStream};

/// Options of a connection.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Largest payload this client accepts (advertised in `CLIENT_HELLO`; the
    /// server's frames are at most this minus 8). Default 16 MiB.
    pub max_message_size: u32,
    /// Time to connect and finish the handshake. Default 10 s.
    pub connect_timeout: Duration,
    /// Longest any single read or write may stall. Default 60 s.
    pub io_timeout: Duration,
    /// Largest tensor (sum of its buffers) this client accepts. Default 64 GiB.
    pub max_tensor_bytes: u64,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            max_message_size: 16 << 20,
            connect_timeout: Duration::from_secs(10),
            io_timeout: Duration::from_secs(60),
            max_tensor_bytes: 64 << 30,
        }
    }
}

/// Options of one get.
#[derive(Clone, Default)]
pub struct GetOptions {
    /// Number of connections for a parallel get (B.13); 0 or 1 = one stream.
    /// At most [`MAX_PARALLEL`].
    pub parallel: u32,
    /// Called after every data frame (bytes moved, total bytes).
    pub progress: Option<ProgressFn>,
}

impl std::fmt::Debug for GetOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GetOptions")
            .field("parallel", &self.parallel)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// An async client connection.
#[derive(Debug)]
pub struct Client {
    sock: Option<TcpStream>,
    addr: SocketAddr,
    opts: ClientOptions,
    server: Hello,
}

fn not_connected() -> NetError {
    NetError::Io(std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        "the connection was closed after an ERROR; connect again",
    ))
}

impl Client {
    /// Connects to `addr` and does the handshake (B.7).
    ///
    /// Errors: [`NetError::Io`] (refused, reset), [`NetError::Timeout`],
    /// [`NetError::Remote`] when the server answers `ERROR` (e.g.
    /// `PROTOCOL_VERSION_MISMATCH`, private `BUSY`), [`NetError::Protocol`] when its
    /// `SERVER_HELLO` breaks a rule (version above ours: `PROTOCOL_VERSION_MISMATCH`,
    /// S19).
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
        let mut sock = TcpStream::connect(addr).await?;
        sock.set_nodelay(true)?;
        let hello = Message::ClientHello(Hello {
            protocol_version: PROTOCOL_VERSION,
            max_message_size: opts.max_message_size,
            capability_flags: 0,
            supported_layouts: (0x01..=0x0B).map(LayoutEntry::Tag).collect(),
            supported_devices: vec![0x00],
            supported_memory_classes: Some(vec![0x00]),
        })
        .encode(1)?;
        xfer::write_all_vectored(&mut sock, &mut [IoSlice::new(&hello)], opts.io_timeout).await?;
        let lim = limits(&opts);
        let server = match xfer::next_message(&mut sock, &lim).await? {
            Incoming::Msg(Message::ServerHello(h)) => h,
            _ => {
                let e = NetError::protocol(
                    ErrorCode::InvalidMessage,
                    "the server's first message must be SERVER_HELLO (B.7 rule 2)",
                );
                return Err(fail(&mut sock, e, opts.io_timeout).await);
            }
        };
        if server.protocol_version > PROTOCOL_VERSION || server.protocol_version == 0 {
            let e = NetError::protocol(
                ErrorCode::ProtocolVersionMismatch,
                format!("server chose version {}", server.protocol_version),
            );
            return Err(fail(&mut sock, e, opts.io_timeout).await);
        }
        Ok(Client {
            sock: Some(sock),
            addr,
            opts,
            server,
        })
    }

    /// The server's `SERVER_HELLO`.
    pub fn server_hello(&self) -> &Hello {
        &self.server
    }

    /// The server's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Gets the item named `key`: a tensor, or a whole composite (head and members,
    /// checked as A.4 says). With `opts.parallel > 1` and a server advertising
    /// `PARALLEL_STREAMS`, opens that many more connections and gets the tensor as
    /// shards (see [`get_parallel`](Self::get_parallel)); this connection is not used.
    ///
    /// Errors: [`NetError::Remote`] (`UNKNOWN_TENSOR`, `DEVICE_UNAVAILABLE`, …),
    /// [`NetError::Protocol`] when the server breaks a rule (this side then sends
    /// `ERROR` and closes), [`NetError::Io`], [`NetError::Timeout`].
    pub async fn get(&mut self, key: &str, opts: &GetOptions) -> Result<Item> {
        if opts.parallel > 1 && self.server.capability_flags & capability::PARALLEL_STREAMS != 0 {
            return Self::get_parallel(self.addr, key, self.opts.clone(), opts).await;
        }
        let sock = self.sock.as_mut().ok_or_else(not_connected)?;
        let req = request(key, 0).encode(1)?;
        let lim = limits(&self.opts);
        let r = async {
            xfer::write_all_vectored(sock, &mut [IoSlice::new(&req)], lim.io_timeout).await?;
            let first = expect_msg(sock, &lim).await?;
            recv_item(sock, first, &lim, opts.progress.as_ref(), 1).await
        }
        .await;
        self.settle(r).await
    }

    /// [`get`](Self::get) for a plain tensor.
    ///
    /// Errors: as `get`; `INVALID_MESSAGE` (local) when `key` names a composite.
    pub async fn get_tensor(&mut self, key: &str, opts: &GetOptions) -> Result<Tensor> {
        match self.get(key, opts).await? {
            Item::Tensor(t) => Ok(t),
            Item::Composite(_) => Err(NetError::protocol(
                ErrorCode::InvalidMessage,
                format!("{key:?} is a composite; use get"),
            )),
        }
    }

    /// Puts `item` under `key` (B.15); returns once the server acknowledged it.
    /// A composite goes as its head's PUT then each member's, in pre-order, under
    /// the same key, answered by one `TENSOR_PUT_ACK` (the server documents this
    /// reading of S6). Frames are sized to the server's `max_message_size`, written
    /// vectored from the tensor's buffers.
    ///
    /// Errors: [`NetError::Remote`] when refused (e.g. private `STORE_FULL` when the
    /// server's store is full; `INVALID_MESSAGE`), [`NetError::Io`], timeouts.
    pub async fn put(&mut self, key: &str, item: &Item) -> Result<()> {
        self.put_with_progress(key, item, None).await
    }

    /// [`put`](Self::put), calling `progress` after every data frame sent.
    ///
    /// Errors: as `put`.
    pub async fn put_with_progress(
        &mut self,
        key: &str,
        item: &Item,
        progress: Option<ProgressFn>,
    ) -> Result<()> {
        let sock = self.sock.as_mut().ok_or_else(not_connected)?;
        let lim = limits(&self.opts);
        let frame_max = u64::from(self.server.max_message_size.saturating_sub(8)).max(1);
        let r = async {
            let mut sent = Ok(());
            let mut tensors = Vec::new();
            item.for_each_tensor(&mut |t| tensors.push(t));
            for t in tensors {
                sent = put_one(sock, key, t, frame_max, lim.io_timeout, progress.as_ref()).await;
                if sent.is_err() {
                    break;
                }
            }
            // Whether sending failed or not, the server's answer says why: a refused
            // PUT is answered with ERROR and the socket closed while we still write.
            match xfer::next_message(sock, &lim).await {
                Ok(Incoming::Msg(Message::TensorPutAck)) => sent,
                Ok(_) => Err(NetError::protocol(
                    ErrorCode::InvalidMessage,
                    "expected TENSOR_PUT_ACK or ERROR",
                )),
                Err(e @ NetError::Remote { .. }) => Err(e),
                Err(e) => sent.and(Err(e)),
            }
        }
        .await;
        self.settle(r).await
    }

    /// [`put`](Self::put) for a plain tensor.
    ///
    /// Errors: as `put`.
    pub async fn put_tensor(&mut self, key: &str, t: &Tensor) -> Result<()> {
        self.put(key, &Item::Tensor(t.clone())).await
    }

    /// Sends `PING`, waits for `PONG`.
    ///
    /// Errors: as [`get`](Self::get).
    pub async fn ping(&mut self) -> Result<()> {
        let sock = self.sock.as_mut().ok_or_else(not_connected)?;
        let lim = limits(&self.opts);
        let b = Message::Ping(Vec::new()).encode(1)?;
        let r = async {
            xfer::write_all_vectored(sock, &mut [IoSlice::new(&b)], lim.io_timeout).await?;
            match expect_msg(sock, &lim).await? {
                Message::Pong(_) => Ok(()),
                m => Err(NetError::protocol(
                    ErrorCode::InvalidMessage,
                    format!("expected PONG, got {}", m.name()),
                )),
            }
        }
        .await;
        self.settle(r).await
    }

    /// On a protocol error: send `ERROR`, close. On any error: forget the socket
    /// (its state is unknown).
    async fn settle<T>(&mut self, r: Result<T>) -> Result<T> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => {
                if let Some(mut s) = self.sock.take() {
                    return Err(fail(&mut s, e, self.opts.io_timeout).await);
                }
                Err(e)
            }
        }
    }

    /// Gets the tensor `key` over `n` new connections (B.13). Each connection asks
    /// for shard `i` of `n` (stream id convention in [`crate::wire`]); the server
    /// picks `k ≤ n` shards along dimension 0 and answers the other streams with
    /// private `NO_SHARD`. After every `TENSOR_DESCRIPTOR` has arrived the shards
    /// are checked (same parent shape, type and layout; slabs that cover the parent
    /// exactly, no overlap) and their frames are read concurrently, each straight
    /// into its place in one buffer sized for the parent. A tensor the server does
    /// not split (composite, sparse, fewer rows than `n`) comes whole on stream 0.
    ///
    /// Errors: `SHARD_MISMATCH` (sent to every stream, then closed) when the shards
    /// disagree; otherwise as [`get`](Self::get).
    pub async fn get_parallel(
        addr: SocketAddr,
        key: &str,
        copts: ClientOptions,
        opts: &GetOptions,
    ) -> Result<Item> {
        let n = opts.parallel.clamp(1, MAX_PARALLEL);
        let conns = join_all((0..n).map(|_| Client::connect(addr, copts.clone()))).await;
        let mut socks = Vec::with_capacity(n as usize);
        for c in conns {
            socks.push(c?.sock.take().ok_or_else(not_connected)?);
        }
        let lim = limits(&copts);
        // Send every request, then read every first message.
        let firsts = join_all(socks.iter_mut().enumerate().map(|(i, s)| {
            let sid = parallel_stream_id(i as u32, n);
            async move {
                let req = request(key, request_flags::PARALLEL_OK).encode(sid)?;
                xfer::write_all_vectored(s, &mut [IoSlice::new(&req)], lim.io_timeout).await?;
                match xfer::next_message(s, &lim).await {
                    Ok(Incoming::Msg(m)) => Ok(Some(m)),
                    Ok(Incoming::Data(_)) => Err(NetError::protocol(
                        ErrorCode::InvalidMessage,
                        "TENSOR_DATA before TENSOR_DESCRIPTOR (B.11)",
                    )),
                    Err(NetError::Remote { code: c, .. }) if c == code::NO_SHARD => Ok(None),
                    Err(e) => Err(e),
                }
            }
        }))
        .await;
        let mut firsts: Vec<Option<Message>> = firsts.into_iter().collect::<Result<_>>()?;
        let Some(Some(m0)) = firsts.first_mut().map(Option::take) else {
            return Err(NetError::protocol(
                ErrorCode::ShardMismatch,
                "stream 0 carried no shard",
            ));
        };
        let (d0, t0) = xfer::parse_descriptor(m0, &lim)?;
        if t0.total_shards <= 1 {
            // Served whole on stream 0 (composites come this way too).
            let s = &mut socks[0];
            let r = recv_item_from(s, d0, t0, &lim, opts.progress.as_ref(), 1).await;
            return match r {
                Ok(i) => Ok(i),
                Err(e) => Err(fail(s, e, copts.io_timeout).await),
            };
        }
        let mut shards = vec![(d0, t0)];
        for m in firsts
            .into_iter()
            .skip(1)
            .take(t0.total_shards as usize - 1)
        {
            let Some(m) = m else {
                return Err(mismatch(
                    &mut socks,
                    "a stream below total_shards carried no shard",
                    &copts,
                )
                .await);
            };
            shards.push(xfer::parse_descriptor(m, &lim)?);
        }
        let (parent, ranges) = match check_shards(&shards) {
            Ok(v) => v,
            Err(why) => return Err(mismatch(&mut socks, &why, &copts).await),
        };
        let total: u64 = parent.buffers[0].byte_size;
        if total > copts.max_tensor_bytes {
            return Err(NetError::protocol(
                ErrorCode::MessageTooLarge,
                "parallel tensor too large",
            ));
        }
        let mut buf = usize::try_from(total)
            .ok()
            .and_then(AlignedBuf::zeroed)
            .ok_or_else(|| {
                NetError::protocol(
                    ErrorCode::MessageTooLarge,
                    "cannot allocate the parent buffer",
                )
            })?;
        {
            // Split the parent buffer into each shard's slab (ranges ascend, cover it).
            let mut rest: &mut [u8] = buf.as_mut_slice();
            let mut chunks = Vec::with_capacity(ranges.len());
            let mut at = 0usize;
            for r in &ranges {
                let (a, b) = std::mem::take(&mut rest).split_at_mut(r.end - at);
                chunks.push(a);
                rest = b;
                at = r.end;
            }
            let progress = opts.progress.clone().map(|f| {
                let t = total;
                std::sync::Arc::new(move |n: u64, _: u64| f(n, t)) as ProgressFn
            });
            let k = ranges.len();
            let results = join_all(socks.iter_mut().take(k).zip(chunks).map(|(s, chunk)| {
                let p = progress.clone();
                async move { xfer::recv_data(s, &mut [chunk], &lim, p.as_ref()).await }
            }))
            .await;
            for (i, r) in results.into_iter().enumerate() {
                if let Err(e) = r {
                    return Err(fail(&mut socks[i], e, copts.io_timeout).await);
                }
            }
        }
        let t = Tensor::new(parent, vec![Buffer::from_aligned(buf)])?;
        Ok(Item::Tensor(t))
    }
}

/// Sends `ERROR SHARD_MISMATCH` on every stream and closes them.
async fn mismatch(socks: &mut [TcpStream], why: &str, o: &ClientOptions) -> NetError {
    for s in socks.iter_mut() {
        xfer::send_error(s, 1, ErrorCode::ShardMismatch, why, o.io_timeout).await;
        let _ = s.shutdown().await;
    }
    NetError::protocol(ErrorCode::ShardMismatch, why)
}

/// B.13 client validation: all shards share parent shape, element type and
/// layout; dimension-0 slabs (`shard_offset` zero elsewhere, full extent in every
/// other dimension) that tile the parent in index order. Returns the parent's
/// descriptor and each shard's byte range in the parent.
fn check_shards(
    shards: &[(TensorDescriptor, Tail)],
) -> std::result::Result<(TensorDescriptor, Vec<std::ops::Range<usize>>), String> {
    let k = shards.len() as u32;
    let first = &shards[0].0;
    let Some(s0) = &first.shard else {
        return Err("shard 0 has no shard section (HAS_SHARD)".into());
    };
    let parent_shape = s0.parent_shape.clone();
    if parent_shape.is_empty() {
        return Err("rank-0 parent cannot be sharded".into());
    }
    let mut parent = first.clone();
    parent.shape = parent_shape.clone();
    parent.shard = None;
    let mut ranges = Vec::new();
    let mut next_row = 0u64;
    let mut at = 0u64;
    for (i, (d, t)) in shards.iter().enumerate() {
        if t.shard_index != i as u32 || t.total_shards != k {
            return Err(format!(
                "stream {i} carries shard {} of {}",
                t.shard_index, t.total_shards
            ));
        }
        let Some(sh) = &d.shard else {
            return Err(format!("shard {i} has no shard section"));
        };
        if sh.parent_shape != parent_shape || d.element_type != first.element_type {
            return Err(format!("shard {i}: parent shape or element type differs"));
        }
        if !matches!(d.layout, Layout::RowMajor) || d.buffers.len() != 1 {
            return Err(format!(
                "shard {i}: only row-major one-buffer shards are reassembled"
            ));
        }
        if sh.offset[0] != next_row
            || sh.offset[1..].iter().any(|&o| o != 0)
            || d.shape[1..] != parent_shape[1..]
        {
            return Err(format!(
                "shard {i}: box does not continue the dimension-0 tiling"
            ));
        }
        next_row += d.shape[0];
        let len = t.total_data_bytes;
        ranges.push(at as usize..(at + len) as usize);
        at += len;
    }
    if next_row != parent_shape[0] {
        return Err(format!(
            "shards cover {next_row} of {} rows",
            parent_shape[0]
        ));
    }
    parent.buffers[0].byte_size = at;
    if let Err(e) = parent.encode() {
        return Err(format!("reassembled descriptor is invalid: {e}"));
    }
    Ok((parent, ranges))
}

fn limits(o: &ClientOptions) -> RecvLimits {
    RecvLimits {
        max_message: o.max_message_size,
        max_tensor_bytes: o.max_tensor_bytes,
        io_timeout: o.io_timeout,
    }
}

fn request(key: &str, flags: u32) -> Message {
    Message::TensorRequest(TensorRequest {
        tensor_key: key.to_owned(),
        preferred_layouts: Vec::new(),
        preferred_device: 0x00,
        min_alignment: 64,
        request_flags: flags,
    })
}

/// Sends `ERROR` for a protocol error of ours, half-closes; returns the error.
async fn fail(s: &mut TcpStream, e: NetError, io: Duration) -> NetError {
    if let NetError::Protocol { code, message } = &e {
        xfer::send_error(s, 1, *code, message, io.min(Duration::from_secs(2))).await;
    }
    let _ = s.shutdown().await;
    e
}

async fn expect_msg(s: &mut TcpStream, lim: &RecvLimits) -> Result<Message> {
    match xfer::next_message(s, lim).await? {
        Incoming::Msg(m) => Ok(m),
        Incoming::Data(_) => Err(NetError::protocol(
            ErrorCode::InvalidMessage,
            "TENSOR_DATA before TENSOR_DESCRIPTOR (B.11)",
        )),
    }
}

async fn put_one(
    s: &mut TcpStream,
    key: &str,
    t: &Tensor,
    frame_max: u64,
    io: Duration,
    progress: Option<&ProgressFn>,
) -> Result<()> {
    let descriptor = xfer::network_descriptor(t.descriptor())
        .encode()
        .map_err(|source| NetError::Format(hurray_io::Error::Descriptor { at: 0, source }))?;
    let head = Message::TensorPut(PutMsg {
        tensor_key: key.to_owned(),
        descriptor,
        total_data_bytes: t.data_len(),
    })
    .encode(1)?;
    xfer::write_all_vectored(s, &mut [IoSlice::new(&head)], io).await?;
    // The frames and TENSOR_DATA_END: the same path as a server's response, minus
    // the descriptor message.
    let slices: Vec<&[u8]> = t.buffers().iter().map(Buffer::as_slice).collect();
    xfer::send_frames(s, 1, &slices, t.data_len(), frame_max, io, progress).await?;
    Ok(())
}

/// Receives an item whose first message is `first` (B.11, B.12).
async fn recv_item(
    s: &mut TcpStream,
    first: Message,
    lim: &RecvLimits,
    progress: Option<&ProgressFn>,
    depth: u32,
) -> Result<Item> {
    let (d, t) = xfer::parse_descriptor(first, lim)?;
    recv_item_from(s, d, t, lim, progress, depth).await
}

fn recv_item_from<'a>(
    s: &'a mut TcpStream,
    d: TensorDescriptor,
    _t: Tail,
    lim: &'a RecvLimits,
    progress: Option<&'a ProgressFn>,
    depth: u32,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Item>> + Send + 'a>> {
    Box::pin(async move {
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
        let head = xfer::recv_tensor_body(s, d, lim, progress).await?;
        let Some(n) = members else {
            return Ok(Item::Tensor(head));
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
            head,
            members: Vec::with_capacity(n.min(1024) as usize),
        };
        for _ in 0..n {
            let m = expect_msg(s, lim).await?;
            let (d, t) = xfer::parse_descriptor(m, lim)?;
            c.members
                .push(recv_item_from(s, d, t, lim, progress, depth + 1).await?);
        }
        xfer::check_composite(&c)?;
        Ok(Item::Composite(c))
    })
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
    pub fn server_hello(&self) -> &Hello {
        self.inner.server_hello()
    }
}
