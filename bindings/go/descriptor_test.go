package hurray

import (
	"reflect"
	"testing"
)

// TestDescriptorSections builds a descriptor of every layout family and optional
// section in one C call (hurray_descriptor_from_view), decodes the encoding again, and expects the same
// Go value back: the view reads what from_view wrote.
func TestDescriptorSections(t *testing.T) {
	cases := map[string]Descriptor{
		"tiled_nested": {DType: Float32, Layout: Tiled, Shape: []uint64{5, 7},
			Tiling: []TileLevel{
				{Shape: []uint64{2, 4}, OuterOrder: TileRowMajor, InnerOrder: TileNested},
				{Shape: []uint64{1, 2}, OuterOrder: TileStrided, OuterStrides: []int64{2, 1}, InnerOrder: TileColumnMajor},
			},
			Buffers: []BufferEntry{{Size: 192, Alignment: 64}}},
		"tiled_strided_inner": {DType: Float32, Layout: Tiled, Shape: []uint64{4, 4},
			Tiling:  []TileLevel{{Shape: []uint64{2, 2}, OuterOrder: TileColumnMajor, InnerOrder: TileStrided, InnerStrides: []int64{1, 2}}},
			Buffers: []BufferEntry{{Size: 64, Alignment: 64}}},
		"morton": {DType: Float32, Layout: Morton, Shape: []uint64{4, 4}, MortonBits: []uint32{2, 2},
			Buffers: []BufferEntry{{Size: 64, Alignment: 64}}},
		"hilbert": {DType: Float32, Layout: Hilbert, Shape: []uint64{4, 4}, Hilbert: &HilbertFields{Order: 2, Rank: 2},
			Buffers: []BufferEntry{{Size: 64, Alignment: 64}}},
		"csf": {DType: Float32, Layout: CSF, Shape: []uint64{2, 3, 4}, NNZ: 0, CSFModeOrder: []uint32{2, 0, 1},
			Buffers: []BufferEntry{{Alignment: 64}, {Size: 16, Alignment: 64}, {Alignment: 64},
				{Size: 8, Alignment: 64}, {Alignment: 64}, {Size: 8, Alignment: 64}, {Alignment: 64}}},
		"column_major_f64_with_shard": {DType: Float64, Layout: ColumnMajor, Shape: []uint64{2, 2},
			Shard:   &Shard{ParentShape: []uint64{4, 2}, Offset: []uint64{2, 0}},
			Buffers: []BufferEntry{{Size: 32, Alignment: 4096}}},
		"statistics": {DType: Float32, Layout: RowMajor, Shape: []uint64{4}, Buffers: []BufferEntry{{Size: 16, Alignment: 64}},
			Statistics: &Statistics{Mask: StatNNZ | StatSparsity | StatValueRange | StatValueStats | StatNMSparsity | StatNaNInf,
				NNZ: 2, Sparsity: 0.5, Min: -1, Max: 2, AbsMax: 2, Mean: 0.25, Stddev: 1.1, NMN: 2, NMM: 4, HasNaN: false, HasInf: true}},
		"per_block_int4": {DType: Int4, Layout: RowMajor, Shape: []uint64{128, 128},
			Buffers: []BufferEntry{{Size: 8192, Alignment: 64}, {Size: 256, Alignment: 64}},
			Quantization: &Quantization{Scheme: PerBlockAffine, Version: 1, Flags: 1, Axis: 1, BlockSize: 128,
				ScaleBuffer: 1, ZeroPointBuffer: NoBuffer, ScaleType: ScaleF16}},
		"per_channel_asymmetric": {DType: Uint8, Layout: RowMajor, Shape: []uint64{2, 3},
			Buffers: []BufferEntry{{Size: 6, Alignment: 64}, {Size: 8, Alignment: 64}, {Size: 8, Alignment: 64}},
			Quantization: &Quantization{Scheme: PerChannelAffine, Version: 1, Axis: 0,
				ScaleBuffer: 1, ZeroPointBuffer: 2, ScaleType: ScaleF32}},
		"overlay_member": {DType: Float32, Layout: RowMajor, Shape: []uint64{2, 2}, MemberRole: BaseMember,
			Shard:   &Shard{ParentShape: []uint64{2, 2}, Offset: []uint64{0, 0}},
			Buffers: []BufferEntry{{Size: 16, Alignment: 64}}},
		"block_paged": {DType: Float16, Layout: BlockPaged, Shape: []uint64{9, 2, 8},
			BlockPaged: &BlockPagedFields{NumPages: 5, PageSize: 4, NumSeqs: 2, LayerIndex: 3, KVRole: KVKey},
			Buffers:    []BufferEntry{{Size: 640, Alignment: 64}, {Size: 12, Alignment: 64}, {Size: 12, Alignment: 64}}},
		"dynamic_dim": {DType: Float32, Layout: RowMajor, Shape: []uint64{DimDynamic, 4},
			Buffers: []BufferEntry{{Size: 0, Alignment: 64}}},
		"composite_head_overlay": {DType: Float16, Layout: CompositeHead, Shape: []uint64{8, 8},
			Composite: &CompositeFields{MemberCount: 2, Rule: Overlay, Combine: CombineAdd}},
		"private_dtype": {DType: DType(0xF3), Layout: RowMajor, Shape: []uint64{4},
			ExtensionType: &ExtensionType{BitWidth: 8, PackingFactor: 1, IsFloat: true, SignBits: 1, ExponentBits: 4, MantissaBits: 3, ExponentBias: 7, HasNaN: true},
			Buffers:       []BufferEntry{{Size: 4, Alignment: 64}}},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			enc, err := want.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			got, err := DecodeDescriptor(enc)
			if err != nil {
				// Strict decoding refuses private tags; from_view accepted it.
				if want.DType.IsPrivate() && isStatus(err, StatusDescriptor) {
					return
				}
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip\n got %+v\nwant %+v", got, want)
			}
			if got.String() == "" || got.Rank() != len(want.Shape) {
				t.Error("String/Rank")
			}
		})
	}
	requireNoLeaks(t)
}

func TestDescriptorBuilderErrors(t *testing.T) {
	cases := map[string]struct {
		d    Descriptor
		want Status
	}{
		"strides of the wrong length": {Descriptor{DType: Float32, Layout: Strided, Shape: []uint64{2, 2}, Strides: []int64{1},
			Buffers: []BufferEntry{{Size: 16}}}, StatusInvalidArgument},
		"missing tiling":   {Descriptor{DType: Float32, Layout: Tiled, Shape: []uint64{2, 2}, Buffers: []BufferEntry{{Size: 16}}}, StatusInvalidArgument},
		"buffer too small": {Descriptor{DType: Float32, Layout: RowMajor, Shape: []uint64{2, 2}, Buffers: []BufferEntry{{Size: 15}}}, StatusDescriptor},
		"shard of the wrong rank": {Descriptor{DType: Float32, Layout: RowMajor, Shape: []uint64{4}, Buffers: []BufferEntry{{Size: 16}},
			Shard: &Shard{ParentShape: []uint64{8, 1}, Offset: []uint64{0}}}, StatusInvalidArgument},
		"member role out of range": {Descriptor{DType: Float32, Layout: RowMajor, Shape: []uint64{4}, Buffers: []BufferEntry{{Size: 16}},
			MemberRole: MemberRole(7)}, StatusInvalidArgument},
	}
	for name, c := range cases {
		_, err := c.d.Encode()
		var e *Error
		if !errorsAs(err, &e) || e.Status != c.want || e.Message == "" {
			t.Errorf("%s: %v, want %v with a message", name, err, c.want)
		}
	}
	requireNoLeaks(t)
}
