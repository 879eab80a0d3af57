package hurray

// #include "hurray.h"
import "C"

import (
	"fmt"
	"slices"
	"unsafe"
)

// The three ways to read a tensor's data (see "Views" in the package
// documentation):
//
//   - copies (Bytes, Float32s, ..., Values, BufferValues, Bools): Go memory that
//     lives as long as the slice, whatever happens to the tensor;
//   - scoped views (WithBytes, WithFloat32s, ..., WithValues, WithBufferValues):
//     zero-copy slices passed to a callback, during which the tensor cannot be
//     released (a Close waits for the callback to return);
//   - unsafe views (UnsafeBytes, UnsafeValues, UnsafeBufferValues): zero-copy
//     slices valid until the tensor is closed or collected, which the caller must
//     keep within that life.

// rawBuffer returns buffer i over the tensor's memory. t is in use (entered).
func (t *Tensor) rawBuffer(op string, i int) ([]byte, error) {
	var data unsafe.Pointer
	var size C.uint64_t
	if i < 0 || C.hurray_tensor_buffer_data(t.ptr, C.uint64_t(i), &data, &size) != C.HURRAY_OK {
		n := withView(t.desc, func(v *C.HurrayDescriptorView) int { return int(v.header.buffer_count) })
		return nil, &Error{Status: StatusOutOfRange, Op: op,
			Message: fmt.Sprintf("buffer index %d out of range [0, %d)", i, n)}
	}
	if size == 0 || data == nil {
		return []byte{}, nil
	}
	return unsafe.Slice((*byte)(data), int(size)), nil
}

// interpretable refuses typed views of a tensor whose layout this build keeps
// opaque: a private extension layout (0xF0..0xFE) or an unknown tag kept by a
// permissive open. Its buffers have no meaning here (layouts.md §3: a permissive
// reader never interprets them); the Bytes accessors still give the raw bytes to
// pass on. t is in use.
func (t *Tensor) interpretable(op string) error {
	l := Layout(withView(t.desc, func(v *C.HurrayDescriptorView) uint8 { return uint8(v.header.layout_tag) }))
	if _, known := layoutNames[uint8(l)]; known {
		return nil
	}
	return &Error{Status: StatusNotApplicable, Op: op,
		Message: fmt.Sprintf("layout %s is opaque to this library: its buffers cannot be viewed as values (use Bytes for the raw bytes)", l)}
}

// bufferAs returns buffer i as a []T over the tensor's memory, after checking
// that its size is a multiple of T's and its address aligned for T. t is in use.
func bufferAs[T Element](op string, t *Tensor, i int) ([]T, error) {
	b, err := t.rawBuffer(op, i)
	if err != nil {
		return nil, err
	}
	if err := t.interpretable(op); err != nil {
		return nil, err
	}
	var z T
	size := int(unsafe.Sizeof(z))
	if len(b)%size != 0 {
		return nil, invalidArg(op, "buffer %d holds %d bytes, not a multiple of %d", i, len(b), size)
	}
	if len(b) == 0 {
		return []T{}, nil
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%unsafe.Alignof(z) != 0 {
		return nil, invalidArg(op, "buffer %d is not aligned for %T", i, z)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size), nil
}

// valuesAs returns the tensor's values (buffer 0) as a []T over its memory, after
// checking that the element type is want and buffer 0 is in CPU memory. t is in
// use.
func valuesAs[T Element](op string, t *Tensor, want DType) ([]T, error) {
	type head struct {
		dtype DType
		n     int
		dev   Device
	}
	h := withView(t.desc, func(v *C.HurrayDescriptorView) head {
		h := head{dtype: DType(v.header.type_tag), n: int(v.header.buffer_count)}
		if h.n > 0 {
			h.dev = bufferEntry(v, 0).Device
		}
		return h
	})
	if h.dtype != want {
		return nil, invalidArg(op, "tensor holds %s, not %s", h.dtype, want)
	}
	if h.n == 0 {
		return nil, &Error{Status: StatusNotApplicable, Op: op, Message: "the tensor has no buffers"}
	}
	if h.dev != CPU {
		return nil, &Error{Status: StatusNotApplicable, Op: op,
			Message: fmt.Sprintf("buffer 0 lives on %s, not in CPU memory", h.dev)}
	}
	return bufferAs[T](op, t, 0)
}

// scoped runs get on t in use and returns fn's error (or get's).
func scoped[V any](op string, t *Tensor, get func() (V, error), fn func(V) error) error {
	if err := t.live(op); err != nil {
		return err
	}
	defer t.exit()
	v, err := get()
	if err != nil {
		return err
	}
	return fn(v)
}

// copied runs get on t in use and returns a copy of its slice.
func copied[T any](op string, t *Tensor, get func() ([]T, error)) ([]T, error) {
	if err := t.live(op); err != nil {
		return nil, err
	}
	defer t.exit()
	v, err := get()
	if err != nil {
		return nil, err
	}
	return slices.Clone(v), nil
}

// unsafeView runs get on t in use and returns its slice over t's memory.
func unsafeView[T any](op string, t *Tensor, get func() ([]T, error)) ([]T, error) {
	if err := t.live(op); err != nil {
		return nil, err
	}
	defer t.exit()
	v, err := get()
	if err == nil {
		t.dbg.viewed()
	}
	return v, err
}

// Bytes returns a copy of buffer i's bytes (any buffer, any layout). It panics
// when the tensor is closed or i is out of range. The bytes of a buffer that is
// not in CPU memory must not be read: check [Tensor.Buffer] first.
func (t *Tensor) Bytes(i int) []byte {
	const op = "Tensor.Bytes"
	t.use()
	defer t.exit()
	b, err := t.rawBuffer(op, i)
	if err != nil {
		panic(err.Error())
	}
	return slices.Clone(b)
}

// WithBytes runs fn on buffer i's bytes without copying them and returns fn's
// error. The slice is valid only during fn: the tensor cannot be released while fn
// runs (a Close from any goroutine, fn included, takes effect when fn returns), so
// fn must not keep the slice (copy what it needs). A closed tensor gives an error
// wrapping ErrClosed, an index out of range ErrOutOfRange; fn does not run then.
func (t *Tensor) WithBytes(i int, fn func([]byte) error) error {
	const op = "Tensor.WithBytes"
	return scoped(op, t, func() ([]byte, error) { return t.rawBuffer(op, i) }, fn)
}

// UnsafeBytes returns buffer i's bytes without copying: a slice over memory the
// garbage collector does not see. It is valid only until the tensor is closed —
// and a tensor that becomes unreachable is released by its cleanup even while the
// slice is in use, so keep the Tensor reachable (runtime.KeepAlive(t) after the
// slice's last use, or Close it after that use). Reading the slice later reads
// freed memory and can crash the process. Prefer [Tensor.WithBytes]. It panics
// when the tensor is closed or i is out of range.
func (t *Tensor) UnsafeBytes(i int) []byte {
	const op = "Tensor.UnsafeBytes"
	t.use()
	defer t.exit()
	b, err := t.rawBuffer(op, i)
	if err != nil {
		panic(err.Error())
	}
	t.dbg.viewed()
	return b
}

// Values returns a copy of the tensor's values (buffer 0, which holds the
// elements in every layout but a composite head) as a []T, after checking that T
// matches the element type and buffer 0 is in CPU memory. Element [0, ..., 0] of a
// dense layout is at ByteOffset. A closed tensor gives an error wrapping
// ErrClosed.
func Values[T Element](t *Tensor) ([]T, error) {
	const op = "Values"
	return copied(op, t, func() ([]T, error) { return valuesAs[T](op, t, dtypeOf[T]()) })
}

// WithValues runs fn on the tensor's values (see [Values]) without copying them
// and returns fn's error. The slice is valid only during fn (see
// [Tensor.WithBytes]).
func WithValues[T Element](t *Tensor, fn func([]T) error) error {
	const op = "WithValues"
	return scoped(op, t, func() ([]T, error) { return valuesAs[T](op, t, dtypeOf[T]()) }, fn)
}

// UnsafeValues returns the tensor's values (see [Values]) without copying them,
// valid only within the tensor's life as [Tensor.UnsafeBytes] says: keep the
// Tensor reachable while the slice is in use. Prefer [WithValues].
func UnsafeValues[T Element](t *Tensor) ([]T, error) {
	const op = "UnsafeValues"
	return unsafeView(op, t, func() ([]T, error) { return valuesAs[T](op, t, dtypeOf[T]()) })
}

// BufferValues returns a copy of buffer i as a []T (any buffer: index buffers of
// sparse layouts are []uint64, for instance). Its size must be a multiple of T's
// size and its address aligned for T. A closed tensor gives an error wrapping
// ErrClosed, an index out of range ErrOutOfRange.
func BufferValues[T Element](t *Tensor, i int) ([]T, error) {
	const op = "BufferValues"
	return copied(op, t, func() ([]T, error) { return bufferAs[T](op, t, i) })
}

// WithBufferValues runs fn on buffer i as a []T (see [BufferValues]) without
// copying it and returns fn's error. The slice is valid only during fn (see
// [Tensor.WithBytes]).
func WithBufferValues[T Element](t *Tensor, i int, fn func([]T) error) error {
	const op = "WithBufferValues"
	return scoped(op, t, func() ([]T, error) { return bufferAs[T](op, t, i) }, fn)
}

// UnsafeBufferValues returns buffer i as a []T (see [BufferValues]) without
// copying it, valid only within the tensor's life as [Tensor.UnsafeBytes] says.
// Prefer [WithBufferValues].
func UnsafeBufferValues[T Element](t *Tensor, i int) ([]T, error) {
	const op = "UnsafeBufferValues"
	return unsafeView(op, t, func() ([]T, error) { return bufferAs[T](op, t, i) })
}

// typed is a copying accessor of the values of element type dt as []T.
func typed[T Element](op string, t *Tensor, dt DType) ([]T, error) {
	return copied(op, t, func() ([]T, error) { return valuesAs[T](op, t, dt) })
}

// withTyped is a scoped accessor of the values of element type dt as []T.
func withTyped[T Element](op string, t *Tensor, dt DType, fn func([]T) error) error {
	return scoped(op, t, func() ([]T, error) { return valuesAs[T](op, t, dt) }, fn)
}

// Float32s returns a copy of the float32 values (see [Values]).
func (t *Tensor) Float32s() ([]float32, error) { return typed[float32]("Tensor.Float32s", t, Float32) }

// Float64s returns a copy of the float64 values (see [Values]).
func (t *Tensor) Float64s() ([]float64, error) { return typed[float64]("Tensor.Float64s", t, Float64) }

// Int8s returns a copy of the int8 values (see [Values]).
func (t *Tensor) Int8s() ([]int8, error) { return typed[int8]("Tensor.Int8s", t, Int8) }

// Uint8s returns a copy of the uint8 values (see [Values]).
func (t *Tensor) Uint8s() ([]uint8, error) { return typed[uint8]("Tensor.Uint8s", t, Uint8) }

// Int16s returns a copy of the int16 values (see [Values]).
func (t *Tensor) Int16s() ([]int16, error) { return typed[int16]("Tensor.Int16s", t, Int16) }

// Uint16s returns a copy of the uint16 values (see [Values]).
func (t *Tensor) Uint16s() ([]uint16, error) { return typed[uint16]("Tensor.Uint16s", t, Uint16) }

// Int32s returns a copy of the int32 values (see [Values]).
func (t *Tensor) Int32s() ([]int32, error) { return typed[int32]("Tensor.Int32s", t, Int32) }

// Uint32s returns a copy of the uint32 values (see [Values]).
func (t *Tensor) Uint32s() ([]uint32, error) { return typed[uint32]("Tensor.Uint32s", t, Uint32) }

// Int64s returns a copy of the int64 values (see [Values]).
func (t *Tensor) Int64s() ([]int64, error) { return typed[int64]("Tensor.Int64s", t, Int64) }

// Uint64s returns a copy of the uint64 values (see [Values]).
func (t *Tensor) Uint64s() ([]uint64, error) { return typed[uint64]("Tensor.Uint64s", t, Uint64) }

// Complex64s returns a copy of the complex64 values (see [Values]).
func (t *Tensor) Complex64s() ([]complex64, error) {
	return typed[complex64]("Tensor.Complex64s", t, Complex64)
}

// Complex128s returns a copy of the complex128 values (see [Values]).
func (t *Tensor) Complex128s() ([]complex128, error) {
	return typed[complex128]("Tensor.Complex128s", t, Complex128)
}

// Float16Bits returns a copy of the float16 values as their IEEE binary16 bits
// (see [Values]); [Float16ToFloat32] and [Float16sToFloat32s] convert them.
func (t *Tensor) Float16Bits() ([]uint16, error) {
	return typed[uint16]("Tensor.Float16Bits", t, Float16)
}

// BFloat16Bits returns a copy of the bfloat16 values as their bits (the upper
// half of a float32's; see [Values]); [BFloat16ToFloat32] and
// [BFloat16sToFloat32s] convert them.
func (t *Tensor) BFloat16Bits() ([]uint16, error) {
	return typed[uint16]("Tensor.BFloat16Bits", t, BFloat16)
}

// WithFloat32s runs fn on the float32 values without copying them and returns
// fn's error; the slice is valid only during fn (see [Tensor.WithBytes]).
func (t *Tensor) WithFloat32s(fn func([]float32) error) error {
	return withTyped("Tensor.WithFloat32s", t, Float32, fn)
}

// WithFloat64s is [Tensor.WithFloat32s] for float64 values.
func (t *Tensor) WithFloat64s(fn func([]float64) error) error {
	return withTyped("Tensor.WithFloat64s", t, Float64, fn)
}

// WithInt8s is [Tensor.WithFloat32s] for int8 values.
func (t *Tensor) WithInt8s(fn func([]int8) error) error {
	return withTyped("Tensor.WithInt8s", t, Int8, fn)
}

// WithUint8s is [Tensor.WithFloat32s] for uint8 values.
func (t *Tensor) WithUint8s(fn func([]uint8) error) error {
	return withTyped("Tensor.WithUint8s", t, Uint8, fn)
}

// WithInt16s is [Tensor.WithFloat32s] for int16 values.
func (t *Tensor) WithInt16s(fn func([]int16) error) error {
	return withTyped("Tensor.WithInt16s", t, Int16, fn)
}

// WithUint16s is [Tensor.WithFloat32s] for uint16 values.
func (t *Tensor) WithUint16s(fn func([]uint16) error) error {
	return withTyped("Tensor.WithUint16s", t, Uint16, fn)
}

// WithInt32s is [Tensor.WithFloat32s] for int32 values.
func (t *Tensor) WithInt32s(fn func([]int32) error) error {
	return withTyped("Tensor.WithInt32s", t, Int32, fn)
}

// WithUint32s is [Tensor.WithFloat32s] for uint32 values.
func (t *Tensor) WithUint32s(fn func([]uint32) error) error {
	return withTyped("Tensor.WithUint32s", t, Uint32, fn)
}

// WithInt64s is [Tensor.WithFloat32s] for int64 values.
func (t *Tensor) WithInt64s(fn func([]int64) error) error {
	return withTyped("Tensor.WithInt64s", t, Int64, fn)
}

// WithUint64s is [Tensor.WithFloat32s] for uint64 values.
func (t *Tensor) WithUint64s(fn func([]uint64) error) error {
	return withTyped("Tensor.WithUint64s", t, Uint64, fn)
}

// WithComplex64s is [Tensor.WithFloat32s] for complex64 values.
func (t *Tensor) WithComplex64s(fn func([]complex64) error) error {
	return withTyped("Tensor.WithComplex64s", t, Complex64, fn)
}

// WithComplex128s is [Tensor.WithFloat32s] for complex128 values.
func (t *Tensor) WithComplex128s(fn func([]complex128) error) error {
	return withTyped("Tensor.WithComplex128s", t, Complex128, fn)
}

// WithFloat16Bits is [Tensor.WithFloat32s] for float16 values, as their bits.
func (t *Tensor) WithFloat16Bits(fn func([]uint16) error) error {
	return withTyped("Tensor.WithFloat16Bits", t, Float16, fn)
}

// WithBFloat16Bits is [Tensor.WithFloat32s] for bfloat16 values, as their bits.
func (t *Tensor) WithBFloat16Bits(fn func([]uint16) error) error {
	return withTyped("Tensor.WithBFloat16Bits", t, BFloat16, fn)
}

// Bools returns the values of a Bool tensor as a []bool, one element per value
// (a copy: the format packs booleans 8 per byte, LSB first, from ByteOffset). The
// tensor must be dense (RowMajor or ColumnMajor, values in storage order) with a
// static shape, in CPU memory. A closed tensor gives an error wrapping ErrClosed;
// another element type ErrInvalidArgument; another layout ErrNotApplicable.
func (t *Tensor) Bools() ([]bool, error) {
	const op = "Tensor.Bools"
	if err := t.live(op); err != nil {
		return nil, err
	}
	defer t.exit()
	packed, err := valuesAs[uint8](op, t, Bool)
	if err != nil {
		return nil, err
	}
	d := readDescriptor(t.desc)
	if d.Layout != RowMajor && d.Layout != ColumnMajor {
		return nil, &Error{Status: StatusNotApplicable, Op: op,
			Message: fmt.Sprintf("layout %s: Bools reads dense (row-major or column-major) tensors", d.Layout)}
	}
	n, ok := numElements(d.Shape)
	if !ok {
		return nil, &Error{Status: StatusNotApplicable, Op: op, Message: "the shape is dynamic"}
	}
	off := d.ByteOffset
	if off > uint64(len(packed)) || (n+7)/8 > uint64(len(packed))-off {
		return nil, &Error{Status: StatusBufferMismatch, Op: op,
			Message: fmt.Sprintf("buffer 0 holds %d bytes, too few for %d booleans from byte %d", len(packed), n, off)}
	}
	return unpackBools(packed[off:], int(n)), nil
}

// unpackBools unpacks n booleans packed 8 per byte, LSB first (element-types.md
// §5).
func unpackBools(packed []byte, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = packed[i>>3]>>(i&7)&1 != 0
	}
	return out
}

// packBools packs b 8 per byte, LSB first, into new 64-byte-aligned memory (the
// inverse of unpackBools); the bits past the last element are 0.
func packBools(b []bool) []byte {
	if len(b) == 0 {
		return nil
	}
	out := alignedBytes((len(b)+7)/8, Alignment)
	for i, v := range b {
		if v {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	return out
}
