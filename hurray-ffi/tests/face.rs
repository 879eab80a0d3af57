//! The safe Rust face (`hurray_ffi::raw` and the handle methods): what binding
//! crates use instead of the `hurray_*` exports.

mod common;

use common::*;
use hurray_core::{DeviceTag, ElementType, MemoryClass, SyncMode, TensorDescriptor};
use hurray_ffi::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A dense float32 tensor of `[4]` over 64-byte-aligned library memory.
fn f32_tensor(values: [f32; 4]) -> HurrayTensor {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d = TensorDescriptor::dense(ElementType::Float32, &[4]).unwrap();
    let d = HurrayDescriptor::new(Arc::new(d)).unwrap();
    let b = HurrayBuffer::host(hurray_io::Buffer::copy_from(&bytes), Placement::cpu(64));
    HurrayTensor::new(d, vec![Box::new(b)], None).unwrap()
}

#[test]
fn into_raw_borrow_take_round_trip() {
    let _l = live();
    let p = raw::into_raw(f32_tensor([1.0, 2.0, 3.0, 4.5]));
    // SAFETY: p is live until the take below.
    let t = unsafe { raw::borrow(p) }.unwrap();
    assert_eq!(t.model().shape, vec![4]);
    let b = t.buffer_list().buffers().next().unwrap();
    assert_eq!(&b.bytes().unwrap()[12..16], &4.5f32.to_le_bytes());
    // The C face sees the same buffer through the same pointer.
    let mut data = std::ptr::null();
    let mut size = 0u64;
    // SAFETY: live tensor, writable outs.
    ok(unsafe { hurray_ffi::tensor::hurray_tensor_buffer_data(p, 0, &mut data, &mut size) });
    assert_eq!((data, size), (b.data, 16));
    // SAFETY: p is live and given up here.
    let owned = unsafe { raw::take(p) }.unwrap().unwrap();
    assert_eq!(owned.model().shape, vec![4]);
    drop(owned);
    // SAFETY: NULL is accepted.
    assert!(unsafe { raw::take::<HurrayTensor>(std::ptr::null_mut()) }
        .unwrap()
        .is_none());
}

#[test]
fn raw_checks_null_kind_parent_and_stale() {
    let _l = live();
    // SAFETY: NULL is checked.
    let e = err(unsafe { raw::borrow::<HurrayTensor>(std::ptr::null()) });
    assert_eq!(e.status, HURRAY_ERR_NULL_POINTER);
    let p = raw::into_raw(f32_tensor([0.0; 4]));
    // Another kind behind the pointer.
    // SAFETY: p is a live handle of this build; the kind check reads only the header.
    let e = err(unsafe { raw::borrow::<HurrayItem>(p.cast()) });
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    assert!(e.message.contains("HurrayItem"), "{}", e.message);
    // A part of a parent cannot be taken on its own.
    // SAFETY: p is live; its descriptor lives as long as it.
    let d = unsafe { (*p).descriptor } as *mut HurrayDescriptor;
    // SAFETY: d is live (owned by the tensor).
    let e = err(unsafe { raw::take(d) });
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    // SAFETY: p is live and given up.
    drop(unsafe { raw::take(p) }.unwrap());
    #[cfg(debug_assertions)]
    {
        // A stale pointer is caught in debug builds, not freed twice.
        // SAFETY: debug builds recognise destroyed handles by address alone.
        let e = err(unsafe { raw::take(p) });
        assert_eq!(e.status, HURRAY_ERR_DOUBLE_DESTROY);
    }
}

/// The error of a call that must fail.
fn err<T>(r: FfiResult<T>) -> FfiError {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

static RELEASED: AtomicUsize = AtomicUsize::new(0);

#[repr(C, align(64))]
struct Aligned([u8; 128]);

#[test]
fn foreign_buffer_releases_once_and_refuses_bad_placement() {
    let _l = live();
    let mem: &'static mut Aligned = Box::leak(Box::new(Aligned([7; 128])));
    mem.0[5] = 42;
    let ptr = mem.0.as_ptr();
    RELEASED.store(0, Ordering::SeqCst);
    let guard = || {
        ReleaseGuard::from_fn(|| {
            RELEASED.fetch_add(1, Ordering::SeqCst);
        })
    };
    // SAFETY: `mem` is leaked: valid for the whole test.
    let b = unsafe { HurrayBuffer::foreign(ptr.cast(), 128, Placement::cpu(64), guard()) }.unwrap();
    assert_eq!(b.bytes().unwrap().len(), 128);
    assert_eq!(b.bytes().unwrap()[5], 42);
    assert_eq!(b.bytes().unwrap().as_ptr(), ptr);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 0);
    let p = raw::into_raw(b);
    // SAFETY: p is live and given up.
    drop(unsafe { raw::take(p) }.unwrap());
    assert_eq!(RELEASED.load(Ordering::SeqCst), 1);

    // Misaligned: refused, and the memory is handed straight back.
    // SAFETY: as above.
    let e =
        err(unsafe { HurrayBuffer::foreign(ptr.add(1).cast(), 64, Placement::cpu(64), guard()) });
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 2);
    // A sync mode that needs an event payload is refused.
    let mut pl = Placement::cpu(64);
    pl.device = DeviceTag::Cuda;
    pl.memory_class = MemoryClass::Standard;
    pl.sync_mode = SyncMode::Event;
    // SAFETY: as above.
    let e = err(unsafe { HurrayBuffer::foreign(ptr.cast(), 64, pl, guard()) });
    assert_eq!(e.status, HURRAY_ERR_SYNC_MODE_MISMATCH);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 3);
    // Device memory is carried, never readable as host bytes.
    pl.sync_mode = SyncMode::ProducerSynced;
    // SAFETY: as above (never dereferenced for a device buffer).
    let b = unsafe { HurrayBuffer::foreign(ptr.cast(), 64, pl, guard()) }.unwrap();
    assert!(b.bytes().is_none());
    drop(b);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 4);
}

/// A fresh path in a per-process temporary folder.
fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hurray-ffi-face-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A file with tensors `w` ([4] float32) and `b` ([4] float32) and one KV entry of
/// each type, written by hurray-io.
fn sample_file(name: &str) -> std::path::PathBuf {
    use hurray_io::file::WriteOptions;
    let path = temp_path(name);
    let mut w = hurray_io::FileWriter::create(&path, WriteOptions::default()).unwrap();
    let t = f32_tensor([1.0, 2.0, 3.0, 4.5]).to_io().unwrap();
    w.write_tensor("w", &t).unwrap();
    let t = f32_tensor([-1.0, 0.0, 0.5, 8.0]).to_io().unwrap();
    w.write_tensor("b", &t).unwrap();
    w.add_kv("s", KvValue::String("héllo".into())).unwrap();
    w.add_kv("i", KvValue::Int64(-5)).unwrap();
    w.add_kv("ai", KvValue::Array(KvArray::Int64(vec![10, -20, 30])))
        .unwrap();
    w.add_kv("ab", KvValue::Array(KvArray::Bool(vec![true, false, true])))
        .unwrap();
    w.add_kv(
        "as",
        KvValue::Array(KvArray::String(vec!["x".into(), "yz".into()])),
    )
    .unwrap();
    w.finish().unwrap();
    path
}

#[test]
fn file_reader_face_reads_names_tensors_and_kv() {
    let _l = live();
    let path = sample_file("reader.hurray");
    let r = HurrayFileReader::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(r.tensor_count(), 2);
    assert_eq!(r.info().tensor_count, 2);
    assert_eq!(r.info().kv_count, 5);
    assert_eq!(r.tensor_name(0).unwrap(), "w");
    assert_eq!(r.tensor_name(1).unwrap(), "b");
    assert_eq!(err(r.tensor_name(2)).status, HURRAY_ERR_OUT_OF_RANGE);
    assert_eq!(r.descriptor("b").unwrap().model().shape, vec![4]);
    assert_eq!(err(r.descriptor("nope")).status, HURRAY_ERR_NOT_FOUND);
    let t = r.tensor("b").unwrap();
    let bytes = t.buffer_list().buffers().next().unwrap().bytes().unwrap();
    assert_eq!(&bytes[12..16], &8.0f32.to_le_bytes());
    assert_eq!(err(r.tensor("nope")).status, HURRAY_ERR_NOT_FOUND);
    let item = r.item("w").unwrap();
    assert!(!item.is_composite());
    // KV: keys, lookup, values borrowed from the mapping.
    assert_eq!(r.kv_count(), 5);
    assert_eq!(r.kv_key(0).unwrap(), "s");
    assert_eq!(err(r.kv_key(5)).status, HURRAY_ERR_OUT_OF_RANGE);
    let i = r.kv_find("i").unwrap();
    assert_eq!(r.kv_key(i).unwrap(), "i");
    assert!(r.kv_find("missing").is_none());
    assert_eq!(r.kv_value(i).unwrap(), KvValueRef::Int64(-5));
    assert_eq!(
        r.kv_value(r.kv_find("s").unwrap()).unwrap(),
        KvValueRef::String("héllo")
    );
    // Windows of numeric and bool arrays, in C form.
    let ai = r.kv_find("ai").unwrap();
    let mut out = [0u8; 24];
    assert_eq!(r.kv_array_window(ai, 1, 2, &mut out).unwrap(), 16);
    assert_eq!(i64::from_ne_bytes(out[0..8].try_into().unwrap()), -20);
    assert_eq!(i64::from_ne_bytes(out[8..16].try_into().unwrap()), 30);
    assert_eq!(out[16..], [0; 8], "bytes past the window are untouched");
    let e = err(r.kv_array_window(ai, 2, 2, &mut out));
    assert_eq!(e.status, HURRAY_ERR_OUT_OF_RANGE);
    let e = err(r.kv_array_window(ai, 0, 3, &mut out[..16]));
    assert_eq!(e.status, HURRAY_ERR_BUFFER_TOO_SMALL);
    let mut ab = [9u8; 3];
    let abi = r.kv_find("ab").unwrap();
    assert_eq!(r.kv_array_window(abi, 0, 3, &mut ab).unwrap(), 3);
    assert_eq!(ab, [1, 0, 1]);
    let e = err(r.kv_array_window(r.kv_find("as").unwrap(), 0, 1, &mut out));
    assert_eq!(e.status, HURRAY_ERR_NOT_APPLICABLE);
    // Tensors outlive the reader.
    drop(r);
    assert_eq!(t.model().shape, vec![4]);
    drop((t, item));
    let _ = std::fs::remove_file(path);
}

#[test]
fn file_reader_face_open_errors_name_the_path() {
    let _l = live();
    let missing = temp_path("missing.hurray");
    let e = err(HurrayFileReader::open(&missing, &ReadOptions::default()));
    assert_eq!(e.status, HURRAY_ERR_FILE_NOT_FOUND);
    assert!(e.message.contains("missing.hurray"), "{}", e.message);
    let e = err(HurrayFileReader::open(
        std::path::Path::new(""),
        &ReadOptions::default(),
    ));
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
}

#[test]
fn file_writer_face_names_the_destination_when_finishing_fails() {
    let _l = live();
    // A directory where the file should appear: the temporary file beside it is
    // written, and the rename onto the directory fails at `finish`.
    let dir = temp_path("writer-onto-a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let opts = HurrayWriteOptions {
        durable: 0,
        ..HurrayWriteOptions::default()
    };
    let mut w = HurrayFileWriter::create(&dir, &opts).unwrap();
    w.write_tensor("a", &f32_tensor([1.0, 2.0, 3.0, 4.0]))
        .unwrap();
    let e = err(w.finish());
    assert_eq!(e.category(), ErrorCategory::Io, "{}", e.message);
    assert_eq!(e.os_error(), Some(21), "EISDIR: {}", e.message);
    assert!(
        e.message.contains("writer-onto-a-directory"),
        "the message names the destination: {}",
        e.message
    );
    // A format error is about the content, not the file: no path in front.
    let mut w = HurrayFileWriter::create(&temp_path("writer-dup.hurray"), &opts).unwrap();
    w.write_tensor("a", &f32_tensor([1.0; 4])).unwrap();
    let e = err(w.write_tensor("a", &f32_tensor([1.0; 4])));
    assert_eq!(e.status, HURRAY_ERR_FORMAT);
    assert!(!e.message.contains("writer-dup.hurray"), "{}", e.message);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn file_writer_face_round_trips_through_the_reader_face() {
    let _l = live();
    let path = temp_path("writer.hurray");
    let opts = HurrayWriteOptions {
        durable: 0,
        ..HurrayWriteOptions::default()
    };
    let mut w = HurrayFileWriter::create(&path, &opts).unwrap();
    w.write_tensor("a", &f32_tensor([1.0, 2.0, 3.0, 4.0]))
        .unwrap();
    let item = HurrayItem::from_tensor(f32_tensor([5.0, 6.0, 7.0, 8.5])).unwrap();
    w.write_item("b", &item).unwrap();
    let e = err(w.write_tensor("a", &f32_tensor([0.0; 4])));
    assert_eq!(e.status, HURRAY_ERR_FORMAT, "duplicate name: {}", e.message);
    w.add_kv("k", KvValue::UInt64(7)).unwrap();
    w.add_kv("f", KvValue::Array(KvArray::Float64(vec![0.5, -1.25])))
        .unwrap();
    let e = err(w.add_kv("k", KvValue::Bool(true)));
    assert_eq!(e.status, HURRAY_ERR_FORMAT, "duplicate key: {}", e.message);
    assert!(!path.exists(), "nothing appears before finish");
    w.finish().unwrap();
    assert_eq!(err(w.finish()).status, HURRAY_ERR_STATE);
    let e = err(w.write_tensor("c", &f32_tensor([0.0; 4])));
    assert_eq!(e.status, HURRAY_ERR_STATE);
    drop((w, item));

    let r = HurrayFileReader::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(r.tensor_count(), 2);
    assert_eq!(
        r.top_level().collect::<Vec<_>>(),
        vec![("a", false), ("b", false)]
    );
    let b = r.tensor("b").unwrap();
    let bytes = b.buffer_list().buffers().next().unwrap().bytes().unwrap();
    assert_eq!(&bytes[12..16], &8.5f32.to_le_bytes());
    assert_eq!(
        r.kv_value(r.kv_find("k").unwrap()).unwrap(),
        KvValueRef::UInt64(7)
    );
    let f = r.kv_value(r.kv_find("f").unwrap()).unwrap();
    let f: Vec<_> = f.as_array().unwrap().iter().collect();
    assert_eq!(
        f,
        vec![KvValueRef::Float64(0.5), KvValueRef::Float64(-1.25)]
    );
    drop((r, b));
    let _ = std::fs::remove_file(&path);

    // An unfinished writer leaves nothing at the path.
    let path = temp_path("abandoned.hurray");
    let mut w = HurrayFileWriter::create(&path, &opts).unwrap();
    w.write_tensor("a", &f32_tensor([1.0; 4])).unwrap();
    drop(w);
    assert!(!path.exists());
    // Bad options and paths.
    let bad = HurrayWriteOptions {
        durable: 2,
        ..HurrayWriteOptions::default()
    };
    assert_eq!(
        err(HurrayFileWriter::create(&path, &bad)).status,
        HURRAY_ERR_INVALID_ARGUMENT
    );
    let e = err(HurrayFileWriter::create(
        &temp_path("no-such-dir").join("x.hurray"),
        &opts,
    ));
    assert_eq!(e.status, HURRAY_ERR_FILE_NOT_FOUND);
    assert!(e.message.contains("no-such-dir"), "{}", e.message);
}

#[test]
fn stream_encoder_and_decoder_faces_round_trip() {
    let _l = live();
    let limits = HurrayStreamLimits::default();
    let mut enc = HurrayStreamEncoder::new(&limits).unwrap();
    assert_eq!(err(enc.chunk(0)).status, HURRAY_ERR_STATE);
    let mut stream = Vec::new();
    let t = f32_tensor([1.0, 2.0, 3.0, 4.25]);
    let (n, len) = enc.begin_tensor(&t).unwrap();
    assert_eq!(n, 2, "descriptor chunk + one buffer chunk");
    let buf_ptr = t.buffer_list().buffers().next().unwrap().data;
    drop(t); // the encoder keeps the buffer alive
    for i in 0..n {
        stream.extend_from_slice(enc.chunk(i).unwrap());
    }
    assert_eq!(enc.chunk(1).unwrap().as_ptr().cast(), buf_ptr, "no copy");
    assert_eq!(err(enc.chunk(n)).status, HURRAY_ERR_OUT_OF_RANGE);
    assert_eq!(stream.len() as u64, len);
    let item = HurrayItem::from_tensor(f32_tensor([9.0, 8.0, 7.0, 6.0])).unwrap();
    let (n2, len2) = enc.begin_item(&item).unwrap();
    for i in 0..n2 {
        stream.extend_from_slice(enc.chunk(i).unwrap());
    }
    enc.end();
    assert_eq!(err(enc.chunk(0)).status, HURRAY_ERR_STATE);
    assert_eq!(enc.position(), len + len2);
    drop((enc, item));

    // Decode through demand/advance, 7 bytes at a time.
    let mut dec = HurrayStreamDecoder::new(&limits).unwrap();
    let mut at = 0;
    while at < stream.len() {
        let slot = dec.demand();
        let k = slot.len().min(7).min(stream.len() - at);
        slot[..k].copy_from_slice(&stream[at..at + k]);
        let over = slot.len() as u64 + 1;
        assert_eq!(err(dec.advance(over)).status, HURRAY_ERR_INVALID_ARGUMENT);
        dec.advance(k as u64).unwrap();
        at += k;
    }
    assert_eq!(dec.position(), stream.len() as u64);
    let t = dec.next_tensor().unwrap().unwrap();
    let b = t.buffer_list().buffers().next().unwrap().bytes().unwrap();
    assert_eq!(&b[12..16], &4.25f32.to_le_bytes());
    let i = dec.next().unwrap().unwrap();
    let b = i.tensor_handle().buffer_list().buffers().next().unwrap();
    assert_eq!(&b.bytes().unwrap()[0..4], &9.0f32.to_le_bytes());
    assert!(dec.next().unwrap().is_none());
    dec.finish().unwrap();
    drop((dec, t, i));

    // Fed in one go but cut short: truncated, naming the offset.
    let mut dec = HurrayStreamDecoder::new(&limits).unwrap();
    let cut = stream.len() as u64 - 3;
    assert_eq!(dec.feed(&stream[..cut as usize]), cut);
    assert!(dec.next_tensor().unwrap().is_some());
    let e = err(dec.finish());
    assert_eq!(e.status, HURRAY_ERR_TRUNCATED, "{}", e.message);
}

#[test]
fn abi_version_and_adopt() {
    let _l = live();
    let p = raw::into_raw(f32_tensor([1.0, 2.0, 3.0, 4.0]));
    // SAFETY: live handle.
    assert_eq!(
        unsafe { raw::abi_version(p) }.unwrap(),
        HURRAY_C_ABI_VERSION
    );
    // A fake handle of another ABI version: read, never trusted further.
    // (8-byte aligned, like any handle; the low u32 of 9 is 9 on little-endian hosts
    // and the high one on big-endian ones, so both halves say 9.)
    let fake = [9u64 | (9u64 << 32); 8];
    // SAFETY: 64 readable bytes starting with a u32.
    assert_eq!(unsafe { raw::abi_version(fake.as_ptr()) }.unwrap(), 9);
    // SAFETY: as above; the version check stops before anything else is read.
    let e = err(unsafe { raw::adopt(fake.as_ptr() as *mut HurrayTensor) });
    assert_eq!(e.status, HURRAY_ERR_ABI_VERSION);
    assert!(
        e.message.contains('9') && e.message.contains("10"),
        "{}",
        e.message
    );
    // SAFETY: NULL is checked.
    let e = err(unsafe { raw::abi_version::<HurrayTensor>(std::ptr::null()) });
    assert_eq!(e.status, HURRAY_ERR_NULL_POINTER);
    // This copy's tensor: adopted is taken.
    // SAFETY: p is live and given up.
    let t = unsafe { raw::adopt(p) }.unwrap();
    let b = t.buffer_list().buffers().next().unwrap().bytes().unwrap();
    assert_eq!(&b[4..8], &2.0f32.to_le_bytes());
    // A tensor that is part of an item is refused and left alone.
    let item = raw::into_raw(HurrayItem::from_tensor(t).unwrap());
    // SAFETY: item is live; its tensor lives as long as it.
    let inner = unsafe { (*item).tensor } as *mut HurrayTensor;
    // SAFETY: as above.
    let e = err(unsafe { raw::adopt(inner) });
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    // SAFETY: item is live and given up.
    drop(unsafe { raw::take(item) }.unwrap());
}

#[test]
fn decoder_takes_buffers_from_a_pool() {
    let _l = live();
    let limits = HurrayStreamLimits::default();
    let mut enc = HurrayStreamEncoder::new(&limits).unwrap();
    let (n, _) = enc.begin_tensor(&f32_tensor([1.0, 2.0, 3.0, 4.0])).unwrap();
    let stream: Vec<u8> = (0..n)
        .flat_map(|i| enc.chunk(i).unwrap().to_vec())
        .collect();
    drop(enc);
    let pool = HurrayBufferPool::with_capacity(1 << 20);
    let mut dec = HurrayStreamDecoder::new(&limits).unwrap();
    dec.set_pool(Some(&pool));
    for round in 0..2u64 {
        assert_eq!(dec.feed(&stream), stream.len() as u64);
        let t = dec.next_tensor().unwrap().unwrap();
        drop(t); // its allocation goes back to the pool
        let s = pool.stats();
        assert_eq!((s.allocated, s.reused), (1, round), "round {round}");
        assert_eq!(s.idle_buffers, 1);
    }
    pool.clear();
    assert_eq!(pool.stats().idle_bytes, 0);
    dec.set_pool(None);
}

static WRAP_RELEASED: AtomicUsize = AtomicUsize::new(0);

#[test]
fn wrap_or_copy_is_zero_copy_when_aligned_and_copies_once_otherwise() {
    let _l = live();
    let mem: &'static mut Aligned = Box::leak(Box::new(Aligned([0; 128])));
    for (i, b) in mem.0.iter_mut().enumerate() {
        *b = i as u8;
    }
    let ptr = mem.0.as_ptr();
    let guard = || {
        ReleaseGuard::from_fn(|| {
            WRAP_RELEASED.fetch_add(1, Ordering::SeqCst);
        })
    };
    // Aligned: the caller's memory itself, released only when the buffer goes.
    // SAFETY: `mem` is leaked: valid and unmodified for the whole test.
    let (b, how) = unsafe {
        HurrayBuffer::wrap_or_copy(
            ptr.cast(),
            64,
            Placement::cpu(64),
            guard(),
            Default::default(),
        )
    }
    .unwrap();
    assert_eq!(how, Wrapped::ZeroCopy);
    assert_eq!(b.bytes().unwrap().as_ptr(), ptr);
    assert_eq!(WRAP_RELEASED.load(Ordering::SeqCst), 0);
    drop(b);
    assert_eq!(WRAP_RELEASED.load(Ordering::SeqCst), 1);

    // Odd address: one copy into 64-aligned memory holding the same bytes; the
    // caller's memory is released at once.
    // SAFETY: as above; 100 bytes from offset 3 are inside the 128.
    let (b, how) = unsafe {
        HurrayBuffer::wrap_or_copy(
            ptr.add(3).cast(),
            100,
            Placement::cpu(64),
            guard(),
            AlignmentPolicy::CopyWhenUnaligned,
        )
    }
    .unwrap();
    assert_eq!(how, Wrapped::Copied);
    assert_eq!(WRAP_RELEASED.load(Ordering::SeqCst), 2);
    let bytes = b.bytes().unwrap();
    assert_ne!(bytes.as_ptr(), ptr.wrapping_add(3));
    assert_eq!(bytes.as_ptr() as usize % 64, 0);
    assert_eq!(bytes, &mem.0[3..103]);
    assert_eq!(b.alignment, 64);
    drop(b);
    assert_eq!(WRAP_RELEASED.load(Ordering::SeqCst), 2);

    // Strict: refused with a message that says how to get aligned memory; released.
    // SAFETY: as above.
    let e = err(unsafe {
        HurrayBuffer::wrap_or_copy(
            ptr.add(3).cast(),
            100,
            Placement::cpu(64),
            guard(),
            AlignmentPolicy::Strict,
        )
    });
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    assert!(e.message.contains("strict"), "{}", e.message);
    assert!(e.message.contains("aligned allocator"), "{}", e.message);
    assert_eq!(WRAP_RELEASED.load(Ordering::SeqCst), 3);

    // Unaligned device memory is never copied (the host must not read it).
    let mut pl = Placement::cpu(64);
    pl.device = DeviceTag::Cuda;
    // SAFETY: as above (never dereferenced: refused before any read).
    let e = err(unsafe {
        HurrayBuffer::wrap_or_copy(ptr.add(3).cast(), 100, pl, guard(), Default::default())
    });
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    assert!(
        e.message.contains("device memory cannot be copied"),
        "{}",
        e.message
    );
    assert_eq!(WRAP_RELEASED.load(Ordering::SeqCst), 4);
}

#[test]
fn align_host_keeps_aligned_bytes_and_copies_or_refuses_the_rest() {
    let base = hurray_io::Buffer::copy_from(&(0u8..=255).collect::<Vec<u8>>());
    let at = |start: usize, len: usize| {
        hurray_io::Buffer::slice_of(base.owner().clone(), start..start + len).unwrap()
    };
    let base_addr = base.as_slice().as_ptr() as usize;
    assert_eq!(base_addr % 64, 0);
    assert_eq!(address_alignment(base_addr + 16), 16);
    assert_eq!(address_alignment(base_addr + 20), 4);
    assert_eq!(address_alignment(0), 4096);

    // Aligned: the same bytes, same address.
    let (b, how) = align_host(at(64, 32), 64, AlignmentPolicy::CopyWhenUnaligned).unwrap();
    assert_eq!(how, Wrapped::ZeroCopy);
    assert_eq!(b.as_slice().as_ptr() as usize, base_addr + 64);
    // Empty: any address meets any alignment.
    let (_, how) = align_host(at(3, 0), 64, AlignmentPolicy::Strict).unwrap();
    assert_eq!(how, Wrapped::ZeroCopy);

    // 16-aligned (NumPy's large arrays): one 64-aligned copy of the same bytes.
    let (b, how) = align_host(at(16, 100), 64, AlignmentPolicy::CopyWhenUnaligned).unwrap();
    assert_eq!(how, Wrapped::Copied);
    assert_eq!(b.as_slice().as_ptr() as usize % 64, 0);
    assert_eq!(b.as_slice(), &(16u8..116).collect::<Vec<u8>>()[..]);

    // Strict: refused, naming the address's own alignment and the declared one.
    let e = align_host(at(16, 100), 64, AlignmentPolicy::Strict).unwrap_err();
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    assert!(e.message.contains("(16-byte aligned)"), "{}", e.message);
    assert!(e.message.contains("declared 64 bytes"), "{}", e.message);
    assert!(e.message.contains("aligned allocator"), "{}", e.message);
    assert!(!meets_alignment((base_addr + 16) as *const _, 1, 64));
    assert!(meets_alignment((base_addr + 16) as *const _, 0, 64));

    // A non-power-of-two alignment is an argument error, not a silent copy.
    let e = align_host(at(16, 100), 48, AlignmentPolicy::CopyWhenUnaligned).unwrap_err();
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
}

#[test]
fn read_only_flag_starts_false_and_survives_into_raw_and_back() {
    let _l = live();
    let mut t = f32_tensor([1.0, 2.0, 3.0, 4.0]);
    assert!(!t.read_only(), "every constructor makes a writable tensor");
    t.set_read_only(true);
    assert!(t.read_only());
    let p = raw::into_raw(t);
    // SAFETY: p is live until the take below.
    assert!(unsafe { raw::borrow(p) }.unwrap().read_only());
    // SAFETY: p is live and given up here.
    let mut back = unsafe { raw::take(p) }.unwrap().unwrap();
    assert!(back.read_only());
    back.set_read_only(false);
    assert!(!back.read_only());
}
