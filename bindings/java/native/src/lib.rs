//! # hurray-java
//!
//! The JNI glue of the Java binding (`dev.hurray:hurray`): the `native` methods of
//! `dev.hurray.Native`, each a thin layer over one or a few functions of the C ABI
//! (`hurray-ffi`, `include/hurray.h`). Format logic stays in the Rust crates; this
//! crate only moves values between Java and the C surface.
//!
//! Conventions of every entry point:
//!
//! - handles cross as `long` (the C pointer); the Java side guarantees a live,
//!   non-zero handle and serialises use (a closed object throws
//!   `IllegalStateException` before reaching here);
//! - the body runs inside `run`, which catches panics and turns every error into a
//!   pending Java exception: a C status becomes a `dev.hurray.HurrayException` (built
//!   by `HurrayException.fromNative(status, message)`) carrying the status and the C
//!   ABI's last-error message (which names the rule and byte offset);
//! - memory a Java producer hands in (`Producer`) is held by JNI global references
//!   and released exactly once, from any thread, when the last C handle that needs it
//!   lets go (the release callback attaches the thread and deletes the references).

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Arc, Mutex};

use hurray_ffi::abi::{hurray_c_abi_version, hurray_debug_live_objects, hurray_last_error_message};
use hurray_ffi::buffer::{
    hurray_buffer_destroy, hurray_buffer_list_destroy, hurray_buffer_list_new,
    hurray_buffer_list_push, hurray_buffer_new,
};
use hurray_ffi::builder::{
    hurray_descriptor_builder_add_buffer, hurray_descriptor_builder_destroy,
    hurray_descriptor_builder_finish, hurray_descriptor_builder_new,
    hurray_descriptor_builder_set_byte_offset, hurray_descriptor_builder_set_nnz,
    hurray_descriptor_builder_set_quantization, hurray_descriptor_builder_set_strides,
};
use hurray_ffi::descriptor::{
    hurray_descriptor_decode, hurray_descriptor_dense, hurray_descriptor_destroy,
    hurray_descriptor_encode,
};
use hurray_ffi::descriptor_access::{
    hurray_descriptor_buffer, hurray_descriptor_header, hurray_descriptor_nnz,
    hurray_descriptor_quantization, hurray_descriptor_shape, hurray_descriptor_strides,
};
use hurray_ffi::file::{
    hurray_file_reader_destroy, hurray_file_reader_info, hurray_file_reader_kv_array_bool,
    hurray_file_reader_kv_array_bytes, hurray_file_reader_kv_array_float64,
    hurray_file_reader_kv_array_int64, hurray_file_reader_kv_array_string,
    hurray_file_reader_kv_array_uint64, hurray_file_reader_kv_bool, hurray_file_reader_kv_bytes,
    hurray_file_reader_kv_count, hurray_file_reader_kv_find, hurray_file_reader_kv_float64,
    hurray_file_reader_kv_int64, hurray_file_reader_kv_key, hurray_file_reader_kv_string,
    hurray_file_reader_kv_type, hurray_file_reader_kv_uint64, hurray_file_reader_open,
    hurray_file_reader_tensor, hurray_file_reader_tensor_count, hurray_file_reader_tensor_name,
    hurray_file_writer_add_kv_array_bool, hurray_file_writer_add_kv_array_float64,
    hurray_file_writer_add_kv_array_int64, hurray_file_writer_add_kv_array_string,
    hurray_file_writer_add_kv_bool, hurray_file_writer_add_kv_bytes,
    hurray_file_writer_add_kv_float64, hurray_file_writer_add_kv_int64,
    hurray_file_writer_add_kv_string, hurray_file_writer_add_kv_uint64, hurray_file_writer_create,
    hurray_file_writer_destroy, hurray_file_writer_finish, hurray_file_writer_write_tensor,
    hurray_write_options_default,
};
use hurray_ffi::stream::{
    hurray_stream_decoder_advance, hurray_stream_decoder_demand, hurray_stream_decoder_destroy,
    hurray_stream_decoder_finish, hurray_stream_decoder_new, hurray_stream_decoder_next_tensor,
    hurray_stream_decoder_position, hurray_stream_encoder_begin_tensor,
    hurray_stream_encoder_chunk, hurray_stream_encoder_destroy, hurray_stream_encoder_end,
    hurray_stream_encoder_new, hurray_stream_limits_default,
};
use hurray_ffi::tensor::{
    hurray_tensor_buffer_data, hurray_tensor_descriptor, hurray_tensor_destroy, hurray_tensor_new,
};
use hurray_ffi::{
    HurrayBuffer, HurrayBufferEntry, HurrayBufferList, HurrayDescriptor, HurrayDescriptorBuilder,
    HurrayDescriptorHeader, HurrayFileInfo, HurrayFileReader, HurrayFileWriter, HurrayQuantization,
    HurrayStatus, HurrayStreamDecoder, HurrayStreamEncoder, HurrayStreamLimits, HurrayTensor,
    HurrayWriteOptions, HURRAY_C_ABI_VERSION, HURRAY_ERR_INTERNAL_PANIC, HURRAY_OK,
};
use jni::objects::{
    GlobalRef, JByteArray, JByteBuffer, JClass, JDoubleArray, JLongArray, JObject, JObjectArray,
    JString, JThrowable, JValue,
};
use jni::sys::{jboolean, jbyteArray, jdouble, jint, jlong, jlongArray, jobject, jstring};
use jni::{JNIEnv, JavaVM};

use hurray_ffi::builder::{
    hurray_descriptor_builder_push_tiling_level, hurray_descriptor_builder_set_block_paged,
    hurray_descriptor_builder_set_csf_mode_order, hurray_descriptor_builder_set_hilbert,
    hurray_descriptor_builder_set_morton_bits, hurray_descriptor_builder_set_shard,
};
use hurray_ffi::builder::{
    hurray_descriptor_builder_set_composite_head, hurray_descriptor_builder_set_member_role,
};
use hurray_ffi::builder::{
    hurray_descriptor_builder_set_coo_is_sorted, hurray_descriptor_builder_set_statistics,
};
use hurray_ffi::descriptor_access::hurray_descriptor_shard;
use hurray_ffi::descriptor_access::{
    hurray_descriptor_block_paged, hurray_descriptor_csf_mode_order, hurray_descriptor_hilbert,
    hurray_descriptor_morton_bits, hurray_descriptor_tile_inner_strides,
    hurray_descriptor_tile_outer_strides, hurray_descriptor_tile_shape,
    hurray_descriptor_tiling_depth, hurray_descriptor_tiling_level,
};
use hurray_ffi::descriptor_access::{
    hurray_descriptor_composite_head, hurray_descriptor_member_role,
};
use hurray_ffi::descriptor_access::{
    hurray_descriptor_coo_is_sorted, hurray_descriptor_statistics,
};
use hurray_ffi::file::{hurray_file_reader_item, hurray_file_writer_write_item};
use hurray_ffi::file::{
    hurray_file_writer_add_kv_array_bytes, hurray_file_writer_add_kv_array_uint64,
};
use hurray_ffi::item::{
    hurray_item_composite_new, hurray_item_composite_push, hurray_item_destroy,
    hurray_item_from_tensor, hurray_item_is_composite, hurray_item_member,
    hurray_item_member_count, hurray_item_tensor,
};
use hurray_ffi::stream::{hurray_stream_decoder_next, hurray_stream_encoder_begin_item};
use hurray_ffi::HurrayBlockPaged;
use hurray_ffi::{HurrayCompositeHead, HurrayItem, HurrayStatistics};

// ---------------------------------------------------------------------------
// The error policy: every failure becomes a pending Java exception.
// ---------------------------------------------------------------------------

/// Why an entry point failed.
enum Fail {
    /// A C ABI call failed: its status and the last-error message, read at once.
    Status(HurrayStatus, String),
    /// A JNI call failed; usually a Java exception is already pending.
    Jni(jni::errors::Error),
    /// A Java argument was unusable (becomes `IllegalArgumentException`).
    Arg(String),
}

impl From<jni::errors::Error> for Fail {
    fn from(e: jni::errors::Error) -> Fail {
        Fail::Jni(e)
    }
}

type R<T> = Result<T, Fail>;

/// The calling thread's last-error message of the C ABI ("" if none).
fn last_error() -> String {
    let p = hurray_last_error_message();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: a non-NULL last-error pointer is a NUL-terminated string that stays
    // valid until the next failing call on this thread; we copy it at once.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// `Ok` for `HURRAY_OK`, else the status with the message the call left.
fn ck(status: HurrayStatus) -> R<()> {
    if status == HURRAY_OK {
        Ok(())
    } else {
        Err(Fail::Status(status, last_error()))
    }
}

/// Makes `f` pending as a Java exception (unless one already is).
fn throw(env: &mut JNIEnv, f: Fail) {
    if env.exception_check().unwrap_or(false) {
        return;
    }
    match f {
        Fail::Status(status, msg) => {
            let built = (|| -> jni::errors::Result<()> {
                let m = env.new_string(&msg)?;
                let ex = env
                    .call_static_method(
                        "dev/hurray/HurrayException",
                        "fromNative",
                        "(ILjava/lang/String;)Ldev/hurray/HurrayException;",
                        &[JValue::Int(status), JValue::Object(&m)],
                    )?
                    .l()?;
                env.throw(JThrowable::from(ex))
            })();
            if built.is_err() && !env.exception_check().unwrap_or(false) {
                let _ = env.throw_new(
                    "java/lang/IllegalStateException",
                    format!("status {status}: {msg}"),
                );
            }
        }
        Fail::Jni(e) => {
            let _ = env.throw_new("java/lang/IllegalStateException", format!("JNI: {e}"));
        }
        Fail::Arg(msg) => {
            let _ = env.throw_new("java/lang/IllegalArgumentException", msg);
        }
    }
}

/// Runs one entry point's body: a panic or an error becomes a Java exception and the
/// entry point returns `default` (which Java never sees, as the exception is pending).
fn run<'l, T>(env: &mut JNIEnv<'l>, default: T, f: impl FnOnce(&mut JNIEnv<'l>) -> R<T>) -> T {
    match catch_unwind(AssertUnwindSafe(|| f(env))) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            throw(env, e);
            default
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            throw(
                env,
                Fail::Status(
                    HURRAY_ERR_INTERNAL_PANIC,
                    format!("HURRAY_ERR_INTERNAL_PANIC: the Java binding panicked: {what}"),
                ),
            );
            default
        }
    }
}

// ---------------------------------------------------------------------------
// Small conversions.
// ---------------------------------------------------------------------------

fn longs(env: &mut JNIEnv, a: &JLongArray) -> R<Vec<i64>> {
    if a.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(a)? as usize;
    let mut v = vec![0i64; n];
    env.get_long_array_region(a, 0, &mut v)?;
    Ok(v)
}

fn new_longs<'l>(env: &mut JNIEnv<'l>, v: &[i64]) -> R<JLongArray<'l>> {
    let a = env.new_long_array(v.len() as i32)?;
    env.set_long_array_region(&a, 0, v)?;
    Ok(a)
}

fn bytes(env: &mut JNIEnv, a: &JByteArray) -> R<Vec<u8>> {
    if a.is_null() {
        return Err(Fail::Arg("a byte array is null".into()));
    }
    Ok(env.convert_byte_array(a)?)
}

fn string(env: &mut JNIEnv, s: &JString) -> R<String> {
    if s.is_null() {
        return Err(Fail::Arg("a string is null".into()));
    }
    Ok(env.get_string(s)?.into())
}

/// A NUL-terminated copy of a Java string; an embedded NUL is an argument error.
fn cstring(env: &mut JNIEnv, s: &JString) -> R<CString> {
    let s = string(env, s)?;
    CString::new(s).map_err(|_| Fail::Arg("a string contains a NUL character".into()))
}

/// Copies a borrowed (pointer, length) pair of the C ABI into a Java string.
///
/// # Safety
/// `p` must be valid for `len` reads (or `len` 0).
unsafe fn borrowed_str<'l>(env: &mut JNIEnv<'l>, p: *const c_char, len: u64) -> R<JString<'l>> {
    let bytes = if len == 0 {
        &[][..]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len as usize) }
    };
    Ok(env.new_string(String::from_utf8_lossy(bytes))?)
}

/// A direct `ByteBuffer` over `len` bytes at `p`, or null when `len` is 0 (the Java
/// side substitutes an empty buffer: JNI refuses a zero-length direct buffer).
///
/// # Safety
/// `p` must be valid for reads and writes of `len` bytes for as long as Java can
/// reach the buffer (the Java side keeps the owning handle alive until then).
unsafe fn direct<'l>(env: &mut JNIEnv<'l>, p: *const u8, len: u64) -> R<jobject> {
    if len == 0 || p.is_null() {
        return Ok(ptr::null_mut());
    }
    let len = usize::try_from(len).map_err(|_| Fail::Arg("buffer larger than memory".into()))?;
    // SAFETY: forwarded caller contract.
    let b = unsafe { env.new_direct_byte_buffer(p.cast_mut(), len)? };
    Ok(b.into_raw())
}

// ---------------------------------------------------------------------------
// Library.
// ---------------------------------------------------------------------------

/// `Native.abiVersion()`: `hurray_c_abi_version()`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_abiVersion(_env: JNIEnv, _c: JClass) -> jint {
    hurray_c_abi_version() as jint
}

/// `Native.headerAbiVersion()`: the `HURRAY_C_ABI_VERSION` this glue was built against.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_headerAbiVersion(_env: JNIEnv, _c: JClass) -> jint {
    HURRAY_C_ABI_VERSION as jint
}

/// `Native.liveObjects()`: `hurray_debug_live_objects()`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_liveObjects(_env: JNIEnv, _c: JClass) -> jlong {
    hurray_debug_live_objects()
}

/// `Native.statusName(int)`: `hurray_status_name`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_statusName<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    status: jint,
) -> jstring {
    run(&mut env, ptr::null_mut(), |env| {
        let p = hurray_ffi::abi::hurray_status_name(status);
        // SAFETY: hurray_status_name returns a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        Ok(env.new_string(s)?.into_raw())
    })
}

/// `Native.debugPanic()`: panics inside this crate's boundary (test hook: proves a
/// panic becomes a `HurrayException` with `HURRAY_ERR_INTERNAL_PANIC`).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_debugPanic(mut env: JNIEnv, _c: JClass) {
    run(&mut env, (), |_| -> R<()> {
        panic!("Native.debugPanic was called")
    })
}

/// `Native.directAddress(ByteBuffer)`: the address of a direct buffer (tests prove
/// zero-copy with it).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_directAddress(
    mut env: JNIEnv,
    _c: JClass,
    buf: JObject,
) -> jlong {
    run(&mut env, 0, |env| {
        let b = JByteBuffer::from(buf);
        Ok(env.get_direct_buffer_address(&b)? as jlong)
    })
}

// ---------------------------------------------------------------------------
// Descriptors: Java holds the encoded bytes; these decode or build them.
// ---------------------------------------------------------------------------

/// An owned descriptor handle, destroyed on drop.
struct Desc(*mut HurrayDescriptor);

impl Drop for Desc {
    fn drop(&mut self) {
        // SAFETY: self.0 is NULL or an owned descriptor made by decode/dense/finish.
        unsafe { hurray_descriptor_destroy(&mut self.0) };
    }
}

fn decode(b: &[u8]) -> R<Desc> {
    let mut d = ptr::null_mut();
    // SAFETY: b is valid for b.len() reads; d is writable.
    ck(unsafe { hurray_descriptor_decode(b.as_ptr(), b.len() as u64, &mut d) })?;
    Ok(Desc(d))
}

fn encode(d: *const HurrayDescriptor) -> R<Vec<u8>> {
    let mut n = 0u64;
    // SAFETY: d is a live descriptor; a NULL buffer asks for the length only.
    ck(unsafe { hurray_descriptor_encode(d, ptr::null_mut(), 0, &mut n) })?;
    let mut v = vec![0u8; n as usize];
    // SAFETY: v holds n writable bytes.
    ck(unsafe { hurray_descriptor_encode(d, v.as_mut_ptr(), n, &mut n) })?;
    v.truncate(n as usize);
    Ok(v)
}

fn header(d: *const HurrayDescriptor) -> R<HurrayDescriptorHeader> {
    let mut h = HurrayDescriptorHeader::default();
    // SAFETY: d is a live descriptor; h is writable.
    ck(unsafe { hurray_descriptor_header(d, &mut h) })?;
    Ok(h)
}

fn entry(d: *const HurrayDescriptor, i: u32) -> R<HurrayBufferEntry> {
    let mut e = HurrayBufferEntry::default();
    // SAFETY: d is a live descriptor; e is writable.
    ck(unsafe { hurray_descriptor_buffer(d, i, &mut e) })?;
    Ok(e)
}

fn u64s_to_i64(v: &[u64]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

/// Packs a descriptor for `Descriptor.unpack` (Java): header, shape, buffer table,
/// strides, nnz and quantization, all as `long`s (u64 reinterpreted).
fn pack(d: *const HurrayDescriptor) -> R<Vec<i64>> {
    let h = header(d)?;
    let mut out = vec![
        i64::from(h.version_major),
        i64::from(h.version_minor),
        i64::from(h.type_tag),
        i64::from(h.layout_tag),
        i64::from(h.flags),
        i64::from(h.rank),
        i64::from(h.buffer_count),
        h.byte_offset as i64,
        i64::from(h.descriptor_length),
    ];
    let mut shape = vec![0u64; h.rank as usize];
    let mut n = 0u64;
    // SAFETY: shape holds rank writable values.
    ck(unsafe { hurray_descriptor_shape(d, shape.as_mut_ptr(), shape.len() as u64, &mut n) })?;
    out.extend(u64s_to_i64(&shape[..n as usize]));
    for i in 0..h.buffer_count {
        let e = entry(d, i)?;
        out.extend([
            e.byte_size as i64,
            i64::from(e.alignment),
            i64::from(e.device_tag),
            i64::from(e.sync_mode),
            i64::from(e.memory_class),
        ]);
    }
    let mut strides = vec![0i64; h.rank as usize];
    let mut sn = 0u64;
    // SAFETY: strides holds rank writable values.
    let s = unsafe {
        hurray_descriptor_strides(d, strides.as_mut_ptr(), strides.len() as u64, &mut sn)
    };
    if s == HURRAY_OK {
        out.push(1);
        out.extend(&strides[..sn as usize]);
    } else {
        out.push(0);
    }
    let mut nnz = 0u64;
    // SAFETY: nnz is writable.
    if unsafe { hurray_descriptor_nnz(d, &mut nnz) } == HURRAY_OK {
        out.extend([1, nnz as i64]);
    } else {
        out.extend([0, 0]);
    }
    let mut q = HurrayQuantization::default();
    // SAFETY: q is writable.
    if unsafe { hurray_descriptor_quantization(d, &mut q) } == HURRAY_OK {
        out.extend([
            1,
            i64::from(q.scheme_tag),
            i64::from(q.scale.to_bits()),
            i64::from(q.zero_point),
            i64::from(q.axis),
            i64::from(q.block_size),
            i64::from(q.scale_buffer_index),
            i64::from(q.zero_point_buffer_index),
            i64::from(q.scale_type_tag),
            i64::from(q.flags),
        ]);
    } else {
        out.extend([0; 10]);
    }
    let mut st = HurrayStatistics::default();
    // SAFETY: st is writable.
    if unsafe { hurray_descriptor_statistics(d, &mut st) } == HURRAY_OK {
        out.extend([
            1,
            i64::from(st.computed_mask),
            st.nnz as i64,
            st.sparsity_ratio.to_bits() as i64,
            st.value_min.to_bits() as i64,
            st.value_max.to_bits() as i64,
            st.value_abs_max.to_bits() as i64,
            st.value_mean.to_bits() as i64,
            st.value_stddev.to_bits() as i64,
            i64::from(st.nm_n),
            i64::from(st.nm_m),
            i64::from(st.has_nan),
            i64::from(st.has_inf),
        ]);
    } else {
        out.extend([0; 13]);
    }
    let mut sorted = 0u8;
    // SAFETY: sorted is writable.
    if unsafe { hurray_descriptor_coo_is_sorted(d, &mut sorted) } == HURRAY_OK {
        out.extend([1, i64::from(sorted)]);
    } else {
        out.extend([0, 0]);
    }
    let mut head = HurrayCompositeHead::default();
    // SAFETY: head is writable.
    if unsafe { hurray_descriptor_composite_head(d, &mut head) } == HURRAY_OK {
        out.extend([
            1,
            i64::from(head.member_count),
            i64::from(head.composition_rule),
            i64::from(head.combine_op),
        ]);
    } else {
        out.extend([0; 4]);
    }
    let mut role = 0u8;
    // SAFETY: role is writable.
    if unsafe { hurray_descriptor_member_role(d, &mut role) } == HURRAY_OK {
        out.extend([1, i64::from(role)]);
    } else {
        out.extend([0, 0]);
    }
    let mut parent = vec![0u64; h.rank as usize];
    let mut offset = vec![0u64; h.rank as usize];
    let mut n = 0u64;
    // SAFETY: both arrays hold rank writable values.
    let s = unsafe {
        hurray_descriptor_shard(
            d,
            parent.as_mut_ptr(),
            offset.as_mut_ptr(),
            parent.len() as u64,
            &mut n,
        )
    };
    if s == HURRAY_OK {
        out.push(1);
        out.extend(u64s_to_i64(&parent[..n as usize]));
        out.extend(u64s_to_i64(&offset[..n as usize]));
    } else {
        out.push(0);
    }
    let extra = layout_fields(d, h.layout_tag, h.rank as usize)?;
    out.push(extra.len() as i64);
    out.extend(extra);
    Ok(out)
}

/// The layout-specific fields, in the order `Descriptor.java` reads them:
/// tiled: depth, then per level outer order, inner order, tile shape (rank), outer
/// strides (rank), inner strides (rank; zeros where the order has none); Morton: bits
/// (rank); Hilbert: order, curve rank; CSF: mode order (rank); block-paged: num_pages,
/// page_size, paged_axis, num_seqs, layer_index, kv_role, index type. Else empty.
fn layout_fields(d: *const HurrayDescriptor, layout: u8, rank: usize) -> R<Vec<i64>> {
    let mut out = Vec::new();
    let mut n = 0u64;
    match layout {
        4 => {
            let mut depth = 0u32;
            // SAFETY: depth writable.
            ck(unsafe { hurray_descriptor_tiling_depth(d, &mut depth) })?;
            out.push(i64::from(depth));
            for level in 0..depth {
                let (mut o, mut i) = (0u8, 0u8);
                // SAFETY: outs writable.
                ck(unsafe { hurray_descriptor_tiling_level(d, level, &mut o, &mut i) })?;
                out.extend([i64::from(o), i64::from(i)]);
                let mut shape = vec![0u64; rank];
                // SAFETY: shape holds rank writable values.
                ck(unsafe {
                    hurray_descriptor_tile_shape(d, level, shape.as_mut_ptr(), rank as u64, &mut n)
                })?;
                out.extend(u64s_to_i64(&shape));
                let mut outer = vec![0i64; rank];
                // SAFETY: outer holds rank writable values.
                if unsafe {
                    hurray_descriptor_tile_outer_strides(
                        d,
                        level,
                        outer.as_mut_ptr(),
                        rank as u64,
                        &mut n,
                    )
                } != HURRAY_OK
                {
                    outer.fill(0);
                }
                out.extend(&outer);
                let mut inner = vec![0i64; rank];
                // SAFETY: inner holds rank writable values.
                if unsafe {
                    hurray_descriptor_tile_inner_strides(
                        d,
                        level,
                        inner.as_mut_ptr(),
                        rank as u64,
                        &mut n,
                    )
                } != HURRAY_OK
                {
                    inner.fill(0);
                }
                out.extend(&inner);
            }
        }
        5 => {
            let mut bits = vec![0u32; rank];
            // SAFETY: bits holds rank writable values.
            ck(unsafe {
                hurray_descriptor_morton_bits(d, bits.as_mut_ptr(), rank as u64, &mut n)
            })?;
            out.extend(bits.iter().map(|&b| i64::from(b)));
        }
        64 => {
            let (mut order, mut r) = (0u32, 0u32);
            // SAFETY: outs writable.
            ck(unsafe { hurray_descriptor_hilbert(d, &mut order, &mut r) })?;
            out.extend([i64::from(order), i64::from(r)]);
        }
        9 => {
            let mut m = vec![0u32; rank];
            // SAFETY: m holds rank writable values.
            ck(unsafe {
                hurray_descriptor_csf_mode_order(d, m.as_mut_ptr(), rank as u64, &mut n)
            })?;
            out.extend(m.iter().map(|&b| i64::from(b)));
        }
        10 => {
            let mut b = HurrayBlockPaged::default();
            // SAFETY: b writable.
            ck(unsafe { hurray_descriptor_block_paged(d, &mut b) })?;
            out.extend([
                b.num_pages as i64,
                i64::from(b.page_size),
                i64::from(b.paged_axis),
                i64::from(b.num_seqs),
                i64::from(b.layer_index),
                i64::from(b.kv_role),
                i64::from(b.block_table_index_type),
            ]);
        }
        _ => {}
    }
    Ok(out)
}

/// Applies [`layout_fields`]-shaped values to a builder.
fn set_layout_fields(b: *mut HurrayDescriptorBuilder, layout: u8, rank: usize, v: &[i64]) -> R<()> {
    let short = || Fail::Arg("too few layout fields".into());
    match layout {
        4 => {
            let depth = *v.first().ok_or_else(short)? as usize;
            let per = 2 + 3 * rank;
            if v.len() != 1 + depth * per {
                return Err(short());
            }
            for level in 0..depth {
                let f = &v[1 + level * per..1 + (level + 1) * per];
                let shape: Vec<u64> = f[2..2 + rank].iter().map(|&x| x as u64).collect();
                let outer = &f[2 + rank..2 + 2 * rank];
                let inner = &f[2 + 2 * rank..2 + 3 * rank];
                // SAFETY: b live; every array holds rank readable values.
                ck(unsafe {
                    hurray_descriptor_builder_push_tiling_level(
                        b,
                        shape.as_ptr(),
                        f[0] as u8,
                        outer.as_ptr(),
                        f[1] as u8,
                        inner.as_ptr(),
                    )
                })?;
            }
        }
        5 => {
            let bits: Vec<u32> = v.iter().map(|&x| x as u32).collect();
            // SAFETY: b live; bits readable.
            ck(unsafe {
                hurray_descriptor_builder_set_morton_bits(b, bits.as_ptr(), bits.len() as u64)
            })?;
        }
        64 => {
            if v.len() != 2 {
                return Err(short());
            }
            // SAFETY: b live.
            ck(unsafe { hurray_descriptor_builder_set_hilbert(b, v[0] as u32, v[1] as u32) })?;
        }
        9 => {
            let m: Vec<u32> = v.iter().map(|&x| x as u32).collect();
            // SAFETY: b live; m readable.
            ck(unsafe {
                hurray_descriptor_builder_set_csf_mode_order(b, m.as_ptr(), m.len() as u64)
            })?;
        }
        10 => {
            if v.len() != 7 {
                return Err(short());
            }
            let f = HurrayBlockPaged {
                num_pages: v[0] as u64,
                page_size: v[1] as u32,
                paged_axis: v[2] as u32,
                num_seqs: v[3] as u32,
                layer_index: v[4] as u32,
                kv_role: v[5] as u8,
                block_table_index_type: v[6] as u8,
            };
            // SAFETY: b live; f readable.
            ck(unsafe { hurray_descriptor_builder_set_block_paged(b, &f) })?;
        }
        _ => {
            if !v.is_empty() {
                return Err(Fail::Arg(format!("layout {layout} takes no layout fields")));
            }
        }
    }
    Ok(())
}

/// `Native.descriptorInfo(byte[])`: decodes and validates the bytes, then packs them.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_descriptorInfo<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    b: JByteArray<'l>,
) -> jlongArray {
    run(&mut env, ptr::null_mut(), |env| {
        let b = bytes(env, &b)?;
        let d = decode(&b)?;
        let packed = pack(d.0)?;
        Ok(new_longs(env, &packed)?.into_raw())
    })
}

/// `Native.descriptorDense(int type, long[] shape)`: `hurray_descriptor_dense`, encoded.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_descriptorDense<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    type_tag: jint,
    shape: JLongArray<'l>,
) -> jbyteArray {
    run(&mut env, ptr::null_mut(), |env| {
        let shape: Vec<u64> = longs(env, &shape)?.iter().map(|&x| x as u64).collect();
        let tag = u8::try_from(type_tag).map_err(|_| Fail::Arg(format!("type tag {type_tag}")))?;
        let mut d = Desc(ptr::null_mut());
        // SAFETY: shape holds rank readable values; d.0 is writable.
        ck(unsafe { hurray_descriptor_dense(tag, shape.len() as u32, shape.as_ptr(), &mut d.0) })?;
        Ok(env.byte_array_from_slice(&encode(d.0)?)?.into_raw())
    })
}

/// An owned builder handle, destroyed on drop.
struct Builder(*mut HurrayDescriptorBuilder);

impl Drop for Builder {
    fn drop(&mut self) {
        // SAFETY: self.0 is NULL or an owned builder.
        unsafe { hurray_descriptor_builder_destroy(&mut self.0) };
    }
}

/// `Native.descriptorBuild(...)`: the descriptor builder of the C ABI. `strides`
/// null: none; `nnz` < 0: none; `cooSorted` < 0: unset; `bufSizes`/`bufAligns`/
/// `bufMemory` the buffer table (CPU, producer-synced); `quant` null or the 8 fields
/// of a quantization section; `stats` null or the 12 fields of a statistics section
/// (doubles as IEEE bits). Returns the encoded, validated descriptor.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_descriptorBuild<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    type_tag: jint,
    layout_tag: jint,
    shape: JLongArray<'l>,
    strides: JLongArray<'l>,
    byte_offset: jlong,
    nnz: jlong,
    coo_sorted: jint,
    buf_sizes: JLongArray<'l>,
    buf_aligns: JLongArray<'l>,
    buf_memory: JLongArray<'l>,
    quant: JLongArray<'l>,
    stats: JLongArray<'l>,
    composite: JLongArray<'l>,
    member_role: jint,
    shard_parent: JLongArray<'l>,
    shard_offset: JLongArray<'l>,
    layout_fields: JLongArray<'l>,
) -> jbyteArray {
    run(&mut env, ptr::null_mut(), |env| {
        let shape: Vec<u64> = longs(env, &shape)?.iter().map(|&x| x as u64).collect();
        let tag = u8::try_from(type_tag).map_err(|_| Fail::Arg(format!("type tag {type_tag}")))?;
        let layout =
            u8::try_from(layout_tag).map_err(|_| Fail::Arg(format!("layout tag {layout_tag}")))?;
        let mut b = Builder(ptr::null_mut());
        // SAFETY: shape holds rank readable values; b.0 is writable.
        ck(unsafe {
            hurray_descriptor_builder_new(tag, layout, shape.len() as u32, shape.as_ptr(), &mut b.0)
        })?;
        if byte_offset != 0 {
            // SAFETY: b.0 is a live builder.
            ck(unsafe { hurray_descriptor_builder_set_byte_offset(b.0, byte_offset as u64) })?;
        }
        if !strides.is_null() {
            let s = longs(env, &strides)?;
            // SAFETY: b.0 live; s holds s.len() readable values.
            ck(unsafe { hurray_descriptor_builder_set_strides(b.0, s.as_ptr(), s.len() as u64) })?;
        }
        if nnz >= 0 {
            // SAFETY: b.0 is a live builder.
            ck(unsafe { hurray_descriptor_builder_set_nnz(b.0, nnz as u64) })?;
        }
        if coo_sorted >= 0 {
            // SAFETY: b.0 is a live builder.
            ck(unsafe { hurray_descriptor_builder_set_coo_is_sorted(b.0, coo_sorted as u8) })?;
        }
        let sizes = longs(env, &buf_sizes)?;
        let aligns = longs(env, &buf_aligns)?;
        let memory = longs(env, &buf_memory)?;
        if sizes.len() != aligns.len() || sizes.len() != memory.len() {
            return Err(Fail::Arg(
                "buffer sizes, alignments and memory classes differ in length".into(),
            ));
        }
        for ((&size, &align), &mem) in sizes.iter().zip(&aligns).zip(&memory) {
            let e = HurrayBufferEntry {
                byte_size: size as u64,
                alignment: u32::try_from(align)
                    .map_err(|_| Fail::Arg(format!("alignment {align}")))?,
                memory_class: u8::try_from(mem)
                    .map_err(|_| Fail::Arg(format!("memory class {mem}")))?,
                ..HurrayBufferEntry::default()
            };
            // SAFETY: b.0 live; e readable.
            ck(unsafe { hurray_descriptor_builder_add_buffer(b.0, &e) })?;
        }
        if !quant.is_null() {
            // [scheme, scale bits, zero point, axis, block, scale buffer, zp buffer, scale type]
            let q = longs(env, &quant)?;
            if q.len() != 8 {
                return Err(Fail::Arg("quantization needs 8 fields".into()));
            }
            let q = HurrayQuantization {
                scheme_tag: q[0] as u8,
                scale: f32::from_bits(q[1] as u32),
                zero_point: q[2] as i32,
                axis: q[3] as u32,
                block_size: q[4] as u32,
                scale_buffer_index: q[5] as u32,
                zero_point_buffer_index: q[6] as u32,
                scale_type_tag: q[7] as u8,
                ..HurrayQuantization::default()
            };
            // SAFETY: b.0 live; q readable; no trailing bytes.
            ck(unsafe { hurray_descriptor_builder_set_quantization(b.0, &q, ptr::null(), 0) })?;
        }
        if !stats.is_null() {
            // [mask, nnz, sparsity, min, max, absmax, mean, stddev (f64 bits), nm_n, nm_m, nan, inf]
            let v = longs(env, &stats)?;
            if v.len() != 12 {
                return Err(Fail::Arg("statistics need 12 fields".into()));
            }
            let f = |i: usize| f64::from_bits(v[i] as u64);
            let st = HurrayStatistics {
                computed_mask: v[0] as u32,
                nnz: v[1] as u64,
                sparsity_ratio: f(2),
                value_min: f(3),
                value_max: f(4),
                value_abs_max: f(5),
                value_mean: f(6),
                value_stddev: f(7),
                nm_n: v[8] as u8,
                nm_m: v[9] as u8,
                has_nan: v[10] as u8,
                has_inf: v[11] as u8,
            };
            // SAFETY: b.0 live; st readable.
            ck(unsafe { hurray_descriptor_builder_set_statistics(b.0, &st) })?;
        }
        if !composite.is_null() {
            // [member count, composition rule, combine op]
            let c = longs(env, &composite)?;
            if c.len() != 3 {
                return Err(Fail::Arg("a composite head needs 3 fields".into()));
            }
            let head = HurrayCompositeHead {
                member_count: c[0] as u32,
                composition_rule: c[1] as u8,
                combine_op: c[2] as u8,
            };
            // SAFETY: b.0 live; head readable.
            ck(unsafe { hurray_descriptor_builder_set_composite_head(b.0, &head) })?;
        }
        if !layout_fields.is_null() {
            let v = longs(env, &layout_fields)?;
            set_layout_fields(b.0, layout, shape.len(), &v)?;
        }
        if !shard_parent.is_null() {
            let parent: Vec<u64> = longs(env, &shard_parent)?
                .iter()
                .map(|&x| x as u64)
                .collect();
            let offset: Vec<u64> = longs(env, &shard_offset)?
                .iter()
                .map(|&x| x as u64)
                .collect();
            if parent.len() != offset.len() {
                return Err(Fail::Arg(
                    "shard parent shape and offset differ in length".into(),
                ));
            }
            // SAFETY: b.0 live; both arrays hold len readable values.
            ck(unsafe {
                hurray_descriptor_builder_set_shard(
                    b.0,
                    parent.as_ptr(),
                    offset.as_ptr(),
                    parent.len() as u64,
                )
            })?;
        }
        if member_role >= 0 {
            // SAFETY: b.0 is a live builder.
            ck(unsafe { hurray_descriptor_builder_set_member_role(b.0, member_role as u8) })?;
        }
        let mut d = Desc(ptr::null_mut());
        // SAFETY: b.0 live; d.0 writable.
        ck(unsafe { hurray_descriptor_builder_finish(b.0, &mut d.0) })?;
        Ok(env.byte_array_from_slice(&encode(d.0)?)?.into_raw())
    })
}

// ---------------------------------------------------------------------------
// Tensors.
// ---------------------------------------------------------------------------

/// What a Java producer lends: global references to its direct buffers (which keep
/// the memory alive) and an optional `Runnable` to run once it is all released.
/// Shared by the buffers of one tensor through an `Arc`; each C release callback
/// drops one count, and the last drop runs [`Producer::drop`], exactly once.
struct Producer {
    vm: JavaVM,
    buffers: Vec<GlobalRef>,
    /// Taken (disarmed) when the construction fails: the callback runs only for a
    /// tensor that was handed to Java.
    on_release: Mutex<Option<GlobalRef>>,
}

impl Drop for Producer {
    fn drop(&mut self) {
        // May run on any thread (a Cleaner thread, a native thread): attach if needed
        // (the guard detaches only what it attached), run the callback, then delete
        // the global references while attached.
        if let Ok(mut env) = self.vm.attach_current_thread() {
            let callback = self.on_release.get_mut().ok().and_then(Option::take);
            if let Some(r) = callback {
                let _ = env.call_method(r.as_obj(), "run", "()V", &[]);
                if env.exception_check().unwrap_or(false) {
                    let _ = env.exception_describe();
                    let _ = env.exception_clear();
                }
            }
            self.buffers.clear();
        }
    }
}

/// The C release callback of a Java producer's buffer: drops one `Arc<Producer>`.
unsafe extern "C" fn release_producer(ctx: *mut c_void) {
    let _ = catch_unwind(|| {
        // SAFETY: ctx came from Arc::into_raw in tensorNew, once per buffer, and the
        // C ABI calls each release exactly once.
        drop(unsafe { Arc::from_raw(ctx.cast_const().cast::<Producer>()) });
    });
}

/// An owned buffer list, destroyed on drop unless moved into a tensor.
struct List(*mut HurrayBufferList);

impl Drop for List {
    fn drop(&mut self) {
        // SAFETY: NULL or an owned list (destroying it releases its buffers).
        unsafe { hurray_buffer_list_destroy(&mut self.0) };
    }
}

/// `Native.tensorNew(byte[] descriptor, ByteBuffer[] buffers, Runnable onRelease)`:
/// a tensor over the caller's direct buffers, without copying. Each buffer's whole
/// capacity is used; placement comes from the descriptor's buffer table. The buffers
/// are held by global references until the last C handle lets go; then
/// `onRelease.run()` (if not null) runs once, on whatever thread that is.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorNew<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    desc: JByteArray<'l>,
    buffers: JObjectArray<'l>,
    on_release: JObject<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let desc = bytes(env, &desc)?;
        let d = decode(&desc)?;
        let count = env.get_array_length(&buffers)?;
        let mut globals = Vec::with_capacity(count as usize);
        let mut regions = Vec::with_capacity(count as usize);
        for i in 0..count {
            let o = env.get_object_array_element(&buffers, i)?;
            if o.is_null() {
                return Err(Fail::Arg(format!("buffer {i} is null")));
            }
            let b = JByteBuffer::from(o);
            let addr = env
                .get_direct_buffer_address(&b)
                .map_err(|_| Fail::Arg(format!("buffer {i} is not a direct ByteBuffer")))?;
            let cap = env.get_direct_buffer_capacity(&b)?;
            regions.push((addr, cap));
            globals.push(env.new_global_ref(&b)?);
        }
        let on_release = if on_release.is_null() {
            None
        } else {
            Some(env.new_global_ref(&on_release)?)
        };
        let producer = Arc::new(Producer {
            vm: env.get_java_vm()?,
            buffers: globals,
            on_release: Mutex::new(on_release),
        });
        let made = wrap_regions(&d, &desc, &regions, &producer);
        if made.is_err() {
            // Everything the C ABI briefly held was dropped inside wrap_regions while
            // `producer` kept a count: disarm the callback before the last count goes.
            if let Ok(mut g) = producer.on_release.lock() {
                g.take();
            }
        }
        drop(producer);
        made
    })
}

/// Builds the buffers (one `Arc<Producer>` count each), the list and the tensor.
fn wrap_regions(
    d: &Desc,
    desc: &[u8],
    regions: &[(*mut u8, usize)],
    producer: &Arc<Producer>,
) -> R<jlong> {
    let mut list = List(ptr::null_mut());
    // SAFETY: list.0 is writable.
    ck(unsafe { hurray_buffer_list_new(&mut list.0) })?;
    let h = header(d.0)?;
    for (i, &(addr, cap)) in regions.iter().enumerate() {
        let e = if (i as u32) < h.buffer_count {
            entry(d.0, i as u32)?
        } else {
            HurrayBufferEntry {
                alignment: 64,
                ..HurrayBufferEntry::default()
            }
        };
        let data: *const c_void = if cap == 0 { ptr::null() } else { addr.cast() };
        let ctx = Arc::into_raw(producer.clone()).cast_mut().cast::<c_void>();
        let mut buf: *mut HurrayBuffer = ptr::null_mut();
        // SAFETY: data is valid for cap bytes while the global reference in
        // `producer` keeps the ByteBuffer (and so its memory) reachable; the
        // release drops that count exactly once.
        let s = unsafe {
            hurray_buffer_new(
                data,
                cap as u64,
                e.alignment,
                e.device_tag,
                e.sync_mode,
                e.memory_class,
                ptr::null(),
                Some(release_producer),
                ctx,
                &mut buf,
            )
        };
        if s != HURRAY_OK {
            let err = Fail::Status(s, last_error());
            // SAFETY: on error the release was not called: the count is ours.
            drop(unsafe { Arc::from_raw(ctx.cast_const().cast::<Producer>()) });
            return Err(err);
        }
        // SAFETY: list.0 and buf are live handles of this copy.
        let s = unsafe { hurray_buffer_list_push(list.0, &mut buf) };
        if s != HURRAY_OK {
            let err = Fail::Status(s, last_error());
            // SAFETY: the push failed, so buf is still ours; destroying it runs
            // its release (one count).
            unsafe { hurray_buffer_destroy(&mut buf) };
            return Err(err);
        }
    }
    let mut t: *mut HurrayTensor = ptr::null_mut();
    // SAFETY: desc readable; list.0 live (moves in on success only); t writable.
    ck(unsafe {
        hurray_tensor_new(
            HURRAY_C_ABI_VERSION,
            desc.as_ptr(),
            desc.len() as u64,
            list.0,
            ptr::null_mut(),
            None,
            &mut t,
        )
    })?;
    list.0 = ptr::null_mut(); // moved into the tensor
    Ok(t as jlong)
}

/// `Native.tensorDestroy(long)`: `hurray_tensor_destroy`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorDestroy(mut env: JNIEnv, _c: JClass, t: jlong) {
    run(&mut env, (), |_| {
        let mut p = t as *mut HurrayTensor;
        // SAFETY: the Java side passes each owned tensor handle here exactly once.
        ck(unsafe { hurray_tensor_destroy(&mut p) })
    })
}

/// `Native.tensorDescriptor(long)`: the tensor's descriptor, encoded.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorDescriptor<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    t: jlong,
) -> jbyteArray {
    run(&mut env, ptr::null_mut(), |env| {
        let mut d: *const HurrayDescriptor = ptr::null();
        // SAFETY: t is a live tensor; d is writable (borrowed result).
        ck(unsafe { hurray_tensor_descriptor(t as *const HurrayTensor, &mut d) })?;
        Ok(env.byte_array_from_slice(&encode(d)?)?.into_raw())
    })
}

fn buffer_data(t: jlong, i: jint) -> R<(*const u8, u64)> {
    let i = u64::try_from(i).map_err(|_| Fail::Arg(format!("buffer index {i}")))?;
    let mut p: *const c_void = ptr::null();
    let mut n = 0u64;
    // SAFETY: t is a live tensor; p and n writable.
    ck(unsafe { hurray_tensor_buffer_data(t as *const HurrayTensor, i, &mut p, &mut n) })?;
    Ok((p.cast(), n))
}

/// `Native.tensorBuffer(long, int)`: a direct `ByteBuffer` over buffer `i` (no copy),
/// or null for an empty buffer. The Java side keeps the tensor alive while it is
/// reachable.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorBuffer<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    t: jlong,
    i: jint,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let (p, n) = buffer_data(t, i)?;
        // SAFETY: the buffer stays valid until the tensor is destroyed, which the
        // Java side defers until this ByteBuffer is unreachable (Tensor.java). Host
        // buffers of the library are writable (stream: owned allocation; file:
        // private copy-on-write mapping; producer: the producer's own memory).
        unsafe { direct(env, p, n) }
    })
}

/// `Native.tensorBufferAddress(long, int)`: the C pointer of buffer `i`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_tensorBufferAddress(
    mut env: JNIEnv,
    _c: JClass,
    t: jlong,
    i: jint,
) -> jlong {
    run(&mut env, 0, |_| Ok(buffer_data(t, i)?.0 as jlong))
}

// ---------------------------------------------------------------------------
// Stream decoder and encoder.
// ---------------------------------------------------------------------------

fn limits(max_descriptor: jlong, max_buffer: jlong) -> R<HurrayStreamLimits> {
    let mut l = std::mem::MaybeUninit::<HurrayStreamLimits>::uninit();
    // SAFETY: l is writable.
    ck(unsafe { hurray_stream_limits_default(l.as_mut_ptr()) })?;
    // SAFETY: written on success.
    let mut l = unsafe { l.assume_init() };
    if max_descriptor > 0 {
        l.max_descriptor_bytes = u32::try_from(max_descriptor).unwrap_or(u32::MAX);
    }
    if max_buffer > 0 {
        l.max_buffer_bytes = max_buffer as u64;
    }
    Ok(l)
}

/// `Native.decoderNew(long maxDescriptorBytes, long maxBufferBytes)`: a decoder with
/// the default limits, except those given (> 0).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNew(
    mut env: JNIEnv,
    _c: JClass,
    max_descriptor: jlong,
    max_buffer: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let l = limits(max_descriptor, max_buffer)?;
        let mut d: *mut HurrayStreamDecoder = ptr::null_mut();
        // SAFETY: l readable; d writable.
        ck(unsafe { hurray_stream_decoder_new(&l, &mut d) })?;
        Ok(d as jlong)
    })
}

/// `Native.decoderDemand(long)`: a direct `ByteBuffer` over the slice the next bytes
/// must be read into (valid until the next call on the decoder), or null when the
/// decoder wants nothing.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderDemand<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    dec: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let mut p: *mut u8 = ptr::null_mut();
        let mut n = 0u64;
        // SAFETY: dec is a live decoder; p, n writable.
        ck(unsafe {
            hurray_stream_decoder_demand(dec as *mut HurrayStreamDecoder, &mut p, &mut n)
        })?;
        // SAFETY: the demanded slice is writable and valid until the next call on
        // the decoder; StreamReader.java drops the ByteBuffer before that call, and
        // defers a close() made during the read (from the user's InputStream, on
        // this thread) until the read returns, so the decoder outlives the slice.
        unsafe { direct(env, p, n) }
    })
}

/// `Native.decoderAdvance(long, long)`: `hurray_stream_decoder_advance`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderAdvance(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
    n: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: dec is a live decoder.
        ck(unsafe { hurray_stream_decoder_advance(dec as *mut HurrayStreamDecoder, n as u64) })
    })
}

/// `Native.decoderNextTensor(long)`: the next complete tensor (owned), or 0.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNextTensor(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut t: *mut HurrayTensor = ptr::null_mut();
        // SAFETY: dec is a live decoder; t writable.
        ck(unsafe { hurray_stream_decoder_next_tensor(dec as *mut HurrayStreamDecoder, &mut t) })?;
        Ok(t as jlong)
    })
}

/// `Native.decoderFinish(long)`: end of input; throws on a truncated stream.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderFinish(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: dec is a live decoder.
        ck(unsafe { hurray_stream_decoder_finish(dec as *mut HurrayStreamDecoder) })
    })
}

/// `Native.decoderPosition(long)`: bytes consumed so far.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderPosition(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut n = 0u64;
        // SAFETY: dec is a live decoder; n writable.
        ck(unsafe { hurray_stream_decoder_position(dec as *const HurrayStreamDecoder, &mut n) })?;
        Ok(n as jlong)
    })
}

/// `Native.decoderDestroy(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderDestroy(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) {
    run(&mut env, (), |_| {
        let mut p = dec as *mut HurrayStreamDecoder;
        // SAFETY: the Java side destroys each decoder exactly once.
        ck(unsafe { hurray_stream_decoder_destroy(&mut p) })
    })
}

/// `Native.encoderNew()`: an encoder with the default limits.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderNew(mut env: JNIEnv, _c: JClass) -> jlong {
    run(&mut env, 0, |_| {
        let l = limits(0, 0)?;
        let mut e: *mut HurrayStreamEncoder = ptr::null_mut();
        // SAFETY: l readable; e writable.
        ck(unsafe { hurray_stream_encoder_new(&l, &mut e) })?;
        Ok(e as jlong)
    })
}

/// `Native.encoderBegin(long enc, long tensor)`: the chunk count of the tensor's
/// encoding (descriptor bytes, then the tensor's own buffers, never copied).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderBegin(
    mut env: JNIEnv,
    _c: JClass,
    enc: jlong,
    t: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let (mut count, mut len) = (0u64, 0u64);
        // SAFETY: enc a live encoder, t a live tensor; outs writable.
        ck(unsafe {
            hurray_stream_encoder_begin_tensor(
                enc as *mut HurrayStreamEncoder,
                t as *const HurrayTensor,
                &mut count,
                &mut len,
            )
        })?;
        Ok(count as jlong)
    })
}

fn chunk(enc: jlong, i: jlong) -> R<(*const u8, u64)> {
    let mut p: *const u8 = ptr::null();
    let mut n = 0u64;
    // SAFETY: enc a live encoder; outs writable.
    ck(unsafe {
        hurray_stream_encoder_chunk(enc as *const HurrayStreamEncoder, i as u64, &mut p, &mut n)
    })?;
    Ok((p, n))
}

/// `Native.encoderChunk(long, long)`: a direct `ByteBuffer` over chunk `i` (valid
/// until the next begin, end or destroy), or null when it is empty.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderChunk<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    enc: jlong,
    i: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let (p, n) = chunk(enc, i)?;
        // SAFETY: valid until the next begin/end/destroy; StreamWriter.java writes it
        // out and drops it before then (a close() or nested write from the user's
        // OutputStream during the write is deferred or refused), and hands it out
        // read-only.
        unsafe { direct(env, p, n) }
    })
}

/// `Native.encoderChunkAddress(long, long)`: the pointer of chunk `i` (zero-copy tests).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderChunkAddress(
    mut env: JNIEnv,
    _c: JClass,
    enc: jlong,
    i: jlong,
) -> jlong {
    run(&mut env, 0, |_| Ok(chunk(enc, i)?.0 as jlong))
}

/// `Native.encoderEnd(long)`: lets go of the current item's buffers.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderEnd(mut env: JNIEnv, _c: JClass, enc: jlong) {
    run(&mut env, (), |_| {
        // SAFETY: enc is a live encoder.
        ck(unsafe { hurray_stream_encoder_end(enc as *mut HurrayStreamEncoder) })
    })
}

/// `Native.encoderDestroy(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderDestroy(
    mut env: JNIEnv,
    _c: JClass,
    enc: jlong,
) {
    run(&mut env, (), |_| {
        let mut p = enc as *mut HurrayStreamEncoder;
        // SAFETY: the Java side destroys each encoder exactly once.
        ck(unsafe { hurray_stream_encoder_destroy(&mut p) })
    })
}

// ---------------------------------------------------------------------------
// File reader.
// ---------------------------------------------------------------------------

fn reader(r: jlong) -> *const HurrayFileReader {
    r as *const HurrayFileReader
}

/// `Native.fileOpen(String path)`: maps and validates the file.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileOpen<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    path: JString<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let path = cstring(env, &path)?;
        let mut r: *mut HurrayFileReader = ptr::null_mut();
        // SAFETY: path is NUL-terminated; r writable.
        ck(unsafe { hurray_file_reader_open(path.as_ptr(), &mut r) })?;
        Ok(r as jlong)
    })
}

/// `Native.fileInfo(long)`: the file facts, packed for `FileReader.Info` (Java).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileInfo<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
) -> jlongArray {
    run(&mut env, ptr::null_mut(), |env| {
        // SAFETY: HurrayFileInfo is plain integers: all-zero is a valid value.
        let mut i: HurrayFileInfo = unsafe { std::mem::zeroed() };
        // SAFETY: r is a live reader; i writable.
        ck(unsafe { hurray_file_reader_info(reader(r), &mut i) })?;
        let v = [
            i64::from(i.version_major),
            i64::from(i.version_minor),
            i64::from(i.crc_status),
            i64::from(i.flags),
            i64::from(i.data_buffer_alignment),
            i64::from(i.index_crc32c),
            i.tensor_count_hint as i64,
            i.file_len as i64,
            i.tensor_count as i64,
            i.kv_count as i64,
        ];
        Ok(new_longs(env, &v)?.into_raw())
    })
}

/// A Java `String[]` of `v`; each element's local reference is deleted once stored,
/// so a long list does not pile up local references in this native frame.
fn string_array(env: &mut JNIEnv, v: &[String]) -> R<jobject> {
    let len = i32::try_from(v.len()).map_err(|_| Fail::Arg("too many names for Java".into()))?;
    let a = env.new_object_array(len, "java/lang/String", JObject::null())?;
    for (i, s) in v.iter().enumerate() {
        let js = env.new_string(s)?;
        env.set_object_array_element(&a, i as i32, &js)?;
        env.delete_local_ref(js)?;
    }
    Ok(a.into_raw())
}

/// Copies a borrowed (pointer, length) name of the C ABI into a Rust string.
///
/// # Safety
/// `p` must be valid for `len` reads (or `len` 0).
unsafe fn borrowed_string(p: *const c_char, len: u64) -> String {
    if len == 0 {
        return String::new();
    }
    // SAFETY: the caller's contract.
    let b = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len as usize) };
    String::from_utf8_lossy(b).into_owned()
}

/// `Native.fileNames(long)`: the tensor names, in index order.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileNames<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let mut n = 0u64;
        // SAFETY: r is a live reader; n writable.
        ck(unsafe { hurray_file_reader_tensor_count(reader(r), &mut n) })?;
        let mut names = Vec::new();
        for i in 0..n {
            let (mut p, mut len) = (ptr::null::<c_char>(), 0u64);
            // SAFETY: r live; outs writable.
            ck(unsafe { hurray_file_reader_tensor_name(reader(r), i, &mut p, &mut len) })?;
            // SAFETY: a borrowed name of len bytes, valid while the reader lives.
            names.push(unsafe { borrowed_string(p, len) });
        }
        string_array(env, &names)
    })
}

/// `Native.fileTensor(long, String)`: the named tensor (owned), a zero-copy view of
/// the private mapping that keeps the mapping alive after the reader is destroyed.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileTensor<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
    name: JString<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let name = cstring(env, &name)?;
        let mut t: *mut HurrayTensor = ptr::null_mut();
        // SAFETY: r live; name NUL-terminated; t writable.
        ck(unsafe { hurray_file_reader_tensor(reader(r), name.as_ptr(), &mut t) })?;
        Ok(t as jlong)
    })
}

/// `Native.fileKvKeys(long)`: the KV keys, in file order.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileKvKeys<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let mut n = 0u64;
        // SAFETY: r live; n writable.
        ck(unsafe { hurray_file_reader_kv_count(reader(r), &mut n) })?;
        let mut keys = Vec::new();
        for i in 0..n {
            let (mut p, mut len) = (ptr::null::<c_char>(), 0u64);
            // SAFETY: r live; outs writable.
            ck(unsafe { hurray_file_reader_kv_key(reader(r), i, &mut p, &mut len) })?;
            // SAFETY: a borrowed key of len bytes.
            keys.push(unsafe { borrowed_string(p, len) });
        }
        string_array(env, &keys)
    })
}

fn big_integer<'l>(env: &mut JNIEnv<'l>, v: u64) -> R<JObject<'l>> {
    let s = env.new_string(v.to_string())?;
    Ok(env.new_object(
        "java/math/BigInteger",
        "(Ljava/lang/String;)V",
        &[JValue::Object(&s)],
    )?)
}

fn boxed<'l>(env: &mut JNIEnv<'l>, class: &str, sig: &str, v: JValue) -> R<JObject<'l>> {
    Ok(env.call_static_method(class, "valueOf", sig, &[v])?.l()?)
}

/// Copies a borrowed byte slice into a new Java `byte[]`.
///
/// # Safety
/// `p` valid for `len` reads (or `len` 0).
unsafe fn borrowed_bytes<'l>(env: &mut JNIEnv<'l>, p: *const u8, len: u64) -> R<JObject<'l>> {
    let s = if len == 0 {
        &[][..]
    } else {
        // SAFETY: caller contract.
        unsafe { std::slice::from_raw_parts(p, len as usize) }
    };
    Ok(env.byte_array_from_slice(s)?.into())
}

/// `Native.fileKv(long, String key)`: the value of a KV entry as a Java object:
/// `String`, `Long` (int64), `java.math.BigInteger` (uint64), `Double`, `Boolean`,
/// `byte[]`, or an array: `long[]`, `BigInteger[]`, `double[]`, `boolean[]`,
/// `String[]`, `byte[][]`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileKv<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
    key: JString<'l>,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let key = cstring(env, &key)?;
        let r = reader(r);
        let mut i = 0u64;
        // SAFETY: r live; key NUL-terminated; i writable.
        ck(unsafe { hurray_file_reader_kv_find(r, key.as_ptr(), &mut i) })?;
        let (mut ty, mut et, mut n) = (0u8, 0u8, 0u64);
        // SAFETY: r live; outs writable.
        ck(unsafe { hurray_file_reader_kv_type(r, i, &mut ty, &mut et, &mut n) })?;
        let obj: JObject = match ty {
            1 => {
                let (mut p, mut len) = (ptr::null::<c_char>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_string(r, i, &mut p, &mut len) })?;
                // SAFETY: borrowed string of len bytes.
                unsafe { borrowed_str(env, p, len)? }.into()
            }
            2 => {
                let mut v = 0i64;
                // SAFETY: r live; v writable.
                ck(unsafe { hurray_file_reader_kv_int64(r, i, &mut v) })?;
                boxed(
                    env,
                    "java/lang/Long",
                    "(J)Ljava/lang/Long;",
                    JValue::Long(v),
                )?
            }
            3 => {
                let mut v = 0u64;
                // SAFETY: r live; v writable.
                ck(unsafe { hurray_file_reader_kv_uint64(r, i, &mut v) })?;
                big_integer(env, v)?
            }
            4 => {
                let mut v = 0f64;
                // SAFETY: r live; v writable.
                ck(unsafe { hurray_file_reader_kv_float64(r, i, &mut v) })?;
                boxed(
                    env,
                    "java/lang/Double",
                    "(D)Ljava/lang/Double;",
                    JValue::Double(v),
                )?
            }
            5 => {
                let mut v = 0u8;
                // SAFETY: r live; v writable.
                ck(unsafe { hurray_file_reader_kv_bool(r, i, &mut v) })?;
                boxed(
                    env,
                    "java/lang/Boolean",
                    "(Z)Ljava/lang/Boolean;",
                    JValue::Bool(v),
                )?
            }
            6 => {
                let (mut p, mut len) = (ptr::null::<u8>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_bytes(r, i, &mut p, &mut len) })?;
                // SAFETY: borrowed bytes of len bytes.
                unsafe { borrowed_bytes(env, p, len)? }
            }
            7 => kv_array(env, r, i, et, n)?,
            _ => {
                return Err(Fail::Status(
                    hurray_ffi::HURRAY_ERR_NOT_APPLICABLE,
                    format!("KV type {ty} is not known to the Java binding"),
                ))
            }
        };
        Ok(obj.into_raw())
    })
}

fn kv_array<'l>(
    env: &mut JNIEnv<'l>,
    r: *const HurrayFileReader,
    i: u64,
    et: u8,
    n: u64,
) -> R<JObject<'l>> {
    let len = i32::try_from(n).map_err(|_| Fail::Arg("KV array too long for Java".into()))?;
    let mut got = 0u64;
    Ok(match et {
        2 | 3 => {
            let mut v = vec![0u64; n as usize];
            if et == 2 {
                // SAFETY: v holds n writable values (i64 and u64 share a layout).
                ck(unsafe {
                    hurray_file_reader_kv_array_int64(r, i, v.as_mut_ptr().cast(), n, &mut got)
                })?;
                new_longs(env, &u64s_to_i64(&v))?.into()
            } else {
                // SAFETY: v holds n writable values.
                ck(unsafe {
                    hurray_file_reader_kv_array_uint64(r, i, v.as_mut_ptr(), n, &mut got)
                })?;
                let a = env.new_object_array(len, "java/math/BigInteger", JObject::null())?;
                for (k, &x) in v.iter().enumerate() {
                    let b = big_integer(env, x)?;
                    env.set_object_array_element(&a, k as i32, &b)?;
                    env.delete_local_ref(b)?;
                }
                a.into()
            }
        }
        4 => {
            let mut v = vec![0f64; n as usize];
            // SAFETY: v holds n writable values.
            ck(unsafe { hurray_file_reader_kv_array_float64(r, i, v.as_mut_ptr(), n, &mut got) })?;
            let a: JDoubleArray = env.new_double_array(len)?;
            env.set_double_array_region(&a, 0, &v)?;
            a.into()
        }
        5 => {
            let mut v = vec![0u8; n as usize];
            // SAFETY: v holds n writable values.
            ck(unsafe { hurray_file_reader_kv_array_bool(r, i, v.as_mut_ptr(), n, &mut got) })?;
            let a = env.new_boolean_array(len)?;
            env.set_boolean_array_region(&a, 0, &v)?;
            a.into()
        }
        1 => {
            let a = env.new_object_array(len, "java/lang/String", JObject::null())?;
            for k in 0..n {
                let (mut p, mut l) = (ptr::null::<c_char>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_array_string(r, i, k, &mut p, &mut l) })?;
                // SAFETY: borrowed string of l bytes.
                let s = unsafe { borrowed_str(env, p, l)? };
                env.set_object_array_element(&a, k as i32, &s)?;
                env.delete_local_ref(s)?;
            }
            a.into()
        }
        6 => {
            let a = env.new_object_array(len, "[B", JObject::null())?;
            for k in 0..n {
                let (mut p, mut l) = (ptr::null::<u8>(), 0u64);
                // SAFETY: r live; outs writable.
                ck(unsafe { hurray_file_reader_kv_array_bytes(r, i, k, &mut p, &mut l) })?;
                // SAFETY: borrowed bytes of l bytes.
                let b = unsafe { borrowed_bytes(env, p, l)? };
                env.set_object_array_element(&a, k as i32, &b)?;
                env.delete_local_ref(b)?;
            }
            a.into()
        }
        _ => {
            return Err(Fail::Status(
                hurray_ffi::HURRAY_ERR_NOT_APPLICABLE,
                format!("KV array element type {et} is not known to the Java binding"),
            ))
        }
    })
}

/// `Native.fileDestroy(long)`: tensors it returned stay valid (they hold the mapping).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileDestroy(mut env: JNIEnv, _c: JClass, r: jlong) {
    run(&mut env, (), |_| {
        let mut p = r as *mut HurrayFileReader;
        // SAFETY: the Java side destroys each reader exactly once.
        ck(unsafe { hurray_file_reader_destroy(&mut p) })
    })
}

// ---------------------------------------------------------------------------
// File writer.
// ---------------------------------------------------------------------------

fn writer(w: jlong) -> *mut HurrayFileWriter {
    w as *mut HurrayFileWriter
}

/// `Native.writerCreate(String path, int alignment, boolean durable, boolean sorted)`:
/// a writer over a temporary file beside `path` (`alignment` 0: the default).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerCreate<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    path: JString<'l>,
    alignment: jint,
    durable: jboolean,
    sorted: jboolean,
) -> jlong {
    run(&mut env, 0, |env| {
        let path = cstring(env, &path)?;
        let mut o = std::mem::MaybeUninit::<HurrayWriteOptions>::uninit();
        // SAFETY: o writable.
        ck(unsafe { hurray_write_options_default(o.as_mut_ptr()) })?;
        // SAFETY: written on success.
        let mut o = unsafe { o.assume_init() };
        if alignment > 0 {
            o.data_buffer_alignment = alignment as u32;
        }
        o.durable = u8::from(durable != 0);
        o.sorted_index = u8::from(sorted != 0);
        let mut w: *mut HurrayFileWriter = ptr::null_mut();
        // SAFETY: path NUL-terminated; o readable; w writable.
        ck(unsafe { hurray_file_writer_create(path.as_ptr(), &o, &mut w) })?;
        Ok(w as jlong)
    })
}

/// `Native.writerWriteTensor(long, String, long tensor)`: the buffers are read during
/// the call; the tensor stays the caller's.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerWriteTensor<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    w: jlong,
    name: JString<'l>,
    t: jlong,
) {
    run(&mut env, (), |env| {
        let name = cstring(env, &name)?;
        // SAFETY: w a live writer; name NUL-terminated; t a live tensor.
        ck(unsafe {
            hurray_file_writer_write_tensor(writer(w), name.as_ptr(), t as *const HurrayTensor)
        })
    })
}

/// `Native.writerAddKv(long, String key, Object value)`: one KV entry; the value's
/// Java class picks the type: `String`, `Long`/`Integer` (int64), `BigInteger`
/// (uint64), `Double`/`Float` (float64), `Boolean`, `byte[]`, `long[]`, `double[]`,
/// `boolean[]`, `String[]`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerAddKv<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    w: jlong,
    key: JString<'l>,
    value: JObject<'l>,
) {
    run(&mut env, (), |env| {
        let k = cstring(env, &key)?;
        let w = writer(w);
        let k = k.as_ptr();
        if value.is_null() {
            return Err(Fail::Arg("a KV value is null".into()));
        }
        let is = |env: &mut JNIEnv<'l>, class: &str| env.is_instance_of(&value, class);
        if is(env, "java/lang/String")? {
            let v = cstring(env, &JString::from(value))?;
            // SAFETY: w live; k and v NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_string(w, k, v.as_ptr()) });
        }
        if is(env, "java/lang/Long")? || is(env, "java/lang/Integer")? {
            let v = env.call_method(&value, "longValue", "()J", &[])?.j()?;
            // SAFETY: w live; k NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_int64(w, k, v) });
        }
        if is(env, "java/math/BigInteger")? {
            let s = env
                .call_method(&value, "toString", "()Ljava/lang/String;", &[])?
                .l()?;
            let s = string(env, &JString::from(s))?;
            let v: u64 = s
                .parse()
                .map_err(|_| Fail::Arg(format!("{s} is not a uint64")))?;
            // SAFETY: w live; k NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_uint64(w, k, v) });
        }
        if is(env, "java/lang/Double")? || is(env, "java/lang/Float")? {
            let v: jdouble = env.call_method(&value, "doubleValue", "()D", &[])?.d()?;
            // SAFETY: w live; k NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_float64(w, k, v) });
        }
        if is(env, "java/lang/Boolean")? {
            let v = env.call_method(&value, "booleanValue", "()Z", &[])?.z()?;
            // SAFETY: w live; k NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_bool(w, k, u8::from(v)) });
        }
        if is(env, "[B")? {
            let v = env.convert_byte_array(JByteArray::from(value))?;
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_bytes(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[J")? {
            let v = longs(env, &JLongArray::from(value))?;
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_int64(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[D")? {
            let a = JDoubleArray::from(value);
            let n = env.get_array_length(&a)? as usize;
            let mut v = vec![0f64; n];
            env.get_double_array_region(&a, 0, &mut v)?;
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_float64(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[Z")? {
            let a = jni::objects::JBooleanArray::from(value);
            let n = env.get_array_length(&a)? as usize;
            let mut v = vec![0u8; n];
            env.get_boolean_array_region(&a, 0, &mut v)?;
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_bool(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[Ljava/math/BigInteger;")? {
            let a = JObjectArray::from(value);
            let n = env.get_array_length(&a)?;
            let mut v = Vec::with_capacity(n as usize);
            for i in 0..n {
                let b = env.get_object_array_element(&a, i)?;
                if b.is_null() {
                    return Err(Fail::Arg(format!("element {i} is null")));
                }
                let s = env
                    .call_method(&b, "toString", "()Ljava/lang/String;", &[])?
                    .l()?;
                let s = JString::from(s);
                let text = string(env, &s)?;
                env.delete_local_ref(s)?;
                env.delete_local_ref(b)?;
                v.push(
                    text.parse::<u64>()
                        .map_err(|_| Fail::Arg(format!("{text} is not a uint64")))?,
                );
            }
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_uint64(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[[B")? {
            let a = JObjectArray::from(value);
            let n = env.get_array_length(&a)?;
            let mut owned = Vec::with_capacity(n as usize);
            for i in 0..n {
                let b = JByteArray::from(env.get_object_array_element(&a, i)?);
                owned.push(bytes(env, &b)?);
                env.delete_local_ref(b)?;
            }
            let ptrs: Vec<*const u8> = owned.iter().map(|b| b.as_ptr()).collect();
            let lens: Vec<u64> = owned.iter().map(|b| b.len() as u64).collect();
            // SAFETY: w live; k NUL-terminated; ptrs/lens describe n readable byte
            // strings that outlive the call.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_bytes(
                    w,
                    k,
                    ptrs.as_ptr(),
                    lens.as_ptr(),
                    ptrs.len() as u64,
                )
            });
        }
        if is(env, "[Ljava/lang/String;")? {
            let a = JObjectArray::from(value);
            let n = env.get_array_length(&a)?;
            let mut owned = Vec::with_capacity(n as usize);
            for i in 0..n {
                let s = JString::from(env.get_object_array_element(&a, i)?);
                owned.push(cstring(env, &s)?);
                env.delete_local_ref(s)?;
            }
            let ptrs: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
            // SAFETY: w live; k NUL-terminated; ptrs holds n NUL-terminated strings
            // that outlive the call.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_string(w, k, ptrs.as_ptr(), ptrs.len() as u64)
            });
        }
        Err(Fail::Arg(
            "unsupported KV value type (String, Long, Integer, BigInteger, Double, Float, \
             Boolean, byte[], long[], BigInteger[], double[], boolean[], String[], byte[][])"
                .into(),
        ))
    })
}

/// `Native.writerFinish(long)`: writes index and trailer, renames into place.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerFinish(mut env: JNIEnv, _c: JClass, w: jlong) {
    run(&mut env, (), |_| {
        // SAFETY: w is a live writer.
        ck(unsafe { hurray_file_writer_finish(writer(w)) })
    })
}

/// `Native.writerDestroy(long)`: an unfinished writer removes its temporary file.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerDestroy(mut env: JNIEnv, _c: JClass, w: jlong) {
    run(&mut env, (), |_| {
        let mut p = writer(w);
        // SAFETY: the Java side destroys each writer exactly once.
        ck(unsafe { hurray_file_writer_destroy(&mut p) })
    })
}

// ---------------------------------------------------------------------------
// Items (plain tensors and composites).
// ---------------------------------------------------------------------------

fn item(i: jlong) -> *mut HurrayItem {
    i as *mut HurrayItem
}

/// `Native.itemFromTensor(long tensor)`: moves an owned tensor into a new plain item.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemFromTensor(
    mut env: JNIEnv,
    _c: JClass,
    t: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut t = t as *mut HurrayTensor;
        let mut out: *mut HurrayItem = ptr::null_mut();
        // SAFETY: t is an owned tensor the Java side hands over (moved on success
        // only); out writable.
        ck(unsafe { hurray_item_from_tensor(&mut t, &mut out) })?;
        Ok(out as jlong)
    })
}

/// `Native.itemCompositeNew(long head)`: moves an owned head tensor into a new
/// composite item with no members yet.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemCompositeNew(
    mut env: JNIEnv,
    _c: JClass,
    head: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut h = head as *mut HurrayTensor;
        let mut out: *mut HurrayItem = ptr::null_mut();
        // SAFETY: h is an owned tensor (moved on success only); out writable.
        ck(unsafe { hurray_item_composite_new(&mut h, &mut out) })?;
        Ok(out as jlong)
    })
}

/// `Native.itemCompositePush(long item, long member)`: moves an owned item in.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemCompositePush(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
    member: jlong,
) {
    run(&mut env, (), |_| {
        let mut m = item(member);
        // SAFETY: it a live composite; m an owned item (moved on success only).
        ck(unsafe { hurray_item_composite_push(item(it), &mut m) })
    })
}

/// `Native.itemIsComposite(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemIsComposite(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
) -> jboolean {
    run(&mut env, 0, |_| {
        let mut v = 0u8;
        // SAFETY: it a live item; v writable.
        ck(unsafe { hurray_item_is_composite(item(it), &mut v) })?;
        Ok(v)
    })
}

/// `Native.itemTensor(long)`: the item's tensor (a composite's head), borrowed.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemTensor(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut t: *const HurrayTensor = ptr::null();
        // SAFETY: it a live item; t writable (borrowed result).
        ck(unsafe { hurray_item_tensor(item(it), &mut t) })?;
        Ok(t as jlong)
    })
}

/// `Native.itemMemberCount(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemMemberCount(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut n = 0u64;
        // SAFETY: it a live item; n writable.
        ck(unsafe { hurray_item_member_count(item(it), &mut n) })?;
        Ok(n as jlong)
    })
}

/// `Native.itemMember(long, long)`: member `i`, borrowed.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemMember(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
    i: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut m: *const HurrayItem = ptr::null();
        // SAFETY: it a live item; m writable (borrowed result).
        ck(unsafe { hurray_item_member(item(it), i as u64, &mut m) })?;
        Ok(m as jlong)
    })
}

/// `Native.itemDestroy(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemDestroy(mut env: JNIEnv, _c: JClass, it: jlong) {
    run(&mut env, (), |_| {
        let mut p = item(it);
        // SAFETY: the Java side destroys each owned item exactly once.
        ck(unsafe { hurray_item_destroy(&mut p) })
    })
}

/// `Native.decoderNext(long)`: the next complete item (owned), or 0.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNext(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut it: *mut HurrayItem = ptr::null_mut();
        // SAFETY: dec is a live decoder; it writable.
        ck(unsafe { hurray_stream_decoder_next(dec as *mut HurrayStreamDecoder, &mut it) })?;
        Ok(it as jlong)
    })
}

/// `Native.encoderBeginItem(long enc, long item)`: the chunk count of the item.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderBeginItem(
    mut env: JNIEnv,
    _c: JClass,
    enc: jlong,
    it: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let (mut count, mut len) = (0u64, 0u64);
        // SAFETY: enc a live encoder, it a live item; outs writable.
        ck(unsafe {
            hurray_stream_encoder_begin_item(
                enc as *mut HurrayStreamEncoder,
                item(it),
                &mut count,
                &mut len,
            )
        })?;
        Ok(count as jlong)
    })
}

/// `Native.fileItem(long, String)`: the named item (owned); composites assembled.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileItem<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
    name: JString<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let name = cstring(env, &name)?;
        let mut it: *mut HurrayItem = ptr::null_mut();
        // SAFETY: r live; name NUL-terminated; it writable.
        ck(unsafe { hurray_file_reader_item(reader(r), name.as_ptr(), &mut it) })?;
        Ok(it as jlong)
    })
}

/// `Native.writerWriteItem(long, String, long item)`: the item stays the caller's.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerWriteItem<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    w: jlong,
    name: JString<'l>,
    it: jlong,
) {
    run(&mut env, (), |env| {
        let name = cstring(env, &name)?;
        // SAFETY: w a live writer; name NUL-terminated; it a live item.
        ck(unsafe { hurray_file_writer_write_item(writer(w), name.as_ptr(), item(it)) })
    })
}
