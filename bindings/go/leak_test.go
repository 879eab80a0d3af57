package hurray

import (
	"bytes"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// releaseCounter counts, per tensor made from Go memory, how often its release
// callback ran.
type releaseCounter struct {
	mu     sync.Mutex
	counts []*atomic.Int32
}

// option returns an OnRelease option that counts into a new slot.
func (rc *releaseCounter) option() Option {
	c := new(atomic.Int32)
	rc.mu.Lock()
	rc.counts = append(rc.counts, c)
	rc.mu.Unlock()
	return OnRelease(func() { c.Add(1) })
}

// check fails unless every callback ran exactly once.
func (rc *releaseCounter) check(t testing.TB) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.counts) == 0 {
		t.Fatal("no release callbacks were registered")
	}
	for i, c := range rc.counts {
		if n := c.Load(); n != 1 {
			t.Errorf("release callback %d ran %d times, want exactly 1", i, n)
		}
	}
}

// world makes one of everything the package has: tensors and composites over Go
// memory (release-counted), a file written from them and read back (tensors and
// items that outlive the File), and a stream written and read back. It returns
// every object, for the caller to close or to drop.
func world(t *testing.T, rc *releaseCounter) []io.Closer {
	var out []io.Closer
	keep := func(c io.Closer) { out = append(out, c) }

	var tensors []*Tensor
	for i := 0; i < 4; i++ {
		tensor, err := NewDense(fill(16*(i+1), float32(i)), nil, rc.option())
		if err != nil {
			t.Fatal(err)
		}
		tensors = append(tensors, tensor)
		keep(tensor)
	}
	head, err := NewTensor(Descriptor{DType: Float32, Layout: CompositeHead, Shape: []uint64{2, 4},
		Composite: &CompositeFields{MemberCount: 2, Rule: Partition}}, nil, rc.option())
	if err != nil {
		t.Fatal(err)
	}
	var members []*Item
	for k := 0; k < 2; k++ {
		d := Descriptor{DType: Float32, Layout: RowMajor, Shape: []uint64{2, 2}, Buffers: []BufferEntry{{Size: 16}},
			Shard: &Shard{ParentShape: []uint64{2, 4}, Offset: []uint64{0, uint64(2 * k)}}}
		m, err := NewTensor(d, [][]byte{AsBytes(fill(4, float32(10*k)))}, rc.option())
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, mustItem(t, m))
	}
	comp, err := NewComposite(head, members...)
	if err != nil {
		t.Fatal(err)
	}
	keep(comp)
	_ = comp.Tensor()  // a borrowed wrapper
	_ = comp.Members() // borrowed member wrappers

	// A file holding all of them.
	path := filepath.Join(t.TempDir(), "world.hrry")
	fw, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, tensor := range tensors {
		if err := fw.WriteTensor("t"+string(rune('a'+i)), tensor); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.WriteItem("comp", comp); err != nil {
		t.Fatal(err)
	}
	if err := fw.AddKV("k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keep(f)
	for _, name := range f.Names() {
		ft, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		keep(ft)
	}
	fi, err := f.Item("comp")
	if err != nil {
		t.Fatal(err)
	}
	keep(fi)

	// A stream holding all of them, plus a Writer and a Reader left open.
	var buf bytes.Buffer
	sw := NewWriter(&buf)
	keep(sw)
	for _, tensor := range tensors {
		if err := sw.WriteTensor(tensor); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.WriteItem(comp); err != nil {
		t.Fatal(err)
	}
	sr := NewReader(&buf)
	keep(sr)
	for {
		it, err := sr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		keep(it)
		_ = it.Tensor()
	}
	// A file writer never finished (abandoned on Close? no: Close finishes; this
	// one is aborted or collected).
	abandoned, err := CreateFile(filepath.Join(t.TempDir(), "abandoned.hrry"), &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := abandoned.WriteTensor("x", tensors[0]); err != nil {
		t.Fatal(err)
	}
	keep(closerFunc(abandoned.Abort))
	return out
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// TestLeaksAfterClose: closing everything releases everything at once: no
// garbage collection needed.
func TestLeaksAfterClose(t *testing.T) {
	requireNoLeaks(t) // start from zero
	rc := &releaseCounter{}
	objs := world(t, rc)
	if LiveObjects() == 0 {
		t.Fatal("the world holds no live handles?")
	}
	for _, o := range objs {
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Close is deterministic: the count is zero now, before any collection.
	if live := LiveObjects(); live != 0 {
		t.Fatalf("hurray_debug_live_objects() = %d right after closing everything, want 0", live)
	}
	rc.check(t)
	// Closing again changes nothing.
	for _, o := range objs {
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rc.check(t)
	requireNoLeaks(t)
}

// TestLeaksAfterGC: dropping every reference and collecting releases everything
// through the cleanups, each release callback exactly once.
func TestLeaksAfterGC(t *testing.T) {
	requireNoLeaks(t)
	rc := &releaseCounter{}
	func() {
		objs := world(t, rc)
		if len(objs) == 0 {
			t.Fatal("empty world")
		}
	}()
	requireNoLeaks(t)
	rc.check(t)
}

// TestFailedConstructionReleasesNothingTwice: a tensor the library refuses leaves
// no handle and no pinned owner behind, and never calls its release.
func TestFailedConstructionReleasesNothingTwice(t *testing.T) {
	requireNoLeaks(t)
	called := 0
	d, _ := DenseDescriptor(Float32, 4)
	// Wrong size.
	if _, err := NewTensor(d, [][]byte{AsBytes(fill(3, 0))}, OnRelease(func() { called++ })); !isStatus(err, StatusBufferMismatch) {
		t.Errorf("wrong size: %v, want ErrBufferMismatch", err)
	}
	// Misaligned.
	v := Make[float32](5)
	if _, err := NewTensor(d, [][]byte{AsBytes(v[1:])}, OnRelease(func() { called++ })); !isStatus(err, StatusInvalidArgument) {
		t.Errorf("misaligned: %v, want ErrInvalidArgument", err)
	}
	// Wrong count.
	if _, err := NewTensor(d, nil); !isStatus(err, StatusBufferMismatch) {
		t.Errorf("no buffers: %v, want ErrBufferMismatch", err)
	}
	// Invalid descriptor.
	bad := Descriptor{DType: Float32, Layout: CSR, Shape: []uint64{3}, Buffers: []BufferEntry{{}, {}, {}}}
	if _, err := NewTensor(bad, [][]byte{nil, nil, nil}); !isStatus(err, StatusDescriptor) {
		t.Errorf("rank-1 CSR: %v, want ErrDescriptor", err)
	}
	if called != 0 {
		t.Errorf("release ran %d times for tensors never made", called)
	}
	requireNoLeaks(t)
}
