//! HRRYFILE reader (memory-mapped; tensors outlive it) and writer (temp file, then
//! rename: a failed or abandoned write leaves nothing at the path).

use std::ffi::CString;
use std::ptr;
use std::sync::Arc;

use hurray_ffi::file::*;
use hurray_ffi::{HurrayFileReader, HurrayFileWriter};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::budget::{Token, LIVE_MAPPINGS};
use crate::error::{check, closed, err, ffi, napi_err, Result};
use crate::item::Item;
use crate::tensor::{
    adjust_external, boxed_tensor, Descriptor, Tensor, HOLDER_CHARGE, MAPPING_CHARGE,
};

/// A JS string as a C string; NUL bytes are refused.
fn c_string(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| {
        err(
            "HURRAY_ERR_INVALID_ARGUMENT",
            format!("{what} contains a NUL byte"),
        )
    })
}

/// Borrowed (pointer, length) bytes as a Rust string (lossy for invalid UTF-8).
///
/// # Safety
/// `p` points at `len` readable bytes (or `len` is 0).
unsafe fn str_of(p: *const std::ffi::c_char, len: u64) -> String {
    if len == 0 {
        return String::new();
    }
    // SAFETY: per this function's contract.
    let b = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len as usize) };
    String::from_utf8_lossy(b).into_owned()
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
    ptr: *mut HurrayFileReader,
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
    /// Gives back the external-memory charge and the open count (once).
    fn uncount(&mut self, env: napi::sys::napi_env) {
        let charged = std::mem::take(&mut self.charged);
        if charged != 0 {
            adjust_external(env, -charged);
        }
    }
}

impl Drop for FileReader {
    fn drop(&mut self) {
        // SAFETY: owned handle or NULL; destroy nulls it.
        unsafe { hurray_file_reader_destroy(&mut self.ptr) };
    }
}

impl FileReader {
    fn live(&self) -> Result<*const HurrayFileReader> {
        if self.ptr.is_null() {
            Err(closed("FileReader"))
        } else {
            Ok(self.ptr)
        }
    }

    fn kv_index(&self, key: &str) -> Result<u64> {
        let r = self.live()?;
        let key = c_string("key", key)?;
        let mut i = 0u64;
        // SAFETY: `r` live, `key` NUL-terminated.
        check(unsafe { hurray_file_reader_kv_find(r, key.as_ptr(), &mut i) })?;
        Ok(i)
    }

    /// KV entry `index` as a JS value (a window of an array: see `file_kv`).
    fn kv_value<'env>(
        &self,
        env: &'env Env,
        index: u64,
        window: Option<(u64, u64)>,
    ) -> Result<Unknown<'env>> {
        let r = self.live()?;
        // SAFETY: `r` live; `index` comes from kv_find or is below kv_count.
        unsafe { crate::file_kv::kv_value(env, r, index, window) }
    }
}

#[napi]
impl FileReader {
    /// Opens and memory-maps the file at `path`, validating everything but payload.
    ///
    /// Throws: `ENOENT`, `ERR_HURRAY_IO`, `ERR_HURRAY_FORMAT`,
    /// `ERR_HURRAY_TRUNCATED`, `ERR_HURRAY_FORMAT`, ... naming rule and offset;
    /// `ERR_HURRAY_LIMIT` when 7/8 of `vm.max_map_count` mappings are alive (Linux):
    /// a mapping lives while its reader or any tensor, item or view taken from it
    /// does.
    #[napi(factory)]
    pub fn open(env: Env, path: String) -> Result<FileReader> {
        let path = c_string("path", &path)?;
        crate::budget::check_mappings()?;
        let mut ptr = ptr::null_mut();
        // SAFETY: NUL-terminated path; local out-pointer.
        check(unsafe { hurray_file_reader_open(path.as_ptr(), &mut ptr) })?;
        adjust_external(env.raw(), MAPPING_CHARGE);
        Ok(FileReader {
            ptr,
            charged: MAPPING_CHARGE,
            mapping: Some(Token::new(&LIVE_MAPPINGS, 1)),
        })
    }

    /// File-level facts.
    #[napi(getter)]
    pub fn info(&self) -> Result<FileInfo> {
        let r = self.live()?;
        let mut i = std::mem::MaybeUninit::<HurrayFileInfo>::uninit();
        // SAFETY: `r` live; `i` written on success.
        check(unsafe { hurray_file_reader_info(r, i.as_mut_ptr()) })?;
        // SAFETY: written by the successful call.
        let i = unsafe { i.assume_init() };
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

    /// Tensor names, in index order (made straight into the JS array).
    #[napi(getter, ts_return_type = "string[]")]
    pub fn names<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        let r = self.live()?;
        let mut n = 0u64;
        // SAFETY: `r` live.
        check(unsafe { hurray_file_reader_tensor_count(r, &mut n) })?;
        // SAFETY: `r` live.
        unsafe { crate::file_kv::names(env, r, n) }
    }

    /// The tensor named `name`: zero-copy over the mapping; outlives the reader.
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`.
    #[napi]
    pub fn tensor(&self, env: Env, name: String) -> Result<Tensor> {
        let r = self.live()?;
        let name = c_string("name", &name)?;
        let mut t = ptr::null_mut();
        // SAFETY: `r` live, NUL-terminated name, local out-pointer (owned on success).
        check(unsafe { hurray_file_reader_tensor(r, name.as_ptr(), &mut t) })?;
        // SAFETY: an owned tensor the reader just handed out.
        let t = unsafe { crate::tensor::adopt_tensor(t) };
        Ok(Tensor::holding(t, self.mapping.iter().cloned().collect()).charge(&env, HOLDER_CHARGE))
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
        let r = self.live()?;
        // SAFETY: `r` is this object's live reader, made by this addon's hurray-ffi
        // (`open`), borrowed for this call only.
        let reader = unsafe { &*r }.reader();
        reader
            .tensors()
            .map(|(_, t)| {
                let t = t.map_err(|e| ffi(e.into()))?;
                let t = hurray_ffi::HurrayTensor::from_io(t).map_err(ffi)?;
                Ok(
                    Tensor::holding(boxed_tensor(t), self.mapping.iter().cloned().collect())
                        .charge(&env, HOLDER_CHARGE),
                )
            })
            .collect()
    }

    /// The item named `name`: a tensor, or a composite with its members (zero-copy,
    /// outlives the reader like `tensor`).
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`.
    #[napi]
    pub fn item(&self, env: Env, name: String) -> Result<Item> {
        let r = self.live()?;
        let name = c_string("name", &name)?;
        let mut it = ptr::null_mut();
        // SAFETY: `r` live, NUL-terminated name, local out-pointer (owned on success).
        check(unsafe { hurray_file_reader_item(r, name.as_ptr(), &mut it) })?;
        // SAFETY: an owned item the reader just handed out.
        let it = unsafe { crate::item::adopt_item(it) };
        Ok(Item::holding(it, self.mapping.iter().cloned().collect()).charge(&env, HOLDER_CHARGE))
    }

    /// The descriptor of the tensor named `name`, without touching its payload.
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`.
    #[napi]
    pub fn descriptor(&self, name: String) -> Result<Descriptor> {
        let r = self.live()?;
        let name = c_string("name", &name)?;
        let mut d = ptr::null_mut();
        // SAFETY: as `tensor`.
        check(unsafe { hurray_file_reader_descriptor(r, name.as_ptr(), &mut d) })?;
        // SAFETY: an owned descriptor the reader just handed out; dropping the box
        // destroys it as `hurray_descriptor_destroy` would.
        let d = unsafe { Box::from_raw(d) };
        Ok(Descriptor::from_handle(*d))
    }

    /// KV metadata as a plain object: strings, `bigint` for int64/uint64, numbers for
    /// float64, booleans, `Buffer` for bytes (copies), and arrays of those.
    #[napi(ts_return_type = "Record<string, unknown>")]
    pub fn metadata<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        let r = self.live()?;
        let mut info = std::mem::MaybeUninit::<HurrayFileInfo>::uninit();
        // SAFETY: `r` live.
        check(unsafe { hurray_file_reader_info(r, info.as_mut_ptr()) })?;
        // SAFETY: written on success.
        let n = unsafe { info.assume_init() }.kv_count;
        let mut obj = Object::new(env).map_err(napi_err)?;
        for i in 0..n {
            let (mut p, mut len) = (ptr::null(), 0u64);
            // SAFETY: `r` live, `i` < count.
            check(unsafe { hurray_file_reader_kv_key(r, i, &mut p, &mut len) })?;
            // SAFETY: borrowed from the reader, copied.
            let key = unsafe { str_of(p, len) };
            let v = self.kv_value(env, i, None)?;
            obj.set_named_property(&key, v).map_err(napi_err)?;
        }
        Ok(obj)
    }

    /// KV keys, in file order (`metadata()` is an object, whose integer-like keys
    /// JavaScript orders first).
    #[napi(getter)]
    pub fn keys(&self) -> Result<Vec<String>> {
        let r = self.live()?;
        let mut info = std::mem::MaybeUninit::<HurrayFileInfo>::uninit();
        // SAFETY: `r` live.
        check(unsafe { hurray_file_reader_info(r, info.as_mut_ptr()) })?;
        // SAFETY: written on success.
        let n = unsafe { info.assume_init() }.kv_count;
        (0..n)
            .map(|i| {
                let (mut p, mut len) = (ptr::null(), 0u64);
                // SAFETY: `r` live, `i` < count; the key is copied at once.
                check(unsafe { hurray_file_reader_kv_key(r, i, &mut p, &mut len) })?;
                // SAFETY: borrowed from the reader, `len` bytes.
                Ok(unsafe { str_of(p, len) })
            })
            .collect()
    }

    /// The KV value under `key` (types as `metadata()`).
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`.
    #[napi(ts_return_type = "unknown")]
    pub fn value<'env>(&self, env: &'env Env, key: String) -> Result<Unknown<'env>> {
        let i = self.kv_index(&key)?;
        self.kv_value(env, i, None)
    }

    /// The length of the KV value under `key`: the number of elements of an array,
    /// of bytes of a string (UTF-8) or `Buffer`, 1 for other scalars.
    ///
    /// Throws: `ERR_HURRAY_NOT_FOUND`.
    #[napi]
    pub fn metadata_length(&self, key: String) -> Result<f64> {
        let i = self.kv_index(&key)?;
        // SAFETY: `live` checked by kv_index; `i` from kv_find.
        let (_, _, n) = unsafe { crate::file_kv::kv_type(self.live()?, i)? };
        Ok(n as f64)
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
            return Err(crate::error::err(
                "HURRAY_ERR_OUT_OF_RANGE",
                format!("the window offset {offset}, count {count} is not two whole numbers >= 0"),
            ));
        }
        let i = self.kv_index(&key)?;
        self.kv_value(env, i, Some((offset as u64, count as u64)))
    }

    /// Closes the reader (idempotent). Tensors taken from it stay valid. Close
    /// readers when done: an unclosed reader holds its mapping until the garbage
    /// collector finalizes it, and a process has a limited number of mappings.
    #[napi]
    pub fn close(&mut self, env: Env) {
        // SAFETY: owned handle or NULL; destroy nulls it.
        unsafe { hurray_file_reader_destroy(&mut self.ptr) };
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
}

/// Writes an HRRYFILE: to a temporary file beside `path`, renamed into place by
/// `finish()`. `close()` before `finish()` (or collection) abandons it: nothing
/// appears at `path`.
#[napi]
pub struct FileWriter {
    ptr: *mut HurrayFileWriter,
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        // SAFETY: owned handle or NULL; destroy nulls it (abandoning an unfinished file).
        unsafe { hurray_file_writer_destroy(&mut self.ptr) };
    }
}

impl FileWriter {
    fn live(&self) -> Result<*mut HurrayFileWriter> {
        if self.ptr.is_null() {
            Err(closed("FileWriter"))
        } else {
            Ok(self.ptr)
        }
    }

    fn add(
        &mut self,
        key: &str,
        f: impl FnOnce(*mut HurrayFileWriter, *const std::ffi::c_char) -> i32,
    ) -> Result<()> {
        let w = self.live()?;
        let key = c_string("key", key)?;
        check(f(w, key.as_ptr()))
    }
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
        let path = c_string("path", &path)?;
        let mut o = std::mem::MaybeUninit::<HurrayWriteOptions>::uninit();
        // SAFETY: `o` writable; written on success.
        check(unsafe { hurray_write_options_default(o.as_mut_ptr()) })?;
        // SAFETY: written by the successful call.
        let mut o = unsafe { o.assume_init() };
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
        }
        let mut ptr = ptr::null_mut();
        // SAFETY: NUL-terminated path, options read during the call.
        check(unsafe { hurray_file_writer_create(path.as_ptr(), &o, &mut ptr) })?;
        Ok(FileWriter { ptr })
    }

    /// Writes `tensor` under `name` (its buffers are read during the call).
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (duplicate name), `ERR_HURRAY_STATE`
    /// (closed tensor or finished writer), `ERR_HURRAY_IO`.
    #[napi]
    pub fn write_tensor(&mut self, env: Env, name: String, tensor: &Tensor) -> Result<()> {
        let w = self.live()?;
        let t = tensor.handle()?;
        tensor.check_lent(env.raw())?;
        let name = c_string("name", &name)?;
        // SAFETY: writer and tensor live; name NUL-terminated.
        check(unsafe { hurray_file_writer_write_tensor(w, name.as_ptr(), t.ptr()?) })
    }

    /// Writes `item` (a tensor or a composite with its members) under `name`;
    /// members are named `name/0`, `name/1`, ... .
    ///
    /// Throws: as `writeTensor`.
    #[napi]
    pub fn write_item(&mut self, env: Env, name: String, item: &Item) -> Result<()> {
        let w = self.live()?;
        let (_, node) = item.node()?;
        let node: *const hurray_ffi::HurrayItem = node;
        item.check_lent(env.raw())?;
        let name = c_string("name", &name)?;
        // SAFETY: writer and item live; name NUL-terminated.
        check(unsafe { hurray_file_writer_write_item(w, name.as_ptr(), node) })
    }

    /// Adds a string KV entry.
    #[napi]
    pub fn add_string(&mut self, key: String, value: String) -> Result<()> {
        let value = c_string("value", &value)?;
        // SAFETY: writer live, both strings NUL-terminated.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_string(w, k, value.as_ptr())
        })
    }

    /// Adds an int64 KV entry (a bigint, or an integer number below 2^53).
    #[napi]
    pub fn add_int64(&mut self, key: String, value: Either<BigInt, f64>) -> Result<()> {
        let v = int_of(&value, true)? as i64;
        // SAFETY: writer live, key NUL-terminated.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_int64(w, k, v)
        })
    }

    /// Adds a uint64 KV entry (a non-negative bigint or integer number).
    #[napi]
    pub fn add_uint64(&mut self, key: String, value: Either<BigInt, f64>) -> Result<()> {
        let v = int_of(&value, false)? as u64;
        // SAFETY: writer live, key NUL-terminated.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_uint64(w, k, v)
        })
    }

    /// Adds a float64 KV entry.
    #[napi]
    pub fn add_float64(&mut self, key: String, value: f64) -> Result<()> {
        // SAFETY: writer live, key NUL-terminated.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_float64(w, k, value)
        })
    }

    /// Adds a bool KV entry.
    #[napi]
    pub fn add_bool(&mut self, key: String, value: bool) -> Result<()> {
        // SAFETY: writer live, key NUL-terminated.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_bool(w, k, value as u8)
        })
    }

    /// Adds a bytes KV entry (copied).
    #[napi]
    pub fn add_bytes(&mut self, key: String, value: &[u8]) -> Result<()> {
        // SAFETY: writer live, key NUL-terminated, bytes readable for their length.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_bytes(w, k, value.as_ptr(), value.len() as u64)
        })
    }

    /// Adds an int64-array KV entry.
    #[napi]
    pub fn add_int64_array(&mut self, key: String, values: Vec<Either<BigInt, f64>>) -> Result<()> {
        let v: Vec<i64> = values
            .iter()
            .map(|x| int_of(x, true).map(|i| i as i64))
            .collect::<Result<_>>()?;
        // SAFETY: writer live, key NUL-terminated, `v` readable for its length.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_array_int64(w, k, v.as_ptr(), v.len() as u64)
        })
    }

    /// Adds a uint64-array KV entry (non-negative bigints or integer numbers).
    #[napi]
    pub fn add_uint64_array(
        &mut self,
        key: String,
        values: Vec<Either<BigInt, f64>>,
    ) -> Result<()> {
        let v: Vec<u64> = values
            .iter()
            .map(|x| int_of(x, false).map(|i| i as u64))
            .collect::<Result<_>>()?;
        // SAFETY: writer live, key NUL-terminated, `v` readable for its length.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_array_uint64(w, k, v.as_ptr(), v.len() as u64)
        })
    }

    /// Adds a bool-array KV entry.
    #[napi]
    pub fn add_bool_array(&mut self, key: String, values: Vec<bool>) -> Result<()> {
        let v: Vec<u8> = values.iter().map(|&b| b as u8).collect();
        // SAFETY: writer live, key NUL-terminated, `v` readable for its length.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_array_bool(w, k, v.as_ptr(), v.len() as u64)
        })
    }

    /// Adds a bytes-array KV entry (each copied).
    #[napi]
    pub fn add_bytes_array(&mut self, key: String, values: Vec<Uint8Array>) -> Result<()> {
        let ptrs: Vec<*const u8> = values.iter().map(|b| b.as_ptr()).collect();
        let lens: Vec<u64> = values.iter().map(|b| b.len() as u64).collect();
        // SAFETY: writer live, key NUL-terminated; each pointer is readable for its
        // length while `values` lives (the whole call).
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_array_bytes(
                w,
                k,
                ptrs.as_ptr(),
                lens.as_ptr(),
                ptrs.len() as u64,
            )
        })
    }

    /// Adds a float64-array KV entry.
    #[napi]
    pub fn add_float64_array(&mut self, key: String, values: Vec<f64>) -> Result<()> {
        // SAFETY: writer live, key NUL-terminated, `values` readable for its length.
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_array_float64(w, k, values.as_ptr(), values.len() as u64)
        })
    }

    /// Adds a string-array KV entry.
    #[napi]
    pub fn add_string_array(&mut self, key: String, values: Vec<String>) -> Result<()> {
        let owned: Vec<CString> = values
            .iter()
            .map(|s| c_string("value", s))
            .collect::<Result<_>>()?;
        let ptrs: Vec<*const std::ffi::c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: writer live, key and every value NUL-terminated and alive (`owned`).
        self.add(&key, |w, k| unsafe {
            hurray_file_writer_add_kv_array_string(w, k, ptrs.as_ptr(), ptrs.len() as u64)
        })
    }

    /// Writes the index and trailer and renames the file into place.
    ///
    /// Throws: `ERR_HURRAY_STATE` (already finished), `ERR_HURRAY_IO`.
    #[napi]
    pub fn finish(&mut self) -> Result<()> {
        let w = self.live()?;
        // SAFETY: writer live.
        check(unsafe { hurray_file_writer_finish(w) })
    }

    /// Frees the writer (idempotent); an unfinished file is abandoned.
    #[napi]
    pub fn close(&mut self) {
        // SAFETY: owned handle or NULL; destroy nulls it.
        unsafe { hurray_file_writer_destroy(&mut self.ptr) };
    }
}
