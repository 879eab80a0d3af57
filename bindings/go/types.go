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
	TileRowMajor    TileOrder = 1 // HURRAY_TILE_ORDER_ROW_MAJOR
	TileColumnMajor TileOrder = 2 // HURRAY_TILE_ORDER_COLUMN_MAJOR
	TileStrided     TileOrder = 3 // HURRAY_TILE_ORDER_STRIDED
	TileNested      TileOrder = 4 // HURRAY_TILE_ORDER_TILED: inner order only: the next level follows
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
	ScaleF16  ScaleType = 1 // HURRAY_SCALE_TYPE_F16
	ScaleBF16 ScaleType = 2 // HURRAY_SCALE_TYPE_BF16
	ScaleF32  ScaleType = 3 // HURRAY_SCALE_TYPE_F32
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
	CombineNone    CombineOp = 0 // HURRAY_COMBINE_NONE
	CombineReplace CombineOp = 1 // HURRAY_COMBINE_REPLACE
	CombineAdd     CombineOp = 2 // HURRAY_COMBINE_ADD
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
	KVKey   KVRole = 0 // HURRAY_KV_ROLE_KEY
	KVValue KVRole = 1 // HURRAY_KV_ROLE_VALUE
	KVFused KVRole = 2 // HURRAY_KV_ROLE_FUSED
)

// The constants above are Go literals so that go doc shows their values; these
// compile only while each equals its C constant (an index out of [0, 1) does not
// compile).
var (
	_ = [1]struct{}{}[ScaleF16-C.HURRAY_SCALE_TYPE_F16]
	_ = [1]struct{}{}[ScaleBF16-C.HURRAY_SCALE_TYPE_BF16]
	_ = [1]struct{}{}[ScaleF32-C.HURRAY_SCALE_TYPE_F32]
	_ = [1]struct{}{}[CombineNone-C.HURRAY_COMBINE_NONE]
	_ = [1]struct{}{}[CombineReplace-C.HURRAY_COMBINE_REPLACE]
	_ = [1]struct{}{}[CombineAdd-C.HURRAY_COMBINE_ADD]
	_ = [1]struct{}{}[KVKey-C.HURRAY_KV_ROLE_KEY]
	_ = [1]struct{}{}[KVValue-C.HURRAY_KV_ROLE_VALUE]
	_ = [1]struct{}{}[KVFused-C.HURRAY_KV_ROLE_FUSED]
	_ = [1]struct{}{}[TileRowMajor-C.HURRAY_TILE_ORDER_ROW_MAJOR]
	_ = [1]struct{}{}[TileColumnMajor-C.HURRAY_TILE_ORDER_COLUMN_MAJOR]
	_ = [1]struct{}{}[TileStrided-C.HURRAY_TILE_ORDER_STRIDED]
	_ = [1]struct{}{}[TileNested-C.HURRAY_TILE_ORDER_TILED]
	_ = [1]struct{}{}[StatNNZ-C.HURRAY_STAT_NNZ_VALID]
	_ = [1]struct{}{}[StatSparsity-C.HURRAY_STAT_SPARSITY_VALID]
	_ = [1]struct{}{}[StatValueRange-C.HURRAY_STAT_VALUE_RANGE_VALID]
	_ = [1]struct{}{}[StatValueStats-C.HURRAY_STAT_VALUE_STATS_VALID]
	_ = [1]struct{}{}[StatNMSparsity-C.HURRAY_STAT_NM_SPARSITY_VALID]
	_ = [1]struct{}{}[StatNaNInf-C.HURRAY_STAT_NAN_INF_VALID]
)

// LayerIndexNone is the block-paged layer_index meaning "not tied to a layer".
const LayerIndexNone = ^uint32(0)

// StatMask says which statistics fields are valid (HURRAY_STAT_*).
type StatMask uint32

// The statistics validity bits.
const (
	StatNNZ        StatMask = 1  // HURRAY_STAT_NNZ_VALID
	StatSparsity   StatMask = 2  // HURRAY_STAT_SPARSITY_VALID
	StatValueRange StatMask = 4  // HURRAY_STAT_VALUE_RANGE_VALID
	StatValueStats StatMask = 8  // HURRAY_STAT_VALUE_STATS_VALID
	StatNMSparsity StatMask = 16 // HURRAY_STAT_NM_SPARSITY_VALID
	StatNaNInf     StatMask = 32 // HURRAY_STAT_NAN_INF_VALID
)
