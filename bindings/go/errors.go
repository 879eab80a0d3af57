package hurray

// #include "hurray.h"
import "C"

import (
	"errors"
	"io"
	"io/fs"
	"strconv"
)

// Status is a status code of the C ABI: 0 for success, negative for an error.
// Codes are stable once published.
type Status int32

// The status codes of the C ABI (HURRAY_OK, HURRAY_ERR_*).
const (
	StatusOK               Status = C.HURRAY_OK
	StatusNullPointer      Status = C.HURRAY_ERR_NULL_POINTER
	StatusInvalidArgument  Status = C.HURRAY_ERR_INVALID_ARGUMENT
	StatusABIVersion       Status = C.HURRAY_ERR_ABI_VERSION
	StatusOutOfRange       Status = C.HURRAY_ERR_OUT_OF_RANGE
	StatusBufferTooSmall   Status = C.HURRAY_ERR_BUFFER_TOO_SMALL
	StatusNotApplicable    Status = C.HURRAY_ERR_NOT_APPLICABLE
	StatusDoubleDestroy    Status = C.HURRAY_ERR_DOUBLE_DESTROY
	StatusState            Status = C.HURRAY_ERR_STATE
	StatusNotFound         Status = C.HURRAY_ERR_NOT_FOUND
	StatusDescriptor       Status = C.HURRAY_ERR_DESCRIPTOR
	StatusBufferMismatch   Status = C.HURRAY_ERR_BUFFER_MISMATCH
	StatusInvalidSyncMode  Status = C.HURRAY_ERR_INVALID_SYNC_MODE
	StatusSyncModeMismatch Status = C.HURRAY_ERR_SYNC_MODE_MISMATCH
	StatusFormat           Status = C.HURRAY_ERR_FORMAT
	StatusTruncated        Status = C.HURRAY_ERR_TRUNCATED
	StatusLimit            Status = C.HURRAY_ERR_LIMIT
	StatusIO               Status = C.HURRAY_ERR_IO
	StatusFileNotFound     Status = C.HURRAY_ERR_FILE_NOT_FOUND
	StatusInternalPanic    Status = C.HURRAY_ERR_INTERNAL_PANIC
)

// String is the code's name in the C header, e.g. "HURRAY_ERR_TRUNCATED", or
// "HURRAY_UNKNOWN_STATUS(-77)" for a code this library does not know.
func (s Status) String() string {
	name := C.GoString(C.hurray_status_name(C.HurrayStatus(s)))
	if name == "HURRAY_UNKNOWN_STATUS" {
		return name + "(" + strconv.Itoa(int(s)) + ")"
	}
	return name
}

// Error is an error reported by the library: the status code (for programs) and
// the library's message (for people: which rule, which byte offset).
//
// Compare with the sentinels using errors.Is, which matches on the status alone:
//
//	if errors.Is(err, hurray.ErrDescriptor) { ... }
//
// An error whose status is StatusTruncated also matches io.ErrUnexpectedEOF, and
// one whose status is StatusFileNotFound matches fs.ErrNotExist.
type Error struct {
	// Status is the C status code.
	Status Status
	// Message is the library's explanation; it may be empty.
	Message string
	// Op names the operation that failed (a C function or a method of this package).
	Op string
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
// io.ErrUnexpectedEOF for a truncated input and fs.ErrNotExist for a missing file.
func (e *Error) Unwrap() error {
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
	ErrDescriptor       = &Error{Status: StatusDescriptor}
	ErrBufferMismatch   = &Error{Status: StatusBufferMismatch}
	ErrInvalidSyncMode  = &Error{Status: StatusInvalidSyncMode}
	ErrSyncModeMismatch = &Error{Status: StatusSyncModeMismatch}
	ErrFormat           = &Error{Status: StatusFormat}
	ErrTruncated        = &Error{Status: StatusTruncated}
	ErrLimit            = &Error{Status: StatusLimit}
	ErrIO               = &Error{Status: StatusIO}
	ErrFileNotFound     = &Error{Status: StatusFileNotFound}
	ErrInternalPanic    = &Error{Status: StatusInternalPanic}
)

// ErrClosed is returned (wrapped) by methods called on an object after its Close.
// Accessors that cannot return an error panic instead.
var ErrClosed = errors.New("hurray: use of a closed object")

// closedPanic is the panic message of an accessor called after Close.
func closedPanic(what string) string {
	return "hurray: use of a closed " + what
}
