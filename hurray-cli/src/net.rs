//! `hurray serve`, `hurray get`, `hurray put`: the network transport
//! (`streams-and-transport.md` Part B) through `hurray-net`.

use crate::cli::{GetArgs, NetTimeouts, PutArgs, ServeArgs};
use crate::error::{Error, Result};
use crate::progress::Progress;
use hurray_io::file::WriteOptions;
use hurray_io::{FileReader, FileWriter, Item};
use hurray_net::{
    BlockingClient, ClientOptions, GetOptions, NetError, ProgressFn, Server, ServerConfig,
};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

fn net_err(e: NetError) -> Error {
    match e {
        NetError::Io(io) => io.into(),
        NetError::Format(f) => f.into(),
        e => Error::format_anywhere("Transport", e),
    }
}

/// A progress callback drawing a bar (when standard error is a terminal and the
/// transfer is large), created at the first call: a bar against the total when the
/// total is known (put), else a byte counter (get).
fn bar(label: &str) -> (ProgressFn, Arc<OnceLock<Progress>>) {
    let cell: Arc<OnceLock<Progress>> = Arc::new(OnceLock::new());
    let c = cell.clone();
    let label = label.to_owned();
    let f: ProgressFn = Arc::new(move |n, total| {
        c.get_or_init(|| {
            if total > 0 {
                Progress::for_bytes(total, &label)
            } else {
                Progress::for_unknown(&label)
            }
        })
        .inc(n);
    });
    (f, cell)
}

/// Runs the server until SIGTERM or SIGINT, then shuts down gracefully (exit 0).
pub fn serve(a: &ServeArgs, out: &mut dyn Write) -> Result<()> {
    let mut files = Vec::with_capacity(a.files.len());
    for f in &a.files {
        files.push(FileReader::open(f).map_err(|e| Error::from(e).at_path(f))?);
    }
    let tensors: usize = files.iter().map(FileReader::len).sum();
    let cfg = ServerConfig {
        store_cap: a.store_cap,
        max_put_bytes: a.store_cap,
        persist: a.persist.clone(),
        max_connections: a.max_connections,
        idle_timeout: Duration::from_secs(a.idle_timeout.max(1)),
        ..ServerConfig::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let server = Server::bind(a.listen, files, cfg).await.map_err(net_err)?;
        let addr = server.local_addr().map_err(net_err)?;
        writeln!(out, "hurray: serving {tensors} tensors on {addr}")?;
        out.flush()?;
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let stop = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        };
        let r = server.run(stop).await.map_err(net_err)?;
        writeln!(
            out,
            "hurray: stopped ({} transfers aborted, {} items persisted)",
            r.aborted, r.persisted
        )?;
        Ok(())
    })
}

/// The client options of `--connect-timeout` and `--io-timeout` (at least 1 s each).
fn client_options(t: &NetTimeouts) -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(t.connect_timeout.max(1)),
        io_timeout: Duration::from_secs(t.io_timeout.max(1)),
        ..ClientOptions::default()
    }
}

/// Gets `key` into a new .hrry at `-o` (the item keeps the key as its name).
pub fn get(a: &GetArgs, out: &mut dyn Write) -> Result<()> {
    let mut c =
        BlockingClient::connect(a.addr.as_str(), client_options(&a.timeouts)).map_err(net_err)?;
    let (f, cell) = bar(&a.key);
    let mut opts = if a.parallel {
        GetOptions::parallel()
    } else {
        GetOptions::default()
    };
    opts.progress = Some(f);
    let item = c.get(&a.key, &opts).map_err(net_err)?;
    if let Some(p) = cell.get() {
        p.finish();
    }
    write_item(&a.output, &a.key, &item).map_err(|e| e.at_path(&a.output))?;
    let mut bytes = 0u64;
    item.for_each_tensor(&mut |t| bytes += t.data_len());
    writeln!(
        out,
        "{}: {} -> {} ({bytes} data bytes)",
        a.addr,
        a.key,
        a.output.display()
    )?;
    Ok(())
}

fn write_item(path: &Path, name: &str, item: &Item) -> Result<()> {
    let mut w = FileWriter::create(path, WriteOptions::default())?;
    match item {
        Item::Tensor(t) => w.write_tensor(name, t)?,
        Item::Composite(c) => w.write_composite(name, c)?,
    }
    w.finish()?;
    Ok(())
}

/// Puts the item `name` (default: the key, or the file's only top-level item) of
/// a .hrry under `key`.
pub fn put(a: &PutArgs, out: &mut dyn Write) -> Result<()> {
    let r = FileReader::open(&a.file).map_err(|e| Error::from(e).at_path(&a.file))?;
    let item = match &a.name {
        Some(n) => r.item(n)?,
        None => match r.item(&a.key)? {
            Some(i) => Some(i),
            None => {
                let mut all = r.items()?;
                if all.len() == 1 {
                    all.pop().map(|(_, i)| i)
                } else {
                    None
                }
            }
        },
    };
    let name = a.name.as_deref().unwrap_or(&a.key);
    let item = item.ok_or_else(|| {
        Error::usage(format_args!(
            "no tensor named {name:?} in the file (give NAME)"
        ))
        .at_path(&a.file)
    })?;
    let mut c =
        BlockingClient::connect(a.addr.as_str(), client_options(&a.timeouts)).map_err(net_err)?;
    let (f, cell) = bar(&a.key);
    c.put_with_progress(&a.key, &item, Some(f))
        .map_err(net_err)?;
    if let Some(p) = cell.get() {
        p.finish();
    }
    writeln!(out, "{}: put {} as {}", a.addr, a.file.display(), a.key)?;
    Ok(())
}
