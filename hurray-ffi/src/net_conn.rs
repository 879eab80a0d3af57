//! `HurrayNetConn`: the client connection as a sans-io state machine through C
//! (decision record 0008), for runtimes that own their sockets and their loop (Node's
//! libuv, Java NIO, Python asyncio): the caller reads from its socket into
//! [`read_buf`](HurrayNetConn::read_buf) and reports the count with
//! [`advance`](HurrayNetConn::advance), writes what
//! [`poll_transmit`](HurrayNetConn::poll_transmit) hands out, and takes what happened
//! from [`poll_event`](HurrayNetConn::poll_event). Every protocol rule stays in
//! `hurray-proto`'s client; nothing here blocks or touches a socket.
//!
//! The loop, in any runtime: after creating the connection and after every request,
//! advance or event, drain `poll_transmit` (write each in order; a data frame is its
//! 20-byte prefix then a slice of the tensor's own memory, for one vectored write),
//! then drain `poll_event`; when the socket is readable, read into `read_buf` (while
//! a data frame streams in, that slice is the destination tensor buffer itself, so
//! each data byte is written once, by the read) and `advance` by the count.

use crate::handle::{self, kind, Handle, Header};
use crate::item::HurrayItem;
use crate::net::{status_for_net_code, HurrayNetClientOptions, HurrayNetGetOptions};
use crate::net::{HurrayNetServerInfo, NetGetOptions};
use crate::status::*;
use crate::tensor::HurrayTensor;
use hurray_proto::{ClientEvent, ErrorCode, ProtoError, Transmit};
use std::ffi::c_char;

/// `HurrayNetTransmit::kind`: nothing to write now.
pub const HURRAY_NET_TRANSMIT_NONE: u32 = 0;
/// `HurrayNetTransmit::kind`: write `bytes` (complete messages).
pub const HURRAY_NET_TRANSMIT_BYTES: u32 = 1;
/// `HurrayNetTransmit::kind`: write `bytes` (the 20-byte `TENSOR_DATA` prefix) then
/// `data` (the frame's slice of the tensor's memory).
pub const HURRAY_NET_TRANSMIT_DATA: u32 = 2;
/// `HurrayNetTransmit::kind`: flush what came before, then close the connection
/// (this side sent a connection-level `ERROR`, B.16).
pub const HURRAY_NET_TRANSMIT_CLOSE: u32 = 3;

/// `HurrayNetEvent::kind`: no event now.
pub const HURRAY_NET_EVENT_NONE: u32 = 0;
/// `HurrayNetEvent::kind`: the `SERVER_HELLO` was accepted (B.7).
pub const HURRAY_NET_EVENT_CONNECTED: u32 = 1;
/// `HurrayNetEvent::kind`: a get completed; `item` is the caller's.
pub const HURRAY_NET_EVENT_GOT: u32 = 2;
/// `HurrayNetEvent::kind`: `TENSOR_PUT_ACK` for the put on `stream_id`.
pub const HURRAY_NET_EVENT_PUT_ACKED: u32 = 3;
/// `HurrayNetEvent::kind`: the get or put on `stream_id` ended in an `ERROR`.
pub const HURRAY_NET_EVENT_FAILED: u32 = 4;
/// `HurrayNetEvent::kind`: the connection failed; close the socket after writing
/// what `poll_transmit` still has.
pub const HURRAY_NET_EVENT_CONNECTION_FAILED: u32 = 5;
/// `HurrayNetEvent::kind`: a `PONG`.
pub const HURRAY_NET_EVENT_PONG: u32 = 6;

/// One thing to write (`hurray_net_conn_poll_transmit`). The pointers are borrowed
/// from the connection and stay valid until the next `hurray_net_conn_poll_transmit`
/// or destroy of the connection, so an asynchronous write may use them in place
/// until it completes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HurrayNetTransmit {
    /// `HURRAY_NET_TRANSMIT_*`.
    pub kind: u32,
    /// The transport stream (0 for none).
    pub stream_id: u32,
    /// BYTES: the messages; DATA: the 20-byte frame prefix; else NULL.
    pub bytes: *const u8,
    /// Length of `bytes`, bytes.
    pub bytes_len: u64,
    /// DATA: the frame's data, a slice of the tensor's own memory; else NULL.
    pub data: *const u8,
    /// Length of `data`, bytes.
    pub data_len: u64,
}

impl Default for HurrayNetTransmit {
    fn default() -> Self {
        HurrayNetTransmit {
            kind: HURRAY_NET_TRANSMIT_NONE,
            stream_id: 0,
            bytes: std::ptr::null(),
            bytes_len: 0,
            data: std::ptr::null(),
            data_len: 0,
        }
    }
}

/// One event (`hurray_net_conn_poll_event`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HurrayNetEvent {
    /// `HURRAY_NET_EVENT_*`.
    pub kind: u32,
    /// The request's stream (GOT, PUT_ACKED, FAILED, PONG), else 0.
    pub stream_id: u32,
    /// GOT: the item, owned by the caller (`hurray_item_destroy`); else NULL.
    pub item: *mut HurrayItem,
    /// FAILED, CONNECTION_FAILED: the status the failure maps to (as the blocking
    /// client would return it); else `HURRAY_OK`.
    pub status: HurrayStatus,
    /// FAILED, CONNECTION_FAILED: the B.16 code; else 0.
    pub net_code: u32,
    /// FAILED, CONNECTION_FAILED: 1 when this client sent the `ERROR` (the server
    /// broke a rule), 0 when the server did.
    pub sent: u8,
}

impl Default for HurrayNetEvent {
    fn default() -> Self {
        HurrayNetEvent {
            kind: HURRAY_NET_EVENT_NONE,
            stream_id: 0,
            item: std::ptr::null_mut(),
            status: HURRAY_OK,
            net_code: 0,
            sent: 0,
        }
    }
}

/// What [`HurrayNetConn::poll_transmit`] hands out (Rust face).
#[derive(Debug)]
pub enum NetTransmit<'a> {
    /// Complete messages.
    Bytes {
        /// The stream.
        stream_id: u32,
        /// The bytes to write.
        bytes: &'a [u8],
    },
    /// One data frame: `prefix` then `data` (a slice of the tensor's memory).
    Data {
        /// The stream.
        stream_id: u32,
        /// Header + offset, 20 bytes.
        prefix: &'a [u8],
        /// The frame's data.
        data: &'a [u8],
    },
    /// Flush, then close the connection.
    Close,
}

/// What [`HurrayNetConn::poll_event`] reports (Rust face).
pub enum NetEvent {
    /// Handshake done.
    Connected,
    /// A get completed.
    Got {
        /// Its stream.
        stream_id: u32,
        /// The tensor or composite.
        item: HurrayItem,
    },
    /// A put was acknowledged.
    PutAcked {
        /// Its stream.
        stream_id: u32,
    },
    /// A get or put ended in an `ERROR` (the connection stays usable).
    Failed {
        /// Its stream.
        stream_id: u32,
        /// Status (by B.16 category), message, and [`FfiError::net_code`].
        error: FfiError,
        /// This client sent the `ERROR`.
        sent: bool,
    },
    /// The connection failed.
    ConnectionFailed {
        /// Status, message and code.
        error: FfiError,
        /// This client sent the `ERROR`.
        sent: bool,
    },
    /// A `PONG`.
    Pong {
        /// Its stream.
        stream_id: u32,
    },
}

fn proto_error(e: ProtoError, sent: bool) -> FfiError {
    let code = e.code.as_u32();
    let name = hurray_proto::error::private_code::name(e.code).unwrap_or_else(|| e.code.name());
    let who = if sent {
        "refused by this client, which sent"
    } else {
        "the server sent"
    };
    FfiError::new(
        status_for_net_code(code),
        format!("{who} ERROR {name} (0x{code:02X}): {}", e.detail),
    )
    .with_net_code(Some(code))
}

/// A client connection whose I/O the caller does (see the module docs). Used by one
/// thread at a time.
#[repr(C)]
pub struct HurrayNetConn {
    header: Header,
    proto: hurray_proto::Client,
    /// The transmit handed out last (its memory backs the pointers given out).
    current: Option<Transmit>,
    /// Length of the slice the last `read_buf` returned.
    read_len: usize,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayNetConn {
    const KIND: u16 = kind::NET_CONN;
    const NAME: &'static str = "HurrayNetConn";
    fn header(&self) -> &Header {
        &self.header
    }
}

impl HurrayNetConn {
    /// A connection with its `CLIENT_HELLO` queued (the first transmit). Only the
    /// message and item limits of `opts` apply (the timeouts are the caller's).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (see [`HurrayNetClientOptions`]).
    pub fn new(opts: HurrayNetClientOptions) -> FfiResult<HurrayNetConn> {
        let o = crate::net::client_options(opts)?;
        Ok(HurrayNetConn {
            header: Header::new(kind::NET_CONN, handle::destroy_own::<HurrayNetConn>),
            proto: hurray_proto::Client::new(o.proto),
            current: None,
            read_len: 0,
        })
    }

    /// Moves the connection to the heap and returns the pointer a C caller will own
    /// (destroy it with `hurray_net_conn_destroy`).
    pub fn into_raw(self) -> *mut HurrayNetConn {
        handle::into_raw(self)
    }

    /// Where to read the next bytes from the socket (never empty); follow with
    /// [`advance`](Self::advance).
    pub fn read_buf(&mut self) -> &mut [u8] {
        let b = self.proto.read_buf();
        self.read_len = b.len();
        b
    }

    /// Records that `n` bytes were read into the last [`read_buf`](Self::read_buf)
    /// and processes them (events and transmits may follow).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` when `n` is 0 or exceeds that slice;
    /// `HURRAY_ERR_STATE` when `read_buf` was not called since the last advance.
    pub fn advance(&mut self, n: u64) -> FfiResult<()> {
        if self.read_len == 0 {
            return Err(FfiError::new(
                HURRAY_ERR_STATE,
                "advance without read_buf: call hurray_net_conn_read_buf before each read",
            ));
        }
        if n == 0 || n > self.read_len as u64 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!(
                    "advance by {n}: must be 1..={} (the read_buf length); end of input is the caller's to handle",
                    self.read_len
                ),
            ));
        }
        self.read_len = 0;
        self.proto.advance(n as usize);
        Ok(())
    }

    /// The next thing to write, borrowed until the next call; `None` when nothing
    /// is queued.
    pub fn poll_transmit(&mut self) -> Option<NetTransmit<'_>> {
        self.current = self.proto.poll_transmit();
        Some(match self.current.as_ref()? {
            Transmit::Bytes { stream_id, bytes } => NetTransmit::Bytes {
                stream_id: *stream_id,
                bytes,
            },
            Transmit::Data {
                stream_id,
                prefix,
                buffer,
                range,
            } => NetTransmit::Data {
                stream_id: *stream_id,
                prefix,
                data: &buffer.as_slice()[range.clone()],
            },
            Transmit::CloseConnection => NetTransmit::Close,
        })
    }

    /// The next event; `None` when there is none.
    ///
    /// Errors: those of [`HurrayItem::from_io`] for a received item (not expected:
    /// the receive path checked it).
    pub fn poll_event(&mut self) -> FfiResult<Option<NetEvent>> {
        let Some(ev) = self.proto.poll_event() else {
            return Ok(None);
        };
        Ok(Some(match ev {
            ClientEvent::Connected { .. } => NetEvent::Connected,
            ClientEvent::Got { stream_id, item } => NetEvent::Got {
                stream_id,
                item: HurrayItem::from_io(item)?,
            },
            ClientEvent::PutAcked { stream_id } => NetEvent::PutAcked { stream_id },
            ClientEvent::Failed {
                stream_id,
                error,
                sent,
            } => NetEvent::Failed {
                stream_id,
                error: proto_error(error, sent),
                sent,
            },
            ClientEvent::ConnectionFailed { error, sent } => NetEvent::ConnectionFailed {
                error: proto_error(error, sent),
                sent,
            },
            ClientEvent::Pong { stream_id, .. } => NetEvent::Pong { stream_id },
        }))
    }

    /// Queues a get of `key`; returns its stream id (events carry it).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (options), `HURRAY_ERR_STATE` (before
    /// `CONNECTED` or after the connection failed).
    pub fn get(&mut self, key: &str, opts: &NetGetOptions) -> FfiResult<u32> {
        let o = crate::net::get_options(opts)?;
        self.proto.get(key, &o.request).map_err(state_error)
    }

    /// Queues a put of `item` under `key` (B.15); returns its stream id. The item's
    /// buffers are shared (no copy) until their last frame is written, so the caller
    /// may destroy its handle at once.
    ///
    /// Errors: `HURRAY_ERR_STATE` (not connected, incomplete composite),
    /// `HURRAY_ERR_INVALID_ARGUMENT` (a device buffer).
    pub fn put(&mut self, key: &str, item: &HurrayItem) -> FfiResult<u32> {
        let io = item.to_io()?;
        self.proto.put(key, &io).map_err(state_error)
    }

    /// [`put`](Self::put) for a plain tensor.
    ///
    /// Errors: as `put`.
    pub fn put_tensor(&mut self, key: &str, tensor: &HurrayTensor) -> FfiResult<u32> {
        let io = hurray_io::Item::Tensor(tensor.to_io()?);
        self.proto.put(key, &io).map_err(state_error)
    }

    /// What the server's `SERVER_HELLO` said.
    ///
    /// Errors: `HURRAY_ERR_STATE` before `CONNECTED`.
    pub fn server_info(&self) -> FfiResult<HurrayNetServerInfo> {
        let h = self
            .proto
            .server_hello()
            .ok_or_else(|| FfiError::new(HURRAY_ERR_STATE, "not connected yet"))?;
        Ok(HurrayNetServerInfo {
            protocol_version: h.protocol_version,
            max_message_size: h.max_message_size,
            capability_flags: h.capability_flags,
        })
    }
}

/// A request the state machine refused locally (nothing was sent).
fn state_error(e: ProtoError) -> FfiError {
    let status = if e.code == ErrorCode::InvalidMessage {
        HURRAY_ERR_STATE
    } else {
        status_for_net_code(e.code.as_u32())
    };
    FfiError::new(status, format!("request refused: {}", e.detail))
}

// ------------------------------------------------------------------- C face

/// Creates a sans-io client connection with its `CLIENT_HELLO` queued. `opts` NULL
/// means the defaults; only `max_message_size` and `max_item_bytes` apply (the
/// caller owns the clock and the socket).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`), `HURRAY_ERR_INVALID_ARGUMENT`
/// (options).
///
/// Ownership: `*out` owned by the caller: `hurray_net_conn_destroy`. `opts` copied.
///
/// # Safety
/// `opts` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_new(
    opts: *const HurrayNetClientOptions,
    out: *mut *mut HurrayNetConn,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let c = HurrayNetConn::new(unsafe { crate::net::client_options_in(opts) })?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out, "out", c.into_raw()) }
    })
}

/// Where to read the next bytes from the socket: `*out_len` (never 0) bytes at
/// `*out_ptr`. While a data frame streams in, this is the destination tensor's own
/// buffer. Read at most that many bytes there, then call `hurray_net_conn_advance`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (not a
/// connection of this library copy).
///
/// Ownership: `*out_ptr` borrowed, writable, valid until the next call on the
/// connection.
///
/// # Safety
/// `conn` NULL or a live connection used by this thread only; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_read_buf(
    conn: *mut HurrayNetConn,
    out_ptr: *mut *mut u8,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        need(out_ptr, "out_ptr")?;
        need(out_len, "out_len")?;
        // SAFETY: forwarded.
        let c = unsafe { handle::own_mut(conn, "conn")? };
        let b = c.read_buf();
        let (p, n) = (b.as_mut_ptr(), b.len() as u64);
        // SAFETY: both checked non-null; writable per the caller.
        unsafe {
            put(out_ptr, "out_ptr", p)?;
            put(out_len, "out_len", n)
        }
    })
}

/// Records that `n` bytes (1..=the last `read_buf` length) were read into the last
/// `read_buf` slice and processes them; events and transmits may follow. End of
/// input is not reported here: when the socket closes, the caller fails what it
/// still waits for and destroys the connection.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (`n` out of
/// range, not a connection), `HURRAY_ERR_STATE` (no `read_buf` since the last
/// advance).
///
/// Ownership: nothing is created or freed.
///
/// # Safety
/// `conn` NULL or a live connection used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_advance(conn: *mut HurrayNetConn, n: u64) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let c = unsafe { handle::own_mut(conn, "conn")? };
        c.advance(n)
    })
}

/// The next thing to write into `*out` (`kind` `HURRAY_NET_TRANSMIT_NONE` when
/// nothing is queued). Write transmits in order; a DATA transmit is `bytes` then
/// `data` (one vectored write).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (not a
/// connection).
///
/// Ownership: `*out` written by value; its pointers are borrowed until the next
/// `hurray_net_conn_poll_transmit` or the connection's destroy.
///
/// # Safety
/// `conn` NULL or a live connection used by this thread only; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_poll_transmit(
    conn: *mut HurrayNetConn,
    out: *mut HurrayNetTransmit,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let c = unsafe { handle::own_mut(conn, "conn")? };
        let t = match c.poll_transmit() {
            None => HurrayNetTransmit::default(),
            Some(NetTransmit::Bytes { stream_id, bytes }) => HurrayNetTransmit {
                kind: HURRAY_NET_TRANSMIT_BYTES,
                stream_id,
                bytes: bytes.as_ptr(),
                bytes_len: bytes.len() as u64,
                ..HurrayNetTransmit::default()
            },
            Some(NetTransmit::Data {
                stream_id,
                prefix,
                data,
            }) => HurrayNetTransmit {
                kind: HURRAY_NET_TRANSMIT_DATA,
                stream_id,
                bytes: prefix.as_ptr(),
                bytes_len: prefix.len() as u64,
                data: data.as_ptr(),
                data_len: data.len() as u64,
            },
            Some(NetTransmit::Close) => HurrayNetTransmit {
                kind: HURRAY_NET_TRANSMIT_CLOSE,
                ..HurrayNetTransmit::default()
            },
        };
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out, "out", t) }
    })
}

/// The next event into `*out` (`kind` `HURRAY_NET_EVENT_NONE` when none). For
/// FAILED and CONNECTION_FAILED, `status` and `net_code` say what failed and this
/// thread's `hurray_last_error_message` / `hurray_last_error_net_code` hold the
/// detail, as if a call had failed (the function itself returns `HURRAY_OK`).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (not a
/// connection).
///
/// Ownership: `*out` written by value; a GOT event's `item` is owned by the caller
/// (`hurray_item_destroy`).
///
/// # Safety
/// `conn` NULL or a live connection used by this thread only; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_poll_event(
    conn: *mut HurrayNetConn,
    out: *mut HurrayNetEvent,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let c = unsafe { handle::own_mut(conn, "conn")? };
        let failed = |kind, stream_id, error: FfiError, sent: bool| {
            set_last_error(&error);
            HurrayNetEvent {
                kind,
                stream_id,
                status: error.status,
                net_code: error.net_code().unwrap_or(0),
                sent: u8::from(sent),
                ..HurrayNetEvent::default()
            }
        };
        let e = match c.poll_event()? {
            None => HurrayNetEvent::default(),
            Some(NetEvent::Connected) => HurrayNetEvent {
                kind: HURRAY_NET_EVENT_CONNECTED,
                ..HurrayNetEvent::default()
            },
            Some(NetEvent::Got { stream_id, item }) => HurrayNetEvent {
                kind: HURRAY_NET_EVENT_GOT,
                stream_id,
                item: item.into_raw(),
                ..HurrayNetEvent::default()
            },
            Some(NetEvent::PutAcked { stream_id }) => HurrayNetEvent {
                kind: HURRAY_NET_EVENT_PUT_ACKED,
                stream_id,
                ..HurrayNetEvent::default()
            },
            Some(NetEvent::Failed {
                stream_id,
                error,
                sent,
            }) => failed(HURRAY_NET_EVENT_FAILED, stream_id, error, sent),
            Some(NetEvent::ConnectionFailed { error, sent }) => {
                failed(HURRAY_NET_EVENT_CONNECTION_FAILED, 0, error, sent)
            }
            Some(NetEvent::Pong { stream_id }) => HurrayNetEvent {
                kind: HURRAY_NET_EVENT_PONG,
                stream_id,
                ..HurrayNetEvent::default()
            },
        };
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out, "out", e) }
    })
}

/// Queues a get of `key` (`opts` NULL: the defaults); `*out_stream_id` identifies
/// its GOT or FAILED event. Nothing is written to a socket: drain
/// `hurray_net_conn_poll_transmit`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (options, not a
/// connection), `HURRAY_ERR_STATE` (before CONNECTED or after CONNECTION_FAILED).
///
/// Ownership: `key` and `opts` borrowed for the call; `*out_stream_id` written by
/// value.
///
/// # Safety
/// `conn` NULL or a live connection used by this thread only; `key` NULL or
/// NUL-terminated; `opts` NULL or readable; `out_stream_id` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_get(
    conn: *mut HurrayNetConn,
    key: *const c_char,
    opts: *const HurrayNetGetOptions,
    out_stream_id: *mut u32,
) -> HurrayStatus {
    boundary(|| {
        need(out_stream_id, "out_stream_id")?;
        // SAFETY: forwarded.
        let c = unsafe { handle::own_mut(conn, "conn")? };
        // SAFETY: forwarded.
        let key = unsafe { crate::file::str_in(key, "key")? };
        // SAFETY: forwarded.
        let o = unsafe { crate::net::get_options_in(opts)? };
        let sid = c.get(key, &o)?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out_stream_id, "out_stream_id", sid) }
    })
}

/// Queues a put of `tensor` under `key` (B.15); `*out_stream_id` identifies its
/// PUT_ACKED or FAILED event. The tensor's memory is shared, not copied, until its
/// last frame is written; the caller may destroy the tensor handle at once.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (not a
/// connection or tensor of this copy, a device buffer), `HURRAY_ERR_STATE` (not
/// connected).
///
/// Ownership: `key` and `tensor` borrowed for the call; `*out_stream_id` written by
/// value.
///
/// # Safety
/// `conn` NULL or a live connection used by this thread only; `key` NULL or
/// NUL-terminated; `tensor` NULL or a live tensor; `out_stream_id` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_put(
    conn: *mut HurrayNetConn,
    key: *const c_char,
    tensor: *const HurrayTensor,
    out_stream_id: *mut u32,
) -> HurrayStatus {
    boundary(|| {
        need(out_stream_id, "out_stream_id")?;
        // SAFETY: forwarded.
        let c = unsafe { handle::own_mut(conn, "conn")? };
        // SAFETY: forwarded.
        let key = unsafe { crate::file::str_in(key, "key")? };
        // SAFETY: forwarded.
        let t = unsafe { handle::own(tensor, "tensor")? };
        let sid = c.put_tensor(key, t)?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out_stream_id, "out_stream_id", sid) }
    })
}

/// Queues a put of `item` (a tensor or a complete composite, B.12) under `key`;
/// as `hurray_net_conn_put`.
///
/// Errors: as `hurray_net_conn_put`; `HURRAY_ERR_STATE` also for a composite with
/// fewer members than its head declares.
///
/// Ownership: `key` and `item` borrowed for the call (the memory is shared until the
/// last frame is written; the handle may be destroyed at once); `*out_stream_id`
/// written by value.
///
/// # Safety
/// `conn` NULL or a live connection used by this thread only; `key` NULL or
/// NUL-terminated; `item` NULL or a live item; `out_stream_id` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_put_item(
    conn: *mut HurrayNetConn,
    key: *const c_char,
    item: *const HurrayItem,
    out_stream_id: *mut u32,
) -> HurrayStatus {
    boundary(|| {
        need(out_stream_id, "out_stream_id")?;
        // SAFETY: forwarded.
        let c = unsafe { handle::own_mut(conn, "conn")? };
        // SAFETY: forwarded.
        let key = unsafe { crate::file::str_in(key, "key")? };
        // SAFETY: forwarded.
        let i = unsafe { handle::own(item, "item")? };
        let sid = c.put(key, i)?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out_stream_id, "out_stream_id", sid) }
    })
}

/// What the server's `SERVER_HELLO` said (after the CONNECTED event).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_INVALID_ARGUMENT` (not a
/// connection), `HURRAY_ERR_STATE` (not connected yet).
///
/// Ownership: `*out` written by value; nothing to free.
///
/// # Safety
/// `conn` NULL or a live connection; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_server_info(
    conn: *const HurrayNetConn,
    out: *mut HurrayNetServerInfo,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let c = unsafe { handle::own(conn, "conn")? };
        let info = c.server_info()?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out, "out", info) }
    })
}

/// Destroys the connection (the caller closes its socket); items already handed
/// out by GOT events stay valid. Nulls `*conn`.
///
/// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (not a connection),
/// `HURRAY_ERR_DOUBLE_DESTROY` (debug builds).
///
/// Ownership: the connection, its queued transmits and partial items are freed.
///
/// # Safety
/// `conn` NULL, or pointing at NULL or a live connection.
#[no_mangle]
pub unsafe extern "C" fn hurray_net_conn_destroy(conn: *mut *mut HurrayNetConn) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(conn, "conn") })
}
