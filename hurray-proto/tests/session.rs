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
    for in_place in [true, false] {
        get_composite_and_sparse_via(in_place);
    }
}

fn get_composite_and_sparse_via(in_place: bool) {
    let mut p = Pair::default();
    p.client_in_place = in_place;
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
fn parallel_get_in_place_in_small_frames() {
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
    let t = u8_tensor(&[64, 100], 9);
    p.store.items.insert("big".into(), Item::Tensor(t.clone()));
    let got = p
        .get(
            "big",
            &GetOptions {
                parallel: true,
                ..GetOptions::default()
            },
        )
        .unwrap();
    assert_eq!(got, Item::Tensor(t));
}

#[test]
fn in_place_frame_spanning_two_buffers() {
    // A sender (not ours) whose single frame covers all three CSR buffers.
    let mut c = connected_client(ClientConfig::default(), 0);
    let sid = c.get("s", &GetOptions::default()).unwrap();
    let _ = drain(|| c.poll_transmit());
    let t = csr();
    let all: Vec<u8> = t
        .buffers()
        .iter()
        .flat_map(|b| b.as_slice().to_vec())
        .collect();
    let mut wire = Vec::new();
    desc_msg(t.descriptor(), all.len() as u64, 0, 1)
        .encode_into(sid, &mut wire)
        .unwrap();
    Message::TensorData {
        offset: 0,
        data: all,
    }
    .encode_into(sid, &mut wire)
    .unwrap();
    Message::TensorDataEnd.encode_into(sid, &mut wire).unwrap();
    let mut rest = &wire[..];
    while !rest.is_empty() {
        let dst = c.read_buf();
        let n = dst.len().min(rest.len()).min(5);
        dst[..n].copy_from_slice(&rest[..n]);
        c.advance(n);
        rest = &rest[n..];
    }
    assert!(
        matches!(c.poll_event(), Some(ClientEvent::Got { item: Item::Tensor(got), .. }) if got == t)
    );
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
    for in_place in [false, true] {
        put_then_get_round_trips_via(in_place);
    }
}

fn put_then_get_round_trips_via(in_place: bool) {
    // Small frames so that data spans many reads either way.
    let ccfg = ClientConfig {
        max_frame_bytes: 40,
        ..ClientConfig::default()
    };
    let mut p = Pair::new(ccfg, ServerConfig::default());
    p.server_in_place = in_place;
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

#[test]
fn transcode_sub_byte_types_preserves_every_code() {
    use hurray_core::ElementType;
    let mut p = Pair::default();
    let want = GetOptions {
        preferred_layouts: vec![LayoutEntry::Tag(0x02)],
        allow_transcode: true,
        ..GetOptions::default()
    };
    for ty in [ElementType::Bool, ElementType::Int4, ElementType::Uint2] {
        let (rows, cols) = (3usize, 5usize);
        // Codes valid for the type, varied per element.
        let codes: Vec<u8> = (0..rows * cols)
            .map(|i| match ty {
                ElementType::Bool => (i % 3 == 0) as u8,
                ElementType::Int4 => ((i as i8 % 16) - 8) as u8,
                _ => (i % 4) as u8,
            })
            .collect();
        let packed = hurray_core::packing::pack(ty, &codes).unwrap();
        let t = hurray_io::Tensor::from_dense(ty, &[rows as u64, cols as u64], &packed).unwrap();
        p.store.items.insert("b".into(), Item::Tensor(t));
        let Item::Tensor(got) = p.get("b", &want).unwrap() else {
            panic!()
        };
        assert_eq!(got.descriptor().layout, Layout::ColumnMajor, "{ty:?}");
        let back =
            hurray_core::packing::unpack(ty, got.buffers()[0].as_slice(), (rows * cols) as u64)
                .unwrap();
        for i in 0..rows {
            for j in 0..cols {
                assert_eq!(back[i + j * rows], codes[i * cols + j], "{ty:?} [{i},{j}]");
            }
        }
    }
}

/// Core overhead, no sockets: a 256 MiB GET through `Server` → `Transmit`s →
/// `Client::read_buf`/`advance` in 4 MiB frames, memcpy standing in for the socket.
/// `cargo test --release -p hurray-proto --test session -- --ignored --nocapture`.
#[test]
#[ignore]
fn throughput_of_the_core() {
    let n = 256usize << 20;
    let t =
        hurray_io::Tensor::from_dense(hurray_core::ElementType::Uint8, &[n as u64], &vec![7u8; n])
            .unwrap();
    let mut p = Pair::default();
    p.store.items.insert("big".into(), Item::Tensor(t.clone()));
    let started = std::time::Instant::now();
    let sid = p.client.get("big", &GetOptions::default()).unwrap();
    // Deliver the request.
    while let Some(tx) = p.client.poll_transmit() {
        for e in p.sf.push_all(&wire(&tx).unwrap()) {
            p.server.on_frame(e);
        }
    }
    let ServerEvent::Request { .. } = p.server.poll_event().unwrap() else {
        panic!()
    };
    p.server.respond(sid, &Item::Tensor(t.clone())).unwrap();
    let mut bytes = 0usize;
    while let Some(tx) = p.server.poll_transmit() {
        let parts: Vec<&[u8]> = match &tx {
            Transmit::Bytes { bytes, .. } => vec![&bytes[..]],
            Transmit::Data {
                prefix,
                buffer,
                range,
                ..
            } => vec![&prefix[..], &buffer.as_slice()[range.clone()]],
            Transmit::CloseConnection => vec![],
        };
        for mut part in parts {
            bytes += part.len();
            while !part.is_empty() {
                let dst = p.client.read_buf();
                let k = dst.len().min(part.len());
                dst[..k].copy_from_slice(&part[..k]);
                p.client.advance(k);
                part = &part[k..];
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let Some(ClientEvent::Got { item, .. }) = p.client.poll_event() else {
        panic!()
    };
    assert_eq!(item, Item::Tensor(t));
    println!(
        "core: {bytes} wire bytes in {secs:.3} s = {:.2} GB/s",
        bytes as f64 / secs / 1e9
    );
    // Baseline on the same machine: one copy of the bytes into fresh aligned memory.
    let src = item.as_tensor().unwrap().buffers()[0].as_slice();
    let started = std::time::Instant::now();
    let mut dst = hurray_io::AlignedBuf::zeroed(n).unwrap();
    dst.as_mut_slice().copy_from_slice(src);
    let base = started.elapsed().as_secs_f64();
    assert_eq!(dst.as_slice()[n - 1], 7);
    println!(
        "baseline (allocate + one memcpy): {base:.3} s; core / baseline = {:.2}",
        secs / base
    );
}
