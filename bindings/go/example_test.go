package hurray_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	hurray "github.com/hurray-dev/hurray/bindings/go"
)

// Wrap Go memory as a tensor, send it through a stream, and read it back.
func Example() {
	data := hurray.Make[float32](6) // 64-byte aligned, as buffers must be
	for i := range data {
		data[i] = float32(i) / 2
	}
	t, err := hurray.NewDense(data, []uint64{2, 3}) // no copy: data is pinned
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()

	var stream bytes.Buffer
	w := hurray.NewWriter(&stream)
	if err := w.WriteTensor(t); err != nil {
		log.Fatal(err)
	}
	w.Close()

	r := hurray.NewReader(&stream)
	defer r.Close()
	got, err := r.NextTensor()
	if err != nil {
		log.Fatal(err)
	}
	defer got.Close()
	values, _ := got.Float32s() // a copy: valid whatever happens to got
	fmt.Println(got.DType(), got.Shape(), values)
	// Output: float32 [2 3] [0 0.5 1 1.5 2 2.5]
}

// Write a file with a tensor and metadata; it appears atomically on Close.
func ExampleCreateFile() {
	dir, _ := os.MkdirTemp("", "hurray-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.hrry")

	bias := hurray.Make[int64](3)
	copy(bias, []int64{1, 2, 3})
	t, _ := hurray.NewDense(bias, nil)
	defer t.Close()

	w, err := hurray.CreateFile(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	w.WriteTensor("layer0.bias", t)
	w.AddKV("producer", "example")
	w.AddKV("epoch", int64(12))
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	f, err := hurray.OpenFile(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println(f.Names())
	meta, _ := f.Metadata()
	for _, kv := range meta {
		fmt.Printf("%s = %v\n", kv.Key, kv.Value)
	}
	// Output:
	// [layer0.bias]
	// producer = example
	// epoch = 12
}

// Open a file and read a tensor by name: its values without a copy inside a
// callback (WithFloat32s), or as a copy (Float32s).
func ExampleOpenFile() {
	path := writeSample()
	defer os.Remove(path)

	f, err := hurray.OpenFile(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	t, err := f.Tensor("weights")
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close() // the tensor may outlive f: it holds its own reference to the mapping
	var sum float32
	err = t.WithFloat32s(func(v []float32) error { // v is the mapping itself, only during the callback
		for _, x := range v {
			sum += x
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	w, _ := t.Float32s() // a copy
	fmt.Println(t, w, sum)

	if _, err := f.Tensor("missing"); errors.Is(err, hurray.ErrNotFound) {
		fmt.Println("no tensor named missing")
	}
	// Output:
	// Tensor(float32[2 2] row_major) [1 2 3 4] 10
	// no tensor named missing
}

// Read every item of a stream until io.EOF.
func ExampleReader_Next() {
	var stream bytes.Buffer
	w := hurray.NewWriter(&stream)
	for i := 0; i < 3; i++ {
		v := hurray.Make[uint8](4)
		v[0] = byte(i)
		t, _ := hurray.NewDense(v, nil)
		w.WriteTensor(t)
		t.Close()
	}
	w.Close()

	r := hurray.NewReader(&stream)
	defer r.Close()
	for {
		item, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err) // a cut stream gives an error matching io.ErrUnexpectedEOF
		}
		b, _ := item.Tensor().Uint8s()
		fmt.Println(item.IsComposite(), b)
		item.Close()
	}
	// Output:
	// false [0 0 0 0]
	// false [1 0 0 0]
	// false [2 0 0 0]
}

// Describe a sparse tensor (CSR) and wrap its three buffers.
func ExampleNewTensor() {
	values := hurray.Make[float32](3)
	copy(values, []float32{1, 2, 3})
	cols := hurray.Make[uint64](3)
	copy(cols, []uint64{0, 2, 1})
	rows := hurray.Make[uint64](3)
	copy(rows, []uint64{0, 2, 3})

	d := hurray.Descriptor{
		DType: hurray.Float32, Layout: hurray.CSR, Shape: []uint64{2, 3}, NNZ: 3,
		Buffers: []hurray.BufferEntry{{Size: 12}, {Size: 24}, {Size: 24}},
	}
	t, err := hurray.NewTensor(d, [][]byte{bytesOf(values), bytesOf(cols), bytesOf(rows)},
		hurray.OnRelease(func() { fmt.Println("released") }))
	if err != nil {
		log.Fatal(err)
	}
	ptr, _ := hurray.BufferValues[uint64](t, 2)
	fmt.Println(t, t.Descriptor().NNZ, ptr)
	t.Close()
	// Output:
	// Tensor(float32[2 3] csr) 3 [0 2 3]
	// released
}

// Build a partition composite: two [2,2] halves of a [2,4] tensor.
func ExampleNewComposite() {
	head, _ := hurray.NewTensor(hurray.Descriptor{
		DType: hurray.Float32, Layout: hurray.CompositeHead, Shape: []uint64{2, 4},
		Composite: &hurray.CompositeFields{MemberCount: 2, Rule: hurray.Partition},
	}, nil)
	var members []*hurray.Item
	for k := uint64(0); k < 2; k++ {
		d := hurray.Descriptor{
			DType: hurray.Float32, Layout: hurray.RowMajor, Shape: []uint64{2, 2},
			Buffers: []hurray.BufferEntry{{Size: 16}},
			Shard:   &hurray.Shard{ParentShape: []uint64{2, 4}, Offset: []uint64{0, 2 * k}},
		}
		t, _ := hurray.NewTensor(d, [][]byte{make16Aligned()})
		item, _ := hurray.NewItem(t) // t is moved into the item
		members = append(members, item)
	}
	comp, err := hurray.NewComposite(head, members...)
	if err != nil {
		log.Fatal(err)
	}
	defer comp.Close()
	for i, m := range comp.Members() {
		fmt.Println(i, m.Tensor().Shard().Offset)
	}
	// Output:
	// 0 [0 0]
	// 1 [0 2]
}

// Errors carry the status code and the library's message; test them with errors.Is.
func ExampleError() {
	_, err := hurray.DecodeDescriptor([]byte("not a descriptor"))
	var e *hurray.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, errors.Is(err, hurray.ErrDescriptor))
	}
	// Output: HURRAY_ERR_DESCRIPTOR true
}

func bytesOf[T float32 | uint64](s []T) []byte {
	return hurray.AsBytes(s)
}

func make16Aligned() []byte { return hurray.Make[byte](16) }

// writeSample writes a file with a float32 [2,2] "weights" tensor.
func writeSample() string {
	f, _ := os.CreateTemp("", "hurray-*.hrry")
	f.Close()
	v := hurray.Make[float32](4)
	copy(v, []float32{1, 2, 3, 4})
	t, _ := hurray.NewDense(v, []uint64{2, 2})
	defer t.Close()
	w, _ := hurray.CreateFile(f.Name(), &hurray.WriteOptions{NoSync: true})
	w.WriteTensor("weights", t)
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	return f.Name()
}

// Make float16 and bfloat16 tensors from float32 values (their bits in a
// []uint16), and read them back.
func ExampleNewDense_float16() {
	bits := hurray.Float32sToFloat16s([]float32{1, 0.1, -2})
	t, err := hurray.NewDense(bits, nil, hurray.AsDType(hurray.Float16))
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()
	got, _ := t.Float16Bits()
	fmt.Println(t.DType(), hurray.Float16sToFloat32s(got))

	b, _ := hurray.NewDense(hurray.Float32sToBFloat16s([]float32{1, 0.1, -2}), nil, hurray.AsDType(hurray.BFloat16))
	defer b.Close()
	bb, _ := b.BFloat16Bits()
	fmt.Println(b.DType(), hurray.BFloat16sToFloat32s(bb))
	// Output:
	// float16 [1 0.099975586 -2]
	// bfloat16 [1 0.100097656 -2]
}

// Booleans are packed 8 per byte in the format; NewDense packs a []bool and
// Bools unpacks.
func ExampleTensor_Bools() {
	t, err := hurray.NewDense([]bool{true, false, true}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()
	v, _ := t.Bools()
	fmt.Println(t, v, t.Bytes(0)[0])
	// Output: Tensor(bool[3] row_major) [true false true] 5
}
