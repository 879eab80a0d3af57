//go:build unix

package hurray

import (
	"bytes"
	"io"
	"syscall"
	"testing"
)

// BenchmarkStreamReadBaselineFreshMapping is io.Copy of 256 MiB into freshly
// mapped anonymous memory, unmapped after each round: the cost of one copy into
// new pages (each faults in on first write), which is what the stream reader pays
// for every buffer it allocates. Compare with BenchmarkStreamRead.
func BenchmarkStreamReadBaselineFreshMapping(b *testing.B) {
	const size = 256 << 20
	src := make([]byte, size)
	b.SetBytes(size)
	for i := 0; i < b.N; i++ {
		dst, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(sliceWriter{dst}, bytes.NewReader(src)); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Munmap(dst); err != nil {
			b.Fatal(err)
		}
	}
}
