//! Descriptor codec speed: decode (bytes → validated model) and encode (validated
//! model → bytes) for four typical descriptors.
//!
//! Run with `cargo bench -p hurray-core --bench codec`. Goal: decode < 100 ns.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use hurray_core::{
    BufferHandle, ElementType, Layout, Quantization, ScaleType, Scheme, TensorDescriptor,
};

/// Row-major float32 [256, 256]: the simplest descriptor (61 bytes).
fn dense_f32() -> TensorDescriptor {
    TensorDescriptor::dense(ElementType::Float32, &[256, 256]).unwrap()
}

/// A rank-4 row-major float16 activation, NCHW [8, 64, 56, 56] (77 bytes).
fn dense_rank4() -> TensorDescriptor {
    TensorDescriptor::dense(ElementType::Float16, &[8, 64, 56, 56]).unwrap()
}

/// CSR float32 [1024, 1024] with 10 000 stored values (109 bytes).
fn csr() -> TensorDescriptor {
    let nnz = 10_000;
    TensorDescriptor {
        layout: Layout::Csr { nnz },
        buffers: vec![
            BufferHandle::cpu(4 * nnz),
            BufferHandle::cpu(8 * nnz),
            BufferHandle::cpu(8 * 1025),
        ],
        ..TensorDescriptor::dense(ElementType::Float32, &[1024, 1024]).unwrap()
    }
}

/// The golden vector `quant_per_block_int4_128x128`: int4 [128, 128], symmetric
/// per-block scheme along axis 1, blocks of 128, f16 scales (105 bytes).
fn per_block_int4() -> TensorDescriptor {
    let mut d = TensorDescriptor::dense(ElementType::Int4, &[128, 128]).unwrap();
    d.buffers.push(BufferHandle::cpu(128 * 2));
    d.quantization = Some(Quantization::from(Scheme::PerBlock {
        axis: 1,
        block_size: 128,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
        scale_type: ScaleType::F16,
    }));
    d
}

fn codec(c: &mut Criterion) {
    let cases = [
        ("f32_256x256", dense_f32(), 61),
        ("f16_rank4", dense_rank4(), 77),
        ("csr_f32_1024x1024", csr(), 109),
        ("int4_per_block_128x128", per_block_int4(), 105),
    ];
    for (name, d, len) in cases {
        let bytes = d.encode().unwrap();
        assert_eq!(bytes.len(), len, "{name}");
        assert_eq!(TensorDescriptor::decode(&bytes).unwrap(), d, "{name}");

        c.bench_function(&format!("decode/{name}"), |b| {
            b.iter(|| TensorDescriptor::decode(black_box(&bytes)).unwrap())
        });
        c.bench_function(&format!("encode/{name}"), |b| {
            b.iter(|| black_box(&d).encode().unwrap())
        });
        // Encoding into a reused buffer: no allocation, validation included.
        let mut out = Vec::with_capacity(len);
        c.bench_function(&format!("encode_into/{name}"), |b| {
            b.iter(|| {
                out.clear();
                black_box(&d).encode_into(&mut out).unwrap();
                black_box(out.len())
            })
        });
    }
}

criterion_group!(benches, codec);
criterion_main!(benches);
