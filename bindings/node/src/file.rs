//! HRRYFILE reader (memory-mapped; tensors outlive it) and writer (temp file, then
//! rename: a failed or abandoned write leaves nothing at the path).

use std::path::Path;
use std::sync::{Arc, Mutex};

use hurray_ffi::file::HURRAY_CRC_VERIFIED;
use hurray_ffi::{
    DataCrc, HurrayFileReader, HurrayFileWriter, HurrayWriteOptions, KvArray, KvValue, ReadOptions,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::budget::{Token, LIVE_MAPPINGS};
use crate::error::{closed, err, ffi, napi_err, Result};
use crate::item::Item;
use crate::tensor::{
    adjust_external, view_of, Descriptor, Handle, Tensor, HOLDER_CHARGE, MAPPING_CHARGE,
};

/// `s` when it holds no NUL byte; otherwise `ERR_HURRAY_INVALID_ARGUMENT` naming
/// `what`. Only paths are checked: the operating system takes them NUL-terminated.
/// Tensor names, KV keys and string values are length-prefixed in the format, may
/// hold NUL bytes, and reach the library's Rust face with their length.
fn no_nul<'s>(what: &str, s: &'s str) -> Result<&'s str> {
    if s.contains('\0') {
        Err(err(
            "HURRAY_ERR_INVALID_ARGUMENT",
            format!("{what} contains a NUL byte"),
        ))
    } else {
        Ok(s)
    }
}

/// Facts about an open file. Offsets and sizes in bytes.
#[napi(object)]
pub struct FileInfo {
    /// Container version, major.
    pub version_major: u32,
    /// Container version, minor.
    pub version_minor: u32,
    /// Whether the index CRC-32C was present and verified.
    pub crc_verified: bool,
    /// Every data buffer starts at a multiple of this.
    pub data_buffer_alignment: u32,
    /// File size in bytes.
    pub file_len: f64,
    /// Tensors in the index (composite heads and members included).
    pub tensor_count: f64,
    /// KV entries.
    pub kv_count: f64,
}

/// A memory-mapped HRRYFILE, opened by path. Opening validates the header, index,
/// KV section and every descriptor without reading payload. Tensors it returns are
/// zero-copy views of a private copy-on-write mapping and outlive the reader:
/// `close()` may come first; the mapping goes with the last tensor and view.
#[napi(custom_finalize)]
pub struct FileReader {
    /// The open reader; `None` once closed.
    inner: Option<HurrayFileReader>,
    /// External memory reported to V8 for the mapping (`MAPPING_CHARGE`), given
    /// back on `close()` or finalization.
    charged: i64,
    /// The mapping's count in `budget::LIVE_MAPPINGS`, shared with every tensor and
    /// item taken from this reader: the count falls when the mapping is unmapped.
    mapping: Option<Arc<Token>>,
}

impl ObjectFinalize for FileReader {
    fn finalize(mut self, env: Env) -> napi::Result<()> {
        self.uncount(env.raw());
        Ok(())
    }
}

impl FileReader {
    /// A reader object over the open `r`, its mapping counted and charged.
    pub(crate) fn over(env: &Env, r: HurrayFileReader) -> FileReader {
        adjust_external(env.raw(), MAPPING_CHARGE);
        FileReader {
            inner: Some(r),
            charged: MAPPING_CHARGE,
            mapping: Some(Token::new(&LIVE_MAPPINGS, 1)),
        }
    }

    /// Gives back the external-memory charge (once).
    fn uncount(&mut self, env: napi::sys::napi_env) {
        let charged = std::mem::take(&mut self.charged);
        if charged != 0 {
            adjust_external(env, -charged);
        }
    }

    fn live(&self) -> Result<&HurrayFileReader> {
        self.inner.as_ref().ok_or_else(|| closed("FileReader"))
    }

    /// The index of the KV entry `key`.
    ///
    /// Errors: `ERR_HURRAY_NOT_FOUND`.
    fn kv_index(&self, key: &str) -> Result<u64> {
        let r = self.live()?;
        r.kv_find(key).ok_or_else(|| {
            err(
                "HURRAY_ERR_NOT_FOUND",
                format!("the file has no KV key named {key:?}"),
            )
        })
    }

    /// The counted resources a tensor or item taken from this reader keeps alive.
    fn tokens(&self) -> crate::budget::Tokens {
        self.mapping.iter().cloned().collect()
    }
}

#[napi]
impl FileReader {
    /// Opens and memory-maps the file at `path`, validating everything but payload.
    ///
    /// Throws: `ENOENT`, `EISDIR`, `ERR_HURRAY_IO`, `ERR_HURRAY_TRUNCATED`,
    /// `ERR_HURRAY_FORMAT`, ... naming the path, rule and offset;
    /// `ERR_HURRAY_LIMIT` when 7/8 of `vm.max_map_count` mappings are alive (Linux):
    /// a mapping lives while its reader or any tensor, item or view taken from it
    /// does.
    #[napi(factory)]
    pub fn open(env: Env, path: String) -> Result<FileReader> {
        let path = no_nul("path", &path)?;
        crate::budget::check_mappings()?;
        let r = HurrayFileReader::open(Path::new(path), &ReadOptions::default()).map_err(ffi)?;
        Ok(FileReader::over(&env, r))
    }

    /// `FileReader.open` on the libuv thread pool: the event loop keeps running
    /// while the file is opened, mapped and its index validated.
    ///
    /// Rejects: as `open` throws (the same `code` and message).
    #[napi(ts_return_type = "Promise<FileReader>")]
    pub fn open_async(path: String) -> Result<AsyncTask<crate::file_async::OpenTask>> {
        no_nul("path", &path)?;
        crate::budget::check_mappings()?;
        Ok(AsyncTask::new(crate::file_async::OpenTask::new(path)))
    }

    /// File-level facts.
    #[napi(getter)]
    pub fn info(&self) -> Result<FileInfo> {
        let i = self.live()?.info();
        Ok(FileInfo {
            version_major: i.version_major as u32,
            version_minor: i.version_minor as u32,
            crc_verified: i.crc_status == HURRAY_CRC_VERIFIED,
            data_buffer_alignment: i.data_buffer_alignment,
            file_len: i.file_len as f64,
            tensor_count: i.tensor_count as f64,
            kv_count: i.kv_count as f64,
        })
    }

    /// Checks every tensor's data against the CRC-32C the writer recorded
    /// (`FileWriter.create(path, { dataCrc32c: true })`) in the reserved KV entry
    /// `hurray.data_crc32c`. The trailer CRC covers only the index, so this is how a
    /// flipped data byte is noticed. Reads every data byte once (opening never
    /// does); nothing is kept.
    ///
    /// Returns true when every tensor matched, false when the file records no data
    /// CRC (its data cannot be checked).
    ///
    /// Throws: `ERR_HURRAY_FORMAT` (rule `DataCrcMismatch`) when a tensor's data
    /// differs (the message names the tensor, both CRC values and the byte offset
    /// of its data) or the entry is malformed (not one uint64 per tensor).
    #[napi(js_name = "verifyDataCrc32c")]
    pub fn verify_data_crc32c(&self) -> Result<bool> {
        Ok(match self.live()?.verify_data_crc32c().map_err(ffi)? {
            DataCrc::Verified(_) => true,
            DataCrc::Absent => false,
        })
    }

    /// Tensor names, in index order (made straight into the JS array).
    #[napi(getter, ts_return_type = "string[]")]
    pub fn names<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        crate::file_kv::names(env, self.live()?)
    }

    /// The tensor named `name`: zero-copy over the mapping; outlives the reader.
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`.
    #[napi]
    pub fn tensor(&self, env: Env, name: String) -> Result<Tensor> {
        let t = self.live()?.tensor(&name).map_err(ffi)?;
        Ok(Tensor::holding(Box::new(t), self.tokens()).charge(&env, HOLDER_CHARGE))
    }

    /// Every tensor of the file, in index order (the order of `names`; a composite
    /// head comes alone, as `tensor(name)` gives it): what `names.map((n) =>
    /// r.tensor(n))` returns, in one call instead of one per name. Zero-copy over
    /// the mapping; each outlives the reader.
    ///
    /// Throws: `ERR_HURRAY_FORMAT` when a tensor's buffer contents break a content
    /// rule (as `tensor()` of its name would).
    #[napi]
    pub fn tensors(&self, env: Env) -> Result<Vec<Tensor>> {
        let reader = self.live()?.reader();
        let tensors = reader
            .tensors()
            .map(|(_, t)| {
                let t = t.map_err(|e| ffi(e.into()))?;
                let t = hurray_ffi::HurrayTensor::from_io(t).map_err(ffi)?;
                Ok(Tensor::holding(Box::new(t), self.tokens()).charged_already(HOLDER_CHARGE))
            })
            .collect::<Result<Vec<_>>>()?;
        // One report for all of them (each gives its own back).
        adjust_external(env.raw(), HOLDER_CHARGE * tensors.len() as i64);
        Ok(tensors)
    }

    /// Zero-copy views of every tensor's buffers, in index order (the order of
    /// `names`): what `tensors().map((t) => t.buffers())` gives, in one call and
    /// without a `Tensor` object per tensor (a composite head has no buffers: `[]`).
    /// Each `ArrayBuffer` keeps its tensor's memory, and so the file's mapping,
    /// alive until it is collected; the reader may be closed first. Writes through
    /// them stay in memory (the mapping is copy-on-write).
    ///
    /// Throws: `ERR_HURRAY_FORMAT` when a tensor's buffer contents break a content
    /// rule (as `tensor()` of its name would).
    #[napi(ts_return_type = "ArrayBuffer[][]")]
    pub fn views<'env>(&self, env: &'env Env) -> Result<Vec<Vec<ArrayBuffer<'env>>>> {
        let reader = self.live()?.reader();
        reader
            .tensors()
            .map(|(_, t)| {
                let t = t.map_err(|e| ffi(e.into()))?;
                let t = hurray_ffi::HurrayTensor::from_io(t).map_err(ffi)?;
                let n = t.buffer_list().len as u32;
                let handle = Handle::shared(t, self.tokens());
                (0..n).map(|i| view_of(env, handle.clone(), i)).collect()
            })
            .collect()
    }

    /// The item named `name`: a tensor, or a composite with its members (zero-copy,
    /// outlives the reader like `tensor`).
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`.
    #[napi]
    pub fn item(&self, env: Env, name: String) -> Result<Item> {
        let it = self.live()?.item(&name).map_err(ffi)?;
        Ok(Item::holding(Box::new(it), self.tokens()).charge(&env, HOLDER_CHARGE))
    }

    /// The descriptor of the tensor named `name`, without touching its payload.
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`.
    #[napi]
    pub fn descriptor(&self, name: String) -> Result<Descriptor> {
        let d = self.live()?.descriptor(&name).map_err(ffi)?;
        Ok(Descriptor::from_handle(d))
    }

    /// KV metadata as a plain object: strings, `bigint` for int64/uint64, numbers for
    /// float64, booleans, `Buffer` for bytes (copies), and arrays of those.
    ///
    /// Throws: `ERR_HURRAY_LIMIT` when an array has more than 1,048,576 elements
    /// (the library's bound on what a whole-value read materialises from an untrusted
    /// file, the same in every binding): read it with `metadataRange`.
    #[napi(ts_return_type = "Record<string, unknown>")]
    pub fn metadata<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        let r = self.live()?;
        let obj = Object::new(env).map_err(napi_err)?;
        for i in 0..r.kv_count() {
            let key = r.kv_key(i).map_err(ffi)?;
            let v = crate::file_kv::kv_value(env, r, i, None)?;
            // A key may hold NUL bytes: name it by a JS string of its full length.
            let name = env.create_string(key).map_err(napi_err)?;
            // Defined, not assigned: an assignment of `__proto__` would set the
            // object's prototype (an untrusted file's key must stay a plain own data
            // property, as `constructor` or `toString` do).
            let desc = napi::sys::napi_property_descriptor {
                utf8name: std::ptr::null(),
                name: name.raw(),
                method: None,
                getter: None,
                setter: None,
                value: v.raw(),
                attributes: napi::sys::PropertyAttributes::writable
                    | napi::sys::PropertyAttributes::enumerable
                    | napi::sys::PropertyAttributes::configurable,
                data: std::ptr::null_mut(),
            };
            // SAFETY: `env` is this call's environment on its thread; `obj`, `name`
            // and `v` are live values of it (this call's handle scope); `desc` names
            // the property by a napi value, so `utf8name` is NULL.
            crate::error::napi_check(
                unsafe { napi::sys::napi_define_properties(env.raw(), obj.raw(), 1, &desc) },
                "napi_define_properties",
            )?;
        }
        Ok(obj)
    }

    /// KV keys, in file order (`metadata()` is an object, whose integer-like keys
    /// JavaScript orders first).
    #[napi(getter)]
    pub fn keys(&self) -> Result<Vec<String>> {
        let r = self.live()?;
        (0..r.kv_count())
            .map(|i| r.kv_key(i).map(str::to_owned).map_err(ffi))
            .collect()
    }

    /// The KV value under `key` (types as `metadata()`).
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`; `ERR_HURRAY_LIMIT` for an array past the
    /// whole-value bound (see `metadata()`).
    #[napi(ts_return_type = "unknown")]
    pub fn value<'env>(&self, env: &'env Env, key: String) -> Result<Unknown<'env>> {
        let i = self.kv_index(&key)?;
        crate::file_kv::kv_value(env, self.live()?, i, None)
    }

    /// The length of the KV value under `key`: the number of elements of an array,
    /// of bytes of a string (UTF-8) or `Buffer`, 1 for other scalars.
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`.
    #[napi]
    pub fn metadata_length(&self, key: String) -> Result<f64> {
        let i = self.kv_index(&key)?;
        let v = self.live()?.kv_value(i).map_err(ffi)?;
        Ok(crate::file_kv::kv_len(&v) as f64)
    }

    /// Elements `[offset, offset + count)` of the KV array under `key` (types as
    /// `metadata()`). This reads a huge array a window at a time: a whole JS array
    /// costs a pointer-size slot per element, up to 8 times what the file holds for
    /// a bool and twice its 4-byte prefix of an empty string, and a window of
    /// `count` elements only that many.
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`; `ERR_HURRAY_UNSUPPORTED` (not an array);
    /// `ERR_HURRAY_INVALID_ARGUMENT` (the window passes the end, or is negative).
    #[napi(ts_return_type = "unknown[]")]
    pub fn metadata_range<'env>(
        &self,
        env: &'env Env,
        key: String,
        offset: f64,
        count: f64,
    ) -> Result<Unknown<'env>> {
        let whole = |x: f64| x >= 0.0 && x.fract() == 0.0 && x <= u32::MAX as f64;
        if !whole(offset) || !whole(count) {
            return Err(err(
                "HURRAY_ERR_OUT_OF_RANGE",
                format!("the window offset {offset}, count {count} is not two whole numbers >= 0"),
            ));
        }
        let i = self.kv_index(&key)?;
        crate::file_kv::kv_value(env, self.live()?, i, Some((offset as u64, count as u64)))
    }

    /// Closes the reader (idempotent). Tensors taken from it stay valid. Close
    /// readers when done: an unclosed reader holds its mapping until the garbage
    /// collector finalizes it, and a process has a limited number of mappings.
    #[napi]
    pub fn close(&mut self, env: Env) {
        self.inner = None;
        self.mapping = None;
        self.uncount(env.raw());
    }
}

/// Options of `FileWriter.create`.
#[napi(object)]
pub struct WriteOptions {
    /// Alignment of every data buffer in bytes: a power of two in 4096..=2 MiB
    /// (default 4096).
    pub data_buffer_alignment: Option<f64>,
    /// Sort index entries by name (default false).
    pub sorted_index: Option<bool>,
    /// Store the CRC-32C of the index (default true).
    pub index_crc: Option<bool>,
    /// fsync the file and its directory when finishing (default true).
    pub durable: Option<bool>,
    /// Record a CRC-32C of every tensor's data in the reserved KV entry
    /// `hurray.data_crc32c` (one uint64 per tensor in file order), which
    /// `FileReader.verifyDataCrc32c()` and `hurray validate` check (default false:
    /// the file stays byte-identical to one written without it). With it on, an
    /// entry of that key added by hand makes `finish()` fail (a duplicate key).
    #[napi(js_name = "dataCrc32c")]
    pub data_crc32c: Option<bool>,
}

/// Writes an HRRYFILE: to a temporary file beside `path`, renamed into place by
/// `finish()`. `close()` before `finish()` (or collection) abandons it: nothing
/// appears at `path`.
#[napi]
pub struct FileWriter {
    /// The writer, shared with the asynchronous operation running on the libuv
    /// pool, if any (it holds the writer meanwhile: the slot is `Busy`).
    slot: Arc<Mutex<WriterSlot>>,
}

/// Where a [`FileWriter`]'s writer is.
pub(crate) enum WriterSlot {
    /// Here, ready for the next call.
    Idle(Box<HurrayFileWriter>),
    /// Taken by an asynchronous operation, put back when it settles.
    Busy,
    /// Closed (dropping an unfinished writer abandons its file); an operation that
    /// was running when `close()` came drops its writer when it settles.
    Closed,
}

impl FileWriter {
    /// A writer object over `w`.
    pub(crate) fn over(w: HurrayFileWriter) -> FileWriter {
        FileWriter {
            slot: Arc::new(Mutex::new(WriterSlot::Idle(Box::new(w)))),
        }
    }

    /// Runs `f` on the writer (JS thread, synchronous calls).
    ///
    /// Errors: `ERR_HURRAY_STATE` when closed, or while an asynchronous operation
    /// holds the writer.
    fn with<R>(&self, f: impl FnOnce(&mut HurrayFileWriter) -> Result<R>) -> Result<R> {
        let mut slot = lock(&self.slot);
        match &mut *slot {
            WriterSlot::Idle(w) => f(w),
            WriterSlot::Busy => Err(busy()),
            WriterSlot::Closed => Err(closed("FileWriter")),
        }
    }

    /// Takes the writer out for an asynchronous operation (the slot is `Busy`
    /// until [`put_back`] runs).
    ///
    /// Errors: `ERR_HURRAY_STATE` (closed, or another operation is running).
    pub(crate) fn take_for_async(&self) -> Result<(Box<HurrayFileWriter>, Arc<Mutex<WriterSlot>>)> {
        let mut slot = lock(&self.slot);
        match std::mem::replace(&mut *slot, WriterSlot::Busy) {
            WriterSlot::Idle(w) => Ok((w, self.slot.clone())),
            other => {
                let e = if matches!(other, WriterSlot::Busy) {
                    busy()
                } else {
                    closed("FileWriter")
                };
                *slot = other;
                Err(e)
            }
        }
    }

    /// Adds KV entry `key` = `value`.
    fn add(&self, key: &str, value: KvValue) -> Result<()> {
        self.with(|w| w.add_kv(key, value).map_err(ffi))
    }
}

/// Locks a writer slot; a poisoned lock (a panic while holding it, which the code
/// under it does not do) still yields the slot.
pub(crate) fn lock(slot: &Mutex<WriterSlot>) -> std::sync::MutexGuard<'_, WriterSlot> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

/// Puts a writer back after an asynchronous operation, or drops it (abandoning an
/// unfinished file) when `close()` came meanwhile.
pub(crate) fn put_back(slot: &Mutex<WriterSlot>, w: Box<HurrayFileWriter>) {
    let mut s = lock(slot);
    if matches!(*s, WriterSlot::Busy) {
        *s = WriterSlot::Idle(w);
    }
}

/// The error of a call while an asynchronous operation holds the writer.
fn busy() -> crate::error::JsErr {
    err(
        "HURRAY_ERR_STATE",
        "an asynchronous operation of this FileWriter is running; await it first",
    )
}

/// An integer from a JS bigint or number, in range for i64 / u64.
fn int_of(v: &Either<BigInt, f64>, signed: bool) -> Result<i128> {
    let bad = || {
        err(
            "HURRAY_ERR_INVALID_ARGUMENT",
            "expected an integer in range",
        )
    };
    let x: i128 = match v {
        Either::A(b) => {
            if signed {
                let (v, lossless) = b.get_i64();
                if !lossless {
                    return Err(bad());
                }
                v as i128
            } else {
                let (neg, v, lossless) = b.get_u64();
                if neg || !lossless {
                    return Err(bad());
                }
                v as i128
            }
        }
        Either::B(f) if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_991.0 => *f as i128,
        Either::B(_) => return Err(bad()),
    };
    if !signed && x < 0 {
        return Err(bad());
    }
    Ok(x)
}

#[napi]
impl FileWriter {
    /// Starts writing a file at `path` (into a temporary file beside it).
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (options), `ERR_HURRAY_IO`,
    /// `ENOENT` (missing directory).
    #[napi(factory)]
    pub fn create(path: String, options: Option<WriteOptions>) -> Result<FileWriter> {
        let path = no_nul("path", &path)?;
        let o = write_options(options)?;
        let w = HurrayFileWriter::create(Path::new(path), &o).map_err(ffi)?;
        Ok(FileWriter::over(w))
    }

    /// `FileWriter.create` on the libuv thread pool.
    ///
    /// Rejects: as `create` throws.
    #[napi(ts_return_type = "Promise<FileWriter>")]
    pub fn create_async(
        path: String,
        options: Option<WriteOptions>,
    ) -> Result<AsyncTask<crate::file_async::CreateTask>> {
        no_nul("path", &path)?;
        let o = write_options(options)?;
        Ok(AsyncTask::new(crate::file_async::CreateTask::new(path, o)))
    }

    /// `writeTensor` on the libuv thread pool: the tensor's bytes are copied to the
    /// file while the event loop keeps running (timers fire, I/O is served). Do not
    /// change the tensor's memory until the promise settles. Calls on this writer
    /// made before it settles throw (or reject) `ERR_HURRAY_STATE`, except
    /// `close()`, which abandons the file once the write is over; the package's
    /// JavaScript layer queues overlapping `*Async` calls, in call order.
    ///
    /// Rejects: as `writeTensor` throws.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn write_tensor_async(
        &self,
        env: Env,
        name: String,
        tensor: &Tensor,
    ) -> Result<AsyncTask<crate::file_async::WriteTask>> {
        let handle = tensor.handle()?.clone();
        tensor.check_lent(env.raw())?;
        let (w, slot) = self.take_for_async()?;
        Ok(AsyncTask::new(crate::file_async::WriteTask::tensor(
            w, slot, name, handle,
        )))
    }

    /// `writeItem` on the libuv thread pool, as `writeTensorAsync` (do not change
    /// the item's memory until the promise settles).
    ///
    /// Rejects: as `writeItem` throws.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn write_item_async(
        &self,
        env: Env,
        name: String,
        item: &Item,
    ) -> Result<AsyncTask<crate::file_async::WriteTask>> {
        let (root, path) = item.shared()?;
        item.check_lent(env.raw())?;
        let (w, slot) = self.take_for_async()?;
        Ok(AsyncTask::new(crate::file_async::WriteTask::item(
            w, slot, name, root, path,
        )))
    }

    /// `finish` on the libuv thread pool (writing the index, the optional fsync and
    /// the rename happen off the event loop).
    ///
    /// Rejects: as `finish` throws.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn finish_async(&self) -> Result<AsyncTask<crate::file_async::WriteTask>> {
        let (w, slot) = self.take_for_async()?;
        Ok(AsyncTask::new(crate::file_async::WriteTask::finish(
            w, slot,
        )))
    }
}

/// The library's write options from the JS options object.
///
/// Errors: `ERR_HURRAY_INVALID_ARGUMENT` (a bad `dataBufferAlignment`).
fn write_options(options: Option<WriteOptions>) -> Result<HurrayWriteOptions> {
    {
        let mut o = HurrayWriteOptions::default();
        if let Some(opts) = options {
            if let Some(a) = opts.data_buffer_alignment {
                let a = crate::stream::u32_option("dataBufferAlignment", a)?;
                if !a.is_power_of_two() || !(4096..=2 << 20).contains(&a) {
                    return Err(err(
                        "HURRAY_ERR_INVALID_ARGUMENT",
                        format!(
                            "dataBufferAlignment must be a power of two in 4096..=2097152 \
                             (4 KiB..2 MiB), got {a}"
                        ),
                    ));
                }
                o.data_buffer_alignment = a;
            }
            if let Some(s) = opts.sorted_index {
                o.sorted_index = s as u8;
            }
            if let Some(c) = opts.index_crc {
                o.index_crc = c as u8;
            }
            if let Some(d) = opts.durable {
                o.durable = d as u8;
            }
            if let Some(c) = opts.data_crc32c {
                o.data_crc32c = c as u8;
            }
        }
        Ok(o)
    }
}

#[napi]
impl FileWriter {
    /// Writes `tensor` under `name` (its buffers are read during the call).
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (duplicate name), `ERR_HURRAY_STATE`
    /// (closed tensor or finished writer), `ERR_HURRAY_IO`.
    #[napi]
    pub fn write_tensor(&self, env: Env, name: String, tensor: &Tensor) -> Result<()> {
        let handle = tensor.handle()?;
        tensor.check_lent(env.raw())?;
        self.with(|w| w.write_tensor(&name, handle.tensor()?).map_err(ffi))
    }

    /// Writes `item` (a tensor or a composite with its members) under `name`;
    /// members are named `name/0`, `name/1`, ... .
    ///
    /// Throws: as `writeTensor`.
    #[napi]
    pub fn write_item(&self, env: Env, name: String, item: &Item) -> Result<()> {
        let (_, node) = item.node()?;
        item.check_lent(env.raw())?;
        self.with(|w| w.write_item(&name, node).map_err(ffi))
    }

    /// Adds a string KV entry.
    #[napi]
    pub fn add_string(&self, key: String, value: String) -> Result<()> {
        self.add(&key, KvValue::String(value))
    }

    /// Adds an int64 KV entry (a bigint, or an integer number below 2^53).
    #[napi]
    pub fn add_int64(&self, key: String, value: Either<BigInt, f64>) -> Result<()> {
        let v = int_of(&value, true)? as i64;
        self.add(&key, KvValue::Int64(v))
    }

    /// Adds a uint64 KV entry (a non-negative bigint or integer number).
    #[napi]
    pub fn add_uint64(&self, key: String, value: Either<BigInt, f64>) -> Result<()> {
        let v = int_of(&value, false)? as u64;
        self.add(&key, KvValue::UInt64(v))
    }

    /// Adds a float64 KV entry.
    #[napi]
    pub fn add_float64(&self, key: String, value: f64) -> Result<()> {
        self.add(&key, KvValue::Float64(value))
    }

    /// Adds a bool KV entry.
    #[napi]
    pub fn add_bool(&self, key: String, value: bool) -> Result<()> {
        self.add(&key, KvValue::Bool(value))
    }

    /// Adds a bytes KV entry (copied).
    #[napi]
    pub fn add_bytes(&self, key: String, value: &[u8]) -> Result<()> {
        self.add(&key, KvValue::Bytes(value.to_vec()))
    }

    /// Adds an int64-array KV entry.
    #[napi]
    pub fn add_int64_array(&self, key: String, values: Vec<Either<BigInt, f64>>) -> Result<()> {
        let v: Vec<i64> = values
            .iter()
            .map(|x| int_of(x, true).map(|i| i as i64))
            .collect::<Result<_>>()?;
        self.add(&key, KvValue::Array(KvArray::Int64(v)))
    }

    /// Adds a uint64-array KV entry (non-negative bigints or integer numbers).
    #[napi]
    pub fn add_uint64_array(&self, key: String, values: Vec<Either<BigInt, f64>>) -> Result<()> {
        let v: Vec<u64> = values
            .iter()
            .map(|x| int_of(x, false).map(|i| i as u64))
            .collect::<Result<_>>()?;
        self.add(&key, KvValue::Array(KvArray::UInt64(v)))
    }

    /// Adds a bool-array KV entry.
    #[napi]
    pub fn add_bool_array(&self, key: String, values: Vec<bool>) -> Result<()> {
        self.add(&key, KvValue::Array(KvArray::Bool(values)))
    }

    /// Adds a bytes-array KV entry (each copied).
    #[napi]
    pub fn add_bytes_array(&self, key: String, values: Vec<Uint8Array>) -> Result<()> {
        let v = values.iter().map(|b| b.to_vec()).collect();
        self.add(&key, KvValue::Array(KvArray::Bytes(v)))
    }

    /// Adds a float64-array KV entry.
    #[napi]
    pub fn add_float64_array(&self, key: String, values: Vec<f64>) -> Result<()> {
        self.add(&key, KvValue::Array(KvArray::Float64(values)))
    }

    /// Adds a string-array KV entry.
    #[napi]
    pub fn add_string_array(&self, key: String, values: Vec<String>) -> Result<()> {
        self.add(&key, KvValue::Array(KvArray::String(values)))
    }

    /// Writes the index and trailer and renames the file into place.
    ///
    /// Throws: `ERR_HURRAY_STATE` (already finished), `ERR_HURRAY_IO`.
    #[napi]
    pub fn finish(&self) -> Result<()> {
        self.with(|w| w.finish().map_err(ffi))
    }

    /// Frees the writer (idempotent); an unfinished file is abandoned. While an
    /// asynchronous operation runs, the writer is freed when it settles.
    #[napi]
    pub fn close(&self) {
        *lock(&self.slot) = WriterSlot::Closed;
    }
}
