package hurray

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestStatusAndErrorFormatting(t *testing.T) {
	if s := StatusTruncated.String(); s != "HURRAY_ERR_TRUNCATED" {
		t.Errorf("String() = %q", s)
	}
	if s := Status(-77).String(); s != "HURRAY_UNKNOWN_STATUS(-77)" {
		t.Errorf("unknown status String() = %q", s)
	}
	e := &Error{Status: StatusDescriptor, Message: "rule X at byte 4", Op: "DecodeDescriptor"}
	if got := e.Error(); got != "hurray: DecodeDescriptor: rule X at byte 4 (HURRAY_ERR_DESCRIPTOR)" {
		t.Errorf("Error() = %q", got)
	}
	if !errors.Is(e, ErrDescriptor) || errors.Is(e, ErrFormat) {
		t.Error("errors.Is matches on the status")
	}
	trunc := &Error{Status: StatusTruncated}
	if !errors.Is(trunc, io.ErrUnexpectedEOF) || !errors.Is(trunc, ErrTruncated) {
		t.Error("a truncation matches io.ErrUnexpectedEOF and ErrTruncated")
	}
	if !errors.Is(&Error{Status: StatusFileNotFound}, fs.ErrNotExist) {
		t.Error("a missing file matches fs.ErrNotExist")
	}
	var target *Error
	if !errors.As(errors.Join(errors.New("x"), e), &target) || target.Status != StatusDescriptor {
		t.Error("errors.As finds the *Error")
	}
}

func TestDecodeErrorsCarryMessages(t *testing.T) {
	_, err := DecodeDescriptor([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusDescriptor || e.Message == "" {
		t.Fatalf("DecodeDescriptor(garbage) = %#v, want ErrDescriptor with a message", err)
	}
	if _, err := DecodeDescriptor(nil); !errors.Is(err, ErrNullPointer) {
		t.Errorf("DecodeDescriptor(nil) = %v", err)
	}
	if _, err := DenseDescriptor(DType(99), 2); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("DenseDescriptor(bad dtype) = %v", err)
	}
}

// sampleStream is a stream of two tensors and a composite.
func sampleStream(t *testing.T) []byte {
	var buf bytes.Buffer
	a, _ := NewDense(fill(8, 0), nil)
	b, _ := NewDense(fill(3, 5), nil)
	comp := partition(t)
	if err := writeAll(&buf, []*Item{mustItem(t, a), mustItem(t, b), comp}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTruncatedStreams cuts a stream at every offset: a cut on an item boundary
// ends with io.EOF after the whole items; any other cut ends with an error that
// matches io.ErrUnexpectedEOF, and never a partial item.
func TestTruncatedStreams(t *testing.T) {
	full := sampleStream(t)
	boundaries := map[int]int{} // offset -> items complete there
	{
		r := NewReader(bytes.NewReader(full))
		n := 0
		boundaries[0] = 0
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			boundaries[int(r.Offset())] = n
			it.Close()
		}
		r.Close()
		if n != 3 {
			t.Fatalf("%d items in the sample stream", n)
		}
	}
	for cut := 0; cut <= len(full); cut++ {
		items, err := readAll(bytes.NewReader(full[:cut]))
		want, clean := boundaries[cut]
		switch {
		case clean && err != nil:
			t.Errorf("cut at %d (a boundary): %v", cut, err)
		case clean && len(items) != want:
			t.Errorf("cut at %d: %d items, want %d", cut, len(items), want)
		case !clean && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Errorf("cut at %d: err = %v, want one matching io.ErrUnexpectedEOF", cut, err)
		case !clean && !errors.Is(err, ErrTruncated):
			t.Errorf("cut at %d: err = %v, want ErrTruncated", cut, err)
		}
		closeAll(t, items)
	}
	requireNoLeaks(t)
}

// TestCorruptStreams flips bytes: every outcome is items and/or an *Error, never a
// panic; errors are sticky.
func TestCorruptStreams(t *testing.T) {
	full := sampleStream(t)
	for off := 0; off < len(full); off += 7 {
		bad := append([]byte(nil), full...)
		bad[off] ^= 0xA5
		r := NewReader(bytes.NewReader(bad))
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Errorf("offset %d: %T %v, want *Error", off, err, err)
				}
				if _, again := r.Next(); again != err {
					t.Errorf("offset %d: error not sticky: %v then %v", off, err, again)
				}
				break
			}
			it.Close()
		}
		r.Close()
	}
	requireNoLeaks(t)
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk on fire")
	}
	f.after--
	return len(p), nil
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestIOErrors(t *testing.T) {
	boom := errors.New("boom")
	if _, err := NewReader(failingReader{boom}).Next(); !errors.Is(err, boom) {
		t.Errorf("read error = %v, want it wrapped", err)
	}
	if _, err := NewReader(emptyReader{}).Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("(0, nil) reads forever: %v, want io.ErrNoProgress", err)
	}
	if _, err := NewReader(bytes.NewReader(nil)).Next(); err != io.EOF {
		t.Errorf("empty stream: %v, want io.EOF", err)
	}
	x, _ := NewDense(fill(4, 0), nil)
	w := NewWriter(&failingWriter{after: 1})
	err := w.WriteTensor(x)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("write error = %v", err)
	}
	if again := w.WriteTensor(x); again != err {
		t.Errorf("write errors are sticky: %v then %v", err, again)
	}
	w.Close()
	x.Close()
	requireNoLeaks(t)
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenFile(filepath.Join(dir, "missing.hrry")); !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, ErrFileNotFound) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := CreateFile(filepath.Join(dir, "no", "such", "dir.hrry"), nil); err == nil {
		t.Error("CreateFile in a missing directory succeeded")
	}
	// A truncated copy of a valid file is refused with a named rule.
	path := filepath.Join(dir, "ok.hrry")
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := NewDense(fill(100, 0), nil)
	if err := w.WriteTensor("x", x); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensor("x", x); !errors.Is(err, ErrFormat) {
		t.Errorf("duplicate name: %v, want ErrFormat", err)
	}
	if err := w.AddKV("bad", struct{}{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unsupported KV type: %v", err)
	}
	if err := w.Close(); err != nil {
		// The duplicate write made the writer unusable; the destination must not exist.
		if _, serr := os.Stat(path); !errors.Is(serr, fs.ErrNotExist) {
			t.Errorf("failed Close left a file: %v", serr)
		}
		w, _ = CreateFile(path, &WriteOptions{NoSync: true})
		w.WriteTensor("x", x)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	raw, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "cut.hrry")
	os.WriteFile(cut, raw[:len(raw)-10], 0o644)
	var e *Error
	if _, err := OpenFile(cut); !errors.As(err, &e) || e.Message == "" {
		t.Errorf("truncated file: %v", err)
	}
	// Abort leaves nothing.
	aborted := filepath.Join(dir, "aborted.hrry")
	w, _ = CreateFile(aborted, nil)
	w.WriteTensor("x", x)
	w.Abort()
	if _, err := os.Stat(aborted); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("aborted file exists: %v", err)
	}
	if err := w.WriteTensor("y", x); !errors.Is(err, ErrClosed) {
		t.Errorf("write after Abort: %v, want ErrClosed", err)
	}
	x.Close()
	requireNoLeaks(t)
}

func TestUseAfterClose(t *testing.T) {
	x, _ := NewDense(fill(4, 0), nil)
	x.Close()
	mustPanic(t, "Tensor.Rank", func() { x.Rank() })
	mustPanic(t, "Tensor.Bytes", func() { x.Bytes(0) })
	if s := x.String(); s != "Tensor(closed)" {
		t.Errorf("String() = %q", s)
	}
	if _, err := NewItem(x); !errors.Is(err, ErrClosed) {
		t.Errorf("NewItem(closed) = %v", err)
	}
	comp := partition(t)
	// Closing what an item lends does nothing: the item owns it.
	if err := comp.Tensor().Close(); err != nil {
		t.Fatal(err)
	}
	comp.Member(0).Close()
	if comp.Tensor().Rank() != 2 || comp.Member(0).Tensor().Rank() != 2 {
		t.Error("borrowed values still work after their Close")
	}
	head := comp.Tensor()
	member := comp.Member(1)
	comp.Close()
	mustPanic(t, "borrowed tensor after its item closed", func() { head.Rank() })
	mustPanic(t, "member after its root closed", func() { member.Tensor() })

	path := filepath.Join(t.TempDir(), "one.hrry")
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	one, _ := NewDense(fill(2, 0), nil)
	if err := w.WriteTensor("weights", one); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	one.Close()
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := f.Tensor("weights"); !errors.Is(err, ErrClosed) {
		t.Errorf("File.Tensor after Close = %v", err)
	}
	mustPanic(t, "File.Names", func() { f.Names() })
	r := NewReader(bytes.NewReader(nil))
	r.Close()
	if _, err := r.Next(); !errors.Is(err, ErrClosed) {
		t.Errorf("Reader.Next after Close = %v", err)
	}
	requireNoLeaks(t)
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestViews(t *testing.T) {
	data := Make[int32](6)
	for i := range data {
		data[i] = int32(i * i)
	}
	x, err := NewDense(data, []uint64{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	v, err := x.Int32s()
	if err != nil || !equalSlices(v, data) {
		t.Fatalf("Int32s() = %v, %v", v, err)
	}
	if &v[0] == &data[0] {
		t.Error("Int32s returns a copy")
	}
	u, err := UnsafeValues[int32](x)
	if err != nil || &u[0] != &data[0] {
		t.Errorf("UnsafeValues of a tensor over Go memory views that memory (no copy): %v", err)
	}
	if err := x.WithInt32s(func(w []int32) error {
		if &w[0] != &data[0] {
			t.Error("WithInt32s views the memory (no copy)")
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if _, err := x.Float32s(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Float32s on int32 = %v", err)
	}
	if u, err := BufferValues[uint16](x, 0); err != nil || len(u) != 12 {
		t.Errorf("BufferValues[uint16] = %d values, %v", len(u), err)
	}
	if n, ok := x.NumElements(); !ok || n != 6 {
		t.Errorf("NumElements = %d, %v", n, ok)
	}
	if x.Rank() != 2 || x.DType() != Int32 || x.Layout() != RowMajor || x.ByteOffset() != 0 || x.Device() != CPU {
		t.Errorf("accessors: %v", x)
	}
	if s := x.String(); s != "Tensor(int32[2 3] row_major)" {
		t.Errorf("String() = %q", s)
	}
	mustPanic(t, "Bytes(5)", func() { x.Bytes(5) })
	if m := Make[complex128](3); uintptr(ptrOf(AsBytes(m)))%Alignment != 0 || len(m) != 3 {
		t.Error("Make aligns")
	}
}

// TestOpenFileWith: limits below the file refuse it with StatusLimit naming the
// limit; nil and zero options open it like OpenFile; permissive mode opens a valid
// file the same.
func TestOpenFileWith(t *testing.T) {
	path := filepath.Join(t.TempDir(), "three.hrry")
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := NewDense(fill(16, 0), nil)
	for _, name := range []string{"a", "b", "c"} {
		if err := w.WriteTensor(name, x); err != nil {
			t.Fatal(err)
		}
	}
	x.Close()
	if err := w.AddKV("k1", "v"); err != nil {
		t.Fatal(err)
	}
	if err := w.AddKV("k2", int64(2)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []*ReadOptions{nil, {}, {Permissive: true, AcceptPrivate: true}, {MaxTensors: 3, MaxKVEntries: 2}} {
		f, err := OpenFileWith(path, opts)
		if err != nil {
			t.Fatalf("OpenFileWith(%+v): %v", opts, err)
		}
		if n := len(f.Names()); n != 3 {
			t.Errorf("OpenFileWith(%+v): %d names, want 3", opts, n)
		}
		f.Close()
	}
	for _, opts := range []*ReadOptions{{MaxTensors: 2}, {MaxKVEntries: 1}} {
		_, err := OpenFileWith(path, opts)
		var he *Error
		if !errors.Is(err, ErrLimit) || !errors.As(err, &he) || !strings.Contains(he.Op, "OpenFileWith") {
			t.Errorf("OpenFileWith(%+v): %v, want ErrLimit from OpenFileWith", opts, err)
		}
	}
	requireNoLeaks(t)
}

// TestFiveBadInputs: a missing path, a directory, an empty file, a truncated file
// and random bytes each give Go's conventional error (errors.Is with fs.ErrNotExist,
// syscall.EISDIR, io.ErrUnexpectedEOF) and a message naming the path.
func TestFiveBadInputs(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hrry")
	w, _ := CreateFile(good, &WriteOptions{NoSync: true})
	x, _ := NewDense(fill(1000, 0), nil)
	if err := w.WriteTensor("x", x); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(good)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(i*7919 + 13)
	}
	cases := []struct {
		name, path string
		target     error
		category   string
		text       string
	}{
		{"missing", filepath.Join(dir, "missing.hrry"), fs.ErrNotExist, "not_found", "No such file"},
		{"directory", dir, syscall.EISDIR, "io", "Is a directory"},
		{"empty", write("empty.hrry", nil), io.ErrUnexpectedEOF, "truncated", "Truncated at byte 0"},
		{"truncated", write("cut.hrry", raw[:len(raw)-100]), io.ErrUnexpectedEOF, "truncated",
			fmt.Sprintf("Truncated at byte %d", len(raw)-100)},
		{"random", write("random.hrry", random), ErrFormat, "format", "Magic at byte 0"},
	}
	for _, c := range cases {
		f, err := OpenFile(c.path)
		if err == nil {
			f.Close()
			t.Fatalf("%s: opened", c.name)
		}
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, c.target) {
			t.Errorf("%s: %v does not match %v", c.name, err, c.target)
			continue
		}
		if e.Status.Category() != c.category {
			t.Errorf("%s: category %q, want %q", c.name, e.Status.Category(), c.category)
		}
		// The error names the path once (in Op), and says what went wrong.
		if n := strings.Count(err.Error(), c.path); n != 1 || !strings.Contains(e.Op, c.path) || !strings.Contains(e.Message, c.text) {
			t.Errorf("%s: %q names the path %d times (want once, in Op), or lacks %q", c.name, err.Error(), n, c.text)
		}
	}
	requireNoLeaks(t)
}

// TestTagNamesRenderOneWay: names come from the generated tables, and a tag no table
// names renders as unknown(0x2a), a private one as private(0xf3), as in every language.
func TestTagNamesRenderOneWay(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Float32.String(), "float32"},
		{DType(0x2a).String(), "unknown(0x2a)"},
		{DType(0xf3).String(), "private(0xf3)"},
		{CSR.String(), "csr"},
		{Layout(0x2a).String(), "unknown(0x2a)"},
		{Device(0x2a).String(), "unknown(0x2a)"},
		{LevelZero.String(), "level_zero"},
		{SyncMode(0xf0).String(), "unknown(0xf0)"},
		{NF4.String(), "nf4"},
		{Overlay.String(), "overlay"},
		{StatusIO.Category(), "io"},
		{StatusFileNotFound.Category(), "not_found"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if Float6E2M3.Bits() != 6 || DType(0x2a).Bits() != 0 {
		t.Error("Bits")
	}
}
