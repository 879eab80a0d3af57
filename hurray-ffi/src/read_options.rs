//! Opening a file with options: limits for untrusted input and descriptor
//! strictness (`hurray_file_reader_open_with`), the C face of hurray-io's
//! `ReadOptions` (`file-format.md` §14 limits, `descriptor.md` §15 permissive mode).

use crate::file::{flag, path_in, HurrayFileReader};
use crate::handle;
use crate::status::*;
use hurray_core::DecodeOptions;
use hurray_io::file::ReadOptions;
use hurray_io::Limits;
use std::ffi::c_char;

/// How a file reader treats its input. Fill it with
/// `hurray_file_read_options_default`, then change what you need. Sizes are in
/// bytes, counts in entries.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HurrayFileReadOptions {
    /// Largest descriptor accepted (default 16 MiB).
    pub max_descriptor_bytes: u32,
    /// Most composite nesting levels, counting the outermost head (default 8;
    /// values above 64 act as 64).
    pub max_composite_depth: u32,
    /// Largest single buffer accepted (default 64 GiB).
    pub max_buffer_bytes: u64,
    /// Largest KV metadata section (default 64 MiB).
    pub max_kv_bytes: u64,
    /// Largest index section (default 256 MiB).
    pub max_index_bytes: u64,
    /// Most KV entries (default 2^20).
    pub max_kv_entries: u64,
    /// Most tensors in the index, heads and members included (default 2^24).
    pub max_tensors: u64,
    /// Most members of one composite head (default 65 536).
    pub max_composite_members: u32,
    /// Deepest tiled-layout nesting, counting the outermost level (default 8).
    pub max_tiling_depth: u8,
    /// 1: permissive descriptor decoding (`descriptor.md` §15): unknown element
    /// types, schemes and private tags are kept opaque instead of rejected; the data
    /// of such a tensor must never be interpreted. Default 0 (strict).
    pub permissive: u8,
    /// 1: an out-of-band agreement on private tags exists; accept them as opaque
    /// values. Default 0.
    pub accept_private: u8,
}

impl Default for HurrayFileReadOptions {
    fn default() -> Self {
        let l = Limits::default();
        let d = DecodeOptions::default();
        HurrayFileReadOptions {
            max_descriptor_bytes: l.max_descriptor_bytes,
            max_composite_depth: l.max_composite_depth,
            max_buffer_bytes: l.max_buffer_bytes,
            max_kv_bytes: l.max_kv_bytes,
            max_index_bytes: l.max_index_bytes,
            max_kv_entries: l.max_kv_entries,
            max_tensors: l.max_tensors,
            max_composite_members: l.max_composite_members,
            max_tiling_depth: d.max_tiling_depth,
            permissive: u8::from(d.permissive),
            accept_private: u8::from(d.accept_private),
        }
    }
}

impl HurrayFileReadOptions {
    /// The hurray-io options these stand for.
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` when `permissive` or `accept_private`
    /// is not 0 or 1.
    pub fn to_options(&self) -> FfiResult<ReadOptions> {
        Ok(ReadOptions {
            limits: Limits {
                max_descriptor_bytes: self.max_descriptor_bytes,
                max_buffer_bytes: self.max_buffer_bytes,
                max_kv_bytes: self.max_kv_bytes,
                max_index_bytes: self.max_index_bytes,
                max_kv_entries: self.max_kv_entries,
                max_tensors: self.max_tensors,
                max_composite_depth: self.max_composite_depth,
                max_composite_members: self.max_composite_members,
                ..Limits::default()
            },
            decode: DecodeOptions {
                permissive: flag(self.permissive, "permissive")?,
                accept_private: flag(self.accept_private, "accept_private")?,
                max_tiling_depth: self.max_tiling_depth,
            },
        })
    }
}

/// Fills `*out` with the default read options: the limits of
/// `hurray_file_reader_open` (16 MiB descriptors, 64 GiB buffers, 64 MiB KV,
/// 256 MiB index, 2^20 KV entries, 2^24 tensors, 8 composite levels, 65 536
/// members, tiling depth 8) and strict decoding.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`).
///
/// Ownership: `*out` is a plain struct written by value; nothing to free.
///
/// # Safety
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_read_options_default(
    out: *mut HurrayFileReadOptions,
) -> HurrayStatus {
    // SAFETY: NULL reported, else writable.
    boundary(|| unsafe { put(out, "out", HurrayFileReadOptions::default()) })
}

/// `hurray_file_reader_open` with options: raise limits to open files larger than
/// the defaults allow, lower them for untrusted input, or decode descriptors
/// permissively. `options` NULL means `hurray_file_read_options_default`.
///
/// Errors: those of `hurray_file_reader_open`, and `HURRAY_ERR_INVALID_ARGUMENT` (a
/// flag not 0 or 1); a file beyond a limit fails with `HURRAY_ERR_LIMIT`, naming the
/// limit and the byte offset.
///
/// Ownership: `path` and `options` are only read; `*out` owned, destroy with
/// `hurray_file_reader_destroy`.
///
/// # Safety
/// `path` NULL or NUL-terminated; `options` NULL or valid for a read; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_reader_open_with(
    path: *const c_char,
    options: *const HurrayFileReadOptions,
    out: *mut *mut HurrayFileReader,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: NULL or valid for a read per the caller.
        let opts = unsafe { options.as_ref() }
            .copied()
            .unwrap_or_default()
            .to_options()?;
        // SAFETY: forwarded.
        unsafe { open_reader(path, &opts, out) }
    })
}

/// Opens and validates `path` under `opts` into `*out` (both exports' body); the
/// error message starts with the path.
///
/// # Safety
/// `path` NULL or NUL-terminated; `out` NULL or writable.
pub(crate) unsafe fn open_reader(
    path: *const c_char,
    opts: &ReadOptions,
    out: *mut *mut HurrayFileReader,
) -> FfiResult<()> {
    // SAFETY: forwarded.
    let path = unsafe { path_in(path, "path")? };
    need(out, "out")?;
    let r = HurrayFileReader::open(&path, opts)?;
    // SAFETY: checked non-null.
    unsafe { put(out, "out", handle::into_raw(r)) }
}
