//! Hostile peers on 127.0.0.1, each bounded in time and count: random and truncated
//! frames, oversized payload_length, unknown message types, stalls mid-handshake
//! and mid-frame, a PUT flood beyond the store cap, 1,000 concurrent connections.
//! After each: the server answered as B.16 says, freed the connection (live count
//! back to 0), never panicked, and still serves a well-behaved client.

mod common;

use common::*;
use futures_util::future::join_all;
use hurray_core::ElementType;
use hurray_io::{Item, Tensor};
use hurray_net::wire::{code, msg, ErrorCode, Header, Message, PutMsg, TensorRequest};
use hurray_net::{Client, ClientOptions, GetOptions, RunningServer, ServerConfig};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn tensor(n: usize, seed: u64) -> Tensor {
    Tensor::from_dense(ElementType::Uint8, &[n as u64], &pattern(n, seed)).unwrap()
}

/// A TENSOR_REQUEST for `key` on stream `sid`.
fn request(key: &str, sid: u32) -> Vec<u8> {
    Message::TensorRequest(TensorRequest {
        tensor_key: key.into(),
        preferred_layouts: vec![],
        preferred_device: 0,
        min_alignment: 64,
        request_flags: 0,
    })
    .encode(sid)
    .unwrap()
}

/// The next message is an ERROR with `want`.
async fn assert_error(c: &mut tokio::net::TcpStream, want: ErrorCode) {
    match read_msg(c).await {
        Some(Message::Error { code, .. }) => assert_eq!(code, want),
        m => panic!("expected ERROR {want}, got {m:?}"),
    }
}

fn quick() -> ServerConfig {
    ServerConfig {
        handshake_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(300),
        shutdown_grace: Duration::from_millis(200),
        ..ServerConfig::default()
    }
}

async fn start(cfg: ServerConfig) -> (tempfile::TempDir, RunningServer) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.hrry");
    write_file(&path, &[("w".into(), Item::Tensor(tensor(10_000, 1)))]);
    let s = serve(&[&path], cfg).await;
    (dir, s)
}

/// The server is healthy: a well-behaved client gets `w`, nothing panicked, and
/// every other connection is gone within 5 s.
async fn still_serving(s: &RunningServer) {
    let mut c = Client::connect(s.local_addr(), ClientOptions::default())
        .await
        .unwrap();
    let got = c.get("w", &GetOptions::default()).await.unwrap();
    assert_eq!(got, Item::Tensor(tensor(10_000, 1)));
    drop(c);
    assert!(
        eventually(Duration::from_secs(5), || s.stats().live_connections() == 0).await,
        "{} connections still live",
        s.stats().live_connections()
    );
    assert_eq!(s.stats().panics(), 0);
}

/// Reads until the server closes; panics if it does not within `limit`.
async fn closes_within(s: &mut tokio::net::TcpStream, limit: Duration) {
    let mut b = vec![0u8; 1 << 16];
    let r = tokio::time::timeout(limit, async {
        loop {
            match s.read(&mut b).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(r.is_ok(), "the server did not close within {limit:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_frames_are_answered_or_dropped_and_the_server_keeps_serving() {
    let (_d, s) = start(quick()).await;
    let mut rng = 0x1234_5678_9ABC_DEF0u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut tasks = Vec::new();
    for i in 0..200u64 {
        let len = 1 + (next() % 300) as usize;
        let mut bytes = pattern(len, next());
        if i % 3 == 0 && len >= 12 {
            // A plausible header with a random type and a small payload length.
            bytes[0..4].copy_from_slice(&((next() % 20) as u32).to_le_bytes());
            bytes[8..12].copy_from_slice(&((next() % 64) as u32).to_le_bytes());
        }
        let addr = s.local_addr();
        tasks.push(tokio::spawn(async move {
            let mut c = raw(addr, i % 2 == 0, &bytes).await;
            closes_within(&mut c, Duration::from_secs(5)).await;
        }));
        if tasks.len() == 20 {
            for t in tasks.drain(..) {
                t.await.unwrap();
            }
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    still_serving(&s).await;
    s.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_frames_time_out_and_free_the_connection() {
    let (_d, s) = start(quick()).await;
    let req = Message::TensorRequest(TensorRequest {
        tensor_key: "w".into(),
        preferred_layouts: vec![],
        preferred_device: 0,
        min_alignment: 64,
        request_flags: 0,
    })
    .encode(1)
    .unwrap();
    let hello = client_hello();
    let mut tasks = Vec::new();
    for cut in 1..req.len() {
        let addr = s.local_addr();
        let part = req[..cut].to_vec();
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            let mut c = raw(addr, true, &part).await;
            closes_within(&mut c, Duration::from_secs(3)).await;
            t.elapsed()
        }));
    }
    for cut in 1..hello.len() {
        let addr = s.local_addr();
        let part = hello[..cut].to_vec();
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            let mut c = raw(addr, false, &part).await;
            closes_within(&mut c, Duration::from_secs(3)).await;
            t.elapsed()
        }));
    }
    for t in tasks {
        // Closed by the timeout (300 ms), not before.
        assert!(t.await.unwrap() >= Duration::from_millis(250));
    }
    still_serving(&s).await;
    s.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_payload_length_is_message_too_large() {
    let (_d, s) = start(quick()).await;
    let max = ServerConfig::default().proto.max_message_size;
    // After the handshake: ERROR on that stream; the server steps over the payload
    // (S17) and the connection goes on serving.
    for t in [msg::TENSOR_REQUEST, msg::TENSOR_PUT] {
        let h = Header {
            message_type: t,
            stream_id: 1,
            payload_length: max + 1,
        };
        let mut b = h.encode().to_vec();
        b.extend_from_slice(&vec![0u8; max as usize + 1]);
        b.extend_from_slice(&request("w", 3));
        let mut c = raw(s.local_addr(), true, &b).await;
        assert_error(&mut c, ErrorCode::MessageTooLarge).await;
        assert!(matches!(
            read_msg(&mut c).await,
            Some(Message::TensorDescriptor(_))
        ));
    }
    // Before it: ERROR, and the connection closes.
    let h = Header {
        message_type: msg::CLIENT_HELLO,
        stream_id: 1,
        payload_length: u32::MAX,
    };
    let mut c = raw(s.local_addr(), false, &h.encode()).await;
    assert_eq!(
        expect_error_then_close(&mut c).await,
        ErrorCode::MessageTooLarge
    );
    still_serving(&s).await;
    s.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_message_types_are_invalid_message() {
    let (_d, s) = start(quick()).await;
    for t in [0x00u32, 0x0E, 0xEF, 0xF0, 0xFF, 0x100, u32::MAX] {
        let h = Header {
            message_type: t,
            stream_id: 1,
            payload_length: 3,
        };
        let mut b = h.encode().to_vec();
        b.extend_from_slice(&[1, 2, 3]);
        b.extend_from_slice(&request("w", 3));
        let mut c = raw(s.local_addr(), true, &b).await;
        // ERROR on that stream; stepped over; the next request is served (B.2, B.4).
        assert_error(&mut c, ErrorCode::InvalidMessage).await;
        assert!(
            matches!(read_msg(&mut c).await, Some(Message::TensorDescriptor(_))),
            "type {t:#x}"
        );
    }
    // Before the hello, anything but CLIENT_HELLO is refused too (B.7 rule 1).
    let mut c = raw(
        s.local_addr(),
        false,
        &Message::Ping(vec![]).encode(1).unwrap(),
    )
    .await;
    assert_eq!(
        expect_error_then_close(&mut c).await,
        ErrorCode::InvalidMessage
    );
    still_serving(&s).await;
    s.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stall_mid_handshake_times_out_and_frees_the_connection() {
    let (_d, s) = start(quick()).await;
    let mut conns = Vec::new();
    for _ in 0..20 {
        conns.push(raw(s.local_addr(), false, &client_hello()[..5]).await);
    }
    assert!(s.stats().live_connections() >= 1);
    for c in &mut conns {
        assert_eq!(expect_error_then_close(c).await, code::TIMEOUT);
    }
    // Resources freed while the stalled clients still hold their sockets open.
    assert!(eventually(Duration::from_secs(3), || s.stats().live_connections() == 0).await);
    still_serving(&s).await;
    drop(conns);
    s.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stall_mid_frame_times_out_and_releases_the_put_reservation() {
    let (_d, s) = start(quick()).await;
    let t = tensor(1 << 20, 3);
    let put = Message::TensorPut(PutMsg {
        tensor_key: "p".into(),
        descriptor: t.descriptor().encode().unwrap(),
        total_data_bytes: t.data_len(),
    })
    .encode(1)
    .unwrap();
    let mut b = put;
    b.extend_from_slice(&hurray_net::wire::TensorData::encode_prefix(1, 0, 65536).unwrap());
    b.extend_from_slice(&[7u8; 1000]);
    let mut c = raw(s.local_addr(), true, &b).await;
    // The reservation is taken while the frame is pending...
    assert!(
        eventually(Duration::from_secs(2), || s.stats().store_bytes()
            >= 1 << 20)
        .await
    );
    // ...and released when the stall times out.
    assert_eq!(expect_error_then_close(&mut c).await, code::TIMEOUT);
    assert!(eventually(Duration::from_secs(3), || s.stats().store_bytes() == 0).await);
    assert_eq!(s.stats().store_len(), 0);
    still_serving(&s).await;
    s.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_flood_beyond_the_store_cap_is_refused_and_the_store_stays_under_it() {
    let cap = 1u64 << 20;
    let (_d, s) = start(ServerConfig {
        store_cap: cap,
        max_put_bytes: cap,
        ..quick()
    })
    .await;
    let stats = s.stats().clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let watch = tokio::spawn(async move {
        let mut peak = 0;
        while !stop2.load(std::sync::atomic::Ordering::SeqCst) {
            peak = peak.max(stats.store_bytes());
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        peak
    });
    let mut tasks = Vec::new();
    for w in 0..4u64 {
        let addr = s.local_addr();
        tasks.push(tokio::spawn(async move {
            let (mut ok, mut refused) = (0, 0);
            let mut c = Client::connect(addr, ClientOptions::default())
                .await
                .unwrap();
            for i in 0..16u64 {
                let t = tensor(64 << 10, w * 100 + i);
                match c.put_tensor(&format!("k{w}.{i}"), &t).await {
                    Ok(()) => ok += 1,
                    Err(e) => {
                        assert_eq!(e.code(), Some(code::STORE_FULL), "{e}");
                        refused += 1;
                        c = Client::connect(addr, ClientOptions::default())
                            .await
                            .unwrap();
                    }
                }
            }
            (ok, refused)
        }));
    }
    let (mut ok, mut refused) = (0, 0);
    for t in tasks {
        let (o, r) = t.await.unwrap();
        ok += o;
        refused += r;
    }
    assert_eq!(ok + refused, 64);
    assert!(refused >= 40, "only {refused} refused");
    assert!((10..=15).contains(&ok), "{ok} accepted");
    assert_eq!(s.stats().store_len(), ok);
    assert!(s.stats().store_bytes() <= cap);
    // One more PUT larger than the whole cap is refused outright.
    let mut c = Client::connect(s.local_addr(), ClientOptions::default())
        .await
        .unwrap();
    let e = c.put_tensor("huge", &tensor(2 << 20, 9)).await.unwrap_err();
    assert_eq!(e.code(), Some(code::STORE_FULL));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let peak = watch.await.unwrap();
    assert!(
        peak <= cap && peak >= 10 * (64 << 10),
        "peak store bytes {peak}"
    );
    still_serving(&s).await;
    assert!(s.stats().store_bytes() <= cap);
    s.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_connections_are_all_served() {
    // 1,001 client sockets and 1,000 server sockets live in this process at once.
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let want = 2200u64;
    let lim = getrlimit(Resource::Nofile);
    if lim.current.is_some_and(|c| c < want) {
        let raised = Rlimit {
            current: Some(lim.maximum.map_or(want, |m| m.min(want))),
            maximum: lim.maximum,
        };
        setrlimit(Resource::Nofile, raised).unwrap();
    }
    let now = getrlimit(Resource::Nofile).current;
    assert!(
        now.is_none_or(|c| c >= want),
        "open-file limit {now:?} below {want}: raise the hard limit (ulimit -Hn)"
    );
    let (_d, s) = start(ServerConfig {
        max_connections: 1000,
        ..ServerConfig::default()
    })
    .await;
    let addr = s.local_addr();
    let opts = ClientOptions {
        connect_timeout: Duration::from_secs(30),
        ..ClientOptions::default()
    };
    let clients = join_all((0..1000).map(|_| Client::connect(addr, opts.clone()))).await;
    let mut clients: Vec<Client> = clients.into_iter().map(Result::unwrap).collect();
    assert_eq!(s.stats().live_connections(), 1000);
    // The 1001st is refused with BUSY while the thousand are open.
    let e = Client::connect(addr, opts.clone()).await.unwrap_err();
    assert_eq!(e.code(), Some(code::BUSY), "{e}");
    let want = Item::Tensor(tensor(10_000, 1));
    let go = GetOptions::default();
    let gets = join_all(clients.iter_mut().map(|c| c.get("w", &go))).await;
    for g in gets {
        assert_eq!(g.unwrap(), want);
    }
    drop(clients);
    assert!(
        eventually(Duration::from_secs(10), || s.stats().live_connections()
            == 0)
        .await
    );
    still_serving(&s).await;
    s.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_vanishing_mid_transfer_leaves_the_server_serving() {
    // In-process variant of the SIGKILL test (hurray-cli's tests kill a real
    // `hurray get`): read a few bytes of a 64 MiB response, then drop the socket.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.hrry");
    write_file(
        &path,
        &[
            ("w".into(), Item::Tensor(tensor(10_000, 1))),
            ("big".into(), Item::Tensor(tensor(64 << 20, 2))),
        ],
    );
    let s = serve(&[&path], quick()).await;
    for _ in 0..5 {
        let req = Message::TensorRequest(TensorRequest {
            tensor_key: "big".into(),
            preferred_layouts: vec![],
            preferred_device: 0,
            min_alignment: 64,
            request_flags: 0,
        })
        .encode(1)
        .unwrap();
        let mut c = raw(s.local_addr(), true, &req).await;
        let mut b = vec![0u8; 1 << 20];
        c.read_exact(&mut b).await.unwrap();
        c.shutdown().await.ok();
        drop(c);
    }
    still_serving(&s).await;
    s.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_refuses_an_oversized_message_from_a_hostile_server() {
    // A fake server: a valid SERVER_HELLO, then a TENSOR_DESCRIPTOR one byte over the
    // client's advertised maximum; the client must answer MESSAGE_TOO_LARGE (B.17).
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let max = 4096u32;
    let fake = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let _hello = read_msg(&mut s).await.expect("CLIENT_HELLO");
        let hello = Message::ServerHello(hurray_net::wire::Hello {
            protocol_version: 1,
            max_message_size: 1 << 20,
            capability_flags: 0,
            supported_layouts: vec![],
            supported_devices: vec![0],
            supported_memory_classes: None,
        });
        s.write_all(&hello.encode(1).unwrap()).await.unwrap();
        let req = read_msg(&mut s).await.expect("TENSOR_REQUEST");
        assert!(matches!(req, Message::TensorRequest(_)));
        let h = Header {
            message_type: msg::TENSOR_DESCRIPTOR,
            stream_id: 1,
            payload_length: max + 1,
        };
        s.write_all(&h.encode()).await.unwrap();
        s.write_all(&vec![0u8; max as usize + 1]).await.unwrap();
        // The client's ERROR comes back.
        read_msg(&mut s).await
    });
    let mut opts = ClientOptions::default();
    opts.proto.max_message_size = max;
    let mut c = Client::connect(addr, opts).await.unwrap();
    let e = c.get("w", &GetOptions::default()).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::MessageTooLarge), "{e}");
    match fake.await.unwrap() {
        Some(Message::Error { code, .. }) => assert_eq!(code, ErrorCode::MessageTooLarge),
        m => panic!("expected the client's ERROR, got {m:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partly_received_messages_past_the_buffered_bytes_limit_get_busy() {
    let (_d, s) = start(ServerConfig {
        max_buffered_bytes: 64 << 10,
        ..quick()
    })
    .await;
    // A 200 KiB message arriving in pieces: the connection holding more than 64 KiB
    // of it is closed with BUSY; the counter returns to 0.
    let h = Header {
        message_type: msg::TENSOR_REQUEST,
        stream_id: 1,
        payload_length: 200 << 10,
    };
    let mut c = raw(s.local_addr(), true, &h.encode()).await;
    let piece = vec![0u8; 16 << 10];
    for _ in 0..6 {
        if c.write_all(&piece).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(expect_error_then_close(&mut c).await, code::BUSY);
    assert!(eventually(Duration::from_secs(3), || s.stats().buffered_bytes() == 0).await);
    still_serving(&s).await;
    s.shutdown().await.unwrap();
}
