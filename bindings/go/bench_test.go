package hurray

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// writeBenchFile writes a file with one float32 tensor of size bytes (the data is
// left zero, written by the writer from Go memory) and returns its path.
func writeBenchFile(b *testing.B, size int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), fmt.Sprintf("bench-%d.hrry", size))
	data := Make[float32](size / 4)
	t, err := NewDense(data, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.WriteTensor("x", t); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOpenView measures OpenFile + Tensor + a scoped zero-copy view
// (WithFloat32s) on a file holding one 1 MiB or 1 GiB tensor. Nothing is copied,
// so both should cost about the same (goal: within 2x).
func BenchmarkOpenView(b *testing.B) {
	for _, size := range []int{1 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			if size > 1<<20 && testing.Short() {
				b.Skip("-short: no 1 GiB file")
			}
			path := writeBenchFile(b, size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f, err := OpenFile(path)
				if err != nil {
					b.Fatal(err)
				}
				t, err := f.Tensor("x")
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				err = t.WithFloat32s(func(v []float32) error { n = len(v); return nil })
				if err != nil || n != size/4 {
					b.Fatal(err)
				}
				t.Close()
				f.Close()
			}
		})
	}
}

// BenchmarkStreamRead reads a 256 MiB tensor from a stream held in memory (into
// fresh library memory, and with a BufferPool into the memory of the tensor read
// and closed before), against io.Copy of the same bytes into a new Go slice (the Go heap reuses pages
// it already faulted in) and into a reused slice (the bare cost of moving the
// bytes once). The reader writes each payload byte once, into new library memory
// whose pages fault in on first write; BenchmarkStreamReadBaselineFreshMapping
// measures that cost alone.
func BenchmarkStreamRead(b *testing.B) {
	const size = 256 << 20
	data := Make[float32](size / 4)
	t, err := NewDense(data, nil)
	if err != nil {
		b.Fatal(err)
	}
	var stream bytes.Buffer
	w := NewWriter(&stream)
	if err := w.WriteTensor(t); err != nil {
		b.Fatal(err)
	}
	w.Close()
	t.Close()
	raw := stream.Bytes()
	// A trusted source: the whole 256 MiB buffer is allocated at once (a Reader's
	// default eager size, 64 MiB, would grow it by doubling, with copies).
	trusted := Limits{EagerAllocBytes: 1 << 30}

	b.Run("hurray.Reader", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			r, _ := NewReaderLimits(bytes.NewReader(raw), trusted)
			x, err := r.NextTensor()
			if err != nil {
				b.Fatal(err)
			}
			x.Close()
			r.Close()
		}
	})
	b.Run("hurray.Reader with a BufferPool", func(b *testing.B) {
		pool, err := NewBufferPool(1 << 30)
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			r, _ := NewReaderLimits(bytes.NewReader(raw), trusted)
			if err := r.SetPool(pool); err != nil {
				b.Fatal(err)
			}
			x, err := r.NextTensor()
			if err != nil {
				b.Fatal(err)
			}
			x.Close() // its memory goes back to the pool for the next iteration
			r.Close()
		}
	})
	b.Run("io.Copy into a new Go slice", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			dst := make([]byte, len(raw))
			n, err := io.Copy(sliceWriter{dst}, bytes.NewReader(raw))
			if err != nil || n != int64(len(raw)) {
				b.Fatal(err)
			}
		}
	})
	b.Run("io.Copy into a reused buffer", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		dst := make([]byte, len(raw))
		for i := 0; i < b.N; i++ {
			n, err := io.Copy(sliceWriter{dst}, bytes.NewReader(raw))
			if err != nil || n != int64(len(raw)) {
				b.Fatal(err)
			}
		}
	})
}

// sliceWriter writes into a preallocated slice (io.Copy's destination).
type sliceWriter struct{ dst []byte }

func (s sliceWriter) Write(p []byte) (int, error) { return copy(s.dst, p), nil }

// A benchmark of os.ReadFile for scale (what a copying reader would pay).
func BenchmarkReadFileBaseline1MiB(b *testing.B) {
	path := writeBenchFile(b, 1<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
