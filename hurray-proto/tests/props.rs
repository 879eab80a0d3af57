//! Property tests: every message round-trips through encode → framer (any chunking)
//! → decode; arbitrary bytes never panic a framer, a server or a client, and never
//! make a framer hold more than header + max payload.

mod common;
use common::*;
use hurray_proto::*;
use proptest::prelude::*;

fn layout_entry() -> impl Strategy<Value = LayoutEntry> {
    prop_oneof![
        (0u8..0xF0).prop_map(LayoutEntry::Tag),
        Just(LayoutEntry::Tag(0xFF)),
        (0xF0u8..=0xFE, proptest::collection::vec(any::<u8>(), 0..8))
            .prop_map(|(tag, metadata)| LayoutEntry::Extension { tag, metadata }),
    ]
}

fn hello() -> impl Strategy<Value = Hello> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u64>(),
        proptest::collection::vec(layout_entry(), 0..6),
        proptest::collection::vec(any::<u8>(), 0..4),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..4)),
    )
        .prop_map(|(v, m, c, l, d, mc)| Hello {
            protocol_version: v,
            max_message_size: m,
            capability_flags: c,
            supported_layouts: l,
            supported_devices: d,
            supported_memory_classes: mc,
        })
}

fn message() -> impl Strategy<Value = Message> {
    let bytes = || proptest::collection::vec(any::<u8>(), 0..32);
    prop_oneof![
        hello().prop_map(Message::ClientHello),
        hello().prop_map(Message::ServerHello),
        (
            ".{0,12}",
            proptest::collection::vec(layout_entry(), 0..4),
            any::<u8>(),
            any::<u32>(),
            any::<u32>()
        )
            .prop_map(|(k, l, d, a, f)| Message::TensorRequest(TensorRequest {
                tensor_key: k,
                preferred_layouts: l,
                preferred_device: d,
                min_alignment: a,
                request_flags: f
            })),
        (1u64..5, any::<u64>(), any::<u32>(), any::<u32>()).prop_map(|(n, t, i, s)| {
            Message::TensorDescriptor(DescriptorMsg {
                descriptor: f32_tensor(&[n]).descriptor().encode().unwrap(),
                total_data_bytes: t,
                shard_index: i,
                total_shards: s,
            })
        }),
        (any::<u64>(), bytes()).prop_map(|(offset, data)| Message::TensorData { offset, data }),
        Just(Message::TensorDataEnd),
        (".{0,12}", any::<u64>()).prop_map(|(k, t)| Message::TensorPut(PutMsg {
            tensor_key: k,
            descriptor: f32_tensor(&[2, 2]).descriptor().encode().unwrap(),
            total_data_bytes: t
        })),
        Just(Message::TensorPutAck),
        (any::<u32>(), ".{0,20}").prop_map(|(c, m)| Message::Error {
            code: ErrorCode::from_u32(c),
            message: m
        }),
        bytes().prop_map(Message::Ping),
        bytes().prop_map(Message::Pong),
        (any::<u64>(), any::<u64>(), bytes()).prop_map(|(a, l, r)| Message::RdmaRegister(
            RdmaRegister {
                remote_addr: a,
                length: l,
                rkey: r
            }
        )),
        Just(Message::RdmaReady),
        (0xF0u32..=0xFE, bytes()).prop_map(|(t, p)| Message::Private {
            message_type: t,
            payload: p
        }),
        (0x0Eu32..0xF0, bytes()).prop_map(|(t, p)| Message::Unknown {
            message_type: t,
            payload: p
        }),
    ]
}

proptest! {
    #[test]
    fn messages_round_trip_in_any_chunking(msgs in proptest::collection::vec((1u32.., message()), 1..6), cut in 1usize..40) {
        let mut wire = Vec::new();
        for (sid, m) in &msgs {
            m.encode_into(*sid, &mut wire).unwrap();
        }
        let mut f = Framer::new(u32::MAX);
        let mut got = Vec::new();
        for chunk in wire.chunks(cut) {
            for e in f.push_all(chunk) {
                let FrameEvent::Frame(fr) = e else { panic!() };
                got.push((fr.header.stream_id, fr.decode().unwrap()));
            }
        }
        prop_assert!(f.is_idle());
        prop_assert_eq!(got, msgs);
    }

    #[test]
    fn random_bytes_never_panic_a_server_and_stay_bounded(bytes in proptest::collection::vec(any::<u8>(), 0..600), hello_first in any::<bool>(), in_place in any::<bool>()) {
        let mut s = Server::new(ServerConfig { max_message_size: 1024, ..ServerConfig::default() });
        let mut f = s.framer();
        let mut input = Vec::new();
        if hello_first {
            Message::ClientHello(ClientConfig::default().hello()).encode_into(1, &mut input).unwrap();
        }
        input.extend_from_slice(&bytes);
        if in_place {
            let mut rest = &input[..];
            while !rest.is_empty() {
                let dst = s.read_buf();
                prop_assert!(!dst.is_empty());
                let n = dst.len().min(rest.len()).min(7);
                dst[..n].copy_from_slice(&rest[..n]);
                s.advance(n);
                rest = &rest[n..];
            }
        } else {
            for chunk in input.chunks(7) {
                for e in f.push_all(chunk) {
                    s.on_frame(e);
                }
                prop_assert!(f.buffered() <= 12 + 1024 + 64 * 1024);
            }
        }
        while s.poll_transmit().is_some() {}
        while s.poll_event().is_some() {}
    }

    #[test]
    fn random_messages_never_panic_a_client(msgs in proptest::collection::vec((0u32..20, message()), 0..12)) {
        let mut c = connected_client(ClientConfig::default(), capability::PARALLEL_STREAMS);
        let _ = c.get("a", &GetOptions::default());
        let _ = c.get("b", &GetOptions { parallel: true, ..GetOptions::default() });
        for (sid, m) in msgs {
            c.on_message(sid, m);
        }
        while c.poll_transmit().is_some() {}
        while c.poll_event().is_some() {}
    }

    #[test]
    fn random_bytes_never_panic_the_in_place_client(tail in proptest::collection::vec(any::<u8>(), 0..400), cut in 1usize..50, with_descriptor in any::<bool>()) {
        let mut c = connected_client(ClientConfig::default(), capability::PARALLEL_STREAMS);
        let sid = c.get("a", &GetOptions::default()).unwrap();
        let _ = c.get("b", &GetOptions { parallel: true, ..GetOptions::default() });
        let mut input = Vec::new();
        if with_descriptor {
            desc_msg(f32_tensor(&[8]).descriptor(), 32, 0, 1).encode_into(sid, &mut input).unwrap();
            // A TENSOR_DATA header whose payload is the random tail.
            let h = Header { message_type: message_type::TENSOR_DATA, stream_id: sid, payload_length: tail.len() as u32 };
            input.extend_from_slice(&h.encode());
        }
        input.extend_from_slice(&tail);
        let mut rest = &input[..];
        while !rest.is_empty() {
            let dst = c.read_buf();
            prop_assert!(!dst.is_empty());
            let n = dst.len().min(rest.len()).min(cut);
            dst[..n].copy_from_slice(&rest[..n]);
            c.advance(n);
            rest = &rest[n..];
        }
        while c.poll_transmit().is_some() {}
        while c.poll_event().is_some() {}
    }

    #[test]
    fn transcode_round_trips(shape in proptest::collection::vec(0u64..5, 2..5), ty_i in 0usize..5, seed in any::<u8>()) {
        use hurray_core::{ElementType, packing};
        let ty = [ElementType::Float32, ElementType::Uint8, ElementType::Float64, ElementType::Int4, ElementType::Bool][ty_i];
        let count: u64 = shape.iter().product();
        let bytes = match ty {
            ElementType::Int4 | ElementType::Bool => {
                let m = if ty == ElementType::Bool { 2 } else { 16 };
                let codes: Vec<u8> = (0..count).map(|i| ((i as u8).wrapping_mul(7).wrapping_add(seed)) % m).collect();
                let codes: Vec<u8> = if ty == ElementType::Int4 { codes.iter().map(|&c| (c as i8 - 8) as u8).collect() } else { codes };
                packing::pack(ty, &codes).unwrap()
            }
            _ => {
                let w = ty.storage().unwrap().bytes_for(1).unwrap();
                (0..count * w).map(|i| (i as u8).wrapping_mul(13) ^ seed).collect()
            }
        };
        let t = hurray_io::Tensor::from_dense(ty, &shape, &bytes).unwrap();
        let d = t.descriptor();
        prop_assert!(hurray_proto::transcode::can_transcode(d, 0x02));
        let (cd, cb) = hurray_proto::transcode::transcode(d, t.buffers()[0].as_slice(), 0x02);
        let cb = cb.unwrap();
        let (rd, rb) = hurray_proto::transcode::transcode(&cd, cb.as_slice(), 0x01);
        prop_assert_eq!(&rd, d);
        let rb = rb.unwrap();
        prop_assert_eq!(rb.as_slice(), &bytes[..]);
    }
}
