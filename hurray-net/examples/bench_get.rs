//! Issue 17, Must show 4: GET of a 1 GiB tensor on loopback against a raw TCP
//! transfer of the same bytes and against Arrow Flight `do_get` (pyarrow.flight).
//!
//! ```text
//! cargo run --release -p hurray-net --example bench_get [-- SIZE_MIB [RUNS]]
//! ```
//!
//! Each server runs in its own process (this program re-executed), so its peak RSS
//! (`VmHWM` of /proc/PID/status) is its own. The Flight half runs
//! `hurray-net/examples/flight_bench.py` with `$HURRAY_BENCH_PYTHON` (default
//! `python3`), which needs pyarrow; without it that row is reported as skipped.
//! Times are the best of RUNS (default 3), each receiving into fresh memory.

use hurray_core::ElementType;
use hurray_io::file::{FileWriter, WriteOptions};
use hurray_io::{AlignedBuf, FileReader, Item, Tensor};
use hurray_net::{Client, ClientOptions, GetOptions, Server, ServerConfig};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("--serve-hurray") => return serve_hurray(&args[2]),
        Some("--serve-raw") => return serve_raw(&args[2]),
        _ => {}
    }
    let mib: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let runs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let bytes = mib << 20;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("bench.hrry");
    {
        let mut data = vec![0u8; bytes];
        for (i, c) in data.chunks_mut(8).enumerate() {
            let v = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
        let t = Tensor::from_dense(ElementType::Uint8, &[(bytes as u64) >> 12, 4096], &data)
            .expect("tensor");
        let mut w = FileWriter::create(&path, WriteOptions::default()).expect("writer");
        w.write_tensor("big", &t).expect("write");
        w.finish().expect("finish");
    }
    println!("bench_get: {mib} MiB tensor, best of {runs} runs, loopback");
    let want_sum = checksum(
        FileReader::open(&path)
            .unwrap()
            .tensor("big")
            .unwrap()
            .unwrap()
            .buffers()[0]
            .as_slice(),
    );

    // Hurray GET (one stream, then parallel: 4 shard streams on the connection).
    let (child, addr) = spawn_self("--serve-hurray", &path);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut hurray = f64::MAX;
    let mut par = f64::MAX;
    for _ in 0..runs {
        for parallel in [false, true] {
            let t = Instant::now();
            let item = rt.block_on(async {
                let mut co = ClientOptions::default();
                if let Some(m) = std::env::var("HURRAY_BENCH_CLIENT_MAX")
                    .ok()
                    .and_then(|v| v.parse().ok())
                {
                    co.proto.max_message_size = m;
                }
                let mut c = Client::connect(addr.as_str(), co).await.unwrap();
                let o = if parallel {
                    GetOptions::parallel()
                } else {
                    GetOptions::default()
                };
                c.get("big", &o).await.unwrap()
            });
            let s = t.elapsed().as_secs_f64();
            let Item::Tensor(g) = item else {
                panic!("a tensor")
            };
            assert_eq!(
                checksum(g.buffers()[0].as_slice()),
                want_sum,
                "bytes differ"
            );
            if !parallel {
                hurray = hurray.min(s);
            } else {
                par = par.min(s);
            }
        }
    }
    let hurray_rss = stop(child);

    // Raw TCP: the same bytes from the same mapping, one write_all, one read_exact.
    let (child, addr) = spawn_self("--serve-raw", &path);
    let mut raw = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(b"g").unwrap();
        let mut buf = AlignedBuf::zeroed(bytes).unwrap();
        s.read_exact(buf.as_mut_slice()).unwrap();
        let e = t.elapsed().as_secs_f64();
        assert_eq!(checksum(buf.as_slice()), want_sum);
        raw = raw.min(e);
    }
    let raw_rss = stop(child);

    let gib = bytes as f64 / (1u64 << 30) as f64;
    let line = |name: &str, s: f64| {
        println!(
            "{name:<28} {:>8.3} s {:>7.2} GiB/s  {:>5.2}x raw",
            s,
            gib / s,
            raw / s
        )
    };
    line("raw TCP (plain socket)", raw);
    line("hurray GET (1 stream)", hurray);
    line("hurray GET (4 shard streams)", par);
    println!(
        "server peak RSS (VmHWM): hurray {} MiB, raw {} MiB (both map the file; \
         mapped pages that were sent count)",
        hurray_rss / 1024,
        raw_rss / 1024
    );

    // Arrow Flight do_get of the same bytes (pyarrow), in its own script.
    let py = std::env::var("HURRAY_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/flight_bench.py");
    let raw_file = dir.path().join("bench.bin");
    {
        let r = FileReader::open(&path).unwrap();
        let t = r.tensor("big").unwrap().unwrap();
        std::fs::write(&raw_file, t.buffers()[0].as_slice()).unwrap();
    }
    let out = Command::new(&py)
        .arg(script)
        .arg(&raw_file)
        .arg(runs.to_string())
        .stderr(Stdio::inherit())
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let mut flight = None;
            let mut rss = None;
            for l in text.lines() {
                if let Some(v) = l.strip_prefix("flight_seconds ") {
                    flight = v.trim().parse::<f64>().ok();
                }
                if let Some(v) = l.strip_prefix("flight_server_vmhwm_kib ") {
                    rss = v.trim().parse::<u64>().ok();
                }
            }
            if let Some(f) = flight {
                line("Arrow Flight do_get", f);
                println!(
                    "hurray GET vs Flight: {:.2}x faster (1 stream), {:.2}x (4 shard streams); \
                     Flight server peak RSS {} MiB",
                    f / hurray,
                    f / par,
                    rss.unwrap_or(0) / 1024
                );
            } else {
                println!("Arrow Flight do_get: skipped (no result line):\n{text}");
            }
        }
        Ok(o) => println!(
            "Arrow Flight do_get: skipped ({py} {script} failed: {})",
            String::from_utf8_lossy(&o.stdout)
        ),
        Err(e) => println!("Arrow Flight do_get: skipped ({py}: {e})"),
    }
}

/// A cheap order-sensitive checksum (to check every run got the bytes right).
fn checksum(b: &[u8]) -> u64 {
    let mut h = 0u64;
    for c in b.chunks(8) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        h = h.rotate_left(5) ^ u64::from_le_bytes(w);
    }
    h
}

fn spawn_self(mode: &str, path: &std::path::Path) -> (Child, String) {
    let mut c = Command::new(std::env::current_exe().unwrap())
        .arg(mode)
        .arg(path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    (c, line.trim().to_owned())
}

/// Reads the child's VmHWM (KiB), then kills it.
fn stop(mut c: Child) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", c.id())).unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    c.kill().ok();
    c.wait().ok();
    hwm
}

fn serve_hurray(path: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let r = FileReader::open(path).unwrap();
        let s = Server::bind(
            "127.0.0.1:0".parse().unwrap(),
            vec![r],
            ServerConfig::default(),
        )
        .await
        .unwrap();
        println!("{}", s.local_addr().unwrap());
        std::io::stdout().flush().unwrap();
        s.run(std::future::pending()).await.unwrap();
    });
}

fn serve_raw(path: &str) {
    let r = FileReader::open(path).unwrap();
    let t = r.tensor("big").unwrap().unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    println!("{}", l.local_addr().unwrap());
    std::io::stdout().flush().unwrap();
    for s in l.incoming() {
        let mut s = s.unwrap();
        let mut b = [0u8; 1];
        s.read_exact(&mut b).unwrap();
        s.write_all(t.buffers()[0].as_slice()).unwrap();
    }
}
