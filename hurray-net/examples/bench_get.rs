//! Issue 17, Must show 4: GET of a 1 GiB tensor on loopback against a raw TCP
//! transfer of the same bytes and against Arrow Flight `do_get` (pyarrow.flight).
//!
//! ```text
//! cargo run --release -p hurray-net --example bench_get [-- SIZE_MIB [RUNS]]
//! ```
//!
//! Each server runs in its own process (this program re-executed; Flight: Python),
//! so its peak RSS (`VmHWM` of /proc/PID/status) is its own. The Flight half runs
//! `hurray-net/examples/flight_bench.py` with `$HURRAY_BENCH_PYTHON` (default
//! `python3`), which needs pyarrow; without it that row is reported as skipped.
//! Each run does raw, hurray (one stream), hurray (parallel shards) and Flight back
//! to back, each receiving into fresh memory; times are the best of RUNS (default 3).

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

    // Both servers run at once; every run does raw, hurray, hurray parallel and
    // Flight back to back, so a busy machine slows all of them alike.
    let (hurray_child, hurray_addr) = spawn_self("--serve-hurray", &path);
    let (raw_child, raw_addr) = spawn_self("--serve-raw", &path);
    let raw_file = dir.path().join("bench.bin");
    {
        let r = FileReader::open(&path).unwrap();
        let t = r.tensor("big").unwrap().unwrap();
        std::fs::write(&raw_file, t.buffers()[0].as_slice()).unwrap();
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let py = std::env::var("HURRAY_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/flight_bench.py");
    let (mut raw, mut hurray, mut par, mut flight) = (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
    let mut flight_rss = 0u64;
    let mut flight_skip = None;
    for _ in 0..runs {
        // Raw TCP: the same bytes from the same mapping, written in 4 MiB pieces,
        // read in pieces of up to 1 MiB straight into fresh aligned memory (as the
        // hurray server and client do).
        let t = Instant::now();
        let mut s = TcpStream::connect(&raw_addr).unwrap();
        s.write_all(b"g").unwrap();
        let mut buf = AlignedBuf::zeroed(bytes).unwrap();
        let mut at = 0;
        while at < bytes {
            let end = (at + (1 << 20)).min(bytes);
            let n = s.read(&mut buf.as_mut_slice()[at..end]).unwrap();
            assert!(n > 0, "raw server closed early");
            at += n;
        }
        raw = raw.min(t.elapsed().as_secs_f64());
        assert_eq!(checksum(buf.as_slice()), want_sum);
        drop(buf);
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
                let mut c = Client::connect(hurray_addr.as_str(), co).await.unwrap();
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
            if parallel {
                par = par.min(s);
            } else {
                hurray = hurray.min(s);
            }
        }
        if flight_skip.is_none() {
            match flight_once(&py, script, &raw_file) {
                Ok((s, rss)) => {
                    flight = flight.min(s);
                    flight_rss = flight_rss.max(rss);
                }
                Err(why) => flight_skip = Some(why),
            }
        }
    }
    let hurray_rss = stop(hurray_child);
    let raw_rss = stop(raw_child);

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
    line("hurray GET (parallel shards)", par);
    match flight_skip {
        None => {
            line("Arrow Flight do_get", flight);
            println!(
                "hurray GET is {:.2}x as fast as Flight (1 stream), {:.2}x (parallel)",
                flight / hurray,
                flight / par
            );
        }
        Some(why) => println!("Arrow Flight do_get: skipped ({why})"),
    }
    println!(
        "server peak RSS (VmHWM): hurray {} MiB, raw {} MiB, Flight {} MiB \
         (each maps or holds the data; mapped pages sent count in RSS)",
        hurray_rss / 1024,
        raw_rss / 1024,
        flight_rss / 1024
    );
}

/// One Flight do_get timing (seconds) and the Flight server's VmHWM (KiB).
fn flight_once(py: &str, script: &str, raw_file: &std::path::Path) -> Result<(f64, u64), String> {
    let o = Command::new(py)
        .arg(script)
        .arg(raw_file)
        .arg("1")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{py}: {e}"))?;
    let text = String::from_utf8_lossy(&o.stdout);
    if !o.status.success() {
        return Err(format!("{py} {script} failed: {text}"));
    }
    let mut secs = None;
    let mut rss = 0;
    for l in text.lines() {
        if let Some(v) = l.strip_prefix("flight_seconds ") {
            secs = v.trim().parse::<f64>().ok();
        }
        if let Some(v) = l.strip_prefix("flight_server_vmhwm_kib ") {
            rss = v.trim().parse::<u64>().unwrap_or(0);
        }
    }
    secs.map(|s| (s, rss))
        .ok_or_else(|| format!("no result line in {text:?}"))
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
        for piece in t.buffers()[0].as_slice().chunks(4 << 20) {
            s.write_all(piece).unwrap();
        }
    }
}
