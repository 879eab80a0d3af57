//! The HRRYFILE container across the C ABI (`file-format.md`): `HurrayFileReader`
//! opens a file by path, memory-maps it (private, copy-on-write), validates header,
//! index, KV and every descriptor, and hands out descriptors, tensors and items by
//! name; `HurrayFileWriter` writes tensors, composites and KV to a temporary file and
//! renames it into place when finished.
//!
//! Tensors from a reader are zero-copy views into the mapping; each holds a reference
//! to it, so the reader may be destroyed first and the mapping goes away with the last
//! tensor. Strings handed out (names, keys, string values) are borrowed from the
//! reader, NUL-terminated, and come with their length in bytes; the reader makes
//! their NUL-terminated copies on the first request (one contiguous copy for the
//! names, one for the KV text, each smaller than its section: `file_text`). KV values
//! are read from the mapping when asked for; nothing else is copied at open.

use crate::descriptor::HurrayDescriptor;
use crate::file_text::FileText;
use crate::handle::{self, kind, Handle, Header};
use crate::item::HurrayItem;
use crate::status::*;
use crate::tensor::HurrayTensor;
use hurray_io::file::data_crc::{self, DataCrc};
use hurray_io::file::ReadOptions;
use hurray_io::file::{kv::tag, CrcStatus, KvValue, KvValueRef};
use hurray_io::{FileReader, FileWriter, WriteOptions};
use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};

// ---- KV value types (`file-format.md` §7.3)
/// KV value type: UTF-8 string.
pub const HURRAY_KV_TYPE_STRING: u8 = 0x01;
/// KV value type: signed 64-bit integer.
pub const HURRAY_KV_TYPE_INT64: u8 = 0x02;
/// KV value type: unsigned 64-bit integer.
pub const HURRAY_KV_TYPE_UINT64: u8 = 0x03;
/// KV value type: IEEE binary64.
pub const HURRAY_KV_TYPE_FLOAT64: u8 = 0x04;
/// KV value type: boolean (0 or 1).
pub const HURRAY_KV_TYPE_BOOL: u8 = 0x05;
/// KV value type: opaque bytes.
pub const HURRAY_KV_TYPE_BYTES: u8 = 0x06;
/// KV value type: homogeneous array of one of the types above.
pub const HURRAY_KV_TYPE_ARRAY: u8 = 0x07;

// ---- file facts (`file-format.md` §3, §4, §9)
/// The most elements a binding's whole-value KV read (Go `File.Metadata`/`Value`,
/// Java `TensorFile.metadata()`, Node `FileReader.metadata()`/`value()`, Python's KV
/// reads) materialises from one array: 1,048,576. A language value costs up to 16
/// bytes per element where the file holds as few as 1 (a bool) or 4 (an empty
/// string), so an untrusted file could otherwise make a reader allocate many times
/// its own size; above this bound a whole read fails with `HURRAY_ERR_LIMIT` and the
/// array is read a window at a time (`hurray_file_reader_kv_array_window` and each
/// binding's ranged accessor), whose memory is the window's. Checked by
/// `hurray_file_reader_kv_check_whole` (issue 16, bounded memory).
pub const HURRAY_KV_WHOLE_ARRAY_MAX: u64 = 1 << 20;
/// `file_flags` bit 0: a KV metadata section is present.
pub const HURRAY_FILE_FLAG_HAS_KV_METADATA: u32 = 0x1;
/// `file_flags` bit 1: index entries are sorted by name bytes.
pub const HURRAY_FILE_FLAG_SORTED_INDEX: u32 = 0x2;
/// `file_flags` bit 2: the trailer holds the CRC-32C of the index.
pub const HURRAY_FILE_FLAG_HAS_INDEX_CRC32C: u32 = 0x4;
/// `tensor_count_hint`: the writer did not know the count.
pub const HURRAY_COUNT_UNKNOWN: u64 = u64::MAX;
/// `HurrayFileInfo::crc_status`: the file carries no index CRC.
/// `hurray_file_reader_verify_data_crc32c`: the file records no data CRC-32C.
pub const HURRAY_CRC_ABSENT: u8 = 0;
/// `HurrayFileInfo::crc_status`: the index CRC-32C was checked and matched.
/// `hurray_file_reader_verify_data_crc32c`: every tensor's data CRC-32C matched.
pub const HURRAY_CRC_VERIFIED: u8 = 1;

/// File-level facts of an open file. Offsets and lengths in bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HurrayFileInfo {
    /// `container_version_major` (1).
    pub version_major: u8,
    /// `container_version_minor`.
    pub version_minor: u8,
    /// `HURRAY_CRC_VERIFIED` or `HURRAY_CRC_ABSENT`.
    pub crc_status: u8,
    /// `file_flags` (`HURRAY_FILE_FLAG_*`).
    pub flags: u32,
    /// `data_buffer_alignment`: every data buffer starts at a multiple of it.
    pub data_buffer_alignment: u32,
    /// The index CRC-32C stored in the trailer (0 when absent).
    pub index_crc32c: u32,
    /// `tensor_count_hint`, or `HURRAY_COUNT_UNKNOWN`.
    pub tensor_count_hint: u64,
    /// File size.
    pub file_len: u64,
    /// Offset of the first descriptor.
    pub first_descriptor_offset: u64,
    /// Offset of the index section.
    pub index_offset: u64,
    /// Length of the index section.
    pub index_length: u64,
    /// Offset of the KV section, 0 when there is none.
    pub kv_offset: u64,
    /// Length of the KV section, 0 when there is none.
    pub kv_length: u64,
    /// Tensors in the index (composite heads and members included).
    pub tensor_count: u64,
    /// KV entries.
    pub kv_count: u64,
}

/// Options of a file writer. Fill it with `hurray_write_options_default`, then change
/// what you need.
///
/// Layout: `data_crc32c` (C ABI 10, added after `durable`) sits in what was the
/// struct's tail padding, so the size (24 bytes) and every earlier offset are
/// unchanged; a struct filled by `hurray_write_options_default` has it 0. A struct
/// filled field by field must set it too (any value but 0 or 1 is refused).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HurrayWriteOptions {
    /// Alignment of every data buffer in bytes: a power of two in 4096..=2 MiB
    /// (default 4096).
    pub data_buffer_alignment: u32,
    /// Deepest composite nesting accepted, counting the outermost head (default 8;
    /// values above 64 act as 64).
    pub max_composite_depth: u32,
    /// The tensor count to announce in the header (heads and members included;
    /// finishing fails if the count differs), or `HURRAY_COUNT_UNKNOWN` (default).
    pub tensor_count_hint: u64,
    /// 1: sort index entries by name and set `SORTED_INDEX` (default 0).
    pub sorted_index: u8,
    /// 1: store the CRC-32C of the index (default 1, recommended).
    pub index_crc: u8,
    /// 1: reproduce the reference writer byte for byte (`basic.hrry`) (default 0).
    pub reference_compat: u8,
    /// 1: fsync the file and its directory when finishing (default 1).
    pub durable: u8,
    /// 1: record a CRC-32C of every tensor's data in the reserved KV entry
    /// `hurray.data_crc32c` (one uint64 per tensor in file order), which
    /// `hurray_file_reader_verify_data_crc32c` and `hurray validate` check; readers
    /// unaware of it see one more KV entry (default 0: the file stays byte-identical
    /// to one written without it).
    pub data_crc32c: u8,
}

impl Default for HurrayWriteOptions {
    fn default() -> Self {
        HurrayWriteOptions::from(&WriteOptions::default())
    }
}

impl From<&WriteOptions> for HurrayWriteOptions {
    fn from(o: &WriteOptions) -> Self {
        HurrayWriteOptions {
            data_buffer_alignment: o.data_buffer_alignment,
            max_composite_depth: o.max_composite_depth,
            tensor_count_hint: o.tensor_count_hint.unwrap_or(HURRAY_COUNT_UNKNOWN),
            sorted_index: u8::from(o.sorted_index),
            index_crc: u8::from(o.index_crc),
            reference_compat: u8::from(o.reference_compat),
            durable: u8::from(o.durable),
            data_crc32c: 0,
        }
    }
}

impl HurrayWriteOptions {
    /// The hurray-io options these stand for. `data_crc32c` is not among them: it
    /// switches on [`FileWriter::with_data_crc32c`] (read it with
    /// [`data_crc32c_flag`](Self::data_crc32c_flag)).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` when a flag is not 0 or 1.
    pub fn to_options(&self) -> FfiResult<WriteOptions> {
        Ok(WriteOptions {
            data_buffer_alignment: self.data_buffer_alignment,
            sorted_index: flag(self.sorted_index, "sorted_index")?,
            index_crc: flag(self.index_crc, "index_crc")?,
            tensor_count_hint: (self.tensor_count_hint != HURRAY_COUNT_UNKNOWN)
                .then_some(self.tensor_count_hint),
            reference_compat: flag(self.reference_compat, "reference_compat")?,
            max_composite_depth: self.max_composite_depth,
            durable: flag(self.durable, "durable")?,
        })
    }

    /// Whether the writer records per-tensor data CRC-32C values.
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` when `data_crc32c` is not 0 or 1.
    pub fn data_crc32c_flag(&self) -> FfiResult<bool> {
        flag(self.data_crc32c, "data_crc32c")
    }
}

/// A C boolean option field: 0 or 1.
///
/// Errors: `HURRAY_ERR_INVALID_ARGUMENT` naming the field for any other value.
pub(crate) fn flag(v: u8, what: &str) -> FfiResult<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("{what} is {v}, not 0 or 1"),
        )),
    }
}

/// A required NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` NULL or a NUL-terminated string valid for the lifetime `'a`.
pub(crate) unsafe fn str_in<'a>(p: *const c_char, arg: &str) -> FfiResult<&'a str> {
    if p.is_null() {
        return Err(FfiError::null(arg));
    }
    // SAFETY: non-null and NUL-terminated per the caller.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str().map_err(|e| {
        FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` is not valid UTF-8 ({e})"),
        )
    })
}

/// A required string argument given as `len` bytes of UTF-8 at `p` (no NUL
/// terminator; NUL bytes are characters like any other): how names and keys that
/// hold NUL bytes, which the format allows, cross the C ABI.
///
/// # Safety
/// `p` NULL or valid for `len` reads for the lifetime `'a`.
pub(crate) unsafe fn str_n_in<'a>(p: *const c_char, len: u64, arg: &str) -> FfiResult<&'a str> {
    if p.is_null() {
        return Err(FfiError::null(arg));
    }
    // SAFETY: non-null and valid for len reads per the caller.
    let b = unsafe { slice_in(p.cast::<u8>(), len, arg)? };
    std::str::from_utf8(b).map_err(|e| {
        FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` is not valid UTF-8 ({e})"),
        )
    })
}

/// A required NUL-terminated path argument (any bytes on Unix, UTF-8 elsewhere).
///
/// # Safety
/// As [`str_in`].
pub(crate) unsafe fn path_in(p: *const c_char, arg: &str) -> FfiResult<PathBuf> {
    if p.is_null() {
        return Err(FfiError::null(arg));
    }
    // SAFETY: non-null and NUL-terminated per the caller.
    let c = unsafe { CStr::from_ptr(p) };
    if c.is_empty() {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` is empty"),
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(c.to_bytes())))
    }
    #[cfg(not(unix))]
    {
        // SAFETY: forwarded.
        Ok(PathBuf::from(unsafe { str_in(p, arg)? }))
    }
}

/// Writes a borrowed NUL-terminated string and its length (without the NUL).
///
/// # Safety
/// Outs NULL or writable.
unsafe fn put_str(
    s: &[u8],
    out: *mut *const c_char,
    out_len: *mut u64,
    arg: &str,
) -> FfiResult<()> {
    need(out, arg)?;
    need(out_len, "out_len")?;
    // SAFETY: both checked non-null.
    unsafe {
        put(out, arg, s.as_ptr().cast())?;
        put(out_len, "out_len", (s.len() - 1) as u64)
    }
}

fn not_found(what: &str, name: &str) -> FfiError {
    FfiError::new(
        HURRAY_ERR_NOT_FOUND,
        format!("the file has no {what} named {name:?}"),
    )
}

pub(crate) fn out_of_range(what: &str, i: u64, n: usize) -> FfiError {
    FfiError::new(
        HURRAY_ERR_OUT_OF_RANGE,
        format!("{what} {i} is past the file's {n}"),
    )
}

// ---------------------------------------------------------------- reader

/// An open file (own-build only; opaque in C).
#[repr(C)]
pub struct HurrayFileReader {
    header: Header,
    pub(crate) reader: FileReader,
    /// NUL-terminated copies of names, keys and strings, made on first request.
    pub(crate) text: FileText,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayFileReader {
    const KIND: u16 = kind::FILE_READER;
    const NAME: &'static str = "HurrayFileReader";
    fn header(&self) -> &Header {
        &self.header
    }
}

impl HurrayFileReader {
    /// Wraps an open file.
    pub fn new(reader: FileReader) -> HurrayFileReader {
        HurrayFileReader {
            header: Header::new(kind::FILE_READER, handle::destroy_own::<HurrayFileReader>),
            reader,
            text: FileText::default(),
        }
    }

    /// The hurray-io reader.
    pub fn reader(&self) -> &FileReader {
        &self.reader
    }

    /// Opens the file at `path`: memory-maps it (private, copy-on-write: writes to
    /// tensor memory never reach the file) and validates header, trailer, index (CRC
    /// included), KV, every descriptor and the composite structure under `options`'
    /// limits, without reading payload bytes (`file-format.md`). The file must not be
    /// truncated or modified by anyone while mapped. The face of
    /// `hurray_file_reader_open_with`.
    ///
    /// Errors (`HURRAY_ERR_*`, the message starting with the path): `INVALID_ARGUMENT`
    /// (empty path); `FILE_NOT_FOUND`; `IO`; `TRUNCATED`, `FORMAT`, `LIMIT`,
    /// `DESCRIPTOR` (the message names the rule and the byte offset).
    pub fn open(path: &Path, options: &ReadOptions) -> FfiResult<HurrayFileReader> {
        if path.as_os_str().is_empty() {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "`path` is empty",
            ));
        }
        let r = FileReader::open_with(path, options)
            .map_err(|e| FfiError::from(e).with_path(&path.display().to_string()))?;
        Ok(HurrayFileReader::new(r))
    }

    /// Number of tensors in the index (composite heads and members included).
    pub fn tensor_count(&self) -> u64 {
        self.reader.len() as u64
    }

    /// The name of tensor `i` in index order (UTF-8, borrowed from the mapping).
    ///
    /// Errors: `HURRAY_ERR_OUT_OF_RANGE` (`i` >= [`tensor_count`](Self::tensor_count)).
    pub fn tensor_name(&self, i: u64) -> FfiResult<&str> {
        usize::try_from(i)
            .ok()
            .and_then(|k| self.reader.catalog().entry(k))
            .map(|e| e.name)
            .ok_or_else(|| out_of_range("tensor", i, self.reader.len()))
    }

    /// The top-level items in file order, as `(name, is a composite head)`: plain
    /// tensors and composite heads, without the members of composites
    /// (`file-format.md` §6.4). Names are UTF-8, borrowed from the mapping. Each
    /// entry's descriptor is decoded as it is passed and not kept, so walking a file
    /// costs no memory per entry; read each item with [`tensor`](Self::tensor) or
    /// [`item`](Self::item).
    pub fn top_level(&self) -> impl Iterator<Item = (&str, bool)> + '_ {
        let c = self.reader.catalog();
        c.top_level()
            .map(move |(i, composite)| (c.entry(i).map_or("", |e| e.name), composite))
    }

    /// The top-level items as [`top_level`](Self::top_level) gives them, but in
    /// index order (`file-format.md` §6: the order of
    /// [`tensor_name`](Self::tensor_name); the same as file order unless the index is
    /// sorted). Costs one `Vec` of the items (names borrowed from the mapping).
    pub fn top_level_in_index_order(&self) -> Vec<(&str, bool)> {
        let c = self.reader.catalog();
        let mut top: Vec<(usize, bool)> = c.top_level().collect();
        top.sort_unstable_by_key(|&(i, _)| i);
        top.into_iter()
            .map(|(i, composite)| (c.entry(i).map_or("", |e| e.name), composite))
            .collect()
    }

    /// The descriptor of the tensor named `name`, decoded from the file without
    /// reading its data (owned: a new handle each call).
    ///
    /// Errors: `HURRAY_ERR_NOT_FOUND`.
    pub fn descriptor(&self, name: &str) -> FfiResult<HurrayDescriptor> {
        let d = self
            .reader
            .descriptor(name)
            .ok_or_else(|| not_found("tensor", name))?;
        HurrayDescriptor::new(d)
    }

    /// The tensor named `name`: its descriptor and zero-copy views of its buffers in
    /// the mapping, each aligned as its descriptor declares. For a composite head this
    /// is the head alone (no buffers); see [`item`](Self::item). The tensor holds a
    /// reference to the mapping, so it outlives the reader.
    ///
    /// Errors: `HURRAY_ERR_NOT_FOUND`; `HURRAY_ERR_FORMAT` (strict readers: buffer
    /// contents break a content rule, checked at the first lookup).
    pub fn tensor(&self, name: &str) -> FfiResult<HurrayTensor> {
        let t = self
            .reader
            .tensor(name)?
            .ok_or_else(|| not_found("tensor", name))?;
        HurrayTensor::from_io(t)
    }

    /// The item named `name`: a tensor, or for a composite head the whole composite
    /// with its members (nested). Like tensors, it outlives the reader.
    ///
    /// Errors: those of [`tensor`](Self::tensor), for any tensor of the item.
    pub fn item(&self, name: &str) -> FfiResult<HurrayItem> {
        let i = self
            .reader
            .item(name)?
            .ok_or_else(|| not_found("tensor", name))?;
        HurrayItem::from_io(i)
    }

    /// Number of KV entries (0 when the file has no KV section).
    pub fn kv_count(&self) -> u64 {
        self.reader.kv().len() as u64
    }

    /// The key of KV entry `i` in file order (UTF-8, borrowed from the mapping).
    ///
    /// Errors: `HURRAY_ERR_OUT_OF_RANGE`.
    pub fn kv_key(&self, i: u64) -> FfiResult<&str> {
        let kv = self.reader.kv();
        usize::try_from(i)
            .ok()
            .and_then(|k| kv.get(k))
            .map(|e| e.key)
            .ok_or_else(|| out_of_range("KV entry", i, kv.len()))
    }

    /// The index of the KV entry whose key is `key` (byte-exact), `None` when absent.
    pub fn kv_find(&self, key: &str) -> Option<u64> {
        self.reader.kv().position(key).map(|i| i as u64)
    }

    /// The value of KV entry `i`, decoded from the mapping on each call; strings,
    /// bytes and array elements are borrowed from the mapping (`file-format.md` §7.3).
    ///
    /// Errors: `HURRAY_ERR_OUT_OF_RANGE`.
    pub fn kv_value(&self, i: u64) -> FfiResult<KvValueRef<'_>> {
        let kv = self.reader.kv();
        usize::try_from(i)
            .ok()
            .and_then(|k| kv.get(k))
            .map(|e| e.value)
            .ok_or_else(|| out_of_range("KV entry", i, kv.len()))
    }

    /// Checks that KV entry `i` may be read whole into a language value: a scalar,
    /// string or bytes always may; an array only up to [`HURRAY_KV_WHOLE_ARRAY_MAX`]
    /// elements (larger ones are read in windows).
    ///
    /// Errors: `HURRAY_ERR_OUT_OF_RANGE` (`i`); `HURRAY_ERR_LIMIT` naming the key, the
    /// array's length and the bound.
    pub fn kv_check_whole(&self, i: u64) -> FfiResult<()> {
        let n = match self.kv_value(i)?.as_array() {
            Some(a) => a.len() as u64,
            None => return Ok(()),
        };
        if n <= HURRAY_KV_WHOLE_ARRAY_MAX {
            return Ok(());
        }
        Err(FfiError::new(
            HURRAY_ERR_LIMIT,
            format!(
                "KV entry {:?} is an array of {n} elements, more than the \
                 {HURRAY_KV_WHOLE_ARRAY_MAX} a whole-value read materialises (a bound on \
                 the memory an untrusted file can make a reader allocate); read it a \
                 window at a time with the ranged KV accessor",
                self.kv_key(i)?
            ),
        ))
    }

    /// Copies elements `[first, first + count)` of the int64, uint64, float64 or bool
    /// array of KV entry `index` into `out` in their C form: 8 native-endian bytes
    /// each (`int64_t`, `uint64_t`, `double`), or 1 byte (0 or 1) each for bool.
    /// Reads a window of a huge array without memory for all of it; the first
    /// `count * size` bytes of `out` are written, the rest untouched. Returns that
    /// number of bytes.
    ///
    /// Errors: `HURRAY_ERR_OUT_OF_RANGE` (`index`, or a window past the array's end);
    /// `HURRAY_ERR_NOT_APPLICABLE` (not an array of those types);
    /// `HURRAY_ERR_BUFFER_TOO_SMALL` (`out` shorter than `count * size`; nothing
    /// is written).
    pub fn kv_array_window(
        &self,
        index: u64,
        first: u64,
        count: u64,
        out: &mut [u8],
    ) -> FfiResult<u64> {
        let v = self.kv_value(index)?;
        let a = v
            .as_array()
            .filter(|a| {
                matches!(
                    a.element_tag(),
                    tag::INT64 | tag::UINT64 | tag::FLOAT64 | tag::BOOL
                )
            })
            .ok_or_else(|| kv_wrong_type(&v, "numeric or bool array"))?;
        let n = a.len() as u64;
        if first.checked_add(count).is_none_or(|end| end > n) {
            return Err(FfiError::new(
                HURRAY_ERR_OUT_OF_RANGE,
                format!("the window [{first}, +{count}) is past the array's {n} elements"),
            ));
        }
        let size: usize = if a.element_tag() == tag::BOOL { 1 } else { 8 };
        // count <= n, and n elements exist in memory: the product fits.
        let bytes = count as usize * size;
        if out.len() < bytes {
            return Err(FfiError::new(
                HURRAY_ERR_BUFFER_TOO_SMALL,
                format!(
                    "the window needs {bytes} bytes, the output holds {}",
                    out.len()
                ),
            ));
        }
        for (k, dst) in out[..bytes].chunks_exact_mut(size).enumerate() {
            // `first + k < n`: every element exists.
            let x = a.get(first as usize + k).unwrap_or(KvValueRef::Bool(false));
            let b: [u8; 8] = match x {
                KvValueRef::Int64(x) => x.to_ne_bytes(),
                KvValueRef::UInt64(x) => x.to_ne_bytes(),
                KvValueRef::Float64(x) => x.to_ne_bytes(),
                KvValueRef::Bool(b) => [u8::from(b), 0, 0, 0, 0, 0, 0, 0],
                _ => [0; 8],
            };
            dst.copy_from_slice(&b[..size]);
        }
        Ok(bytes as u64)
    }

    /// File-level facts: version, flags, data alignment, CRC status, count hint,
    /// section offsets and lengths, tensor and KV counts.
    pub fn info(&self) -> HurrayFileInfo {
        let i = self.reader.info();
        let (crc_status, index_crc32c) = match i.crc {
            CrcStatus::Verified(v) => (HURRAY_CRC_VERIFIED, v),
            CrcStatus::Absent => (HURRAY_CRC_ABSENT, i.trailer.index_crc32c),
        };
        let (kv_offset, kv_length) = i.kv_section().unwrap_or((0, 0));
        HurrayFileInfo {
            version_major: i.header.version_major,
            version_minor: i.header.version_minor,
            crc_status,
            flags: i.flags(),
            data_buffer_alignment: i.data_buffer_alignment(),
            index_crc32c,
            tensor_count_hint: i.tensor_count_hint().unwrap_or(HURRAY_COUNT_UNKNOWN),
            file_len: i.file_len,
            first_descriptor_offset: i.header.first_descriptor_offset,
            index_offset: i.trailer.index_offset,
            index_length: i.trailer.index_length,
            kv_offset,
            kv_length: u64::from(kv_length),
            tensor_count: self.reader.len() as u64,
            kv_count: self.reader.kv().len() as u64,
        }
    }
}

impl HurrayFileReader {
    /// Recomputes the CRC-32C of every tensor's data and compares each with the
    /// value the writer recorded in the reserved KV entry `hurray.data_crc32c`
    /// (written with `HurrayWriteOptions::data_crc32c`). Reads every data byte of
    /// the file, so it costs one pass over the data; nothing is kept. The face of
    /// `hurray_file_reader_verify_data_crc32c`.
    ///
    /// Returns [`DataCrc::Verified`] with the number of tensors checked, or
    /// [`DataCrc::Absent`] when the file records no data CRC (its data cannot be
    /// checked; not an error).
    ///
    /// Errors: `HURRAY_ERR_FORMAT` (rule `DataCrcMismatch`): a tensor's data
    /// differs from its recorded value (the message names the tensor, both values
    /// and the offset of its first data byte), or the entry is malformed (not a
    /// uint64 array, or not one value per tensor).
    pub fn verify_data_crc32c(&self) -> FfiResult<DataCrc> {
        data_crc::verify(&self.reader).map_err(FfiError::from)
    }
}

/// Wrong KV type for the getter called.
pub(crate) fn kv_wrong_type(v: &KvValueRef<'_>, want: &str) -> FfiError {
    let have = match v {
        KvValueRef::String(_) => "string",
        KvValueRef::Int64(_) => "int64",
        KvValueRef::UInt64(_) => "uint64",
        KvValueRef::Float64(_) => "float64",
        KvValueRef::Bool(_) => "bool",
        KvValueRef::Bytes(_) => "bytes",
        KvValueRef::Array(a) => match a.element_tag() {
            tag::STRING => "string array",
            tag::INT64 => "int64 array",
            tag::UINT64 => "uint64 array",
            tag::FLOAT64 => "float64 array",
            tag::BOOL => "bool array",
            _ => "bytes array",
        },
    };
    not_applicable(format!("the KV value is a {have}, not a {want}"))
}

/// Opens the file at `path` (NUL-terminated; any bytes on Unix): memory-maps it
/// (private, copy-on-write: writes to tensor memory never reach the file) and
/// validates header, trailer, index (CRC included), KV, every descriptor and the
/// composite structure, without reading payload bytes. The file must not be
/// truncated or modified by anyone while mapped.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`path`, `out`); `HURRAY_ERR_INVALID_ARGUMENT`
/// (empty path); `HURRAY_ERR_FILE_NOT_FOUND`; `HURRAY_ERR_IO`; `HURRAY_ERR_TRUNCATED`,
/// `HURRAY_ERR_FORMAT`, `HURRAY_ERR_LIMIT`, `HURRAY_ERR_DESCRIPTOR` (the message names
/// the rule and the byte offset).
///
/// Ownership: `path` is only read; `*out` owned, destroy with
/// `hurray_file_reader_destroy`.
///
/// # Safety
/// `path` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_open(
    path: *const c_char,
    out: *mut *mut HurrayFileReader,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe {
        crate::read_options::open_reader(path, &hurray_io::file::ReadOptions::default(), out)
    })
}

/// File-level facts: version, flags, data alignment, CRC status, count hint, section
/// offsets and lengths, tensor and KV counts.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a reader of this copy of the library).
///
/// Ownership: `*out` is a plain struct written by value; nothing to free.
///
/// # Safety
/// `reader` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_info(
    reader: *const HurrayFileReader,
    out: *mut HurrayFileInfo,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", r.info()) }
    })
}

/// Opt-in check of the data: recomputes the CRC-32C of every tensor's data and
/// compares it with the value recorded in the reserved KV entry `hurray.data_crc32c`
/// (written with `HurrayWriteOptions.data_crc32c = 1`). Reads every data byte of the
/// file once (the mapping's pages are touched); nothing is kept. Opening a file never
/// does this by itself.
///
/// `*out_status` gets `HURRAY_CRC_VERIFIED` (every tensor matched) or
/// `HURRAY_CRC_ABSENT` (the file records no data CRC: its data cannot be checked);
/// both return `HURRAY_OK`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a reader of this copy of the library);
/// `HURRAY_ERR_FORMAT`: a tensor's data differs (the message names the tensor, both
/// CRC values and the byte offset, rule `DataCrcMismatch`), or the entry is not one
/// uint64 per tensor; `*out_status` is then not written.
///
/// Ownership: `*out_status` written by value; the reader is only read.
///
/// # Safety
/// `reader` NULL or live; `out_status` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_verify_data_crc32c(
    reader: *const HurrayFileReader,
    out_status: *mut u8,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        need(out_status, "out_status")?;
        let status = match r.verify_data_crc32c()? {
            DataCrc::Verified(_) => HURRAY_CRC_VERIFIED,
            DataCrc::Absent => HURRAY_CRC_ABSENT,
        };
        // SAFETY: checked non-null, writable per the caller.
        unsafe { put(out_status, "out_status", status) }
    })
}

/// Number of tensors in the index (composite heads and members included).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT`.
///
/// Ownership: `*out` written by value; nothing to free.
///
/// # Safety
/// `reader` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_tensor_count(
    reader: *const HurrayFileReader,
    out: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", r.tensor_count()) }
    })
}

/// The name of tensor `index`, in index order: `*out_name` is NUL-terminated UTF-8
/// and `*out_len` its length in bytes (without the NUL).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT`; `HURRAY_ERR_OUT_OF_RANGE` (`index` >= tensor count).
///
/// Ownership: `*out_name` borrowed, valid until the reader is destroyed.
///
/// # Safety
/// `reader` NULL or live; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_tensor_name(
    reader: *const HurrayFileReader,
    index: u64,
    out_name: *mut *const c_char,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        r.tensor_name(index)?;
        // The NUL-terminated copy C needs (the index is in range).
        let s = r.text.name(&r.reader, index as usize).unwrap_or(b"\0");
        // SAFETY: forwarded.
        unsafe { put_str(s, out_name, out_len, "out_name") }
    })
}

/// The descriptor of the tensor named `name` (NUL-terminated), without reading its data.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a reader of this copy; `name` not UTF-8);
/// `HURRAY_ERR_NOT_FOUND`.
///
/// Ownership: `*out` owned; destroy with `hurray_descriptor_destroy`.
///
/// # Safety
/// `reader` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_descriptor(
    reader: *const HurrayFileReader,
    name: *const c_char,
    out: *mut *mut HurrayDescriptor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: forwarded.
        let name = unsafe { str_in(name, "name")? };
        need(out, "out")?;
        let d = r.descriptor(name)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(d)) }
    })
}

/// `hurray_file_reader_descriptor` with `name` given as `name_len` bytes of UTF-8,
/// not NUL-terminated: the way to a name that holds NUL bytes (the format allows
/// them).
///
/// Errors: those of `hurray_file_reader_descriptor`.
///
/// Ownership: as for `hurray_file_reader_descriptor`.
///
/// # Safety
/// `reader` NULL or live; `name` NULL or valid for `name_len` reads; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_descriptor_n(
    reader: *const HurrayFileReader,
    name: *const c_char,
    name_len: u64,
    out: *mut *mut HurrayDescriptor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: forwarded.
        let name = unsafe { str_n_in(name, name_len, "name")? };
        need(out, "out")?;
        let d = r.descriptor(name)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(d)) }
    })
}

/// The tensor named `name` (NUL-terminated): its descriptor and zero-copy views of
/// its buffers in the mapping, each aligned as its descriptor declares. For a
/// composite head this is the head alone (no buffers); see `hurray_file_reader_item`.
/// The tensor holds a reference to the mapping: it stays valid after the reader is
/// destroyed. Its memory is a private mapping: writing to it never reaches the file.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT`; `HURRAY_ERR_NOT_FOUND`.
///
/// Ownership: `*out` owned; destroy with `hurray_tensor_destroy`.
///
/// # Safety
/// `reader` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_tensor(
    reader: *const HurrayFileReader,
    name: *const c_char,
    out: *mut *mut HurrayTensor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: forwarded.
        let name = unsafe { str_in(name, "name")? };
        need(out, "out")?;
        let t = r.tensor(name)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(t)) }
    })
}

/// `hurray_file_reader_tensor` with `name` given as `name_len` bytes of UTF-8, not
/// NUL-terminated: the way to a name that holds NUL bytes (the format allows them).
///
/// Errors: those of `hurray_file_reader_tensor`.
///
/// Ownership: as for `hurray_file_reader_tensor`.
///
/// # Safety
/// `reader` NULL or live; `name` NULL or valid for `name_len` reads; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_tensor_n(
    reader: *const HurrayFileReader,
    name: *const c_char,
    name_len: u64,
    out: *mut *mut HurrayTensor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: forwarded.
        let name = unsafe { str_n_in(name, name_len, "name")? };
        need(out, "out")?;
        let t = r.tensor(name)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(t)) }
    })
}

/// The item named `name` (NUL-terminated): a tensor, or, for a composite head, the
/// whole composite with its members (nested). Like tensors, it outlives the reader.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT`; `HURRAY_ERR_NOT_FOUND`.
///
/// Ownership: `*out` owned; destroy with `hurray_item_destroy`.
///
/// # Safety
/// `reader` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_item(
    reader: *const HurrayFileReader,
    name: *const c_char,
    out: *mut *mut HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: forwarded.
        let name = unsafe { str_in(name, "name")? };
        need(out, "out")?;
        let i = r.item(name)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(i)) }
    })
}

/// `hurray_file_reader_item` with `name` given as `name_len` bytes of UTF-8, not
/// NUL-terminated: the way to a name that holds NUL bytes (the format allows them).
///
/// Errors: those of `hurray_file_reader_item`.
///
/// Ownership: as for `hurray_file_reader_item`.
///
/// # Safety
/// `reader` NULL or live; `name` NULL or valid for `name_len` reads; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_item_n(
    reader: *const HurrayFileReader,
    name: *const c_char,
    name_len: u64,
    out: *mut *mut HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: forwarded.
        let name = unsafe { str_n_in(name, name_len, "name")? };
        need(out, "out")?;
        let i = r.item(name)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(i)) }
    })
}

/// Number of KV entries (0 when the file has no KV section).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT`.
///
/// Ownership: `*out` written by value; nothing to free.
///
/// # Safety
/// `reader` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_kv_count(
    reader: *const HurrayFileReader,
    out: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", r.kv_count()) }
    })
}

/// The key of KV entry `index`, in file order: NUL-terminated UTF-8, `*out_len` bytes
/// without the NUL.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT`; `HURRAY_ERR_OUT_OF_RANGE`.
///
/// Ownership: `*out_key` borrowed, valid until the reader is destroyed.
///
/// # Safety
/// `reader` NULL or live; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_kv_key(
    reader: *const HurrayFileReader,
    index: u64,
    out_key: *mut *const c_char,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        r.kv_key(index)?;
        // The NUL-terminated copy C needs (the index is in range).
        let s = r.text.key(&r.reader, index as usize).unwrap_or(b"\0");
        // SAFETY: forwarded.
        unsafe { put_str(s, out_key, out_len, "out_key") }
    })
}

/// The index of the KV entry whose key is `key` (NUL-terminated, byte-exact).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT`; `HURRAY_ERR_NOT_FOUND`.
///
/// Ownership: `*out_index` written by value; nothing to free.
///
/// # Safety
/// `reader` NULL or live; `key` NULL or NUL-terminated; `out_index` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_kv_find(
    reader: *const HurrayFileReader,
    key: *const c_char,
    out_index: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: forwarded.
        let key = unsafe { str_in(key, "key")? };
        need(out_index, "out_index")?;
        let i = r.kv_find(key).ok_or_else(|| not_found("KV key", key))?;
        // SAFETY: checked non-null.
        unsafe { put(out_index, "out_index", i) }
    })
}

/// Checks that KV entry `index` may be read whole into a language value: always for
/// a scalar, string or bytes; for an array, when it has at most
/// `HURRAY_KV_WHOLE_ARRAY_MAX` elements. Bindings call it before materialising a
/// whole value so that every language applies the same bound.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`reader`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT`; `HURRAY_ERR_OUT_OF_RANGE` (`index`);
/// `HURRAY_ERR_LIMIT` (a larger array: the message names the key and the length).
///
/// Ownership: nothing is returned.
///
/// # Safety
/// `reader` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_kv_check_whole(
    reader: *const HurrayFileReader,
    index: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        r.kv_check_whole(index)
    })
}

/// `hurray_file_reader_kv_find` with `key` given as `key_len` bytes of UTF-8, not
/// NUL-terminated: the way to a key that holds NUL bytes (the format allows them).
///
/// Errors: those of `hurray_file_reader_kv_find`.
///
/// Ownership: as for `hurray_file_reader_kv_find`.
///
/// # Safety
/// `reader` NULL or live; `key` NULL or valid for `key_len` reads; `out_index` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_kv_find_n(
    reader: *const HurrayFileReader,
    key: *const c_char,
    key_len: u64,
    out_index: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        // SAFETY: forwarded.
        let key = unsafe { str_n_in(key, key_len, "key")? };
        need(out_index, "out_index")?;
        let i = r.kv_find(key).ok_or_else(|| not_found("KV key", key))?;
        // SAFETY: checked non-null.
        unsafe { put(out_index, "out_index", i) }
    })
}

/// Elements `[first, first + count)` of the int64, uint64, float64 or bool array of
/// KV entry `index`, copied into `out` in their C form: 8 bytes each (`int64_t`,
/// `uint64_t`, `double`), or 1 byte each for bool (0 or 1). This reads a window of a
/// huge array without a buffer for all of it; the element type and count come from
/// `hurray_file_reader_kv_value`. `out` may be NULL when `count` is 0.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`reader`; `out` with `count > 0`);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT`; `HURRAY_ERR_OUT_OF_RANGE`
/// (`index`, or a window past the array's end); `HURRAY_ERR_NOT_APPLICABLE` (not an
/// array of those types: string and byte elements have their own getters);
/// `HURRAY_ERR_BUFFER_TOO_SMALL` (`out_size` is less than `count` times the
/// element size; nothing is copied).
///
/// Ownership: values copied into the caller's memory; nothing to free.
///
/// # Safety
/// `reader` NULL or live; `out` NULL or valid for `out_size` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_kv_array_window(
    reader: *const HurrayFileReader,
    index: u64,
    first: u64,
    count: u64,
    out: *mut std::ffi::c_void,
    out_size: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let r = unsafe { handle::own(reader, "reader")? };
        let slice: &mut [u8] = if out.is_null() {
            &mut []
        } else {
            let n = usize::try_from(out_size).map_err(|_| {
                FfiError::new(
                    HURRAY_ERR_INVALID_ARGUMENT,
                    "`out_size` exceeds the address space",
                )
            })?;
            // SAFETY: `out` is non-NULL and valid for `out_size` bytes of writes (the
            // caller's contract); nothing else refers to it during the call.
            unsafe { std::slice::from_raw_parts_mut(out.cast::<u8>(), n) }
        };
        match r.kv_array_window(index, first, count, slice) {
            // A NULL `out` that claims room is a NULL pointer, not a small buffer.
            Err(e) if e.status == HURRAY_ERR_BUFFER_TOO_SMALL && out.is_null() && out_size > 0 => {
                Err(FfiError::null("out"))
            }
            r => r.map(|_| ()),
        }
    })
}

/// Destroys a reader and nulls `*reader`. Tensors and items it handed out stay valid:
/// each holds its own reference to the mapping, which goes away with the last of
/// them. NULL and `*reader == NULL` are no-ops.
///
/// Errors: `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not a reader);
/// `HURRAY_ERR_DOUBLE_DESTROY` (debug builds, stale pointer).
///
/// Ownership: the handle is freed; names, keys and values borrowed from it become
/// invalid.
///
/// # Safety
/// `reader` NULL, or pointing at NULL or a live reader handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_destroy(
    reader: *mut *mut HurrayFileReader,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(reader, "reader") })
}

// ---------------------------------------------------------------- writer

/// A file being written (own-build only; opaque in C). `None` once finished.
#[repr(C)]
pub struct HurrayFileWriter {
    header: Header,
    writer: Option<FileWriter>,
    /// The destination, for naming it in I/O errors of later calls (empty when the
    /// writer was wrapped with [`new`](HurrayFileWriter::new)).
    path: String,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayFileWriter {
    const KIND: u16 = kind::FILE_WRITER;
    const NAME: &'static str = "HurrayFileWriter";
    fn header(&self) -> &Header {
        &self.header
    }
}

impl HurrayFileWriter {
    /// Wraps a writer.
    pub fn new(writer: FileWriter) -> HurrayFileWriter {
        HurrayFileWriter {
            header: Header::new(kind::FILE_WRITER, handle::destroy_own::<HurrayFileWriter>),
            writer: Some(writer),
            path: String::new(),
        }
    }

    /// `e` with the destination path in front of its message when it is an I/O or
    /// not-found error (a rename onto a directory at `finish`, a full disk), so every
    /// binding's error names the file as the one from `create` does.
    fn at_path(&self, e: hurray_io::Error) -> FfiError {
        let e = FfiError::from(e);
        let io = matches!(e.category(), ErrorCategory::Io | ErrorCategory::NotFound);
        if io && !self.path.is_empty() {
            e.with_path(&self.path)
        } else {
            e
        }
    }

    fn open(&mut self) -> FfiResult<&mut FileWriter> {
        self.writer.as_mut().ok_or_else(|| {
            FfiError::new(
                HURRAY_ERR_STATE,
                "the writer was finished; destroy it and create another",
            )
        })
    }

    /// Starts writing the file that will appear at `path` when
    /// [`finish`](Self::finish)ed: bytes go to a temporary file beside it, renamed
    /// over `path` at the end (durable unless `options.durable` is 0). With
    /// `options.data_crc32c` 1 it records each tensor's data CRC-32C in the reserved
    /// KV entry `hurray.data_crc32c` when finishing (so adding a KV entry of that key
    /// yourself then fails there with `FORMAT`, a duplicate key). Dropping the writer
    /// unfinished abandons the file: nothing appears at `path`.
    ///
    /// Errors (`HURRAY_ERR_*`, the message starting with the path): `INVALID_ARGUMENT`
    /// (empty path, an option flag not 0 or 1); `FORMAT` (an illegal
    /// `data_buffer_alignment`); `FILE_NOT_FOUND` (the directory does not exist); `IO`.
    pub fn create(path: &Path, options: &HurrayWriteOptions) -> FfiResult<HurrayFileWriter> {
        if path.as_os_str().is_empty() {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "`path` is empty",
            ));
        }
        let opts = options.to_options()?;
        let data_crc32c = options.data_crc32c_flag()?;
        let mut w = FileWriter::create(path, opts)
            .map_err(|e| FfiError::from(e).with_path(&path.display().to_string()))?;
        if data_crc32c {
            w = w.with_data_crc32c();
        }
        let mut w = HurrayFileWriter::new(w);
        w.path = path.display().to_string();
        Ok(w)
    }

    /// Writes `tensor` under `name` (UTF-8, 1..=65535 bytes, unique in the file): its
    /// descriptor, padding, then its buffers, read during the call (the tensor stays
    /// the caller's).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (a device buffer); `HURRAY_ERR_STATE`
    /// (finished writer); `HURRAY_ERR_FORMAT` (empty or duplicate name, a composite
    /// head: use [`write_item`](Self::write_item)); `HURRAY_ERR_BUFFER_MISMATCH`;
    /// `HURRAY_ERR_IO` (the writer is then unusable: drop it).
    pub fn write_tensor(&mut self, name: &str, tensor: &HurrayTensor) -> FfiResult<()> {
        let t = tensor.to_io()?;
        self.write_io_tensor(name, &t)
    }

    /// [`write_tensor`](Self::write_tensor) for a tensor already in hurray-io form:
    /// a foreign tensor's borrowed views, or a binding's view of bytes its language
    /// holds (Python's `save` of a NumPy array). The bytes are only read during the
    /// call and placed at the file's own alignment, so they need not meet the
    /// alignment the descriptor declares (no aligned copy just to write them; such a
    /// view must never become a `HurrayTensor`: ARCHITECTURE decision 5).
    ///
    /// Errors: those of [`write_tensor`](Self::write_tensor).
    pub fn write_io_tensor(&mut self, name: &str, t: &hurray_io::Tensor) -> FfiResult<()> {
        let r = self.open()?.write_tensor(name, t);
        r.map_err(|e| self.at_path(e))
    }

    /// Writes `item` under `name`: a tensor, or a composite whose head gets `name`
    /// and whose members get `name/0`, `name/1`, nested `name/1/0`, ... The whole
    /// composite is validated before any byte of it is written.
    ///
    /// Errors: those of [`write_tensor`](Self::write_tensor), and `HURRAY_ERR_STATE`
    /// (a composite with fewer members than its head declares), `HURRAY_ERR_FORMAT`
    /// (a composite rule; the message names it).
    pub fn write_item(&mut self, name: &str, item: &HurrayItem) -> FfiResult<()> {
        let i = item.to_io()?;
        let w = self.open()?;
        let r = match i {
            hurray_io::Item::Tensor(t) => w.write_tensor(name, &t),
            hurray_io::Item::Composite(c) => w.write_composite(name, &c),
        };
        r.map_err(|e| self.at_path(e))
    }

    /// Adds a KV entry (written after the tensors, in the order added); keys are
    /// UTF-8, 1..=65535 bytes and unique (`file-format.md` §7).
    ///
    /// Errors: `HURRAY_ERR_STATE` (finished writer); `HURRAY_ERR_FORMAT` (empty or
    /// duplicate key); `HURRAY_ERR_LIMIT` (key over 65535 bytes, the KV section would
    /// reach 4 GiB).
    pub fn add_kv(&mut self, key: &str, value: KvValue) -> FfiResult<()> {
        self.open()?.add_kv(key, value).map_err(FfiError::from)
    }

    /// Writes the index, KV section and trailer and moves the file into place. The
    /// writer is spent afterwards, whatever the result (later calls fail with
    /// `HURRAY_ERR_STATE`).
    ///
    /// Errors: `HURRAY_ERR_STATE` (already finished); `HURRAY_ERR_IO`;
    /// `HURRAY_ERR_FORMAT` (a composite left incomplete).
    pub fn finish(&mut self) -> FfiResult<()> {
        self.open()?;
        match self.writer.take() {
            Some(w) => w.finish().map_err(|e| self.at_path(e)),
            None => Ok(()),
        }
    }
}

/// Fills `*out` with the default write options: alignment 4096, index CRC on,
/// unsorted index, count unknown, not reference-compatible, durable.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`).
///
/// Ownership: `*out` is a plain struct written by value; nothing to free.
///
/// # Safety
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_write_options_default(
    out: *mut HurrayWriteOptions,
) -> HurrayStatus {
    // SAFETY: NULL reported, else writable.
    boundary(|| unsafe { put(out, "out", HurrayWriteOptions::default()) })
}

/// Starts writing the file that will appear at `path` (NUL-terminated) when
/// finished: bytes go to a temporary file beside it, renamed over `path` by
/// `hurray_file_writer_finish`. `options` NULL means `hurray_write_options_default`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`path`, `out`); `HURRAY_ERR_INVALID_ARGUMENT`
/// (empty path, an option flag not 0 or 1); `HURRAY_ERR_FORMAT` (an illegal
/// `data_buffer_alignment`); `HURRAY_ERR_FILE_NOT_FOUND` (the directory does not
/// exist); `HURRAY_ERR_IO`.
///
/// Ownership: `path` and `options` are only read; `*out` owned, destroy with
/// `hurray_file_writer_destroy` (without finishing: the file is abandoned, nothing
/// appears at `path`).
///
/// # Safety
/// `path` NULL or NUL-terminated; `options` NULL or valid for a read; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_create(
    path: *const c_char,
    options: *const HurrayWriteOptions,
    out: *mut *mut HurrayFileWriter,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let path = unsafe { path_in(path, "path")? };
        need(out, "out")?;
        // SAFETY: NULL or valid per the caller.
        let opts = unsafe { options.as_ref() }.copied().unwrap_or_default();
        let w = HurrayFileWriter::create(&path, &opts)?;
        // SAFETY: checked non-null.
        unsafe { put(out, "out", handle::into_raw(w)) }
    })
}

/// Writes `tensor` under `name` (NUL-terminated UTF-8, 1..=65535 bytes, unique in the
/// file): its descriptor, padding, then its buffers, read from the caller's memory
/// during the call.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (a writer of another copy of the library, a device
/// buffer, `name` not UTF-8); `HURRAY_ERR_STATE` (finished writer); `HURRAY_ERR_FORMAT`
/// (empty or duplicate name, a composite head: use `hurray_file_writer_write_item`);
/// `HURRAY_ERR_BUFFER_MISMATCH`; `HURRAY_ERR_IO` (the writer is then unusable:
/// destroy it).
///
/// Ownership: `tensor` stays the caller's.
///
/// # Safety
/// `writer` NULL or live; `name` NULL or NUL-terminated; `tensor` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_write_tensor(
    writer: *mut HurrayFileWriter,
    name: *const c_char,
    tensor: *const HurrayTensor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let w = unsafe { handle::own_mut(writer, "writer")? };
        // SAFETY: forwarded.
        let name = unsafe { str_in(name, "name")? };
        // SAFETY: forwarded.
        let t = unsafe { crate::foreign::io_tensor(tensor, "tensor")? };
        w.write_io_tensor(name, &t)
    })
}

/// `hurray_file_writer_write_tensor` with `name` given as `name_len` bytes of
/// UTF-8, not NUL-terminated: the way to write a name that holds NUL bytes (the
/// format allows them).
///
/// Errors: those of `hurray_file_writer_write_tensor`.
///
/// Ownership: as for `hurray_file_writer_write_tensor`.
///
/// # Safety
/// `writer` NULL or live; `name` NULL or valid for `name_len` reads; `tensor` NULL
/// or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_write_tensor_n(
    writer: *mut HurrayFileWriter,
    name: *const c_char,
    name_len: u64,
    tensor: *const HurrayTensor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let w = unsafe { handle::own_mut(writer, "writer")? };
        // SAFETY: forwarded.
        let name = unsafe { str_n_in(name, name_len, "name")? };
        // SAFETY: forwarded.
        let t = unsafe { crate::foreign::io_tensor(tensor, "tensor")? };
        w.write_io_tensor(name, &t)
    })
}

/// Writes `item` under `name`: a tensor, or a composite whose head gets `name` and
/// whose members get `name/0`, `name/1`, nested `name/1/0`, ... The whole composite is
/// validated before any byte of it is written.
///
/// Errors: those of `hurray_file_writer_write_tensor`, and `HURRAY_ERR_STATE` (a
/// composite with fewer members than its head declares), `HURRAY_ERR_FORMAT` (a
/// composite rule; the message names it).
///
/// Ownership: `item` stays the caller's.
///
/// # Safety
/// `writer` NULL or live; `name` NULL or NUL-terminated; `item` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_write_item(
    writer: *mut HurrayFileWriter,
    name: *const c_char,
    item: *const HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let w = unsafe { handle::own_mut(writer, "writer")? };
        // SAFETY: forwarded.
        let name = unsafe { str_in(name, "name")? };
        // SAFETY: forwarded.
        let i = unsafe { handle::own(item, "item")? };
        w.write_item(name, i)
    })
}

/// `hurray_file_writer_write_item` with `name` given as `name_len` bytes of UTF-8,
/// not NUL-terminated: the way to write a name that holds NUL bytes (the format
/// allows them).
///
/// Errors: those of `hurray_file_writer_write_item`.
///
/// Ownership: as for `hurray_file_writer_write_item`.
///
/// # Safety
/// `writer` NULL or live; `name` NULL or valid for `name_len` reads; `item` NULL or
/// live.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_write_item_n(
    writer: *mut HurrayFileWriter,
    name: *const c_char,
    name_len: u64,
    item: *const HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let w = unsafe { handle::own_mut(writer, "writer")? };
        // SAFETY: forwarded.
        let name = unsafe { str_n_in(name, name_len, "name")? };
        // SAFETY: forwarded.
        let i = unsafe { handle::own(item, "item")? };
        w.write_item(name, i)
    })
}

pub(crate) fn bool_in(v: u8, arg: &str) -> FfiResult<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` holds {v}, not 0 or 1"),
        )),
    }
}

/// Writes KV, index and trailer, flushes, syncs (when `durable`), and renames the
/// temporary file over the destination path. Afterwards the writer only accepts
/// destroy. On error the temporary file is removed and the destination is left as it
/// was.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT`; `HURRAY_ERR_STATE` (already finished);
/// `HURRAY_ERR_FORMAT` (the tensor count differs from `tensor_count_hint`, or an
/// earlier write failed); `HURRAY_ERR_IO`.
///
/// Ownership: the handle stays the caller's; destroy it with `hurray_file_writer_destroy`.
///
/// # Safety
/// `writer` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_finish(writer: *mut HurrayFileWriter) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let w = unsafe { handle::own_mut(writer, "writer")? };
        w.finish()
    })
}

/// Destroys a writer and nulls `*writer`. Without a successful finish the file is
/// abandoned: the temporary file is removed and nothing appears at the destination.
/// NULL and `*writer == NULL` are no-ops.
///
/// Errors: `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not a writer);
/// `HURRAY_ERR_DOUBLE_DESTROY` (debug builds, stale pointer).
///
/// Ownership: the handle is freed.
///
/// # Safety
/// `writer` NULL, or pointing at NULL or a live writer handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_destroy(
    writer: *mut *mut HurrayFileWriter,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(writer, "writer") })
}
