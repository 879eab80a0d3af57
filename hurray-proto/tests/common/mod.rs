//! Shared test harness: a client and a server wired together in memory.
#![allow(dead_code)]

use hurray_core::{
    BufferHandle, CombineOp, CompositeHead, CompositionRule, ElementType, Layout, Shard,
    TensorDescriptor,
};
use hurray_io::{Buffer, Composite, Item, Tensor};
use hurray_proto::*;
use std::collections::HashMap;

/// Wire bytes of a transmit (`None` for CloseConnection).
pub fn wire(t: &Transmit) -> Option<Vec<u8>> {
    match t {
        Transmit::Bytes { bytes, .. } => Some(bytes.clone()),
        Transmit::Data {
            prefix,
            buffer,
            range,
            ..
        } => {
            let mut v = prefix.to_vec();
            v.extend_from_slice(&buffer.as_slice()[range.clone()]);
            Some(v)
        }
        Transmit::CloseConnection => None,
    }
}

/// Every message (with stream id) the transmits of `out` carry, plus whether a
/// CloseConnection was among them.
pub fn drain(mut next: impl FnMut() -> Option<Transmit>) -> (Vec<(u32, Message)>, bool) {
    let mut f = Framer::new(u32::MAX);
    let mut msgs = Vec::new();
    let mut closed = false;
    while let Some(t) = next() {
        match wire(&t) {
            Some(b) => {
                for e in f.push_all(&b) {
                    let FrameEvent::Frame(fr) = e else {
                        panic!("too large")
                    };
                    let sid = fr.header.stream_id;
                    msgs.push((sid, fr.decode().unwrap()));
                }
            }
            None => closed = true,
        }
    }
    (msgs, closed)
}

/// A store answering requests and taking PUTs.
#[derive(Default)]
pub struct Store {
    pub items: HashMap<String, Item>,
    pub refuse_puts: bool,
    pub events: Vec<String>,
}

pub struct Pair {
    pub client: Client,
    pub server: Server,
    pub cf: Framer,
    pub sf: Framer,
    pub store: Store,
    pub client_events: Vec<ClientEvent>,
    pub server_closed: bool,
    pub client_closed: bool,
    /// Feed the client through `read_buf` / `advance` (default) instead of a framer.
    pub client_in_place: bool,
    /// Feed the server through `read_buf` / `advance` instead of a framer.
    pub server_in_place: bool,
}

impl Pair {
    pub fn new(ccfg: ClientConfig, scfg: ServerConfig) -> Pair {
        let client = Client::new(ccfg);
        let server = Server::new(scfg);
        let cf = client.framer();
        let sf = server.framer();
        let mut p = Pair {
            client,
            server,
            cf,
            sf,
            store: Store::default(),
            client_events: Vec::new(),
            server_closed: false,
            client_closed: false,
            client_in_place: true,
            server_in_place: false,
        };
        p.pump();
        assert!(p.client.is_connected(), "{:?}", p.client_events);
        p.client_events.clear();
        p
    }

    pub fn default() -> Pair {
        Pair::new(ClientConfig::default(), ServerConfig::default())
    }

    /// Moves bytes both ways until both sides are quiet.
    pub fn pump(&mut self) {
        loop {
            let mut moved = false;
            while let Some(t) = self.client.poll_transmit() {
                moved = true;
                match wire(&t) {
                    Some(b) if self.server_in_place => {
                        let mut rest = &b[..];
                        while !rest.is_empty() {
                            let dst = self.server.read_buf();
                            assert!(!dst.is_empty());
                            let n = dst.len().min(rest.len()).min(500);
                            dst[..n].copy_from_slice(&rest[..n]);
                            self.server.advance(n);
                            rest = &rest[n..];
                        }
                    }
                    Some(b) => {
                        for e in self.sf.push_all(&b) {
                            self.server.on_frame(e);
                        }
                    }
                    None => self.client_closed = true,
                }
            }
            while let Some(ev) = self.server.poll_event() {
                moved = true;
                match ev {
                    ServerEvent::Request { stream_id, request } => {
                        match self.store.items.get(&request.tensor_key) {
                            Some(item) => {
                                let item = item.clone();
                                let _ = self.server.respond(stream_id, &item);
                            }
                            None => self.server.reject(
                                stream_id,
                                ProtoError::new(
                                    ErrorCode::UnknownTensor,
                                    format!("no tensor {:?}", request.tensor_key),
                                ),
                            ),
                        }
                    }
                    ServerEvent::Put {
                        stream_id,
                        key,
                        item,
                    } => {
                        if self.store.refuse_puts {
                            self.server
                                .reject(stream_id, ProtoError::new(LIMIT_EXCEEDED, "store full"));
                        } else {
                            self.store.items.insert(key, item);
                            self.server.put_ack(stream_id).unwrap();
                        }
                    }
                    other => self.store.events.push(format!("{other:?}")),
                }
            }
            while let Some(t) = self.server.poll_transmit() {
                moved = true;
                match wire(&t) {
                    // The client's in-place path: bytes go where read_buf says, in
                    // reads of at most 700 bytes (so frames arrive in pieces).
                    Some(b) if self.client_in_place => {
                        let mut rest = &b[..];
                        while !rest.is_empty() {
                            let dst = self.client.read_buf();
                            assert!(!dst.is_empty());
                            let n = dst.len().min(rest.len()).min(700);
                            dst[..n].copy_from_slice(&rest[..n]);
                            self.client.advance(n);
                            rest = &rest[n..];
                        }
                    }
                    Some(b) => {
                        for e in self.cf.push_all(&b) {
                            self.client.on_frame(e);
                        }
                    }
                    None => self.server_closed = true,
                }
            }
            while let Some(e) = self.client.poll_event() {
                moved = true;
                self.client_events.push(e);
            }
            if !moved {
                return;
            }
        }
    }

    pub fn get(&mut self, key: &str, opts: &GetOptions) -> Result<Item> {
        let sid = self.client.get(key, opts).unwrap();
        self.pump();
        self.take_result(sid).map(|r| r.unwrap())
    }

    pub fn put(&mut self, key: &str, item: &Item) -> Result<()> {
        let sid = self.client.put(key, item).unwrap();
        self.pump();
        self.take_result(sid).map(|r| assert!(r.is_none()))
    }

    pub fn take_result(&mut self, sid: u32) -> Result<Option<Item>> {
        let i = self
            .client_events
            .iter()
            .position(|e| match e {
                ClientEvent::Got { stream_id, .. }
                | ClientEvent::PutAcked { stream_id }
                | ClientEvent::Failed { stream_id, .. } => *stream_id == sid,
                _ => false,
            })
            .unwrap_or_else(|| panic!("no result for stream {sid}: {:?}", self.client_events));
        match self.client_events.remove(i) {
            ClientEvent::Got { item, .. } => Ok(Some(item)),
            ClientEvent::PutAcked { .. } => Ok(None),
            ClientEvent::Failed { error, .. } => Err(error),
            _ => unreachable!(),
        }
    }
}

pub fn f32_tensor(shape: &[u64]) -> Tensor {
    let n: u64 = shape.iter().product();
    let bytes: Vec<u8> = (0..n)
        .flat_map(|i| (i as f32 * 0.5 + 1.0).to_le_bytes())
        .collect();
    Tensor::from_dense(ElementType::Float32, shape, &bytes).unwrap()
}

pub fn u8_tensor(shape: &[u64], seed: u8) -> Tensor {
    let n: u64 = shape.iter().product();
    let bytes: Vec<u8> = (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    Tensor::from_dense(ElementType::Uint8, shape, &bytes).unwrap()
}

pub fn csr() -> Tensor {
    // [[1, 0, 0], [0, 0, 2]]
    let d = TensorDescriptor {
        layout: Layout::Csr { nnz: 2 },
        buffers: vec![
            BufferHandle::cpu(8),
            BufferHandle::cpu(16),
            BufferHandle::cpu(24),
        ],
        ..TensorDescriptor::dense(ElementType::Float32, &[2, 3]).unwrap()
    };
    let le = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let values: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    Tensor::new(
        d,
        vec![
            Buffer::copy_from(&values),
            Buffer::copy_from(&le(&[0, 2])),
            Buffer::copy_from(&le(&[0, 1, 2])),
        ],
    )
    .unwrap()
}

/// A partition of a [4, 2] float32 tensor into two [2, 2] shards.
pub fn partition() -> Composite {
    let head = TensorDescriptor {
        layout: Layout::CompositeHead(CompositeHead {
            rule: CompositionRule::Partition,
            combine_op: CombineOp::None,
            member_count: 2,
        }),
        buffers: Vec::new(),
        ..TensorDescriptor::dense(ElementType::Float32, &[4, 2]).unwrap()
    };
    let member = |row: u64| {
        let t = f32_tensor(&[2, 2]);
        let d = TensorDescriptor {
            shard: Some(Shard {
                parent_shape: vec![4, 2],
                offset: vec![row, 0],
            }),
            ..t.descriptor().clone()
        };
        Item::Tensor(Tensor::new(d, t.buffers().to_vec()).unwrap())
    };
    Composite {
        head: Tensor::new(head, Vec::new()).unwrap(),
        members: vec![member(0), member(2)],
    }
}

/// A client that completed its handshake against a hand-written SERVER_HELLO.
pub fn connected_client(cfg: ClientConfig, server_caps: u64) -> Client {
    let mut c = Client::new(cfg);
    let _ = drain(|| c.poll_transmit());
    c.on_message(
        1,
        Message::ServerHello(Hello {
            protocol_version: 1,
            max_message_size: 1 << 20,
            capability_flags: server_caps,
            supported_layouts: vec![],
            supported_devices: vec![0],
            supported_memory_classes: None,
        }),
    );
    assert!(matches!(
        c.poll_event(),
        Some(ClientEvent::Connected { .. })
    ));
    c
}

/// A server that completed its handshake.
pub fn connected_server(cfg: ServerConfig) -> Server {
    let mut s = Server::new(cfg);
    s.on_message(1, Message::ClientHello(ClientConfig::default().hello()));
    assert!(matches!(
        s.poll_event(),
        Some(ServerEvent::Connected { .. })
    ));
    let (m, _) = drain(|| s.poll_transmit());
    assert!(matches!(m[..], [(1, Message::ServerHello(_))]));
    s
}

pub fn desc_msg(d: &TensorDescriptor, total: u64, idx: u32, n: u32) -> Message {
    Message::TensorDescriptor(DescriptorMsg {
        descriptor: d.encode().unwrap(),
        total_data_bytes: total,
        shard_index: idx,
        total_shards: n,
    })
}
