package hurray

// #include "hurray.h"
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Descriptor is a tensor descriptor as a plain Go value: element type, shape,
// layout and its fields, buffer table and optional sections. It is what
// [Tensor.Descriptor] returns and what [NewTensor] takes; [Descriptor.Encode] turns
// it into the canonical wire encoding (validating it), [DecodeDescriptor] goes the
// other way.
//
// Only the fields of the descriptor's Layout are used; the others stay zero. A nil
// optional section (Quantization, Shard, Statistics, ExtensionType) is absent.
type Descriptor struct {
	// DType is the element type.
	DType DType
	// Layout is the layout tag; it decides which layout fields below apply.
	Layout Layout
	// Shape holds one size per dimension in elements, slowest-varying first;
	// DimDynamic marks a dynamic dimension. Empty for a scalar.
	Shape []uint64
	// ByteOffset is the distance in bytes from the start of buffer 0 to element
	// [0, ..., 0] (dense layouts only).
	ByteOffset uint64
	// Buffers is the buffer table: layout buffers, then quantization parameter buffers.
	Buffers []BufferEntry

	// Strides (Strided): one stride per dimension, in elements.
	Strides []int64
	// Tiling (Tiled): the nesting levels, outermost first.
	Tiling []TileLevel
	// MortonBits (Morton): bits of each coordinate, one per dimension.
	MortonBits []uint32
	// NNZ (COO, CSR, CSC, CSF): number of stored elements.
	NNZ uint64
	// COOSorted (COO): the coordinate tuples are sorted lexicographically.
	COOSorted bool
	// CSFModeOrder (CSF): storage order of the levels, a permutation of 0..rank-1.
	CSFModeOrder []uint32
	// BlockPaged (BlockPaged): the paged KV cache fields.
	BlockPaged *BlockPagedFields
	// Composite (CompositeHead): how the members that follow make up this head.
	Composite *CompositeFields
	// Hilbert (Hilbert): the curve's order and rank.
	Hilbert *HilbertFields
	// Extension (private layout tags 0xF0..0xFE): identifier and opaque data.
	Extension *ExtensionLayout

	// Quantization is the quantization section, or nil.
	Quantization *Quantization
	// Shard says which box of a larger tensor this one is, or nil.
	Shard *Shard
	// Statistics is the advisory statistics section, or nil.
	Statistics *Statistics
	// ExtensionType describes a private element type (required for one), or nil.
	ExtensionType *ExtensionType
	// MemberRole is the role of an overlay member, or NoMemberRole.
	MemberRole MemberRole

	// VersionMinor is the descriptor's minor version as read; ignored by Encode.
	VersionMinor uint8
}

// BufferEntry is one entry of a descriptor's buffer table: a buffer's size and
// placement (never its address).
type BufferEntry struct {
	// Size in bytes (0: an empty buffer).
	Size uint64
	// Alignment of the first byte in bytes: a power of two, at least 64 for a
	// non-empty buffer. Zero means 64 when building.
	Alignment uint32
	// Device where the buffer lives.
	Device Device
	// Sync says what to wait for before use (ProducerSynced for CPU memory).
	Sync SyncMode
	// Memory is the class of device memory.
	Memory MemoryClass
}

// TileLevel is one nesting level of a tiled layout.
type TileLevel struct {
	// Shape holds the elements per tile along each dimension.
	Shape []uint64
	// OuterOrder orders the tile grid; OuterStrides (in tiles) apply when it is TileStrided.
	OuterOrder   TileOrder
	OuterStrides []int64
	// InnerOrder orders elements inside a tile; InnerStrides (in elements) apply when
	// it is TileStrided, and TileNested means the next level describes the tile.
	InnerOrder   TileOrder
	InnerStrides []int64
}

// BlockPagedFields are the fields of a block-paged (paged KV cache) layout.
type BlockPagedFields struct {
	NumPages   uint64 // physical pages in the pool
	PageSize   uint32 // tokens per page, at least 1
	PagedAxis  uint32 // the paged axis; 0 in this version
	NumSeqs    uint32 // sequences in the batch
	LayerIndex uint32 // the layer, or LayerIndexNone
	KVRole     KVRole
	// Index64 makes block_table and seq_ptr u64 (else u32).
	Index64 bool
}

// CompositeFields are the fields of a composite head.
type CompositeFields struct {
	MemberCount uint32 // number of member tensors that follow the head
	Rule        CompositionRule
	Combine     CombineOp // CombineNone unless Rule is Overlay
}

// HilbertFields are the fields of a Hilbert-curve layout.
type HilbertFields struct {
	Order uint32 // every dimension is 2^Order
	Rank  uint32 // equal to the tensor's rank
}

// ExtensionLayout is a private extension layout's identifier and opaque data.
type ExtensionLayout struct {
	ID   uint64
	Data []byte
}

// Quantization is the quantization section. Which fields a scheme uses:
//
//	PerTensorAffine:   Scale, ZeroPoint
//	PerChannelAffine:  Axis, ScaleBuffer, ZeroPointBuffer, ScaleType (F32)
//	PerBlockAffine:    Axis, BlockSize, ScaleBuffer, ZeroPointBuffer, ScaleType
//	NF4, MXFP:         Axis, BlockSize, ScaleBuffer
//	private (0xF0..):  Version, Flags, Trailing (the whole payload)
//
// Unused buffer indices are NoBuffer; ZeroPointBuffer == NoBuffer means symmetric.
type Quantization struct {
	Scheme          Scheme
	Version         uint8  // 1 for the assigned schemes (set by Encode)
	Flags           uint16 // bit 0: symmetric (set by Encode for assigned schemes)
	Scale           float32
	ZeroPoint       int32
	Axis            uint32
	BlockSize       uint32
	ScaleBuffer     uint32
	ZeroPointBuffer uint32
	ScaleType       ScaleType
	// Trailing holds payload bytes after the fixed fields (usually none), or a
	// private scheme's whole payload.
	Trailing []byte
}

// Symmetric reports whether the quantization has no zero points.
func (q *Quantization) Symmetric() bool { return q.Flags&C.HURRAY_QUANT_FLAG_SYMMETRIC != 0 }

// Shard places a tensor as the box [Offset[k], Offset[k]+Shape[k]) of a parent.
type Shard struct {
	ParentShape []uint64
	Offset      []uint64
}

// Statistics is the advisory statistics section; a field counts only when its bit
// is set in Mask. Values describe dequantized data.
type Statistics struct {
	Mask     StatMask
	NNZ      uint64
	Sparsity float64
	Min      float64
	Max      float64
	AbsMax   float64
	Mean     float64
	Stddev   float64
	NMN      uint8 // N of N:M structured sparsity
	NMM      uint8 // M of N:M structured sparsity
	HasNaN   bool
	HasInf   bool
}

// ExtensionType describes how a private element type is stored.
type ExtensionType struct {
	BitWidth      uint32
	ExponentBias  uint32
	PackingFactor uint8
	IsFloat       bool
	IsSigned      bool
	SignBits      uint8
	ExponentBits  uint8
	MantissaBits  uint8
	HasNaN        bool
	HasInf        bool
}

// Rank is the number of dimensions.
func (d *Descriptor) Rank() int { return len(d.Shape) }

// DenseDescriptor describes a row-major CPU tensor of dt and shape with one buffer
// of exactly the contiguous size (64-byte aligned): the common case.
func DenseDescriptor(dt DType, shape ...uint64) (Descriptor, error) {
	return denseDescriptor("DenseDescriptor", dt, shape)
}

func denseDescriptor(op string, dt DType, shape []uint64) (Descriptor, error) {
	var p *C.HurrayDescriptor
	err := call(op, func() C.HurrayStatus {
		return C.hurray_descriptor_dense(C.uint8_t(dt), C.uint32_t(len(shape)), u64Ptr(shape), &p)
	})
	if err != nil {
		return Descriptor{}, err
	}
	defer C.hurray_descriptor_destroy(&p)
	return readDescriptor(p), nil
}

// DecodeDescriptor decodes and validates exactly one encoded descriptor.
func DecodeDescriptor(b []byte) (Descriptor, error) {
	var p *C.HurrayDescriptor
	err := call("DecodeDescriptor", func() C.HurrayStatus {
		return C.hurray_descriptor_decode(bytesPtr(b), C.uint64_t(len(b)), &p)
	})
	if err != nil {
		return Descriptor{}, err
	}
	defer C.hurray_descriptor_destroy(&p)
	return readDescriptor(p), nil
}

// Encode validates the descriptor and returns its canonical encoding.
func (d *Descriptor) Encode() ([]byte, error) { return d.encode("Descriptor.Encode") }

func (d *Descriptor) encode(op string) ([]byte, error) {
	p, err := d.build(op)
	if err != nil {
		return nil, err
	}
	defer C.hurray_descriptor_destroy(&p)
	return encodeDescriptor(p), nil
}

// encodeDescriptor copies a live descriptor's encoding.
func encodeDescriptor(p *C.HurrayDescriptor) []byte {
	var n C.uint64_t
	must("hurray_descriptor_encode", C.hurray_descriptor_encode(p, nil, 0, &n))
	out := make([]byte, int(n))
	must("hurray_descriptor_encode", C.hurray_descriptor_encode(p, bytesPtr(out), n, &n))
	return out
}

// build makes a C descriptor of d in one call (hurray_descriptor_from_view), for
// op. The caller destroys it. The view points into d's own slices, pinned for the
// call; every array the library reads rank values from is checked here to hold
// exactly rank values, so it never reads past a Go slice.
func (d *Descriptor) build(op string) (*C.HurrayDescriptor, error) {
	if s := d.Shard; s != nil && len(s.ParentShape) != len(s.Offset) {
		return nil, invalidArg(op, "Shard.ParentShape has %d dimensions, Shard.Offset %d", len(s.ParentShape), len(s.Offset))
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	v, err := d.view(op, &pin)
	if err != nil {
		return nil, err
	}
	var out *C.HurrayDescriptor
	if err := call(op, func() C.HurrayStatus { return C.hurray_descriptor_from_view(v, &out) }); err != nil {
		return nil, err
	}
	return out, nil
}

// pinned pins the backing array of s (when it has one) and returns its first element.
func pinned[T any](pin *runtime.Pinner, s []T) *T {
	if len(s) == 0 {
		return nil
	}
	p := unsafe.SliceData(s)
	pin.Pin(p)
	return p
}

// ranked is pinned for an array the library reads rank values from: it must hold
// exactly rank values.
func ranked[T any, P any](op string, pin *runtime.Pinner, field string, s []T, rank int) (*P, error) {
	if len(s) != rank {
		return nil, invalidArg(op, "%s has %d values; the rank is %d", field, len(s), rank)
	}
	return (*P)(unsafe.Pointer(pinned(pin, s))), nil
}

// view fills a C view of d whose pointers are d's pinned slices (or pinned copies).
func (d *Descriptor) view(op string, pin *runtime.Pinner) (*C.HurrayDescriptorView, error) {
	rank := len(d.Shape)
	v := &C.HurrayDescriptorView{}
	pin.Pin(v)
	v.header = C.HurrayDescriptorHeader{type_tag: C.uint8_t(d.DType), layout_tag: C.uint8_t(d.Layout),
		rank: C.uint32_t(rank), buffer_count: C.uint32_t(len(d.Buffers)), byte_offset: C.uint64_t(d.ByteOffset)}
	v.shape = (*C.uint64_t)(pinned(pin, d.Shape))
	var err error
	switch d.Layout {
	case Strided:
		v.strides, err = ranked[int64, C.int64_t](op, pin, "Strides", d.Strides, rank)
	case Tiled:
		levels := make([]C.HurrayTileLevelView, len(d.Tiling))
		for i := range d.Tiling {
			l, c := &d.Tiling[i], &levels[i]
			c.outer_order, c.inner_order = C.uint8_t(l.OuterOrder), C.uint8_t(l.InnerOrder)
			if c.tile_shape, err = ranked[uint64, C.uint64_t](op, pin, fmt.Sprintf("Tiling[%d].Shape", i), l.Shape, rank); err != nil {
				return nil, err
			}
			if l.OuterOrder == TileStrided {
				if c.outer_strides, err = ranked[int64, C.int64_t](op, pin, fmt.Sprintf("Tiling[%d].OuterStrides", i), l.OuterStrides, rank); err != nil {
					return nil, err
				}
			}
			if l.InnerOrder == TileStrided {
				if c.inner_strides, err = ranked[int64, C.int64_t](op, pin, fmt.Sprintf("Tiling[%d].InnerStrides", i), l.InnerStrides, rank); err != nil {
					return nil, err
				}
			}
		}
		v.tiling_depth, v.tiling = C.uint32_t(len(levels)), pinned(pin, levels)
	case Morton:
		v.morton_bits, err = ranked[uint32, C.uint32_t](op, pin, "MortonBits", d.MortonBits, rank)
	case COO, CSR, CSC, CSF:
		v.nnz = C.uint64_t(d.NNZ)
		if d.Layout == COO {
			v.coo_is_sorted = cbool(d.COOSorted)
		}
		if d.Layout == CSF {
			order := d.CSFModeOrder
			if order == nil { // the identity, as writers without a preference should use
				order = make([]uint32, rank)
				for i := range order {
					order[i] = uint32(i)
				}
			}
			v.csf_mode_order, err = ranked[uint32, C.uint32_t](op, pin, "CSFModeOrder", order, rank)
		}
	case BlockPaged:
		if bp := d.BlockPaged; bp != nil {
			f := &C.HurrayBlockPaged{
				num_pages: C.uint64_t(bp.NumPages), page_size: C.uint32_t(bp.PageSize),
				paged_axis: C.uint32_t(bp.PagedAxis), num_seqs: C.uint32_t(bp.NumSeqs),
				layer_index: C.uint32_t(bp.LayerIndex), kv_role: C.uint8_t(bp.KVRole),
			}
			if bp.Index64 {
				f.block_table_index_type = C.HURRAY_INDEX_TYPE_U64
			}
			pin.Pin(f)
			v.block_paged = f
		}
	case CompositeHead:
		if c := d.Composite; c != nil {
			f := &C.HurrayCompositeHead{member_count: C.uint32_t(c.MemberCount), composition_rule: C.uint8_t(c.Rule), combine_op: C.uint8_t(c.Combine)}
			pin.Pin(f)
			v.composite_head = f
		}
	case Hilbert:
		if h := d.Hilbert; h != nil {
			v.hilbert_order, v.hilbert_rank = C.uint32_t(h.Order), C.uint32_t(h.Rank)
		}
	}
	if err != nil {
		return nil, err
	}
	if e := d.Extension; e != nil && d.Layout.IsExtension() {
		v.extension_layout_id = C.uint64_t(e.ID)
		v.extension_layout_data, v.extension_layout_data_len = (*C.uint8_t)(pinned(pin, e.Data)), C.uint64_t(len(e.Data))
	}
	if len(d.Buffers) > 0 {
		entries := make([]C.HurrayBufferEntry, len(d.Buffers))
		for i, be := range d.Buffers {
			if be.Alignment == 0 {
				be.Alignment = 64
			}
			entries[i] = C.HurrayBufferEntry{byte_size: C.uint64_t(be.Size), alignment: C.uint32_t(be.Alignment),
				device_tag: C.uint8_t(be.Device), sync_mode: C.uint8_t(be.Sync), memory_class: C.uint8_t(be.Memory)}
		}
		v.buffers = pinned(pin, entries)
	}
	if q := d.Quantization; q != nil {
		cq := &C.HurrayQuantization{
			scale: C.float(q.Scale), zero_point: C.int32_t(q.ZeroPoint), axis: C.uint32_t(q.Axis),
			block_size: C.uint32_t(q.BlockSize), scale_buffer_index: C.uint32_t(q.ScaleBuffer),
			zero_point_buffer_index: C.uint32_t(q.ZeroPointBuffer), flags: C.uint16_t(q.Flags),
			scheme_tag: C.uint8_t(q.Scheme), scheme_version: C.uint8_t(q.Version),
			scale_type_tag: C.uint8_t(q.ScaleType),
		}
		pin.Pin(cq)
		v.quantization = cq
		v.quantization_trailing, v.quantization_trailing_len = (*C.uint8_t)(pinned(pin, q.Trailing)), C.uint64_t(len(q.Trailing))
	}
	if s := d.Shard; s != nil {
		// build refused ParentShape and Offset of different lengths first.
		if v.shard_parent_shape, err = ranked[uint64, C.uint64_t](op, pin, "Shard.ParentShape", s.ParentShape, rank); err != nil {
			return nil, err
		}
		if v.shard_offset, err = ranked[uint64, C.uint64_t](op, pin, "Shard.Offset", s.Offset, rank); err != nil {
			return nil, err
		}
	}
	if s := d.Statistics; s != nil {
		cs := &C.HurrayStatistics{
			nnz: C.uint64_t(s.NNZ), sparsity_ratio: C.double(s.Sparsity), value_min: C.double(s.Min),
			value_max: C.double(s.Max), value_abs_max: C.double(s.AbsMax), value_mean: C.double(s.Mean),
			value_stddev: C.double(s.Stddev), computed_mask: C.uint32_t(s.Mask),
			nm_n: C.uint8_t(s.NMN), nm_m: C.uint8_t(s.NMM), has_nan: cbool(s.HasNaN), has_inf: cbool(s.HasInf),
		}
		pin.Pin(cs)
		v.statistics = cs
	}
	if e := d.ExtensionType; e != nil {
		ce := &C.HurrayExtensionType{
			bit_width: C.uint32_t(e.BitWidth), exponent_bias: C.uint32_t(e.ExponentBias),
			packing_factor: C.uint8_t(e.PackingFactor), is_float: cbool(e.IsFloat), is_signed: cbool(e.IsSigned),
			sign_bits: C.uint8_t(e.SignBits), exponent_bits: C.uint8_t(e.ExponentBits),
			mantissa_bits: C.uint8_t(e.MantissaBits), has_nan: cbool(e.HasNaN), has_inf: cbool(e.HasInf),
		}
		pin.Pin(ce)
		v.extension_type = ce
	}
	if d.MemberRole != NoMemberRole {
		v.has_member_role, v.member_role = 1, C.uint8_t(d.MemberRole-1)
		if d.MemberRole > BaseMember {
			v.member_role = 0xFF // out of range: the library reports it
		}
	}
	return v, nil
}

func cbool(b bool) C.uint8_t {
	if b {
		return 1
	}
	return 0
}

// readDescriptor converts a live C descriptor into a Descriptor.
func readDescriptor(p *C.HurrayDescriptor) Descriptor { return withView(p, fromView) }

// withView runs f on the borrowed view of p (one C call). A descriptor made by
// another copy of the library is decoded from its frozen encoded bytes into one of
// this copy first; f must not keep the view.
func withView[R any](p *C.HurrayDescriptor, f func(*C.HurrayDescriptorView) R) R {
	var v *C.HurrayDescriptorView
	if C.hurray_descriptor_view(p, &v) == C.HURRAY_OK {
		return f(v)
	}
	b := encodeDescriptor(p)
	var own *C.HurrayDescriptor
	must("hurray_descriptor_decode", C.hurray_descriptor_decode(bytesPtr(b), C.uint64_t(len(b)), &own))
	defer C.hurray_descriptor_destroy(&own)
	must("hurray_descriptor_view", C.hurray_descriptor_view(own, &v))
	return f(v)
}

// bufferEntry converts entry i of a view's buffer table (i < buffer_count).
func bufferEntry(v *C.HurrayDescriptorView, i int) BufferEntry {
	e := unsafe.Slice(v.buffers, int(v.header.buffer_count))[i]
	return BufferEntry{Size: uint64(e.byte_size), Alignment: uint32(e.alignment),
		Device: Device(e.device_tag), Sync: SyncMode(e.sync_mode), Memory: MemoryClass(e.memory_class)}
}

// cSlice copies n values at p (a C array whose element has G's layout) into a new
// []G (nil when n is 0).
func cSlice[G any, T any](p *T, n int) []G {
	if n == 0 || p == nil {
		return nil
	}
	src := unsafe.Slice(p, n)
	out := make([]G, n)
	for i := range src {
		out[i] = *(*G)(unsafe.Pointer(&src[i]))
	}
	return out
}

// fromView converts a borrowed HurrayDescriptorView (one C call gave all of it)
// into a Descriptor that owns its slices.
func fromView(v *C.HurrayDescriptorView) Descriptor {
	h := v.header
	rank := int(h.rank)
	d := Descriptor{
		DType:        DType(h.type_tag),
		Layout:       Layout(h.layout_tag),
		ByteOffset:   uint64(h.byte_offset),
		VersionMinor: uint8(h.version_minor),
		Shape:        make([]uint64, rank),
	}
	copy(d.Shape, cSlice[uint64](v.shape, rank))
	if n := int(h.buffer_count); n > 0 {
		d.Buffers = make([]BufferEntry, n)
		for i := range d.Buffers {
			d.Buffers[i] = bufferEntry(v, i)
		}
	}
	switch d.Layout {
	case Strided:
		d.Strides = make([]int64, rank)
		copy(d.Strides, cSlice[int64](v.strides, rank))
	case Tiled:
		for _, l := range unsafe.Slice(v.tiling, int(v.tiling_depth)) {
			t := TileLevel{Shape: make([]uint64, rank), OuterOrder: TileOrder(l.outer_order), InnerOrder: TileOrder(l.inner_order)}
			copy(t.Shape, cSlice[uint64](l.tile_shape, rank))
			if t.OuterOrder == TileStrided {
				t.OuterStrides = make([]int64, rank)
				copy(t.OuterStrides, cSlice[int64](l.outer_strides, rank))
			}
			if t.InnerOrder == TileStrided {
				t.InnerStrides = make([]int64, rank)
				copy(t.InnerStrides, cSlice[int64](l.inner_strides, rank))
			}
			d.Tiling = append(d.Tiling, t)
		}
	case Morton:
		d.MortonBits = make([]uint32, rank)
		copy(d.MortonBits, cSlice[uint32](v.morton_bits, rank))
	case COO, CSR, CSC, CSF:
		d.NNZ = uint64(v.nnz)
		d.COOSorted = d.Layout == COO && v.coo_is_sorted != 0
		if d.Layout == CSF {
			d.CSFModeOrder = make([]uint32, rank)
			copy(d.CSFModeOrder, cSlice[uint32](v.csf_mode_order, rank))
		}
	case BlockPaged:
		f := v.block_paged
		d.BlockPaged = &BlockPagedFields{NumPages: uint64(f.num_pages), PageSize: uint32(f.page_size),
			PagedAxis: uint32(f.paged_axis), NumSeqs: uint32(f.num_seqs), LayerIndex: uint32(f.layer_index),
			KVRole: KVRole(f.kv_role), Index64: f.block_table_index_type == C.HURRAY_INDEX_TYPE_U64}
	case CompositeHead:
		f := v.composite_head
		d.Composite = &CompositeFields{MemberCount: uint32(f.member_count), Rule: CompositionRule(f.composition_rule), Combine: CombineOp(f.combine_op)}
	case Hilbert:
		d.Hilbert = &HilbertFields{Order: uint32(v.hilbert_order), Rank: uint32(v.hilbert_rank)}
	}
	if d.Layout.IsExtension() {
		d.Extension = &ExtensionLayout{ID: uint64(v.extension_layout_id),
			Data: append([]byte{}, cSlice[byte](v.extension_layout_data, int(v.extension_layout_data_len))...)}
	}
	if q := v.quantization; q != nil {
		d.Quantization = &Quantization{Scheme: Scheme(q.scheme_tag), Version: uint8(q.scheme_version), Flags: uint16(q.flags),
			Scale: float32(q.scale), ZeroPoint: int32(q.zero_point), Axis: uint32(q.axis), BlockSize: uint32(q.block_size),
			ScaleBuffer: uint32(q.scale_buffer_index), ZeroPointBuffer: uint32(q.zero_point_buffer_index),
			ScaleType: ScaleType(q.scale_type_tag),
			Trailing:  cSlice[byte](v.quantization_trailing, int(v.quantization_trailing_len))}
	}
	if uint32(h.flags)&C.HURRAY_FLAG_HAS_SHARD != 0 {
		s := &Shard{ParentShape: make([]uint64, rank), Offset: make([]uint64, rank)}
		copy(s.ParentShape, cSlice[uint64](v.shard_parent_shape, rank))
		copy(s.Offset, cSlice[uint64](v.shard_offset, rank))
		d.Shard = s
	}
	if s := v.statistics; s != nil {
		d.Statistics = &Statistics{Mask: StatMask(s.computed_mask), NNZ: uint64(s.nnz), Sparsity: float64(s.sparsity_ratio),
			Min: float64(s.value_min), Max: float64(s.value_max), AbsMax: float64(s.value_abs_max),
			Mean: float64(s.value_mean), Stddev: float64(s.value_stddev), NMN: uint8(s.nm_n), NMM: uint8(s.nm_m),
			HasNaN: s.has_nan != 0, HasInf: s.has_inf != 0}
	}
	if e := v.extension_type; e != nil {
		d.ExtensionType = &ExtensionType{BitWidth: uint32(e.bit_width), ExponentBias: uint32(e.exponent_bias),
			PackingFactor: uint8(e.packing_factor), IsFloat: e.is_float != 0, IsSigned: e.is_signed != 0,
			SignBits: uint8(e.sign_bits), ExponentBits: uint8(e.exponent_bits), MantissaBits: uint8(e.mantissa_bits),
			HasNaN: e.has_nan != 0, HasInf: e.has_inf != 0}
	}
	if v.has_member_role != 0 {
		d.MemberRole = MemberRole(v.member_role) + 1
	}
	return d
}

// String summarises the descriptor: "float32[2 3] row_major".
func (d Descriptor) String() string {
	dims := ""
	for i, s := range d.Shape {
		if i > 0 {
			dims += " "
		}
		if s == DimDynamic {
			dims += "?"
		} else {
			dims += fmt.Sprint(s)
		}
	}
	return fmt.Sprintf("%s[%s] %s", d.DType, dims, d.Layout)
}
