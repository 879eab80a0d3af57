//! The server's side of a connection (B.7–B.17), sans-io.
//!
//! Drive it with [`Server::on_frame`] for every [`FrameEvent`] of a [`Framer`]
//! built by [`Server::framer`]; take [`Server::poll_event`]s (requests, PUTs) and answer
//! them with [`Server::respond`] / [`Server::put_ack`] / [`Server::reject`]; write out
//! every [`Server::poll_transmit`].
//!
//! [`Framer`]: crate::Framer

use crate::error::{ErrorCode, ProtoError, Result};
use crate::framer::{FrameEvent, Framer, Step};
use crate::message::{
    capability, request_flags, DescriptorMsg, Hello, LayoutEntry, Message, TensorRequest,
    PROTOCOL_VERSION,
};
use crate::negotiate::{self, LayoutFallback, Selection, MAX_SHARDS};
use crate::outbox::{unexpected, Batch, Closed, Outbox, Transmit};
use crate::receive::{ItemReceiver, ReceiveOptions};
use crate::transcode;
use hurray_core::{
    BufferHandle, DeviceTag, Layout, MemoryClass, Shard, Storage, SyncMode, TensorDescriptor,
};
use hurray_io::{Buffer, Item};
use std::collections::{HashMap, VecDeque};

/// Largest `min_alignment` a request may ask for (bytes).
pub const MAX_MIN_ALIGNMENT: u32 = 4096;

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Largest payload accepted (bytes, header excluded), advertised in `SERVER_HELLO`.
    pub max_message_size: u32,
    /// Advertised [`capability`] bits: `TRANSCODING` and/or `PARALLEL_STREAMS` (RDMA
    /// bits are never advertised by this implementation and are masked off).
    pub capabilities: u64,
    /// Advertised producible layouts.
    pub supported_layouts: Vec<LayoutEntry>,
    /// Largest buffer a transcode may materialise (bytes, B.9).
    pub transcode_limit: u64,
    /// B.9 behaviour when a preference cannot be met (S10).
    pub layout_fallback: LayoutFallback,
    /// Cap on the data bytes of one `TENSOR_DATA` frame this server sends (also
    /// bounded by the client's `max_message_size - 8`).
    pub max_frame_bytes: u64,
    /// Parallel transfers: most shards (≤ [`MAX_SHARDS`]).
    pub max_shards: u32,
    /// Parallel transfers: smallest shard worth a stream (bytes).
    pub min_shard_bytes: u64,
    /// What a `TENSOR_PUT` may bring (device CPU only, size cap).
    pub put: ReceiveOptions,
    /// Most transport streams open at once on this connection (requests awaiting an
    /// answer + PUTs in progress); beyond it a new one is refused with
    /// [`LIMIT_EXCEEDED`](crate::LIMIT_EXCEEDED).
    pub max_open_streams: usize,
    /// Most PUT data bytes being received at once on this connection (sum over its
    /// open PUT streams); beyond it a PUT is refused with
    /// [`LIMIT_EXCEEDED`](crate::LIMIT_EXCEEDED) before any data is taken.
    pub max_put_inflight_bytes: u64,
    /// Reject requests with reserved `request_flags` bits set (`INVALID_MESSAGE`,
    /// S16) instead of ignoring them.
    pub strict_reserved_bits: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_message_size: 16 << 20,
            capabilities: capability::TRANSCODING | capability::PARALLEL_STREAMS,
            supported_layouts: (0x01..=0x0B).map(LayoutEntry::Tag).collect(),
            transcode_limit: 256 << 20,
            layout_fallback: LayoutFallback::Native,
            max_frame_bytes: 4 << 20,
            max_shards: 4,
            min_shard_bytes: 8 << 20,
            put: ReceiveOptions::default(),
            max_open_streams: 256,
            max_put_inflight_bytes: 1 << 30,
            strict_reserved_bits: true,
        }
    }
}

impl ServerConfig {
    /// The `SERVER_HELLO` this configuration advertises.
    pub fn hello(&self) -> Hello {
        Hello {
            protocol_version: PROTOCOL_VERSION,
            max_message_size: self.max_message_size,
            capability_flags: self.capabilities
                & (capability::TRANSCODING | capability::PARALLEL_STREAMS),
            supported_layouts: self.supported_layouts.clone(),
            supported_devices: vec![negotiate::DEVICE_CPU],
            supported_memory_classes: Some(vec![negotiate::MEMORY_STANDARD]),
        }
    }
}

/// What the server tells its owner.
#[derive(Debug)]
pub enum ServerEvent {
    /// The handshake completed.
    Connected {
        /// The client's hello.
        client: Hello,
    },
    /// A `TENSOR_REQUEST`: look the key up, then [`Server::respond`] or
    /// [`Server::reject`] (`UNKNOWN_TENSOR`).
    Request {
        /// Transport stream.
        stream_id: u32,
        /// The request.
        request: TensorRequest,
    },
    /// A `TENSOR_PUT` arrived and its descriptor passed: the owner may reserve store
    /// space now, or [`Server::reject`] before the data comes.
    PutStarted {
        /// Transport stream.
        stream_id: u32,
        /// Key.
        key: String,
        /// Data bytes announced.
        total_data_bytes: u64,
    },
    /// A complete, validated PUT: [`Server::put_ack`] or [`Server::reject`].
    Put {
        /// Transport stream.
        stream_id: u32,
        /// Key.
        key: String,
        /// The tensor or composite.
        item: Item,
    },
    /// A transport stream closed by an `ERROR` (B.16).
    StreamClosed {
        /// Transport stream.
        stream_id: u32,
        /// The error.
        error: ProtoError,
        /// `true`: this server sent it; `false`: the client did.
        sent: bool,
    },
    /// A `PONG` arrived.
    Pong {
        /// Stream id of the `PONG`.
        stream_id: u32,
    },
    /// The connection is over (hello failure): the last transmit is
    /// [`Transmit::CloseConnection`]; nothing more is accepted.
    ConnectionFailed {
        /// Why.
        error: ProtoError,
    },
}

enum SStream {
    Requested(TensorRequest),
    Put { key: String, rx: Box<ItemReceiver> },
    AwaitAck,
}

#[derive(PartialEq, Eq)]
enum State {
    AwaitHello,
    Ready,
    Closed,
}

/// One server connection.
pub struct Server {
    cfg: ServerConfig,
    state: State,
    client: Option<Hello>,
    streams: HashMap<u32, SStream>,
    closed: Closed,
    out: Outbox,
    events: VecDeque<ServerEvent>,
    /// The in-place receive path (PUT data straight into the tensor buffers).
    rxf: Framer,
    direct: Option<(u32, u64)>,
    draining: bool,
}

impl Server {
    /// A connection awaiting `CLIENT_HELLO`.
    pub fn new(cfg: ServerConfig) -> Server {
        let rxf = Framer::split(cfg.max_message_size);
        Server {
            cfg,
            state: State::AwaitHello,
            client: None,
            streams: HashMap::new(),
            closed: Closed::default(),
            out: Outbox::default(),
            events: VecDeque::new(),
            rxf,
            direct: None,
            draining: false,
        }
    }

    /// True after the handshake, until a connection-level failure.
    pub fn is_connected(&self) -> bool {
        self.state == State::Ready
    }

    /// True when the in-place receive path ([`Server::read_buf`]) is between
    /// messages: an end of input here is clean; elsewhere the peer stopped mid-message
    /// (what a mid-frame stall timeout looks at).
    pub fn between_messages(&self) -> bool {
        self.direct.is_none() && self.rxf.is_idle()
    }

    /// Graceful shutdown, first step: from now on every new `TENSOR_REQUEST` or
    /// `TENSOR_PUT` is refused with [`SHUTTING_DOWN`](crate::receive::SHUTTING_DOWN);
    /// transfers under way continue. [`Server::is_drained`] says when they are done.
    pub fn drain(&mut self) {
        self.draining = true;
    }

    /// True when no stream is open and nothing waits to be written.
    pub fn is_drained(&self) -> bool {
        self.streams.is_empty() && self.out.is_empty()
    }

    /// Graceful shutdown, last step (or the only one, to abort): every open stream and
    /// every stream with bytes still queued gets `ERROR` `error` (what is queued for it
    /// is dropped), then the connection closes ([`Transmit::CloseConnection`]).
    pub fn abort_all(&mut self, error: ProtoError) {
        if self.state == State::Closed {
            return;
        }
        let mut ids: Vec<u32> = self.streams.keys().copied().collect();
        ids.sort_unstable();
        for id in self.out.streams() {
            if id != 0 && !ids.contains(&id) {
                ids.push(id);
            }
        }
        for id in ids {
            self.streams.remove(&id);
            self.out.cancel(id);
            self.out.error(id, &error);
            self.closed.insert(id);
            self.events.push_back(ServerEvent::StreamClosed {
                stream_id: id,
                error: error.clone(),
                sent: true,
            });
        }
        self.out.close();
        self.state = State::Closed;
    }

    /// Where to read the next bytes from the connection (never empty). While a PUT's
    /// `TENSOR_DATA` frame streams in, this is the destination tensor buffer itself.
    /// Follow each read with [`Server::advance`]; do not mix with an external framer.
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

    /// Records that `n` bytes were read into [`Server::read_buf`] and processes them.
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
            self.direct = None;
        }
        match self.rxf.advance_step(n) {
            None => {}
            Some(Step::Event(e)) => self.on_frame(e),
            Some(Step::DataHead { header, offset }) => {
                let sid = header.stream_id;
                let len = u64::from(header.payload_length) - 8;
                if self.state != State::Ready || self.rx_mut(sid).is_none() {
                    // Whatever on_message does with a TENSOR_DATA here (fail the
                    // connection, the stream, or drop it); the framer discards the data.
                    return self.on_message(
                        sid,
                        Message::TensorData {
                            offset,
                            data: Vec::new(),
                        },
                    );
                }
                let r = self.rx_mut(sid).expect("checked").begin_frame(offset, len);
                match r {
                    Ok(()) => self.direct = Some((sid, len)),
                    Err(e) => self.fail_stream(sid, e),
                }
            }
        }
    }

    /// The receiver of the PUT on `sid`.
    fn rx_mut(&mut self, sid: u32) -> Option<&mut ItemReceiver> {
        match self.streams.get_mut(&sid)? {
            SStream::Put { rx, .. } => Some(rx),
            _ => None,
        }
    }

    /// A framer bounded by this server's `max_message_size`.
    pub fn framer(&self) -> Framer {
        Framer::new(self.cfg.max_message_size)
    }

    /// The client's hello once connected.
    pub fn client_hello(&self) -> Option<&Hello> {
        self.client.as_ref()
    }

    /// True after a connection-level failure.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Streams currently open (requests awaiting an answer, PUTs in progress).
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// The next thing to write, in order.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.pop()
    }

    /// True when nothing waits to be written.
    pub fn transmit_idle(&self) -> bool {
        self.out.is_empty()
    }

    /// The next event for the owner.
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    fn fail_connection(&mut self, sid: u32, e: ProtoError) {
        self.out.error(sid, &e);
        self.out.close();
        self.state = State::Closed;
        self.streams.clear();
        self.events
            .push_back(ServerEvent::ConnectionFailed { error: e });
    }

    fn fail_stream(&mut self, sid: u32, e: ProtoError) {
        self.streams.remove(&sid);
        self.out.cancel(sid);
        self.out.error(sid, &e);
        self.closed.insert(sid);
        self.events.push_back(ServerEvent::StreamClosed {
            stream_id: sid,
            error: e,
            sent: true,
        });
    }

    /// Feeds one framer event.
    pub fn on_frame(&mut self, ev: FrameEvent) {
        match ev {
            FrameEvent::TooLarge(h) => {
                let e = FrameEvent::too_large_error(&h, self.cfg.max_message_size);
                match self.state {
                    State::AwaitHello => self.fail_connection(h.stream_id, e),
                    State::Ready if self.closed.contains(h.stream_id) => {}
                    State::Ready => self.fail_stream(h.stream_id, e),
                    State::Closed => {}
                }
            }
            FrameEvent::Frame(f) => {
                let sid = f.header.stream_id;
                match f.decode() {
                    Ok(m) => self.on_message(sid, m),
                    Err(e) => match self.state {
                        State::AwaitHello => self.fail_connection(sid, e),
                        State::Ready if self.closed.contains(sid) => {}
                        State::Ready => self.fail_stream(sid, e),
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
                Message::ClientHello(h) => match negotiate::server_hello_for(&h, &self.cfg.hello())
                {
                    Ok(ours) => {
                        self.out.push_msg(sid, &Message::ServerHello(ours));
                        self.state = State::Ready;
                        self.client = Some(h.clone());
                        self.events.push_back(ServerEvent::Connected { client: h });
                    }
                    Err(e) => self.fail_connection(sid, e),
                },
                m => {
                    let e = ProtoError::invalid(format!(
                        "B.7 rule 1: the connection must open with CLIENT_HELLO, not {}",
                        m.name()
                    ));
                    self.fail_connection(sid, e)
                }
            },
            State::Ready => self.ready(sid, m),
        }
    }

    fn ready(&mut self, sid: u32, m: Message) {
        if let Message::Ping(p) = m {
            self.out.push_msg(sid, &Message::Pong(p));
            return;
        }
        if let Message::Pong(_) = m {
            self.events.push_back(ServerEvent::Pong { stream_id: sid });
            return;
        }
        if let Message::Error { code, message } = m {
            // B.16: the client closed the stream; drop what is still queued for it
            // (a response already handed to the outbox included).
            let open = self.streams.remove(&sid).is_some();
            let queued = self.out.cancel(sid);
            self.closed.insert(sid);
            if open || queued {
                self.events.push_back(ServerEvent::StreamClosed {
                    stream_id: sid,
                    error: ProtoError::new(code, message),
                    sent: false,
                });
            }
            return;
        }
        if sid == 0 {
            self.out.error(
                0,
                &ProtoError::invalid(format!("B.3: {} on reserved stream_id 0", m.name())),
            );
            return;
        }
        let opens = matches!(m, Message::TensorRequest(_) | Message::TensorPut(_));
        if self.closed.contains(sid) && !opens {
            return; // in flight when the stream closed
        }
        if opens && self.streams.contains_key(&sid) {
            let e = ProtoError::invalid(format!(
                "B.2: {} on stream {sid}, which is already in use",
                m.name()
            ));
            return self.fail_stream(sid, e);
        }
        if opens && self.draining {
            self.closed.remove(sid);
            let e = ProtoError::new(crate::receive::SHUTTING_DOWN, "the server is shutting down");
            return self.fail_stream(sid, e);
        }
        if opens && self.streams.len() >= self.cfg.max_open_streams {
            let e = ProtoError::new(
                crate::LIMIT_EXCEEDED,
                format!(
                    "{} streams are open on this connection, the limit",
                    self.streams.len()
                ),
            );
            self.closed.remove(sid);
            return self.fail_stream(sid, e);
        }
        let r = match m {
            Message::TensorRequest(r) => self.request(sid, r),
            Message::TensorPut(p) => {
                self.closed.remove(sid);
                if let Err(e) = self.check_inflight(p.total_data_bytes) {
                    return self.fail_stream(sid, e);
                }
                let mut rx = Box::new(ItemReceiver::new(self.cfg.put.clone()));
                match rx.descriptor(&p.descriptor, p.total_data_bytes) {
                    Ok(_) => {
                        self.streams.insert(
                            sid,
                            SStream::Put {
                                key: p.tensor_key.clone(),
                                rx,
                            },
                        );
                        self.events.push_back(ServerEvent::PutStarted {
                            stream_id: sid,
                            key: p.tensor_key,
                            total_data_bytes: p.total_data_bytes,
                        });
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            m => self.put_stream(sid, m),
        };
        if let Err(e) = r {
            self.fail_stream(sid, e);
        }
    }

    fn request(&mut self, sid: u32, r: TensorRequest) -> Result<()> {
        self.closed.remove(sid);
        if self.cfg.strict_reserved_bits && r.request_flags & !request_flags::DEFINED != 0 {
            return Err(ProtoError::invalid(format!(
                "B.8/S16: reserved request_flags bits set: 0x{:08X}",
                r.request_flags & !request_flags::DEFINED
            )));
        }
        if !r.min_alignment.is_power_of_two() || r.min_alignment > MAX_MIN_ALIGNMENT {
            return Err(ProtoError::invalid(format!(
                "B.8/S16: min_alignment {} is not a power of two ≤ {MAX_MIN_ALIGNMENT}",
                r.min_alignment
            )));
        }
        let classes = self
            .client
            .as_ref()
            .map(Hello::memory_classes)
            .unwrap_or_default();
        negotiate::place(r.preferred_device, &[negotiate::DEVICE_CPU], &classes)?;
        self.streams.insert(sid, SStream::Requested(r.clone()));
        self.events.push_back(ServerEvent::Request {
            stream_id: sid,
            request: r,
        });
        Ok(())
    }

    /// Sum of the data bytes the open PUTs have announced.
    fn inflight(&self) -> u64 {
        self.streams
            .values()
            .map(|s| match s {
                SStream::Put { rx, .. } => rx.reserved_bytes(),
                _ => 0,
            })
            .sum()
    }

    fn check_inflight(&self, more: u64) -> Result<()> {
        let now = self.inflight();
        if now.saturating_add(more) > self.cfg.max_put_inflight_bytes {
            return Err(ProtoError::new(
                crate::LIMIT_EXCEEDED,
                format!(
                    "PUT of {more} bytes refused: {now} bytes of PUTs are in flight on this connection, limit {}",
                    self.cfg.max_put_inflight_bytes
                ),
            ));
        }
        Ok(())
    }

    fn put_stream(&mut self, sid: u32, m: Message) -> Result<()> {
        if let Message::TensorDescriptor(d) = &m {
            self.check_inflight(d.total_data_bytes)?;
        }
        let Some(SStream::Put { rx, .. }) = self.streams.get_mut(&sid) else {
            let state = if self.streams.contains_key(&sid) {
                "on this stream now"
            } else {
                "on a stream with no PUT"
            };
            return Err(unexpected(&m, state));
        };
        match m {
            Message::TensorDescriptor(d) if rx.wants_descriptor() => {
                if (d.shard_index, d.total_shards) != (0, 1) {
                    return Err(ProtoError::invalid(
                        "B.15: PUT has no parallel shards (shard_index 0, total_shards 1)",
                    ));
                }
                rx.descriptor(&d.descriptor, d.total_data_bytes)?;
            }
            Message::TensorData { offset, data } => rx.data(offset, &data)?,
            Message::TensorDataEnd => {
                if let Some(item) = rx.end()? {
                    let Some(SStream::Put { key, .. }) =
                        self.streams.insert(sid, SStream::AwaitAck)
                    else {
                        unreachable!("PUT stream")
                    };
                    self.events.push_back(ServerEvent::Put {
                        stream_id: sid,
                        key,
                        item,
                    });
                }
            }
            Message::RdmaRegister(_) if rx.at_data_start() => {
                // B.14/S4: RDMA was not agreed; answer ERROR in place of RDMA_READY and
                // keep the stream open for the TENSOR_DATA fallback.
                self.out.error(
                    sid,
                    &ProtoError::invalid(
                        "B.14: RDMA_DATA_PLANE was not agreed; send TENSOR_DATA frames",
                    ),
                );
            }
            Message::Unknown { message_type, .. } | Message::Private { message_type, .. } => {
                return Err(ProtoError::invalid(format!(
                    "B.4: unrecognised message_type 0x{message_type:08X}"
                )));
            }
            m => return Err(unexpected(&m, "in a PUT")),
        }
        Ok(())
    }

    /// Rejects the request or PUT on `stream_id` with `error` (`UNKNOWN_TENSOR`, store
    /// full, …): sends `ERROR` and closes the stream.
    pub fn reject(&mut self, stream_id: u32, error: ProtoError) {
        if self.state == State::Ready && self.streams.contains_key(&stream_id) {
            self.fail_stream(stream_id, error);
        }
    }

    /// Acknowledges a complete PUT (`TENSOR_PUT_ACK`).
    ///
    /// Errors: `INVALID_MESSAGE` when no PUT on `stream_id` awaits its ACK.
    pub fn put_ack(&mut self, stream_id: u32) -> Result<()> {
        match self.streams.get(&stream_id) {
            Some(SStream::AwaitAck) => {
                self.streams.remove(&stream_id);
                self.closed.insert(stream_id);
                self.out.push_msg(stream_id, &Message::TensorPutAck);
                Ok(())
            }
            _ => Err(ProtoError::invalid(format!(
                "no PUT awaits its ACK on stream {stream_id}"
            ))),
        }
    }

    /// Answers the request on `stream_id` with `item` (B.9–B.13): every check is done
    /// before anything is queued. The data frames point into `item`'s buffers (no
    /// copy) unless the tensor is transcoded.
    ///
    /// Errors (also sent as `ERROR`, closing the stream): `INVALID_MESSAGE` when no
    /// request awaits on `stream_id`, `DEVICE_UNAVAILABLE` (B.10),
    /// `LAYOUT_UNAVAILABLE` / `TRANSCODE_LIMIT_EXCEEDED` (B.9 with
    /// [`LayoutFallback::Refuse`]), `MESSAGE_TOO_LARGE` when a descriptor cannot fit
    /// the client's `max_message_size`.
    pub fn respond(&mut self, stream_id: u32, item: &Item) -> Result<()> {
        let Some(SStream::Requested(r)) = self.streams.get(&stream_id) else {
            return Err(ProtoError::invalid(format!(
                "no request awaits an answer on stream {stream_id}"
            )));
        };
        let r = r.clone();
        match self.plan(stream_id, &r, item) {
            Ok(batch) => {
                self.streams.remove(&stream_id);
                self.closed.insert(stream_id);
                self.out.push_batch(batch);
                Ok(())
            }
            Err(e) => {
                self.fail_stream(stream_id, e.clone());
                Err(e)
            }
        }
    }

    fn plan(&self, sid: u32, r: &TensorRequest, item: &Item) -> Result<Batch> {
        let client = self.client.as_ref().expect("ready");
        let (dev, mc) = negotiate::place(
            r.preferred_device,
            &[negotiate::DEVICE_CPU],
            &client.memory_classes(),
        )?;
        let mut p = Planner {
            b: Batch::default(),
            peer_max: client.max_message_size,
            frame_cap: self.cfg.max_frame_bytes,
            device: DeviceTag::from_tag(dev).unwrap_or(DeviceTag::Cpu),
            class: MemoryClass::from_tag(mc).unwrap_or(MemoryClass::Standard),
            align: r.min_alignment,
        };
        let t = match item {
            Item::Composite(_) => {
                p.item(sid, item)?;
                return Ok(p.b);
            }
            Item::Tensor(t) => t,
        };
        let sel = negotiate::select_layout(
            t.descriptor(),
            r,
            self.cfg.capabilities & capability::TRANSCODING != 0,
            self.cfg.transcode_limit,
            self.cfg.layout_fallback,
        )?;
        let (d, bufs) = match sel {
            Selection::Native => (t.descriptor().clone(), t.buffers().to_vec()),
            Selection::Transcode(to) => {
                let (d, data) = transcode::transcode(t.descriptor(), t.buffers()[0].as_slice(), to);
                let b = match data {
                    Some(a) => Buffer::from_aligned(a),
                    None => t.buffers()[0].clone(),
                };
                (d, vec![b])
            }
        };
        let parallel = self.cfg.capabilities & capability::PARALLEL_STREAMS != 0
            && r.request_flags & request_flags::PARALLEL_OK != 0;
        let n = if parallel {
            self.shard_count(sid, &d)
        } else {
            1
        };
        if n <= 1 {
            p.tensor(sid, d, &bufs, (0, 1))?;
        } else {
            p.shards(sid, &d, &bufs[0], n)?;
        }
        Ok(p.b)
    }

    /// B.13: how many shards to cut `d` into (1 = not parallel).
    fn shard_count(&self, sid: u32, d: &TensorDescriptor) -> u32 {
        let Some(Storage::Bytes(_)) = d.storage() else {
            return 1;
        };
        let total: u64 = d.buffers.iter().map(|b| b.byte_size).sum();
        if !matches!(d.layout, Layout::RowMajor)
            || d.buffers.len() != 1
            || d.quantization.is_some()
            || d.shard.is_some()
            || d.composite_member.is_some()
            || d.byte_offset != 0
            || crate::transcode::transcoded_size(d) != Some(total)
            || d.shape.first().is_none_or(|&s| s < 2)
            || self.cfg.min_shard_bytes == 0
        {
            return 1;
        }
        let n = (total / self.cfg.min_shard_bytes)
            .min(u64::from(self.cfg.max_shards.min(MAX_SHARDS)))
            .min(d.shape[0]) as u32;
        // The shard streams sid+1.. must be free.
        for i in 1..n {
            let s = sid.wrapping_add(i);
            if s == 0 || self.streams.contains_key(&s) {
                return 1;
            }
        }
        n.max(1)
    }
}

struct Planner {
    b: Batch,
    peer_max: u32,
    frame_cap: u64,
    device: DeviceTag,
    class: MemoryClass,
    align: u32,
}

impl Planner {
    fn handles(&self, d: &mut TensorDescriptor) {
        for h in &mut d.buffers {
            *h = BufferHandle {
                byte_size: h.byte_size,
                alignment: if h.byte_size > 0 {
                    h.alignment.max(self.align)
                } else {
                    h.alignment
                },
                device: self.device,
                sync_mode: SyncMode::ProducerSynced,
                memory_class: self.class,
            };
        }
    }

    fn descriptor(
        &mut self,
        sid: u32,
        d: &TensorDescriptor,
        total: u64,
        shard: (u32, u32),
    ) -> Result<()> {
        let bytes = d
            .encode()
            .map_err(|e| ProtoError::invalid(format!("descriptor does not encode: {e}")))?;
        if bytes.len() as u64 + 16 > u64::from(self.peer_max) {
            return Err(ProtoError::new(
                ErrorCode::MessageTooLarge,
                format!(
                    "B.17: the {}-byte descriptor does not fit the client's max_message_size {}",
                    bytes.len(),
                    self.peer_max
                ),
            ));
        }
        let m = Message::TensorDescriptor(DescriptorMsg {
            descriptor: bytes,
            total_data_bytes: total,
            shard_index: shard.0,
            total_shards: shard.1,
        });
        self.b.msg(sid, &m)
    }

    fn tensor(
        &mut self,
        sid: u32,
        mut d: TensorDescriptor,
        bufs: &[Buffer],
        shard: (u32, u32),
    ) -> Result<()> {
        self.handles(&mut d);
        let total: u64 = d.buffers.iter().map(|b| b.byte_size).sum();
        self.descriptor(sid, &d, total, shard)?;
        let mut at = 0u64;
        for (h, b) in d.buffers.iter().zip(bufs) {
            let n = b.len().min(h.byte_size as usize);
            self.b
                .frames(sid, b.clone(), 0..n, at, self.peer_max, self.frame_cap)?;
            at += n as u64;
        }
        self.b.msg(sid, &Message::TensorDataEnd)
    }

    fn item(&mut self, sid: u32, item: &Item) -> Result<()> {
        match item {
            Item::Tensor(t) => self.tensor(sid, t.descriptor().clone(), t.buffers(), (0, 1)),
            Item::Composite(c) => {
                self.tensor(sid, c.head.descriptor().clone(), &[], (0, 1))?;
                for m in &c.members {
                    self.item(sid, m)?;
                }
                Ok(())
            }
        }
    }

    /// Row-major split along dimension 0 into `n` near-equal shards on streams
    /// `sid .. sid + n`.
    fn shards(&mut self, sid: u32, d: &TensorDescriptor, buf: &Buffer, n: u32) -> Result<()> {
        let rows = d.shape[0];
        let row_bytes = d.buffers[0].byte_size / rows;
        for i in 0..u64::from(n) {
            let a = rows * i / u64::from(n);
            let e = rows * (i + 1) / u64::from(n);
            let mut s = d.clone();
            s.shape[0] = e - a;
            let mut off = vec![0u64; d.shape.len()];
            off[0] = a;
            s.shard = Some(Shard {
                parent_shape: d.shape.clone(),
                offset: off,
            });
            s.buffers[0].byte_size = (e - a) * row_bytes;
            s.statistics = None;
            self.handles(&mut s);
            let ssid = sid.wrapping_add(i as u32);
            self.descriptor(ssid, &s, s.buffers[0].byte_size, (i as u32, n))?;
            let r = (a * row_bytes) as usize..(e * row_bytes) as usize;
            self.b
                .frames(ssid, buf.clone(), r, 0, self.peer_max, self.frame_cap)?;
            self.b.msg(ssid, &Message::TensorDataEnd)?;
        }
        Ok(())
    }
}
