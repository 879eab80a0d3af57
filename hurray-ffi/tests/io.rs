//! The I/O exports from Rust (the C suite in `tests/c/` covers them from C): the
//! stream decoder never panics whatever the caller passes to `advance`, the encoder
//! points at the caller's buffers and holds them, files round-trip with KV of every
//! type, and an abandoned writer leaves no file.

mod common;

use common::{err, live, ok};
use hurray_ffi::buffer::*;
use hurray_ffi::descriptor::*;
use hurray_ffi::file::*;
use hurray_ffi::item::*;
use hurray_ffi::kv_value::*;
use hurray_ffi::stream::*;
use hurray_ffi::tags::*;
use hurray_ffi::tensor::*;
use hurray_ffi::*;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts releases; the context points at the counter.
unsafe extern "C" fn count_release(ctx: *mut c_void) {
    // SAFETY: every test passes a pointer to a live AtomicUsize.
    unsafe { &*ctx.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
}

/// 64-byte-aligned bytes a test owns.
#[repr(C, align(64))]
struct Aligned([u8; 256]);

/// A uint8 [n] tensor over `mem` (n <= 256) whose buffer release counts in `count`.
fn tensor_over(mem: &Aligned, n: u64, count: &AtomicUsize) -> *mut HurrayTensor {
    let mut d = null_mut();
    // SAFETY: valid pointers throughout; the memory outlives the tensor in every test.
    unsafe {
        ok(hurray_descriptor_dense(HURRAY_TYPE_UINT8, 1, &n, &mut d));
        let mut len = 0;
        ok(hurray_descriptor_encode(d, null_mut(), 0, &mut len));
        let mut bytes = vec![0u8; len as usize];
        ok(hurray_descriptor_encode(
            d,
            bytes.as_mut_ptr(),
            len,
            &mut len,
        ));
        ok(hurray_descriptor_destroy(&mut d));
        let mut b = null_mut();
        ok(hurray_buffer_new(
            mem.0.as_ptr().cast(),
            n,
            64,
            0,
            0,
            0,
            null(),
            Some(count_release),
            (count as *const AtomicUsize).cast_mut().cast(),
            &mut b,
        ));
        let mut l = null_mut();
        ok(hurray_buffer_list_new(&mut l));
        ok(hurray_buffer_list_push(l, &mut b));
        let mut t = null_mut();
        ok(hurray_tensor_new(
            HURRAY_C_ABI_VERSION,
            bytes.as_ptr(),
            len,
            l,
            null_mut(),
            None,
            &mut t,
        ));
        t
    }
}

fn bytes_of(t: *const HurrayTensor) -> Vec<u8> {
    let (mut p, mut n) = (null(), 0u64);
    // SAFETY: t is live; the buffer holds n bytes while it lives.
    unsafe {
        ok(hurray_tensor_buffer_data(t, 0, &mut p, &mut n));
        std::slice::from_raw_parts(p.cast::<u8>(), n as usize).to_vec()
    }
}

fn destroy_tensor(mut t: *mut HurrayTensor) {
    // SAFETY: t is live and owned by the test.
    ok(unsafe { hurray_tensor_destroy(&mut t) });
    assert!(t.is_null());
}

/// Encodes `t` through the stream encoder, returning the stream bytes.
fn encode(t: *const HurrayTensor) -> Vec<u8> {
    let mut enc = null_mut();
    let mut out = Vec::new();
    // SAFETY: valid handles and out-pointers; chunk pointers are read before end.
    unsafe {
        ok(hurray_stream_encoder_new(null(), &mut enc));
        let (mut chunks, mut total) = (0, 0);
        ok(hurray_stream_encoder_begin_tensor(
            enc,
            t,
            &mut chunks,
            &mut total,
        ));
        for i in 0..chunks {
            let (mut p, mut n) = (null(), 0);
            ok(hurray_stream_encoder_chunk(enc, i, &mut p, &mut n));
            out.extend_from_slice(std::slice::from_raw_parts(p, n as usize));
        }
        assert_eq!(out.len() as u64, total);
        ok(hurray_stream_encoder_destroy(&mut enc));
    }
    out
}

#[test]
fn encoder_points_at_the_callers_buffer_and_holds_it() {
    let _l = live();
    let mem = Aligned([7; 256]);
    let count = AtomicUsize::new(0);
    let mut t = tensor_over(&mem, 100, &count);
    let mut enc = null_mut();
    // SAFETY: valid handles and out-pointers.
    unsafe {
        ok(hurray_stream_encoder_new(null(), &mut enc));
        let (mut chunks, mut total) = (0, 0);
        ok(hurray_stream_encoder_begin_tensor(
            enc,
            t,
            &mut chunks,
            &mut total,
        ));
        assert_eq!(chunks, 2);
        let (mut p, mut n) = (null(), 0);
        ok(hurray_stream_encoder_chunk(enc, 1, &mut p, &mut n));
        assert_eq!((p, n), (mem.0.as_ptr(), 100));
        err(
            hurray_stream_encoder_chunk(enc, 2, &mut p, &mut n),
            HURRAY_ERR_OUT_OF_RANGE,
            "chunk 2",
        );
        ok(hurray_tensor_destroy(&mut t));
        assert_eq!(
            count.load(Ordering::SeqCst),
            0,
            "the encoder holds the buffer"
        );
        ok(hurray_stream_encoder_end(enc));
        assert_eq!(count.load(Ordering::SeqCst), 1);
        err(
            hurray_stream_encoder_chunk(enc, 0, &mut p, &mut n),
            HURRAY_ERR_STATE,
            "no current item",
        );
        ok(hurray_stream_encoder_destroy(&mut enc));
    }
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

/// Decodes `s` with demand/advance, `step(i)` bytes per read; between reads it also
/// tries an advance past the demand, which must fail without effect.
fn decode(s: &[u8], step: impl Fn(usize) -> usize) -> (Vec<*mut HurrayTensor>, HurrayStatus) {
    let mut dec = null_mut();
    let mut out = Vec::new();
    // SAFETY: valid handles and out-pointers; writes stay within the demanded slice.
    unsafe {
        ok(hurray_stream_decoder_new(null(), &mut dec));
        let (mut pos, mut i) = (0usize, 0usize);
        let fin = loop {
            let mut t = null_mut();
            ok(hurray_stream_decoder_next_tensor(dec, &mut t));
            if !t.is_null() {
                out.push(t);
            }
            let (mut dst, mut want) = (null_mut(), 0u64);
            ok(hurray_stream_decoder_demand(dec, &mut dst, &mut want));
            if want == 0 {
                break HURRAY_OK;
            }
            assert_eq!(
                hurray_stream_decoder_advance(dec, want + 1 + i as u64),
                HURRAY_ERR_INVALID_ARGUMENT
            );
            let n = step(i).min(want as usize).min(s.len() - pos);
            i += 1;
            if n == 0 {
                break hurray_stream_decoder_finish(dec);
            }
            std::ptr::copy_nonoverlapping(s.as_ptr().add(pos), dst, n);
            pos += n;
            ok(hurray_stream_decoder_advance(dec, n as u64));
            let mut p = 0;
            ok(hurray_stream_decoder_position(dec, &mut p));
            assert_eq!(p, pos as u64);
        };
        let mut t = null_mut();
        while hurray_stream_decoder_next_tensor(dec, &mut t) == HURRAY_OK && !t.is_null() {
            out.push(t);
        }
        ok(hurray_stream_decoder_destroy(&mut dec));
        (out, fin)
    }
}

#[test]
fn decoder_round_trips_with_any_read_size_and_refuses_over_advance() {
    let _l = live();
    let mem = Aligned(std::array::from_fn(|i| i as u8));
    let count = AtomicUsize::new(0);
    let t = tensor_over(&mem, 200, &count);
    let one = encode(t);
    let mut s = one.clone();
    s.extend_from_slice(&one);
    let want = bytes_of(t);
    for step in [1usize, 3, 7, 64, 1000] {
        let (got, fin) = decode(&s, |i| step + i % 5);
        assert_eq!(fin, HURRAY_OK);
        assert_eq!(got.len(), 2);
        for g in got {
            assert_eq!(bytes_of(g), want);
            destroy_tensor(g);
        }
    }
    // Every cut inside a tensor is truncation; a cut on the boundary is clean.
    for cut in 1..s.len() {
        let (got, fin) = decode(&s[..cut], |_| 5);
        let whole = cut / one.len();
        assert_eq!(got.len(), whole, "cut at {cut}");
        if cut == one.len() {
            assert_eq!(fin, HURRAY_OK);
        } else {
            assert_eq!(fin, HURRAY_ERR_TRUNCATED, "cut at {cut}");
        }
        got.into_iter().for_each(destroy_tensor);
    }
    destroy_tensor(t);
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[test]
fn decoder_reports_bad_input_once_through_next() {
    let _l = live();
    let mut dec = null_mut();
    // SAFETY: valid handles and out-pointers.
    unsafe {
        ok(hurray_stream_decoder_new(null(), &mut dec));
        let junk = [0x5Au8; 40];
        let mut consumed = 0;
        ok(hurray_stream_decoder_feed(
            dec,
            junk.as_ptr(),
            junk.len() as u64,
            &mut consumed,
        ));
        let mut item = null_mut();
        err(
            hurray_stream_decoder_next(dec, &mut item),
            HURRAY_ERR_DESCRIPTOR,
            "at byte 0",
        );
        assert!(item.is_null());
        ok(hurray_stream_decoder_next(dec, &mut item));
        assert!(item.is_null());
        assert_eq!(hurray_stream_decoder_advance(dec, 0), HURRAY_OK);
        assert_eq!(
            hurray_stream_decoder_advance(dec, 1),
            HURRAY_ERR_INVALID_ARGUMENT
        );
        err(
            hurray_stream_decoder_finish(dec),
            HURRAY_ERR_DESCRIPTOR,
            "magic",
        );
        // Wrong handle kind.
        let mut enc = null_mut();
        ok(hurray_stream_encoder_new(null(), &mut enc));
        err(
            hurray_stream_decoder_advance(enc.cast(), 0),
            HURRAY_ERR_INVALID_ARGUMENT,
            "not a HurrayStreamDecoder",
        );
        ok(hurray_stream_encoder_destroy(&mut enc));
        ok(hurray_stream_decoder_destroy(&mut dec));
    }
}

fn scratch(name: &str) -> CString {
    let dir = std::env::temp_dir().join(format!("hurray-ffi-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    CString::new(dir.join(name).to_str().unwrap()).unwrap()
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn text(p: *const c_char, len: u64) -> String {
    // SAFETY: the library hands out NUL-terminated strings of len bytes.
    let s = unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string();
    assert_eq!(s.len() as u64, len);
    s
}

#[test]
fn file_round_trip_with_kv_of_every_type() {
    let _l = live();
    let path = scratch("kv.hrry");
    let mem = Aligned([3; 256]);
    let count = AtomicUsize::new(0);
    let t = tensor_over(&mem, 50, &count);
    // SAFETY: valid handles, C strings and arrays throughout.
    unsafe {
        let mut opts = HurrayWriteOptions::default();
        ok(hurray_write_options_default(&mut opts));
        assert_eq!(opts, HurrayWriteOptions::default());
        opts.durable = 0;
        let mut w = null_mut();
        ok(hurray_file_writer_create(path.as_ptr(), &opts, &mut w));
        ok(hurray_file_writer_write_tensor(w, c("t").as_ptr(), t));
        let add = |key: &str, v: HurrayKvValue| {
            hurray_file_writer_add_kv(w, key.as_ptr().cast(), key.len() as u64, &v)
        };
        let kv = |type_tag: u8| HurrayKvValue {
            type_tag,
            ..HurrayKvValue::default()
        };
        let data = |type_tag: u8, element_type: u8, p: *const c_void, len: u64| HurrayKvValue {
            type_tag,
            element_type,
            data: p,
            len,
            ..HurrayKvValue::default()
        };
        let arr = HURRAY_KV_TYPE_ARRAY;
        ok(add(
            "s",
            data(HURRAY_KV_TYPE_STRING, 0, b"v".as_ptr().cast(), 1),
        ));
        ok(add(
            "i",
            HurrayKvValue {
                int64_value: -5,
                ..kv(HURRAY_KV_TYPE_INT64)
            },
        ));
        ok(add(
            "u",
            HurrayKvValue {
                uint64_value: 5,
                ..kv(HURRAY_KV_TYPE_UINT64)
            },
        ));
        ok(add(
            "f",
            HurrayKvValue {
                float64_value: 0.25,
                ..kv(HURRAY_KV_TYPE_FLOAT64)
            },
        ));
        ok(add(
            "b",
            HurrayKvValue {
                bool_value: 0,
                ..kv(HURRAY_KV_TYPE_BOOL)
            },
        ));
        ok(add("y", data(HURRAY_KV_TYPE_BYTES, 0, null(), 0)));
        ok(add(
            "ai",
            data(arr, HURRAY_KV_TYPE_INT64, [1i64, 2].as_ptr().cast(), 2),
        ));
        ok(add(
            "au",
            data(arr, HURRAY_KV_TYPE_UINT64, [9u64].as_ptr().cast(), 1),
        ));
        ok(add(
            "af",
            data(arr, HURRAY_KV_TYPE_FLOAT64, [1.5f64].as_ptr().cast(), 1),
        ));
        ok(add(
            "ab",
            data(arr, HURRAY_KV_TYPE_BOOL, [0u8, 1].as_ptr().cast(), 2),
        ));
        let strs = [
            data(HURRAY_KV_TYPE_STRING, 0, b"x".as_ptr().cast(), 1),
            data(HURRAY_KV_TYPE_STRING, 0, b"yz".as_ptr().cast(), 2),
        ];
        ok(add(
            "as",
            data(arr, HURRAY_KV_TYPE_STRING, strs.as_ptr().cast(), 2),
        ));
        let blob = [1u8, 2, 3];
        let blobs = [data(HURRAY_KV_TYPE_BYTES, 0, blob.as_ptr().cast(), 3)];
        ok(add(
            "ay",
            data(arr, HURRAY_KV_TYPE_BYTES, blobs.as_ptr().cast(), 1),
        ));
        err(
            add(
                "",
                HurrayKvValue {
                    int64_value: 1,
                    ..kv(HURRAY_KV_TYPE_INT64)
                },
            ),
            HURRAY_ERR_FORMAT,
            "empty",
        );
        ok(hurray_file_writer_finish(w));
        ok(hurray_file_writer_destroy(&mut w));

        let mut r = null_mut();
        ok(hurray_file_reader_open(path.as_ptr(), &mut r));
        let mut info = std::mem::zeroed::<HurrayFileInfo>();
        ok(hurray_file_reader_info(r, &mut info));
        assert_eq!((info.tensor_count, info.kv_count), (1, 12));
        assert_eq!(info.crc_status, HURRAY_CRC_VERIFIED);
        let mut back = null_mut();
        ok(hurray_file_reader_tensor(r, c("t").as_ptr(), &mut back));
        let mut d = null_mut();
        ok(hurray_file_reader_descriptor(r, c("t").as_ptr(), &mut d));
        ok(hurray_descriptor_destroy(&mut d));
        let mut item = null_mut();
        ok(hurray_file_reader_item(r, c("t").as_ptr(), &mut item));
        ok(hurray_item_destroy(&mut item));

        let find = |k: &str| {
            let mut i = 0;
            ok(hurray_file_reader_kv_find(r, c(k).as_ptr(), &mut i));
            i
        };
        let value = |i: u64| {
            let mut v = HurrayKvValue::default();
            ok(hurray_file_reader_kv_value(r, i, &mut v));
            v
        };
        let (mut p, mut len) = (null(), 0);
        let v = value(find("s"));
        assert_eq!(text(v.data.cast(), v.len), "v");
        ok(hurray_file_reader_kv_key(r, 0, &mut p, &mut len));
        assert_eq!(text(p, len), "s");
        assert_eq!(value(find("i")).int64_value, -5);
        assert_eq!(value(find("u")).uint64_value, 5);
        assert_eq!(value(find("f")).float64_value, 0.25);
        let v = value(find("b"));
        assert_eq!((v.type_tag, v.bool_value), (HURRAY_KV_TYPE_BOOL, 0));
        let v = value(find("y"));
        assert_eq!(
            (v.type_tag, v.data, v.len),
            (HURRAY_KV_TYPE_BYTES, null(), 0)
        );
        // Numeric and bool arrays: borrowed little-endian elements (unaligned reads).
        let v = value(find("ai"));
        assert_eq!((v.element_type, v.len), (HURRAY_KV_TYPE_INT64, 2));
        let ai: Vec<i64> = (0..2)
            .map(|k| v.data.cast::<i64>().add(k).read_unaligned())
            .collect();
        assert_eq!(ai, [1, 2]);
        let v = value(find("au"));
        assert_eq!(v.data.cast::<u64>().read_unaligned(), 9);
        let v = value(find("af"));
        assert_eq!(v.data.cast::<f64>().read_unaligned(), 1.5);
        let v = value(find("ab"));
        assert_eq!(std::slice::from_raw_parts(v.data.cast::<u8>(), 2), [0, 1]);
        // Windows of numeric and bool arrays.
        let mut w1 = [0i64; 1];
        ok(hurray_file_reader_kv_array_window(
            r,
            find("ai"),
            1,
            1,
            w1.as_mut_ptr().cast(),
            8,
        ));
        assert_eq!(w1, [2]);
        let mut wb = [9u8; 2];
        ok(hurray_file_reader_kv_array_window(
            r,
            find("ab"),
            0,
            2,
            wb.as_mut_ptr().cast(),
            2,
        ));
        assert_eq!(wb, [0, 1]);
        let mut wf = [0f64; 1];
        ok(hurray_file_reader_kv_array_window(
            r,
            find("af"),
            0,
            1,
            wf.as_mut_ptr().cast(),
            8,
        ));
        assert_eq!(wf, [1.5]);
        ok(hurray_file_reader_kv_array_window(
            r,
            find("ai"),
            2,
            0,
            null_mut(),
            0,
        ));
        err(
            hurray_file_reader_kv_array_window(r, find("ai"), 1, 2, w1.as_mut_ptr().cast(), 16),
            HURRAY_ERR_OUT_OF_RANGE,
            "past the array's 2 elements",
        );
        err(
            hurray_file_reader_kv_array_window(r, find("ai"), 0, 2, w1.as_mut_ptr().cast(), 8),
            HURRAY_ERR_BUFFER_TOO_SMALL,
            "needs 16 bytes",
        );
        err(
            hurray_file_reader_kv_array_window(r, find("as"), 0, 1, w1.as_mut_ptr().cast(), 8),
            HURRAY_ERR_NOT_APPLICABLE,
            "string array",
        );
        assert_eq!(w1, [2], "nothing written on an error");
        let mut e = HurrayKvValue::default();
        ok(hurray_file_reader_kv_array_element(
            r,
            find("as"),
            1,
            &mut e,
        ));
        assert_eq!(text(e.data.cast(), e.len), "yz");
        ok(hurray_file_reader_kv_array_element(
            r,
            find("ay"),
            0,
            &mut e,
        ));
        assert_eq!(
            std::slice::from_raw_parts(e.data.cast::<u8>(), e.len as usize),
            &blob
        );
        let v = value(find("as"));
        assert_eq!(
            (v.type_tag, v.element_type, v.len, v.data),
            (HURRAY_KV_TYPE_ARRAY, HURRAY_KV_TYPE_STRING, 2, null())
        );
        err(
            hurray_file_reader_kv_array_element(r, find("s"), 0, &mut e),
            HURRAY_ERR_NOT_APPLICABLE,
            "homogeneous array",
        );
        let mut v = HurrayKvValue::default();
        err(
            hurray_file_reader_kv_value(r, 12, &mut v),
            HURRAY_ERR_OUT_OF_RANGE,
            "12",
        );
        ok(hurray_file_reader_destroy(&mut r));
        // The tensor outlives the reader.
        assert_eq!(bytes_of(back), vec![3; 50]);
        destroy_tensor(back);
    }
    destroy_tensor(t);
    assert_eq!(count.load(Ordering::SeqCst), 1);
    std::fs::remove_file(path.to_str().unwrap()).unwrap();
}

#[test]
fn abandoned_or_failed_writers_leave_no_file() {
    let _l = live();
    let path = scratch("abandoned.hrry");
    let mem = Aligned([1; 256]);
    let count = AtomicUsize::new(0);
    let t = tensor_over(&mem, 10, &count);
    // SAFETY: valid handles and C strings.
    unsafe {
        let mut w = null_mut();
        ok(hurray_file_writer_create(path.as_ptr(), null(), &mut w));
        ok(hurray_file_writer_write_tensor(w, c("a").as_ptr(), t));
        err(
            hurray_file_writer_write_tensor(w, c("a").as_ptr(), t),
            HURRAY_ERR_FORMAT,
            "a",
        );
        ok(hurray_file_writer_destroy(&mut w));
        assert!(!std::path::Path::new(path.to_str().unwrap()).exists());
        let dir = std::path::Path::new(path.to_str().unwrap())
            .parent()
            .unwrap();
        assert!(
            std::fs::read_dir(dir).unwrap().all(|e| !e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("abandoned")),
            "a temporary file was left behind"
        );
        // A count hint that does not match fails at finish, leaving nothing.
        let mut opts = HurrayWriteOptions {
            tensor_count_hint: 2,
            durable: 0,
            ..HurrayWriteOptions::default()
        };
        ok(hurray_file_writer_create(path.as_ptr(), &opts, &mut w));
        ok(hurray_file_writer_write_tensor(w, c("a").as_ptr(), t));
        assert_ne!(hurray_file_writer_finish(w), HURRAY_OK);
        err(hurray_file_writer_finish(w), HURRAY_ERR_STATE, "finished");
        ok(hurray_file_writer_destroy(&mut w));
        assert!(!std::path::Path::new(path.to_str().unwrap()).exists());
        opts.durable = 7;
        err(
            hurray_file_writer_create(path.as_ptr(), &opts, &mut w),
            HURRAY_ERR_INVALID_ARGUMENT,
            "durable is 7",
        );
        let mut r = null_mut();
        err(
            hurray_file_reader_open(path.as_ptr(), &mut r),
            HURRAY_ERR_FILE_NOT_FOUND,
            "abandoned.hrry",
        );
        err(
            hurray_file_reader_open(null(), &mut r),
            HURRAY_ERR_NULL_POINTER,
            "path",
        );
    }
    destroy_tensor(t);
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

/// Names and keys holding NUL bytes (valid in the format) cross the C ABI through
/// the `_n` functions, which take a length: written, listed with their length, and
/// found again; the NUL-terminated functions find only the prefix, which is absent.
#[test]
fn names_with_nul_bytes_round_trip_through_the_length_taking_functions() {
    let _l = live();
    let path = scratch("nul-names.hrry");
    let mem = Aligned([9; 256]);
    let count = AtomicUsize::new(0);
    let t = tensor_over(&mem, 4, &count);
    let name = "w\0b";
    // SAFETY: valid handles; name pointers valid for the lengths given.
    unsafe {
        let mut opts = HurrayWriteOptions::default();
        ok(hurray_write_options_default(&mut opts));
        opts.durable = 0;
        let mut w = null_mut();
        ok(hurray_file_writer_create(path.as_ptr(), &opts, &mut w));
        ok(hurray_file_writer_write_tensor_n(
            w,
            name.as_ptr().cast(),
            3,
            t,
        ));
        let mut it = null_mut();
        let mut t2 = tensor_over(&mem, 2, &count);
        ok(hurray_item_from_tensor(&mut t2, &mut it));
        ok(hurray_file_writer_write_item_n(
            w,
            "i\0j".as_ptr().cast(),
            3,
            it,
        ));
        ok(hurray_item_destroy(&mut it));
        err(
            hurray_file_writer_write_tensor_n(w, b"\xff".as_ptr().cast(), 1, t),
            HURRAY_ERR_INVALID_ARGUMENT,
            "UTF-8",
        );
        let v = HurrayKvValue {
            type_tag: HURRAY_KV_TYPE_INT64,
            int64_value: 7,
            ..HurrayKvValue::default()
        };
        ok(hurray_file_writer_add_kv(w, "k\0v".as_ptr().cast(), 3, &v));
        ok(hurray_file_writer_finish(w));
        ok(hurray_file_writer_destroy(&mut w));

        let mut r = null_mut();
        ok(hurray_file_reader_open(path.as_ptr(), &mut r));
        let (mut p, mut len) = (null(), 0u64);
        ok(hurray_file_reader_tensor_name(r, 0, &mut p, &mut len));
        assert_eq!(
            std::slice::from_raw_parts(p.cast::<u8>(), len as usize),
            b"w\0b"
        );
        let mut got = null_mut();
        ok(hurray_file_reader_tensor_n(
            r,
            name.as_ptr().cast(),
            3,
            &mut got,
        ));
        assert_eq!(bytes_of(got), vec![9; 4]);
        destroy_tensor(got);
        let mut d = null_mut();
        ok(hurray_file_reader_descriptor_n(
            r,
            name.as_ptr().cast(),
            3,
            &mut d,
        ));
        ok(hurray_descriptor_destroy(&mut d));
        let mut item = null_mut();
        ok(hurray_file_reader_item_n(
            r,
            "i\0j".as_ptr().cast(),
            3,
            &mut item,
        ));
        ok(hurray_item_destroy(&mut item));
        err(
            hurray_file_reader_tensor(r, c("w").as_ptr(), &mut got),
            HURRAY_ERR_NOT_FOUND,
            "w",
        );
        let mut idx = 9;
        ok(hurray_file_reader_kv_find_n(
            r,
            "k\0v".as_ptr().cast(),
            3,
            &mut idx,
        ));
        assert_eq!(idx, 0);
        err(
            hurray_file_reader_kv_find_n(r, "k".as_ptr().cast(), 1, &mut idx),
            HURRAY_ERR_NOT_FOUND,
            "k",
        );
        ok(hurray_file_reader_destroy(&mut r));
    }
    destroy_tensor(t);
    assert_eq!(count.load(Ordering::SeqCst), 2);
    std::fs::remove_file(path.to_str().unwrap()).unwrap();
}
