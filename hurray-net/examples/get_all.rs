//! Issue 17, Must show 2 on a real model: serve a `.hrry` on 127.0.0.1 and get every
//! tensor of it by name (heads, members and plain tensors), checking that each
//! item's descriptor and bytes equal the file's.
//!
//! ```text
//! cargo xtask demo            # once: fetches target/demo/model.safetensors
//! cargo run --release -p hurray-cli -- convert target/demo/model.safetensors /tmp/model.hrry
//! cargo run --release -p hurray-net --example get_all -- /tmp/model.hrry [--parallel]
//! ```

use hurray_io::FileReader;
use hurray_net::{Client, ClientOptions, GetOptions, Server, ServerConfig};
use std::time::Instant;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: get_all FILE.hrry [--parallel]");
    let parallel = args.next().as_deref() == Some("--parallel");
    let served = FileReader::open(&path).expect("a valid .hrry");
    let reader = FileReader::open(&path).expect("a valid .hrry");
    let server = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        vec![served],
        ServerConfig::default(),
    )
    .await
    .expect("bind")
    .spawn()
    .expect("spawn");
    let mut c = Client::connect(server.local_addr(), ClientOptions::default())
        .await
        .expect("connect");
    let opts = if parallel {
        GetOptions::parallel()
    } else {
        GetOptions::default()
    };
    let t = Instant::now();
    let (mut n, mut bytes) = (0usize, 0u64);
    for name in reader.names() {
        let got = c.get(name, &opts).await.expect("get");
        let want = reader.item(name).expect("item").expect("named");
        assert!(got == want, "{name}: differs from the file");
        got.for_each_tensor(&mut |t| bytes += t.data_len());
        n += 1;
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{path}: got all {n} tensors from hurray-net on {}, {bytes} data bytes equal to the file, \
         in {s:.2} s ({:.2} GiB/s)",
        server.local_addr(),
        bytes as f64 / s / (1u64 << 30) as f64
    );
    server.shutdown().await.expect("shutdown");
}
