package hurray

// #include "hurray.h"
// #include "hurray_go.h"
import "C"

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"unsafe"
)

// Limits bounds what a stream Reader accepts from untrusted input; a Writer uses
// CrossMachine and MaxCompositeDepth. Zero fields take the library's defaults.
type Limits struct {
	// MaxDescriptorBytes is the largest descriptor accepted (default 16 MiB).
	MaxDescriptorBytes uint32
	// MaxCompositeDepth is the deepest composite nesting, counting the outermost
	// head (default 8; values above 64 act as 64).
	MaxCompositeDepth uint32
	// MaxBufferBytes is the largest single buffer accepted (default 64 GiB).
	MaxBufferBytes uint64
	// EagerAllocBytes: a buffer up to this size is allocated at its final size as
	// soon as its descriptor arrives; larger ones start at 16 MiB and double as
	// bytes arrive (each growth copies what arrived). Default for a Reader: 64 MiB,
	// because a Reader's buffers are Go memory, which counts (and, when the heap
	// reuses it, is zeroed and resident) as soon as it is allocated: a short
	// hostile stream claiming a large buffer must not cost that much at once. Raise
	// it for trusted sources of larger tensors to save the growth copies.
	// (Writers ignore it.)
	EagerAllocBytes uint64
	// CrossMachine: the bytes cross machines, so every buffer must be
	// producer-synced.
	CrossMachine bool
}

func (l *Limits) c() C.HurrayStreamLimits {
	var out C.HurrayStreamLimits
	must("hurray_stream_limits_default", C.hurray_stream_limits_default(&out))
	if l == nil {
		return out
	}
	setU32(&out.max_descriptor_bytes, l.MaxDescriptorBytes)
	setU32(&out.max_composite_depth, l.MaxCompositeDepth)
	setU64(&out.max_buffer_bytes, l.MaxBufferBytes)
	setU64(&out.eager_alloc_bytes, l.EagerAllocBytes)
	out.cross_machine = cbool(l.CrossMachine)
	return out
}

// setU32 and setU64 write v into an option field of a C struct, unless v is 0
// (Go's zero value: keep the library's default already there).
func setU32(dst *C.uint32_t, v uint32) {
	if v != 0 {
		*dst = C.uint32_t(v)
	}
}

func setU64(dst *C.uint64_t, v uint64) {
	if v != 0 {
		*dst = C.uint64_t(v)
	}
}

// Reader reads items (tensors and composites) from a Hurray stream over any
// io.Reader, driving the library's sans-io decoder: payload bytes are read
// straight into each buffer's final 64-byte-aligned memory, so they are written
// once. Each read asks only for bytes the stream grammar expects next, so Next
// never consumes bytes beyond the item it returns.
//
// A Reader is used by one goroutine at a time. Items it returns are independent of
// it: they stay valid after the Reader is closed.
type Reader struct {
	mu      sync.Mutex
	r       io.Reader
	ptr     *C.HurrayStreamDecoder
	cleanup runtime.Cleanup
	ended   bool  // the io.Reader reported io.EOF and the decoder was told
	endErr  error // what the decoder said about that end
	err     error // sticky: returned by every later Next
	pooled  bool  // SetPool gave a pool: buffers are library memory, not Go memory
}

func destroyDecoder(p *C.HurrayStreamDecoder) { C.hurray_stream_decoder_destroy(&p) }

// NewReader returns a Reader of r with the default limits.
func NewReader(r io.Reader) *Reader {
	rd, err := newReader("NewReader", r, Limits{})
	if err != nil {
		panic(err) // the default limits are valid
	}
	return rd
}

// NewReaderLimits returns a Reader of r that enforces l.
func NewReaderLimits(r io.Reader, l Limits) (*Reader, error) {
	return newReader("NewReaderLimits", r, l)
}

// readerEagerAlloc is a Reader's default EagerAllocBytes (see Limits).
const readerEagerAlloc = 64 << 20

func newReader(op string, r io.Reader, l Limits) (*Reader, error) {
	cl := l.c()
	if l.EagerAllocBytes == 0 {
		cl.eager_alloc_bytes = readerEagerAlloc
	}
	var p *C.HurrayStreamDecoder
	if err := call(op, func() C.HurrayStatus { return C.hurray_stream_decoder_new(&cl, &p) }); err != nil {
		return nil, err
	}
	// Buffers are read into Go memory, so views of the tensors keep their memory
	// alive by themselves (see Reader.SetPool for the alternative).
	if err := call(op, func() C.HurrayStatus { return C.hurray_go_decoder_use_go_memory(p) }); err != nil {
		C.hurray_stream_decoder_destroy(&p)
		return nil, err
	}
	rd := &Reader{r: r, ptr: p}
	rd.cleanup = runtime.AddCleanup(rd, destroyDecoder, p)
	return rd, nil
}

// Next reads and returns the next item. At a clean end of the stream (the
// io.Reader reports io.EOF on an item boundary) it returns io.EOF; when the stream
// ends inside an item it returns an *Error with StatusTruncated, which matches
// io.ErrUnexpectedEOF and ErrTruncated. Bad input yields an *Error naming the rule
// and the stream offset; errors are sticky (a later call returns the same error,
// whose Op names the call that first failed).
func (r *Reader) Next() (*Item, error) {
	const op = "Reader.Next"
	r.mu.Lock()
	defer r.mu.Unlock()
	var out *C.HurrayItem
	err := r.pump(op, func(p *C.HurrayStreamDecoder) (bool, error) {
		err := call(op, func() C.HurrayStatus { return C.hurray_stream_decoder_next(p, &out) })
		return out != nil, err
	})
	if err != nil {
		return nil, err
	}
	it := newItem(out)
	if !r.pooled {
		it.dbg = nil // views of Go memory keep it alive: nothing to warn about
	}
	return it, nil
}

// NextTensor is Next for streams of plain tensors: it returns the next item as a
// Tensor. When the next item is a composite it fails with ErrNotApplicable and
// leaves the composite for Next.
func (r *Reader) NextTensor() (*Tensor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	const op = "Reader.NextTensor"
	var out *C.HurrayTensor
	err := r.pump(op, func(p *C.HurrayStreamDecoder) (bool, error) {
		err := call(op, func() C.HurrayStatus { return C.hurray_stream_decoder_next_tensor(p, &out) })
		if errors.Is(err, ErrNotApplicable) {
			return false, &Error{Status: StatusNotApplicable, Op: op, Message: "the next item is a composite; read it with Next"}
		}
		return out != nil, err
	})
	if err != nil {
		if errors.Is(err, ErrNotApplicable) {
			r.err = nil // not sticky: Next can still take the composite
		}
		return nil, err
	}
	t := newTensor(out)
	if !r.pooled {
		t.dbg = nil // views of Go memory keep it alive: nothing to warn about
	}
	return t, nil
}

// maxEmptyReads bounds consecutive (0, nil) reads before giving up with
// io.ErrNoProgress.
const maxEmptyReads = 100

// pump feeds the decoder from the io.Reader until take reports an item (true), an
// error, or the stream ends cleanly (io.EOF). r.mu held.
func (r *Reader) pump(op string, take func(*C.HurrayStreamDecoder) (bool, error)) error {
	if r.ptr == nil {
		return errClosed(op, "the Reader is closed")
	}
	if r.err != nil {
		return r.err
	}
	p := r.ptr
	defer runtime.KeepAlive(r)
	empty := 0
	for {
		maybeGC()
		got, err := take(p)
		if err != nil {
			r.err = err
			return err
		}
		if got {
			return nil
		}
		if r.ended {
			if r.endErr != nil {
				r.err = r.endErr
				return r.endErr
			}
			return io.EOF
		}
		var buf *C.uint8_t
		var n C.uint64_t
		must("hurray_stream_decoder_demand", C.hurray_stream_decoder_demand(p, &buf, &n))
		if n == 0 {
			// Failed (take reports the error next round) or finished.
			r.markEnded(op, p)
			continue
		}
		k, rerr := r.r.Read(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(min(n, C.uint64_t(1<<30)))))
		if k < 0 || C.uint64_t(k) > n {
			r.err = fmt.Errorf("hurray: %s: io.Reader returned an invalid count %d", op, k)
			return r.err
		}
		if k > 0 {
			empty = 0
			must("hurray_stream_decoder_advance", C.hurray_stream_decoder_advance(p, C.uint64_t(k)))
		}
		switch {
		case rerr == io.EOF:
			r.markEnded(op, p)
		case rerr != nil:
			r.err = fmt.Errorf("hurray: %s: read: %w", op, rerr)
			return r.err
		case k == 0:
			if empty++; empty >= maxEmptyReads {
				r.err = fmt.Errorf("hurray: %s: %w", op, io.ErrNoProgress)
				return r.err
			}
		}
	}
}

// markEnded tells the decoder the input is over and records its verdict.
func (r *Reader) markEnded(op string, p *C.HurrayStreamDecoder) {
	if r.ended {
		return
	}
	r.ended = true
	if err := call(op, func() C.HurrayStatus { return C.hurray_stream_decoder_finish(p) }); err != nil {
		r.endErr = err
	}
}

// Offset is the number of stream bytes consumed so far.
func (r *Reader) Offset() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr == nil {
		panic(closedPanic("the Reader is closed"))
	}
	var out C.uint64_t
	must("hurray_stream_decoder_position", C.hurray_stream_decoder_position(r.ptr, &out))
	runtime.KeepAlive(r)
	return int64(out)
}

// Close releases the decoder (not the io.Reader, and not the items already
// returned). It is idempotent. It waits for a Next in progress; to interrupt one
// blocked in a read, close the underlying io.Reader (a pipe or connection) first.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr == nil {
		return nil
	}
	p := r.ptr
	r.ptr = nil
	r.cleanup.Stop()
	return call("Reader.Close", func() C.HurrayStatus { return C.hurray_stream_decoder_destroy(&p) })
}

// Writer writes items to a Hurray stream over any io.Writer, driving the library's
// sans-io encoder: the descriptor bytes come from the encoder, and buffer bytes
// are written to the io.Writer straight from the tensor's memory (no copy).
//
// A Writer is used by one goroutine at a time. It never closes the io.Writer.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	ptr     *C.HurrayStreamEncoder
	cleanup runtime.Cleanup
	err     error // sticky write error: the stream is torn
}

func destroyEncoder(p *C.HurrayStreamEncoder) { C.hurray_stream_encoder_destroy(&p) }

// NewWriter returns a Writer to w (same machine, default nesting limit).
func NewWriter(w io.Writer) *Writer {
	wr, err := newWriter("NewWriter", w, Limits{})
	if err != nil {
		panic(err) // the default limits are valid
	}
	return wr
}

// NewWriterLimits returns a Writer to w that applies l.CrossMachine (every buffer
// must be producer-synced) and l.MaxCompositeDepth.
func NewWriterLimits(w io.Writer, l Limits) (*Writer, error) {
	return newWriter("NewWriterLimits", w, l)
}

func newWriter(op string, w io.Writer, l Limits) (*Writer, error) {
	cl := l.c()
	var p *C.HurrayStreamEncoder
	if err := call(op, func() C.HurrayStatus { return C.hurray_stream_encoder_new(&cl, &p) }); err != nil {
		return nil, err
	}
	wr := &Writer{w: w, ptr: p}
	wr.cleanup = runtime.AddCleanup(wr, destroyEncoder, p)
	return wr, nil
}

// WriteTensor writes one tensor (not a composite head: use WriteItem). The tensor
// stays the caller's. A closed Writer gives an error wrapping ErrClosed; a nil or
// closed tensor ErrInvalidArgument (a closed one also matches ErrClosed); a
// composite head ErrFormat. Nothing is written when the tensor is refused.
func (w *Writer) WriteTensor(t *Tensor) error {
	const op = "Writer.WriteTensor"
	entered := false // t in use: Close waits until its chunks are written
	err := w.write(op, func(p *C.HurrayStreamEncoder, count, total *C.uint64_t) error {
		tp, err := t.arg(op)
		if err != nil {
			return err
		}
		entered = true // exit once write has written the payload
		return call(op, func() C.HurrayStatus {
			return C.hurray_stream_encoder_begin_tensor(p, tp, count, total)
		})
	})
	if entered {
		t.exit()
	}
	return err
}

// WriteItem writes an item: a tensor, or a whole composite (checked before any of
// its bytes are written). The item stays the caller's. A closed Writer gives an
// error wrapping ErrClosed; a nil or closed item ErrInvalidArgument (a closed one
// also matches ErrClosed).
func (w *Writer) WriteItem(it *Item) error {
	const op = "Writer.WriteItem"
	entered := false // it in use: Close waits until its chunks are written
	err := w.write(op, func(p *C.HurrayStreamEncoder, count, total *C.uint64_t) error {
		ip, err := it.arg(op)
		if err != nil {
			return err
		}
		entered = true // exit once write has written the payload
		return call(op, func() C.HurrayStatus {
			return C.hurray_stream_encoder_begin_item(p, ip, count, total)
		})
	})
	if entered {
		it.exit()
	}
	return err
}

func (w *Writer) write(op string, begin func(*C.HurrayStreamEncoder, *C.uint64_t, *C.uint64_t) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ptr == nil {
		return errClosed(op, "the Writer is closed")
	}
	if w.err != nil {
		return w.err
	}
	p := w.ptr
	defer runtime.KeepAlive(w)
	maybeGC()
	var count, total C.uint64_t
	if err := begin(p, &count, &total); err != nil {
		return err // nothing was written: the stream is intact
	}
	defer C.hurray_stream_encoder_end(p)
	for i := C.uint64_t(0); i < count; i++ {
		var chunk *C.uint8_t
		var n C.uint64_t
		must("hurray_stream_encoder_chunk", C.hurray_stream_encoder_chunk(p, i, &chunk, &n))
		b := unsafe.Slice((*byte)(unsafe.Pointer(chunk)), int(n))
		if _, err := w.w.Write(b); err != nil {
			w.err = fmt.Errorf("hurray: %s: write: %w", op, err)
			return w.err
		}
	}
	return nil
}

// Offset is the number of stream bytes written so far.
func (w *Writer) Offset() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ptr == nil {
		panic(closedPanic("the Writer is closed"))
	}
	var out C.uint64_t
	must("hurray_stream_encoder_position", C.hurray_stream_encoder_position(w.ptr, &out))
	runtime.KeepAlive(w)
	return int64(out)
}

// Close releases the encoder. It does not close the io.Writer. It is idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ptr == nil {
		return nil
	}
	p := w.ptr
	w.ptr = nil
	w.cleanup.Stop()
	return call("Writer.Close", func() C.HurrayStatus { return C.hurray_stream_encoder_destroy(&p) })
}
