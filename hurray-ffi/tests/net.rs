//! The blocking network client through the C face (`hurray_net_client_*`) against an
//! in-process `hurray-net` server on 127.0.0.1: put/get round trip, remote ERROR codes
//! as statuses and categories, what the server negotiated, timeouts, and a cancel
//! from another thread that releases the blocked call.

mod common;

use common::*;
use hurray_core::ElementType;
use hurray_ffi::abi::*;
use hurray_ffi::item::*;
use hurray_ffi::net::*;
use hurray_ffi::tensor::*;
use hurray_ffi::*;
use std::ffi::{c_void, CString};
use std::ptr;
use std::time::{Duration, Instant};

/// An in-process server (PUT store, no files) on its own runtime.
struct TestServer {
    rt: tokio::runtime::Runtime,
    server: Option<hurray_net::RunningServer>,
    port: u16,
}

impl TestServer {
    fn start() -> TestServer {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = rt
            .block_on(async {
                hurray_net::Server::bind(
                    "127.0.0.1:0".parse().unwrap(),
                    Vec::new(),
                    hurray_net::ServerConfig::default(),
                )
                .await?
                .spawn()
            })
            .unwrap();
        let port = server.local_addr().port();
        TestServer {
            rt,
            server: Some(server),
            port,
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            let _ = self.rt.block_on(s.shutdown());
        }
    }
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] ^ seed)
        .collect()
}

fn u8_tensor(bytes: &[u8]) -> *mut HurrayTensor {
    let t =
        hurray_io::Tensor::from_dense(ElementType::Uint8, &[bytes.len() as u64], bytes).unwrap();
    HurrayTensor::from_io(t).unwrap().into_raw()
}

fn client(opts: &HurrayNetClientOptions) -> *mut HurrayNetClient {
    let mut c = ptr::null_mut();
    // SAFETY: valid pointers.
    ok(unsafe { hurray_net_client_new(opts, &mut c) });
    c
}

fn default_options() -> HurrayNetClientOptions {
    let mut o = std::mem::MaybeUninit::uninit();
    // SAFETY: valid out-pointer; written on success.
    ok(unsafe { hurray_net_client_options_default(o.as_mut_ptr()) });
    // SAFETY: written above.
    unsafe { o.assume_init() }
}

fn connect(c: *mut HurrayNetClient, port: u16) -> HurrayStatus {
    // SAFETY: live client, NUL-terminated host.
    unsafe { hurray_net_client_connect(c, c"127.0.0.1".as_ptr(), port) }
}

fn destroy(mut c: *mut HurrayNetClient) {
    // SAFETY: c is live; nulled.
    ok(unsafe { hurray_net_client_destroy(&mut c) });
    assert!(c.is_null());
}

/// The bytes of buffer 0 of the item's tensor.
fn item_bytes(item: *const HurrayItem) -> Vec<u8> {
    let mut t = ptr::null();
    let mut data: *const c_void = ptr::null();
    let mut len = 0u64;
    // SAFETY: live item; outs valid.
    unsafe {
        ok(hurray_item_tensor(item, &mut t));
        ok(hurray_tensor_buffer_data(t, 0, &mut data, &mut len));
        std::slice::from_raw_parts(data.cast::<u8>(), len as usize).to_vec()
    }
}

#[test]
fn put_then_get_round_trips_and_reports_the_negotiation() {
    let _l = live();
    let srv = TestServer::start();
    let c = client(&default_options());
    ok(connect(c, srv.port));

    let mut info = HurrayNetServerInfo::default();
    // SAFETY: live client, valid out.
    ok(unsafe { hurray_net_client_server_info(c, &mut info) });
    assert_eq!(info.protocol_version, hurray_net::wire::PROTOCOL_VERSION);
    assert!(info.max_message_size >= 4096, "{info:?}");
    assert_eq!(
        info.capability_flags & hurray_net::wire::capability::PARALLEL_STREAMS,
        hurray_net::wire::capability::PARALLEL_STREAMS,
        "hurray-net advertises parallel streams: {info:?}"
    );

    // 300 KB: several 4 MiB-capped frames are not needed, but more than one read is.
    let bytes = pattern(300_000, 7);
    let mut t = u8_tensor(&bytes);
    let key = CString::new("weights/w0").unwrap();
    // SAFETY: live client and tensor.
    ok(unsafe { hurray_net_client_put(c, key.as_ptr(), t) });
    // SAFETY: live tensor, nulled.
    ok(unsafe { hurray_tensor_destroy(&mut t) });

    let mut item = ptr::null_mut();
    // SAFETY: live client; NULL options are the defaults.
    ok(unsafe { hurray_net_client_get(c, key.as_ptr(), ptr::null(), &mut item) });
    assert_eq!(item_bytes(item), bytes);
    // SAFETY: live item, nulled.
    ok(unsafe { hurray_item_destroy(&mut item) });

    // With options: row-major preferred, parallel allowed.
    let layouts = [0x01u8];
    let mut go = std::mem::MaybeUninit::uninit();
    // SAFETY: valid out.
    ok(unsafe { hurray_net_get_options_default(go.as_mut_ptr()) });
    // SAFETY: written above.
    let mut go: HurrayNetGetOptions = unsafe { go.assume_init() };
    assert_eq!(go.min_alignment, 64);
    go.preferred_layouts = layouts.as_ptr();
    go.preferred_layout_count = 1;
    go.parallel = 1;
    // SAFETY: live client; options valid for the call.
    ok(unsafe { hurray_net_client_get(c, key.as_ptr(), &go, &mut item) });
    assert_eq!(item_bytes(item), bytes);
    // SAFETY: live item, nulled.
    ok(unsafe { hurray_item_destroy(&mut item) });

    // A flag other than 0/1 is refused before anything is sent.
    go.parallel = 2;
    // SAFETY: as above.
    let s = unsafe { hurray_net_client_get(c, key.as_ptr(), &go, &mut item) };
    err(s, HURRAY_ERR_INVALID_ARGUMENT, "parallel");
    assert!(item.is_null());
    destroy(c);
}

#[test]
fn unknown_key_is_not_found_with_its_b16_code_and_the_connection_stays_usable() {
    let _l = live();
    let srv = TestServer::start();
    let c = client(&default_options());
    ok(connect(c, srv.port));
    let key = CString::new("no/such/tensor").unwrap();
    let mut item = ptr::null_mut();
    // SAFETY: live client, valid outs.
    let s = unsafe { hurray_net_client_get(c, key.as_ptr(), ptr::null(), &mut item) };
    err(s, HURRAY_ERR_NOT_FOUND, "UNKNOWN_TENSOR (0x02)");
    assert_eq!(hurray_last_error_net_code(), 0x02);
    let mut cat = 0;
    // SAFETY: valid out.
    ok(unsafe { hurray_status_category(s, &mut cat) });
    assert_eq!(cat, HURRAY_CATEGORY_NOT_FOUND);
    assert!(item.is_null());

    // Same connection: a put and a get still work.
    let mut t = u8_tensor(&[1, 2, 3]);
    // SAFETY: live client and tensor.
    ok(unsafe { hurray_net_client_put(c, key.as_ptr(), t) });
    // SAFETY: live tensor.
    ok(unsafe { hurray_tensor_destroy(&mut t) });
    // SAFETY: as above.
    ok(unsafe { hurray_net_client_get(c, key.as_ptr(), ptr::null(), &mut item) });
    assert_eq!(item_bytes(item), [1, 2, 3]);
    // SAFETY: live item.
    ok(unsafe { hurray_item_destroy(&mut item) });

    // A non-network failure clears the code.
    // SAFETY: NULL out is reported.
    let s = unsafe { hurray_net_client_server_info(c, ptr::null_mut()) };
    err(s, HURRAY_ERR_NULL_POINTER, "out");
    assert_eq!(hurray_last_error_net_code(), 0);
    destroy(c);
}

#[test]
fn statuses_of_remote_codes_have_the_categories_bindings_map() {
    for (code, status) in [
        (0x01, HURRAY_ERR_NOT_APPLICABLE),
        (0x02, HURRAY_ERR_NOT_FOUND),
        (0x03, HURRAY_ERR_NOT_APPLICABLE),
        (0x04, HURRAY_ERR_LIMIT),
        (0x05, HURRAY_ERR_NOT_APPLICABLE),
        (0x06, HURRAY_ERR_FORMAT),
        (0x07, HURRAY_ERR_LIMIT),
        (0x08, HURRAY_ERR_FORMAT),
        (0xF0, HURRAY_ERR_LIMIT),
        (0xF1, HURRAY_ERR_LIMIT),
        (0xF2, HURRAY_ERR_LIMIT),
        (0xF3, HURRAY_ERR_TIMEOUT),
        (0xF4, HURRAY_ERR_IO),
        (0x99, HURRAY_ERR_IO),
    ] {
        assert_eq!(status_for_net_code(code), status, "code 0x{code:02X}");
    }
    assert_eq!(category(HURRAY_ERR_TIMEOUT), ErrorCategory::Io);
    assert_eq!(category(HURRAY_ERR_CANCELLED), ErrorCategory::State);
}

#[test]
fn calls_before_connect_refused_connect_and_connect_timeout() {
    let _l = live();
    let mut o = default_options();
    o.connect_timeout_ms = 300;
    let c = client(&o);
    let key = CString::new("k").unwrap();
    let mut item = ptr::null_mut();
    // SAFETY: live client.
    let s = unsafe { hurray_net_client_get(c, key.as_ptr(), ptr::null(), &mut item) };
    err(s, HURRAY_ERR_STATE, "not connected");

    // Refused: a port nobody listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    err(connect(c, port), HURRAY_ERR_IO, "network i/o");
    assert_ne!(hurray_last_error_os_error(), 0);

    // A listener that accepts and never answers the hello: the connect timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    err(connect(c, port), HURRAY_ERR_TIMEOUT, "connecting");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_secs(5),
        "{took:?}"
    );
    // The options are checked.
    let mut bad = default_options();
    bad.max_message_size = 100;
    let mut c2 = ptr::null_mut();
    // SAFETY: valid pointers.
    let s = unsafe { hurray_net_client_new(&bad, &mut c2) };
    err(s, HURRAY_ERR_INVALID_ARGUMENT, "max_message_size");
    assert!(c2.is_null());
    destroy(c);
}

/// A raw pointer that may cross threads (the client is thread-safe for cancel).
#[derive(Clone, Copy)]
struct Shared(*mut HurrayNetClient);
// SAFETY: HurrayNetClient is Sync: calls are serialised inside and cancel is atomic.
unsafe impl Send for Shared {}

#[test]
fn cancel_from_another_thread_releases_a_blocked_connect() {
    let _l = live();
    // Accepts, never answers: the connect blocks (default 10 s timeout).
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let c = Shared(client(&default_options()));
    let started = Instant::now();
    let blocked = std::thread::spawn(move || {
        let c = c;
        let s = connect(c.0, port);
        (s, last_error())
    });
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: live client; cancel is the one call allowed concurrently.
    ok(unsafe { hurray_net_client_cancel(c.0) });
    let (s, msg) = blocked.join().unwrap();
    let took = started.elapsed();
    assert_eq!(s, HURRAY_ERR_CANCELLED, "{msg}");
    assert!(msg.contains("cancelled"), "{msg}");
    assert!(took < Duration::from_secs(3), "the cancel took {took:?}");
    // Sticky: later calls are cancelled too, without blocking.
    err(connect(c.0, port), HURRAY_ERR_CANCELLED, "cancelled");
    // Cancelling again is harmless.
    // SAFETY: live client.
    ok(unsafe { hurray_net_client_cancel(c.0) });
    destroy(c.0);
}

/// A proxy on 127.0.0.1 in front of `upstream` that passes everything from the
/// client and only the first `limit` bytes from the server (the rest is read and
/// dropped): a transfer through it stalls midway. Returns its port.
fn stalling_proxy(upstream: u16, limit: usize) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (client, _) = l.accept().unwrap();
        let server = std::net::TcpStream::connect(("127.0.0.1", upstream)).unwrap();
        let (mut c_rd, mut s_wr) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut c_rd, &mut s_wr);
            let _ = s_wr.shutdown(std::net::Shutdown::Both);
        });
        let (mut s_rd, mut c_wr) = (server, client);
        let mut passed = 0;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match s_rd.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let pass = n.min(limit - passed);
            if pass > 0 && c_wr.write_all(&buf[..pass]).is_err() {
                break;
            }
            passed += pass;
        }
    });
    port
}

#[test]
fn cancel_mid_get_releases_the_call_and_the_server_stays_healthy() {
    let _l = live();
    let srv = TestServer::start();
    let bytes = pattern(6 << 20, 5);
    let key = CString::new("big/activation").unwrap();
    let direct = client(&default_options());
    ok(connect(direct, srv.port));
    let mut t = u8_tensor(&bytes);
    // SAFETY: live client and tensor.
    ok(unsafe { hurray_net_client_put(direct, key.as_ptr(), t) });
    // SAFETY: live tensor.
    ok(unsafe { hurray_tensor_destroy(&mut t) });

    // Through the proxy the response stops 200 KB in: inside the data frames.
    let port = stalling_proxy(srv.port, 200_000);
    let c = Shared(client(&default_options()));
    ok(connect(c.0, port));
    let live_before = hurray_debug_live_objects();
    let k = key.clone();
    let blocked = std::thread::spawn(move || {
        let c = c;
        let mut item = ptr::null_mut();
        // SAFETY: live client; the key outlives the call.
        let s = unsafe { hurray_net_client_get(c.0, k.as_ptr(), ptr::null(), &mut item) };
        (s, item.is_null(), last_error())
    });
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    // SAFETY: live client; cancel is the one call allowed concurrently.
    ok(unsafe { hurray_net_client_cancel(c.0) });
    let (s, no_item, msg) = blocked.join().unwrap();
    assert_eq!(s, HURRAY_ERR_CANCELLED, "{msg}");
    assert!(no_item);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        hurray_debug_live_objects(),
        live_before,
        "the partial item is freed"
    );
    destroy(c.0);

    // The server keeps serving: the direct client gets every byte, and the
    // cancelled connection goes away.
    let mut item = ptr::null_mut();
    // SAFETY: live client.
    ok(unsafe { hurray_net_client_get(direct, key.as_ptr(), ptr::null(), &mut item) });
    assert_eq!(item_bytes(item), bytes);
    // SAFETY: the item is the caller's.
    ok(unsafe { hurray_item_destroy(&mut item) });
    destroy(direct);
    let stats = srv.server.as_ref().unwrap().stats();
    let deadline = Instant::now() + Duration::from_secs(10);
    while stats.live_connections() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        stats.live_connections(),
        0,
        "the server freed both connections"
    );
}

#[test]
fn call_timeout_closes_the_connection_and_connect_may_be_retried() {
    let _l = live();
    let srv = TestServer::start();
    let mut o = default_options();
    o.call_timeout_ms = 1;
    let c = client(&o);
    ok(connect(c, srv.port));
    // 8 MiB cannot be put in 1 ms on a loaded machine: the call times out.
    let bytes = pattern(8 << 20, 3);
    let mut t = u8_tensor(&bytes);
    let key = CString::new("big").unwrap();
    // SAFETY: live client and tensor.
    let s = unsafe { hurray_net_client_put(c, key.as_ptr(), t) };
    err(s, HURRAY_ERR_TIMEOUT, "putting");
    let mut item = ptr::null_mut();
    // SAFETY: live client.
    let s = unsafe { hurray_net_client_get(c, key.as_ptr(), ptr::null(), &mut item) };
    err(s, HURRAY_ERR_STATE, "not connected");
    // Connecting again works on the same handle.
    ok(connect(c, srv.port));
    // SAFETY: live tensor.
    ok(unsafe { hurray_tensor_destroy(&mut t) });
    destroy(c);
}

// ------------------------------------------------ the sans-io connection (HurrayNetConn)

use hurray_ffi::net_conn::*;
use std::io::{Read, Write};

/// Drives `conn` over `sock` (write every transmit, read into `read_buf`) until an
/// event other than NONE arrives; returns it.
fn next_event(conn: *mut HurrayNetConn, sock: &mut std::net::TcpStream) -> HurrayNetEvent {
    loop {
        loop {
            let mut t = HurrayNetTransmit::default();
            // SAFETY: live connection, valid out.
            ok(unsafe { hurray_net_conn_poll_transmit(conn, &mut t) });
            // SAFETY: the pointers are valid until the next poll_transmit.
            let part = |p: *const u8, n: u64| unsafe { std::slice::from_raw_parts(p, n as usize) };
            match t.kind {
                HURRAY_NET_TRANSMIT_NONE => break,
                HURRAY_NET_TRANSMIT_BYTES => sock.write_all(part(t.bytes, t.bytes_len)).unwrap(),
                HURRAY_NET_TRANSMIT_DATA => {
                    assert_eq!(t.bytes_len, 20, "a data frame's prefix");
                    sock.write_all(part(t.bytes, t.bytes_len)).unwrap();
                    sock.write_all(part(t.data, t.data_len)).unwrap();
                }
                HURRAY_NET_TRANSMIT_CLOSE => {
                    sock.shutdown(std::net::Shutdown::Write).unwrap();
                }
                k => panic!("transmit kind {k}"),
            }
        }
        let mut e = HurrayNetEvent::default();
        // SAFETY: live connection, valid out.
        ok(unsafe { hurray_net_conn_poll_event(conn, &mut e) });
        if e.kind != HURRAY_NET_EVENT_NONE {
            return e;
        }
        let (mut p, mut n) = (ptr::null_mut(), 0u64);
        // SAFETY: live connection, valid outs.
        ok(unsafe { hurray_net_conn_read_buf(conn, &mut p, &mut n) });
        assert!(n > 0);
        // SAFETY: the slice is writable until the next call on the connection.
        let buf = unsafe { std::slice::from_raw_parts_mut(p, n as usize) };
        let got = sock.read(buf).unwrap();
        assert!(got > 0, "the server closed the connection");
        // SAFETY: live connection.
        ok(unsafe { hurray_net_conn_advance(conn, got as u64) });
    }
}

#[test]
fn sans_io_connection_puts_and_gets_over_a_std_socket() {
    let _l = live();
    let srv = TestServer::start();
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut conn = ptr::null_mut();
    // SAFETY: NULL options are the defaults; valid out.
    ok(unsafe { hurray_net_conn_new(ptr::null(), &mut conn) });
    let key = CString::new("kv/cache").unwrap();
    let mut sid = 0u32;

    // Before the handshake: requests are refused, advance needs read_buf first.
    // SAFETY: live connection.
    let s = unsafe { hurray_net_conn_get(conn, key.as_ptr(), ptr::null(), &mut sid) };
    assert_eq!(s, HURRAY_ERR_STATE, "{}", last_error());
    // SAFETY: live connection.
    err(
        unsafe { hurray_net_conn_advance(conn, 1) },
        HURRAY_ERR_STATE,
        "read_buf",
    );
    let mut info = HurrayNetServerInfo::default();
    // SAFETY: live connection.
    let s = unsafe { hurray_net_conn_server_info(conn, &mut info) };
    err(s, HURRAY_ERR_STATE, "not connected");

    let e = next_event(conn, &mut sock);
    assert_eq!(e.kind, HURRAY_NET_EVENT_CONNECTED);
    // SAFETY: live connection.
    ok(unsafe { hurray_net_conn_server_info(conn, &mut info) });
    assert_eq!(info.protocol_version, hurray_net::wire::PROTOCOL_VERSION);

    // 9 MB: three data frames at the 4 MiB PUT frame cap, written from the tensor.
    let bytes = pattern(9_000_000, 11);
    let mut t = u8_tensor(&bytes);
    // SAFETY: live connection and tensor.
    ok(unsafe { hurray_net_conn_put(conn, key.as_ptr(), t, &mut sid) });
    // The queued frames share the tensor's memory: the handle may go now.
    // SAFETY: live tensor.
    ok(unsafe { hurray_tensor_destroy(&mut t) });
    let e = next_event(conn, &mut sock);
    assert_eq!((e.kind, e.stream_id), (HURRAY_NET_EVENT_PUT_ACKED, sid));

    // SAFETY: live connection.
    ok(unsafe { hurray_net_conn_get(conn, key.as_ptr(), ptr::null(), &mut sid) });
    let e = next_event(conn, &mut sock);
    assert_eq!((e.kind, e.stream_id), (HURRAY_NET_EVENT_GOT, sid));
    let mut item = e.item;
    assert_eq!(item_bytes(item), bytes);
    // SAFETY: the GOT item is the caller's.
    ok(unsafe { hurray_item_destroy(&mut item) });

    // An unknown key: FAILED with its status, B.16 code and the server's message.
    let missing = CString::new("missing").unwrap();
    // SAFETY: live connection.
    ok(unsafe { hurray_net_conn_get(conn, missing.as_ptr(), ptr::null(), &mut sid) });
    let e = next_event(conn, &mut sock);
    assert_eq!((e.kind, e.stream_id), (HURRAY_NET_EVENT_FAILED, sid));
    assert_eq!(
        (e.status, e.net_code, e.sent),
        (HURRAY_ERR_NOT_FOUND, 0x02, 0)
    );
    assert!(e.item.is_null());
    assert!(last_error().contains("UNKNOWN_TENSOR"), "{}", last_error());
    assert_eq!(hurray_last_error_net_code(), 0x02);

    // An item put (a plain tensor item) under another key.
    let mut t2 = u8_tensor(&[9, 8, 7, 6]);
    let mut it = ptr::null_mut();
    // SAFETY: t2 is moved into the item (nulled).
    ok(unsafe { hurray_item_from_tensor(&mut t2, &mut it) });
    let k2 = CString::new("small").unwrap();
    // SAFETY: live connection and item.
    ok(unsafe { hurray_net_conn_put_item(conn, k2.as_ptr(), it, &mut sid) });
    // SAFETY: live item.
    ok(unsafe { hurray_item_destroy(&mut it) });
    let e = next_event(conn, &mut sock);
    assert_eq!((e.kind, e.stream_id), (HURRAY_NET_EVENT_PUT_ACKED, sid));
    // SAFETY: live connection.
    ok(unsafe { hurray_net_conn_get(conn, k2.as_ptr(), ptr::null(), &mut sid) });
    let e = next_event(conn, &mut sock);
    assert_eq!(e.kind, HURRAY_NET_EVENT_GOT);
    let mut got = e.item;
    assert_eq!(item_bytes(got), [9, 8, 7, 6]);
    // SAFETY: the GOT item is the caller's.
    ok(unsafe { hurray_item_destroy(&mut got) });

    // The connection goes on: a get with options (parallel allowed).
    let go = HurrayNetGetOptions {
        parallel: 1,
        ..HurrayNetGetOptions::default()
    };
    // SAFETY: live connection; options valid.
    ok(unsafe { hurray_net_conn_get(conn, key.as_ptr(), &go, &mut sid) });
    let e = next_event(conn, &mut sock);
    assert_eq!(e.kind, HURRAY_NET_EVENT_GOT);
    let mut item = e.item;
    assert_eq!(item_bytes(item).len(), bytes.len());
    // SAFETY: the GOT item is the caller's.
    ok(unsafe { hurray_item_destroy(&mut item) });

    // advance beyond the read_buf length is refused.
    let (mut p, mut n) = (ptr::null_mut(), 0u64);
    // SAFETY: live connection.
    ok(unsafe { hurray_net_conn_read_buf(conn, &mut p, &mut n) });
    // SAFETY: live connection.
    let s = unsafe { hurray_net_conn_advance(conn, n + 1) };
    err(s, HURRAY_ERR_INVALID_ARGUMENT, "read_buf length");
    // SAFETY: live connection.
    err(
        unsafe { hurray_net_conn_advance(conn, 0) },
        HURRAY_ERR_INVALID_ARGUMENT,
        "advance by 0",
    );

    // SAFETY: live connection; nulled.
    ok(unsafe { hurray_net_conn_destroy(&mut conn) });
    assert!(conn.is_null());
}
