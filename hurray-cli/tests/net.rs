//! `hurray serve`, `get`, `put` as processes on 127.0.0.1: round trips, a `hurray
//! get` killed with SIGKILL mid-transfer while another client keeps being served,
//! and SIGTERM shutting the server down with exit status 0 (persisting the store).

use hurray_core::ElementType;
use hurray_io::file::{FileWriter, WriteOptions};
use hurray_io::{FileReader, Tensor};
use hurray_net::{BlockingClient, ClientOptions, GetOptions};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn hurray() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hurray"))
}

fn tensor(n: usize, seed: u8) -> Tensor {
    let b: Vec<u8> = (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    Tensor::from_dense(ElementType::Uint8, &[n as u64], &b).unwrap()
}

fn write(path: &Path, items: &[(&str, &Tensor)]) {
    let mut w = FileWriter::create(path, WriteOptions::default()).unwrap();
    for (n, t) in items {
        w.write_tensor(n, t).unwrap();
    }
    w.finish().unwrap();
}

/// Starts `hurray serve` on port 0; returns the child and the address it printed.
fn serve(args: &[&std::ffi::OsStr]) -> (Child, String) {
    let mut c = hurray()
        .arg("serve")
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .rsplit(' ')
        .next()
        .expect("hurray: serving N tensors on ADDR")
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{line}");
    (c, addr)
}

/// Resident memory of process `pid` in KiB (0 once it is gone).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Sends SIGTERM and waits (10 s at most) for the exit status.
fn terminate(mut c: Child) -> std::process::ExitStatus {
    let ok = Command::new("kill")
        .args(["-TERM", &c.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let t = Instant::now();
    loop {
        if let Some(s) = c.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > Duration::from_secs(10) {
            c.kill().ok();
            panic!("hurray serve did not exit within 10 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn get_killed_with_sigkill_mid_transfer_does_not_disturb_other_clients() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.hrry");
    let small = tensor(100_000, 1);
    let big = tensor(256 << 20, 2);
    write(&file, &[("small", &small), ("big", &big)]);
    drop(big);
    let (server, addr) = serve(&[file.as_os_str()]);

    // Another client gets `small` over and over for the whole test.
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let watcher = {
        let (stop, served, addr, want) =
            (stop.clone(), served.clone(), addr.clone(), small.clone());
        std::thread::spawn(move || {
            let mut c = BlockingClient::connect(addr.as_str(), ClientOptions::default()).unwrap();
            while !stop.load(Ordering::SeqCst) {
                let got = c.get_tensor("small", &GetOptions::default()).unwrap();
                assert_eq!(got, want);
                served.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    for i in 0..3 {
        let out = dir.path().join(format!("killed{i}.hrry"));
        let mut g = hurray()
            .args(["get", &addr, "big", "-o"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill it mid-transfer: once it holds 32 MiB + i × 64 MiB of the tensor
        // (its resident memory grows as data arrives; the file is written only
        // after the whole tensor is in).
        let want_kib = (32 + 64 * i) << 10;
        let t = Instant::now();
        while rss_kib(g.id()) < want_kib {
            assert!(
                g.try_wait().unwrap().is_none(),
                "hurray get ended before the kill"
            );
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "hurray get made no progress"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        g.kill().unwrap(); // SIGKILL
        let st = g.wait().unwrap();
        assert!(!st.success());
        assert!(!out.exists(), "a killed get left {}", out.display());
        let before = served.load(Ordering::SeqCst);
        let t = Instant::now();
        while served.load(Ordering::SeqCst) == before {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "the other client stalled"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    stop.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    assert!(served.load(Ordering::SeqCst) >= 3);

    // The server still serves a whole `hurray get`, then stops cleanly on SIGTERM.
    let out = dir.path().join("small.hrry");
    let s = hurray()
        .args(["get", &addr, "small", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let r = FileReader::open(&out).unwrap();
    assert_eq!(r.tensor("small").unwrap().unwrap(), small);
    assert!(terminate(server).success());
}

#[test]
fn put_then_get_through_the_cli_and_persist_at_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.hrry");
    let a = tensor(5000, 3);
    write(&file, &[("a", &a)]);
    let src = dir.path().join("src.hrry");
    let b = tensor(7000, 4);
    write(&src, &[("only", &b)]);
    let persist = dir.path().join("persist.hrry");
    let (server, addr) = serve(&[
        file.as_os_str(),
        "--persist".as_ref(),
        persist.as_os_str(),
        "--store-cap".as_ref(),
        "100000".as_ref(),
    ]);
    // NAME defaults to the file's only item.
    let s = hurray()
        .args(["put", &addr, "b"])
        .arg(&src)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let out = dir.path().join("b.hrry");
    let s = hurray()
        .args(["get", &addr, "b", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    assert_eq!(
        FileReader::open(&out)
            .unwrap()
            .tensor("b")
            .unwrap()
            .unwrap(),
        b
    );
    // Over the store cap: refused, exit status 1, one line naming the refusal.
    let big = dir.path().join("big.hrry");
    write(&big, &[("big", &tensor(200_000, 5))]);
    let s = hurray()
        .args(["put", &addr, "big"])
        .arg(&big)
        .output()
        .unwrap();
    assert_eq!(s.status.code(), Some(1));
    let err = String::from_utf8_lossy(&s.stderr);
    assert!(err.contains("PRIVATE (0x000000F1)"), "{err}");
    // Unknown key.
    let s = hurray()
        .args(["get", &addr, "nope", "-o"])
        .arg(dir.path().join("x.hrry"))
        .output()
        .unwrap();
    assert_eq!(s.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&s.stderr).contains("UNKNOWN_TENSOR"));
    assert!(terminate(server).success());
    let p = FileReader::open(&persist).unwrap();
    assert_eq!(p.names().collect::<Vec<_>>(), ["b"]);
    assert_eq!(p.tensor("b").unwrap().unwrap(), b);
}

#[test]
fn get_and_put_give_up_on_a_silent_server_after_their_timeouts() {
    // A listener that accepts and never answers the handshake.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    let held = std::thread::spawn(move || {
        // Keep the accepted sockets open (silent) until both commands gave up.
        let mut conns = Vec::new();
        for _ in 0..2 {
            conns.push(silent.accept().unwrap().0);
        }
        std::thread::sleep(Duration::from_secs(4));
    });
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.hrry");
    write(&src, &[("only", &tensor(10, 1))]);
    for args in [
        vec!["get", &addr, "k", "-o", "x.hrry", "--connect-timeout", "1"],
        vec![
            "put",
            &addr,
            "k",
            src.to_str().unwrap(),
            "--connect-timeout",
            "1",
        ],
    ] {
        let t0 = Instant::now();
        let s = hurray()
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        let took = t0.elapsed();
        let err = String::from_utf8_lossy(&s.stderr);
        assert_eq!(s.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.to_lowercase().contains("timed out"), "{args:?}: {err}");
        assert!(took < Duration::from_secs(3), "{args:?} took {took:?}");
    }
    assert!(!dir.path().join("x.hrry").exists());
    held.join().unwrap();
}
