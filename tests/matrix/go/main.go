// Command go-matrix is the Go producer and consumer of the cross-language matrix.
//
//	go-matrix produce CASES OUT_DIR   write CASE.hrry / CASE.hrrys for every case
//	go-matrix consume CASES DIR...    check every producer directory (result lines)
//	go-matrix views FILE              the demo: open, view and checksum every tensor
//	go-matrix hostile DIR             every hostile file and stream must be refused (hostile.go)
//	go-matrix metadata FILE [ranged]  open, read every KV value and name (amplification)
//	go-matrix names                   every type and layout tag's rendered name
//	go-matrix net-get ADDR CASES OUT  GET every case's items ("CASE:NAME"), write OUT/CASE.hrry (net.go)
//	go-matrix net-put ADDR CASES DIR  PUT every item of DIR/CASE.hrry as "CASE:NAME"
//	go-matrix net-views ADDR FILE     the demo's network step: GET every tensor, the views table
//
// The producer wraps its own Go memory (pinned, released by the library) with
// hurray.NewTensor, builds composites with hurray.NewComposite, writes files with
// hurray.CreateFile and streams with hurray.NewWriter. The consumer reads files with
// hurray.OpenFile (items, KV) and streams with hurray.NewReader, and compares every
// descriptor field (hurray.Descriptor, read through the accessors) and every byte.
// Case syntax: tests/cases/README.md.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"time"
	"unsafe"

	hurray "github.com/hurray-dev/hurray/bindings/go"
)

// aligned returns n bytes whose first byte is aligned to align (at least 64).
func aligned(b []byte, align uint32) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	a := int(max(align, hurray.Alignment))
	backing := make([]byte, len(b)+a)
	skip := (a - int(uintptr(unsafe.Pointer(&backing[0])))%a) % a
	out := backing[skip : skip+len(b) : skip+len(b)]
	copy(out, b)
	return out
}

func makeItem(s *Spec) (*hurray.Item, error) {
	bufs := make([][]byte, len(s.Bytes))
	for i, b := range s.Bytes {
		bufs[i] = aligned(b, s.Desc.Buffers[i].Alignment)
	}
	t, err := hurray.NewTensor(s.Desc, bufs)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", s.Desc.Layout, s.Name, err)
	}
	if !s.IsComposite() {
		return hurray.NewItem(t)
	}
	members := make([]*hurray.Item, 0, len(s.Members))
	for _, m := range s.Members {
		it, err := makeItem(m)
		if err != nil {
			t.Close()
			for _, x := range members {
				x.Close()
			}
			return nil, err
		}
		members = append(members, it)
	}
	return hurray.NewComposite(t, members...)
}

func produceCase(c *Case, dir string) (err error) {
	var items []*hurray.Item
	defer func() {
		for _, it := range items {
			it.Close()
		}
	}()
	for _, s := range c.Items {
		it, err := makeItem(s)
		if err != nil {
			return err
		}
		items = append(items, it)
	}
	w, err := hurray.CreateFile(filepath.Join(dir, c.Name+".hrry"), &hurray.WriteOptions{NoSync: true})
	if err != nil {
		return err
	}
	for i, s := range c.Items {
		if err := w.WriteItem(s.Name, items[i]); err != nil {
			w.Abort()
			return err
		}
	}
	for _, kv := range c.KV {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			w.Abort()
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, c.Name+".hrrys"))
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	sw := hurray.NewWriter(bw)
	defer sw.Close()
	for _, it := range items {
		if err := sw.WriteItem(it); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// ---------------------------------------------------------------- consumer

// diff names the first field where got differs from want ("Statistics.NNZ:
// expected 3, got 259"); nil and empty slices are equal, floats compare by bits.
func diff(path string, want, got reflect.Value) string {
	at := strings.TrimPrefix(path, ".")
	switch want.Kind() {
	case reflect.Pointer:
		if want.IsNil() || got.IsNil() {
			if want.IsNil() != got.IsNil() {
				present := func(v reflect.Value) string {
					if v.IsNil() {
						return "absent"
					}
					return fmt.Sprintf("%+v", v.Elem().Interface())
				}
				return fmt.Sprintf("%s: expected %s, got %s", at, present(want), present(got))
			}
			return ""
		}
		return diff(path, want.Elem(), got.Elem())
	case reflect.Struct:
		for i := 0; i < want.NumField(); i++ {
			f := want.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if s := diff(path+"."+f.Name, want.Field(i), got.Field(i)); s != "" {
				return s
			}
		}
		return ""
	case reflect.Slice:
		if want.Len() != got.Len() {
			return fmt.Sprintf("%s: expected %v, got %v", at, want.Interface(), got.Interface())
		}
		for i := 0; i < want.Len(); i++ {
			if s := diff(fmt.Sprintf("%s[%d]", path, i), want.Index(i), got.Index(i)); s != "" {
				return s
			}
		}
		return ""
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(want.Float()) != math.Float64bits(got.Float()) {
			return fmt.Sprintf("%s: expected %v, got %v", at, want.Float(), got.Float())
		}
		return ""
	}
	if !reflect.DeepEqual(want.Interface(), got.Interface()) {
		return fmt.Sprintf("%s: expected %v, got %v", at, want.Interface(), got.Interface())
	}
	return ""
}

func firstDifference(what string, want, got []byte) error {
	if bytes.Equal(want, got) {
		return nil
	}
	n := len(want) - len(got)
	if n < 0 {
		n = -n
	}
	first := -1
	for i := 0; i < min(len(want), len(got)); i++ {
		if want[i] != got[i] {
			n++
			if first < 0 {
				first = i
			}
		}
	}
	if first >= 0 {
		return fmt.Errorf("%s byte %d: expected 0x%02x, got 0x%02x (%d of %d bytes differ)",
			what, first, want[first], got[first], n, len(want))
	}
	return fmt.Errorf("%s: expected %d bytes, got %d", what, len(want), len(got))
}

func checkItem(s *Spec, it *hurray.Item) error {
	kind := "tensor"
	if s.IsComposite() {
		kind = "composite"
	}
	at := func(err error) error { return fmt.Errorf("%s %q: %w", kind, s.Name, err) }
	if it.IsComposite() != s.IsComposite() {
		return at(fmt.Errorf("expected composite=%v, got composite=%v", s.IsComposite(), it.IsComposite()))
	}
	t := it.Tensor()
	if d := diff("", reflect.ValueOf(s.Desc), reflect.ValueOf(t.Descriptor())); d != "" {
		return at(errors.New(d))
	}
	for i, b := range s.Bytes {
		got := t.UnsafeBytes(i) // the memory itself (its alignment is checked); it outlives this loop
		if len(got) > 0 && uintptr(unsafe.Pointer(&got[0]))%hurray.Alignment != 0 {
			return at(fmt.Errorf("buffer %d is not 64-byte aligned in memory", i))
		}
		if err := firstDifference(fmt.Sprintf("buffer %d", i), b, got); err != nil {
			return at(err)
		}
	}
	if it.Len() != len(s.Members) {
		return at(fmt.Errorf("expected %d members, got %d", len(s.Members), it.Len()))
	}
	for i, m := range s.Members {
		if err := checkItem(m, it.Member(i)); err != nil {
			return err
		}
	}
	return nil
}

func kvSame(want, got any) bool {
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		return ok && math.Float64bits(w) == math.Float64bits(g)
	case []float64:
		g, ok := got.([]float64)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if math.Float64bits(w[i]) != math.Float64bits(g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

func checkFile(c *Case, path string) error {
	f, err := hurray.OpenFile(path)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	var want []string
	for _, s := range c.Items {
		want = s.Names(want)
	}
	if got := f.Names(); !reflect.DeepEqual(want, got) {
		return fmt.Errorf("tensor names: expected %q, got %q", want, got)
	}
	for _, s := range c.Items {
		it, err := f.Item(s.Name)
		if err != nil {
			return fmt.Errorf("item %q: %w", s.Name, err)
		}
		err = checkItem(s, it)
		it.Close()
		if err != nil {
			return err
		}
	}
	kv, err := f.Metadata()
	if err != nil {
		return fmt.Errorf("KV: %w", err)
	}
	if len(kv) != len(c.KV) {
		return fmt.Errorf("KV: expected %d entries, got %d", len(c.KV), len(kv))
	}
	for i, e := range c.KV {
		if kv[i].Key != e.Key {
			return fmt.Errorf("KV entry %d: expected key %q, got %q", i, e.Key, kv[i].Key)
		}
		if !kvSame(e.Value, kv[i].Value) {
			return fmt.Errorf("KV %q: expected %#v, got %#v", e.Key, e.Value, kv[i].Value)
		}
	}
	return nil
}

func checkStream(c *Case, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := hurray.NewReader(bufio.NewReader(f))
	defer r.Close()
	for i := 0; ; i++ {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != len(c.Items) {
				return fmt.Errorf("the stream ends after %d items, expected %d", i, len(c.Items))
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
		if i >= len(c.Items) {
			it.Close()
			return fmt.Errorf("more than the expected %d items in the stream", len(c.Items))
		}
		err = checkItem(c.Items[i], it)
		it.Close()
		if err != nil {
			return err
		}
	}
}

// safely turns a panic of the binding into a failed check.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

func consume(cases []*Case, dirs []string) {
	for _, dir := range dirs {
		producer := filepath.Base(filepath.Clean(dir))
		for _, c := range cases {
			for _, k := range []struct{ ext, container string }{{"hrry", "file"}, {"hrrys", "stream"}} {
				path := filepath.Join(dir, c.Name+"."+k.ext)
				line := fmt.Sprintf("result\t%s\t%s\t%s\t", producer, k.container, c.Name)
				if why, err := os.ReadFile(path + ".na"); err == nil {
					fmt.Printf("%sna\tproducer: %s\n", line, strings.TrimSpace(string(why)))
					continue
				}
				err := safely(func() error {
					if _, err := os.Stat(path); err != nil {
						return fmt.Errorf("no output %s", path)
					}
					if k.ext == "hrry" {
						return checkFile(c, path)
					}
					return checkStream(c, path)
				})
				if err != nil {
					msg := strings.NewReplacer("\t", " ", "\n", " ").Replace(err.Error())
					fmt.Printf("%sfail\t%s\n", line, msg)
				} else {
					fmt.Printf("%spass\t\n", line)
				}
			}
		}
	}
}

// ---------------------------------------------------------------- demo

// warmRuns is how many more times views opens and views the file after the first
// pass; the best of them is the "warm" figure.
const warmRuns = 200

// viewSet is one open + view pass: the file, its tensors and a zero-copy view
// ([]byte over the mapping) of every buffer, in index order.
type viewSet struct {
	file    *hurray.File
	names   []string
	tensors []*hurray.Tensor
	views   [][][]byte
}

// openAndView opens path and views every tensor's buffers.
func openAndView(path string) (*viewSet, error) {
	f, err := hurray.OpenFile(path)
	if err != nil {
		return nil, err
	}
	v := &viewSet{file: f, names: f.Names()}
	v.tensors = make([]*hurray.Tensor, len(v.names))
	v.views = make([][][]byte, len(v.names))
	for i, n := range v.names {
		if v.tensors[i], err = f.Tensor(n); err != nil {
			v.close()
			return nil, err
		}
		for b := 0; b < v.tensors[i].NumBuffers(); b++ {
			// Zero-copy: UnsafeBytes is sound here because the viewSet holds every
			// Tensor until close, and no view is used after close.
			v.views[i] = append(v.views[i], v.tensors[i].UnsafeBytes(b))
		}
	}
	return v, nil
}

// close closes the tensors and the file.
func (v *viewSet) close() error {
	for _, t := range v.tensors {
		if t != nil {
			t.Close()
		}
	}
	return v.file.Close()
}

// views opens path, takes a zero-copy view ([]byte over the mapping) of every
// tensor's buffers, then prints "view NAME CRC32" and "time SECONDS" (open + views
// only, this first pass in a fresh process). Then warmRuns more passes in this
// process and "warm SECONDS": the fastest (closing is outside the timing, as in the
// first).
func views(path string) error {
	t0 := time.Now()
	v, err := openAndView(path)
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	for i, n := range v.names {
		var crc uint32
		for _, b := range v.views[i] {
			crc = crc32.Update(crc, crc32.IEEETable, b)
		}
		fmt.Printf("view\t%s\t%08x\n", n, crc)
	}
	fmt.Printf("time\t%.6f\n", secs)
	count := len(v.names)
	if err := v.close(); err != nil {
		return err
	}
	warm := math.Inf(1)
	for range warmRuns {
		t0 := time.Now()
		v, err := openAndView(path)
		if err != nil {
			return err
		}
		warm = math.Min(warm, time.Since(t0).Seconds())
		if len(v.views) != count {
			return fmt.Errorf("a warm pass listed %d tensors, the first %d", len(v.views), count)
		}
		if err := v.close(); err != nil {
			return err
		}
	}
	fmt.Printf("warm\t%.6f\n", warm)
	return nil
}

// ---------------------------------------------------------------- metadata

// metadata opens path, reads every tensor name and every KV value in full (with
// Metadata, or, ranged, key by key with ValueRange windows of 65536 elements), and
// prints what it read, like every language's metadata command.
func metadata(path string, ranged bool) error {
	f, err := hurray.OpenFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	names := f.Names()
	nameBytes := 0
	for _, n := range names {
		nameBytes += len(n)
	}
	elements, valueBytes := 0, 0
	count := func(v any) {
		switch v := v.(type) {
		case string:
			elements, valueBytes = elements+1, valueBytes+len(v)
		case []byte:
			elements, valueBytes = elements+1, valueBytes+len(v)
		case []string:
			for _, s := range v {
				elements, valueBytes = elements+1, valueBytes+len(s)
			}
		case [][]byte:
			for _, b := range v {
				elements, valueBytes = elements+1, valueBytes+len(b)
			}
		default:
			if r := reflect.ValueOf(v); r.Kind() == reflect.Slice {
				elements += r.Len()
			} else {
				elements++
			}
		}
	}
	var keys []string
	var held []hurray.KV
	if ranged {
		if keys, err = f.Keys(); err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := f.ValueRange(k, 0, 0); errors.Is(err, hurray.ErrNotApplicable) {
				v, err := f.Value(k)
				if err != nil {
					return err
				}
				count(v)
				continue
			} else if err != nil {
				return err
			}
			n, err := f.ValueLen(k)
			if err != nil {
				return err
			}
			for at := 0; at < n; at += 1 << 16 {
				w, err := f.ValueRange(k, at, min(1<<16, n-at))
				if err != nil {
					return err
				}
				count(w)
			}
		}
	} else {
		var he *hurray.Error
		if held, err = f.Metadata(); errors.As(err, &he) && he.Status == hurray.StatusLimit {
			// The whole-value bound refused an array: memory stays bounded.
			fmt.Printf("kv_refused\t%s\n", he.Message)
		} else if err != nil {
			return err
		}
		for _, kv := range held {
			keys = append(keys, kv.Key)
			count(kv.Value)
		}
	}
	fmt.Printf("kv_entries\t%d\nkv_elements\t%d\nkv_value_bytes\t%d\n", len(keys), elements, valueBytes)
	fmt.Printf("tensors\t%d\nname_bytes\t%d\n", len(names), nameBytes)
	runtime.KeepAlive(held)
	return nil
}

// tagNames prints every element-type and layout tag (0..255) as DType.String and
// Layout.String render it, one "type|layout<TAB>0x2a<TAB>NAME" line each (cargo
// xtask matrix compares these lines across languages).
func tagNames() {
	var b strings.Builder
	for t := 0; t < 256; t++ {
		fmt.Fprintf(&b, "type\t0x%02x\t%s\n", t, hurray.DType(t))
	}
	for t := 0; t < 256; t++ {
		fmt.Fprintf(&b, "layout\t0x%02x\t%s\n", t, hurray.Layout(t))
	}
	fmt.Print(b.String())
}

func main() {
	args := os.Args[1:]
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "go matrix:", err)
		os.Exit(1)
	}
	switch {
	case len(args) == 3 && args[0] == "produce":
		cases, err := parseCases(args[1])
		if err != nil {
			fail(err)
		}
		if err := os.MkdirAll(args[2], 0o777); err != nil {
			fail(err)
		}
		failed := 0
		for _, c := range cases {
			if err := safely(func() error { return produceCase(c, args[2]) }); err != nil {
				fmt.Fprintf(os.Stderr, "go producer: case %s: %v\n", c.Name, err)
				failed++
			}
		}
		if failed > 0 {
			os.Exit(1)
		}
	case len(args) >= 2 && args[0] == "consume":
		cases, err := parseCases(args[1])
		if err != nil {
			fail(err)
		}
		consume(cases, args[2:])
	case len(args) == 2 && args[0] == "views":
		if err := views(args[1]); err != nil {
			fail(err)
		}
	case len(args) == 2 && args[0] == "hostile":
		if err := hostile(args[1]); err != nil {
			fail(err)
		}
	case (len(args) == 2 || len(args) == 3 && args[2] == "ranged") && args[0] == "metadata":
		if err := metadata(args[1], len(args) == 3); err != nil {
			fail(err)
		}
	case len(args) == 4 && args[0] == "net-get":
		cases, err := parseCases(args[2])
		if err != nil {
			fail(err)
		}
		if err := netGet(args[1], cases, args[3]); err != nil {
			fail(err)
		}
	case len(args) == 4 && args[0] == "net-put":
		cases, err := parseCases(args[2])
		if err != nil {
			fail(err)
		}
		if err := netPut(args[1], cases, args[3]); err != nil {
			fail(err)
		}
	case len(args) == 3 && args[0] == "net-views":
		if err := netViews(args[1], args[2]); err != nil {
			fail(err)
		}
	case len(args) == 1 && args[0] == "names":
		tagNames()
	default:
		fmt.Fprintln(os.Stderr, "usage: go-matrix produce CASES OUT | consume CASES DIR... | views FILE | net-get ADDR CASES OUT | net-put ADDR CASES DIR | net-views ADDR FILE | hostile DIR | metadata FILE [ranged] | names")
		os.Exit(2)
	}
}
