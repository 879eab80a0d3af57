package hurray

// #include "hurray.h"
import "C"

// DType is an element type: the descriptor's type_tag (HURRAY_TYPE_*).
// Tags 0xF0..0xFE are implementation-private types, described by an
// ExtensionType section.
// Its constants are generated from hurray_core::tables (tables_gen.go).
type DType uint8

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
// Its constants are generated from hurray_core::tables (tables_gen.go).
type Layout uint8

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
// Its constants are generated from hurray_core::tables (tables_gen.go).
type Device uint8

// String is the device's name ("cpu", "cuda", ...), or "private(0xf0)" /
// "unknown(0x2a)".
func (d Device) String() string { return tagName(deviceNames, uint8(d), true) }

// SyncMode says what a consumer must wait for before using a buffer
// (HURRAY_SYNC_*).
// Its constants are generated from hurray_core::tables (tables_gen.go).
type SyncMode uint8

// String is the sync mode's name ("producer_synced", ...), or "unknown(0x2a)".
func (m SyncMode) String() string { return tagName(syncModeNames, uint8(m), false) }

// MemoryClass is the kind of device memory a buffer lives in (HURRAY_MEMORY_*).
// Its constants are generated from hurray_core::tables (tables_gen.go).
type MemoryClass uint8

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
// Its constants are generated from hurray_core::tables (tables_gen.go).
type Scheme uint8

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
// Its constants are generated from hurray_core::tables (tables_gen.go).
type CompositionRule uint8

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
