package hurray

import (
	"errors"
	"math"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// writeFloats writes n float32 tensors "t0", "t1", ... of size values each (tensor
// i holds i*size, i*size+1, ...) and a composite-free item "it" to a new file, and
// opens it: its tensors are views of a file mapping, the memory that a read after
// release would fault on.
func writeFloats(t *testing.T, n, size int) *File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "floats.hrry")
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		x, err := NewDense(fill(size, float32(i*size)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteTensor(name(i), x); err != nil {
			t.Fatal(err)
		}
		x.Close()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// wantFloats checks v holds base, base+1, ... (size values).
func wantFloats(t *testing.T, what string, v []float32, base float32, size int) {
	t.Helper()
	if len(v) != size {
		t.Fatalf("%s: %d values, want %d", what, len(v), size)
	}
	for i, x := range v {
		if x != base+float32(i) {
			t.Fatalf("%s: value %d is %v, want %v", what, i, x, base+float32(i))
		}
	}
}

// TestViewsAfterCloseAndGC: through the safe API, values read from a file's tensor
// stay valid after the tensor is closed, after the File is closed, and after the
// tensor was dropped and collected (its memory released): they are copies. A
// scoped view's memory lives for the whole callback even when the tensor, the
// File, or the item it is borrowed from is closed during it.
func TestViewsAfterCloseAndGC(t *testing.T) {
	const size = 1 << 16 // 256 KiB: whole pages of the mapping
	f := writeFloats(t, 3, size)

	// After Close (tensor, then File).
	x, err := f.Tensor(name(0))
	if err != nil {
		t.Fatal(err)
	}
	v, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	raw := x.Bytes(0)
	x.Close()
	wantFloats(t, "Float32s after Close", v, 0, size)
	if got := math.Float32frombits(uint32(raw[4]) | uint32(raw[5])<<8 | uint32(raw[6])<<16 | uint32(raw[7])<<24); got != 1 {
		t.Errorf("Bytes after Close: element 1 is %v", got)
	}
	if _, err := x.Float32s(); !errors.Is(err, ErrClosed) {
		t.Errorf("Float32s on a closed tensor = %v, want ErrClosed", err)
	}
	if err := x.WithFloat32s(func([]float32) error { t.Error("callback ran on a closed tensor"); return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("WithFloat32s on a closed tensor = %v, want ErrClosed", err)
	}

	// After GC: the tensor is dropped without Close and its cleanup runs (the
	// mapping's last reference goes with the File, closed below).
	var kept []float32
	func() {
		y, err := f.Tensor(name(1))
		if err != nil {
			t.Fatal(err)
		}
		kept, err = Values[float32](y)
		if err != nil {
			t.Fatal(err)
		}
	}()
	f.Close()
	live := settle(t) // collects until the dropped tensor's cleanup has run
	if live != 0 {
		t.Fatalf("%d library objects live after the File closed and the tensor was collected", live)
	}
	wantFloats(t, "Values after GC", kept, size, size)

	// A scoped view: Close from inside the callback, of the tensor and of the File
	// it came from, waits for the callback to return.
	f = writeFloats(t, 2, size)
	defer f.Close()
	z, err := f.Tensor(name(1))
	if err != nil {
		t.Fatal(err)
	}
	err = z.WithFloat32s(func(v []float32) error {
		if err := z.Close(); err != nil {
			return err
		}
		f.Close()
		runtime.GC()
		wantFloats(t, "WithFloat32s after Close inside the callback", v, size, size)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := z.Float32s(); !errors.Is(err, ErrClosed) {
		t.Errorf("after the callback the tensor is closed: %v", err)
	}

	// A tensor borrowed from an item: closing the item during the callback.
	f2 := writeFloats(t, 1, size)
	it, err := f2.Item(name(0))
	f2.Close()
	if err != nil {
		t.Fatal(err)
	}
	bt := it.Tensor()
	err = bt.WithBytes(0, func(b []byte) error {
		it.Close()
		if len(b) != 4*size || b[4] != 0 || b[7] != 0x3f { // element 1 is 1.0f: 00 00 80 3f
			t.Errorf("WithBytes after the item closed: %d bytes, % x", len(b), b[4:8])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bt.Float32s(); !errors.Is(err, ErrClosed) {
		t.Errorf("a borrowed tensor of a closed item: %v, want ErrClosed", err)
	}
	requireNoLeaks(t)
}

// TestConcurrentCloseAndRead (run under -race by `cargo xtask test`): readers on
// several goroutines use a file's tensors (copies, scoped views, descriptor
// accessors, a borrowed tensor of an item) while other goroutines close them.
// Every read either sees the right values or an error matching ErrClosed (a
// panicking accessor panics with the closed message); none reaches freed memory
// (which would fault: the memory is a file mapping) and the race detector stays
// quiet.
func TestConcurrentCloseAndRead(t *testing.T) {
	const size, n, rounds, readers = 4096, 4, 50, 4
	f := writeFloats(t, n, size)
	defer f.Close()
	var closedSeen, valuesSeen atomic.Int64
	read := func(x *Tensor, base float32) {
		v, err := x.Float32s()
		switch {
		case errors.Is(err, ErrClosed):
			closedSeen.Add(1)
		case err != nil:
			t.Errorf("Float32s: %v", err)
		default:
			valuesSeen.Add(1)
			wantFloats(t, "Float32s", v, base, size)
		}
		err = x.WithFloat32s(func(v []float32) error {
			runtime.Gosched() // let a Close in
			wantFloats(t, "WithFloat32s", v, base, size)
			return nil
		})
		if err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("WithFloat32s: %v", err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if s, ok := r.(string); !ok || s[:len("hurray: use of a closed object")] != "hurray: use of a closed object" {
						panic(r)
					}
				}
			}()
			if shape := x.Shape(); len(shape) != 1 || shape[0] != size {
				t.Errorf("Shape = %v", shape)
			}
			_ = x.String()
		}()
	}
	for round := 0; round < rounds; round++ {
		i := round % n
		x, err := f.Tensor(name(i))
		if err != nil {
			t.Fatal(err)
		}
		it, err := f.Item(name(i))
		if err != nil {
			t.Fatal(err)
		}
		bt := it.Tensor()
		var wg sync.WaitGroup
		for r := 0; r < readers; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; k < 4; k++ {
					read(x, float32(i*size))
					read(bt, float32(i*size))
				}
			}()
		}
		wg.Add(2)
		go func() { defer wg.Done(); runtime.Gosched(); x.Close() }()
		go func() { defer wg.Done(); runtime.Gosched(); it.Close() }()
		wg.Wait()
		if _, err := x.Float32s(); !errors.Is(err, ErrClosed) {
			t.Fatalf("after Close: %v", err)
		}
	}
	t.Logf("%d reads saw values, %d saw a closed tensor", valuesSeen.Load(), closedSeen.Load())
	if valuesSeen.Load() == 0 {
		t.Error("no read saw values")
	}
	f.Close()
	requireNoLeaks(t)
}
