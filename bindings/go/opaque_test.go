package hurray

import (
	"errors"
	"testing"
)

// A permissive open keeps a private extension layout it has no agreement for as
// opaque: the raw bytes can be passed on, but no typed view of them is handed out
// (layouts.md §3: a permissive reader never interprets such buffers). The file is
// written by the Rust writer (tests/matrix/rust/tests/opaque_fixture.rs keeps it
// current): Go's strict writers cannot make one.
func TestOpaqueLayoutHasNoTypedViews(t *testing.T) {
	for _, opts := range []ReadOptions{{Permissive: true}, {AcceptPrivate: true}} {
		f, err := OpenFileWith("testdata/opaque_layout.hrry", &opts)
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		x, err := f.Tensor("x")
		if err != nil {
			t.Fatal(err)
		}
		if x.Layout().String() != "private(0xf3)" || len(x.Bytes(0)) != 16 {
			t.Fatalf("layout %s, %d raw bytes", x.Layout(), len(x.Bytes(0)))
		}
		var e *Error
		if _, err := x.Float32s(); !errors.As(err, &e) || e.Status != StatusNotApplicable {
			t.Fatalf("Float32s of an opaque layout: %v", err)
		}
		if _, err := BufferValues[uint32](x, 0); !errors.As(err, &e) || e.Status != StatusNotApplicable {
			t.Fatalf("View of an opaque layout: %v", err)
		}
		x.Close()
		f.Close()
	}
	if _, err := OpenFile("testdata/opaque_layout.hrry"); err == nil {
		t.Fatal("a strict open accepted an unagreed private layout")
	}
}
