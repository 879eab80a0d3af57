package hurray

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wantInvalid fails unless err is an ErrInvalidArgument *Error whose Op starts
// with op and whose message contains msg.
func wantInvalid(t *testing.T, what string, err error, op, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidArgument {
		t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		return
	}
	if !strings.HasPrefix(e.Op, op) || !strings.Contains(e.Message, msg) {
		t.Errorf("%s: Op %q, message %q; want Op %q... and a message with %q", what, e.Op, e.Message, op, msg)
	}
}

// TestNULBytes: names and keys may hold NUL bytes (the format allows them): they
// are written and found whole, never cut at the NUL. String values and paths
// holding one are refused before reaching C.
func TestNULBytes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nul.hrry")
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := NewDense(fill(4, 0), nil)
	defer x.Close()
	if err := w.WriteTensor("x\x00hidden", x); err != nil {
		t.Fatal(err)
	}
	y, _ := NewDense(fill(2, 10), nil)
	item := mustItem(t, y)
	defer item.Close()
	if err := w.WriteItem("y\x00", item); err != nil {
		t.Fatal(err)
	}
	if err := w.AddKV("k\x00y", "value"); err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, "AddKV value", w.AddKV("k", "val\x00ue"), `FileWriter.AddKV "k"`, "string value")
	wantInvalid(t, "AddKV []string", w.AddKV("k", []string{"a", "b\x00c"}), `FileWriter.AddKV "k"`, "string 1 of the value")
	// The refusals wrote nothing and left the writer usable; bytes may hold NULs.
	if err := w.WriteTensor("x", x); err != nil {
		t.Fatal(err)
	}
	if err := w.AddKV("k", []byte("a\x00b")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if names := f.Names(); !slices.Equal(names, []string{"x\x00hidden", "y\x00", "x"}) {
		t.Errorf("Names() = %q", names)
	}
	if keys, err := f.Keys(); err != nil || !slices.Equal(keys, []string{"k\x00y", "k"}) {
		t.Errorf("Keys() = %q, %v", keys, err)
	}
	// "x\x00hidden" is found whole, and is not "x" (whose values differ) nor "x\x00".
	for name, first := range map[string]float32{"x\x00hidden": 0, "x": 0, "y\x00": 10} {
		got, err := f.Tensor(name)
		if err != nil {
			t.Fatalf("File.Tensor(%q): %v", name, err)
		}
		v, err := got.Float32s()
		if err != nil || v[0] != first {
			t.Errorf("File.Tensor(%q) values %v, %v", name, v, err)
		}
		got.Close()
	}
	for _, missing := range []string{"x\x00", "x\x00hidde", "y"} {
		if _, err := f.Tensor(missing); !errors.Is(err, ErrNotFound) {
			t.Errorf("File.Tensor(%q) = %v, want ErrNotFound", missing, err)
		}
	}
	if it, err := f.Item("y\x00"); err != nil {
		t.Errorf("File.Item: %v", err)
	} else {
		if n := it.Tensor().NumBuffers(); n != 1 {
			t.Errorf("File.Item: %d buffers", n)
		}
		it.Close()
	}
	if d, err := f.Descriptor("x\x00hidden"); err != nil || d.Shape[0] != 4 {
		t.Errorf("File.Descriptor = %v, %v", d, err)
	}
	if v, err := f.Value("k\x00y"); err != nil || v != "value" {
		t.Errorf("File.Value = %v, %v", v, err)
	}
	if _, err := f.Value("k\x00"); !errors.Is(err, ErrNotFound) {
		t.Errorf("File.Value(k NUL) = %v, want ErrNotFound", err)
	}

	// Paths: OpenFile would open path, CreateFile would create it.
	if g, err := OpenFile(path + "\x00.bak"); err == nil {
		g.Close()
		t.Error("OpenFile(path + NUL...) opened path")
	} else {
		wantInvalid(t, "OpenFile", err, "OpenFile", "path")
	}
	other := filepath.Join(dir, "other.hrry")
	if cw, err := CreateFile(other+"\x00.tmp", nil); err == nil {
		cw.Abort()
		t.Error("CreateFile(path + NUL...) succeeded")
	} else {
		wantInvalid(t, "CreateFile", err, "CreateFile", "path")
	}
	if _, err := os.Stat(other); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CreateFile with a NUL byte touched %s: %v", other, err)
	}
	requireNoLeaksAfter(t, f, item, x)
}

// requireNoLeaksAfter closes cs, then checks for leaks.
func requireNoLeaksAfter(t *testing.T, cs ...io.Closer) {
	t.Helper()
	for _, c := range cs {
		c.Close()
	}
	requireNoLeaks(t)
}

// wantClosed fails unless err matches ErrClosed and its text contains msg.
func wantClosed(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if !errors.Is(err, ErrClosed) {
		t.Errorf("%s: %v, want an error matching ErrClosed", what, err)
		return
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: %q does not say %q", what, err, msg)
	}
}

// noPanic runs f, failing the test instead of crashing when f panics.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// TestClosedObjectsGiveErrClosed: every function that returns an error returns one
// matching ErrClosed — never a panic — when called on or given a closed object.
func TestClosedObjectsGiveErrClosed(t *testing.T) {
	x, _ := NewDense(fill(4, 0), nil)
	x.Close()
	noPanic(t, "views of a closed tensor", func() {
		_, err := x.Float32s()
		wantClosed(t, "Float32s", err, "Tensor.Float32s: the tensor is closed")
		_, err = x.Int64s()
		wantClosed(t, "Int64s", err, "Tensor.Int64s")
		_, err = Values[float32](x)
		wantClosed(t, "Values", err, "Values")
		_, err = BufferValues[byte](x, 0)
		wantClosed(t, "BufferValues", err, "BufferValues")
		_, err = x.Detach()
		wantClosed(t, "Detach", err, "Tensor.Detach")
	})

	var stream bytes.Buffer
	sw := NewWriter(&stream)
	dir := t.TempDir()
	fw, err := CreateFile(filepath.Join(dir, "c.hrry"), &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// A closed tensor as an argument: ErrClosed and ErrInvalidArgument.
	noPanic(t, "writing a closed tensor", func() {
		for what, err := range map[string]error{
			"Writer.WriteTensor":     sw.WriteTensor(x),
			"FileWriter.WriteTensor": fw.WriteTensor("x", x),
		} {
			wantClosed(t, what, err, "the tensor is closed")
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s(closed tensor): %v, want it to match ErrInvalidArgument too", what, err)
			}
		}
	})
	// Consumed (moved into an item), detached, and borrowed-from-a-closed-item
	// tensors are closed too, and the errors say which.
	moved, _ := NewDense(fill(4, 0), nil)
	it := mustItem(t, moved)
	detached, _ := NewDense(fill(4, 0), nil)
	h, _ := detached.Detach()
	back, err := TensorFromC(h)
	if err != nil {
		t.Fatal(err)
	}
	comp := partition(t)
	head, member := comp.Tensor(), comp.Member(0)
	comp.Close()
	noPanic(t, "writing consumed, detached and borrowed tensors", func() {
		wantClosed(t, "moved tensor", sw.WriteTensor(moved), "the tensor was moved into an item by NewItem")
		wantClosed(t, "detached tensor", fw.WriteTensor("d", detached), "the tensor was detached")
		wantClosed(t, "borrowed tensor of a closed item", sw.WriteTensor(head), "the tensor belongs to an item that is closed")
		_, err := head.Float32s()
		wantClosed(t, "Float32s of a borrowed tensor of a closed item", err, "belongs to an item that is closed")
		wantClosed(t, "member of a closed item", sw.WriteItem(member), "the item is a member of an item that is closed")
		wantClosed(t, "closed item", fw.WriteItem("c", comp), "the item is closed")
		_, err = NewItem(moved)
		wantClosed(t, "NewItem(moved)", err, "was moved into an item")
	})
	// Nil arguments are invalid, not closed.
	noPanic(t, "nil arguments", func() {
		if err := sw.WriteTensor(nil); !errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrClosed) {
			t.Errorf("WriteTensor(nil) = %v", err)
		}
		if err := fw.WriteItem("n", nil); !errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrClosed) {
			t.Errorf("WriteItem(nil) = %v", err)
		}
		if _, err := NewItem(nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("NewItem(nil) = %v", err)
		}
	})
	// Refusing an argument wrote nothing and is not sticky.
	if stream.Len() != 0 || sw.Offset() != 0 {
		t.Errorf("refused writes wrote %d bytes", stream.Len())
	}
	if err := sw.WriteItem(it); err != nil {
		t.Errorf("Writer after refused arguments: %v", err)
	}
	if err := fw.WriteItem("it", it); err != nil {
		t.Errorf("FileWriter after refused arguments: %v", err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}

	// Closed receivers.
	sw.Close()
	live, _ := NewDense(fill(2, 0), nil)
	wantClosed(t, "closed Writer", sw.WriteTensor(live), "Writer.WriteTensor: the Writer is closed")
	wantClosed(t, "closed FileWriter", fw.WriteTensor("z", live), `FileWriter.WriteTensor "z": the FileWriter is closed`)
	wantClosed(t, "closed FileWriter AddKV", fw.AddKV("k", 1), "the FileWriter is closed")

	// Index errors of View are errors too; Bytes, without an error result, panics.
	noPanic(t, "View out of range", func() {
		if _, err := BufferValues[float32](live, 3); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("View(3) = %v, want ErrOutOfRange", err)
		}
		if _, err := BufferValues[float32](live, -1); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("View(-1) = %v, want ErrOutOfRange", err)
		}
	})
	mustPanic(t, "Bytes(3)", func() { live.Bytes(3) })
	live.Close()
	mustPanic(t, "Bytes on a closed tensor", func() { live.Bytes(0) })
	mustPanic(t, "Item.Len on a closed item", func() { it.Close(); it.Len() })
	requireNoLeaksAfter(t, back)
}

// TestNewCompositeRefusesBadMembers: the same member twice, a member already moved
// into another composite, a nil or borrowed member: a clear ErrInvalidArgument
// before anything is moved, and everything given is closed.
func TestNewCompositeRefusesBadMembers(t *testing.T) {
	headDesc := Descriptor{DType: Float32, Layout: CompositeHead, Shape: []uint64{2, 4},
		Composite: &CompositeFields{MemberCount: 2, Rule: Group}}
	newHead := func() *Tensor { return mustTensor(t, headDesc) }
	newMember := func() *Item {
		x, _ := NewDense(fill(8, 0), []uint64{2, 4})
		return mustItem(t, x)
	}

	a := newMember()
	head := newHead()
	_, err := NewComposite(head, a, a)
	wantInvalid(t, "duplicate member", err, "NewComposite", "member 1 is member 0 again")
	if errors.Is(err, ErrNullPointer) {
		t.Errorf("duplicate member: %v", err)
	}
	wantClosed(t, "head after a failed NewComposite", NewWriter(io.Discard).WriteTensor(head), "the tensor is closed")

	b, c := newMember(), newMember()
	first, err := NewComposite(newHead(), b, c)
	if err != nil {
		t.Fatal(err)
	}
	d := newMember()
	_, err = NewComposite(newHead(), d, b)
	wantInvalid(t, "consumed member", err, "NewComposite", "member 1: the item was moved into a composite by NewComposite")
	if !errors.Is(err, ErrClosed) {
		t.Errorf("consumed member: %v, want it to match ErrClosed too", err)
	}

	_, err = NewComposite(newHead(), newMember(), nil)
	wantInvalid(t, "nil member", err, "NewComposite", "member 1 is nil")
	_, err = NewComposite(newHead(), first.Member(0), newMember())
	wantInvalid(t, "borrowed member", err, "NewComposite", "member 0 is borrowed")
	_, err = NewComposite(nil, newMember(), newMember())
	wantInvalid(t, "nil head", err, "NewComposite", "nil head")
	consumedHead := newHead()
	if _, err := NewComposite(consumedHead, newMember(), newMember()); err != nil {
		t.Fatal(err) // leaked on purpose: the cleanup releases it
	}
	_, err = NewComposite(consumedHead, newMember(), newMember())
	wantInvalid(t, "consumed head", err, "NewComposite", "head: the tensor was moved into a composite")
	first.Close()
	requireNoLeaks(t)
}

// TestErrorOpIsTheGoOperation: Error.Op names the function or method of this
// package that failed, never the C function behind it.
func TestErrorOpIsTheGoOperation(t *testing.T) {
	op := func(err error) string {
		var e *Error
		if !errors.As(err, &e) {
			return "not an *Error: " + errString(err)
		}
		if strings.HasPrefix(e.Op, "hurray_") || strings.Contains(e.Message, "HURRAY_ERR_") {
			t.Errorf("Op %q, message %q: a C name or a repeated status name", e.Op, e.Message)
		}
		return e.Op
	}
	check := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("Op = %q, want %q", got, want)
		}
	}
	_, err := NewDense(fill(4, 0), []uint64{3})
	check(op(err), "NewDense")
	_, err = NewDense(fill(4, 0), []uint64{DimDynamic})
	check(op(err), "NewDense")
	_, err = NewTensor(Descriptor{DType: Float32, Layout: CSR, Shape: []uint64{3}, Buffers: make([]BufferEntry, 3)}, make([][]byte, 3))
	check(op(err), "NewTensor")
	_, err = DenseDescriptor(DType(99), 2)
	check(op(err), "DenseDescriptor")
	bad := Descriptor{DType: Float32, Layout: Strided, Shape: []uint64{2}, Strides: []int64{1, 2}}
	_, err = bad.Encode()
	check(op(err), "Descriptor.Encode")
	_, err = DecodeDescriptor([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	check(op(err), "DecodeDescriptor")

	full := sampleStream(t)
	_, err = NewReader(bytes.NewReader(full[:len(full)-3])).Next() // the first item is whole
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(bytes.NewReader(full[:len(full)-3])) // cut: the decoder's finish fails
	check(op(err), "Reader.Next")
	r := NewReader(bytes.NewReader(full[:10]))
	_, err = r.NextTensor()
	check(op(err), "Reader.NextTensor")
	r.Close()
	corrupt := append([]byte(nil), full...)
	copy(corrupt, "XXXXXXXX")
	_, err = readAll(bytes.NewReader(corrupt)) // the decoder's next fails
	check(op(err), "Reader.Next")

	comp := partition(t)
	defer comp.Close()
	check(op(NewWriter(io.Discard).WriteTensor(comp.Tensor())), "Writer.WriteTensor")

	dir := t.TempDir()
	_, err = OpenFile(filepath.Join(dir, "missing"))
	check(op(err), `OpenFile "`+filepath.Join(dir, "missing")+`"`)
	path := filepath.Join(dir, "f.hrry")
	fw, _ := CreateFile(path, &WriteOptions{NoSync: true})
	check(op(fw.WriteTensor("h", comp.Tensor())), `FileWriter.WriteTensor "h"`)
	fw.Abort()
	fw, _ = CreateFile(path, &WriteOptions{NoSync: true, TensorCount: 5})
	check(op(fw.Close()), `FileWriter.Close "`+path+`"`)
	requireNoLeaksAfter(t, comp)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestWriterErrorsAreNotEOF: only readers report truncation; no writer-side error
// matches io.ErrUnexpectedEOF, whatever the writer's mistake.
func TestWriterErrorsAreNotEOF(t *testing.T) {
	comp := partition(t)
	defer comp.Close()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	defer w.Close()
	errs := map[string]error{}
	errs["Writer.WriteTensor(composite head)"] = w.WriteTensor(comp.Tensor())
	if !errors.Is(errs["Writer.WriteTensor(composite head)"], ErrFormat) {
		t.Errorf("WriteTensor(composite head) = %v, want ErrFormat", errs["Writer.WriteTensor(composite head)"])
	}
	if buf.Len() != 0 {
		t.Errorf("a refused composite head wrote %d bytes", buf.Len())
	}
	fw, err := CreateFile(filepath.Join(t.TempDir(), "w.hrry"), &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	errs["FileWriter.WriteTensor(composite head)"] = fw.WriteTensor("h", comp.Tensor())
	x, _ := NewDense(fill(4, 0), nil)
	defer x.Close()
	errs["FileWriter.WriteTensor(empty name)"] = fw.WriteTensor("", x)
	fw.Abort()
	errs["Writer.WriteTensor(io error)"] = NewWriter(&failingWriter{}).WriteTensor(x)
	for what, err := range errs {
		if err == nil {
			t.Errorf("%s succeeded", what)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrTruncated) {
			t.Errorf("%s: %v matches io.ErrUnexpectedEOF/ErrTruncated; only readers report truncation", what, err)
		}
	}
	// The stream is intact after the refusal.
	if err := w.WriteItem(comp); err != nil {
		t.Fatal(err)
	}
	items, err := readAll(&buf)
	if err != nil || len(items) != 1 {
		t.Fatalf("read back %d items, %v", len(items), err)
	}
	closeAll(t, items)
}

// TestTruncatedFileErrors pins what a cut file gives: ErrTruncated, matching
// io.ErrUnexpectedEOF, with the byte where the file ends, wherever it was cut (a
// file whose end is not its trailer was cut short).
func TestTruncatedFileErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ok.hrry")
	w, _ := CreateFile(path, &WriteOptions{NoSync: true})
	x, _ := NewDense(fill(1000, 0), nil)
	if err := w.WriteTensor("x", x); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	open := func(n int) error {
		p := filepath.Join(dir, "cut.hrry")
		if err := os.WriteFile(p, raw[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := OpenFile(p)
		if err == nil {
			f.Close()
		}
		return err
	}
	for _, n := range []int{len(raw) / 2, len(raw) - 1, 200} {
		err := open(n)
		want := fmt.Sprintf("Truncated at byte %d", n)
		if !errors.Is(err, ErrTruncated) || !errors.Is(err, io.ErrUnexpectedEOF) ||
			!strings.Contains(err.Error(), want) {
			t.Errorf("file cut to %d of %d bytes: %v, want ErrTruncated %q", n, len(raw), err, want)
		}
	}
	for _, n := range []int{0, 10, 63} {
		err := open(n)
		if !errors.Is(err, ErrTruncated) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("file cut to %d bytes: %v, want ErrTruncated (io.ErrUnexpectedEOF)", n, err)
		}
	}
	requireNoLeaks(t)
}
