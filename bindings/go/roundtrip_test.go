package hurray

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A round-trip case: a named item made over Go memory.
type rtCase struct {
	name string
	make func(t *testing.T) *Item
}

func mustTensor(t testing.TB, d Descriptor, buffers ...[]byte) *Tensor {
	t.Helper()
	tensor, err := NewTensor(d, buffers)
	if err != nil {
		t.Fatalf("NewTensor(%v): %v", d, err)
	}
	return tensor
}

func mustItem(t testing.TB, tensor *Tensor) *Item {
	t.Helper()
	it, err := NewItem(tensor)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func u64s(v ...uint64) []uint64 {
	out := Make[uint64](len(v))
	copy(out, v)
	return out
}

func f32s(v ...float32) []float32 {
	out := Make[float32](len(v))
	copy(out, v)
	return out
}

func i8s(v ...int8) []int8 {
	out := Make[int8](len(v))
	copy(out, v)
	return out
}

// shardMember is a row-major float32 member of shape shape at offset in parent.
func shardMember(t testing.TB, parent, shape, offset []uint64, base float32) *Item {
	n := int(shape[0] * shape[1])
	d := Descriptor{DType: Float32, Layout: RowMajor, Shape: shape,
		Buffers: []BufferEntry{{Size: uint64(4 * n)}},
		Shard:   &Shard{ParentShape: parent, Offset: offset}}
	return mustItem(t, mustTensor(t, d, AsBytes(fill(n, base))))
}

func partition(t testing.TB) *Item {
	head := mustTensor(t, Descriptor{DType: Float32, Layout: CompositeHead, Shape: []uint64{4, 4},
		Composite: &CompositeFields{MemberCount: 2, Rule: Partition}})
	parent := []uint64{4, 4}
	it, err := NewComposite(head,
		shardMember(t, parent, []uint64{4, 2}, []uint64{0, 0}, 0),
		shardMember(t, parent, []uint64{4, 2}, []uint64{0, 2}, 100))
	if err != nil {
		t.Fatal(err)
	}
	return it
}

var rtCases = []rtCase{
	{"dense_f32_2x3", func(t *testing.T) *Item {
		tensor, err := NewDense(fill(6, 1), []uint64{2, 3})
		if err != nil {
			t.Fatal(err)
		}
		return mustItem(t, tensor)
	}},
	{"dense_i64_scalar", func(t *testing.T) *Item {
		v := Make[int64](1)
		v[0] = -42
		tensor, err := NewDense(v, []uint64{})
		if err != nil {
			t.Fatal(err)
		}
		return mustItem(t, tensor)
	}},
	{"dense_u8_large", func(t *testing.T) *Item {
		v := Make[uint8](1 << 20)
		for i := range v {
			v[i] = byte(i * 7)
		}
		tensor, err := NewDense(v, []uint64{1024, 1024})
		if err != nil {
			t.Fatal(err)
		}
		return mustItem(t, tensor)
	}},
	{"strided_with_shard_and_statistics", func(t *testing.T) *Item {
		d := Descriptor{DType: Float32, Layout: Strided, Shape: []uint64{3, 4}, Strides: []int64{1, 3},
			Buffers:    []BufferEntry{{Size: 48}},
			Shard:      &Shard{ParentShape: []uint64{6, 4}, Offset: []uint64{3, 0}},
			Statistics: &Statistics{Mask: StatValueRange | StatNNZ | StatNaNInf, NNZ: 11, Min: 0, Max: 11, AbsMax: 11}}
		return mustItem(t, mustTensor(t, d, AsBytes(fill(12, 0))))
	}},
	{"empty_f32_0x4", func(t *testing.T) *Item {
		tensor, err := NewDense(Make[float32](0), []uint64{0, 4})
		if err != nil {
			t.Fatal(err)
		}
		return mustItem(t, tensor)
	}},
	{"sparse_coo_4x4", func(t *testing.T) *Item {
		d := Descriptor{DType: Float32, Layout: COO, Shape: []uint64{4, 4}, NNZ: 3, COOSorted: true,
			Buffers: []BufferEntry{{Size: 12}, {Size: 48}}}
		return mustItem(t, mustTensor(t, d, AsBytes(f32s(1.5, -0.5, 2)), AsBytes(u64s(0, 1, 2, 0, 3, 3))))
	}},
	{"sparse_csr_4x5", func(t *testing.T) *Item {
		d := Descriptor{DType: Float32, Layout: CSR, Shape: []uint64{4, 5}, NNZ: 5,
			Buffers: []BufferEntry{{Size: 20}, {Size: 40}, {Size: 40}}}
		return mustItem(t, mustTensor(t, d, AsBytes(f32s(1, 2, 3, 4, 5)), AsBytes(u64s(0, 3, 2, 1, 4)), AsBytes(u64s(0, 2, 3, 5, 5))))
	}},
	{"sparse_csr_empty", func(t *testing.T) *Item {
		d := Descriptor{DType: Float32, Layout: CSR, Shape: []uint64{2, 3}, NNZ: 0,
			Buffers: []BufferEntry{{Size: 0}, {Size: 0}, {Size: 24}}}
		return mustItem(t, mustTensor(t, d, nil, nil, AsBytes(u64s(0, 0, 0))))
	}},
	{"quantized_per_tensor_int8", func(t *testing.T) *Item {
		d := Descriptor{DType: Int8, Layout: RowMajor, Shape: []uint64{4}, Buffers: []BufferEntry{{Size: 4}},
			Quantization: &Quantization{Scheme: PerTensorAffine, Scale: 0.5, ZeroPoint: 1,
				ScaleBuffer: NoBuffer, ZeroPointBuffer: NoBuffer}}
		return mustItem(t, mustTensor(t, d, AsBytes(i8s(-3, 0, 5, 127))))
	}},
	{"quantized_per_channel_int8", func(t *testing.T) *Item {
		d := Descriptor{DType: Int8, Layout: RowMajor, Shape: []uint64{2, 3}, Buffers: []BufferEntry{{Size: 6}, {Size: 8}},
			Quantization: &Quantization{Scheme: PerChannelAffine, Axis: 0, ScaleBuffer: 1,
				ZeroPointBuffer: NoBuffer, ScaleType: ScaleF32}}
		return mustItem(t, mustTensor(t, d, AsBytes(i8s(1, 2, 3, -4, -5, -6)), AsBytes(f32s(0.25, 0.125))))
	}},
	{"composite_partition", func(t *testing.T) *Item { return partition(t) }},
	{"composite_nested_group", func(t *testing.T) *Item {
		head := mustTensor(t, Descriptor{DType: Float32, Layout: CompositeHead, Shape: []uint64{4, 4},
			Composite: &CompositeFields{MemberCount: 2, Rule: Group}})
		plain, err := NewDense(fill(3, 7), nil)
		if err != nil {
			t.Fatal(err)
		}
		it, err := NewComposite(head, mustItem(t, plain), partition(t))
		if err != nil {
			t.Fatal(err)
		}
		return it
	}},
}

// sameItem compares two items: composite structure, descriptor bytes and buffer
// contents, recursively.
func sameItem(t testing.TB, path string, want, got *Item) {
	t.Helper()
	if want.IsComposite() != got.IsComposite() || want.Len() != got.Len() {
		t.Fatalf("%s: composite %v/%d members, want %v/%d", path, got.IsComposite(), got.Len(), want.IsComposite(), want.Len())
	}
	sameTensor(t, path, want.Tensor(), got.Tensor())
	for i := 0; i < want.Len(); i++ {
		sameItem(t, fmt.Sprintf("%s/%d", path, i), want.Member(i), got.Member(i))
	}
}

func sameTensor(t testing.TB, path string, want, got *Tensor) {
	t.Helper()
	if !bytes.Equal(want.DescriptorBytes(), got.DescriptorBytes()) {
		t.Errorf("%s: descriptor %v, want %v", path, got.Descriptor(), want.Descriptor())
	}
	if !reflect.DeepEqual(want.Descriptor(), got.Descriptor()) {
		t.Errorf("%s: Descriptor() values differ:\n got %+v\nwant %+v", path, got.Descriptor(), want.Descriptor())
	}
	for i := 0; i < want.NumBuffers(); i++ {
		w, g := want.Bytes(i), got.UnsafeBytes(i) // g: the memory itself, to check its alignment
		if !bytes.Equal(w, g) {
			t.Errorf("%s: buffer %d differs (%d bytes, want %d)", path, i, len(g), len(w))
		}
		if len(g) > 0 && uintptr(ptrOf(g))%uintptr(got.Buffer(i).Alignment) != 0 {
			t.Errorf("%s: buffer %d is not aligned to %d", path, i, got.Buffer(i).Alignment)
		}
	}
}

// makeCases builds every round-trip case; the caller closes them.
func makeCases(t *testing.T) []*Item {
	items := make([]*Item, len(rtCases))
	for i, c := range rtCases {
		items[i] = c.make(t)
	}
	return items
}

func closeAll(t testing.TB, items []*Item) {
	for _, it := range items {
		if err := it.Close(); err != nil {
			t.Error(err)
		}
	}
}

var kvCases = []KV{
	{"string", "hurray"},
	{"int64", int64(-7)},
	{"uint64", uint64(1) << 63},
	{"float64", 3.25},
	{"bool", true},
	{"bytes", []byte{0, 1, 2}},
	{"empty bytes", []byte{}},
	{"ints", []int64{1, -2, 3}},
	{"uints", []uint64{4, 5}},
	{"floats", []float64{0.5, -1}},
	{"bools", []bool{true, false, true}},
	{"strings", []string{"a", "", "ccc"}},
	{"byte strings", [][]byte{{1}, {}, {2, 3}}},
	{"no ints", []int64{}},
}

func TestFileRoundTrip(t *testing.T) {
	items := makeCases(t)
	path := filepath.Join(t.TempDir(), "roundtrip.hrry")
	w, err := CreateFile(path, &WriteOptions{NoSync: true, SortedIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range rtCases {
		if err := w.WriteItem(c.name, items[i]); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	// A plain tensor through WriteTensor, too.
	plain, err := NewDense(fill(5, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensor("plain", plain); err != nil {
		t.Fatal(err)
	}
	for _, kv := range kvCases {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatalf("AddKV(%q): %v", kv.Key, err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file appeared before Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info := f.Info()
	if !info.CRCVerified || info.DataAlignment != 4096 {
		t.Errorf("info %+v", info)
	}
	got := make([]*Item, len(rtCases))
	for i, c := range rtCases {
		if got[i], err = f.Item(c.name); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	gotPlain, err := f.Tensor("plain")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := f.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	// Items and tensors outlive the reader.
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for i, c := range rtCases {
		sameItem(t, c.name, items[i], got[i])
	}
	sameTensor(t, "plain", plain, gotPlain)
	if !reflect.DeepEqual(meta, kvCases) {
		t.Errorf("metadata\n got %#v\nwant %#v", meta, kvCases)
	}
	checkKVWindows(t, path)
	// Member names are head/0, head/1, ...
	f2, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := f2.Tensor("composite_nested_group/1/0")
	if err != nil {
		t.Fatalf("member by name: %v (names %v)", err, f2.Names())
	}
	if s := m.Shard(); s == nil || !equalSlices(s.Offset, []uint64{0, 0}) {
		t.Errorf("member shard %+v", s)
	}
	m.Close()
	f2.Close()
	closeAll(t, got)
	closeAll(t, items)
	plain.Close()
	gotPlain.Close()
	requireNoLeaks(t)
}

// checkKVWindows checks Keys, ValueLen and ValueRange against kvCases.
func checkKVWindows(t *testing.T, path string) {
	t.Helper()
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys, err := f.Keys()
	if err != nil {
		t.Fatal(err)
	}
	for i, kv := range kvCases {
		if i >= len(keys) || keys[i] != kv.Key {
			t.Fatalf("Keys() = %q, want the keys of kvCases in order", keys)
		}
		n, err := f.ValueLen(kv.Key)
		want := reflect.ValueOf(kv.Value)
		switch {
		case err != nil:
			t.Fatalf("ValueLen(%q): %v", kv.Key, err)
		case want.Kind() == reflect.Slice || want.Kind() == reflect.String:
			if n != want.Len() {
				t.Errorf("ValueLen(%q) = %d, want %d", kv.Key, n, want.Len())
			}
		case n != 1:
			t.Errorf("ValueLen(%q) = %d, want 1", kv.Key, n)
		}
		_, isBytes := kv.Value.([]byte)
		if want.Kind() != reflect.Slice || isBytes {
			if _, err := f.ValueRange(kv.Key, 0, 0); !errors.Is(err, ErrNotApplicable) {
				t.Errorf("ValueRange(%q) of a scalar: %v, want ErrNotApplicable", kv.Key, err)
			}
			continue
		}
		// Every window of every length gives those elements.
		for start := 0; start <= n; start++ {
			for count := 0; start+count <= n; count++ {
				got, err := f.ValueRange(kv.Key, start, count)
				if err != nil {
					t.Fatalf("ValueRange(%q, %d, %d): %v", kv.Key, start, count, err)
				}
				w := want.Slice(start, start+count).Interface()
				if !reflect.DeepEqual(got, w) {
					t.Errorf("ValueRange(%q, %d, %d) = %#v, want %#v", kv.Key, start, count, got, w)
				}
			}
		}
		if _, err := f.ValueRange(kv.Key, n, 1); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("ValueRange(%q) past the end: %v, want ErrOutOfRange", kv.Key, err)
		}
		if _, err := f.ValueRange(kv.Key, -1, 1); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("ValueRange(%q) from -1: %v, want ErrOutOfRange", kv.Key, err)
		}
	}
	if _, err := f.ValueLen("no such key"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ValueLen(missing): %v, want ErrNotFound", err)
	}
}

// writeAll writes every item to w, then closes w (when it is a Closer), and
// reports the first error.
func writeAll(w io.Writer, items []*Item) error {
	sw := NewWriter(w)
	var err error
	for _, it := range items {
		if err = sw.WriteItem(it); err != nil {
			break
		}
	}
	if cerr := sw.Close(); err == nil {
		err = cerr
	}
	if c, ok := w.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// readAll reads items until io.EOF.
func readAll(r io.Reader) ([]*Item, error) {
	sr := NewReader(r)
	defer sr.Close()
	var out []*Item
	for {
		it, err := sr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, it)
	}
}

func TestStreamRoundTrip(t *testing.T) {
	transports := map[string]func() (io.Reader, io.Writer, func()){
		"bytes.Buffer": nil, // sequential: write everything, then read
		"os.Pipe": func() (io.Reader, io.Writer, func()) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			return r, w, func() { r.Close() }
		},
		"net.Pipe": func() (io.Reader, io.Writer, func()) {
			r, w := net.Pipe()
			return r, w, func() { r.Close() }
		},
	}
	for name, open := range transports {
		t.Run(name, func(t *testing.T) {
			items := makeCases(t)
			defer closeAll(t, items)
			var got []*Item
			var err error
			if open == nil {
				var buf bytes.Buffer
				if err := writeAll(&buf, items); err != nil {
					t.Fatal(err)
				}
				got, err = readAll(&buf)
			} else {
				r, w, done := open()
				defer done()
				werr := make(chan error, 1)
				go func() { werr <- writeAll(w, items) }()
				got, err = readAll(r)
				if e := <-werr; e != nil {
					t.Fatalf("writer: %v", e)
				}
			}
			defer closeAll(t, got)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(items) {
				t.Fatalf("read %d items, wrote %d", len(got), len(items))
			}
			for i, c := range rtCases {
				sameItem(t, c.name, items[i], got[i])
			}
		})
	}
	requireNoLeaks(t)
}

// TestStreamTensors uses WriteTensor / NextTensor, and checks NextTensor leaves a
// composite for Next.
func TestStreamTensors(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	a, _ := NewDense(fill(4, 0), nil)
	b, _ := NewDense(fill(2, 9), []uint64{1, 2})
	comp := partition(t)
	for _, x := range []*Tensor{a, b} {
		if err := w.WriteTensor(x); err != nil {
			t.Fatal(err)
		}
	}
	// A writer's mistake: ErrFormat (never a truncation), and nothing is written.
	if err := w.WriteTensor(comp.Tensor()); !isStatus(err, StatusFormat) {
		t.Errorf("WriteTensor(composite head) = %v, want ErrFormat", err)
	}
	if err := w.WriteItem(comp); err != nil {
		t.Fatal(err)
	}
	if w.Offset() != int64(buf.Len()) {
		t.Errorf("Offset %d, wrote %d", w.Offset(), buf.Len())
	}
	w.Close()
	total := int64(buf.Len())

	r := NewReader(&buf)
	for _, want := range []*Tensor{a, b} {
		got, err := r.NextTensor()
		if err != nil {
			t.Fatal(err)
		}
		sameTensor(t, "tensor", want, got)
		got.Close()
	}
	if _, err := r.NextTensor(); !isStatus(err, StatusNotApplicable) {
		t.Fatalf("NextTensor on a composite = %v, want ErrNotApplicable", err)
	}
	it, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	sameItem(t, "composite", comp, it)
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next at the end = %v, want io.EOF", err)
	}
	if r.Offset() != total {
		t.Errorf("reader Offset %d, want %d", r.Offset(), total)
	}
	r.Close()
	it.Close()
	comp.Close()
	a.Close()
	b.Close()
	requireNoLeaks(t)
}
