//! Client ↔ server sessions in memory: GET, transcoding, composites, parallel
//! shards, PUT of dense / sparse / empty / composite tensors, PING.

mod common;
use common::*;
use hurray_core::Layout;
use hurray_io::Item;
use hurray_proto::*;

#[test]
fn get_dense_in_small_frames_matches_bytes() {
    // The client accepts 1024-byte payloads: data frames carry at most 1016 bytes.
    let ccfg = ClientConfig {
        max_message_size: 1024,
        ..ClientConfig::default()
    };
    let mut p = Pair::new(ccfg, ServerConfig::default());
    let t = f32_tensor(&[50, 41]); // 8200 bytes
    p.store.items.insert("w".into(), Item::Tensor(t.clone()));
    let sid = p.client.get("w", &GetOptions::default()).unwrap();
    // Inspect the server's frames on the wire.
    if let Some(tx) = p.client.poll_transmit() {
        for e in p.sf.push_all(&wire(&tx).unwrap()) {
            p.server.on_frame(e);
        }
    }
    let ServerEvent::Request { stream_id, request } = p.server.poll_event().unwrap() else {
        panic!()
    };
    assert_eq!((stream_id, request.tensor_key.as_str()), (sid, "w"));
    p.server.respond(sid, &Item::Tensor(t.clone())).unwrap();
    let (msgs, _) = drain(|| p.server.poll_transmit());
    let frames: Vec<(u64, usize)> = msgs
        .iter()
        .filter_map(|(_, m)| match m {
            Message::TensorData { offset, data } => Some((*offset, data.len())),
            _ => None,
        })
        .collect();
    assert_eq!(frames.len(), 9); // ceil(8200 / 1016)
    assert!(frames.iter().all(|&(_, l)| l <= 1016));
    assert_eq!(frames[8], (8 * 1016, 8200 - 8 * 1016));
    assert!(matches!(
        msgs.first(),
        Some((_, Message::TensorDescriptor(_)))
    ));
    assert!(matches!(msgs.last(), Some((_, Message::TensorDataEnd))));
    for (s, m) in msgs {
        p.client.on_message(s, m);
    }
    let Some(ClientEvent::Got {
        stream_id,
        item: Item::Tensor(got),
    }) = p.client.poll_event()
    else {
        panic!()
    };
    assert_eq!(stream_id, sid);
    assert_eq!(got, t);
    assert_eq!(p.client.open_streams(), 0);
}

#[test]
fn get_unknown_key_is_unknown_tensor() {
    let mut p = Pair::default();
    let e = p.get("nope", &GetOptions::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownTensor);
    // The connection stays usable (B.16: only the stream closes).
    p.store
        .items
        .insert("w".into(), Item::Tensor(f32_tensor(&[3])));
    assert!(p.get("w", &GetOptions::default()).is_ok());
}

#[test]
fn transcode_row_to_column_major_preserves_every_element() {
    let mut p = Pair::default();
    let t = u8_tensor(&[3, 4, 5], 7);
    p.store.items.insert("t".into(), Item::Tensor(t.clone()));
    let opts = GetOptions {
        preferred_layouts: vec![LayoutEntry::Tag(0x02), LayoutEntry::Tag(0x01)],
        allow_transcode: true,
        ..GetOptions::default()
    };
    let Item::Tensor(got) = p.get("t", &opts).unwrap() else {
        panic!()
    };
    assert_eq!(got.descriptor().layout, Layout::ColumnMajor);
    let (src, dst) = (t.buffers()[0].as_slice(), got.buffers()[0].as_slice());
    for i in 0..3 {
        for j in 0..4 {
            for k in 0..5 {
                assert_eq!(
                    src[i * 20 + j * 5 + k],
                    dst[i + j * 3 + k * 12],
                    "[{i},{j},{k}]"
                );
            }
        }
    }
    // And back: a column-major stored tensor served as row-major equals the original.
    p.store.items.insert("c".into(), Item::Tensor(got));
    let opts = GetOptions {
        preferred_layouts: vec![LayoutEntry::Tag(0x01)],
        allow_transcode: true,
        ..opts
    };
    let Item::Tensor(back) = p.get("c", &opts).unwrap() else {
        panic!()
    };
    assert_eq!(back, t);
    // Without ALLOW_TRANSCODE the stored layout is served (B.9 step 2).
    let Item::Tensor(native) = p
        .get(
            "t",
            &GetOptions {
                allow_transcode: false,
                ..opts
            },
        )
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(native.descriptor().layout, Layout::RowMajor);
}

#[test]
fn transcode_over_the_cap_falls_through_or_refuses() {
    let t = f32_tensor(&[8, 8]); // 256 bytes
    let want = GetOptions {
        preferred_layouts: vec![LayoutEntry::Tag(0x02)],
        allow_transcode: true,
        ..GetOptions::default()
    };
    // B.9: over the cap, serve the native layout.
    let mut p = Pair::new(
        ClientConfig::default(),
        ServerConfig {
            transcode_limit: 255,
            ..ServerConfig::default()
        },
    );
    p.store.items.insert("t".into(), Item::Tensor(t.clone()));
    let Item::Tensor(got) = p.get("t", &want).unwrap() else {
        panic!()
    };
    assert_eq!(got.descriptor().layout, Layout::RowMajor);
    // S10, refusing server: TRANSCODE_LIMIT_EXCEEDED.
    let scfg = ServerConfig {
        transcode_limit: 255,
        layout_fallback: LayoutFallback::Refuse,
        ..ServerConfig::default()
    };
    let mut p = Pair::new(ClientConfig::default(), scfg);
    p.store.items.insert("t".into(), Item::Tensor(t.clone()));
    assert_eq!(
        p.get("t", &want).unwrap_err().code,
        ErrorCode::TranscodeLimitExceeded
    );
    // Exactly at the cap: transcoded.
    let mut p = Pair::new(
        ClientConfig::default(),
        ServerConfig {
            transcode_limit: 256,
            ..ServerConfig::default()
        },
    );
    p.store.items.insert("t".into(), Item::Tensor(t));
    let Item::Tensor(got) = p.get("t", &want).unwrap() else {
        panic!()
    };
    assert_eq!(got.descriptor().layout, Layout::ColumnMajor);
}

#[test]
fn get_composite_and_sparse() {
    let mut p = Pair::default();
    let c = Item::Composite(partition());
    p.store.items.insert("c".into(), c.clone());
    p.store.items.insert("s".into(), Item::Tensor(csr()));
    assert_eq!(p.get("c", &GetOptions::default()).unwrap(), c);
    assert_eq!(
        p.get("s", &GetOptions::default()).unwrap(),
        Item::Tensor(csr())
    );
}

#[test]
fn parallel_get_reassembles_exactly() {
    let scfg = ServerConfig {
        min_shard_bytes: 1000,
        max_shards: 4,
        ..ServerConfig::default()
    };
    let ccfg = ClientConfig {
        max_message_size: 1024,
        ..ClientConfig::default()
    };
    let mut p = Pair::new(ccfg, scfg);
    let t = u8_tensor(&[37, 130], 3); // 4810 bytes: 4 shards of 9 or 10 rows
    p.store.items.insert("big".into(), Item::Tensor(t.clone()));
    let sid = p
        .client
        .get(
            "big",
            &GetOptions {
                parallel: true,
                ..GetOptions::default()
            },
        )
        .unwrap();
    if let Some(tx) = p.client.poll_transmit() {
        for e in p.sf.push_all(&wire(&tx).unwrap()) {
            p.server.on_frame(e);
        }
    }
    let ServerEvent::Request { request, .. } = p.server.poll_event().unwrap() else {
        panic!()
    };
    assert_ne!(request.request_flags & request_flags::PARALLEL_OK, 0);
    p.server.respond(sid, &Item::Tensor(t.clone())).unwrap();
    let (msgs, _) = drain(|| p.server.poll_transmit());
    let shards: Vec<(u32, u32, u32)> = msgs
        .iter()
        .filter_map(|(s, m)| match m {
            Message::TensorDescriptor(d) => Some((*s, d.shard_index, d.total_shards)),
            _ => None,
        })
        .collect();
    assert_eq!(
        shards,
        vec![
            (sid, 0, 4),
            (sid + 1, 1, 4),
            (sid + 2, 2, 4),
            (sid + 3, 3, 4)
        ]
    );
    // Deliver shards in reverse order: reassembly must not depend on arrival order.
    let mut by_stream: Vec<Vec<(u32, Message)>> = vec![Vec::new(); 4];
    for (s, m) in msgs {
        by_stream[(s - sid) as usize].push((s, m));
    }
    for group in by_stream.into_iter().rev() {
        for (s, m) in group {
            p.client.on_message(s, m);
        }
    }
    let Some(ClientEvent::Got {
        stream_id,
        item: Item::Tensor(got),
    }) = p.client.poll_event()
    else {
        panic!()
    };
    assert_eq!(stream_id, sid);
    assert_eq!(got, t);
    assert!(p.client.poll_event().is_none());
}

#[test]
fn parallel_get_of_column_major_and_unsharded_fallback() {
    let scfg = ServerConfig {
        min_shard_bytes: 64,
        ..ServerConfig::default()
    };
    let mut p = Pair::new(ClientConfig::default(), scfg);
    // A small tensor the server does not split: plain response on the base stream.
    p.store
        .items
        .insert("s".into(), Item::Tensor(u8_tensor(&[1, 10], 1)));
    let got = p
        .get(
            "s",
            &GetOptions {
                parallel: true,
                ..GetOptions::default()
            },
        )
        .unwrap();
    assert_eq!(got, Item::Tensor(u8_tensor(&[1, 10], 1)));
}

#[test]
fn put_then_get_round_trips() {
    let mut p = Pair::default();
    let empty = f32_tensor(&[3, 0, 5]);
    let items = [
        ("dense", Item::Tensor(f32_tensor(&[4, 6]))),
        ("sparse", Item::Tensor(csr())),
        ("empty", Item::Tensor(empty)),
        ("scalar", Item::Tensor(f32_tensor(&[]))),
        ("composite", Item::Composite(partition())),
    ];
    for (k, it) in &items {
        p.put(k, it).unwrap_or_else(|e| panic!("{k}: {e}"));
    }
    for (k, it) in &items {
        assert_eq!(&p.get(k, &GetOptions::default()).unwrap(), it, "{k}");
    }
}

#[test]
fn put_zero_bytes_sends_no_frames() {
    // S6: a 0-byte PUT is TENSOR_PUT directly followed by TENSOR_DATA_END.
    let mut c = connected_client(ClientConfig::default(), 0);
    c.put("e", &Item::Tensor(f32_tensor(&[0]))).unwrap();
    let (m, _) = drain(|| c.poll_transmit());
    assert!(
        matches!(
            m[..],
            [(_, Message::TensorPut(_)), (_, Message::TensorDataEnd)]
        ),
        "{m:?}"
    );
}

#[test]
fn ping_is_answered_with_pong_on_the_same_stream() {
    let mut p = Pair::default();
    let sid = p.client.ping();
    p.pump();
    assert!(
        matches!(p.client_events[..], [ClientEvent::Pong { stream_id, .. }] if stream_id == sid)
    );
}
