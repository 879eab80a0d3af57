//! The wire-value constants of `hurray_ffi::tags` (the header's `#define`s) equal
//! hurray-core's values.

use hurray_core::layout::tag;
use hurray_core::*;
use hurray_ffi::tags::*;

#[test]
fn element_types() {
    let table = [
        (HURRAY_TYPE_FLOAT16, "float16"),
        (HURRAY_TYPE_BFLOAT16, "bfloat16"),
        (HURRAY_TYPE_FLOAT32, "float32"),
        (HURRAY_TYPE_FLOAT64, "float64"),
        (HURRAY_TYPE_INT8, "int8"),
        (HURRAY_TYPE_UINT8, "uint8"),
        (HURRAY_TYPE_INT16, "int16"),
        (HURRAY_TYPE_UINT16, "uint16"),
        (HURRAY_TYPE_INT32, "int32"),
        (HURRAY_TYPE_UINT32, "uint32"),
        (HURRAY_TYPE_INT64, "int64"),
        (HURRAY_TYPE_UINT64, "uint64"),
        (HURRAY_TYPE_BOOL, "bool"),
        (HURRAY_TYPE_FLOAT8_E4M3, "float8_e4m3"),
        (HURRAY_TYPE_FLOAT8_E5M2, "float8_e5m2"),
        (HURRAY_TYPE_FLOAT8_E8M0, "float8_e8m0"),
        (HURRAY_TYPE_FLOAT4_E2M1, "float4_e2m1"),
        (HURRAY_TYPE_FLOAT6_E2M3, "float6_e2m3"),
        (HURRAY_TYPE_FLOAT6_E3M2, "float6_e3m2"),
        (HURRAY_TYPE_FLOAT128, "float128"),
        (HURRAY_TYPE_INT4, "int4"),
        (HURRAY_TYPE_UINT4, "uint4"),
        (HURRAY_TYPE_INT2, "int2"),
        (HURRAY_TYPE_UINT2, "uint2"),
        (HURRAY_TYPE_COMPLEX64, "complex64"),
        (HURRAY_TYPE_COMPLEX128, "complex128"),
    ];
    assert_eq!(
        table.len(),
        ElementType::ALL.len(),
        "a constant per public type"
    );
    for (t, name) in table {
        assert_eq!(
            ElementType::from_name(name).map(ElementType::tag),
            Some(t),
            "{name}"
        );
    }
    assert_eq!(
        ElementType::from_tag(HURRAY_TYPE_PRIVATE_FIRST),
        Some(ElementType::Private(0xF0))
    );
    assert_eq!(
        ElementType::from_tag(HURRAY_TYPE_PRIVATE_LAST),
        Some(ElementType::Private(0xFE))
    );
}

#[test]
fn layouts_devices_and_flags() {
    assert_eq!(
        [
            HURRAY_LAYOUT_ROW_MAJOR,
            HURRAY_LAYOUT_COLUMN_MAJOR,
            HURRAY_LAYOUT_STRIDED,
            HURRAY_LAYOUT_TILED,
            HURRAY_LAYOUT_MORTON,
            HURRAY_LAYOUT_COO,
            HURRAY_LAYOUT_CSR,
            HURRAY_LAYOUT_CSC,
            HURRAY_LAYOUT_CSF,
            HURRAY_LAYOUT_BLOCK_PAGED,
            HURRAY_LAYOUT_COMPOSITE_HEAD,
            HURRAY_LAYOUT_HILBERT,
        ],
        [
            tag::ROW_MAJOR,
            tag::COLUMN_MAJOR,
            tag::STRIDED,
            tag::TILED,
            tag::MORTON,
            tag::COO,
            tag::CSR,
            tag::CSC,
            tag::CSF,
            tag::BLOCK_PAGED,
            tag::COMPOSITE_HEAD,
            tag::HILBERT,
        ]
    );
    let devices = [
        (HURRAY_DEVICE_CPU, DeviceTag::Cpu),
        (HURRAY_DEVICE_CUDA, DeviceTag::Cuda),
        (HURRAY_DEVICE_ROCM, DeviceTag::Rocm),
        (HURRAY_DEVICE_METAL, DeviceTag::Metal),
        (HURRAY_DEVICE_VULKAN, DeviceTag::Vulkan),
        (HURRAY_DEVICE_WEBGPU, DeviceTag::WebGpu),
        (HURRAY_DEVICE_HEXAGON, DeviceTag::Hexagon),
        (HURRAY_DEVICE_LEVEL_ZERO, DeviceTag::LevelZero),
        (HURRAY_DEVICE_OPENCL, DeviceTag::OpenCl),
    ];
    for (c, d) in devices {
        assert_eq!(c, d.tag());
    }
    for (c, s) in [
        (HURRAY_SYNC_PRODUCER_SYNCED, SyncMode::ProducerSynced),
        (HURRAY_SYNC_EVENT, SyncMode::Event),
        (HURRAY_SYNC_CONSUMER_STREAM, SyncMode::ConsumerStream),
    ] {
        assert_eq!(c, s.tag());
    }
    for (c, m) in [
        (HURRAY_MEMORY_STANDARD, MemoryClass::Standard),
        (HURRAY_MEMORY_HOST_PINNED, MemoryClass::HostPinned),
        (HURRAY_MEMORY_UNIFIED, MemoryClass::Unified),
        (HURRAY_MEMORY_PEER, MemoryClass::Peer),
    ] {
        assert_eq!(c, m.tag());
    }
    assert_eq!(
        [
            HURRAY_FLAG_HAS_QUANTIZATION,
            HURRAY_FLAG_HAS_SHARD,
            HURRAY_FLAG_HAS_EXTENSION_TYPE,
            HURRAY_FLAG_HAS_STATISTICS,
            HURRAY_FLAG_HAS_COMPOSITE_MEMBER,
        ],
        [
            flags::HAS_QUANTIZATION,
            flags::HAS_SHARD,
            flags::HAS_EXTENSION_TYPE,
            flags::HAS_STATISTICS,
            flags::HAS_COMPOSITE_MEMBER,
        ]
    );
    assert_eq!(HURRAY_DIM_DYNAMIC, DYN);
    assert_eq!(HURRAY_MAX_RANK as usize, MAX_RANK);
}

#[test]
fn quantization_and_section_enumerations() {
    let schemes = [
        (HURRAY_SCHEME_PER_TENSOR_AFFINE, "per_tensor_affine"),
        (HURRAY_SCHEME_PER_CHANNEL_AFFINE, "per_channel_affine"),
        (HURRAY_SCHEME_PER_BLOCK_AFFINE, "per_block_affine"),
        (HURRAY_SCHEME_NF4, "nf4"),
        (HURRAY_SCHEME_MXFP, "mxfp"),
    ];
    let models = [
        Scheme::PerTensor {
            scale: 1.0,
            zero_point: 0,
        },
        Scheme::PerChannel {
            axis: 0,
            scale_buffer_index: 0,
            zero_point_buffer_index: None,
            scale_type: ScaleType::F32,
        },
        Scheme::PerBlock {
            axis: 0,
            block_size: 2,
            scale_buffer_index: 0,
            zero_point_buffer_index: None,
            scale_type: ScaleType::F32,
        },
        Scheme::Nf4 {
            axis: 0,
            block_size: 8,
            scale_buffer_index: 0,
        },
        Scheme::Mxfp {
            axis: 0,
            block_size: 32,
            scale_buffer_index: 0,
        },
    ];
    for ((c, name), m) in schemes.iter().zip(&models) {
        assert_eq!((*c, *name), (m.tag(), m.name()));
    }
    assert_eq!(HURRAY_NO_BUFFER, quantization::NO_BUFFER);
    assert_eq!(
        [
            HURRAY_SCALE_TYPE_F16,
            HURRAY_SCALE_TYPE_BF16,
            HURRAY_SCALE_TYPE_F32
        ],
        [
            ScaleType::F16.tag(),
            ScaleType::Bf16.tag(),
            ScaleType::F32.tag()
        ]
    );
    assert_eq!(
        [
            HURRAY_KV_ROLE_KEY,
            HURRAY_KV_ROLE_VALUE,
            HURRAY_KV_ROLE_FUSED
        ],
        [KvRole::Key as u8, KvRole::Value as u8, KvRole::Fused as u8]
    );
    assert_eq!(
        [HURRAY_INDEX_TYPE_U32, HURRAY_INDEX_TYPE_U64],
        [IndexType::U32 as u8, IndexType::U64 as u8]
    );
    assert_eq!(
        [
            HURRAY_COMPOSITION_PARTITION,
            HURRAY_COMPOSITION_OVERLAY,
            HURRAY_COMPOSITION_GROUP
        ],
        [
            CompositionRule::Partition.tag(),
            CompositionRule::Overlay.tag(),
            CompositionRule::Group.tag()
        ]
    );
    assert_eq!(
        [
            HURRAY_COMBINE_NONE,
            HURRAY_COMBINE_REPLACE,
            HURRAY_COMBINE_ADD
        ],
        [
            CombineOp::None as u8,
            CombineOp::Replace as u8,
            CombineOp::Add as u8
        ]
    );
    assert_eq!(
        [HURRAY_MEMBER_ROLE_CORRECTION, HURRAY_MEMBER_ROLE_BASE],
        [MemberRole::Correction as u8, MemberRole::Base as u8]
    );
    assert_eq!(
        [
            HURRAY_STAT_NNZ_VALID,
            HURRAY_STAT_SPARSITY_VALID,
            HURRAY_STAT_VALUE_RANGE_VALID,
            HURRAY_STAT_VALUE_STATS_VALID,
            HURRAY_STAT_NM_SPARSITY_VALID,
            HURRAY_STAT_NAN_INF_VALID,
        ],
        [
            stat_mask::NNZ_VALID,
            stat_mask::SPARSITY_VALID,
            stat_mask::VALUE_RANGE_VALID,
            stat_mask::VALUE_STATS_VALID,
            stat_mask::NM_SPARSITY_VALID,
            stat_mask::NAN_INF_VALID,
        ]
    );
}

/// The C lookups over `hurray_core::tables`: names (unknown and private tags in the
/// one shared form), widths, tags from names.
#[test]
fn type_and_layout_lookups() {
    use hurray_ffi::tags::*;
    use std::ffi::{CStr, CString};
    let s = |p: *const std::ffi::c_char| unsafe { CStr::from_ptr(p) }.to_str().unwrap();
    assert_eq!(s(hurray_type_name(0x03)), "float32");
    assert_eq!(s(hurray_type_name(0x2a)), "unknown(0x2a)");
    assert_eq!(s(hurray_type_name(0xf3)), "private(0xf3)");
    assert_eq!(s(hurray_layout_name(0x0a)), "block_paged");
    assert_eq!(s(hurray_layout_name(0x2a)), "unknown(0x2a)");
    let mut bits = 0u32;
    assert_eq!(unsafe { hurray_type_bits(HURRAY_TYPE_FLOAT6_E2M3, &mut bits) }, 0);
    assert_eq!(bits, 6);
    assert_eq!(unsafe { hurray_type_bits(0x2a, &mut bits) }, hurray_ffi::HURRAY_ERR_NOT_FOUND);
    let mut tag = 0u8;
    let name = CString::new("uint4").unwrap();
    assert_eq!(unsafe { hurray_type_from_name(name.as_ptr(), &mut tag) }, 0);
    assert_eq!(tag, HURRAY_TYPE_UINT4);
    let name = CString::new("coo").unwrap();
    assert_eq!(unsafe { hurray_layout_from_name(name.as_ptr(), &mut tag) }, 0);
    assert_eq!(tag, HURRAY_LAYOUT_COO);
    let name = CString::new("float").unwrap();
    assert_eq!(
        unsafe { hurray_type_from_name(name.as_ptr(), &mut tag) },
        hurray_ffi::HURRAY_ERR_NOT_FOUND
    );
    for r in hurray_core::tables::ELEMENT_TYPES {
        assert_eq!(s(hurray_type_name(r.tag)), r.name);
    }
}
