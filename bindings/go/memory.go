package hurray

/*
#include <stdint.h>
#include "hurray.h"
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// Element is a Go type that holds one element of a whole-byte element type.
type Element interface {
	float32 | float64 | int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 | complex64 | complex128
}

// dtypeOf is the element type a Go element type stands for.
func dtypeOf[T Dense]() DType {
	var z T
	switch any(z).(type) {
	case bool:
		return Bool
	case float32:
		return Float32
	case float64:
		return Float64
	case int8:
		return Int8
	case uint8:
		return Uint8
	case int16:
		return Int16
	case uint16:
		return Uint16
	case int32:
		return Int32
	case uint32:
		return Uint32
	case int64:
		return Int64
	case uint64:
		return Uint64
	case complex64:
		return Complex64
	default:
		return Complex128
	}
}

// Alignment is the alignment of memory returned by [Make]: the format's minimum
// for a non-empty buffer.
const Alignment = 64

// Make returns a zeroed slice of n elements whose first element is 64-byte
// aligned, as the format requires of a buffer. Fill it, then wrap it without
// copying with [NewDense] or [NewTensor].
func Make[T Element](n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if n == 0 {
		return []T{}
	}
	extra := Alignment / size
	backing := make([]T, n+extra)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(backing)))
	skip := int((Alignment-addr%Alignment)%Alignment) / size
	return backing[skip : skip+n : skip+n]
}

// alignedBytes returns n zeroed bytes whose first byte is align-aligned (align a
// power of two). Large allocations start on a Go page (8 KiB), so for those the
// plain allocation usually needs no slack.
func alignedBytes(n, align int) []byte {
	if n >= 32<<10 && align <= 8<<10 {
		b := make([]byte, n)
		if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(align) == 0 {
			return b
		}
	}
	backing := make([]byte, n+align-1)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(backing)))
	skip := int((uintptr(align) - addr%uintptr(align)) % uintptr(align))
	return backing[skip : skip+n : skip+n]
}

// AsBytes reinterprets a slice of elements as its bytes, without copying: the
// form [NewTensor] takes buffers in. The result aliases s.
func AsBytes[T Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// Option configures a tensor made from Go memory ([NewTensor], [NewDense]).
type Option struct {
	apply func(*goOwner)
	dtype DType // AsDType's; 0 when not set
}

// AsDType makes [NewDense] record dt as the element type instead of the one its Go
// element type stands for; dt must be as wide as that type (16 bits for Float16
// and BFloat16 over a []uint16). [NewTensor] refuses it (its Descriptor names the
// element type).
func AsDType(dt DType) Option { return Option{dtype: dt} }

// optionDType returns the element type the last AsDType option in opts sets.
func optionDType(opts []Option) (dt DType, set bool) {
	for _, o := range opts {
		if o.dtype != 0 {
			dt, set = o.dtype, true
		}
	}
	return dt, set
}

// OnRelease registers f to run once the library no longer uses the tensor's Go
// memory: after the tensor is closed (or collected) and every other handle that
// shares the memory is gone. f runs exactly once, possibly on a thread Go did not
// create, and must not call into this package with the tensor being released.
func OnRelease(f func()) Option {
	return Option{apply: func(o *goOwner) { o.onRelease = append(o.onRelease, f) }}
}

// goOwner keeps Go memory that the library uses pinned and reachable, until the
// library releases it through hurrayGoRelease. It crosses into C as a cgo.Handle.
type goOwner struct {
	pinner    runtime.Pinner
	keep      [][]byte
	onRelease []func()
}

// Release accounting, for tests: owners handed to the library, owners released,
// and release callbacks that found no live owner (a second release) or panicked.
var (
	ownersMade     atomic.Int64
	ownersReleased atomic.Int64
	releaseErrors  atomic.Int64
)

// newOwner pins every non-empty buffer and returns the owner and its handle.
func newOwner(buffers [][]byte, opts []Option) (*goOwner, cgo.Handle) {
	o := &goOwner{keep: buffers}
	for _, opt := range opts {
		if opt.apply != nil {
			opt.apply(o)
		}
	}
	for _, b := range buffers {
		if len(b) > 0 {
			o.pinner.Pin(unsafe.SliceData(b))
		}
	}
	ownersMade.Add(1)
	return o, cgo.NewHandle(o)
}

// drop undoes newOwner when the library never took the owner.
func (o *goOwner) drop(h cgo.Handle) {
	h.Delete()
	o.pinner.Unpin()
	o.keep = nil
	ownersMade.Add(-1)
}

// maxGoAlignment is the largest declared buffer alignment a Reader meets in Go
// memory. Meeting alignment A costs up to A-1 bytes of Go heap beside the buffer
// (Go has no aligned allocation), so a stream of tiny buffers declaring 2 MiB would
// cost 2 MiB each; beyond this bound the stream fails with ErrLimit (read such
// streams with a BufferPool, whose slack is untouched address space).
const maxGoAlignment = 64 << 10

// hurrayGoAlloc gives a stream decoder n bytes of Go memory to read a buffer into
// (reached through hurray_go_alloc in hurray_go.c): aligned to align, pinned, owned
// by a goOwner whose handle becomes the buffer's release context. The library
// releases it through hurrayGoRelease when the last handle holding the buffer goes;
// the memory itself then lives on for as long as any Go slice (a view) points into
// it, like any Go memory. Returns non-zero (the decoder then fails with ErrLimit)
// when align is above maxGoAlignment or n is too large for a Go slice. (A Go
// out-of-memory is fatal, not a refusal: hence the Reader's small eager size.)
//
//export hurrayGoAlloc
func hurrayGoAlloc(n, align C.uint64_t, outData **C.uint8_t, outOwner *C.uintptr_t) (rc C.int32_t) {
	defer func() {
		if r := recover(); r != nil {
			rc = 1
		}
	}()
	if align > maxGoAlignment || uint64(n) > uint64(math.MaxInt-maxGoAlignment) {
		return 1
	}
	b := alignedBytes(int(n), int(align))
	_, h := newOwner([][]byte{b}, nil)
	// Pinned by newOwner: C may keep this pointer until hurrayGoRelease.
	*outData = (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b)))
	*outOwner = C.uintptr_t(h)
	return 0
}

// hurrayGoRelease is the release callback of Go-owned memory (reached through
// hurray_go_release in hurray_go.c). The library calls it exactly once per owner,
// on any thread; it unpins the memory and runs the OnRelease callbacks. A panic
// must not unwind into C, so it is recovered and reported on stderr.
//
//export hurrayGoRelease
func hurrayGoRelease(ctx C.uintptr_t) {
	defer func() {
		if r := recover(); r != nil {
			releaseErrors.Add(1)
			fmt.Fprintf(os.Stderr, "hurray: panic in a release callback: %v\n", r)
		}
	}()
	h := cgo.Handle(ctx)
	o := h.Value().(*goOwner) // panics on a handle already released
	h.Delete()
	o.pinner.Unpin()
	o.keep = nil
	ownersReleased.Add(1)
	for _, f := range o.onRelease {
		f()
	}
}
