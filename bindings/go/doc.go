// Package hurray reads and writes Hurray tensors — the binary tensor format of
// the Hurray project — from Go, without copying tensor data unless asked to.
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
// ...) or as a whole Go value ([Tensor.Descriptor]). Read the data as copies
// ([Tensor.Float32s] and the other typed accessors, checked against the element
// type), or without a copy inside a callback ([Tensor.WithFloat32s], ...): see
// Views below. Every element type has a typed path: float16 and bfloat16 values
// come as their bits ([Tensor.Float16Bits], [Tensor.BFloat16Bits]; convert with
// [Float16ToFloat32], [Float16sToFloat32s], [BFloat16sToFloat32s], ...), booleans
// unpacked ([Tensor.Bools]), and any buffer as bytes or as a slice of any
// [Element] type ([BufferValues]).
//
// To hand Go data to the library, allocate it 64-byte aligned with [Make], fill
// it, and wrap it with [NewDense] or, for any layout, [NewTensor] with a
// [Descriptor]. NewDense also makes float16 and bfloat16 tensors from their bits
// ([Float32sToFloat16s], then NewDense(bits, shape, AsDType(Float16))) and bool
// tensors from a []bool (packed into new memory). The memory is pinned (runtime.Pinner) rather than copied, and
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
// Tensors, items and files may be used from several goroutines at once, and closed
// from any goroutine at any time: a call in progress on a tensor or item (a scoped
// view's callback included) keeps its memory alive until it returns — a Close
// meanwhile takes effect then — and calls that start after Close see a closed
// object. A [Reader], [Writer] or [FileWriter] is used by one goroutine at a time.
//
// # Views
//
// Reading a tensor's data never crashes the process unless the call's name says
// Unsafe. There are three ways:
//
//   - Copies: [Tensor.Float32s] (and Float64s, Int8s, ..., Float16Bits,
//     BFloat16Bits, Bools), [Tensor.Bytes], [Values] and [BufferValues] return Go
//     memory, valid for as long as the slice, whatever happens to the tensor.
//   - Scoped views: [Tensor.WithFloat32s] (and WithFloat64s, ..., WithBytes),
//     [WithValues] and [WithBufferValues] pass a slice over the tensor's own memory,
//     without a copy, to a callback. The tensor cannot be released during the
//     callback: Close (from another goroutine, or from the callback itself) waits
//     until it returns. The slice must not be kept after the callback returns: copy
//     what you need.
//   - Unsafe views: [Tensor.UnsafeBytes], [UnsafeValues] and [UnsafeBufferValues]
//     return a slice over the tensor's memory, valid only until the tensor is closed
//     — or collected: such a slice does not keep its tensor alive, so keep the
//     Tensor reachable (runtime.KeepAlive(t) after the slice's last use, or Close t
//     after it). Reading it later reads freed memory and can crash the process.
//     Under the hurray_debug build tag, a Tensor or Item collected without Close
//     after handing out unsafe views is reported on stderr.
//
// The everyday pattern, without a copy:
//
//	t, err := f.Tensor("weights")
//	if err != nil { ... }
//	defer t.Close()
//	var sum float64
//	err = t.WithFloat32s(func(v []float32) error { // v is the mapped file's memory
//		for _, x := range v {
//			sum += float64(x)
//		}
//		return nil
//	})
//
// or, when the values must outlive the tensor, a copy: v, err := t.Float32s().
//
// # Errors
//
// Failures from the library are *[Error] values carrying the C status code, the
// library's message (which rule, which byte offset) and the operation of this
// package that failed (Op: "NewDense", "Reader.Next", `File.Tensor "w"`). Test for
// a kind with errors.Is and the sentinels ([ErrNotFound], [ErrDescriptor],
// [ErrTruncated], ...); missing files also match fs.ErrNotExist, and truncations
// io.ErrUnexpectedEOF. Readers report truncation: a stream cut inside an item, and
// a file cut anywhere (its trailer is read first; a file that does not end with the
// trailer magic was cut short, and the message says at which byte it ends).
//
// Tensor names and KV keys may hold NUL bytes, as the format allows: they are
// passed to the library with their length and found whole. String KV values and
// paths holding a NUL byte are refused with [ErrInvalidArgument] (rather than cut
// short at the NUL). An error names the file's path once, in Op:
// `hurray: OpenFile "/data/m.hrry": I/O error: No such file or directory ...`.
//
// Every function or method that returns an error returns one matching [ErrClosed]
// — it never panics — when called on a closed object or given one as an argument
// (closed by Close, consumed by [NewItem] or [NewComposite], detached, or borrowed
// from an item that is closed); a closed argument also matches
// [ErrInvalidArgument]. Accessors without an error result panic on a closed
// object: Tensor's DType, Layout, Rank, ByteOffset, NumBuffers, Shape,
// NumElements, Descriptor, DescriptorBytes, Buffer, Device, Quantization, Shard,
// Statistics, Bytes and UnsafeBytes; Item's IsComposite, Tensor, Len, Member and Members;
// File's Info and Names; Reader's and Writer's Offset. [Tensor.Bytes],
// [Tensor.UnsafeBytes], [Tensor.Buffer] and [Item.Member] also panic on an index
// out of range ([BufferValues] and [Tensor.WithBytes] return [ErrOutOfRange]). Close never panics and is idempotent.
//
// # Examples
//
// The runnable examples (example_test.go: Example, ExampleOpenFile,
// ExampleCreateFile, ExampleNewDense_float16, ...) are shown by pkg.go.dev and
// `go test -run Example`; the doc comments of [OpenFile], [CreateFile], [NewDense]
// and the Views section above carry the same code, for `go doc`.
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
