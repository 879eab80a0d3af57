// Package hurray reads and writes Hurray tensors — the binary tensor format of
// the Hurray project — from Go, without copying tensor data.
//
// The package is a thin, idiomatic layer over the project's one C ABI
// (include/hurray.h, linked statically from the hurray-ffi library), so Go sees
// exactly what every other language sees.
//
// # Tensors
//
// A [Tensor] is a descriptor (element type, shape, layout and its fields,
// quantization, shard, statistics, device placement) plus its buffers. Read the
// descriptor through accessors ([Tensor.DType], [Tensor.Shape], [Tensor.Layout],
// ...) or as a whole Go value ([Tensor.Descriptor]). Read the data through
// zero-copy views: [Tensor.Bytes] for any buffer, typed views such as
// [Tensor.Float32s] (checked against the element type), or the generic [Values]
// and [View].
//
// To hand Go data to the library, allocate it 64-byte aligned with [Make], fill
// it, and wrap it with [NewDense] or, for any layout, [NewTensor] with a
// [Descriptor]. The memory is pinned (runtime.Pinner) rather than copied, and
// unpinned by a release callback when the library is done with it — exactly once,
// from whatever thread releases it; [OnRelease] runs your code then.
//
// Composites (a head tensor and ordered members, possibly nested) are [Item]
// values: build them with [NewItem] and [NewComposite]; readers return them.
//
// # Containers
//
// Streams: [NewReader] reads items from any io.Reader ([Reader.Next] returns io.EOF
// at a clean end, and an error matching io.ErrUnexpectedEOF when the stream is cut
// inside an item); [NewWriter] writes them to any io.Writer. Payload bytes go straight between
// the io.Reader/io.Writer and the tensors' memory.
//
// Files: [OpenFile] memory-maps an HRRYFILE (privately: writes to tensor memory
// never reach the file) and gives tensors, composites, descriptors and typed KV
// metadata by name; [CreateFile] writes one atomically (it appears on Close).
//
// # Lifetimes
//
// Every type that holds library memory — [Tensor], [Item], [File], [FileWriter],
// [Reader], [Writer] — has a Close method: call it when done (defer works well).
// Close is idempotent and releases the memory at once; the garbage collector cannot
// see that memory, so do not rely on it. As a safety net, an object that becomes
// unreachable without Close is released by a cleanup (runtime.AddCleanup).
//
// Tensors and members borrowed from an [Item] are valid until the item is closed.
// Tensors and items taken from a [File] or a [Reader] stay valid after the File or
// Reader is closed. [NewItem] and [NewComposite] consume what they are given: the
// tensors and items passed in are closed afterwards.
//
// # Views
//
// Views ([Tensor.Bytes], [Tensor.Float32s] and the other typed views, [Values],
// [View]) are Go slices over the tensor's memory, without a copy.
//
// A [Reader] (without a [BufferPool]) reads every buffer into Go memory, so views
// of the tensors it returns are ordinary Go slices that keep their memory alive by
// themselves, even after the tensor is closed or collected.
//
// Views of other tensors — from a [File], from a Reader with a pool, or received
// from C — are valid until the tensor (or the item it is borrowed from) is closed.
// Such a view does NOT keep its tensor alive: that memory belongs to the library
// (or to a file mapping), and the garbage collector does not know the slice points
// into it. If the program drops
// every reference to a *Tensor (or *Item) without calling Close, its cleanup may
// release the memory at any collection — while a view is still in use — and the
// view then silently reads freed memory. So keep the Tensor reachable while you use
// a view: Close it explicitly once you are done with the view, or call
// runtime.KeepAlive(t) after the view's last use.
//
//	t, err := f.Tensor("weights")
//	if err != nil { ... }
//	defer t.Close()        // t stays reachable until the function returns
//	v, err := t.Float32s() // v aliases t's memory
//	if err != nil { ... }
//	sum := 0.0
//	for _, x := range v { sum += float64(x) }
//
// Never return a view of such a tensor from a function that drops its Tensor;
// return the Tensor (or a copy of the data: slices.Clone(v)). Views of a tensor
// made from Go memory ([NewTensor], [NewDense]) or read by a Reader are views of Go
// memory, which the slice itself keeps alive. Under the hurray_debug build tag, a Tensor or Item collected
// without Close after handing out views is reported on stderr.
//
// Each object is used by one goroutine at a time (a [File] may be shared); objects
// may move between goroutines, and may be closed from any goroutine once no one
// uses them.
//
// # Errors
//
// Failures from the library are *[Error] values carrying the C status code, the
// library's message (which rule, which byte offset) and the operation of this
// package that failed (Op: "NewDense", "Reader.Next", `File.Tensor "w"`). Test for
// a kind with errors.Is and the sentinels ([ErrNotFound], [ErrDescriptor],
// [ErrTruncated], ...); missing files also match fs.ErrNotExist, and truncations
// io.ErrUnexpectedEOF. Only readers report truncation: a stream cut inside an item,
// or a file too short to hold its fixed-size header and trailer. A file cut
// anywhere else fails the trailer check (its trailer is read first), so it gives
// [ErrFormat] naming the rule, not io.ErrUnexpectedEOF.
//
// Names, keys, string values and paths are passed to the library as C strings, so
// one holding a NUL byte is refused with [ErrInvalidArgument] (rather than cut
// short at the NUL).
//
// Every function or method that returns an error returns one matching [ErrClosed]
// — it never panics — when called on a closed object or given one as an argument
// (closed by Close, consumed by [NewItem] or [NewComposite], detached, or borrowed
// from an item that is closed); a closed argument also matches
// [ErrInvalidArgument]. Accessors without an error result panic on a closed
// object: Tensor's DType, Layout, Rank, ByteOffset, NumBuffers, Shape,
// NumElements, Descriptor, DescriptorBytes, Buffer, Device, Quantization, Shard,
// Statistics and Bytes; Item's IsComposite, Tensor, Len, Member and Members;
// File's Info and Names; Reader's and Writer's Offset. [Tensor.Bytes],
// [Tensor.Buffer] and [Item.Member] also panic on an index out of range ([View]
// returns [ErrOutOfRange]). Close never panics and is idempotent.
//
// # Building
//
// The module links libhurray_ffi.a from lib/<GOOS>_<GOARCH>/. Release archives
// ship it; in a checkout of the repository, `cargo xtask go build` builds it.
//
// Build tags, for the package's own tests only: hurray_testsupport adds C helpers
// that some tests need (go test -tags hurray_testsupport), and hurray_debug forces
// a collection before every handle access and reports views left dangling.
package hurray
