package hurray

// How this package reaches the library
//
// Everything goes through include/hurray.h (copied into ./include) and the
// hurray-ffi static library (./lib/<GOOS>_<GOARCH>/libhurray_ffi.a, built and
// placed there by `cargo xtask go build`, or shipped in the release archive).
//
// Every wrapper type follows one shape (as wasmtime-go does): a private C pointer,
// nil once the object is closed or consumed (with a note of why, for messages),
// read only through a method that checks it — handle() panics on a closed object
// (for accessors without an error result), live() and arg() return an error
// matching ErrClosed (for functions that return errors, given the object as
// receiver or as argument) — and, under the `hurray_debug` build tag, forces a
// garbage collection first. The collection makes a missing runtime.KeepAlive fail in tests:
// without KeepAlive after a C call, a collection during the call may run the
// object's cleanup and free the handle the call is using.
//
// The library's error message is thread-local, and a goroutine may move between OS
// threads between two cgo calls, so fallible calls run through [call], which keeps
// the goroutine on its thread from the call until the message has been read.

/*
#cgo CFLAGS: -I${SRCDIR}/include
#cgo linux,amd64 LDFLAGS: -L${SRCDIR}/lib/linux_amd64
#cgo linux,arm64 LDFLAGS: -L${SRCDIR}/lib/linux_arm64
#cgo darwin,amd64 LDFLAGS: -L${SRCDIR}/lib/darwin_amd64
#cgo darwin,arm64 LDFLAGS: -L${SRCDIR}/lib/darwin_arm64
#cgo LDFLAGS: -lhurray_ffi
// No -lgcc_s: the compiler driver adds the unwinder itself (libgcc_s in a dynamic
// link, libgcc_eh in a static one), so `-extldflags -static` links too.
#cgo linux LDFLAGS: -lpthread -lm -ldl
#cgo darwin LDFLAGS: -lSystem -lc -lm
#include "hurray.h"
#include "hurray_go.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"unsafe"
)

// ABIVersion is the C ABI version this package is written against
// (HURRAY_C_ABI_VERSION). The package refuses to start when its header copy or the
// linked library says another.
const ABIVersion uint32 = 10

func init() {
	if ABIVersion != C.HURRAY_C_ABI_VERSION {
		panic(fmt.Sprintf("hurray: include/hurray.h declares C ABI version %d, this package is written for %d", C.HURRAY_C_ABI_VERSION, ABIVersion))
	}
	if MaxRank != C.HURRAY_MAX_RANK {
		panic("hurray: MaxRank differs from HURRAY_MAX_RANK in include/hurray.h")
	}
	if got := uint32(C.hurray_c_abi_version()); got != ABIVersion {
		panic(fmt.Sprintf("hurray: linked library has C ABI version %d, this package needs %d; rebuild it with `cargo xtask go build`", got, ABIVersion))
	}
}

// call runs one fallible C call and turns a failure into an *Error carrying the
// library's message; op is the operation of this package the caller performs
// ("NewDense", `File.Tensor "w"`), which the *Error reports as its Op. The
// goroutine stays on its OS thread from the call until the thread-local message
// has been read.
func call(op string, f func() C.HurrayStatus) error {
	runtime.LockOSThread()
	status := f()
	var err error
	if status != C.HURRAY_OK {
		err = lastError(op, status)
	}
	runtime.UnlockOSThread()
	return err
}

// lastError builds the *Error for status, with this thread's last message.
func lastError(op string, status C.HurrayStatus) *Error {
	msg := ""
	if p := C.hurray_last_error_message(); p != nil {
		// The library starts its messages with the status name, which Error
		// prints already.
		msg = strings.TrimPrefix(C.GoString(p), Status(status).String()+": ")
	}
	return &Error{Status: Status(status), Message: msg, Op: op,
		Errno:   syscall.Errno(C.hurray_last_error_os_error()),
		NetCode: uint32(C.hurray_last_error_net_code())}
}

// must panics when a call that cannot fail on a live handle fails anyway (a bug in
// this package or the library, not a condition a program can handle).
func must(op string, status C.HurrayStatus) {
	if status != C.HURRAY_OK {
		panic(fmt.Sprintf("hurray: internal error: %s: %s", op, Status(status)))
	}
}

// LiveObjects reports how many handles of the library are alive in this process
// (tensors, descriptors, buffers, items, readers, writers, ... and the parts a
// tensor owns). It returns to zero once every object has been closed or collected,
// which is what leak tests assert.
func LiveObjects() int64 {
	return int64(C.hurray_debug_live_objects())
}

// bytesPtr is the C view of a Go byte slice: its first byte, or NULL when empty.
func bytesPtr(b []byte) *C.uint8_t {
	if len(b) == 0 {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b)))
}

// u64Ptr is the C view of a Go uint64 slice, or NULL when empty.
func u64Ptr(s []uint64) *C.uint64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(s)))
}

// i64Ptr is the C view of a Go int64 slice, or NULL when empty.
func i64Ptr(s []int64) *C.int64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(unsafe.SliceData(s)))
}

// u32Ptr is the C view of a Go uint32 slice, or NULL when empty.
func u32Ptr(s []uint32) *C.uint32_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.uint32_t)(unsafe.Pointer(unsafe.SliceData(s)))
}
