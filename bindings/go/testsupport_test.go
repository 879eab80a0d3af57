//go:build hurray_testsupport

package hurray

// Tests that need the C helpers of testsupport.go (hurray_testsupport tag); run
// them with `go test -tags hurray_testsupport ./...` (`cargo xtask test` does).

import (
	"sync"
	"testing"
)

// TestReleaseOnCThread: tensors and composites over Go memory, destroyed by C code
// on a thread Go did not create, run their release callbacks there exactly once,
// including while other goroutines allocate and collect.
func TestReleaseOnCThread(t *testing.T) {
	requireNoLeaks(t)
	rc := &releaseCounter{}

	tensor, err := NewDense(fill(64, 0), nil, rc.option())
	if err != nil {
		t.Fatal(err)
	}
	h, err := tensor.Detach()
	if err != nil {
		t.Fatal(err)
	}
	if err := tensor.Close(); err != nil { // a detached tensor is closed
		t.Fatal(err)
	}
	if s := destroyTensorOnCThread(h); s != StatusOK {
		t.Fatalf("destroy on C thread: %v", s)
	}

	head, _ := NewTensor(Descriptor{DType: Float32, Layout: CompositeHead, Shape: []uint64{2, 4},
		Composite: &CompositeFields{MemberCount: 2, Rule: Group}}, nil, rc.option())
	a, _ := NewDense(fill(8, 0), []uint64{2, 4}, rc.option())
	b, _ := NewDense(fill(3, 0), nil, rc.option())
	comp, err := NewComposite(head, mustItem(t, a), mustItem(t, b))
	if err != nil {
		t.Fatal(err)
	}
	if s := destroyItemOnCThread(comp); s != StatusOK {
		t.Fatalf("destroy item on C thread: %v", s)
	}

	// Stress: several goroutines make tensors and hand them to C threads while the
	// collector runs.
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				x, err := NewDense(fill(32, float32(i)), nil, rc.option())
				if err != nil {
					t.Error(err)
					return
				}
				p, err := x.Detach()
				if err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					runGC()
				}
				if s := destroyTensorOnCThread(p); s != StatusOK {
					t.Errorf("destroy on C thread: %v", s)
				}
			}
		}()
	}
	wg.Wait()
	rc.check(t)
	requireNoLeaks(t)
}

// BenchmarkSmallCall compares one small accessor (Tensor.Rank: one cgo call to
// hurray_descriptor_header plus the wrapper's checks) with the same C call made
// bare and with an empty cgo call: Rank/bare is the Go wrapper's overhead,
// bare/empty the library's (its panic boundary and checks).
func BenchmarkSmallCall(b *testing.B) {
	t, err := NewDense(fill(4, 0), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	b.Run("Tensor.Rank", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if t.Rank() != 1 {
				b.Fatal("rank")
			}
		}
	})
	b.Run("bare hurray_descriptor_view", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rawViewCall(t)
		}
	})
	b.Run("empty cgo call", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			noopCgoCall()
		}
	})
}
