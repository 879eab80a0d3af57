//! The tagged KV value: every type added with `hurray_file_writer_add_kv` and read
//! back with `hurray_file_reader_kv_value` / `hurray_file_reader_kv_array_element`
//! gives the same values as the Rust face, and bad values are refused by rule.

mod common;

use common::*;
use hurray_ffi::file::*;
use hurray_ffi::kv_value::*;
use hurray_ffi::*;
use std::ffi::{c_char, CString};
use std::ptr::{null, null_mut};

fn kv(type_tag: u8) -> HurrayKvValue {
    HurrayKvValue {
        type_tag,
        ..HurrayKvValue::default()
    }
}

fn blob(type_tag: u8, b: &[u8]) -> HurrayKvValue {
    HurrayKvValue {
        data: b.as_ptr().cast(),
        len: b.len() as u64,
        ..kv(type_tag)
    }
}

fn array<T>(element_type: u8, v: &[T]) -> HurrayKvValue {
    HurrayKvValue {
        element_type,
        data: v.as_ptr().cast(),
        len: v.len() as u64,
        ..kv(HURRAY_KV_TYPE_ARRAY)
    }
}

/// Adds `key` = `v`; returns the status.
fn add(w: *mut HurrayFileWriter, key: &str, v: &HurrayKvValue) -> HurrayStatus {
    // SAFETY: live writer; key and value valid for the call.
    unsafe { hurray_file_writer_add_kv(w, key.as_ptr().cast::<c_char>(), key.len() as u64, v) }
}

/// `len` bytes at `p` (NULL only when empty).
fn bytes_at(p: *const std::ffi::c_void, len: u64) -> Vec<u8> {
    if len == 0 {
        return Vec::new();
    }
    // SAFETY: the reader promises `len` readable bytes at `p` while it lives.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len as usize) }.to_vec()
}

#[test]
fn every_type_round_trips_through_the_tagged_value() {
    let _l = live();
    let dir = std::env::temp_dir().join(format!("hurray-ffi-kv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kv.hurray");
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let mut w = null_mut();
    // SAFETY: valid path and out.
    ok(unsafe { hurray_file_writer_create(cpath.as_ptr(), null(), &mut w) });

    ok(add(
        w,
        "s",
        &blob(HURRAY_KV_TYPE_STRING, "héllo".as_bytes()),
    ));
    ok(add(
        w,
        "i",
        &HurrayKvValue {
            int64_value: -7,
            ..kv(HURRAY_KV_TYPE_INT64)
        },
    ));
    ok(add(
        w,
        "u",
        &HurrayKvValue {
            uint64_value: u64::MAX,
            ..kv(HURRAY_KV_TYPE_UINT64)
        },
    ));
    ok(add(
        w,
        "f",
        &HurrayKvValue {
            float64_value: -0.375,
            ..kv(HURRAY_KV_TYPE_FLOAT64)
        },
    ));
    ok(add(
        w,
        "b",
        &HurrayKvValue {
            bool_value: 1,
            ..kv(HURRAY_KV_TYPE_BOOL)
        },
    ));
    ok(add(w, "y", &blob(HURRAY_KV_TYPE_BYTES, &[0, 255, 7])));
    ok(add(w, "e", &blob(HURRAY_KV_TYPE_BYTES, &[])));
    ok(add(
        w,
        "ai",
        &array(HURRAY_KV_TYPE_INT64, &[1i64, -2, i64::MIN]),
    ));
    ok(add(w, "au", &array(HURRAY_KV_TYPE_UINT64, &[9u64])));
    ok(add(
        w,
        "af",
        &array(HURRAY_KV_TYPE_FLOAT64, &[0.5f64, 1e300]),
    ));
    ok(add(w, "ab", &array(HURRAY_KV_TYPE_BOOL, &[1u8, 0, 1])));
    let strs = [
        blob(HURRAY_KV_TYPE_STRING, b"x"),
        blob(HURRAY_KV_TYPE_STRING, b""),
        blob(HURRAY_KV_TYPE_STRING, "ünï".as_bytes()),
    ];
    ok(add(w, "as", &array(HURRAY_KV_TYPE_STRING, &strs)));
    let blobs = [
        blob(HURRAY_KV_TYPE_BYTES, &[1, 2]),
        blob(HURRAY_KV_TYPE_BYTES, &[]),
    ];
    ok(add(w, "ay", &array(HURRAY_KV_TYPE_BYTES, &blobs)));

    // Refusals, each by its rule; nothing is added.
    err(
        add(w, "x", &kv(0x09)),
        HURRAY_ERR_INVALID_ARGUMENT,
        "type_tag 0x09",
    );
    err(
        add(
            w,
            "x",
            &HurrayKvValue {
                bool_value: 2,
                ..kv(HURRAY_KV_TYPE_BOOL)
            },
        ),
        HURRAY_ERR_INVALID_ARGUMENT,
        "not 0 or 1",
    );
    err(
        add(w, "x", &blob(HURRAY_KV_TYPE_STRING, &[0xff])),
        HURRAY_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    err(
        add(
            w,
            "x",
            &HurrayKvValue {
                len: 3,
                ..kv(HURRAY_KV_TYPE_BYTES)
            },
        ),
        HURRAY_ERR_NULL_POINTER,
        "value",
    );
    err(
        add(w, "x", &array(HURRAY_KV_TYPE_ARRAY, &[0u8])),
        HURRAY_ERR_INVALID_ARGUMENT,
        "element_type 0x07",
    );
    let mixed = [
        blob(HURRAY_KV_TYPE_STRING, b"a"),
        blob(HURRAY_KV_TYPE_BYTES, b"b"),
    ];
    err(
        add(w, "x", &array(HURRAY_KV_TYPE_STRING, &mixed)),
        HURRAY_ERR_INVALID_ARGUMENT,
        "element 1",
    );
    err(
        add(w, "s", &kv(HURRAY_KV_TYPE_INT64)),
        HURRAY_ERR_FORMAT,
        "",
    );
    err(add(w, "", &kv(HURRAY_KV_TYPE_INT64)), HURRAY_ERR_FORMAT, "");
    // SAFETY: NULL value is checked.
    err(
        unsafe { hurray_file_writer_add_kv(w, b"k".as_ptr().cast(), 1, null()) },
        HURRAY_ERR_NULL_POINTER,
        "value",
    );
    // SAFETY: NULL key is checked.
    err(
        unsafe { hurray_file_writer_add_kv(w, null(), 0, &kv(HURRAY_KV_TYPE_INT64)) },
        HURRAY_ERR_NULL_POINTER,
        "key",
    );
    // SAFETY: live writer.
    ok(unsafe { hurray_file_writer_finish(w) });
    // SAFETY: live writer, destroyed once.
    ok(unsafe { hurray_file_writer_destroy(&mut w) });

    let mut r = null_mut();
    // SAFETY: valid path and out.
    ok(unsafe { hurray_file_reader_open(cpath.as_ptr(), &mut r) });
    // SAFETY: r is live until destroyed below.
    let face = unsafe { raw::borrow(r) }.unwrap();
    assert_eq!(face.kv_count(), 13);
    let get = |key: &str| {
        let i = face.kv_find(key).unwrap();
        let mut v = HurrayKvValue::default();
        // SAFETY: live reader, writable out.
        ok(unsafe { hurray_file_reader_kv_value(r, i, &mut v) });
        (i, v)
    };
    let (_, s) = get("s");
    assert_eq!((s.type_tag, s.len), (HURRAY_KV_TYPE_STRING, 6));
    assert_eq!(bytes_at(s.data, 7), b"h\xc3\xa9llo\0", "NUL-terminated");
    assert_eq!(get("i").1.int64_value, -7);
    assert_eq!(get("u").1.uint64_value, u64::MAX);
    assert_eq!(get("f").1.float64_value, -0.375);
    let b = get("b").1;
    assert_eq!((b.type_tag, b.bool_value), (HURRAY_KV_TYPE_BOOL, 1));
    let y = get("y").1;
    assert_eq!(bytes_at(y.data, y.len), [0, 255, 7]);
    let e = get("e").1;
    assert_eq!(
        (e.type_tag, e.data, e.len),
        (HURRAY_KV_TYPE_BYTES, null(), 0)
    );
    let ai = get("ai").1;
    assert_eq!(
        (ai.type_tag, ai.element_type, ai.len),
        (HURRAY_KV_TYPE_ARRAY, HURRAY_KV_TYPE_INT64, 3)
    );
    let raw_ai = bytes_at(ai.data, 24);
    let ints: Vec<i64> = raw_ai
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(ints, [1, -2, i64::MIN]);
    let af = get("af").1;
    let fl: Vec<f64> = bytes_at(af.data, 16)
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(fl, [0.5, 1e300]);
    let au = get("au").1;
    assert_eq!(
        u64::from_le_bytes(bytes_at(au.data, 8).try_into().unwrap()),
        9
    );
    let ab = get("ab").1;
    assert_eq!(bytes_at(ab.data, ab.len), [1, 0, 1]);
    // String and byte arrays: count here, elements one by one.
    let (asi, as_) = get("as");
    assert_eq!(
        (as_.element_type, as_.len, as_.data),
        (HURRAY_KV_TYPE_STRING, 3, null())
    );
    let elem = |i: u64, k: u64| {
        let mut v = HurrayKvValue::default();
        // SAFETY: live reader, writable out.
        let s = unsafe { hurray_file_reader_kv_array_element(r, i, k, &mut v) };
        (s, v)
    };
    let texts: Vec<Vec<u8>> = (0..3)
        .map(|k| {
            let (st, v) = elem(asi, k);
            ok(st);
            assert_eq!(v.type_tag, HURRAY_KV_TYPE_STRING);
            bytes_at(v.data, v.len + 1)
        })
        .collect();
    assert_eq!(
        texts,
        [b"x\0".to_vec(), b"\0".to_vec(), "ünï\0".as_bytes().to_vec()]
    );
    let (ayi, _) = get("ay");
    let (st, v) = elem(ayi, 0);
    ok(st);
    assert_eq!(bytes_at(v.data, v.len), [1, 2]);
    let (st, v) = elem(ayi, 1);
    ok(st);
    assert_eq!((v.type_tag, v.len), (HURRAY_KV_TYPE_BYTES, 0));
    // Numeric elements too, and the range and type rules.
    let (st, v) = elem(get("ai").0, 2);
    ok(st);
    assert_eq!(
        (v.type_tag, v.int64_value),
        (HURRAY_KV_TYPE_INT64, i64::MIN)
    );
    err(elem(asi, 3).0, HURRAY_ERR_OUT_OF_RANGE, "element 3");
    err(
        elem(get("i").0, 0).0,
        HURRAY_ERR_NOT_APPLICABLE,
        "not a homogeneous array",
    );
    let mut v = HurrayKvValue::default();
    // SAFETY: live reader; the index is checked.
    err(
        unsafe { hurray_file_reader_kv_value(r, 13, &mut v) },
        HURRAY_ERR_OUT_OF_RANGE,
        "13",
    );
    // SAFETY: NULL out is checked.
    err(
        unsafe { hurray_file_reader_kv_value(r, 0, null_mut()) },
        HURRAY_ERR_NULL_POINTER,
        "out",
    );
    // The Rust face agrees.
    assert_eq!(
        face.kv_value(face.kv_find("u").unwrap()).unwrap(),
        KvValueRef::UInt64(u64::MAX)
    );
    // SAFETY: live reader, destroyed once.
    ok(unsafe { hurray_file_reader_destroy(&mut r) });
    let _ = std::fs::remove_file(path);
}

#[test]
fn whole_reads_are_bounded_and_windows_reach_past_the_bound() {
    let _l = live();
    let dir = std::env::temp_dir().join(format!("hurray-ffi-kv-whole-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.hurray");
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let n = HURRAY_KV_WHOLE_ARRAY_MAX as usize;
    let mut big = vec![0u8; n + 1];
    big[n] = 1;
    let mut w = null_mut();
    // SAFETY: valid path and out.
    ok(unsafe { hurray_file_writer_create(cpath.as_ptr(), null(), &mut w) });
    ok(add(w, "at_bound", &array(HURRAY_KV_TYPE_BOOL, &big[..n])));
    ok(add(w, "past_bound", &array(HURRAY_KV_TYPE_BOOL, &big)));
    ok(add(w, "scalar", &blob(HURRAY_KV_TYPE_STRING, b"s")));
    // SAFETY: live writer, finished and destroyed once.
    ok(unsafe { hurray_file_writer_finish(w) });
    // SAFETY: as above.
    ok(unsafe { hurray_file_writer_destroy(&mut w) });

    let mut r = null_mut();
    // SAFETY: valid path and out.
    ok(unsafe { hurray_file_reader_open(cpath.as_ptr(), &mut r) });
    // SAFETY: r is live until destroyed below.
    let face = unsafe { raw::borrow(r) }.unwrap();
    let at = |k: &str| face.kv_find(k).unwrap();
    // SAFETY: live reader.
    ok(unsafe { hurray_file_reader_kv_check_whole(r, at("at_bound")) });
    // SAFETY: live reader.
    ok(unsafe { hurray_file_reader_kv_check_whole(r, at("scalar")) });
    err(
        // SAFETY: live reader.
        unsafe { hurray_file_reader_kv_check_whole(r, at("past_bound")) },
        HURRAY_ERR_LIMIT,
        "\"past_bound\" is an array of 1048577 elements, more than the 1048576",
    );
    err(
        // SAFETY: live reader.
        unsafe { hurray_file_reader_kv_check_whole(r, 3) },
        HURRAY_ERR_OUT_OF_RANGE,
        "KV entry",
    );
    // The element past the bound is still readable through a window.
    let mut out = [9u8; 2];
    // SAFETY: live reader; out valid for 2 bytes.
    ok(unsafe {
        hurray_file_reader_kv_array_window(
            r,
            at("past_bound"),
            n as u64 - 1,
            2,
            out.as_mut_ptr().cast(),
            2,
        )
    });
    assert_eq!(out, [0, 1]);
    // SAFETY: live reader, destroyed once.
    ok(unsafe { hurray_file_reader_destroy(&mut r) });
    let _ = std::fs::remove_dir_all(dir);
}
