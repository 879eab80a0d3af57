//! The network commands over an in-process `hurray-net` server: `net-combine` serves
//! the Rust outputs as `CASE:NAME`, `net-get` writes files byte-identical to the
//! producer's, `net-put` into a persisting store gives back every item byte for byte,
//! and `net-compare` catches an item that differs.

use hurray_io::FileReader;
use hurray_matrix::case::{self, Case};
use hurray_matrix::{net, run};
use hurray_net::{Server, ServerConfig};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The cases the transport carries as written: no file KV, standard memory only.
fn net_cases() -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../cases/cases.txt");
    let text = std::fs::read_to_string(path).unwrap();
    case::parse(&text)
        .unwrap()
        .into_iter()
        .filter(|c| c.kv.is_empty() && c.name != "memory_unified")
        .collect()
}

/// Serves `file` on 127.0.0.1:0 on its own thread; returns the address and a stop
/// handle that shuts it down and waits (persisting when `persist` is set).
fn serve(file: &Path, persist: Option<PathBuf>) -> (SocketAddr, impl FnOnce() -> usize) {
    let reader = FileReader::open(file).unwrap();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let h = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let cfg = ServerConfig {
                persist,
                ..ServerConfig::default()
            };
            let s = Server::bind("127.0.0.1:0".parse().unwrap(), vec![reader], cfg)
                .await
                .unwrap();
            addr_tx.send(s.local_addr().unwrap()).unwrap();
            s.run(async move {
                let _ = stop_rx.await;
            })
            .await
            .unwrap()
            .persisted
        })
    });
    let addr = addr_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    (addr, move || {
        stop_tx.send(()).unwrap();
        h.join().unwrap()
    })
}

#[test]
fn get_and_put_every_case_byte_for_byte() {
    let cases = net_cases();
    assert!(cases.len() >= 70, "{} cases", cases.len());
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    for c in &cases {
        run::produce(c, &src).unwrap();
    }
    let served = dir.path().join("served.hrry");
    net::combine(&cases, &src, &served).unwrap();
    assert!(FileReader::open(&served)
        .unwrap()
        .names()
        .any(|n| n == "several_tensors:a"));

    // GET: every file equals the producer's, byte for byte.
    let (addr, stop) = serve(&served, None);
    let got = dir.path().join("got");
    net::get(&addr.to_string(), &cases, &got).unwrap();
    stop();
    for c in &cases {
        let name = format!("{}.hrry", c.name);
        assert_eq!(
            std::fs::read(src.join(&name)).unwrap(),
            std::fs::read(got.join(&name)).unwrap(),
            "case {}",
            c.name
        );
    }
    let r = net::compare_cases(&cases, &src, &got).unwrap();
    assert!(r.iter().all(|x| x.1 == "pass"), "{r:?}");

    // PUT into a persisting store: every item comes back byte for byte.
    let persist = dir.path().join("persist.hrry");
    let first = src.join(format!("{}.hrry", cases[0].name));
    let (addr, stop) = serve(&first, Some(persist.clone()));
    net::put(&addr.to_string(), &cases, &src).unwrap();
    let items: usize = cases.iter().map(|c| c.items.len()).sum();
    assert_eq!(stop(), items);
    let r = net::compare_cases(&cases, &src, &persist).unwrap();
    assert_eq!(r.len(), cases.len());
    assert!(r.iter().all(|x| x.1 == "pass"), "{r:?}");

    // A different item under the same name fails with the offset.
    let swapped = dir.path().join("swapped");
    std::fs::create_dir_all(&swapped).unwrap();
    let (a, b) = (&cases[0].name, &cases[1].name);
    std::fs::copy(
        src.join(format!("{b}.hrry")),
        swapped.join(format!("{a}.hrry")),
    )
    .unwrap();
    let r = net::compare_cases(&cases[..1], &src, &swapped).unwrap();
    assert_eq!(r[0].1, "fail", "{r:?}");
    assert!(r[0].2.contains("differ at byte"), "{r:?}");
}

#[test]
fn net_views_fetches_every_tensor_with_the_files_crc() {
    let cases: Vec<Case> = net_cases()
        .into_iter()
        .filter(|c| c.name == "several_tensors")
        .collect();
    assert_eq!(cases.len(), 1);
    let dir = tempfile::tempdir().unwrap();
    run::produce(&cases[0], dir.path()).unwrap();
    let file = dir.path().join("several_tensors.hrry");
    let want: Vec<(String, u32)> = FileReader::open(&file)
        .unwrap()
        .tensors()
        .map(|(n, t)| {
            let mut crc = crc32fast::Hasher::new();
            t.unwrap()
                .buffers()
                .iter()
                .for_each(|b| crc.update(b.as_slice()));
            (n.to_string(), crc.finalize())
        })
        .collect();
    assert_eq!(want.len(), 5);
    let (addr, stop) = serve(&file, None);
    let (got, secs) = net::fetch_crcs(&addr.to_string(), &file).unwrap();
    stop();
    assert_eq!(got, want);
    assert!(secs > 0.0);
}
