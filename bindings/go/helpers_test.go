package hurray

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// conformanceDir locates ../shared/conformance relative to the repository root
// (the module lives at <root>/bindings/go), or skips the test.
func conformanceDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Skipf("conformance vectors not found at %s (they live beside the repository, in ../shared/conformance): %v", dir, err)
	}
	return dir
}

// settle collects garbage until every cleanup has run: the library's live-object
// count stops changing and every Go owner handed to it was released (or the
// deadline passes). It returns the live-object count.
func settle(t testing.TB) int64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		live := LiveObjects()
		if (live == 0 && ownersMade.Load() == ownersReleased.Load()) || time.Now().After(deadline) {
			return live
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// requireNoLeaks fails unless, after collecting garbage, the library holds no live
// handle, every Go owner handed to it was released exactly once, and no release
// callback misfired.
func requireNoLeaks(t testing.TB) {
	t.Helper()
	if live := settle(t); live != 0 {
		t.Errorf("hurray_debug_live_objects() = %d after closing/collecting everything, want 0", live)
	}
	if made, released := ownersMade.Load(), ownersReleased.Load(); made != released {
		t.Errorf("Go owners: %d handed to the library, %d released", made, released)
	}
	if n := releaseErrors.Load(); n != 0 {
		t.Errorf("%d release callbacks misfired (a second release, or a panic)", n)
	}
}

// fill returns n aligned float32 values base, base+1, ...
func fill(n int, base float32) []float32 {
	v := Make[float32](n)
	for i := range v {
		v[i] = base + float32(i)
	}
	return v
}

func equalSlices[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func ptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func runGC() { runtime.GC() }

func errorsAs(err error, target any) bool { return errors.As(err, target) }
