//! Must show 1: every message type against the spec's tables (B.3–B.8, B.11, B.14–B.16),
//! as hex written by hand from those tables — not produced by this crate's encoder.
//! Each vector is decoded, compared field by field, and re-encoded to the same bytes.

use hurray_proto::*;

fn hex(s: &str) -> Vec<u8> {
    let d: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    assert_eq!(d.len() % 2, 0, "odd hex digits");
    (0..d.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&d[i..i + 2], 16).unwrap())
        .collect()
}

/// Decodes a whole wire message (header + payload) from `wire`, checks the header,
/// and checks that encoding the result gives `wire` back.
fn roundtrip(wire: &[u8], ty: u32, sid: u32) -> Message {
    let h = Header::decode(wire).unwrap();
    assert_eq!(h.message_type, ty);
    assert_eq!(h.stream_id, sid);
    assert_eq!(h.payload_length as usize, wire.len() - 12, "payload_length");
    let m = Message::decode(&h, &wire[12..]).unwrap();
    assert_eq!(m.message_type(), ty);
    assert_eq!(m.encode(sid).unwrap(), wire, "re-encoding differs");
    // The owned path and the framer agree, even fed one byte at a time.
    assert_eq!(Message::decode_owned(&h, wire[12..].to_vec()).unwrap(), m);
    let mut f = Framer::new(1 << 20);
    let mut got = Vec::new();
    for b in wire {
        let p = f.push(std::slice::from_ref(b));
        assert_eq!(p.consumed, 1);
        if let Some(e) = p.event {
            got.push(e);
        }
    }
    assert_eq!(got.len(), 1);
    let FrameEvent::Frame(fr) = got.pop().unwrap() else {
        panic!("too large")
    };
    assert_eq!(fr.decode().unwrap(), m);
    assert!(f.is_idle());
    m
}

/// 53-byte descriptor: float32 (0x03), row-major (0x01), rank 1, shape [2],
/// byte_offset 0, one CPU buffer of 8 bytes aligned 64 (descriptor.md §2, §6).
const DESC_F32_2: &str = "
    48525259 01 00 35000000 00000000 03 01 01000000
    0200000000000000
    0000000000000000
    01 0800000000000000 40000000 00 00 00 00";

#[test]
fn header_is_three_le_u32() {
    let h = Header::decode(&hex("05000000 2a000000 10000000")).unwrap();
    assert_eq!(
        h,
        Header {
            message_type: 5,
            stream_id: 42,
            payload_length: 16
        }
    );
    assert_eq!(h.encode().to_vec(), hex("05000000 2a000000 10000000"));
    assert_eq!(
        Header::decode(&[0; 11]).unwrap_err().code,
        ErrorCode::InvalidMessage
    );
}

#[test]
fn client_hello_full() {
    // version 1, max 0x00100000, caps TRANSCODING|PARALLEL_STREAMS,
    // layouts [row-major, extension 0xF3 with 2 metadata bytes, column-major],
    // devices [CPU, CUDA], memory classes [STANDARD, HOST_PINNED].
    let wire = hex("01000000 01000000 21000000
         01000000 00001000 0300000000000000
         0300 01 F3 0200 AABB 02
         0200 00 01
         0200 00 01");
    let m = roundtrip(&wire, message_type::CLIENT_HELLO, 1);
    assert_eq!(
        m,
        Message::ClientHello(Hello {
            protocol_version: 1,
            max_message_size: 0x0010_0000,
            capability_flags: capability::TRANSCODING | capability::PARALLEL_STREAMS,
            supported_layouts: vec![
                LayoutEntry::Tag(1),
                LayoutEntry::Extension {
                    tag: 0xF3,
                    metadata: vec![0xAA, 0xBB]
                },
                LayoutEntry::Tag(2)
            ],
            supported_devices: vec![0, 1],
            supported_memory_classes: Some(vec![0, 1]),
        })
    );
}

#[test]
fn server_hello_without_memory_class_list() {
    // B.5: the memory-class list may be absent (payload ends before it) => STANDARD only.
    let wire = hex("02000000 01000000 15000000
         01000000 00000400 0000000000000000
         0000
         0100 00");
    let m = roundtrip(&wire, message_type::SERVER_HELLO, 1);
    let Message::ServerHello(h) = m else { panic!() };
    assert_eq!(h.max_message_size, 0x0004_0000);
    assert!(h.supported_layouts.is_empty());
    assert_eq!(h.supported_memory_classes, None);
    assert_eq!(h.memory_classes(), vec![0]);
}

#[test]
fn hello_extension_entry_with_empty_metadata() {
    // B.6: ext_metadata_length may be 0.
    let wire = hex("02000000 03000000 19000000
         01000000 00010000 0100000000000000
         0100 FE 0000
         0000
         0000");
    let Message::ServerHello(h) = roundtrip(&wire, message_type::SERVER_HELLO, 3) else {
        panic!()
    };
    assert_eq!(
        h.supported_layouts,
        vec![LayoutEntry::Extension {
            tag: 0xFE,
            metadata: vec![]
        }]
    );
    assert_eq!(h.supported_memory_classes, Some(vec![]));
    assert_eq!(
        h.memory_classes(),
        vec![0],
        "empty list means STANDARD only"
    );
}

#[test]
fn tensor_request() {
    // key "w.0", layouts [column-major], device CPU, min_alignment 64, ALLOW_TRANSCODE|PARALLEL_OK.
    let wire = hex("03000000 07000000 13000000
         03000000 772E30
         0100 02
         00
         40000000
         03000000");
    let m = roundtrip(&wire, message_type::TENSOR_REQUEST, 7);
    assert_eq!(
        m,
        Message::TensorRequest(TensorRequest {
            tensor_key: "w.0".into(),
            preferred_layouts: vec![LayoutEntry::Tag(2)],
            preferred_device: 0,
            min_alignment: 64,
            request_flags: request_flags::ALLOW_TRANSCODE | request_flags::PARALLEL_OK,
        })
    );
}

#[test]
fn tensor_descriptor() {
    // payload_length = descriptor_length (0x35) + 16 = 0x45.
    let wire = hex(&format!(
        "04000000 07000000 45000000 {DESC_F32_2} 0800000000000000 00000000 01000000"
    ));
    let Message::TensorDescriptor(d) = roundtrip(&wire, message_type::TENSOR_DESCRIPTOR, 7) else {
        panic!()
    };
    assert_eq!(d.descriptor, hex(DESC_F32_2));
    assert_eq!(
        (d.total_data_bytes, d.shard_index, d.total_shards),
        (8, 0, 1)
    );
    let td = hurray_core::TensorDescriptor::decode(&d.descriptor).unwrap();
    assert_eq!(td.shape, vec![2]);
}

#[test]
fn tensor_descriptor_length_mismatch_is_invalid() {
    // payload 0x46 = descriptor_length + 17: one stray byte.
    let wire = hex(&format!(
        "04000000 07000000 46000000 {DESC_F32_2} 0800000000000000 00000000 01000000 00"
    ));
    let h = Header::decode(&wire).unwrap();
    let e = Message::decode(&h, &wire[12..]).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidMessage);
    assert!(
        e.detail.contains("descriptor_length 53 + 16"),
        "{}",
        e.detail
    );
    // A payload that is not a descriptor at all.
    let wire = hex("04000000 07000000 10000000 00000000000000000000000000000000");
    let e = Message::decode(&Header::decode(&wire).unwrap(), &wire[12..]).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidMessage);
}

#[test]
fn tensor_data_and_prefix() {
    // offset 4, 4 data bytes: payload_length 12.
    let wire = hex("05000000 07000000 0C000000 0400000000000000 0000803F");
    let m = roundtrip(&wire, message_type::TENSOR_DATA, 7);
    assert_eq!(
        m,
        Message::TensorData {
            offset: 4,
            data: vec![0, 0, 0x80, 0x3F]
        }
    );
    assert_eq!(
        TensorData::encode_prefix(7, 4, 4).unwrap().to_vec(),
        wire[..20].to_vec()
    );
    // Shorter than the 8-byte offset.
    let bad = hex("05000000 07000000 04000000 00000000");
    let e = Message::decode(&Header::decode(&bad).unwrap(), &bad[12..]).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidMessage);
    assert!(TensorData::encode_prefix(1, 0, u32::MAX as usize).is_err());
}

#[test]
fn empty_payload_messages() {
    for (ty, name) in [
        (message_type::TENSOR_DATA_END, "TENSOR_DATA_END"),
        (message_type::TENSOR_PUT_ACK, "TENSOR_PUT_ACK"),
        (message_type::RDMA_READY, "RDMA_READY"),
    ] {
        let wire = hex(&format!("{:08X} 09000000 00000000", ty.swap_bytes()));
        let m = roundtrip(&wire, ty, 9);
        assert_eq!(m.name(), name);
        // A stray payload byte is malformed.
        let bad = hex(&format!("{:08X} 09000000 01000000 00", ty.swap_bytes()));
        let e = Message::decode(&Header::decode(&bad).unwrap(), &bad[12..]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidMessage, "{name}");
        assert!(e.detail.contains("trailing"), "{}", e.detail);
    }
}

#[test]
fn tensor_put() {
    // key "kv", descriptor as byte sequence (u32 0x35 prefix), total_data_bytes 8.
    let wire = hex(&format!(
        "07000000 05000000 47000000 02000000 6B76 35000000 {DESC_F32_2} 0800000000000000"
    ));
    let Message::TensorPut(p) = roundtrip(&wire, message_type::TENSOR_PUT, 5) else {
        panic!()
    };
    assert_eq!(p.tensor_key, "kv");
    assert_eq!(p.descriptor, hex(DESC_F32_2));
    assert_eq!(p.total_data_bytes, 8);
    // The byte-sequence prefix disagrees with the descriptor's own length.
    let bad = hex(&format!(
        "07000000 05000000 48000000 02000000 6B76 36000000 {DESC_F32_2} 00 0800000000000000"
    ));
    let e = Message::decode(&Header::decode(&bad).unwrap(), &bad[12..]).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidMessage);
}

#[test]
fn error_message_every_code() {
    // code 7 MESSAGE_TOO_LARGE, message "big".
    let wire = hex("09000000 03000000 0B000000 07000000 03000000 626967");
    let m = roundtrip(&wire, message_type::ERROR, 3);
    assert_eq!(
        m,
        Message::Error {
            code: ErrorCode::MessageTooLarge,
            message: "big".into()
        }
    );
    let names = [
        (1, "PROTOCOL_VERSION_MISMATCH"),
        (2, "UNKNOWN_TENSOR"),
        (3, "LAYOUT_UNAVAILABLE"),
        (4, "TRANSCODE_LIMIT_EXCEEDED"),
        (5, "DEVICE_UNAVAILABLE"),
        (6, "INVALID_MESSAGE"),
        (7, "MESSAGE_TOO_LARGE"),
        (8, "SHARD_MISMATCH"),
        (0xF0, "PRIVATE"),
        (0xFE, "PRIVATE"),
        (0xFF, "UNDEFINED"),
        (0, "UNDEFINED"),
    ];
    for (v, n) in names {
        let c = ErrorCode::from_u32(v);
        assert_eq!((c.as_u32(), c.name()), (v, n));
    }
    // Message text must be UTF-8.
    let bad = hex("09000000 03000000 09000000 06000000 01000000 FF");
    let e = Message::decode(&Header::decode(&bad).unwrap(), &bad[12..]).unwrap_err();
    assert!(e.detail.contains("UTF-8"), "{}", e.detail);
}

#[test]
fn ping_pong() {
    // S9: empty payload; PONG echoes the PING's stream_id.
    assert_eq!(
        roundtrip(&hex("0A000000 01000000 00000000"), message_type::PING, 1),
        Message::Ping(vec![])
    );
    assert_eq!(
        roundtrip(&hex("0B000000 01000000 00000000"), message_type::PONG, 1),
        Message::Pong(vec![])
    );
    // Any payload is accepted and kept (undefined by the spec).
    assert_eq!(
        roundtrip(
            &hex("0A000000 01000000 02000000 ABCD"),
            message_type::PING,
            1
        ),
        Message::Ping(vec![0xAB, 0xCD])
    );
}

#[test]
fn rdma_register() {
    // remote_addr 0x1000, length 8, rkey 4 bytes (a verbs rkey).
    let wire =
        hex("0C000000 07000000 18000000 0010000000000000 0800000000000000 04000000 DEADBEEF");
    let m = roundtrip(&wire, message_type::RDMA_REGISTER, 7);
    assert_eq!(
        m,
        Message::RdmaRegister(RdmaRegister {
            remote_addr: 0x1000,
            length: 8,
            rkey: vec![0xDE, 0xAD, 0xBE, 0xEF]
        })
    );
    // rkey length running past the payload.
    let bad = hex("0C000000 07000000 14000000 0010000000000000 0800000000000000 05000000");
    let e = Message::decode(&Header::decode(&bad).unwrap(), &bad[12..]).unwrap_err();
    assert!(e.detail.contains("rkey"), "{}", e.detail);
}

#[test]
fn private_and_unknown_types_are_kept_for_stepping_over() {
    let m = roundtrip(&hex("F0000000 02000000 01000000 7F"), 0xF0, 2);
    assert_eq!(
        m,
        Message::Private {
            message_type: 0xF0,
            payload: vec![0x7F]
        }
    );
    for ty in [0x00u32, 0x0E, 0xEF, 0xFF, 0x100, 0xFFFF_FFFF] {
        let wire = hex(&format!("{:08X} 02000000 02000000 0102", ty.swap_bytes()));
        let m = roundtrip(&wire, ty, 2);
        assert_eq!(
            m,
            Message::Unknown {
                message_type: ty,
                payload: vec![1, 2]
            }
        );
        assert_eq!(m.name(), "UNKNOWN");
    }
}

#[test]
fn framer_refuses_oversized_before_buffering_and_resyncs() {
    let mut f = Framer::new(16);
    // Header announcing 1 GiB of TENSOR_DATA; only the header is given.
    let p = f.push(&hex("05000000 01000000 00000040"));
    assert_eq!(p.consumed, 12);
    let Some(FrameEvent::TooLarge(h)) = p.event else {
        panic!("{:?}", p.event)
    };
    assert_eq!(h.payload_length, 0x4000_0000);
    assert!(f.buffered() <= 12, "buffered {}", f.buffered());
    assert_eq!(f.wanted(), 0x4000_0000);
    let e = FrameEvent::too_large_error(&h, 16);
    assert_eq!(e.code, ErrorCode::MessageTooLarge);
    // S17: the payload is skipped, then the next message decodes.
    let mut f = Framer::new(16);
    let mut input = hex("09000000 01000000 11000000");
    input.extend_from_slice(&[0x55; 17]);
    input.extend_from_slice(&hex("0A000000 01000000 00000000"));
    let ev = f.push_all(&input);
    assert_eq!(ev.len(), 2);
    assert!(matches!(ev[0], FrameEvent::TooLarge(_)));
    let FrameEvent::Frame(fr) = ev[1].clone() else {
        panic!()
    };
    assert_eq!(fr.decode().unwrap(), Message::Ping(vec![]));
    // Exactly the maximum is accepted.
    let mut f = Framer::new(4);
    let ev = f.push_all(&hex("0A000000 01000000 04000000 01020304"));
    assert!(matches!(&ev[..], [FrameEvent::Frame(_)]));
}

#[test]
fn framer_read_buf_path() {
    let wire = hex("05000000 07000000 0C000000 0400000000000000 0000803F");
    let mut f = Framer::new(64);
    let mut fed = 0;
    let mut out = None;
    while out.is_none() {
        let b = f.read_buf();
        let n = b.len().min(5).min(wire.len() - fed);
        b[..n].copy_from_slice(&wire[fed..fed + n]);
        fed += n;
        out = f.advance(n);
    }
    assert_eq!(fed, wire.len());
    let Some(FrameEvent::Frame(fr)) = out else {
        panic!()
    };
    assert_eq!(
        fr.decode().unwrap(),
        Message::TensorData {
            offset: 4,
            data: vec![0, 0, 0x80, 0x3F]
        }
    );
}

#[test]
fn encoder_refuses_wrong_layout_entry_forms() {
    let m = Message::TensorRequest(TensorRequest {
        tensor_key: "k".into(),
        preferred_layouts: vec![LayoutEntry::Tag(0xF1)],
        preferred_device: 0,
        min_alignment: 64,
        request_flags: 0,
    });
    let mut out = vec![9];
    assert_eq!(
        m.encode_into(1, &mut out).unwrap_err().code,
        ErrorCode::InvalidMessage
    );
    assert_eq!(out, vec![9], "output untouched on error");
}
