//go:build hurray_debug

package hurray

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// TestDanglingViewCheck: under hurray_debug, a Tensor or Item that handed out a
// view of library memory and is then collected without Close is counted (and
// reported once on stderr); one closed explicitly, or whose views are of Go memory,
// is not.
func TestDanglingViewCheck(t *testing.T) {
	var sink float32
	var stream bytes.Buffer
	w := NewWriter(&stream)
	x, _ := NewDense(fill(16, 0), nil)
	for i := 0; i < 5; i++ {
		if err := w.WriteTensor(x); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	r := NewReader(&stream)
	// collect runs collections until want objects were counted (or a deadline
	// passes), then a few more, and returns how many were.
	collect := func(want int64) int64 {
		before := danglingViews.Load()
		deadline := time.Now().Add(5 * time.Second)
		for danglingViews.Load()-before < want && time.Now().Before(deadline) {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		for i := 0; i < 3; i++ {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		return danglingViews.Load() - before
	}

	// Good: Close after the view's last use.
	func() {
		y, err := r.NextTensor()
		if err != nil {
			t.Fatal(err)
		}
		v, _ := y.Float32s()
		_ = v[0]
		y.Close()
	}()
	if n := collect(0); n != 0 {
		t.Errorf("a closed tensor counted as %d dangling", n)
	}
	// Views of Go memory stay valid by themselves.
	func() {
		v, _ := x.Float32s()
		_ = v[0]
	}()
	x = nil
	if n := collect(0); n != 0 {
		t.Errorf("a tensor over Go memory counted as %d dangling", n)
	}
	// A Reader without a pool reads into Go memory: its views keep it alive, so a
	// dropped tensor with a view kept is not dangling.
	var kept []float32
	func() {
		y, err := r.NextTensor()
		if err != nil {
			t.Fatal(err)
		}
		kept, _ = y.Float32s()
	}()
	if n := collect(0); n != 0 {
		t.Errorf("a Reader tensor over Go memory counted as %d dangling", n)
	}
	// Library memory (a pooled Reader). Bad: the tensor is dropped, a view is kept.
	pool, err := NewBufferPool(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetPool(pool); err != nil {
		t.Fatal(err)
	}
	// Fine: a copy (Float32s) and a scoped view outlive nothing.
	func() {
		y, err := r.NextTensor()
		if err != nil {
			t.Fatal(err)
		}
		kept, _ = y.Float32s()
		_ = y.WithFloat32s(func(v []float32) error { sink = v[0]; return nil })
	}()
	if n := collect(0); n != 0 {
		t.Errorf("a tensor dropped with a copy of its values counted as %d dangling", n)
	}
	func() {
		y, err := r.NextTensor()
		if err != nil {
			t.Fatal(err)
		}
		kept, _ = UnsafeValues[float32](y)
	}()
	if n := collect(1); n != 1 {
		t.Errorf("a tensor dropped with a view counted %d times, want 1", n)
	}
	// The same through an item's borrowed tensor.
	func() {
		it, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		kept, _ = UnsafeValues[float32](it.Tensor())
	}()
	if n := collect(1); n != 1 {
		t.Errorf("an item dropped with a view counted %d times, want 1", n)
	}
	runtime.KeepAlive(kept)
	runtime.KeepAlive(sink)
	r.Close()
	pool.Close()
	requireNoLeaks(t)
}
