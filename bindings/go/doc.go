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
// at a clean end, and an error matching io.ErrUnexpectedEOF when the stream is
// cut); [NewWriter] writes them to any io.Writer. Payload bytes go straight between
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
// Views ([Tensor.Bytes], [Tensor.Float32s], [Values], [View]) alias the tensor's
// memory and are valid only until the tensor is closed. They do not keep the tensor
// alive: keep the *Tensor reachable and open while you use a view. Tensors and
// members borrowed from an [Item] are valid until the item is closed. Tensors and
// items taken from a [File] or a [Reader] stay valid after the File or Reader is
// closed.
//
// Each object is used by one goroutine at a time (a [File] may be shared); objects
// may move between goroutines, and may be closed from any goroutine once no one
// uses them.
//
// # Errors
//
// Failures from the library are *[Error] values carrying the C status code and the
// library's message (which rule, which byte offset). Test for a kind with
// errors.Is and the sentinels ([ErrNotFound], [ErrDescriptor], [ErrTruncated],
// ...); truncations also match io.ErrUnexpectedEOF, and missing files
// fs.ErrNotExist. Methods called after Close return an error wrapping [ErrClosed],
// or panic when they cannot return an error.
//
// # Building
//
// The module links libhurray_ffi.a from lib/<GOOS>_<GOARCH>/. Release archives
// ship it; in a checkout of the repository, `cargo xtask go build` builds it.
package hurray
