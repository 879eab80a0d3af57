//! The network client from Python (issue 18, `docs/network.md`): `hurray.connect`
//! and `hurray.Client`, over hurray-ffi's blocking [`HurrayNetClient`] (decision
//! record 0008; no `hurray_*` C call here, decision 0006).
//!
//! Every blocking call (connect, get, put) runs on a short-lived worker thread while
//! the calling thread waits with the GIL released, waking every 50 ms to run
//! Python's signal handlers (`PyErr_CheckSignals`). A handler that raises (Ctrl-C:
//! `KeyboardInterrupt`) cancels the client ([`HurrayNetClient::cancel`]): the
//! native call returns promptly, everything it held is released, the exception
//! propagates, and the client is closed for good (a stream stopped midway cannot be
//! reused; connect again).

use crate::composite::{handle_to_py, py_to_handle};
use crate::errors::{self, NotFoundError, Origin};
use crate::tensor::{Handle, Tensor};
use hurray_ffi::{
    FfiError, FfiResult, HurrayNetClient, HurrayNetClientOptions, NetGetOptions,
    HURRAY_ERR_NOT_FOUND,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a waiting call checks for signals.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// A network error as a Python exception: an unknown key (`UNKNOWN_TENSOR`, B.16
/// code 2) is `hurray.NotFoundError` (a `KeyError`); everything else takes the
/// stream mapping of [`errors::map`] (I/O, timeouts and refused connections:
/// `hurray.FileError`, an `OSError`, with `errno` for OS errors; limits, protocol
/// and state errors: `hurray.StreamError`). The exception carries `net_code`: the
/// B.16 code, or `None` when the error did not come from an `ERROR` message.
pub fn net_error(py: Python<'_>, e: FfiError) -> PyErr {
    let code = e.net_code();
    let err = if e.status == HURRAY_ERR_NOT_FOUND {
        NotFoundError::new_err(e.message.clone())
    } else {
        errors::map(e, Origin::Stream)
    };
    // A failure to set the attribute leaves the exception as it is.
    let _ = err.value(py).setattr("net_code", code);
    err
}

/// Seconds (a float, `None` for no limit) as the options' milliseconds (0 = none).
///
/// Errors: `ValueError` for a negative, NaN or too large value.
fn millis(name: &str, s: Option<f64>) -> PyResult<u32> {
    match s {
        None => Ok(0),
        Some(s) if s.is_finite() && s > 0.0 && s * 1000.0 <= f64::from(u32::MAX) => {
            Ok(((s * 1000.0).ceil() as u32).max(1))
        }
        Some(s) => Err(PyValueError::new_err(format!(
            "{name} must be a positive number of seconds below 4294967 (or None), not {s}"
        ))),
    }
}

/// `"host:port"` (`"[::1]:7070"` for IPv6) split.
///
/// Errors: `ValueError` naming the address.
fn split_addr(addr: &str) -> PyResult<(String, u16)> {
    let bad = || {
        PyValueError::new_err(format!(
            "address {addr:?} is not \"host:port\" (IPv6: \"[::1]:port\")"
        ))
    };
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host.to_owned(), port))
}

/// What a worker hands back: owned native handles moved to the waiting thread.
struct Sent<T>(T);
// SAFETY: the worker thread builds the value and then only moves it into the
// channel; from then on the waiting thread is its sole owner. The handles it holds
// (items, tensors) own their memory through `Arc`s and release guards that may run
// on any thread by contract (ARCHITECTURE: memory is released exactly once, from
// any thread), so moving them between threads is sound.
unsafe impl<T> Send for Sent<T> {}

/// Runs `f(client)` on a worker thread while this thread waits without the GIL,
/// checking Python's signal handlers every [`SIGNAL_POLL`]. A handler's exception
/// cancels the client, waits for the worker to return (promptly: cancelled) and is
/// returned as `Err`; otherwise the worker's result is returned as `Ok`.
fn interruptible<T>(
    py: Python<'_>,
    client: &HurrayNetClient,
    f: impl FnOnce(&HurrayNetClient) -> FfiResult<T> + Send,
) -> PyResult<FfiResult<T>> {
    let (tx, rx) = mpsc::channel::<Sent<FfiResult<T>>>();
    std::thread::scope(|s| {
        s.spawn(move || {
            let _ = tx.send(Sent(f(client)));
        });
        let mut rx = rx;
        loop {
            // The receiver is not `Sync`: it moves into the detached closure and back.
            let (r, back) = py.detach(move || (rx.recv_timeout(SIGNAL_POLL), rx));
            rx = back;
            match r {
                Ok(Sent(r)) => return Ok(r),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(sig) = py.check_signals() {
                        client.cancel();
                        // The result (HURRAY_ERR_CANCELLED, or a late success) is
                        // dropped here: whatever it holds is released.
                        drop(py.detach(move || rx.recv()));
                        return Err(sig);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // The worker panicked; the scope re-raises its panic on exit.
                    return Err(errors::InternalError::new_err(
                        "the network worker thread panicked",
                    ));
                }
            }
        }
    })
}

/// A connection to a Hurray server (issue 18): ``get`` and ``put`` tensors by key.
///
/// Made by :func:`hurray.connect`. One client is one connection; calls on it are
/// serialised (a second thread's call waits for the first). Use it as a context
/// manager or call :meth:`close`.
///
/// Every blocking call releases the GIL and stays interruptible: Ctrl-C (any signal
/// handler that raises) during ``connect``, ``get`` or ``put`` cancels the transfer,
/// releases what it had received and raises the handler's exception
/// (``KeyboardInterrupt``); the client is then **closed** (a stream stopped midway
/// cannot be reused) and every later call raises ``hurray.StreamError``: connect
/// again. A call that runs past ``timeout`` raises ``hurray.FileError`` (timed out)
/// and also closes the connection.
#[pyclass(module = "hurray", frozen)]
pub struct Client {
    /// `None` once closed. Calls clone the `Arc`, so `close` from another thread
    /// never frees a client a call is using.
    inner: Mutex<Option<Arc<HurrayNetClient>>>,
    addr: String,
}

impl Client {
    /// The native client, or `hurray.StreamError` when closed.
    fn native(&self) -> PyResult<Arc<HurrayNetClient>> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| {
                errors::StreamError::new_err(format!(
                    "the client of {} is closed (close(), a cancelled call or KeyboardInterrupt); connect again",
                    self.addr
                ))
            })
    }
}

/// The layout tags of `layouts`: ints (wire tags) or names as
/// :func:`hurray.layout_name` renders them.
///
/// Errors: `TypeError` (neither), `ValueError` (unknown name, tag outside 0..255).
fn layout_tags(layouts: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if layouts.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "layouts must be a list of layout names or tags, not a str",
        ));
    }
    let mut out = Vec::new();
    for l in layouts.try_iter()? {
        let l = l?;
        if let Ok(s) = l.cast::<PyString>() {
            let s = s.to_str()?;
            let tag = (0..=255u8)
                .find(|&t| hurray_core::tables::layout_name(t) == s)
                .ok_or_else(|| PyValueError::new_err(format!("unknown layout name {s:?}")))?;
            out.push(tag);
        } else {
            let t: i64 = l.extract().map_err(|_| {
                PyTypeError::new_err("layouts must hold layout names (str) or tags (int)")
            })?;
            out.push(
                u8::try_from(t).map_err(|_| {
                    PyValueError::new_err(format!("layout tag {t} is outside 0..255"))
                })?,
            );
        }
    }
    Ok(out)
}

#[pymethods]
impl Client {
    /// Gets the item stored under ``key``: a :class:`Tensor`, or a
    /// :class:`Composite` when a composite is stored there.
    ///
    /// ``layouts``: acceptable layouts, most preferred first (names such as
    /// ``"row_major"`` or wire tags; ``None``: whatever is stored);
    /// ``transcode=True`` lets the server convert to one of them. ``alignment``: the
    /// least alignment of every received buffer, bytes (a power of two; default
    /// 64). ``parallel=True`` lets the server answer in shards (used when it
    /// advertises ``PARALLEL_STREAMS``; reassembled here). The tensor's buffers
    /// are the received bytes (no copy after the socket read).
    ///
    /// Raises:
    ///     hurray.NotFoundError: no item under ``key`` (a ``KeyError``;
    ///         ``net_code`` 2, ``UNKNOWN_TENSOR``); the client stays usable.
    ///     hurray.UnsupportedError: a layout is unavailable (``net_code`` set).
    ///     hurray.FileError: I/O, a refused or reset connection, a timeout (the
    ///         connection is closed).
    ///     hurray.StreamError: limits, protocol errors, a closed client.
    ///     KeyboardInterrupt: Ctrl-C during the transfer (the client is closed).
    #[pyo3(signature = (key, *, layouts=None, alignment=64, parallel=false, transcode=false))]
    fn get(
        &self,
        py: Python<'_>,
        key: &str,
        layouts: Option<&Bound<'_, PyAny>>,
        alignment: u32,
        parallel: bool,
        transcode: bool,
    ) -> PyResult<Py<PyAny>> {
        let opts = NetGetOptions {
            preferred_layouts: match layouts {
                Some(l) if !l.is_none() => layout_tags(l)?,
                _ => Vec::new(),
            },
            min_alignment: alignment,
            allow_transcode: transcode,
            parallel,
        };
        let c = self.native()?;
        let item = interruptible(py, &c, |c| c.get(key, &opts).map(Sent))
            .inspect_err(|_| self.close())?
            .map_err(|e| net_error(py, e))?
            .0;
        handle_to_py(py, &item, false)
    }

    /// Puts ``item`` (a :class:`Tensor` or a :class:`Composite`) under ``key``
    /// (replacing what the server held under it); returns once the server
    /// acknowledged it. Frames are written from the tensors' own buffers (no copy).
    ///
    /// Raises:
    ///     hurray.StreamError: the server refused it (``STORE_FULL``, size limits;
    ///         ``net_code`` set), a device tensor (only host memory travels), a
    ///         closed client.
    ///     hurray.FileError: I/O, a timeout.
    ///     TypeError: ``item`` is neither a Tensor nor a Composite.
    ///     KeyboardInterrupt: Ctrl-C during the transfer (the client is closed).
    fn put(&self, py: Python<'_>, key: &str, item: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.native()?;
        if let Ok(t) = item.cast::<Tensor>() {
            let h: &Handle = &t.get().h;
            return interruptible(py, &c, |c| c.put_tensor(key, h.get()))
                .inspect_err(|_| self.close())?
                .map_err(|e| net_error(py, e));
        }
        let item = Sent(py_to_handle(item)?);
        interruptible(py, &c, move |c| {
            let item = item;
            c.put(key, &item.0)
        })
        .inspect_err(|_| self.close())?
        .map_err(|e| net_error(py, e))
    }

    /// What the server negotiated in its hello (B.7), as a ``dict``:
    /// ``protocol_version``, ``max_message_size`` (bytes), ``capability_flags``
    /// (int) and ``parallel_streams`` (bool, capability bit 0).
    ///
    /// Raises:
    ///     hurray.StreamError: the client is closed or not connected.
    #[getter]
    fn server_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.native()?;
        let info = py
            .detach(|| c.server_info())
            .map_err(|e| net_error(py, e))?;
        let d = PyDict::new(py);
        d.set_item("protocol_version", info.protocol_version)?;
        d.set_item("max_message_size", info.max_message_size)?;
        d.set_item("capability_flags", info.capability_flags)?;
        d.set_item("parallel_streams", info.capability_flags & 1 != 0)?;
        Ok(d)
    }

    /// The address it was made with (``"host:port"``).
    #[getter]
    fn address(&self) -> &str {
        &self.addr
    }

    /// True once :meth:`close` ran or a call was interrupted.
    #[getter]
    fn closed(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// Closes the connection and releases the native client. A call in flight on
    /// another thread is cancelled (it raises ``hurray.StreamError``). Idempotent.
    fn close(&self) {
        let c = self.inner.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(c) = c {
            c.cancel();
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!("<hurray.Client {} {state}>", self.addr)
    }
}

/// Connects to the Hurray server at ``address`` (``"host:port"``; IPv6
/// ``"[::1]:port"``) and does the handshake; returns a :class:`Client`.
///
/// ``timeout``: longest one ``get`` or ``put`` may take, seconds (``None``: no limit
/// beyond the stall limit). ``connect_timeout``: seconds to connect and shake hands
/// (default 10). ``io_timeout``: longest a single read or write may stall, seconds
/// (default 60). ``max_item_bytes``: most data bytes one received item may carry
/// (default 4 GiB). Ctrl-C while connecting raises ``KeyboardInterrupt``.
///
/// Raises:
///     ValueError: a bad address or time.
///     hurray.FileError: the connection was refused, the name does not resolve, or
///         the connect timed out (an ``OSError``; ``errno`` set for OS errors).
///     hurray.StreamError: the server refused the client (``BUSY``; ``net_code``).
///     hurray.UnsupportedError: no common protocol version.
#[pyfunction]
#[pyo3(signature = (address, *, timeout=None, connect_timeout=10.0, io_timeout=60.0, max_item_bytes=None))]
pub fn connect(
    py: Python<'_>,
    address: &str,
    timeout: Option<f64>,
    connect_timeout: Option<f64>,
    io_timeout: Option<f64>,
    max_item_bytes: Option<u64>,
) -> PyResult<Client> {
    let (host, port) = split_addr(address)?;
    let mut o = HurrayNetClientOptions {
        call_timeout_ms: millis("timeout", timeout)?,
        connect_timeout_ms: millis("connect_timeout", connect_timeout)?,
        io_timeout_ms: millis("io_timeout", io_timeout)?,
        ..HurrayNetClientOptions::default()
    };
    if let Some(m) = max_item_bytes {
        o.max_item_bytes = m;
    }
    let c = Arc::new(HurrayNetClient::new(o).map_err(|e| net_error(py, e))?);
    interruptible(py, &c, |c| c.connect(&host, port))?.map_err(|e| net_error(py, e))?;
    Ok(Client {
        inner: Mutex::new(Some(c)),
        addr: address.to_owned(),
    })
}

/// Adds `connect` and `Client` to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Client>()?;
    m.add_function(wrap_pyfunction!(connect, m)?)?;
    Ok(())
}
