package hurray

// #include "hurray.h"
// #include "hurray_go.h"
import "C"

import (
	"fmt"
	"runtime"
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
// Its data is read three ways (see "Views" in the package documentation):
// copies ([Tensor.Float32s] and the other typed accessors, [Tensor.Bytes],
// [Values], [BufferValues], [Tensor.Bools]), which are ordinary Go memory; scoped
// zero-copy views ([Tensor.WithFloat32s], [Tensor.WithBytes], [WithValues],
// [WithBufferValues]), valid inside the callback, during which Close waits; and
// zero-copy views whose names say Unsafe ([Tensor.UnsafeBytes], [UnsafeValues],
// [UnsafeBufferValues]), which the caller must keep within the tensor's life.
//
// Every method may be called from several goroutines at once, and Close may be
// called from any goroutine at any time: a call in progress keeps the tensor's
// memory alive until it returns, and calls that start after Close see a closed
// tensor.
type Tensor struct {
	life    lifetime            // an owned tensor's; a borrowed one lives by its root item's
	ptr     *C.HurrayTensor     // set once; not used once the lifetime ended
	desc    *C.HurrayDescriptor // borrowed from ptr
	parent  *Item               // non-nil: the tensor is borrowed from this item, which owns it
	cleanup runtime.Cleanup     // owned tensors: destroys ptr when t is collected unclosed
	dbg     *viewDebug
}

func destroyTensor(p *C.HurrayTensor) { C.hurray_tensor_destroy(&p) }

// newTensor wraps an owned C tensor.
func newTensor(p *C.HurrayTensor) *Tensor {
	t := &Tensor{ptr: p}
	must("hurray_tensor_descriptor", C.hurray_tensor_descriptor(p, &t.desc))
	t.cleanup, t.dbg = addTensorCleanup(t, p)
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
	if _, set := optionDType(opts); set {
		return nil, invalidArg("NewTensor", "AsDType applies to NewDense; a Descriptor names its element type")
	}
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

// Dense is a Go type [NewDense] takes elements in: an [Element], or bool.
type Dense interface{ Element | bool }

// NewDense makes a row-major CPU tensor of data. shape defaults to [len(data)];
// otherwise its product must be len(data).
//
// For an [Element] type, data is wrapped without copying: it must be 64-byte
// aligned (allocate it with [Make]) and must not be modified while the tensor
// lives. The element type is T's (float32 gives Float32), or the one an [AsDType]
// option names, which must be as wide as T: []uint16 holding the bits of float16
// or bfloat16 values (see [Float32ToFloat16] and [Float32ToBFloat16]) with
// AsDType(Float16) or AsDType(BFloat16), []uint8 holding float8 codes, ...
//
// A []bool gives a Bool tensor: the format packs booleans 8 per byte (LSB first),
// so NewDense packs data into new memory (a copy; data may be reused at once).
//
//	data := hurray.Make[float32](6)
//	t, err := hurray.NewDense(data, []uint64{2, 3}) // float32 [2 3], no copy
//
//	bits := hurray.Float32sToFloat16s([]float32{1, 0.1, -2})
//	h, err := hurray.NewDense(bits, nil, hurray.AsDType(hurray.Float16)) // float16 [3]
//
//	b, err := hurray.NewDense([]bool{true, false, true}, nil) // bool [3], packed
func NewDense[T Dense](data []T, shape []uint64, opts ...Option) (*Tensor, error) {
	const op = "NewDense"
	if shape == nil {
		shape = []uint64{uint64(len(data))}
	}
	if n, ok := numElements(shape); !ok || n != uint64(len(data)) {
		return nil, invalidArg(op, "shape %v does not hold the %d elements given", shape, len(data))
	}
	var dt DType
	var buf []byte
	if bools, ok := any(data).([]bool); ok {
		dt, buf = Bool, packBools(bools)
	} else {
		dt, buf = dtypeOf[T](), bytesOf(data)
	}
	if as, set := optionDType(opts); set {
		if as.Bits() != dt.Bits() || dt == Bool {
			return nil, invalidArg(op, "AsDType(%s) needs elements of %d bits, not %T", as, as.Bits(), data)
		}
		dt = as
	}
	d, err := denseDescriptor(op, dt, shape)
	if err != nil {
		return nil, err
	}
	return newGoTensor(op, d, [][]byte{buf}, opts)
}

// bytesOf is AsBytes for a Dense slice that is not []bool.
func bytesOf[T Dense](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
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
// is closed afterwards. A tensor borrowed from an [Item] cannot be detached, nor
// one that another goroutine is using (ErrState).
func (t *Tensor) Detach() (unsafe.Pointer, error) {
	const op = "Tensor.Detach"
	if t.parent != nil {
		if why := t.closed(); why != "" {
			return nil, errClosed(op, why)
		}
		return nil, invalidArg(op, "the tensor belongs to an item; only a tensor that owns its handle can be detached")
	}
	if err := t.move(op, "was detached", false); err != nil {
		return nil, err
	}
	t.cleanup.Stop()
	return unsafe.Pointer(t.ptr), nil
}

// move ends an owned tensor's lifetime without destroying its handle (it moves
// into an item, or out to C), recording why; an error when the tensor is closed
// (matching ErrClosed; an ErrInvalidArgument when it is op's argument) or in use
// by another goroutine (ErrState). Once the move succeeded the caller stops the
// cleanup; if it failed (the library took nothing), t.life.unmove() reopens t.
func (t *Tensor) move(op, why string, isArg bool) error {
	gone, busy := t.life.move(why)
	switch {
	case busy:
		return &Error{Status: StatusState, Op: op, Message: "the tensor is in use by another goroutine"}
	case gone != "" && isArg:
		return errClosedArg(op, "the tensor "+gone)
	case gone != "":
		return errClosed(op, "the tensor "+gone)
	}
	return nil
}

// closed says why t cannot be used — "the tensor is closed", "the tensor was moved
// into an item by NewItem", ... — or returns "" when it can.
func (t *Tensor) closed() string {
	if t.parent != nil {
		if why := t.parent.root.life.why(); why != "" {
			return "the tensor belongs to an item that " + why
		}
		return ""
	}
	if why := t.life.why(); why != "" {
		return "the tensor " + why
	}
	return ""
}

// enter starts a use of t's handle (see lifetime): until the matching exit, no
// Close releases it. It returns why t cannot be used instead, starting nothing.
func (t *Tensor) enter() string {
	if t.parent != nil {
		if why := t.parent.root.life.enter(); why != "" {
			return "the tensor belongs to an item that " + why
		}
	} else if why := t.life.enter(); why != "" {
		return "the tensor " + why
	}
	maybeGC()
	return ""
}

// exit ends a use started by enter. It also keeps t reachable until then, so no
// cleanup can release the handle during the use.
func (t *Tensor) exit() {
	if t.parent != nil {
		t.parent.root.life.exit()
	} else {
		t.life.exit()
	}
}

// Close releases the tensor (its descriptor, buffers and owner; memory shared with
// other handles lives on until they are gone too). It is idempotent and may be
// called from any goroutine at any time: calls in progress on the tensor (a scoped
// view's callback included) finish first, the release happening when the last one
// returns, and later calls see a closed tensor. Close does nothing on a tensor
// borrowed from an [Item]: the item owns its memory (close the item).
func (t *Tensor) Close() error {
	if t.parent != nil {
		return nil // borrowed: the item owns the memory
	}
	p := t.ptr
	ended, err := t.life.end("is closed", func() error {
		return call("Tensor.Close", func() C.HurrayStatus { return C.hurray_tensor_destroy(&p) })
	})
	if ended {
		t.cleanup.Stop()
	}
	return err
}

// use starts a use of t's handle or panics on a closed tensor (for accessors that
// have no error result); the caller defers t.exit().
func (t *Tensor) use() {
	if why := t.enter(); why != "" {
		panic(closedPanic(why))
	}
}

// live starts a use of t's handle, or returns an error wrapping ErrClosed (for op
// called on t as its receiver); on success the caller defers t.exit().
func (t *Tensor) live(op string) error {
	if t == nil {
		return invalidArg(op, "nil *Tensor")
	}
	if why := t.enter(); why != "" {
		return errClosed(op, why)
	}
	return nil
}

// arg starts a use of the handle of t given to op as an argument and returns it,
// or an ErrInvalidArgument error (that also matches ErrClosed when t is closed);
// on success the caller calls t.exit() once the library is done with the handle.
func (t *Tensor) arg(op string) (*C.HurrayTensor, error) {
	if t == nil {
		return nil, invalidArg(op, "nil *Tensor")
	}
	if why := t.enter(); why != "" {
		return nil, errClosedArg(op, why)
	}
	return t.ptr, nil
}

func (t *Tensor) header() C.HurrayDescriptorHeader {
	t.use()
	defer t.exit()
	return withView(t.desc, func(v *C.HurrayDescriptorView) C.HurrayDescriptorHeader { return v.header })
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
	t.use()
	defer t.exit()
	return withView(t.desc, func(v *C.HurrayDescriptorView) []uint64 {
		shape := make([]uint64, int(v.header.rank))
		copy(shape, cSlice[uint64](v.shape, len(shape)))
		return shape
	})
}

// NumElements is the product of the shape (1 for a scalar), or false when a
// dimension is dynamic or the product overflows.
func (t *Tensor) NumElements() (uint64, bool) { return numElements(t.Shape()) }

func numElements(shape []uint64) (uint64, bool) {
	n := uint64(1)
	for _, s := range shape {
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
	t.use()
	defer t.exit()
	return readDescriptor(t.desc)
}

// DescriptorBytes returns the descriptor's canonical encoding (a copy).
func (t *Tensor) DescriptorBytes() []byte {
	t.use()
	defer t.exit()
	return encodeDescriptor(t.desc)
}

// Buffer returns entry i of the buffer table (size and placement). It panics when
// i is out of range.
func (t *Tensor) Buffer(i int) BufferEntry {
	t.use()
	defer t.exit()
	return withView(t.desc, func(v *C.HurrayDescriptorView) BufferEntry {
		if n := int(v.header.buffer_count); i < 0 || i >= n {
			panic(fmt.Sprintf("hurray: buffer index %d out of range [0, %d)", i, n))
		}
		return bufferEntry(v, i)
	})
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

// String summarises the tensor, e.g. "Tensor(float32[2 3] row_major)", or
// "Tensor(closed)".
func (t *Tensor) String() string {
	if t.enter() != "" {
		return "Tensor(closed)"
	}
	defer t.exit()
	return "Tensor(" + readDescriptor(t.desc).String() + ")"
}
