//! What crossing the C ABI costs, measured from Rust (the C side of the same numbers
//! is `tests/c/bench_abi.c`, run by `cargo xtask bench-c`).
//!
//! - `stream_decode_64MiB`: one 64 MiB float32 tensor decoded from an in-memory stream
//!   with the same sans-io loop — demand, copy up to 1 MiB into the demanded slice (the
//!   caller's "read"), advance, poll for the tensor — once over hurray-io's
//!   `StreamDecoder` directly and once through the exported `hurray_stream_decoder_*`
//!   functions (the exact code a C caller runs: panic boundary, handle checks, status
//!   and out-pointers). The goal is the C ABI within 10% of direct.
//! - `abi_call`: `hurray_tensor_abi_version` and `hurray_tensor_buffer_data` on a tensor.
//!
//! Criterion reports each case; the summary at the end times both decodes again
//! (median of several runs, interleaved) and prints the ratio.

use criterion::{black_box, Criterion, Throughput};
use hurray_core::ElementType;
use hurray_ffi::stream::{
    hurray_stream_decoder_advance, hurray_stream_decoder_demand, hurray_stream_decoder_destroy,
    hurray_stream_decoder_finish, hurray_stream_decoder_new, hurray_stream_decoder_next_tensor,
};
use hurray_ffi::tensor::{
    hurray_tensor_abi_version, hurray_tensor_buffer_data, hurray_tensor_destroy,
};
use hurray_ffi::{HurrayStreamDecoder, HurrayTensor as T, HURRAY_OK};
use hurray_io::{Item, StreamDecoder, StreamWriter, Tensor};
use std::ffi::c_void;
use std::time::{Duration, Instant};

const SIZE: usize = 64 << 20;
const STEP: usize = 1 << 20;

/// The encoded stream of one 64 MiB float32 tensor.
fn stream() -> Vec<u8> {
    let bytes: Vec<u8> = (0..SIZE).map(|i| (i * 31 + 7) as u8).collect();
    let t = Tensor::from_dense(ElementType::Float32, &[(SIZE / 4) as u64], &bytes).unwrap();
    let mut out = Vec::new();
    StreamWriter::new(&mut out).write_tensor(&t).unwrap();
    out
}

/// hurray-io directly: the same loop a C caller runs, without the ABI.
fn decode_direct(s: &[u8]) -> Item {
    let mut dec = StreamDecoder::default();
    let mut pos = 0;
    loop {
        let dst = dec.demand();
        let n = dst.len().min(STEP).min(s.len() - pos);
        dst[..n].copy_from_slice(&s[pos..pos + n]);
        pos += n;
        dec.advance(n);
        if let Some(item) = dec.next_item() {
            dec.finish().unwrap();
            return item.unwrap();
        }
    }
}

/// Through the C ABI: the exported functions, exactly as C calls them.
fn decode_abi(s: &[u8]) -> *mut T {
    let mut dec: *mut HurrayStreamDecoder = std::ptr::null_mut();
    // SAFETY: valid out-pointers; the decoder is used by this thread only and the
    // demanded slice is written within its length before advance.
    unsafe {
        assert_eq!(
            hurray_stream_decoder_new(std::ptr::null(), &mut dec),
            HURRAY_OK
        );
        let mut pos = 0;
        let mut t: *mut T = std::ptr::null_mut();
        while t.is_null() {
            let mut dst: *mut u8 = std::ptr::null_mut();
            let mut want = 0u64;
            assert_eq!(
                hurray_stream_decoder_demand(dec, &mut dst, &mut want),
                HURRAY_OK
            );
            let n = (want as usize).min(STEP).min(s.len() - pos);
            std::ptr::copy_nonoverlapping(s.as_ptr().add(pos), dst, n);
            pos += n;
            assert_eq!(hurray_stream_decoder_advance(dec, n as u64), HURRAY_OK);
            assert_eq!(hurray_stream_decoder_next_tensor(dec, &mut t), HURRAY_OK);
        }
        assert_eq!(hurray_stream_decoder_finish(dec), HURRAY_OK);
        assert_eq!(hurray_stream_decoder_destroy(&mut dec), HURRAY_OK);
        t
    }
}

fn destroy(mut t: *mut T) {
    // SAFETY: t is a live tensor this bench owns.
    assert_eq!(unsafe { hurray_tensor_destroy(&mut t) }, HURRAY_OK);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let s = stream();
    // Both decode to the same bytes.
    let direct = decode_direct(&s);
    let abi = decode_abi(&s);
    let mut p: *const c_void = std::ptr::null();
    let mut n = 0u64;
    // SAFETY: abi is a live tensor; outs are valid.
    assert_eq!(
        unsafe { hurray_tensor_buffer_data(abi, 0, &mut p, &mut n) },
        HURRAY_OK
    );
    // SAFETY: the tensor's buffer holds n bytes while it lives.
    let abi_bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n as usize) };
    assert_eq!(
        abi_bytes,
        direct.as_tensor().unwrap().buffers()[0].as_slice()
    );
    drop(direct);
    destroy(abi);

    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("stream_decode_64MiB");
        g.throughput(Throughput::Bytes(s.len() as u64));
        g.bench_function("hurray_io_direct", |b| {
            b.iter(|| drop(black_box(decode_direct(&s))))
        });
        g.bench_function("c_abi", |b| b.iter(|| destroy(black_box(decode_abi(&s)))));
        g.finish();
    }
    {
        let t = decode_abi(&s[..]);
        let mut g = c.benchmark_group("abi_call");
        g.bench_function("hurray_tensor_abi_version", |b| {
            b.iter(|| {
                let mut v = 0u32;
                // SAFETY: t is live; v is writable.
                unsafe { hurray_tensor_abi_version(black_box(t as *const T), &mut v) };
                black_box(v)
            })
        });
        g.bench_function("hurray_tensor_buffer_data", |b| {
            b.iter(|| {
                let mut p: *const c_void = std::ptr::null();
                let mut n = 0u64;
                // SAFETY: t is live; outs are writable.
                unsafe { hurray_tensor_buffer_data(black_box(t), 0, &mut p, &mut n) };
                black_box((p, n))
            })
        });
        g.finish();
        destroy(t);
    }
    c.final_summary();

    // Summary: both decodes, interleaved, median of 15 each (tensor freed untimed).
    let (mut d, mut a) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        let t0 = Instant::now();
        let item = decode_direct(&s);
        d.push(t0.elapsed().as_secs_f64() * 1e3);
        drop(item);
        let t0 = Instant::now();
        let t = decode_abi(&s);
        a.push(t0.elapsed().as_secs_f64() * 1e3);
        destroy(t);
    }
    let (d, a) = (median(d), median(a));
    let gib = s.len() as f64 / (1u64 << 30) as f64;
    println!(
        "summary: stream decode 64 MiB, 1 MiB reads: hurray-io direct {d:.2} ms ({:.2} GiB/s), \
         C ABI {a:.2} ms ({:.2} GiB/s): C ABI / direct = {:.3}",
        gib / (d / 1e3),
        gib / (a / 1e3),
        a / d
    );
}
