//! The network client (issue 18, `docs/node.md` "Network"): `NetClient`, over
//! hurray-ffi's blocking [`HurrayNetClient`] (decision record 0008; no `hurray_*`
//! C call here, decision 0006). Every blocking call (connect, get, put) runs on the
//! libuv thread pool (a napi `AsyncTask`), so the event loop keeps running during a
//! transfer; `cancel()` (what the package's `AbortSignal` support calls) may come
//! at any time from the JS thread: the call in flight rejects promptly with
//! `ERR_HURRAY_STATE` (`HURRAY_ERR_CANCELLED`), everything it held is released,
//! and the client is closed for good.
//!
//! A failure rejects with the binding's usual error (`error.rs`: `code`
//! `ERR_HURRAY_<CATEGORY>`) plus `netCode`, the B.16 code of a protocol `ERROR`
//! (`UNKNOWN_TENSOR` = 2 is `ERR_HURRAY_NOT_FOUND`), `null` otherwise.

use std::sync::{Arc, Mutex};

use hurray_ffi::{HurrayItem, HurrayNetClient, HurrayNetClientOptions, NetGetOptions};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::error::{err, ffi, Result};
use crate::item::{Item, ItemHandle};
use crate::tensor::{Handle, Tensor};

/// A failure carried back from the pool thread: `code`, message, B.16 code.
pub struct NetFailure(String, String, Option<u32>);

impl NetFailure {
    fn of(e: hurray_ffi::FfiError) -> NetFailure {
        let code = e.net_code();
        let js = ffi(e);
        NetFailure(js.status, js.reason, code)
    }
}

/// The rejection: a JS `Error` with `code`, the message and `netCode` (a number,
/// or `null`).
fn rejection(env: &Env, f: NetFailure) -> napi::Error {
    let js = napi::JsError::from(napi::Error::new(f.0, f.1)).into_unknown(*env);
    // SAFETY: a JsError's value is an Error object.
    if let Ok(mut o) = unsafe { js.cast::<Object>() } {
        let _ = o.set("netCode", f.2);
    }
    napi::Error::from(js)
}

/// Options of `NetClient.connectAsync`. Times in milliseconds; 0 or absent: the
/// default (connect 10 000, stall 60 000, call: no limit).
#[napi(object)]
#[derive(Default)]
pub struct NetClientOptions {
    /// Longest one get or put may take, ms (0: no limit). Past it the call rejects
    /// with `ERR_HURRAY_IO` (`HURRAY_ERR_TIMEOUT`) and the connection is closed.
    pub timeout_ms: Option<u32>,
    /// Time to connect and shake hands, ms.
    pub connect_timeout_ms: Option<u32>,
    /// Longest a single read or write may stall, ms.
    pub io_timeout_ms: Option<u32>,
    /// Most data bytes one received item may carry (default 4 GiB).
    pub max_item_bytes: Option<f64>,
}

/// Options of one `getAsync`.
#[napi(object)]
#[derive(Default)]
pub struct NetGetOpts {
    /// Acceptable layouts, most preferred first: names as `layoutName` renders
    /// them, or wire tags. Absent: whatever is stored.
    #[napi(ts_type = "Array<string | number>")]
    pub layouts: Option<Vec<Either<String, u32>>>,
    /// Least alignment of every received buffer, bytes (a power of two; default 64).
    pub alignment: Option<u32>,
    /// Let the server answer in shards (reassembled here).
    pub parallel: Option<bool>,
    /// Let the server convert to a preferred layout.
    pub transcode: Option<bool>,
}

/// What the server negotiated in its hello (B.7).
#[napi(object)]
pub struct NetServerInfo {
    /// The protocol version in use.
    pub protocol_version: u32,
    /// Largest payload the server accepts, bytes.
    pub max_message_size: u32,
    /// Capability bits (bit 0 `PARALLEL_STREAMS`), as a number.
    pub capability_flags: f64,
    /// Whether the server answers in parallel shards.
    pub parallel_streams: bool,
}

/// One connection to a Hurray server. Made by `NetClient.connectAsync` (the
/// package's `hurray.connect` wraps it); calls on it are serialised.
#[napi]
pub struct NetClient {
    inner: Mutex<Option<Arc<HurrayNetClient>>>,
}

impl NetClient {
    fn native(&self) -> Result<Arc<HurrayNetClient>> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| {
                err(
                    "HURRAY_ERR_STATE",
                    "the network client is closed (close(), cancel() or an aborted call); connect again",
                )
            })
    }
}

/// What a pool task does.
enum Op {
    Connect(String, u16),
    Get(String, NetGetOptions),
    PutTensor(String, Arc<Handle>),
    PutItem(String, Arc<ItemHandle>, Vec<u32>),
}

/// Runs `op` on `c` (on a pool thread).
fn run(c: &HurrayNetClient, op: &Op) -> std::result::Result<Option<HurrayItem>, NetFailure> {
    let bad = |e: crate::error::JsErr| NetFailure(e.status.clone(), e.reason.clone(), None);
    match op {
        Op::Connect(h, p) => c.connect(h, *p).map(|()| None),
        Op::Get(k, o) => c.get(k, o).map(Some),
        Op::PutTensor(k, h) => {
            let t = h.tensor().map_err(bad)?;
            c.put_tensor(k, t).map(|()| None)
        }
        Op::PutItem(k, root, path) => {
            let n = root.node(path).map_err(bad)?;
            c.put(k, n).map(|()| None)
        }
    }
    .map_err(NetFailure::of)
}

/// What a pool task brings back (a received item, or nothing).
pub struct Brought(Option<Box<HurrayItem>>);

// SAFETY: moved from the pool thread to the JS thread once; the item owns its
// memory and its releases are thread-safe by the ABI's contract.
unsafe impl Send for Brought {}

/// A connect on the libuv thread pool; resolves with the `NetClient`.
pub struct ConnectTask {
    client: Arc<HurrayNetClient>,
    op: Op,
}

impl Task for ConnectTask {
    type Output = std::result::Result<(), NetFailure>;
    type JsValue = NetClient;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(run(&self.client, &self.op).map(drop))
    }

    fn resolve(&mut self, env: Env, out: Self::Output) -> napi::Result<NetClient> {
        out.map_err(|f| rejection(&env, f))?;
        Ok(NetClient {
            inner: Mutex::new(Some(self.client.clone())),
        })
    }
}

/// A get on the libuv thread pool; resolves with the received `Item`.
pub struct GetTask {
    client: Arc<HurrayNetClient>,
    op: Op,
}

impl Task for GetTask {
    type Output = std::result::Result<Brought, NetFailure>;
    type JsValue = Item;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(run(&self.client, &self.op).map(|i| Brought(i.map(Box::new))))
    }

    fn resolve(&mut self, env: Env, out: Self::Output) -> napi::Result<Item> {
        match out.map_err(|f| rejection(&env, f))?.0 {
            Some(item) => Ok(Item::owned(&env, item)),
            None => Err(rejection(
                &env,
                NetFailure(
                    "ERR_HURRAY_INTERNAL".into(),
                    "HURRAY_ERR_INTERNAL_PANIC: a get brought no item".into(),
                    None,
                ),
            )),
        }
    }
}

/// A put on the libuv thread pool; resolves with nothing.
pub struct PutTask {
    client: Arc<HurrayNetClient>,
    op: Op,
}

impl Task for PutTask {
    type Output = std::result::Result<(), NetFailure>;
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(run(&self.client, &self.op).map(drop))
    }

    fn resolve(&mut self, env: Env, out: Self::Output) -> napi::Result<()> {
        out.map_err(|f| rejection(&env, f))
    }
}

/// The options' C form.
fn client_options(o: Option<NetClientOptions>) -> Result<HurrayNetClientOptions> {
    let o = o.unwrap_or_default();
    let mut c = HurrayNetClientOptions::default();
    if let Some(t) = o.timeout_ms {
        c.call_timeout_ms = t;
    }
    if let Some(t) = o.connect_timeout_ms.filter(|&t| t > 0) {
        c.connect_timeout_ms = t;
    }
    if let Some(t) = o.io_timeout_ms.filter(|&t| t > 0) {
        c.io_timeout_ms = t;
    }
    if let Some(m) = o.max_item_bytes {
        if !(m.is_finite() && m >= 1.0 && m.fract() == 0.0) {
            return Err(err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                format!("maxItemBytes must be a positive integer, not {m}"),
            ));
        }
        c.max_item_bytes = m as u64;
    }
    Ok(c)
}

#[napi]
impl NetClient {
    /// Connects to `host:port` and does the handshake on the thread pool; resolves
    /// with the client.
    ///
    /// Rejects: `ECONNREFUSED`-like I/O errors as `ERR_HURRAY_IO`, a timeout
    /// (`ERR_HURRAY_IO`), a refusal (`BUSY`: `ERR_HURRAY_LIMIT`, `netCode` set).
    #[napi(ts_return_type = "Promise<NetClient>")]
    pub fn connect_async(
        host: String,
        port: u32,
        options: Option<NetClientOptions>,
    ) -> Result<AsyncTask<ConnectTask>> {
        let port = u16::try_from(port).map_err(|_| {
            err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                format!("port {port} is outside 0..65535"),
            )
        })?;
        let c = Arc::new(HurrayNetClient::new(client_options(options)?).map_err(ffi)?);
        Ok(AsyncTask::new(ConnectTask {
            client: c,
            op: Op::Connect(host, port),
        }))
    }

    /// Gets the item under `key` on the thread pool; resolves with an `Item` (the
    /// package's `Client.get` unwraps a plain tensor). Its buffers are the
    /// received bytes.
    ///
    /// Rejects: `ERR_HURRAY_NOT_FOUND` with `netCode` 2 (`UNKNOWN_TENSOR`), the
    /// other categories (`netCode` set for a protocol `ERROR`), `ERR_HURRAY_STATE`
    /// after `cancel()`/`close()` (`HURRAY_ERR_CANCELLED`).
    #[napi(ts_return_type = "Promise<Item>")]
    pub fn get_async(
        &self,
        key: String,
        options: Option<NetGetOpts>,
    ) -> Result<AsyncTask<GetTask>> {
        let o = options.unwrap_or_default();
        let mut layouts = Vec::new();
        for l in o.layouts.unwrap_or_default() {
            layouts.push(match l {
                Either::A(name) => (0..=255u8)
                    .find(|&t| hurray_core::tables::layout_name(t) == name)
                    .ok_or_else(|| {
                        err(
                            "HURRAY_ERR_INVALID_ARGUMENT",
                            format!("unknown layout name {name:?}"),
                        )
                    })?,
                Either::B(t) => u8::try_from(t).map_err(|_| {
                    err(
                        "HURRAY_ERR_INVALID_ARGUMENT",
                        format!("layout tag {t} is outside 0..255"),
                    )
                })?,
            });
        }
        let opts = NetGetOptions {
            preferred_layouts: layouts,
            min_alignment: o.alignment.unwrap_or(64),
            allow_transcode: o.transcode.unwrap_or(false),
            parallel: o.parallel.unwrap_or(false),
        };
        Ok(AsyncTask::new(GetTask {
            client: self.native()?,
            op: Op::Get(key, opts),
        }))
    }

    /// Puts a `Tensor` or an `Item` (composites as composites) under `key` on the
    /// thread pool; resolves once the server acknowledged it. Do not change the
    /// memory until the promise settles.
    ///
    /// Rejects: remote refusals (`STORE_FULL`: `ERR_HURRAY_LIMIT`, `netCode` set),
    /// I/O, `ERR_HURRAY_STATE` after `cancel()`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn put_async(
        &self,
        env: Env,
        key: String,
        value: Either<&Tensor, &Item>,
    ) -> Result<AsyncTask<PutTask>> {
        let op = match value {
            Either::A(t) => {
                t.check_lent(env.raw())?;
                Op::PutTensor(key, t.handle()?.clone())
            }
            Either::B(i) => {
                i.check_lent(env.raw())?;
                let (root, path) = i.shared()?;
                Op::PutItem(key, root, path)
            }
        };
        Ok(AsyncTask::new(PutTask {
            client: self.native()?,
            op,
        }))
    }

    /// What the server negotiated (B.7).
    ///
    /// Throws: `ERR_HURRAY_STATE` when closed.
    #[napi(getter)]
    pub fn server_info(&self) -> Result<NetServerInfo> {
        let i = self.native()?.server_info().map_err(ffi)?;
        Ok(NetServerInfo {
            protocol_version: i.protocol_version,
            max_message_size: i.max_message_size,
            capability_flags: i.capability_flags as f64,
            parallel_streams: i.capability_flags & 1 != 0,
        })
    }

    /// Whether the client is closed.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// Cancels the call in flight (it rejects promptly; what it held is released)
    /// and closes the client. Never throws; idempotent. `close()` is the same.
    #[napi]
    pub fn cancel(&self) {
        let c = self.inner.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(c) = c {
            c.cancel();
        }
    }

    /// Closes the client (cancelling a call in flight). Idempotent.
    #[napi]
    pub fn close(&self) {
        self.cancel();
    }
}
