package hurray

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"unsafe"
)

// TestBufferPoolReusesClosedTensorsMemory: a Reader with a pool reads the next
// tensor into the memory of the one closed before it, the bytes are the new
// tensor's, and the counters say so; without the pool it gets new memory.
func TestBufferPoolReusesClosedTensorsMemory(t *testing.T) {
	var stream bytes.Buffer
	w := NewWriter(&stream)
	for k := 0; k < 3; k++ {
		src, err := NewDense(fill(1<<18, float32(k)), []uint64{1 << 18}) // 1 MiB
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteTensor(src); err != nil {
			t.Fatal(err)
		}
		src.Close()
	}
	w.Close()

	pool, err := NewBufferPool(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(&stream)
	defer r.Close()
	if err := r.SetPool(pool); err != nil {
		t.Fatal(err)
	}
	first, err := r.NextTensor()
	if err != nil {
		t.Fatal(err)
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(first.UnsafeBytes(0))))
	if v, _ := first.Float32s(); v[5] != 5 {
		t.Fatalf("first tensor: v[5] = %v, want 5", v[5])
	}
	first.Close()
	// The pool may go before the Reader: the Reader holds its own reference.
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := r.NextTensor()
	if err != nil {
		t.Fatal(err)
	}
	if got := uintptr(unsafe.Pointer(unsafe.SliceData(second.UnsafeBytes(0)))); got != addr {
		t.Errorf("second tensor at %#x, want the first one's memory %#x", got, addr)
	}
	if v, _ := second.Float32s(); v[5] != 6 || v[len(v)-1] != float32(1<<18) {
		t.Errorf("second tensor holds %v ... %v, want 6 ... %v", v[5], v[len(v)-1], 1<<18)
	}
	if err := r.SetPool(nil); err != nil {
		t.Fatal(err)
	}
	third, err := r.NextTensor()
	if err != nil {
		t.Fatal(err)
	}
	if got := uintptr(unsafe.Pointer(unsafe.SliceData(third.UnsafeBytes(0)))); got == addr {
		t.Error("without a pool the third tensor reused pooled memory")
	}
	second.Close()
	third.Close()
	if _, err := r.NextTensor(); err != io.EOF {
		t.Fatalf("after three tensors: %v, want io.EOF", err)
	}
	r.Close()
	requireNoLeaks(t)
}

func TestBufferPoolStatsAndMisuse(t *testing.T) {
	if _, err := NewBufferPool(-1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewBufferPool(-1): %v, want ErrInvalidArgument", err)
	}
	pool, err := NewBufferPool(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	src, _ := NewDense(fill(1000, 1), []uint64{1000})
	w := NewWriter(&stream)
	for k := 0; k < 2; k++ {
		if err := w.WriteTensor(src); err != nil {
			t.Fatal(err)
		}
	}
	src.Close()
	r := NewReader(&stream)
	if err := r.SetPool(pool); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 2; k++ {
		got, err := r.NextTensor()
		if err != nil {
			t.Fatal(err)
		}
		got.Close()
	}
	s, err := pool.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.Allocated != 1 || s.Reused != 1 || s.IdleBuffers != 1 || s.IdleBytes < 4000 {
		t.Errorf("stats %+v, want 1 allocated, 1 reused, 1 idle of >= 4000 bytes", s)
	}
	if err := pool.Clear(); err != nil {
		t.Fatal(err)
	}
	if s, _ := pool.Stats(); s.IdleBuffers != 0 || s.IdleBytes != 0 {
		t.Errorf("after Clear: %+v", s)
	}
	pool.Close()
	pool.Close() // idempotent
	if _, err := pool.Stats(); !errors.Is(err, ErrClosed) {
		t.Errorf("Stats after Close: %v, want ErrClosed", err)
	}
	if err := pool.Clear(); !errors.Is(err, ErrClosed) {
		t.Errorf("Clear after Close: %v, want ErrClosed", err)
	}
	if err := r.SetPool(pool); !errors.Is(err, ErrClosed) || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("SetPool(closed pool): %v, want ErrClosed and ErrInvalidArgument", err)
	}
	r.Close()
	if err := r.SetPool(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("SetPool on a closed Reader: %v, want ErrClosed", err)
	}
	requireNoLeaks(t)
}

// TestStreamViewsKeepTheirMemoryAlive: a Reader without a pool reads into Go
// memory, so a view stays valid after its tensor is closed and collected, and the
// library still releases its hold exactly once.
func TestStreamViewsKeepTheirMemoryAlive(t *testing.T) {
	const n = 1 << 20 // 4 MiB: library memory this large would be unmapped on Close
	var stream bytes.Buffer
	src, err := NewDense(fill(n, 3), []uint64{n})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(&stream)
	if err := w.WriteTensor(src); err != nil {
		t.Fatal(err)
	}
	src.Close()
	r := NewReader(&stream)
	x, err := r.NextTensor()
	if err != nil {
		t.Fatal(err)
	}
	v, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	r.Close()
	for i := 0; i < 5; i++ {
		runtime.GC()
		junk := make([]byte, 8<<20)
		junk[0] = 1
	}
	for i := 0; i < n; i += 4099 {
		if v[i] != float32(i)+3 {
			t.Fatalf("view[%d] = %v after Close and GC, want %v", i, v[i], float32(i)+3)
		}
	}
	requireNoLeaks(t)
	runtime.KeepAlive(v)
}

// TestReaderClaimsCostBoundedGoMemory: a few bytes claiming a 1 GiB buffer make a
// Reader (Go memory) allocate at most its eager size, not the claim.
func TestReaderClaimsCostBoundedGoMemory(t *testing.T) {
	d, err := DenseDescriptor(Uint8, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := NewReader(bytes.NewReader(append(enc, 1, 2, 3)))
	_, err = r.NextTensor()
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("a cut 1 GiB claim: %v, want ErrTruncated", err)
	}
	r.Close()
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 80<<20 {
		t.Errorf("a 1 GiB claim on %d bytes allocated %d MiB of Go memory, want <= 80", len(enc)+3, grew>>20)
	}
	requireNoLeaks(t)
}

// TestReaderAlignments: declared alignments up to 64 KiB are met in Go memory;
// larger ones fail with ErrLimit (a pooled Reader meets them).
func TestReaderAlignments(t *testing.T) {
	for _, align := range []uint32{64, 4096, 64 << 10, 1 << 20} {
		d, err := DenseDescriptor(Uint8, 100)
		if err != nil {
			t.Fatal(err)
		}
		d.Buffers[0].Alignment = align
		enc, err := d.Encode()
		if err != nil {
			t.Fatal(err)
		}
		payload := make([]byte, 100)
		payload[99] = 7
		for _, pooled := range []bool{false, true} {
			r := NewReader(bytes.NewReader(append(append([]byte{}, enc...), payload...)))
			var pool *BufferPool
			if pooled {
				pool, _ = NewBufferPool(8 << 20)
				r.SetPool(pool)
			}
			x, err := r.NextTensor()
			switch {
			case align > 64<<10 && !pooled:
				if !errors.Is(err, ErrLimit) {
					t.Errorf("alignment %d in Go memory: %v, want ErrLimit", align, err)
				}
			case err != nil:
				t.Errorf("alignment %d (pooled %v): %v", align, pooled, err)
			default:
				b := x.UnsafeBytes(0)
				if addr := uintptr(unsafe.Pointer(unsafe.SliceData(b))); addr%uintptr(align) != 0 || b[99] != 7 {
					t.Errorf("alignment %d (pooled %v): buffer at %#x, last byte %d", align, pooled, addr, b[99])
				}
				x.Close()
			}
			r.Close()
			if pool != nil {
				pool.Close()
			}
		}
	}
	requireNoLeaks(t)
}
