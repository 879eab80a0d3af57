package hurray

// #include "hurray.h"
import "C"

// DType is an element type: the descriptor's type_tag (HURRAY_TYPE_*).
// Tags 0xF0..0xFE are implementation-private types, described by an
// ExtensionType section.
type DType uint8

// The element types of the format.
const (
	Float16    DType = C.HURRAY_TYPE_FLOAT16
	BFloat16   DType = C.HURRAY_TYPE_BFLOAT16
	Float32    DType = C.HURRAY_TYPE_FLOAT32
	Float64    DType = C.HURRAY_TYPE_FLOAT64
	Int8       DType = C.HURRAY_TYPE_INT8
	Uint8      DType = C.HURRAY_TYPE_UINT8
	Int16      DType = C.HURRAY_TYPE_INT16
	Uint16     DType = C.HURRAY_TYPE_UINT16
	Int32      DType = C.HURRAY_TYPE_INT32
	Uint32     DType = C.HURRAY_TYPE_UINT32
	Int64      DType = C.HURRAY_TYPE_INT64
	Uint64     DType = C.HURRAY_TYPE_UINT64
	Bool       DType = C.HURRAY_TYPE_BOOL // 1 bit, packed 8 per byte
	Float8E4M3 DType = C.HURRAY_TYPE_FLOAT8_E4M3
	Float8E5M2 DType = C.HURRAY_TYPE_FLOAT8_E5M2
	Float8E8M0 DType = C.HURRAY_TYPE_FLOAT8_E8M0
	Float4E2M1 DType = C.HURRAY_TYPE_FLOAT4_E2M1 // packed 2 per byte
	Float6E2M3 DType = C.HURRAY_TYPE_FLOAT6_E2M3 // four codes per 3 bytes
	Float6E3M2 DType = C.HURRAY_TYPE_FLOAT6_E3M2 // four codes per 3 bytes
	Float128   DType = C.HURRAY_TYPE_FLOAT128
	Int4       DType = C.HURRAY_TYPE_INT4  // packed 2 per byte
	Uint4      DType = C.HURRAY_TYPE_UINT4 // packed 2 per byte
	Int2       DType = C.HURRAY_TYPE_INT2  // packed 4 per byte
	Uint2      DType = C.HURRAY_TYPE_UINT2 // packed 4 per byte
	Complex64  DType = C.HURRAY_TYPE_COMPLEX64
	Complex128 DType = C.HURRAY_TYPE_COMPLEX128
)

// String is the type's name in the spec ("float32", "bfloat16", ...), or
// "private(0xf3)" / "unknown(0x2a)" for other tags (the rendering of every language).
func (d DType) String() string {
	if info, ok := dtypeInfo[d]; ok {
		return info.name
	}
	return tagName(nil, uint8(d), true)
}

// Bits is the storage width of one element in bits (1 for bool, 4 for int4, ...),
// or 0 for a private or unknown type.
func (d DType) Bits() int { return dtypeInfo[d].bits }

// IsPrivate reports whether d is an implementation-private tag (0xF0..0xFE).
func (d DType) IsPrivate() bool {
	return d >= C.HURRAY_TYPE_PRIVATE_FIRST && d <= C.HURRAY_TYPE_PRIVATE_LAST
}

// Layout is a layout tag (HURRAY_LAYOUT_*): how elements are placed in buffers.
type Layout uint8

// The layouts of the format.
const (
	RowMajor      Layout = C.HURRAY_LAYOUT_ROW_MAJOR
	ColumnMajor   Layout = C.HURRAY_LAYOUT_COLUMN_MAJOR
	Strided       Layout = C.HURRAY_LAYOUT_STRIDED
	Tiled         Layout = C.HURRAY_LAYOUT_TILED
	Morton        Layout = C.HURRAY_LAYOUT_MORTON
	COO           Layout = C.HURRAY_LAYOUT_COO
	CSR           Layout = C.HURRAY_LAYOUT_CSR
	CSC           Layout = C.HURRAY_LAYOUT_CSC
	CSF           Layout = C.HURRAY_LAYOUT_CSF
	BlockPaged    Layout = C.HURRAY_LAYOUT_BLOCK_PAGED
	CompositeHead Layout = C.HURRAY_LAYOUT_COMPOSITE_HEAD
	Hilbert       Layout = C.HURRAY_LAYOUT_HILBERT
)

// String is the layout's name ("row_major", "csr", ...), or "private(0xf1)" /
// "unknown(0x2a)" for other tags (the rendering of every language).
func (l Layout) String() string { return tagName(layoutNames, uint8(l), true) }

// IsSparse reports whether l is COO, CSR, CSC or CSF.
func (l Layout) IsSparse() bool { return l >= COO && l <= CSF }

// IsDense reports whether l is a dense layout (row- or column-major, strided,
// tiled, Morton, Hilbert): every element is stored in buffer 0.
func (l Layout) IsDense() bool { return (l >= RowMajor && l <= Morton) || l == Hilbert }

// IsExtension reports whether l is a private extension layout tag (0xF0..0xFE).
func (l Layout) IsExtension() bool {
	return l >= C.HURRAY_LAYOUT_EXTENSION_FIRST && l <= C.HURRAY_LAYOUT_EXTENSION_LAST
}

// Device is where a buffer lives (HURRAY_DEVICE_*).
type Device uint8

// The device tags of the format.
const (
	CPU       Device = C.HURRAY_DEVICE_CPU
	CUDA      Device = C.HURRAY_DEVICE_CUDA
	ROCm      Device = C.HURRAY_DEVICE_ROCM
	Metal     Device = C.HURRAY_DEVICE_METAL
	Vulkan    Device = C.HURRAY_DEVICE_VULKAN
	WebGPU    Device = C.HURRAY_DEVICE_WEBGPU
	Hexagon   Device = C.HURRAY_DEVICE_HEXAGON
	LevelZero Device = C.HURRAY_DEVICE_LEVEL_ZERO
	OpenCL    Device = C.HURRAY_DEVICE_OPENCL
)

// String is the device's name ("cpu", "cuda", ...), or "private(0xf0)" /
// "unknown(0x2a)".
func (d Device) String() string { return tagName(deviceNames, uint8(d), true) }

// SyncMode says what a consumer must wait for before using a buffer
// (HURRAY_SYNC_*).
type SyncMode uint8

// The synchronisation modes.
const (
	ProducerSynced SyncMode = C.HURRAY_SYNC_PRODUCER_SYNCED // the only mode for CPU memory
	SyncEvent      SyncMode = C.HURRAY_SYNC_EVENT
	ConsumerStream SyncMode = C.HURRAY_SYNC_CONSUMER_STREAM
)

// String is the sync mode's name ("producer_synced", ...), or "unknown(0x2a)".
func (m SyncMode) String() string { return tagName(syncModeNames, uint8(m), false) }

// MemoryClass is the kind of device memory a buffer lives in (HURRAY_MEMORY_*).
type MemoryClass uint8

// The memory classes.
const (
	StandardMemory   MemoryClass = C.HURRAY_MEMORY_STANDARD
	HostPinnedMemory MemoryClass = C.HURRAY_MEMORY_HOST_PINNED
	UnifiedMemory    MemoryClass = C.HURRAY_MEMORY_UNIFIED
	PeerMemory       MemoryClass = C.HURRAY_MEMORY_PEER
)

// String is the memory class's name ("standard", ...), or "private(0xf0)" /
// "unknown(0x2a)".
func (m MemoryClass) String() string { return tagName(memoryClassNames, uint8(m), true) }

// DimDynamic marks a dynamic dimension in a shape (its size is not known from the
// descriptor alone).
const DimDynamic = ^uint64(0)

// MaxRank is the highest rank a descriptor may have (HURRAY_MAX_RANK).
const MaxRank = 64

// NoBuffer is the buffer index meaning "no such buffer" (e.g. the zero-point
// buffer of a symmetric quantization).
const NoBuffer = ^uint32(0)

// TileOrder orders tiles in the grid, or elements inside a tile (HURRAY_TILE_ORDER_*).
type TileOrder uint8

// The tile orders.
const (
	TileRowMajor    TileOrder = C.HURRAY_TILE_ORDER_ROW_MAJOR
	TileColumnMajor TileOrder = C.HURRAY_TILE_ORDER_COLUMN_MAJOR
	TileStrided     TileOrder = C.HURRAY_TILE_ORDER_STRIDED
	TileNested      TileOrder = C.HURRAY_TILE_ORDER_TILED // inner order only: the next level follows
)

// Scheme is a quantization scheme tag (HURRAY_SCHEME_*); 0xF0..0xFE are private.
type Scheme uint8

// The quantization schemes.
const (
	PerTensorAffine  Scheme = C.HURRAY_SCHEME_PER_TENSOR_AFFINE
	PerChannelAffine Scheme = C.HURRAY_SCHEME_PER_CHANNEL_AFFINE
	PerBlockAffine   Scheme = C.HURRAY_SCHEME_PER_BLOCK_AFFINE
	NF4              Scheme = C.HURRAY_SCHEME_NF4
	MXFP             Scheme = C.HURRAY_SCHEME_MXFP
)

// String is the scheme's name ("per_tensor_affine", "nf4", ...), or
// "private(0xf0)" / "unknown(0x2a)".
func (s Scheme) String() string { return tagName(schemeNames, uint8(s), true) }

// ScaleType is the element type of a quantization scale buffer (HURRAY_SCALE_TYPE_*).
type ScaleType uint8

// The scale types.
const (
	ScaleF16  ScaleType = C.HURRAY_SCALE_TYPE_F16
	ScaleBF16 ScaleType = C.HURRAY_SCALE_TYPE_BF16
	ScaleF32  ScaleType = C.HURRAY_SCALE_TYPE_F32
)

// CompositionRule says how a composite's members make up its head (HURRAY_COMPOSITION_*).
type CompositionRule uint8

// The composition rules.
const (
	Partition CompositionRule = C.HURRAY_COMPOSITION_PARTITION // members tile the head exactly
	Overlay   CompositionRule = C.HURRAY_COMPOSITION_OVERLAY   // a base plus corrections
	Group     CompositionRule = C.HURRAY_COMPOSITION_GROUP     // independent tensors
)

// String is the rule's name ("partition", "overlay", "group"), or "private(0xf0)" /
// "unknown(0x2a)".
func (r CompositionRule) String() string { return tagName(compositionRuleNames, uint8(r), true) }

// CombineOp says how an overlay combines its members (HURRAY_COMBINE_*).
type CombineOp uint8

// The combine operations.
const (
	CombineNone    CombineOp = C.HURRAY_COMBINE_NONE
	CombineReplace CombineOp = C.HURRAY_COMBINE_REPLACE
	CombineAdd     CombineOp = C.HURRAY_COMBINE_ADD
)

// MemberRole is the role of an overlay member (the composite-member section).
// Its zero value, NoMemberRole, means the section is absent.
type MemberRole uint8

// The member roles.
const (
	NoMemberRole     MemberRole = iota // no composite-member section
	CorrectionMember                   // wire value HURRAY_MEMBER_ROLE_CORRECTION
	BaseMember                         // wire value HURRAY_MEMBER_ROLE_BASE
)

// KVRole is the role of a block-paged KV cache (HURRAY_KV_ROLE_*).
type KVRole uint8

// The KV roles.
const (
	KVKey   KVRole = C.HURRAY_KV_ROLE_KEY
	KVValue KVRole = C.HURRAY_KV_ROLE_VALUE
	KVFused KVRole = C.HURRAY_KV_ROLE_FUSED
)

// LayerIndexNone is the block-paged layer_index meaning "not tied to a layer".
const LayerIndexNone = ^uint32(0)

// StatMask says which statistics fields are valid (HURRAY_STAT_*).
type StatMask uint32

// The statistics validity bits.
const (
	StatNNZ        StatMask = C.HURRAY_STAT_NNZ_VALID
	StatSparsity   StatMask = C.HURRAY_STAT_SPARSITY_VALID
	StatValueRange StatMask = C.HURRAY_STAT_VALUE_RANGE_VALID
	StatValueStats StatMask = C.HURRAY_STAT_VALUE_STATS_VALID
	StatNMSparsity StatMask = C.HURRAY_STAT_NM_SPARSITY_VALID
	StatNaNInf     StatMask = C.HURRAY_STAT_NAN_INF_VALID
)
