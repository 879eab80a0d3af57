//! The network client across the ABI (decision record 0008, `docs/network.md`): the
//! blocking client `HurrayNetClient` for C and Go, built on `hurray-net`'s async
//! client driven by a current-thread tokio runtime the handle owns.
//!
//! One handle is one connection. Calls on it are serialised (a second thread's call
//! waits for the first); [`HurrayNetClient::cancel`] is the one method meant to be
//! called from another thread while a call blocks: it makes the call in flight, and
//! every later one, return `HURRAY_ERR_CANCELLED`, and closes the connection (a
//! transfer stopped midway leaves the stream in an unknown state, so the connection
//! cannot be reused). A call that runs past the call timeout returns
//! `HURRAY_ERR_TIMEOUT` and also closes the connection; `connect` may be called
//! again on the same handle after a timeout, never after a cancel.
//!
//! Remote `ERROR`s (B.16) map to statuses by category, the B.16 code itself kept for
//! `hurray_last_error_net_code` ([`FfiError::net_code`]):
//!
//! | B.16 code | status | category |
//! |---|---|---|
//! | `UNKNOWN_TENSOR` | `HURRAY_ERR_NOT_FOUND` | not_found |
//! | `PROTOCOL_VERSION_MISMATCH`, `LAYOUT_UNAVAILABLE`, `DEVICE_UNAVAILABLE` | `HURRAY_ERR_NOT_APPLICABLE` | unsupported |
//! | `TRANSCODE_LIMIT_EXCEEDED`, `MESSAGE_TOO_LARGE`, private `LIMIT_EXCEEDED`, `STORE_FULL`, `BUSY` | `HURRAY_ERR_LIMIT` | limit |
//! | `INVALID_MESSAGE`, `SHARD_MISMATCH` | `HURRAY_ERR_FORMAT` | format |
//! | private `TIMEOUT` | `HURRAY_ERR_TIMEOUT` | io |
//! | private `SHUTTING_DOWN`, any other code | `HURRAY_ERR_IO` | io |

use crate::handle::{self, kind, Handle, Header};
use crate::item::HurrayItem;
use crate::status::*;
use crate::tensor::HurrayTensor;
use hurray_net::NetError;
use hurray_proto::error::private_code;
use hurray_proto::{ErrorCode, LayoutEntry};
use std::ffi::c_char;
use std::future::Future;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Options of a blocking client (`hurray_net_client_new`). Fill with
/// `hurray_net_client_options_default`, then change fields. Times in milliseconds;
/// 0 means no limit.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HurrayNetClientOptions {
    /// Time to connect and finish the handshake (B.7), ms (default 10 000).
    pub connect_timeout_ms: u32,
    /// Longest any single read or write may stall, ms (default 60 000).
    pub io_timeout_ms: u32,
    /// Longest a whole get or put may take, ms (default 0: no limit beyond the
    /// stall limit).
    pub call_timeout_ms: u32,
    /// Largest message payload this client accepts, bytes, advertised in
    /// `CLIENT_HELLO` (B.17; default 16 MiB, at least 4096).
    pub max_message_size: u32,
    /// Most data bytes one received item may carry (all tensors of a composite
    /// together; default 4 GiB). A larger response fails with `HURRAY_ERR_LIMIT`.
    pub max_item_bytes: u64,
}

impl Default for HurrayNetClientOptions {
    fn default() -> Self {
        let d = hurray_net::ClientOptions::default();
        HurrayNetClientOptions {
            connect_timeout_ms: d.connect_timeout.as_millis().min(u32::MAX as u128) as u32,
            io_timeout_ms: d.io_timeout.as_millis().min(u32::MAX as u128) as u32,
            call_timeout_ms: 0,
            max_message_size: d.proto.max_message_size,
            max_item_bytes: d.proto.receive.max_item_bytes,
        }
    }
}

/// A limit in ms, 0 = none (a year stands for "none": tokio's timers take it).
fn limit(ms: u32) -> Duration {
    if ms == 0 {
        Duration::from_secs(365 * 24 * 3600)
    } else {
        Duration::from_millis(u64::from(ms))
    }
}

impl HurrayNetClientOptions {
    /// `hurray-net`'s options for these.
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` when `max_message_size` is below 4096
    /// or `max_item_bytes` is 0.
    fn to_net(self) -> FfiResult<hurray_net::ClientOptions> {
        if self.max_message_size < 4096 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!(
                    "max_message_size {} is below 4096 bytes",
                    self.max_message_size
                ),
            ));
        }
        if self.max_item_bytes == 0 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "max_item_bytes is 0",
            ));
        }
        let mut o = hurray_net::ClientOptions {
            connect_timeout: limit(self.connect_timeout_ms),
            io_timeout: limit(self.io_timeout_ms),
            ..hurray_net::ClientOptions::default()
        };
        o.proto.max_message_size = self.max_message_size;
        o.proto.receive.max_item_bytes = self.max_item_bytes;
        Ok(o)
    }
}

/// Options of one get (`hurray_net_client_get`; NULL there means the defaults of
/// `hurray_net_get_options_default`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HurrayNetGetOptions {
    /// Acceptable layouts (`HURRAY_LAYOUT_*` wire bytes), most preferred first
    /// (B.9); borrowed for the call. NULL with count 0 (default): whatever is stored.
    /// Extension tags (`0xF0`..`0xFE`, which carry metadata) are refused.
    pub preferred_layouts: *const u8,
    /// Number of entries at `preferred_layouts`.
    pub preferred_layout_count: u32,
    /// `min_alignment` of the request, bytes: a power of two (default 64).
    pub min_alignment: u32,
    /// 1: set `ALLOW_TRANSCODE` (the server may convert to a preferred layout)
    /// (default 0).
    pub allow_transcode: u8,
    /// 1: set `PARALLEL_OK` (B.13: the server may answer in shards, reassembled
    /// here; used when the server advertises `PARALLEL_STREAMS`) (default 0).
    pub parallel: u8,
}

impl Default for HurrayNetGetOptions {
    fn default() -> Self {
        let d = hurray_proto::GetOptions::default();
        HurrayNetGetOptions {
            preferred_layouts: std::ptr::null(),
            preferred_layout_count: 0,
            min_alignment: d.min_alignment,
            allow_transcode: 0,
            parallel: 0,
        }
    }
}

/// What one get asks for, on the Rust face: [`HurrayNetGetOptions`] with the layouts
/// owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetGetOptions {
    /// Acceptable layout tags, most preferred first; empty: whatever is stored.
    pub preferred_layouts: Vec<u8>,
    /// `min_alignment`, bytes (a power of two; default 64).
    pub min_alignment: u32,
    /// Set `ALLOW_TRANSCODE`.
    pub allow_transcode: bool,
    /// Set `PARALLEL_OK`.
    pub parallel: bool,
}

impl Default for NetGetOptions {
    fn default() -> Self {
        NetGetOptions {
            preferred_layouts: Vec::new(),
            min_alignment: hurray_proto::GetOptions::default().min_alignment,
            allow_transcode: false,
            parallel: false,
        }
    }
}

fn flag(v: u8, arg: &str) -> FfiResult<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` is {v}; it must be 0 or 1"),
        )),
    }
}

impl HurrayNetGetOptions {
    /// The owned form.
    ///
    /// Errors: `HURRAY_ERR_NULL_POINTER` (layouts NULL with a count),
    /// `HURRAY_ERR_INVALID_ARGUMENT` (a flag other than 0 or 1).
    ///
    /// # Safety
    /// `preferred_layouts` NULL or valid for `preferred_layout_count` reads.
    unsafe fn copied(&self) -> FfiResult<NetGetOptions> {
        // SAFETY: forwarded contract.
        let layouts = unsafe {
            slice_in(
                self.preferred_layouts,
                u64::from(self.preferred_layout_count),
                "preferred_layouts",
            )?
        };
        Ok(NetGetOptions {
            preferred_layouts: layouts.to_vec(),
            min_alignment: self.min_alignment,
            allow_transcode: flag(self.allow_transcode, "allow_transcode")?,
            parallel: flag(self.parallel, "parallel")?,
        })
    }
}

impl NetGetOptions {
    /// `hurray-net`'s request options.
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` for an extension layout tag or a
    /// `min_alignment` that is not a power of two.
    fn to_net(&self) -> FfiResult<hurray_net::GetOptions> {
        if !self.min_alignment.is_power_of_two() {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("min_alignment {} is not a power of two", self.min_alignment),
            ));
        }
        let mut layouts = Vec::with_capacity(self.preferred_layouts.len());
        for &t in &self.preferred_layouts {
            if (0xF0..=0xFE).contains(&t) {
                return Err(FfiError::new(
                    HURRAY_ERR_INVALID_ARGUMENT,
                    format!("preferred layout 0x{t:02X} is an extension tag (B.6: it needs metadata, which this call cannot carry)"),
                ));
            }
            layouts.push(LayoutEntry::Tag(t));
        }
        Ok(hurray_net::GetOptions {
            request: hurray_proto::GetOptions {
                preferred_layouts: layouts,
                allow_transcode: self.allow_transcode,
                parallel: self.parallel,
                min_alignment: self.min_alignment,
                ..hurray_proto::GetOptions::default()
            },
            progress: None,
        })
    }
}

/// `hurray-net`'s options for `o` (shared with the sans-io connection).
///
/// Errors: as [`HurrayNetClientOptions`]' checks.
pub(crate) fn client_options(o: HurrayNetClientOptions) -> FfiResult<hurray_net::ClientOptions> {
    o.to_net()
}

/// The request options for `o` (shared with the sans-io connection).
///
/// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (extension tag, alignment).
pub(crate) fn get_options(o: &NetGetOptions) -> FfiResult<hurray_net::GetOptions> {
    o.to_net()
}

/// The owned form of C get options.
///
/// # Safety
/// The layout array valid for its count.
pub(crate) unsafe fn copied_get_options(o: &HurrayNetGetOptions) -> FfiResult<NetGetOptions> {
    // SAFETY: forwarded contract.
    unsafe { o.copied() }
}

/// The client options a C caller passed: a copy of `*opts`, or the defaults for NULL.
///
/// # Safety
/// `opts` NULL or readable.
pub(crate) unsafe fn client_options_in(
    opts: *const HurrayNetClientOptions,
) -> HurrayNetClientOptions {
    if opts.is_null() {
        HurrayNetClientOptions::default()
    } else {
        // SAFETY: non-null and readable per the caller.
        unsafe { *opts }
    }
}

/// The get options a C caller passed, copied (layouts included), or the defaults for
/// NULL.
///
/// Errors: those of [`copied_get_options`].
///
/// # Safety
/// `opts` NULL or readable, its layout array valid for its count.
pub(crate) unsafe fn get_options_in(opts: *const HurrayNetGetOptions) -> FfiResult<NetGetOptions> {
    if opts.is_null() {
        Ok(NetGetOptions::default())
    } else {
        // SAFETY: readable per the caller, layouts valid for their count.
        unsafe { copied_get_options(&*opts) }
    }
}

/// What the server said in its `SERVER_HELLO` (B.7): what this connection uses.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HurrayNetServerInfo {
    /// The protocol version in use (the server's, at most the client's).
    pub protocol_version: u32,
    /// Largest payload the server accepts, bytes (this client's PUT frames fit it).
    pub max_message_size: u32,
    /// The server's capability bits (B.7: bit 0 `PARALLEL_STREAMS`, ...).
    pub capability_flags: u64,
}

/// The status for a B.16 code (see the module table).
pub fn status_for_net_code(code: u32) -> HurrayStatus {
    match ErrorCode::from_u32(code) {
        ErrorCode::UnknownTensor => HURRAY_ERR_NOT_FOUND,
        ErrorCode::ProtocolVersionMismatch
        | ErrorCode::LayoutUnavailable
        | ErrorCode::DeviceUnavailable => HURRAY_ERR_NOT_APPLICABLE,
        ErrorCode::TranscodeLimitExceeded | ErrorCode::MessageTooLarge => HURRAY_ERR_LIMIT,
        ErrorCode::InvalidMessage | ErrorCode::ShardMismatch => HURRAY_ERR_FORMAT,
        c if c == private_code::LIMIT_EXCEEDED
            || c == private_code::STORE_FULL
            || c == private_code::BUSY =>
        {
            HURRAY_ERR_LIMIT
        }
        c if c == private_code::TIMEOUT => HURRAY_ERR_TIMEOUT,
        _ => HURRAY_ERR_IO,
    }
}

fn code_name(code: ErrorCode) -> &'static str {
    private_code::name(code).unwrap_or_else(|| code.name())
}

impl From<NetError> for FfiError {
    fn from(e: NetError) -> FfiError {
        match e {
            NetError::Io(io) => FfiError::new(HURRAY_ERR_IO, format!("network i/o: {io}"))
                .with_os_error(io.raw_os_error()),
            NetError::Timeout(what) => {
                FfiError::new(HURRAY_ERR_TIMEOUT, format!("timed out {what}"))
            }
            NetError::Remote { code, message } => FfiError::new(
                status_for_net_code(code.as_u32()),
                format!(
                    "the server sent ERROR {} (0x{:02X}): {message}",
                    code_name(code),
                    code.as_u32()
                ),
            )
            .with_net_code(Some(code.as_u32())),
            NetError::Protocol { code, message } => FfiError::new(
                status_for_net_code(code.as_u32()),
                format!(
                    "refused by this client (protocol ERROR {} (0x{:02X})): {message}",
                    code_name(code),
                    code.as_u32()
                ),
            )
            .with_net_code(Some(code.as_u32())),
            NetError::Format(e) => FfiError::from(e),
        }
    }
}

/// The mutable part: the runtime that drives the socket and the connection.
struct Conn {
    rt: tokio::runtime::Runtime,
    client: Option<hurray_net::Client>,
}

/// A blocking network client: one connection to a Hurray server (B.7), owned by the
/// library. Thread-safe: calls are serialised; [`cancel`](Self::cancel) may come
/// from any thread at any time.
#[repr(C)]
pub struct HurrayNetClient {
    header: Header,
    opts: HurrayNetClientOptions,
    conn: Mutex<Conn>,
    cancel: tokio::sync::watch::Sender<bool>,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayNetClient {
    const KIND: u16 = kind::NET_CLIENT;
    const NAME: &'static str = "HurrayNetClient";
    fn header(&self) -> &Header {
        &self.header
    }
}

/// One request of [`HurrayNetClient::call`].
enum Op<'a> {
    Get(&'a str, &'a hurray_net::GetOptions),
    Put(&'a str, &'a hurray_io::Item),
}

/// How a driven call ended when it did not complete.
enum Stop {
    Cancelled,
    TimedOut,
}

fn cancelled() -> FfiError {
    FfiError::new(
        HURRAY_ERR_CANCELLED,
        "the client was cancelled (hurray_net_client_cancel); its connection is closed",
    )
}

impl HurrayNetClient {
    /// A client that is not connected yet (no socket, no thread: a current-thread
    /// runtime that runs only inside calls).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (see [`HurrayNetClientOptions`]),
    /// `HURRAY_ERR_IO` when the runtime cannot start.
    pub fn new(opts: HurrayNetClientOptions) -> FfiResult<HurrayNetClient> {
        opts.to_net()?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| FfiError::from(NetError::Io(e)))?;
        Ok(HurrayNetClient {
            header: Header::new(kind::NET_CLIENT, handle::destroy_own::<HurrayNetClient>),
            opts,
            conn: Mutex::new(Conn { rt, client: None }),
            cancel: tokio::sync::watch::channel(false).0,
        })
    }

    /// Moves the client to the heap and returns the pointer a C caller will own
    /// (destroy it with `hurray_net_client_destroy`).
    pub fn into_raw(self) -> *mut HurrayNetClient {
        handle::into_raw(self)
    }

    /// Takes the call lock (waiting for another thread's call), refusing a
    /// cancelled client and a thread inside a tokio runtime.
    fn lock(&self) -> FfiResult<MutexGuard<'_, Conn>> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(FfiError::new(
                HURRAY_ERR_STATE,
                "a blocking network call was made from inside an async runtime; call it from a plain thread",
            ));
        }
        if *self.cancel.borrow() {
            return Err(cancelled());
        }
        let g = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        if *self.cancel.borrow() {
            return Err(cancelled());
        }
        Ok(g)
    }

    /// Runs `fut` on the runtime until it completes, the client is cancelled or
    /// `within` runs out.
    fn drive<T>(
        &self,
        rt: &tokio::runtime::Runtime,
        within: Duration,
        fut: impl Future<Output = hurray_net::Result<T>>,
    ) -> Result<hurray_net::Result<T>, Stop> {
        let mut rx = self.cancel.subscribe();
        rt.block_on(async move {
            tokio::select! {
                r = fut => Ok(r),
                _ = rx.wait_for(|c| *c) => Err(Stop::Cancelled),
                _ = tokio::time::sleep(within) => Err(Stop::TimedOut),
            }
        })
    }

    /// Connects to `host:port` and does the handshake (B.7), replacing (closing)
    /// any connection this client had. `host` is a name or an address.
    ///
    /// Errors: `HURRAY_ERR_IO` (refused, reset, the name does not resolve; the OS
    /// error number is kept), `HURRAY_ERR_TIMEOUT` (the connect timeout),
    /// `HURRAY_ERR_CANCELLED`, a remote `ERROR`'s status (e.g. `BUSY`:
    /// `HURRAY_ERR_LIMIT`; `PROTOCOL_VERSION_MISMATCH`: `HURRAY_ERR_NOT_APPLICABLE`),
    /// `HURRAY_ERR_STATE` from inside an async runtime.
    pub fn connect(&self, host: &str, port: u16) -> FfiResult<()> {
        let opts = self.opts.to_net()?;
        let connect_timeout = opts.connect_timeout;
        let mut g = self.lock()?;
        let Conn { rt, client } = &mut *g;
        *client = None;
        let r = self.drive(
            rt,
            connect_timeout,
            hurray_net::Client::connect((host, port), opts),
        );
        match r {
            Ok(Ok(c)) => {
                *client = Some(c);
                Ok(())
            }
            Ok(Err(e)) => Err(e.into()),
            Err(Stop::Cancelled) => Err(cancelled()),
            Err(Stop::TimedOut) => Err(FfiError::from(NetError::Timeout("connecting"))),
        }
    }

    /// Runs one request on the connection (see [`drive`](Self::drive)); a cancel or
    /// the call timeout closes the connection. Returns the item a get brought.
    fn call(&self, op: Op<'_>) -> FfiResult<Option<hurray_io::Item>> {
        let mut g = self.lock()?;
        let Conn { rt, client } = &mut *g;
        let c = client.as_mut().ok_or_else(|| {
            FfiError::new(
                HURRAY_ERR_STATE,
                "the client is not connected (call hurray_net_client_connect; a timeout closes the connection)",
            )
        })?;
        let within = limit(self.opts.call_timeout_ms);
        let (what, r) = match op {
            Op::Get(key, o) => (
                "getting",
                self.drive(rt, within, async move { c.get(key, o).await.map(Some) }),
            ),
            Op::Put(key, item) => (
                "putting",
                self.drive(
                    rt,
                    within,
                    async move { c.put(key, item).await.map(|()| None) },
                ),
            ),
        };
        match r {
            Ok(r) => r.map_err(FfiError::from),
            Err(stop) => {
                // The stream stopped midway: its state is unknown, so the
                // connection goes (dropping the client closes the socket).
                *client = None;
                Err(match stop {
                    Stop::Cancelled => cancelled(),
                    Stop::TimedOut => FfiError::from(NetError::Timeout(what)),
                })
            }
        }
    }

    /// Gets the item named `key` (a tensor or a whole composite; B.8, B.12, B.13
    /// shards reassembled). The tensors' buffers are the received bytes (no copy
    /// after the socket read).
    ///
    /// Errors: `HURRAY_ERR_NOT_FOUND` (`UNKNOWN_TENSOR`; the connection stays
    /// usable), the other remote codes' statuses (module table), `HURRAY_ERR_IO`,
    /// `HURRAY_ERR_TIMEOUT`, `HURRAY_ERR_CANCELLED`, `HURRAY_ERR_STATE` (not
    /// connected), `HURRAY_ERR_INVALID_ARGUMENT` (options).
    pub fn get(&self, key: &str, opts: &NetGetOptions) -> FfiResult<HurrayItem> {
        let o = opts.to_net()?;
        match self.call(Op::Get(key, &o))? {
            Some(item) => HurrayItem::from_io(item),
            None => Err(FfiError::new(
                HURRAY_ERR_INTERNAL_PANIC,
                "a get returned no item",
            )),
        }
    }

    /// Puts `item` under `key` (B.15); returns once the server acknowledged it.
    /// Frames are written from the item's own buffers (no copy).
    ///
    /// Errors: remote refusals (private `STORE_FULL`: `HURRAY_ERR_LIMIT`, ...),
    /// `HURRAY_ERR_IO`, `HURRAY_ERR_TIMEOUT`, `HURRAY_ERR_CANCELLED`,
    /// `HURRAY_ERR_STATE` (not connected, or an incomplete composite),
    /// `HURRAY_ERR_INVALID_ARGUMENT` (a device buffer).
    pub fn put(&self, key: &str, item: &HurrayItem) -> FfiResult<()> {
        let io = item.to_io()?;
        self.call(Op::Put(key, &io)).map(drop)
    }

    /// [`put`](Self::put) for a plain tensor.
    ///
    /// Errors: as `put`; `HURRAY_ERR_INVALID_ARGUMENT` for a composite's head
    /// (layout 0x0b) alone, before anything is sent (put the whole composite as an
    /// item).
    pub fn put_tensor(&self, key: &str, tensor: &HurrayTensor) -> FfiResult<()> {
        if matches!(tensor.model().layout, hurray_core::Layout::CompositeHead(_)) {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "the tensor is a composite head (layout 0x0b); put the whole composite (head and members) as an item",
            ));
        }
        let io = hurray_io::Item::Tensor(tensor.to_io()?);
        self.call(Op::Put(key, &io)).map(drop)
    }

    /// Cancels: the call in flight on another thread (if any) returns
    /// `HURRAY_ERR_CANCELLED` promptly, its connection is closed and everything it
    /// held is released; every later call returns `HURRAY_ERR_CANCELLED`. Never
    /// blocks, never fails; calling it again does nothing.
    pub fn cancel(&self) {
        self.cancel.send_replace(true);
    }

    /// What the server negotiated; waits for a call in flight to finish.
    ///
    /// Errors: `HURRAY_ERR_STATE` when not connected, `HURRAY_ERR_CANCELLED`.
    pub fn server_info(&self) -> FfiResult<HurrayNetServerInfo> {
        let g = self.lock()?;
        let h = g
            .client
            .as_ref()
            .and_then(|c| c.server_hello())
            .ok_or_else(|| FfiError::new(HURRAY_ERR_STATE, "the client is not connected"))?;
        Ok(HurrayNetServerInfo {
            protocol_version: h.protocol_version,
            max_message_size: h.max_message_size,
            capability_flags: h.capability_flags,
        })
    }
}

// ------------------------------------------------------------------- C face

/// Fills `*out` with the default client options: connect timeout 10 s, stall
/// timeout 60 s, no call timeout, 16 MiB messages, 4 GiB items.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`).
///
/// Ownership: `*out` is a plain struct written by value; nothing to free.
///
/// # Safety
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_client_options_default(
    out: *mut HurrayNetClientOptions,
) -> HurrayStatus {
    // SAFETY: NULL reported, else writable.
    boundary(|| unsafe { put(out, "out", HurrayNetClientOptions::default()) })
}

/// Fills `*out` with the default get options: no layout preference, alignment 64,
/// no transcoding, no parallel shards.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`).
///
/// Ownership: `*out` is a plain struct written by value; nothing to free.
///
/// # Safety
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_get_options_default(
    out: *mut HurrayNetGetOptions,
) -> HurrayStatus {
    // SAFETY: NULL reported, else writable.
    boundary(|| unsafe { put(out, "out", HurrayNetGetOptions::default()) })
}

/// Creates a blocking client, not yet connected (so that
/// `hurray_net_client_cancel` can reach a connect in progress). `opts` NULL means
/// the defaults.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`), `HURRAY_ERR_INVALID_ARGUMENT`
/// (`max_message_size` below 4096, `max_item_bytes` 0), `HURRAY_ERR_IO` (the
/// runtime could not start).
///
/// Ownership: `*out` owned by the caller: `hurray_net_client_destroy`. `opts` is
/// copied.
///
/// # Safety
/// `opts` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_client_new(
    opts: *const HurrayNetClientOptions,
    out: *mut *mut HurrayNetClient,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let c = HurrayNetClient::new(unsafe { client_options_in(opts) })?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out, "out", c.into_raw()) }
    })
}

/// Connects to `host:port` (a name or an address) and does the handshake (B.7);
/// blocks for at most the connect timeout. A connection the client had is closed
/// first. May be called again after `HURRAY_ERR_TIMEOUT` or `HURRAY_ERR_IO`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (not a client,
/// `host` not UTF-8), `HURRAY_ERR_IO` (refused, unresolvable; OS error number in
/// `hurray_last_error_os_error`), `HURRAY_ERR_TIMEOUT`, `HURRAY_ERR_CANCELLED`, a
/// remote `ERROR`'s status (`hurray_last_error_net_code` has its B.16 code).
///
/// Ownership: `host` borrowed for the call; nothing is created for the caller.
///
/// # Safety
/// `client` NULL or a live client; `host` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_client_connect(
    client: *const HurrayNetClient,
    host: *const c_char,
    port: u16,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let c = unsafe { handle::own(client, "client")? };
        // SAFETY: forwarded.
        let host = unsafe { crate::file::str_in(host, "host")? };
        c.connect(host, port)
    })
}

/// Gets the item named `key` (B.8): a tensor, or a whole composite. `opts` NULL
/// means the defaults. Blocks until it arrives, fails, times out or is cancelled.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (options),
/// `HURRAY_ERR_NOT_FOUND` (`UNKNOWN_TENSOR`; the connection stays usable), other
/// remote codes by category (`hurray_last_error_net_code` gives the B.16 code; the
/// message names it and quotes the server), `HURRAY_ERR_IO`, `HURRAY_ERR_TIMEOUT`,
/// `HURRAY_ERR_CANCELLED` (both close the connection), `HURRAY_ERR_STATE` (not
/// connected).
///
/// Ownership: `*out` owned by the caller: `hurray_item_destroy` (a plain tensor is
/// `hurray_item_tensor` of it). `key` and `opts` borrowed for the call.
///
/// # Safety
/// `client` NULL or a live client; `key` NULL or NUL-terminated; `opts` NULL or
/// readable (its layout array valid for its count); `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_client_get(
    client: *const HurrayNetClient,
    key: *const c_char,
    opts: *const HurrayNetGetOptions,
    out: *mut *mut HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let c = unsafe { handle::own(client, "client")? };
        // SAFETY: forwarded.
        let key = unsafe { crate::file::str_in(key, "key")? };
        // SAFETY: forwarded.
        let o = unsafe { get_options_in(opts)? };
        let item = c.get(key, &o)?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out, "out", item.into_raw()) }
    })
}

/// Puts `tensor` under `key` (B.15) and waits for the server's acknowledgement.
/// Data frames are written from the tensor's own buffers.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (a composite head
/// alone, refused before anything is sent; not a tensor of
/// this library copy, a device buffer), remote refusals by category (private
/// `STORE_FULL`: `HURRAY_ERR_LIMIT`), `HURRAY_ERR_IO`, `HURRAY_ERR_TIMEOUT`,
/// `HURRAY_ERR_CANCELLED`, `HURRAY_ERR_STATE` (not connected).
///
/// Ownership: `key` and `tensor` borrowed for the call; nothing is created.
///
/// # Safety
/// `client` NULL or a live client; `key` NULL or NUL-terminated; `tensor` NULL or a
/// live tensor.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_client_put(
    client: *const HurrayNetClient,
    key: *const c_char,
    tensor: *const HurrayTensor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let c = unsafe { handle::own(client, "client")? };
        // SAFETY: forwarded.
        let key = unsafe { crate::file::str_in(key, "key")? };
        // SAFETY: forwarded.
        let t = unsafe { handle::own(tensor, "tensor")? };
        c.put_tensor(key, t)
    })
}

/// Puts `item` (a tensor or a complete composite) under `key` (B.15, B.12).
///
/// Errors: as `hurray_net_client_put`; `HURRAY_ERR_STATE` for a composite with
/// fewer members than its head declares.
///
/// Ownership: `key` and `item` borrowed for the call; nothing is created.
///
/// # Safety
/// `client` NULL or a live client; `key` NULL or NUL-terminated; `item` NULL or a
/// live item.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_client_put_item(
    client: *const HurrayNetClient,
    key: *const c_char,
    item: *const HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let c = unsafe { handle::own(client, "client")? };
        // SAFETY: forwarded.
        let key = unsafe { crate::file::str_in(key, "key")? };
        // SAFETY: forwarded.
        let i = unsafe { handle::own(item, "item")? };
        c.put(key, i)
    })
}

/// Cancels the client from any thread: a call blocked in it (connect, get, put)
/// returns `HURRAY_ERR_CANCELLED` promptly with everything it held released, the
/// connection is closed, and every later call returns `HURRAY_ERR_CANCELLED`. The
/// only function that may run on a client while another thread is inside a call on
/// it. Then wait for that call to return before `hurray_net_client_destroy`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (not a client).
///
/// Ownership: nothing is created or freed.
///
/// # Safety
/// `client` NULL or a live client.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_client_cancel(client: *const HurrayNetClient) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let c = unsafe { handle::own(client, "client")? };
        c.cancel();
        Ok(())
    })
}

/// What the server negotiated in its `SERVER_HELLO` (protocol version, its
/// `max_message_size`, capability bits such as `PARALLEL_STREAMS`).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (not a client),
/// `HURRAY_ERR_STATE` (not connected), `HURRAY_ERR_CANCELLED`.
///
/// Ownership: `*out` written by value; nothing to free.
///
/// # Safety
/// `client` NULL or a live client; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_client_server_info(
    client: *const HurrayNetClient,
    out: *mut HurrayNetServerInfo,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let c = unsafe { handle::own(client, "client")? };
        let info = c.server_info()?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out, "out", info) }
    })
}

/// Destroys the client: closes its connection and frees it; nulls `*client`. Not
/// while another thread is inside a call on it (cancel, wait for the call to
/// return, then destroy).
///
/// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (not a client),
/// `HURRAY_ERR_DOUBLE_DESTROY` (debug builds).
///
/// Ownership: the client and its connection are freed.
///
/// # Safety
/// `client` NULL, or pointing at NULL or a live client.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_client_destroy(
    client: *mut *mut HurrayNetClient,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(client, "client") })
}

// ------------------------------------------------------------- test hooks

#[cfg(feature = "test-hooks")]
static TEST_SERVER: Mutex<Option<(tokio::runtime::Runtime, hurray_net::RunningServer)>> =
    Mutex::new(None);

/// Test hook: starts an in-process `hurray-net` server (PUT store only, no files)
/// on `127.0.0.1`, port chosen by the system, on a one-worker runtime of its own;
/// one at a time per process.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out_port`), `HURRAY_ERR_STATE` (one is
/// already running), `HURRAY_ERR_IO` (bind failed).
///
/// Ownership: `*out_port` written by value; stop the server with
/// `hurray_debug_net_server_stop`.
///
/// # Safety
/// `out_port` NULL or writable.
#[cfg(feature = "test-hooks")]
#[no_mangle]
pub unsafe extern "C" fn hurray_debug_net_server_start(out_port: *mut u16) -> HurrayStatus {
    boundary(|| {
        need(out_port, "out_port")?;
        let mut g = TEST_SERVER.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_some() {
            return Err(FfiError::new(
                HURRAY_ERR_STATE,
                "a test server is already running",
            ));
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| FfiError::from(NetError::Io(e)))?;
        let server = rt.block_on(async {
            hurray_net::Server::bind(
                std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
                Vec::new(),
                hurray_net::ServerConfig::default(),
            )
            .await?
            .spawn()
        })?;
        let port = server.local_addr().port();
        *g = Some((rt, server));
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out_port, "out_port", port) }
    })
}

/// Test hook: stops the server of `hurray_debug_net_server_start` (its
/// connections closed, its runtime's threads joined). No server: nothing happens.
///
/// Errors: `HURRAY_ERR_IO` when the server task failed.
///
/// Ownership: the server and its store are freed.
#[cfg(feature = "test-hooks")]
#[no_mangle]
pub extern "C" fn hurray_debug_net_server_stop() -> HurrayStatus {
    boundary(|| {
        let taken = TEST_SERVER.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((rt, server)) = taken {
            let r = rt.block_on(server.shutdown());
            rt.shutdown_timeout(Duration::from_secs(5));
            r?;
        }
        Ok(())
    })
}
