//! Shared by the hurray-net tests: a server over a temporary `.hrry`, raw-socket
//! helpers for hostile peers, and waiting with a deadline.
#![allow(dead_code)]

use hurray_io::file::{FileWriter, WriteOptions};
use hurray_io::{FileReader, Item};
use hurray_net::wire::{ErrorCode, Header, Message, HEADER_LEN};
use hurray_net::{RunningServer, Server, ServerConfig};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Writes `items` to `path` as an HRRYFILE.
pub fn write_file(path: &Path, items: &[(String, Item)]) {
    let mut w = FileWriter::create(path, WriteOptions::default()).unwrap();
    for (n, item) in items {
        match item {
            Item::Tensor(t) => w.write_tensor(n, t).unwrap(),
            Item::Composite(c) => w.write_composite(n, c).unwrap(),
        }
    }
    w.finish().unwrap();
}

/// Starts a server on 127.0.0.1:0 over `files`.
pub async fn serve(files: &[&Path], cfg: ServerConfig) -> RunningServer {
    let readers = files.iter().map(|p| FileReader::open(p).unwrap()).collect();
    Server::bind("127.0.0.1:0".parse().unwrap(), readers, cfg)
        .await
        .unwrap()
        .spawn()
        .unwrap()
}

/// Waits until `f` holds, at most `limit`.
pub async fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    f()
}

/// A valid CLIENT_HELLO.
pub fn client_hello() -> Vec<u8> {
    Message::ClientHello(hurray_net::wire::Hello {
        protocol_version: 1,
        max_message_size: 1 << 20,
        capability_flags: 0,
        supported_layouts: vec![],
        supported_devices: vec![0],
        supported_memory_classes: None,
    })
    .encode(1)
    .unwrap()
}

/// Connects, optionally does the handshake (reading SERVER_HELLO), sends `bytes`.
pub async fn raw(addr: std::net::SocketAddr, hello: bool, bytes: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    if hello {
        s.write_all(&client_hello()).await.unwrap();
        let m = read_msg(&mut s).await.expect("SERVER_HELLO");
        assert!(matches!(m, Message::ServerHello(_)), "{m:?}");
    }
    s.write_all(bytes).await.unwrap();
    s
}

/// Reads one message (5 s limit); `None` on EOF, reset or timeout.
pub async fn read_msg(s: &mut TcpStream) -> Option<Message> {
    tokio::time::timeout(Duration::from_secs(5), async {
        let mut h = [0u8; HEADER_LEN];
        s.read_exact(&mut h).await.ok()?;
        let h = Header::decode(&h).ok()?;
        let mut p = vec![0u8; h.payload_length as usize];
        s.read_exact(&mut p).await.ok()?;
        Message::decode_owned(&h, p).ok()
    })
    .await
    .ok()
    .flatten()
}

/// The code of the next message, which must be `ERROR`; then the server must close
/// (EOF or reset within 5 s).
pub async fn expect_error_then_close(s: &mut TcpStream) -> ErrorCode {
    let m = read_msg(s).await.expect("an ERROR message");
    let Message::Error { code, .. } = m else {
        panic!("expected ERROR, got {m:?}");
    };
    let mut b = [0u8; 4096];
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match s.read(&mut b).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "server kept the connection open after ERROR"
    );
    code
}

/// Bytes filled quickly with a non-repeating-looking pattern.
pub fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; n];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for c in v.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        c.copy_from_slice(&b[..c.len()]);
    }
    v
}
