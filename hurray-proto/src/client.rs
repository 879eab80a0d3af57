//! The client's side of a connection (B.7–B.17), sans-io.
//!
//! [`Client::new`] queues the `CLIENT_HELLO`. Feed every [`FrameEvent`] of the framer
//! from [`Client::framer`] to [`Client::on_frame`], write out every
//! [`Client::poll_transmit`], and take [`Client::poll_event`]s. After
//! [`ClientEvent::Connected`], [`Client::get`] and [`Client::put`] open transport
//! streams; their results come back as events naming the stream.

use crate::error::{ErrorCode, ProtoError, Result};
use crate::framer::{FrameEvent, Framer, Step};
use crate::message::{
    request_flags, DescriptorMsg, Hello, LayoutEntry, Message, PutMsg, TensorRequest,
    PROTOCOL_VERSION,
};
use crate::negotiate::{self, MAX_SHARDS};
use crate::outbox::{unexpected, Batch, Closed, Outbox, Transmit};
use crate::receive::{io_err, ItemReceiver, ReceiveOptions};
use hurray_core::{
    CombineOp, CompositeHead, CompositionRule, Layout, Storage, SyncMode, TensorDescriptor,
};
use hurray_io::composite::CompositeChecker;
use hurray_io::{AlignedBuf, Buffer, Item, Tensor};
use std::collections::{HashMap, VecDeque};

/// Client settings.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Largest payload accepted (bytes), advertised in `CLIENT_HELLO`.
    pub max_message_size: u32,
    /// Layouts this client consumes, most preferred first (advertised).
    pub supported_layouts: Vec<LayoutEntry>,
    /// Devices accepted (B.10 rule 6); this implementation places on CPU only.
    pub supported_devices: Vec<u8>,
    /// Memory classes accepted; `None` = absent (STANDARD only).
    pub supported_memory_classes: Option<Vec<u8>>,
    /// Limits on what a response may bring.
    pub receive: ReceiveOptions,
    /// Cap on the data bytes of one `TENSOR_DATA` frame this client sends (PUT).
    pub max_frame_bytes: u64,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            max_message_size: 16 << 20,
            supported_layouts: (0x01..=0x0B).map(LayoutEntry::Tag).collect(),
            supported_devices: vec![negotiate::DEVICE_CPU],
            supported_memory_classes: None,
            receive: ReceiveOptions::default(),
            max_frame_bytes: 4 << 20,
        }
    }
}

impl ClientConfig {
    /// The `CLIENT_HELLO` this configuration sends.
    pub fn hello(&self) -> Hello {
        Hello {
            protocol_version: PROTOCOL_VERSION,
            max_message_size: self.max_message_size,
            capability_flags: 0,
            supported_layouts: self.supported_layouts.clone(),
            supported_devices: self.supported_devices.clone(),
            supported_memory_classes: self.supported_memory_classes.clone(),
        }
    }
}

/// Options of one GET (`TENSOR_REQUEST`, B.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetOptions {
    /// Most preferred first; empty = whatever is stored.
    pub preferred_layouts: Vec<LayoutEntry>,
    /// Set `ALLOW_TRANSCODE`.
    pub allow_transcode: bool,
    /// Set `PARALLEL_OK` (used only when the server advertised `PARALLEL_STREAMS`);
    /// reserves stream ids `s .. s + MAX_SHARDS`.
    pub parallel: bool,
    /// `min_alignment` (power of two).
    pub min_alignment: u32,
    /// `preferred_device`.
    pub preferred_device: u8,
}

impl Default for GetOptions {
    fn default() -> Self {
        GetOptions {
            preferred_layouts: Vec::new(),
            allow_transcode: false,
            parallel: false,
            min_alignment: 64,
            preferred_device: negotiate::DEVICE_CPU,
        }
    }
}

/// What the client tells its owner.
#[derive(Debug)]
pub enum ClientEvent {
    /// `SERVER_HELLO` accepted.
    Connected {
        /// The server's hello.
        server: Hello,
    },
    /// A GET completed (a parallel one reassembled).
    Got {
        /// The request's stream.
        stream_id: u32,
        /// The tensor or composite.
        item: Item,
    },
    /// `TENSOR_PUT_ACK`.
    PutAcked {
        /// The PUT's stream.
        stream_id: u32,
    },
    /// A GET or PUT ended in an `ERROR` (B.16); the stream is closed.
    Failed {
        /// The request's stream.
        stream_id: u32,
        /// The error.
        error: ProtoError,
        /// `true`: this client sent it; `false`: the server did.
        sent: bool,
    },
    /// A `PONG`.
    Pong {
        /// Its stream id.
        stream_id: u32,
        /// Its payload.
        payload: Vec<u8>,
    },
    /// The connection failed (hello); the last transmit is
    /// [`Transmit::CloseConnection`] when this client sent the error.
    ConnectionFailed {
        /// Why.
        error: ProtoError,
        /// `true`: this client sent it.
        sent: bool,
    },
}

struct ShardSet {
    n: u32,
    rx: Vec<Option<ItemReceiver>>,
    done: Vec<Option<Tensor>>,
    seen: u32,
    checker: Option<CompositeChecker>,
    layout_tag: u8,
}

enum CStream {
    Get(Box<ItemReceiver>),
    Parallel(Box<ShardSet>),
    ShardOf(u32),
    Put,
}

#[derive(PartialEq, Eq)]
enum State {
    AwaitHello,
    Ready,
    Closed,
}

/// One client connection.
pub struct Client {
    cfg: ClientConfig,
    state: State,
    server: Option<Hello>,
    next_id: u32,
    streams: HashMap<u32, CStream>,
    closed: Closed,
    out: Outbox,
    events: VecDeque<ClientEvent>,
    /// The in-place receive path: a split framer, and the stream and byte count of
    /// the `TENSOR_DATA` frame whose bytes are being read into a tensor buffer.
    rxf: Framer,
    direct: Option<(u32, u64)>,
}

impl Client {
    /// A connection with its `CLIENT_HELLO` queued (on stream 1; hellos are
    /// connection-level, S8).
    pub fn new(cfg: ClientConfig) -> Client {
        let mut out = Outbox::default();
        out.push_msg(1, &Message::ClientHello(cfg.hello()));
        let rxf = Framer::split(cfg.max_message_size);
        Client {
            cfg,
            state: State::AwaitHello,
            server: None,
            next_id: 1,
            streams: HashMap::new(),
            closed: Closed::default(),
            out,
            events: VecDeque::new(),
            rxf,
            direct: None,
        }
    }

    /// A framer bounded by this client's `max_message_size`, for owners that feed
    /// [`Client::on_frame`] themselves. Prefer [`Client::read_buf`] /
    /// [`Client::advance`], which save a copy of every data byte.
    pub fn framer(&self) -> Framer {
        Framer::new(self.cfg.max_message_size)
    }

    /// Where to read the next bytes from the connection (never empty). While a
    /// `TENSOR_DATA` frame streams in, this is the destination tensor buffer itself,
    /// so data bytes are written once, by the read. Follow each read with
    /// [`Client::advance`]; do not mix with an external framer.
    pub fn read_buf(&mut self) -> &mut [u8] {
        let direct = match self.direct {
            Some((sid, _)) => self
                .rx_mut(sid)
                .is_some_and(|rx| !rx.frame_slot().is_empty()),
            None => false,
        };
        if direct {
            let sid = self.direct.expect("checked").0;
            return self.rx_mut(sid).expect("checked").frame_slot();
        }
        self.rxf.read_buf()
    }

    /// Records that `n` bytes were read into [`Client::read_buf`] and processes them
    /// (events and transmits may follow).
    ///
    /// # Panics
    /// When `n` exceeds the length of the slice `read_buf` returned.
    pub fn advance(&mut self, n: usize) {
        if let Some((sid, left)) = self.direct {
            if let Some(rx) = self.rx_mut(sid) {
                rx.commit(n);
                self.rxf.discard(n);
                let left = left - n as u64;
                self.direct = (left > 0).then_some((sid, left));
                return;
            }
            // The stream failed meanwhile: the framer discards the rest.
            self.direct = None;
        }
        match self.rxf.advance_step(n) {
            None => {}
            Some(Step::Event(e)) => self.on_frame(e),
            Some(Step::DataHead { header, offset }) => {
                let sid = header.stream_id;
                let len = u64::from(header.payload_length) - 8;
                if self.state != State::Ready {
                    let e = ProtoError::invalid("B.7: TENSOR_DATA before SERVER_HELLO");
                    return self.fail_connection(sid, e);
                }
                if !self.streams.contains_key(&sid) {
                    // As on_ready does for any message on a stream not open.
                    return self.on_ready(
                        sid,
                        Message::TensorData {
                            offset,
                            data: Vec::new(),
                        },
                    );
                }
                let r = match self.rx_mut(sid) {
                    Some(rx) => rx.begin_frame(offset, len),
                    None => Err(ProtoError::invalid(format!(
                        "B.11: TENSOR_DATA on stream {sid} before its TENSOR_DESCRIPTOR"
                    ))),
                };
                match r {
                    Ok(()) => self.direct = Some((sid, len)),
                    Err(e) => self.fail(sid, e, true),
                }
            }
        }
    }

    /// The receiver data frames on `sid` go to (a GET, or one shard of a parallel one).
    fn rx_mut(&mut self, sid: u32) -> Option<&mut ItemReceiver> {
        let base = match self.streams.get(&sid)? {
            CStream::ShardOf(b) => *b,
            _ => sid,
        };
        match self.streams.get_mut(&base)? {
            CStream::Get(rx) => Some(rx),
            CStream::Parallel(set) => set.rx.get_mut((sid - base) as usize)?.as_mut(),
            CStream::ShardOf(_) | CStream::Put => None,
        }
    }

    /// The server's hello once connected.
    pub fn server_hello(&self) -> Option<&Hello> {
        self.server.as_ref()
    }

    /// True once the handshake completed and the connection has not failed.
    pub fn is_connected(&self) -> bool {
        self.state == State::Ready
    }

    /// True when the in-place receive path ([`Client::read_buf`]) is between
    /// messages: an end of input here is clean; elsewhere the peer stopped mid-message.
    pub fn between_messages(&self) -> bool {
        self.direct.is_none() && self.rxf.is_idle()
    }

    /// True after a connection-level failure.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Open GET/PUT streams.
    pub fn open_streams(&self) -> usize {
        self.streams
            .values()
            .filter(|s| !matches!(s, CStream::ShardOf(_)))
            .count()
    }

    /// The next thing to write.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.pop()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    fn ready(&self) -> Result<&Hello> {
        match (&self.state, &self.server) {
            (State::Ready, Some(h)) => Ok(h),
            _ => Err(ProtoError::invalid(
                "B.7: no request before SERVER_HELLO (or after the connection failed)",
            )),
        }
    }

    fn alloc_ids(&mut self, n: u32) -> u32 {
        // Stream ids are never reused on a connection; skip 0 on wrap-around.
        if self.next_id.checked_add(n).is_none() {
            self.next_id = 1;
        }
        let s = self.next_id;
        self.next_id += n;
        s
    }

    /// Sends a `TENSOR_REQUEST` for `key`; returns its stream id.
    ///
    /// Errors: `INVALID_MESSAGE` before the handshake completed, for a `min_alignment`
    /// that is not a power of two, or a request that does not fit the server's
    /// `max_message_size`.
    pub fn get(&mut self, key: &str, opts: &GetOptions) -> Result<u32> {
        let server = self.ready()?;
        let parallel =
            opts.parallel && server.capability_flags & crate::capability::PARALLEL_STREAMS != 0;
        if !opts.min_alignment.is_power_of_two() {
            return Err(ProtoError::invalid(format!(
                "B.8: min_alignment {} is not a power of two",
                opts.min_alignment
            )));
        }
        let m = Message::TensorRequest(TensorRequest {
            tensor_key: key.to_owned(),
            preferred_layouts: opts.preferred_layouts.clone(),
            preferred_device: opts.preferred_device,
            min_alignment: opts.min_alignment,
            request_flags: if opts.allow_transcode {
                request_flags::ALLOW_TRANSCODE
            } else {
                0
            } | if parallel {
                request_flags::PARALLEL_OK
            } else {
                0
            },
        });
        let peer_max = server.max_message_size;
        let sid = self.alloc_ids(if parallel { MAX_SHARDS } else { 1 });
        let len = m.encode(sid)?.len() - crate::HEADER_LEN;
        if len as u64 > u64::from(peer_max) {
            return Err(ProtoError::new(
                ErrorCode::MessageTooLarge,
                format!("B.17: the {len}-byte request does not fit the server's max_message_size {peer_max}"),
            ));
        }
        self.out.push_msg(sid, &m);
        if parallel {
            self.streams.insert(
                sid,
                CStream::Parallel(Box::new(ShardSet {
                    n: 0,
                    rx: Vec::new(),
                    done: Vec::new(),
                    seen: 0,
                    checker: None,
                    layout_tag: 0,
                })),
            );
            for i in 1..MAX_SHARDS {
                self.streams.insert(sid + i, CStream::ShardOf(sid));
            }
        } else {
            self.streams.insert(
                sid,
                CStream::Get(Box::new(ItemReceiver::new(self.receive_opts()))),
            );
        }
        Ok(sid)
    }

    fn receive_opts(&self) -> ReceiveOptions {
        let mut o = self.cfg.receive.clone();
        o.devices = self.cfg.supported_devices.clone();
        o.memory_classes = self.cfg.hello().memory_classes();
        o
    }

    /// Sends `item` under `key` (B.15); returns the stream id. A composite goes as
    /// `TENSOR_PUT` of its head (no frames) + `TENSOR_DATA_END`, then each member
    /// pre-order as `TENSOR_DESCRIPTOR / TENSOR_DATA* / TENSOR_DATA_END` (this
    /// implementation's reading of S6); one ACK covers the whole item. Data frames
    /// point into the item's buffers (no copy).
    ///
    /// Errors: `INVALID_MESSAGE` before the handshake, for a buffer whose `sync_mode`
    /// is not `0x00` (A.5), an invalid composite (A.3: checked before any byte is
    /// queued), or `MESSAGE_TOO_LARGE` when the PUT header or a descriptor does not fit
    /// the server's `max_message_size`.
    pub fn put(&mut self, key: &str, item: &Item) -> Result<u32> {
        let peer_max = self.ready()?.max_message_size;
        match item {
            Item::Composite(c) => {
                hurray_io::composite::validate(
                    c,
                    crate::receive::MAX_COMPOSITE_DEPTH as u32,
                    u32::MAX,
                )
                .map_err(io_err)?;
            }
            // A head alone would leave the server waiting for members that never
            // come: refused before anything is sent.
            Item::Tensor(t)
                if matches!(t.descriptor().layout, hurray_core::Layout::CompositeHead(_)) =>
            {
                return Err(ProtoError::invalid(
                    "A.4: the tensor is a composite head (layout 0x0b); put the whole composite (its head and members) as one item",
                ));
            }
            Item::Tensor(_) => {}
        }
        let mut first = true;
        let mut b = Batch::default();
        let sid = self.alloc_ids(1);
        let mut emit = |t: &Tensor, b: &mut Batch| -> Result<()> {
            let d = t.descriptor();
            if let Some(i) = d
                .buffers
                .iter()
                .position(|h| h.sync_mode != SyncMode::ProducerSynced)
            {
                return Err(ProtoError::invalid(format!(
                    "A.5: buffer {i} must be producer-synced (sync_mode 0x00) to cross machines"
                )));
            }
            let bytes = d.encode().map_err(|e| ProtoError::invalid(e.to_string()))?;
            let total: u64 = d.buffers.iter().map(|h| h.byte_size).sum();
            let m = if first {
                first = false;
                Message::TensorPut(PutMsg {
                    tensor_key: key.to_owned(),
                    descriptor: bytes,
                    total_data_bytes: total,
                })
            } else {
                Message::TensorDescriptor(DescriptorMsg {
                    descriptor: bytes,
                    total_data_bytes: total,
                    shard_index: 0,
                    total_shards: 1,
                })
            };
            let len = m.encode(sid)?.len() - crate::HEADER_LEN;
            if len as u64 > u64::from(peer_max) {
                return Err(ProtoError::new(ErrorCode::MessageTooLarge, format!("B.17: {} of {len} bytes does not fit the server's max_message_size {peer_max}", m.name())));
            }
            b.msg(sid, &m)?;
            let mut at = 0u64;
            for buf in t.buffers() {
                b.frames(
                    sid,
                    buf.clone(),
                    0..buf.len(),
                    at,
                    peer_max,
                    self.cfg.max_frame_bytes,
                )?;
                at += buf.len() as u64;
            }
            b.msg(sid, &Message::TensorDataEnd)
        };
        fn walk(
            it: &Item,
            b: &mut Batch,
            f: &mut dyn FnMut(&Tensor, &mut Batch) -> Result<()>,
        ) -> Result<()> {
            match it {
                Item::Tensor(t) => f(t, b),
                Item::Composite(c) => {
                    f(&c.head, b)?;
                    c.members.iter().try_for_each(|m| walk(m, b, f))
                }
            }
        }
        walk(item, &mut b, &mut emit)?;
        self.out.push_batch(b);
        self.streams.insert(sid, CStream::Put);
        Ok(sid)
    }

    /// Sends a `PING` (empty payload, S9) on a fresh stream id; returns it.
    pub fn ping(&mut self) -> u32 {
        let sid = self.alloc_ids(1);
        self.out.push_msg(sid, &Message::Ping(Vec::new()));
        sid
    }

    /// Abandons the GET or PUT on `stream_id`: sends `ERROR` and closes the stream.
    pub fn cancel(&mut self, stream_id: u32, error: ProtoError) {
        if self.streams.contains_key(&stream_id) {
            self.fail(stream_id, error, true);
        }
    }

    fn fail_connection(&mut self, sid: u32, e: ProtoError) {
        self.out.error(sid, &e);
        self.out.close();
        self.state = State::Closed;
        self.streams.clear();
        self.events.push_back(ClientEvent::ConnectionFailed {
            error: e,
            sent: true,
        });
    }

    /// Closes `sid` (and, for a parallel transfer, all its shard streams), sending
    /// `ERROR` on each still-open one when `send`.
    fn fail(&mut self, sid: u32, e: ProtoError, send: bool) {
        let base = match self.streams.get(&sid) {
            Some(CStream::ShardOf(b)) => *b,
            _ => sid,
        };
        let mut ids = vec![base];
        if let Some(CStream::Parallel(set)) = self.streams.get(&base) {
            let finished: Vec<bool> = (0..MAX_SHARDS as usize)
                .map(|i| set.done.get(i).is_some_and(Option::is_some))
                .collect();
            ids = (0..MAX_SHARDS)
                .filter(|&i| i == 0 || !finished[i as usize] && i < set.n.max(1))
                .map(|i| base + i)
                .collect();
            for i in 1..MAX_SHARDS {
                self.streams.remove(&(base + i));
                self.closed.insert(base + i);
            }
        }
        self.streams.remove(&base);
        self.closed.insert(base);
        for id in ids {
            self.out.cancel(id);
            if send || id != sid {
                self.out.error(id, &e);
            }
        }
        self.events.push_back(ClientEvent::Failed {
            stream_id: base,
            error: e,
            sent: send,
        });
    }

    /// Feeds one framer event.
    pub fn on_frame(&mut self, ev: FrameEvent) {
        match ev {
            FrameEvent::TooLarge(h) => {
                let e = FrameEvent::too_large_error(&h, self.cfg.max_message_size);
                match self.state {
                    State::AwaitHello => self.fail_connection(h.stream_id, e),
                    State::Ready if self.streams.contains_key(&h.stream_id) => {
                        self.fail(h.stream_id, e, true)
                    }
                    State::Ready if self.closed.contains(h.stream_id) => {}
                    State::Ready => self.out.error(h.stream_id, &e),
                    State::Closed => {}
                }
            }
            FrameEvent::Frame(f) => {
                let sid = f.header.stream_id;
                match f.decode() {
                    Ok(m) => self.on_message(sid, m),
                    Err(e) => match self.state {
                        State::AwaitHello => self.fail_connection(sid, e),
                        State::Ready if self.streams.contains_key(&sid) => self.fail(sid, e, true),
                        State::Ready if self.closed.contains(sid) => {}
                        State::Ready => self.out.error(sid, &e),
                        State::Closed => {}
                    },
                }
            }
        }
    }

    /// Feeds one decoded message that arrived on `sid`.
    pub fn on_message(&mut self, sid: u32, m: Message) {
        match self.state {
            State::Closed => {}
            State::AwaitHello => match m {
                Message::ServerHello(h) => {
                    match negotiate::check_server_hello(&h, &self.cfg.hello()) {
                        Ok(()) => {
                            self.state = State::Ready;
                            self.server = Some(h.clone());
                            self.events.push_back(ClientEvent::Connected { server: h });
                        }
                        Err(e) => self.fail_connection(sid, e),
                    }
                }
                Message::Error { code, message } => {
                    // B.7 rule 3: the server refused the hello and closes the connection.
                    self.state = State::Closed;
                    self.events.push_back(ClientEvent::ConnectionFailed {
                        error: ProtoError::new(code, message),
                        sent: false,
                    });
                }
                m => {
                    let e = ProtoError::invalid(format!(
                        "B.7 rule 2: the server's first message must be SERVER_HELLO, not {}",
                        m.name()
                    ));
                    self.fail_connection(sid, e)
                }
            },
            State::Ready => self.on_ready(sid, m),
        }
    }

    fn on_ready(&mut self, sid: u32, m: Message) {
        match m {
            Message::Ping(p) => return self.out.push_msg(sid, &Message::Pong(p)),
            Message::Pong(payload) => {
                return self.events.push_back(ClientEvent::Pong {
                    stream_id: sid,
                    payload,
                })
            }
            _ => {}
        }
        if !self.streams.contains_key(&sid) {
            if !(self.closed.contains(sid)
                || sid < self.next_id && sid != 0
                || matches!(m, Message::Error { .. }))
            {
                self.out.error(
                    sid,
                    &ProtoError::invalid(format!(
                        "B.2: {} on stream {sid}, which this client never opened",
                        m.name()
                    )),
                );
            }
            return;
        }
        if let Message::Error { code, message } = m {
            return self.fail(sid, ProtoError::new(code, message), false);
        }
        if let Err(e) = self.stream_msg(sid, m) {
            self.fail(sid, e, true);
        }
    }

    fn stream_msg(&mut self, sid: u32, m: Message) -> Result<()> {
        let rx_opts = self.receive_opts();
        let base = match self.streams.get(&sid) {
            Some(CStream::ShardOf(b)) => *b,
            _ => sid,
        };
        match (self.streams.get_mut(&base), m) {
            (Some(CStream::Put), Message::TensorPutAck) => {
                self.streams.remove(&sid);
                self.closed.insert(sid);
                self.events
                    .push_back(ClientEvent::PutAcked { stream_id: sid });
                Ok(())
            }
            (Some(CStream::Get(rx)), m) => {
                if let Message::TensorDescriptor(d) = &m {
                    if (d.shard_index, d.total_shards) != (0, 1) {
                        return Err(ProtoError::new(
                            ErrorCode::ShardMismatch,
                            "B.13: shards without PARALLEL_OK",
                        ));
                    }
                }
                if let Some(item) = feed(rx, sid, m, &mut self.out)? {
                    self.streams.remove(&sid);
                    self.closed.insert(sid);
                    self.events.push_back(ClientEvent::Got {
                        stream_id: sid,
                        item,
                    });
                }
                Ok(())
            }
            (Some(CStream::Parallel(set)), m) => {
                let k = sid - base;
                if let Message::TensorDescriptor(d) = &m {
                    if set.n == 0 && k == 0 && d.total_shards == 1 && d.shard_index == 0 {
                        // The server chose not to shard: a plain response on the base stream.
                        for i in 1..MAX_SHARDS {
                            self.streams.remove(&(base + i));
                        }
                        let mut rx = ItemReceiver::new(rx_opts);
                        rx.descriptor(&d.descriptor, d.total_data_bytes)?;
                        self.streams.insert(base, CStream::Get(Box::new(rx)));
                        return Ok(());
                    }
                    shard_descriptor(set, k, d, rx_opts)?;
                    return Ok(());
                }
                let Some(Some(rx)) = set.rx.get_mut(k as usize) else {
                    return Err(unexpected(&m, "before this shard's TENSOR_DESCRIPTOR"));
                };
                if let Some(item) = feed(rx, sid, m, &mut self.out)? {
                    let Item::Tensor(t) = item else {
                        unreachable!("shards are plain tensors")
                    };
                    set.done[k as usize] = Some(t);
                    set.rx[k as usize] = None;
                    if set.seen == set.n && set.done.iter().all(Option::is_some) {
                        let parts: Vec<Tensor> = set
                            .done
                            .iter_mut()
                            .map(|t| t.take().expect("all done"))
                            .collect();
                        let item = reassemble(parts)?;
                        for i in 0..MAX_SHARDS {
                            self.streams.remove(&(base + i));
                            self.closed.insert(base + i);
                        }
                        self.events.push_back(ClientEvent::Got {
                            stream_id: base,
                            item: Item::Tensor(item),
                        });
                    }
                }
                Ok(())
            }
            (_, m) => Err(unexpected(&m, "on this stream")),
        }
    }
}

/// Feeds one response message to a receiver; `Some(item)` when complete.
fn feed(rx: &mut ItemReceiver, sid: u32, m: Message, out: &mut Outbox) -> Result<Option<Item>> {
    match m {
        Message::TensorDescriptor(d) => {
            rx.descriptor(&d.descriptor, d.total_data_bytes)?;
            Ok(None)
        }
        Message::TensorData { offset, data } => rx.data(offset, &data).map(|()| None),
        Message::TensorDataEnd => rx.end(),
        Message::RdmaRegister(_) if rx.at_data_start() => {
            // B.14/S4: not agreed; ERROR in place of RDMA_READY, stream stays open.
            out.error(
                sid,
                &ProtoError::invalid(
                    "B.14: RDMA_DATA_PLANE was not agreed; send TENSOR_DATA frames",
                ),
            );
            Ok(None)
        }
        Message::Unknown { message_type, .. } | Message::Private { message_type, .. } => {
            Err(ProtoError::invalid(format!(
                "B.4: unrecognised message_type 0x{message_type:08X}"
            )))
        }
        m => Err(unexpected(&m, "in a response")),
    }
}

fn mismatch(detail: impl Into<String>) -> ProtoError {
    ProtoError::new(ErrorCode::ShardMismatch, detail)
}

/// B.13: a shard's descriptor on shard stream `k`.
fn shard_descriptor(
    set: &mut ShardSet,
    k: u32,
    d: &DescriptorMsg,
    opts: ReceiveOptions,
) -> Result<()> {
    if set.n == 0 {
        if d.total_shards == 0 || d.total_shards > MAX_SHARDS {
            return Err(mismatch(format!(
                "B.13: total_shards {} outside 1..={MAX_SHARDS}",
                d.total_shards
            )));
        }
        set.n = d.total_shards;
        set.rx = (0..set.n).map(|_| None).collect();
        set.done = (0..set.n).map(|_| None).collect();
    }
    if d.total_shards != set.n
        || d.shard_index != k
        || k >= set.n
        || set.rx[k as usize].is_some()
        || set.done[k as usize].is_some()
    {
        return Err(mismatch(format!(
            "B.13: shard_index {} / total_shards {} on shard stream {k} (expected index {k} of {})",
            d.shard_index, d.total_shards, set.n
        )));
    }
    let mut rx = ItemReceiver::new(opts);
    let desc = rx.descriptor(&d.descriptor, d.total_data_bytes)?.clone();
    let Some(shard) = &desc.shard else {
        return Err(mismatch(
            "B.13: a shard descriptor needs a shard section (HAS_SHARD)",
        ));
    };
    if matches!(desc.layout, Layout::CompositeHead(_)) {
        return Err(mismatch("B.13: a shard cannot be a composite head"));
    }
    if set.checker.is_none() {
        let head = TensorDescriptor {
            shape: shard.parent_shape.clone(),
            layout: Layout::CompositeHead(CompositeHead {
                rule: CompositionRule::Partition,
                combine_op: CombineOp::None,
                member_count: set.n,
            }),
            buffers: Vec::new(),
            byte_offset: 0,
            quantization: None,
            shard: None,
            statistics: None,
            extension_type: None,
            composite_member: None,
            ..desc.clone()
        };
        set.checker =
            Some(CompositeChecker::new(&head, 0, MAX_SHARDS).map_err(|e| mismatch(e.to_string()))?);
        set.layout_tag = desc.layout.tag();
    }
    if desc.layout.tag() != set.layout_tag {
        return Err(mismatch("B.13: shards differ in layout tag"));
    }
    let c = set.checker.as_mut().expect("set");
    c.member(&desc, 0)
        .map_err(|e| mismatch(format!("B.13: {e}")))?;
    set.seen += 1;
    set.rx[k as usize] = Some(rx);
    if set.seen == set.n {
        // All descriptors are in: the boxes must cover parent_shape exactly.
        c.close(0).map_err(|e| mismatch(format!("B.13: {e}")))?;
    }
    Ok(())
}

/// B.13 reassembly: each shard at its `shard_offset` in a buffer sized for
/// `parent_shape`. Dense row- or column-major shards of a whole-byte type, one
/// buffer, `byte_offset` 0.
pub fn reassemble(parts: Vec<Tensor>) -> Result<Tensor> {
    let first = parts
        .first()
        .ok_or_else(|| mismatch("no shards"))?
        .descriptor()
        .clone();
    let parent = first
        .shard
        .clone()
        .ok_or_else(|| mismatch("no shard section"))?
        .parent_shape;
    if hurray_core::has_dynamic(&parent)
        || parts
            .iter()
            .any(|t| hurray_core::has_dynamic(&t.descriptor().shape))
    {
        return Err(mismatch(
            "B.13: shards with dynamic dimensions cannot be reassembled",
        ));
    }
    let col = match first.layout {
        Layout::RowMajor => false,
        Layout::ColumnMajor => true,
        _ => {
            return Err(mismatch(format!(
                "B.13: cannot reassemble {} shards",
                first.layout.name()
            )))
        }
    };
    let Some(Storage::Bytes(w)) = first.storage() else {
        return Err(mismatch("B.13: reassembly needs a whole-byte element type"));
    };
    let w = w as usize;
    let count = hurray_core::element_count(&parent).map_err(|e| mismatch(e.to_string()))?;
    let total = count
        .checked_mul(w as u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| mismatch("size overflow"))?;
    let mut out = AlignedBuf::zeroed(total)
        .ok_or_else(|| ProtoError::new(crate::receive::LIMIT_EXCEEDED, "cannot allocate"))?;
    // View column-major as row-major over the reversed dimensions.
    let order = |v: &[u64]| -> Vec<usize> {
        let mut v: Vec<usize> = v.iter().map(|&x| x as usize).collect();
        if col {
            v.reverse();
        }
        v
    };
    let p = order(&parent);
    let r = p.len();
    let mut pstride = vec![1usize; r];
    for k in (0..r.saturating_sub(1)).rev() {
        pstride[k] = pstride[k + 1] * p[k + 1];
    }
    for t in &parts {
        let d = t.descriptor();
        if d.buffers.len() != 1
            || d.byte_offset != 0
            || d.layout.tag() != first.layout.tag()
            || d.quantization.is_some()
        {
            return Err(mismatch(
                "B.13: shards must be dense, one buffer, byte_offset 0",
            ));
        }
        let s = d.shard.as_ref().expect("checked");
        let (bs, off) = (order(&d.shape), order(&s.offset));
        let src = t.buffers()[0].as_slice();
        if r == 0 || bs.contains(&0) {
            continue;
        }
        let run = bs[r - 1] * w;
        let rows: usize = bs[..r - 1].iter().product();
        let mut idx = vec![0usize; r - 1];
        let dst = out.as_mut_slice();
        for row in 0..rows {
            let mut at = off[r - 1];
            for k in 0..r - 1 {
                at += (off[k] + idx[k]) * pstride[k];
            }
            dst[at * w..at * w + run].copy_from_slice(&src[row * run..row * run + run]);
            for k in (0..r - 1).rev() {
                idx[k] += 1;
                if idx[k] < bs[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
    }
    let mut d = first;
    d.shape = parent;
    d.shard = None;
    d.statistics = None;
    d.buffers[0].byte_size = total as u64;
    Tensor::new(d, vec![Buffer::from_aligned(out)]).map_err(|e| mismatch(e.to_string()))
}
