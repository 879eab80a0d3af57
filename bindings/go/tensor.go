package hurray

// #include "hurray.h"
// #include "hurray_go.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Tensor is one tensor: its descriptor and its buffers, owned through one
// HurrayTensor handle of the library.
//
// A Tensor holds memory the garbage collector cannot see (library memory, a mapped
// file, or pinned Go memory), so close it when done: Close releases everything at
// once and is idempotent. A Tensor that becomes unreachable without Close is
// released by a cleanup (runtime.AddCleanup) as a safety net, at an unpredictable
// time.
//
// Views returned by [Tensor.Bytes], [Tensor.Float32s] (and the other typed
// views), [Values] and [View] alias the tensor's buffers without copying. Views of
// a tensor read by a [Reader] without a pool, or made from Go memory, are views of
// Go memory and keep it alive by themselves. Views of other tensors (from a [File],
// a pooled Reader, or C) are valid until the tensor is closed, and they do NOT keep
// the tensor alive: a Tensor that becomes unreachable is released by its cleanup
// even while such a view is still in use, and the view then reads freed memory.
// Keep the Tensor reachable while you use such a view — call runtime.KeepAlive(t)
// after the view's last use, or Close t explicitly once you are done with the view
// (see the package documentation).
//
// A Tensor is used by one goroutine at a time; it may be handed to another
// goroutine, and closed from another goroutine once no one uses it.
type Tensor struct {
	mu      sync.Mutex
	ptr     *C.HurrayTensor     // nil once closed, detached or moved into an Item
	desc    *C.HurrayDescriptor // borrowed from ptr
	parent  *Item               // non-nil: the tensor is borrowed from this item, which owns it
	cleanup runtime.Cleanup
	managed bool   // the Tensor owns ptr (a cleanup is registered)
	gone    string // why ptr is nil: "is closed", "was moved into an item by NewItem", ...
	dbg     *viewDebug
}

func destroyTensor(p *C.HurrayTensor) { C.hurray_tensor_destroy(&p) }

// newTensor wraps an owned C tensor.
func newTensor(p *C.HurrayTensor) *Tensor {
	t := &Tensor{ptr: p}
	must("hurray_tensor_descriptor", C.hurray_tensor_descriptor(p, &t.desc))
	t.cleanup, t.dbg = addTensorCleanup(t, p)
	t.managed = true
	return t
}

// borrowedTensor wraps a tensor owned by an item.
func borrowedTensor(p *C.HurrayTensor, parent *Item) *Tensor {
	t := &Tensor{ptr: p, parent: parent, dbg: parent.dbg}
	must("hurray_tensor_descriptor", C.hurray_tensor_descriptor(p, &t.desc))
	return t
}

// NewTensor makes a tensor over Go memory without copying it.
//
// d describes the tensor (its buffer table gives each buffer's size and
// placement), and buffers holds one byte slice per buffer-table entry, each of
// exactly that size and aligned as declared (64 bytes for a non-empty buffer: use
// [Make] to allocate). The buffers are pinned (runtime.Pinner) and kept reachable
// until the library releases them, which happens exactly once, after the tensor
// and every handle sharing the memory are gone; [OnRelease] runs code then. Do
// not modify the memory while the tensor lives.
func NewTensor(d Descriptor, buffers [][]byte, opts ...Option) (*Tensor, error) {
	return newGoTensor("NewTensor", d, buffers, opts)
}

// newGoTensor is NewTensor; op names the exported function called.
func newGoTensor(op string, d Descriptor, buffers [][]byte, opts []Option) (*Tensor, error) {
	if len(buffers) != len(d.Buffers) {
		return nil, &Error{Status: StatusBufferMismatch, Op: op,
			Message: fmt.Sprintf("%d buffers for a descriptor with %d", len(buffers), len(d.Buffers))}
	}
	for i, b := range buffers {
		align := uint64(d.Buffers[i].Alignment)
		if align == 0 {
			align = Alignment
		}
		if len(b) > 0 && uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))%align != 0 {
			return nil, invalidArg(op, "buffer %d is not %d-byte aligned; allocate it with hurray.Make", i, align)
		}
	}
	enc, err := d.encode(op)
	if err != nil {
		return nil, err
	}
	// Pin first: the buffers below keep pointers to the memory after their calls return.
	owner, h := newOwner(buffers, opts)
	var list *C.HurrayBufferList
	must("hurray_buffer_list_new", C.hurray_buffer_list_new(&list))
	defer C.hurray_buffer_list_destroy(&list) // a no-op once the list moved into the tensor
	for i, b := range buffers {
		e := d.Buffers[i]
		if e.Alignment == 0 {
			e.Alignment = Alignment
		}
		var buf *C.HurrayBuffer
		// No per-buffer release: the tensor's owner (below) releases all the memory,
		// after the last buffer view is gone.
		if err := call(op, func() C.HurrayStatus {
			return C.hurray_buffer_new(unsafe.Pointer(bytesPtr(b)), C.uint64_t(len(b)), C.uint32_t(e.Alignment),
				C.uint8_t(e.Device), C.uint8_t(e.Sync), C.uint8_t(e.Memory), nil, nil, nil, &buf)
		}); err != nil {
			C.hurray_buffer_list_destroy(&list)
			owner.drop(h)
			return nil, err
		}
		if err := call(op, func() C.HurrayStatus {
			return C.hurray_buffer_list_push(list, &buf)
		}); err != nil {
			C.hurray_buffer_destroy(&buf)
			C.hurray_buffer_list_destroy(&list)
			owner.drop(h)
			return nil, err
		}
	}
	var p *C.HurrayTensor
	if err := call(op, func() C.HurrayStatus {
		return C.hurray_go_tensor_new(bytesPtr(enc), C.uint64_t(len(enc)), list, C.uintptr_t(h), &p)
	}); err != nil {
		C.hurray_buffer_list_destroy(&list)
		owner.drop(h)
		return nil, err
	}
	list = nil // moved into the tensor
	t := newTensor(p)
	// Views of Go memory keep that memory alive by themselves: nothing for the
	// hurray_debug view check to report.
	t.dbg = nil
	return t, nil
}

// NewDense makes a row-major CPU tensor over data without copying it. shape
// defaults to [len(data)]; otherwise its product must be len(data). data must be
// 64-byte aligned (allocate it with [Make]) and must not be modified while the
// tensor lives.
func NewDense[T Element](data []T, shape []uint64, opts ...Option) (*Tensor, error) {
	if shape == nil {
		shape = []uint64{uint64(len(data))}
	}
	const op = "NewDense"
	d, err := denseDescriptor(op, dtypeOf[T](), shape)
	if err != nil {
		return nil, err
	}
	return newGoTensor(op, d, [][]byte{AsBytes(data)}, opts)
}

// TensorFromC takes ownership of a HurrayTensor* made by C code (any build of the
// library with the same ABI version). The returned Tensor destroys it on Close.
func TensorFromC(handle unsafe.Pointer) (*Tensor, error) {
	p := (*C.HurrayTensor)(handle)
	var v C.uint32_t
	if err := call("TensorFromC", func() C.HurrayStatus {
		return C.hurray_tensor_abi_version(p, &v)
	}); err != nil {
		return nil, err
	}
	if uint32(v) != ABIVersion {
		return nil, &Error{Status: StatusABIVersion, Op: "TensorFromC",
			Message: fmt.Sprintf("tensor has C ABI version %d, this package uses %d", v, ABIVersion)}
	}
	return newTensor(p), nil
}

// Detach gives up ownership of the tensor's HurrayTensor* and returns it, for C
// code that will destroy it (hurray_tensor_destroy, from any thread). The Tensor
// is closed afterwards. A tensor borrowed from an [Item] cannot be detached.
func (t *Tensor) Detach() (unsafe.Pointer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	const op = "Tensor.Detach"
	if why := t.closed(); why != "" {
		return nil, errClosed(op, why)
	}
	if t.parent != nil {
		return nil, invalidArg(op, "the tensor belongs to an item; only a tensor that owns its handle can be detached")
	}
	p := t.ptr
	t.forget("was detached")
	return unsafe.Pointer(p), nil
}

// forget drops the Tensor's claim on its handle without destroying it, recording
// why (for the errors and panics of later calls). t.mu held.
func (t *Tensor) forget(why string) {
	if t.managed {
		t.cleanup.Stop()
		t.managed = false
	}
	t.ptr, t.desc = nil, nil
	t.gone = why
}

// closed says why t cannot be used — "the tensor is closed", "the tensor was moved
// into an item by NewItem", ... — or returns "" when it can.
func (t *Tensor) closed() string {
	if t.parent != nil && t.parent.root.ptr == nil {
		return "the tensor belongs to an item that " + t.parent.root.goneWhy()
	}
	if t.ptr == nil {
		if t.gone == "" {
			return "the tensor is closed"
		}
		return "the tensor " + t.gone
	}
	return ""
}

// Close releases the tensor (its descriptor, buffers and owner; memory shared with
// other handles lives on until they are gone too). It is idempotent and safe to
// call from any goroutine once no one uses the tensor. Close does nothing on a
// tensor borrowed from an [Item]: the item owns its memory (close the item).
func (t *Tensor) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ptr == nil || t.parent != nil {
		return nil // closed already, or borrowed: the item owns the memory
	}
	p, owned := t.ptr, t.managed
	t.forget("is closed")
	if !owned {
		return nil
	}
	return call("Tensor.Close", func() C.HurrayStatus { return C.hurray_tensor_destroy(&p) })
}

// handle returns the live C tensor or panics on a closed one (for accessors that
// have no error result).
func (t *Tensor) handle() *C.HurrayTensor {
	if why := t.closed(); why != "" {
		panic(closedPanic(why))
	}
	maybeGC()
	return t.ptr
}

// live returns the live C tensor, or an error wrapping ErrClosed (for op called on
// t as its receiver).
func (t *Tensor) live(op string) (*C.HurrayTensor, error) {
	if t == nil {
		return nil, invalidArg(op, "nil *Tensor")
	}
	if why := t.closed(); why != "" {
		return nil, errClosed(op, why)
	}
	maybeGC()
	return t.ptr, nil
}

// arg returns the live C tensor of t given to op as an argument, or an
// ErrInvalidArgument error (that also matches ErrClosed when t is closed).
func (t *Tensor) arg(op string) (*C.HurrayTensor, error) {
	if t == nil {
		return nil, invalidArg(op, "nil *Tensor")
	}
	if why := t.closed(); why != "" {
		return nil, errClosedArg(op, why)
	}
	maybeGC()
	return t.ptr, nil
}

// descriptor returns the live borrowed C descriptor or panics on a closed tensor.
func (t *Tensor) descriptor() *C.HurrayDescriptor {
	t.handle()
	return t.desc
}

func (t *Tensor) header() C.HurrayDescriptorHeader {
	h := withView(t.descriptor(), func(v *C.HurrayDescriptorView) C.HurrayDescriptorHeader { return v.header })
	runtime.KeepAlive(t)
	return h
}

// DType is the element type.
func (t *Tensor) DType() DType { return DType(t.header().type_tag) }

// Layout is the layout tag.
func (t *Tensor) Layout() Layout { return Layout(t.header().layout_tag) }

// Rank is the number of dimensions.
func (t *Tensor) Rank() int { return int(t.header().rank) }

// ByteOffset is the distance in bytes from the start of buffer 0 to element
// [0, ..., 0] (dense layouts).
func (t *Tensor) ByteOffset() uint64 { return uint64(t.header().byte_offset) }

// NumBuffers is the number of buffers (the buffer table's length).
func (t *Tensor) NumBuffers() int { return int(t.header().buffer_count) }

// Shape returns the dimensions, slowest-varying first; DimDynamic marks a dynamic
// one.
func (t *Tensor) Shape() []uint64 {
	shape := withView(t.descriptor(), func(v *C.HurrayDescriptorView) []uint64 {
		shape := make([]uint64, int(v.header.rank))
		copy(shape, cSlice[uint64](v.shape, len(shape)))
		return shape
	})
	runtime.KeepAlive(t)
	return shape
}

// NumElements is the product of the shape (1 for a scalar), or false when a
// dimension is dynamic or the product overflows.
func (t *Tensor) NumElements() (uint64, bool) {
	n := uint64(1)
	for _, s := range t.Shape() {
		if s == DimDynamic {
			return 0, false
		}
		if s != 0 && n > ^uint64(0)/s {
			return 0, false
		}
		n *= s
	}
	return n, true
}

// Descriptor returns the whole descriptor as a Go value (a copy).
func (t *Tensor) Descriptor() Descriptor {
	d := readDescriptor(t.descriptor())
	runtime.KeepAlive(t)
	return d
}

// DescriptorBytes returns the descriptor's canonical encoding (a copy).
func (t *Tensor) DescriptorBytes() []byte {
	b := encodeDescriptor(t.descriptor())
	runtime.KeepAlive(t)
	return b
}

// Buffer returns entry i of the buffer table (size and placement). It panics when
// i is out of range.
func (t *Tensor) Buffer(i int) BufferEntry {
	if i < 0 || i >= t.NumBuffers() {
		panic(fmt.Sprintf("hurray: buffer index %d out of range [0, %d)", i, t.NumBuffers()))
	}
	e := withView(t.descriptor(), func(v *C.HurrayDescriptorView) BufferEntry { return bufferEntry(v, i) })
	runtime.KeepAlive(t)
	return e
}

// Device is where the tensor's data lives: the device of buffer 0 (CPU for a
// tensor without buffers, such as a composite head).
func (t *Tensor) Device() Device {
	if t.NumBuffers() == 0 {
		return CPU
	}
	return t.Buffer(0).Device
}

// Quantization returns the quantization section, or nil.
func (t *Tensor) Quantization() *Quantization { return t.Descriptor().Quantization }

// Shard returns the shard section, or nil.
func (t *Tensor) Shard() *Shard { return t.Descriptor().Shard }

// Statistics returns the statistics section, or nil.
func (t *Tensor) Statistics() *Statistics { return t.Descriptor().Statistics }

// Bytes returns buffer i's bytes without copying: valid until the tensor is
// closed, and only while the Tensor is reachable (see the Tensor doc). It panics
// when the tensor is closed or i is out of range. The bytes of a buffer that is not
// in CPU memory must not be read.
func (t *Tensor) Bytes(i int) []byte {
	t.handle() // panics on a closed tensor
	b, err := t.bytes("Tensor.Bytes", i)
	if err != nil {
		panic(err.Error())
	}
	return b
}

// bytes is Bytes returning an error (wrapping ErrClosed on a closed tensor,
// ErrOutOfRange for a bad index) instead of panicking.
func (t *Tensor) bytes(op string, i int) ([]byte, error) {
	p, err := t.live(op)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	var data unsafe.Pointer
	var size C.uint64_t
	if i < 0 || C.hurray_tensor_buffer_data(p, C.uint64_t(i), &data, &size) != C.HURRAY_OK {
		return nil, &Error{Status: StatusOutOfRange, Op: op,
			Message: fmt.Sprintf("buffer index %d out of range [0, %d)", i, t.header().buffer_count)}
	}
	t.dbg.viewed()
	if size == 0 || data == nil {
		return []byte{}, nil
	}
	return unsafe.Slice((*byte)(data), int(size)), nil
}

// View returns buffer i as a slice of T without copying (any buffer: index
// buffers of sparse layouts are []uint64, for instance). Its size must be a
// multiple of T's size and its address aligned for T. Valid until the tensor is
// closed, and only while the Tensor is reachable (see the Tensor doc). A closed
// tensor gives an error wrapping ErrClosed, an index out of range ErrOutOfRange.
func View[T Element](t *Tensor, i int) ([]T, error) { return viewOf[T]("View", t, i) }

func viewOf[T Element](op string, t *Tensor, i int) ([]T, error) {
	b, err := t.bytes(op, i)
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

// interpretable refuses typed views of a tensor whose layout this build keeps
// opaque: a private extension layout (0xF0..0xFE) or an unknown tag kept by a
// permissive open. Its buffers have no meaning here (layouts.md §3: a permissive
// reader never interprets them); Bytes still gives the raw bytes to pass on.
func (t *Tensor) interpretable(op string) error {
	l := t.Layout()
	if _, known := layoutNames[uint8(l)]; known {
		return nil
	}
	return &Error{Status: StatusNotApplicable, Op: op,
		Message: fmt.Sprintf("layout %s is opaque to this library: its buffers cannot be viewed as values (use Bytes for the raw bytes)", l)}
}

// Values returns the tensor's values (buffer 0, which holds the elements in every
// layout but a composite head) as a []T without copying, after checking that T
// matches the element type. Element [0, ..., 0] of a dense layout is at
// ByteOffset. Valid until the tensor is closed, and only while the Tensor is
// reachable (see the Tensor doc). A closed tensor gives an error wrapping
// ErrClosed.
func Values[T Element](t *Tensor) ([]T, error) { return values[T]("Values", t) }

func values[T Element](op string, t *Tensor) ([]T, error) {
	if _, err := t.live(op); err != nil {
		return nil, err
	}
	want := dtypeOf[T]()
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
	runtime.KeepAlive(t)
	if h.dtype != want {
		return nil, invalidArg(op, "tensor holds %s, not %s", h.dtype, want)
	}
	if h.n == 0 {
		return nil, &Error{Status: StatusNotApplicable, Op: op, Message: "the tensor has no buffers"}
	}
	if dev := h.dev; dev != CPU {
		return nil, &Error{Status: StatusNotApplicable, Op: op,
			Message: fmt.Sprintf("buffer 0 lives on %s, not in CPU memory", dev)}
	}
	return viewOf[T](op, t, 0)
}

// Float32s returns the float32 values without copying (see [Values]).
func (t *Tensor) Float32s() ([]float32, error) { return values[float32]("Tensor.Float32s", t) }

// Float64s returns the float64 values without copying (see [Values]).
func (t *Tensor) Float64s() ([]float64, error) { return values[float64]("Tensor.Float64s", t) }

// Int8s returns the int8 values without copying (see [Values]).
func (t *Tensor) Int8s() ([]int8, error) { return values[int8]("Tensor.Int8s", t) }

// Uint8s returns the uint8 values without copying (see [Values]).
func (t *Tensor) Uint8s() ([]uint8, error) { return values[uint8]("Tensor.Uint8s", t) }

// Int16s returns the int16 values without copying (see [Values]).
func (t *Tensor) Int16s() ([]int16, error) { return values[int16]("Tensor.Int16s", t) }

// Uint16s returns the uint16 values without copying (see [Values]).
func (t *Tensor) Uint16s() ([]uint16, error) { return values[uint16]("Tensor.Uint16s", t) }

// Int32s returns the int32 values without copying (see [Values]).
func (t *Tensor) Int32s() ([]int32, error) { return values[int32]("Tensor.Int32s", t) }

// Uint32s returns the uint32 values without copying (see [Values]).
func (t *Tensor) Uint32s() ([]uint32, error) { return values[uint32]("Tensor.Uint32s", t) }

// Int64s returns the int64 values without copying (see [Values]).
func (t *Tensor) Int64s() ([]int64, error) { return values[int64]("Tensor.Int64s", t) }

// Uint64s returns the uint64 values without copying (see [Values]).
func (t *Tensor) Uint64s() ([]uint64, error) { return values[uint64]("Tensor.Uint64s", t) }

// Complex64s returns the complex64 values without copying (see [Values]).
func (t *Tensor) Complex64s() ([]complex64, error) { return values[complex64]("Tensor.Complex64s", t) }

// Complex128s returns the complex128 values without copying (see [Values]).
func (t *Tensor) Complex128s() ([]complex128, error) {
	return values[complex128]("Tensor.Complex128s", t)
}

// String summarises the tensor, e.g. "Tensor(float32[2 3] row_major)", or
// "Tensor(closed)".
func (t *Tensor) String() string {
	if t.closed() != "" {
		return "Tensor(closed)"
	}
	return "Tensor(" + t.Descriptor().String() + ")"
}
