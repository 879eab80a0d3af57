package hurray

/*
#include <stdlib.h>
#include "hurray.h"
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// File is an open HRRYFILE: memory-mapped (privately, copy-on-write) and validated
// on open (header, trailer, index and its CRC, KV, every descriptor, composite
// structure) without reading payload bytes.
//
// Tensors and items taken from a File are zero-copy views of the mapping, and each
// holds its own reference to it: they stay valid after the File is closed, until
// they are closed themselves. Writing into a tensor's memory never reaches the
// file. The file must not be truncated or modified by anyone while mapped.
//
// A File is safe for concurrent use by several goroutines (its methods take turns
// on the underlying handle). Close is idempotent, and a cleanup closes a File that
// becomes unreachable.
type File struct {
	mu      sync.Mutex
	ptr     *C.HurrayFileReader
	cleanup runtime.Cleanup
}

// FileInfo holds file-level facts of an open file (offsets and lengths in bytes).
type FileInfo struct {
	VersionMajor, VersionMinor uint8
	Flags                      uint32 // HURRAY_FILE_FLAG_* bits
	DataAlignment              uint32 // every data buffer starts at a multiple of it
	CRCVerified                bool   // the index CRC-32C was present and matched
	IndexCRC32C                uint32 // 0 when absent
	TensorCountHint            uint64 // CountUnknown when the writer did not say
	Size                       uint64
	FirstDescriptorOffset      uint64
	IndexOffset, IndexLength   uint64
	KVOffset, KVLength         uint64 // 0 when there is no KV section
	TensorCount                uint64 // composite heads and members included
	KVCount                    uint64
}

// pathOnce drops the path the library's message starts with ("/p: I/O error:
// ..."), when err is an *Error whose Op names it already (`OpenFile "/p"`), so the
// error names the path once.
func pathOnce(err error, path string) error {
	if e, ok := err.(*Error); ok && path != "" {
		e.Message = strings.TrimPrefix(e.Message, path+": ")
	}
	return err
}

// CountUnknown is FileInfo.TensorCountHint when the writer did not announce a count.
const CountUnknown = ^uint64(0)

// MaxWholeKVArray is the most elements a whole-value KV read ([File.Metadata],
// [File.Value]) materialises from one array: 1,048,576. A Go value costs up to 16
// bytes per element (a string header) where the file may hold 4 (an empty string) or
// 1 (a bool), so without a bound an untrusted file could make a reader allocate many
// times its own size. A larger array fails with [StatusLimit]; read it a window at a
// time with [File.ValueLen] and [File.ValueRange]. The bound is the library's
// (HURRAY_KV_WHOLE_ARRAY_MAX), the same in every binding.
const MaxWholeKVArray = 1 << 20

// The constant above is the library's: this fails to compile if they ever differ.
var _ = [1]struct{}{}[MaxWholeKVArray-C.HURRAY_KV_WHOLE_ARRAY_MAX]

func destroyFileReader(p *C.HurrayFileReader) { C.hurray_file_reader_destroy(&p) }

// OpenFile opens and validates the HRRYFILE at path. A missing file gives an error
// matching fs.ErrNotExist (and ErrFileNotFound); bad content an *Error naming the
// rule and byte offset. A file cut short (one that does not end with its trailer)
// gives ErrTruncated, which also matches io.ErrUnexpectedEOF. A path holding a NUL
// byte gives ErrInvalidArgument.
//
//	f, err := hurray.OpenFile("model.hrry")
//	if err != nil {
//		return err // e.g. hurray: OpenFile "model.hrry": I/O error: No such file or directory ...
//	}
//	defer f.Close()
//	t, err := f.Tensor("weights")
//	if err != nil {
//		return err
//	}
//	defer t.Close()
//	var sum float32
//	err = t.WithFloat32s(func(v []float32) error { // the mapped file itself, during the callback
//		for _, x := range v {
//			sum += x
//		}
//		return nil
//	})
func OpenFile(path string) (*File, error) {
	return openFile(fmt.Sprintf("OpenFile %q", path), path, nil)
}

// ReadOptions bounds what OpenFileWith accepts from a file, and selects permissive
// descriptor decoding. Zero fields take the library's defaults (those OpenFile
// uses).
type ReadOptions struct {
	// MaxDescriptorBytes is the largest descriptor accepted (default 16 MiB).
	MaxDescriptorBytes uint32
	// MaxCompositeDepth is the deepest composite nesting, counting the outermost
	// head (default 8; values above 64 act as 64).
	MaxCompositeDepth uint32
	// MaxBufferBytes is the largest single buffer accepted (default 64 GiB).
	MaxBufferBytes uint64
	// MaxKVBytes is the largest KV metadata section (default 64 MiB).
	MaxKVBytes uint64
	// MaxIndexBytes is the largest index section (default 256 MiB).
	MaxIndexBytes uint64
	// MaxKVEntries is the most KV entries (default 1<<20).
	MaxKVEntries uint64
	// MaxTensors is the most tensors in the index, composite heads and members
	// included (default 1<<24).
	MaxTensors uint64
	// MaxCompositeMembers is the most members of one composite (default 65536).
	MaxCompositeMembers uint32
	// MaxTilingDepth is the deepest tiled-layout nesting (default 8).
	MaxTilingDepth uint8
	// Permissive keeps unknown element types, quantization schemes and private
	// tags opaque instead of rejecting them (descriptor.md §15). Never interpret
	// the data of such a tensor.
	Permissive bool
	// AcceptPrivate: an out-of-band agreement on private tags exists.
	AcceptPrivate bool
}

func (o *ReadOptions) c() C.HurrayFileReadOptions {
	var out C.HurrayFileReadOptions
	must("hurray_file_read_options_default", C.hurray_file_read_options_default(&out))
	setU32(&out.max_descriptor_bytes, o.MaxDescriptorBytes)
	setU32(&out.max_composite_depth, o.MaxCompositeDepth)
	setU64(&out.max_buffer_bytes, o.MaxBufferBytes)
	setU64(&out.max_kv_bytes, o.MaxKVBytes)
	setU64(&out.max_index_bytes, o.MaxIndexBytes)
	setU64(&out.max_kv_entries, o.MaxKVEntries)
	setU64(&out.max_tensors, o.MaxTensors)
	setU32(&out.max_composite_members, o.MaxCompositeMembers)
	if o.MaxTilingDepth != 0 {
		out.max_tiling_depth = C.uint8_t(o.MaxTilingDepth)
	}
	out.permissive = cbool(o.Permissive)
	out.accept_private = cbool(o.AcceptPrivate)
	return out
}

// OpenFileWith is OpenFile under other limits (raise them to open files larger
// than the defaults allow; lower them for untrusted input) or with permissive
// decoding. A nil opts means the defaults. A file beyond a limit fails with an
// *Error of StatusLimit naming the limit and the byte offset.
func OpenFileWith(path string, opts *ReadOptions) (*File, error) {
	return openFile(fmt.Sprintf("OpenFileWith %q", path), path, opts)
}

func openFile(op, path string, opts *ReadOptions) (*File, error) {
	cpath, err := cString(op, "path", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	var p *C.HurrayFileReader
	if opts == nil {
		err = call(op, func() C.HurrayStatus { return C.hurray_file_reader_open(cpath, &p) })
	} else {
		co := opts.c()
		err = call(op, func() C.HurrayStatus { return C.hurray_file_reader_open_with(cpath, &co, &p) })
	}
	if err != nil {
		return nil, pathOnce(err, path)
	}
	f := &File{ptr: p}
	f.cleanup = runtime.AddCleanup(f, destroyFileReader, p)
	return f, nil
}

func (f *File) handle() *C.HurrayFileReader {
	if f.ptr == nil {
		panic(closedPanic("the File is closed"))
	}
	maybeGC()
	return f.ptr
}

// Close releases the reader. Tensors and items taken from it stay valid. It is
// idempotent.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptr == nil {
		return nil
	}
	p := f.ptr
	f.ptr = nil
	f.cleanup.Stop()
	return call("File.Close", func() C.HurrayStatus { return C.hurray_file_reader_destroy(&p) })
}

// Info returns the file-level facts. It panics on a closed File.
func (f *File) Info() FileInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	var i C.HurrayFileInfo
	must("hurray_file_reader_info", C.hurray_file_reader_info(f.handle(), &i))
	runtime.KeepAlive(f)
	return FileInfo{
		VersionMajor: uint8(i.version_major), VersionMinor: uint8(i.version_minor), Flags: uint32(i.flags),
		DataAlignment: uint32(i.data_buffer_alignment), CRCVerified: i.crc_status == C.HURRAY_CRC_VERIFIED,
		IndexCRC32C: uint32(i.index_crc32c), TensorCountHint: uint64(i.tensor_count_hint), Size: uint64(i.file_len),
		FirstDescriptorOffset: uint64(i.first_descriptor_offset), IndexOffset: uint64(i.index_offset),
		IndexLength: uint64(i.index_length), KVOffset: uint64(i.kv_offset), KVLength: uint64(i.kv_length),
		TensorCount: uint64(i.tensor_count), KVCount: uint64(i.kv_count),
	}
}

// VerifyDataCRC32C recomputes the CRC-32C of every tensor's data and compares it
// with the value recorded by a writer created with WriteOptions.DataCRC32C. It
// reads every data byte of the file once; opening a file never does. It returns
// true when every tensor matched, and false with a nil error when the file records
// no data CRC (its data cannot be checked). A tensor whose data differs gives an
// *Error of StatusFormat (matching ErrFormat) whose message names the tensor, both
// values and the byte offset (rule DataCrcMismatch). A closed File gives an error
// wrapping ErrClosed.
func (f *File) VerifyDataCRC32C() (bool, error) {
	const op = "File.VerifyDataCRC32C"
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptr == nil {
		return false, errClosed(op, "the File is closed")
	}
	p := f.handle()
	var status C.uint8_t
	err := call(op, func() C.HurrayStatus {
		return C.hurray_file_reader_verify_data_crc32c(p, &status)
	})
	runtime.KeepAlive(f)
	if err != nil {
		return false, err
	}
	return status == C.HURRAY_CRC_VERIFIED, nil
}

// Names returns the tensor names in index order (composite members included, as
// "head/0", "head/1", ...). It panics on a closed File.
func (f *File) Names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.handle()
	var n C.uint64_t
	must("hurray_file_reader_tensor_count", C.hurray_file_reader_tensor_count(p, &n))
	names := make([]string, int(n))
	for i := range names {
		var s *C.char
		var l C.uint64_t
		must("hurray_file_reader_tensor_name", C.hurray_file_reader_tensor_name(p, C.uint64_t(i), &s, &l))
		names[i] = C.GoStringN(s, C.int(l))
	}
	runtime.KeepAlive(f)
	return names
}

// withName runs fn with name (its bytes and length, for the C functions that take
// a length, so a name may hold NUL bytes) on the live reader; errors name the
// operation as `op "name"`.
func (f *File) withName(method, name string, fn func(p *C.HurrayFileReader, cname *C.char, n C.uint64_t) C.HurrayStatus) error {
	op := fmt.Sprintf("%s %q", method, name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptr == nil {
		return errClosed(op, "the File is closed")
	}
	p := f.handle()
	cname, n := cName(name)
	err := call(op, func() C.HurrayStatus { return fn(p, cname, n) })
	runtime.KeepAlive(f)
	runtime.KeepAlive(name)
	return err
}

// Descriptor returns the descriptor of the tensor named name, without touching its
// data. An unknown name gives ErrNotFound.
func (f *File) Descriptor(name string) (Descriptor, error) {
	var d *C.HurrayDescriptor
	err := f.withName("File.Descriptor", name, func(p *C.HurrayFileReader, cname *C.char, n C.uint64_t) C.HurrayStatus {
		return C.hurray_file_reader_descriptor_n(p, cname, n, &d)
	})
	if err != nil {
		return Descriptor{}, err
	}
	defer C.hurray_descriptor_destroy(&d)
	return readDescriptor(d), nil
}

// Tensor returns the tensor named name: zero-copy views of the mapping, valid
// until the Tensor is closed (even after the File is). For a composite head this is
// the head alone; use Item for the whole composite. An unknown name gives
// ErrNotFound.
func (f *File) Tensor(name string) (*Tensor, error) {
	var t *C.HurrayTensor
	err := f.withName("File.Tensor", name, func(p *C.HurrayFileReader, cname *C.char, n C.uint64_t) C.HurrayStatus {
		return C.hurray_file_reader_tensor_n(p, cname, n, &t)
	})
	if err != nil {
		return nil, err
	}
	return newTensor(t), nil
}

// Item returns the item named name: a tensor, or a composite with its members.
// It stays valid after the File is closed, until it is closed itself.
func (f *File) Item(name string) (*Item, error) {
	var it *C.HurrayItem
	err := f.withName("File.Item", name, func(p *C.HurrayFileReader, cname *C.char, n C.uint64_t) C.HurrayStatus {
		return C.hurray_file_reader_item_n(p, cname, n, &it)
	})
	if err != nil {
		return nil, err
	}
	return newItem(it), nil
}

// KV is one key-value metadata entry of a file.
type KV struct {
	Key string
	// Value is a string, int64, uint64, float64, bool or []byte, or a slice of one
	// of them ([]string, []int64, []uint64, []float64, []bool, [][]byte).
	Value any
}

// Metadata returns the file's KV entries in file order. An array of more than
// [MaxWholeKVArray] elements fails it with [StatusLimit] (use [File.Keys] and
// [File.ValueRange] for such a file).
func (f *File) Metadata() ([]KV, error) {
	const op = "File.Metadata"
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptr == nil {
		return nil, errClosed(op, "the File is closed")
	}
	p := f.handle()
	defer runtime.KeepAlive(f)
	var n C.uint64_t
	must("hurray_file_reader_kv_count", C.hurray_file_reader_kv_count(p, &n))
	out := make([]KV, 0, int(n))
	for i := C.uint64_t(0); i < n; i++ {
		var s *C.char
		var l C.uint64_t
		must("hurray_file_reader_kv_key", C.hurray_file_reader_kv_key(p, i, &s, &l))
		v, err := kvValue(op, p, i, 0, -1)
		if err != nil {
			return nil, err
		}
		out = append(out, KV{Key: C.GoStringN(s, C.int(l)), Value: v})
	}
	return out, nil
}

// Keys returns the KV keys in file order, without reading any value.
func (f *File) Keys() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptr == nil {
		return nil, errClosed("File.Keys", "the File is closed")
	}
	p := f.handle()
	defer runtime.KeepAlive(f)
	var n C.uint64_t
	must("hurray_file_reader_kv_count", C.hurray_file_reader_kv_count(p, &n))
	keys := make([]string, int(n))
	for i := range keys {
		var s *C.char
		var l C.uint64_t
		must("hurray_file_reader_kv_key", C.hurray_file_reader_kv_key(p, C.uint64_t(i), &s, &l))
		keys[i] = C.GoStringN(s, C.int(l))
	}
	return keys, nil
}

// Value returns the value of the KV entry key (see KV.Value for the Go types). A
// missing key gives ErrNotFound; an array of more than [MaxWholeKVArray] elements
// gives StatusLimit (read it with [File.ValueRange]).
func (f *File) Value(key string) (any, error) {
	return f.value("File.Value", key, 0, -1)
}

// ValueLen returns the length of the KV value under key: the number of elements
// of an array, the number of bytes of a string or []byte, 1 for other scalars. A
// missing key gives ErrNotFound.
func (f *File) ValueLen(key string) (int, error) {
	var n int
	err := f.onValue("File.ValueLen", key, func(op string, p *C.HurrayFileReader, i C.uint64_t) error {
		v := kvRead(p, i)
		n = 1
		switch v.type_tag {
		case C.HURRAY_KV_TYPE_STRING, C.HURRAY_KV_TYPE_BYTES, C.HURRAY_KV_TYPE_ARRAY:
			n = int(v.len)
		}
		return nil
	})
	return n, err
}

// ValueRange returns elements [start, start+count) of the KV array under key, as
// a slice of the type Value gives ([]string, []int64, ...). It is the way to read
// a huge array a window at a time: Value and Metadata build the whole slice, and
// a []string or [][]byte costs 24 bytes or more per element (a string header, a
// slice header), several times what the file holds for short strings (4 bytes of
// length prefix). A window costs only its elements. A missing key gives ErrNotFound, a value
// that is not an array ErrNotApplicable, a window past the end ErrOutOfRange.
func (f *File) ValueRange(key string, start, count int) (any, error) {
	if start < 0 || count < 0 {
		return nil, &Error{Status: StatusOutOfRange, Op: fmt.Sprintf("File.ValueRange %q", key),
			Message: fmt.Sprintf("the window start %d, count %d is negative", start, count)}
	}
	return f.value("File.ValueRange", key, start, count)
}

// value reads the KV value under key; see kvValue for start and count.
func (f *File) value(method, key string, start, count int) (any, error) {
	var v any
	err := f.onValue(method, key, func(op string, p *C.HurrayFileReader, i C.uint64_t) error {
		var err error
		v, err = kvValue(op, p, i, start, count)
		return err
	})
	return v, err
}

// onValue runs fn on the live reader with the index of the KV entry key.
func (f *File) onValue(method, key string, fn func(op string, p *C.HurrayFileReader, i C.uint64_t) error) error {
	var idx C.uint64_t
	err := f.withName(method, key, func(p *C.HurrayFileReader, ckey *C.char, n C.uint64_t) C.HurrayStatus {
		return C.hurray_file_reader_kv_find_n(p, ckey, n, &idx)
	})
	if err != nil {
		return err
	}
	op := fmt.Sprintf("%s %q", method, key)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptr == nil {
		return errClosed(op, "the File is closed")
	}
	err = fn(op, f.handle(), idx)
	runtime.KeepAlive(f)
	return err
}

// kvWindow copies elements [from, from+count) of the numeric or bool KV array i
// (size bytes each) into the memory at out, which holds count of them.
func kvWindow(p *C.HurrayFileReader, i C.uint64_t, from int, out unsafe.Pointer, count, size int) {
	if count == 0 {
		out = nil
	}
	must("hurray_file_reader_kv_array_window", C.hurray_file_reader_kv_array_window(
		p, i, C.uint64_t(from), C.uint64_t(count), out, C.uint64_t(count*size)))
}

// kvRead reads KV entry i as one tagged value (one C call); its data is borrowed
// from the reader.
func kvRead(p *C.HurrayFileReader, i C.uint64_t) C.HurrayKvValue {
	var v C.HurrayKvValue
	must("hurray_file_reader_kv_value", C.hurray_file_reader_kv_value(p, i, &v))
	return v
}

// kvValue reads KV entry i as a Go value. For an array, only its elements
// [from, from+want) are read (want < 0: all of them); a window (want >= 0) is
// refused for a scalar, and past the end.
func kvValue(op string, p *C.HurrayFileReader, i C.uint64_t, from, want int) (any, error) {
	v := kvRead(p, i)
	typ, elem, count := v.type_tag, v.element_type, v.len
	str := func(e *C.HurrayKvValue) string { return C.GoStringN((*C.char)(e.data), C.int(e.len)) }
	bytes := func(e *C.HurrayKvValue) []byte {
		if e.len == 0 {
			return []byte{}
		}
		return C.GoBytes(e.data, C.int(e.len))
	}
	if count > math.MaxInt32 {
		return nil, &Error{Status: StatusLimit, Op: op, Message: "a KV value too large for this package"}
	}
	if want >= 0 && typ != C.HURRAY_KV_TYPE_ARRAY {
		return nil, &Error{Status: StatusNotApplicable, Op: op, Message: "the KV value is not an array"}
	}
	if want < 0 {
		// A whole value: the same bound on a huge array as every binding
		// (MaxWholeKVArray; read larger arrays with ValueRange).
		if rc := C.hurray_file_reader_kv_check_whole(p, i); rc != C.HURRAY_OK {
			return nil, lastError(op, rc)
		}
		from, want = 0, int(count)
	}
	if typ == C.HURRAY_KV_TYPE_ARRAY && uint64(from)+uint64(want) > uint64(count) {
		return nil, &Error{Status: StatusOutOfRange, Op: op,
			Message: fmt.Sprintf("the window [%d, %d) is past the array's %d elements", from, from+want, count)}
	}
	// element reads element from+k of a string or byte-sequence array into one
	// value shared by every call: a value passed to C escapes to the heap, and one
	// per element would be 48 bytes of garbage each (for 16.7 M empty strings the
	// garbage collector then let the heap grow to twice the []string).
	e := new(C.HurrayKvValue)
	element := func(k int) *C.HurrayKvValue {
		must("hurray_file_reader_kv_array_element", C.hurray_file_reader_kv_array_element(p, i, C.uint64_t(from+k), e))
		return e
	}
	switch typ {
	case C.HURRAY_KV_TYPE_STRING:
		return str(&v), nil
	case C.HURRAY_KV_TYPE_INT64:
		return int64(v.int64_value), nil
	case C.HURRAY_KV_TYPE_UINT64:
		return uint64(v.uint64_value), nil
	case C.HURRAY_KV_TYPE_FLOAT64:
		return float64(v.float64_value), nil
	case C.HURRAY_KV_TYPE_BOOL:
		return v.bool_value != 0, nil
	case C.HURRAY_KV_TYPE_BYTES:
		return bytes(&v), nil
	case C.HURRAY_KV_TYPE_ARRAY:
		switch elem {
		case C.HURRAY_KV_TYPE_STRING:
			// An empty element is "", which allocates nothing.
			out := make([]string, want)
			for k := range out {
				out[k] = str(element(k))
			}
			return out, nil
		case C.HURRAY_KV_TYPE_BYTES:
			out := make([][]byte, want)
			for k := range out {
				out[k] = bytes(element(k))
			}
			return out, nil
		case C.HURRAY_KV_TYPE_INT64:
			out := make([]int64, want)
			kvWindow(p, i, from, unsafe.Pointer(unsafe.SliceData(out)), want, 8)
			return out, nil
		case C.HURRAY_KV_TYPE_UINT64:
			out := make([]uint64, want)
			kvWindow(p, i, from, unsafe.Pointer(unsafe.SliceData(out)), want, 8)
			return out, nil
		case C.HURRAY_KV_TYPE_FLOAT64:
			out := make([]float64, want)
			kvWindow(p, i, from, unsafe.Pointer(unsafe.SliceData(out)), want, 8)
			return out, nil
		case C.HURRAY_KV_TYPE_BOOL:
			// The library writes bytes 0 and 1, which is how Go stores a bool: the
			// elements go straight into the []bool.
			out := make([]bool, want)
			kvWindow(p, i, from, unsafe.Pointer(unsafe.SliceData(out)), want, 1)
			return out, nil
		}
	}
	return nil, &Error{Status: StatusFormat, Op: op, Message: fmt.Sprintf("KV entry %d has an unknown type %d/%d", i, typ, elem)}
}

// WriteOptions configures CreateFile. The zero value gives the defaults.
type WriteOptions struct {
	// Alignment of every data buffer in bytes: a power of two in 4096..2 MiB
	// (0: 4096).
	Alignment uint32
	// MaxCompositeDepth is the deepest composite nesting accepted (0: 8).
	MaxCompositeDepth uint32
	// TensorCount, when not 0, is announced in the header (heads and members
	// included); Close fails if a different number was written.
	TensorCount uint64
	// SortedIndex sorts index entries by name.
	SortedIndex bool
	// NoIndexCRC leaves out the CRC-32C of the index (not recommended).
	NoIndexCRC bool
	// ReferenceCompat reproduces the reference writer byte for byte.
	ReferenceCompat bool
	// NoSync skips the fsync of the file and its directory on Close.
	NoSync bool
	// DataCRC32C records a CRC-32C of every tensor's data in the reserved KV
	// entry "hurray.data_crc32c" (one uint64 per tensor in file order), which
	// [File.VerifyDataCRC32C] and `hurray validate` check. Other readers see one
	// more KV entry. Off by default: the file is then byte for byte what it was.
	DataCRC32C bool
}

// FileWriter writes an HRRYFILE. Bytes go to a temporary file beside the
// destination, which appears (atomically, by rename) only when Close succeeds; a
// writer closed after a failed write, or collected without Close, leaves nothing
// at the destination. Use [FileWriter.Abort] to give up explicitly.
type FileWriter struct {
	mu      sync.Mutex
	ptr     *C.HurrayFileWriter
	cleanup runtime.Cleanup
	path    string
}

func destroyFileWriter(p *C.HurrayFileWriter) { C.hurray_file_writer_destroy(&p) }

// CreateFile starts writing the HRRYFILE that appears at path on Close. opts may
// be nil. A path holding a NUL byte gives ErrInvalidArgument.
//
//	bias := hurray.Make[int64](3) // 64-byte aligned
//	copy(bias, []int64{1, 2, 3})
//	t, _ := hurray.NewDense(bias, nil)
//	defer t.Close()
//	w, err := hurray.CreateFile("model.hrry", nil)
//	if err != nil {
//		return err
//	}
//	if err := w.WriteTensor("layer0.bias", t); err != nil {
//		w.Abort()
//		return err
//	}
//	w.AddKV("epoch", int64(12))
//	return w.Close() // the file appears now
func CreateFile(path string, opts *WriteOptions) (*FileWriter, error) {
	op := fmt.Sprintf("CreateFile %q", path)
	cpath, err := cString(op, "path", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	var o C.HurrayWriteOptions
	must("hurray_write_options_default", C.hurray_write_options_default(&o))
	if opts != nil {
		if opts.Alignment != 0 {
			o.data_buffer_alignment = C.uint32_t(opts.Alignment)
		}
		if opts.MaxCompositeDepth != 0 {
			o.max_composite_depth = C.uint32_t(opts.MaxCompositeDepth)
		}
		if opts.TensorCount != 0 {
			o.tensor_count_hint = C.uint64_t(opts.TensorCount)
		}
		o.sorted_index = cbool(opts.SortedIndex)
		o.index_crc = cbool(!opts.NoIndexCRC)
		o.reference_compat = cbool(opts.ReferenceCompat)
		o.durable = cbool(!opts.NoSync)
		o.data_crc32c = cbool(opts.DataCRC32C)
	}
	var p *C.HurrayFileWriter
	if err := call(op, func() C.HurrayStatus { return C.hurray_file_writer_create(cpath, &o, &p) }); err != nil {
		return nil, pathOnce(err, path)
	}
	w := &FileWriter{ptr: p, path: path}
	w.cleanup = runtime.AddCleanup(w, destroyFileWriter, p)
	return w, nil
}

// with runs fn with key (a name or a KV key) as a C string on the live writer,
// after check (which may refuse the call's other arguments); errors name the
// operation as `op "key"`.
func (w *FileWriter) with(method, key string, check func(op string) error, fn func(p *C.HurrayFileWriter, ckey *C.char, n C.uint64_t) C.HurrayStatus) error {
	op := fmt.Sprintf("%s %q", method, key)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ptr == nil {
		return errClosed(op, "the FileWriter is closed")
	}
	if check != nil {
		if err := check(op); err != nil {
			return err
		}
	}
	maybeGC()
	p := w.ptr
	ckey, n := cName(key)
	err := call(op, func() C.HurrayStatus { return fn(p, ckey, n) })
	runtime.KeepAlive(w)
	runtime.KeepAlive(key)
	return err
}

// WriteTensor writes t under name (unique, 1..65535 bytes of UTF-8; NUL bytes are
// allowed, as the format allows them):
// its descriptor, then its buffers, read from t's memory during the call. t stays
// the caller's. A composite head needs WriteItem (ErrFormat). A closed FileWriter
// gives an error wrapping ErrClosed; a nil or closed tensor ErrInvalidArgument (a
// closed one also matches ErrClosed).
func (w *FileWriter) WriteTensor(name string, t *Tensor) error {
	var tp *C.HurrayTensor
	err := w.with("FileWriter.WriteTensor", name, func(op string) (err error) {
		tp, err = t.arg(op)
		return err
	}, func(p *C.HurrayFileWriter, cname *C.char, n C.uint64_t) C.HurrayStatus {
		return C.hurray_file_writer_write_tensor_n(p, cname, n, tp)
	})
	if tp != nil {
		t.exit()
	}
	return err
}

// WriteItem writes it under name: a tensor, or a composite whose head gets name and
// whose members get "name/0", "name/1", nested "name/1/0", ... (validated before
// any byte is written). it stays the caller's. Errors as for WriteTensor.
func (w *FileWriter) WriteItem(name string, it *Item) error {
	var ip *C.HurrayItem
	err := w.with("FileWriter.WriteItem", name, func(op string) (err error) {
		ip, err = it.arg(op)
		return err
	}, func(p *C.HurrayFileWriter, cname *C.char, n C.uint64_t) C.HurrayStatus {
		return C.hurray_file_writer_write_item_n(p, cname, n, ip)
	})
	if ip != nil {
		it.exit()
	}
	return err
}

// AddKV adds a KV metadata entry (written after the tensors, in the order added).
// value is a string, int64, uint64, float64, bool or []byte, a slice of one of
// them ([]string, []int64, []uint64, []float64, []bool, [][]byte), or an int
// (stored as int64). Keys are UTF-8 and may hold NUL bytes; string values are
// UTF-8 without NUL bytes (a NUL byte gives ErrInvalidArgument; []byte values may
// hold any bytes).
func (w *FileWriter) AddKV(key string, value any) error {
	check := func(op string) error {
		switch v := value.(type) {
		case string:
			return checkNoNUL(op, "string value", v)
		case []string:
			for i, s := range v {
				if err := checkNoNUL(op, fmt.Sprintf("string %d of the value", i), s); err != nil {
					return err
				}
			}
		case int, int64, uint64, float64, bool, []byte, []int64, []uint64, []float64, []bool, [][]byte:
		default:
			return invalidArg(op, "unsupported KV value type %T", value)
		}
		return nil
	}
	return w.with("FileWriter.AddKV", key, check, func(p *C.HurrayFileWriter, k *C.char, n C.uint64_t) C.HurrayStatus {
		var pin runtime.Pinner
		defer pin.Unpin()
		v := kvTagged(&pin, value)
		return C.hurray_file_writer_add_kv(p, k, n, &v)
	})
}

// kvBytes points a tagged value's data at b (pinned for the call).
func kvBytes(pin *runtime.Pinner, v *C.HurrayKvValue, b *byte, n int) {
	if n > 0 {
		pin.Pin(b)
		v.data = unsafe.Pointer(b)
	}
	v.len = C.uint64_t(n)
}

// kvTagged is value as one tagged C value for hurray_file_writer_add_kv, pointing
// into value's own (pinned) memory; value's type was checked by AddKV.
func kvTagged(pin *runtime.Pinner, value any) C.HurrayKvValue {
	var v C.HurrayKvValue
	arrayOf := func(elem C.uint8_t) { v.type_tag, v.element_type = C.HURRAY_KV_TYPE_ARRAY, elem }
	switch x := value.(type) {
	case string:
		v.type_tag = C.HURRAY_KV_TYPE_STRING
		kvBytes(pin, &v, unsafe.StringData(x), len(x))
	case int:
		v.type_tag, v.int64_value = C.HURRAY_KV_TYPE_INT64, C.int64_t(x)
	case int64:
		v.type_tag, v.int64_value = C.HURRAY_KV_TYPE_INT64, C.int64_t(x)
	case uint64:
		v.type_tag, v.uint64_value = C.HURRAY_KV_TYPE_UINT64, C.uint64_t(x)
	case float64:
		v.type_tag, v.float64_value = C.HURRAY_KV_TYPE_FLOAT64, C.double(x)
	case bool:
		v.type_tag, v.bool_value = C.HURRAY_KV_TYPE_BOOL, cbool(x)
	case []byte:
		v.type_tag = C.HURRAY_KV_TYPE_BYTES
		kvBytes(pin, &v, unsafe.SliceData(x), len(x))
	case []int64:
		arrayOf(C.HURRAY_KV_TYPE_INT64)
		kvBytes(pin, &v, (*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	case []uint64:
		arrayOf(C.HURRAY_KV_TYPE_UINT64)
		kvBytes(pin, &v, (*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	case []float64:
		arrayOf(C.HURRAY_KV_TYPE_FLOAT64)
		kvBytes(pin, &v, (*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	case []bool:
		// A Go bool is one byte, 0 or 1: the elements go as they are.
		arrayOf(C.HURRAY_KV_TYPE_BOOL)
		kvBytes(pin, &v, (*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	case []string:
		arrayOf(C.HURRAY_KV_TYPE_STRING)
		elems := make([]C.HurrayKvValue, len(x))
		for i, s := range x {
			elems[i].type_tag = C.HURRAY_KV_TYPE_STRING
			kvBytes(pin, &elems[i], unsafe.StringData(s), len(s))
		}
		kvBytes(pin, &v, (*byte)(unsafe.Pointer(unsafe.SliceData(elems))), len(elems))
	case [][]byte:
		arrayOf(C.HURRAY_KV_TYPE_BYTES)
		elems := make([]C.HurrayKvValue, len(x))
		for i, b := range x {
			elems[i].type_tag = C.HURRAY_KV_TYPE_BYTES
			kvBytes(pin, &elems[i], unsafe.SliceData(b), len(b))
		}
		kvBytes(pin, &v, (*byte)(unsafe.Pointer(unsafe.SliceData(elems))), len(elems))
	default:
		panic("unreachable: checked by AddKV")
	}
	return v
}

// Close finishes the file (KV, index and trailer, flush, fsync unless NoSync) and
// renames it into place, then releases the writer. On error nothing appears at the
// destination. Close is idempotent: later calls return nil.
func (w *FileWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ptr == nil {
		return nil
	}
	p := w.ptr
	w.ptr = nil
	w.cleanup.Stop()
	err := call(fmt.Sprintf("FileWriter.Close %q", w.path), func() C.HurrayStatus { return C.hurray_file_writer_finish(p) })
	C.hurray_file_writer_destroy(&p)
	return pathOnce(err, w.path)
}

// Abort gives up: the temporary file is removed and nothing appears at the
// destination. A no-op after Close or Abort.
func (w *FileWriter) Abort() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ptr == nil {
		return nil
	}
	p := w.ptr
	w.ptr = nil
	w.cleanup.Stop()
	return call("FileWriter.Abort", func() C.HurrayStatus { return C.hurray_file_writer_destroy(&p) })
}
