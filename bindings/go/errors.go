package hurray

// #include "hurray.h"
import "C"

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// Status is a status code of the C ABI: 0 for success, negative for an error.
// Codes are stable once published.
type Status int32

// The status codes (StatusOK, StatusTruncated, ...) are generated into tables_gen.go
// from the library's own table, as Go literals.

// String is the code's name in the C header, e.g. "HURRAY_ERR_TRUNCATED", or
// "HURRAY_UNKNOWN_STATUS(-77)" for a code this library does not know.
func (s Status) String() string {
	if info, ok := statusInfo[s]; ok {
		return info.name
	}
	return "HURRAY_UNKNOWN_STATUS(" + strconv.Itoa(int(s)) + ")"
}

// Category is the status's error category, the same in every language:
// "not_found", "io", "truncated", "format", "invalid_argument", "state", "limit",
// "unsupported" or "internal" ("none" for StatusOK, "internal" for a code this
// package does not know).
func (s Status) Category() string {
	if info, ok := statusInfo[s]; ok {
		return info.category
	}
	return "internal"
}

// Error is an error reported by the library: the status code (for programs) and
// the library's message (for people: which rule, which byte offset).
//
// Compare with the sentinels using errors.Is, which matches on the status alone:
//
//	if errors.Is(err, hurray.ErrDescriptor) { ... }
//
// An error whose status is StatusTruncated also matches io.ErrUnexpectedEOF (only
// readers report it: a stream or file cut short), and one whose status is
// StatusFileNotFound matches fs.ErrNotExist. An error the operating system reported
// carries its errno in Errno and matches it (errors.Is(err, syscall.EISDIR) for a
// directory opened as a file). An ErrInvalidArgument error about a closed object
// passed as an argument also matches [ErrClosed].
type Error struct {
	// Status is the C status code.
	Status Status
	// Message is the library's explanation (or this package's); it may be empty.
	Message string
	// Op names the operation of this package that failed, as Go code calls it:
	// "NewDense", "Reader.Next", `File.Tensor "weights"` (with the name, key or
	// path it was given, quoted), never a C function.
	Op string
	// Errno is the operating system's error number when the OS reported the error
	// (ENOENT for a missing file, EISDIR for a directory), else 0.
	Errno syscall.Errno
	// NetCode is the network protocol's ERROR code (streams-and-transport.md
	// B.16) behind a network call's error, e.g. 2 for UNKNOWN_TENSOR, else 0.
	NetCode uint32

	wrapped error // a further error this one matches (ErrClosed for a closed argument)
}

// Error formats the error as "hurray: <op>: <message> (<STATUS>)".
func (e *Error) Error() string {
	s := "hurray: "
	if e.Op != "" {
		s += e.Op + ": "
	}
	if e.Message != "" {
		s += e.Message + " "
	}
	return s + "(" + e.Status.String() + ")"
}

// Is reports whether target is an *Error with the same status (the sentinels are),
// so errors.Is(err, hurray.ErrTruncated) works whatever the message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status
}

// Unwrap returns the standard error this one is an instance of, if any:
// io.ErrUnexpectedEOF for a truncated input, the OS's errno (a syscall.Errno, which
// matches fs.ErrNotExist for ENOENT) for an error the OS reported, fs.ErrNotExist
// for a missing file, and ErrClosed for a closed object passed as an argument.
func (e *Error) Unwrap() error {
	if e.wrapped != nil {
		return e.wrapped
	}
	if e.Errno != 0 {
		return e.Errno
	}
	switch e.Status {
	case StatusTruncated:
		return io.ErrUnexpectedEOF
	case StatusFileNotFound:
		return fs.ErrNotExist
	}
	return nil
}

// Sentinel errors, one per status code, for errors.Is.
var (
	ErrNullPointer      = &Error{Status: StatusNullPointer}
	ErrInvalidArgument  = &Error{Status: StatusInvalidArgument}
	ErrABIVersion       = &Error{Status: StatusABIVersion}
	ErrOutOfRange       = &Error{Status: StatusOutOfRange}
	ErrBufferTooSmall   = &Error{Status: StatusBufferTooSmall}
	ErrNotApplicable    = &Error{Status: StatusNotApplicable}
	ErrDoubleDestroy    = &Error{Status: StatusDoubleDestroy}
	ErrState            = &Error{Status: StatusState}
	ErrNotFound         = &Error{Status: StatusNotFound}
	ErrCancelled        = &Error{Status: StatusCancelled} // a network call's context was done, or its Client closed
	ErrDescriptor       = &Error{Status: StatusDescriptor}
	ErrBufferMismatch   = &Error{Status: StatusBufferMismatch}
	ErrInvalidSyncMode  = &Error{Status: StatusInvalidSyncMode}
	ErrSyncModeMismatch = &Error{Status: StatusSyncModeMismatch}
	ErrFormat           = &Error{Status: StatusFormat}
	ErrTruncated        = &Error{Status: StatusTruncated}
	ErrLimit            = &Error{Status: StatusLimit}
	ErrIO               = &Error{Status: StatusIO}
	ErrFileNotFound     = &Error{Status: StatusFileNotFound}
	ErrTimeout          = &Error{Status: StatusTimeout} // a network time limit (DialOptions) ran out
	ErrInternalPanic    = &Error{Status: StatusInternalPanic}
)

// ErrClosed is matched (errors.Is) by the error of any function or method that
// returns an error and is called on, or given, a closed object: one closed with
// Close, moved into an item by [NewItem] or [NewComposite], detached with
// [Tensor.Detach], or borrowed from an item that is closed. Accessors that have no
// error result panic instead (see the package documentation for the list).
var ErrClosed = errors.New("hurray: use of a closed object")

// closedError is the error of a method called on a closed receiver: it wraps
// ErrClosed and says what happened to the object.
type closedError struct {
	op  string
	why string // e.g. "the Reader is closed", "the tensor was moved into an item by NewItem"
}

func (e *closedError) Error() string { return "hurray: " + e.op + ": " + e.why }
func (e *closedError) Unwrap() error { return ErrClosed }

// errClosed is the error of op called on a closed receiver.
func errClosed(op, why string) error { return &closedError{op: op, why: why} }

// errClosedArg is the error of op given a closed object as an argument: an
// ErrInvalidArgument *Error that also matches ErrClosed.
func errClosedArg(op, why string) error {
	return &Error{Status: StatusInvalidArgument, Op: op, Message: why, wrapped: ErrClosed}
}

// invalidArg is an ErrInvalidArgument *Error made by this package.
func invalidArg(op, format string, args ...any) *Error {
	return &Error{Status: StatusInvalidArgument, Op: op, Message: fmt.Sprintf(format, args...)}
}

// closedPanic is the panic message of an accessor called on a closed object.
func closedPanic(why string) string {
	return "hurray: use of a closed object: " + why
}

// cString returns s as a C string (free it with C.free), or an ErrInvalidArgument
// error when s holds a NUL byte: the C ABI takes NUL-terminated strings, so
// C.CString would silently cut s at the NUL and the library would see another
// name, key or path.
func cString(op, what, s string) (*C.char, error) {
	if err := checkNoNUL(op, what, s); err != nil {
		return nil, err
	}
	return C.CString(s), nil
}

// cName points C at s's bytes for one call of a function that takes a length (the
// _n functions), without a copy or a NUL terminator, so s may hold NUL bytes. An
// empty s gets a pointer to a static byte, not NULL (NULL is refused). The caller
// keeps s alive until the call returns (cgo lets C read Go memory that holds no Go
// pointers during a call).
func cName(s string) (*C.char, C.uint64_t) {
	if len(s) == 0 {
		return (*C.char)(unsafe.Pointer(&emptyName)), 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.uint64_t(len(s))
}

var emptyName byte

// checkNoNUL reports an ErrInvalidArgument error when s holds a NUL byte (see
// cString).
func checkNoNUL(op, what, s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		// The operation (op) already names the value.
		return invalidArg(op, "the %s contains a NUL byte (at byte %d), which the C ABI's NUL-terminated strings cannot carry", what, i)
	}
	return nil
}
