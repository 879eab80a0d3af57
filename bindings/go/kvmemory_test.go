package hurray

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestKVStringArrayAllocations: reading a string or byte-sequence KV array costs
// its slice and its non-empty elements, not one heap object per element besides
// (a per-element C value escaping to the heap let the garbage collector grow the
// heap to twice the []string on 16.7 M empty strings).
func TestKVStringArrayAllocations(t *testing.T) {
	const n = 4096
	path := filepath.Join(t.TempDir(), "kv.hrry")
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	empty := make([]string, n)
	blobs := make([][]byte, n)
	for k := range blobs {
		blobs[k] = []byte{}
	}
	if err := w.AddKV("empty", empty); err != nil {
		t.Fatal(err)
	}
	if err := w.AddKV("blobs", blobs); err != nil {
		t.Fatal(err)
	}
	if err := w.AddKV("mixed", []string{"", "ab", "", "héllo"}); err != nil {
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
	v, err := f.Value("mixed")
	if got, ok := v.([]string); err != nil || !ok || len(got) != 4 || got[0] != "" || got[1] != "ab" || got[3] != "héllo" {
		t.Fatalf(`Value("mixed") = %#v, %v`, v, err)
	}
	for _, key := range []string{"empty", "blobs"} {
		v, err := f.Value(key)
		if err != nil {
			t.Fatal(err)
		}
		switch v := v.(type) {
		case []string:
			if len(v) != n {
				t.Fatalf("Value(%q): %d elements, want %d", key, len(v), n)
			}
		case [][]byte:
			if len(v) != n || v[n-1] == nil || len(v[n-1]) != 0 {
				t.Fatalf("Value(%q): %d elements, last %#v", key, len(v), v[n-1])
			}
		}
		// [][]byte: every empty element is a []byte{} (no allocation) as well.
		allocs := testing.AllocsPerRun(5, func() {
			if _, err := f.Value(key); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 16 {
			t.Errorf("Value(%q) of %d empty elements: %.0f allocations, want at most 16", key, n, allocs)
		}
	}
}

// TestWholeKVReadsAreBounded: an array longer than MaxWholeKVArray is refused by the
// whole-value reads (a bound on what an untrusted file can make a reader allocate)
// and read in windows instead; one at the bound is read whole.
func TestWholeKVReadsAreBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.hrry")
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	big := make([]bool, MaxWholeKVArray+1)
	big[MaxWholeKVArray] = true
	if err := w.AddKV("at_bound", big[:MaxWholeKVArray]); err != nil {
		t.Fatal(err)
	}
	if err := w.AddKV("past_bound", big); err != nil {
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
	if v, err := f.Value("at_bound"); err != nil || len(v.([]bool)) != MaxWholeKVArray {
		t.Fatalf(`Value("at_bound"): %v`, err)
	}
	for name, read := range map[string]func() error{
		"Value":    func() error { _, err := f.Value("past_bound"); return err },
		"Metadata": func() error { _, err := f.Metadata(); return err },
	} {
		err := read()
		var he *Error
		if !errors.As(err, &he) || he.Status != StatusLimit ||
			!strings.Contains(err.Error(), `"past_bound" is an array of 1048577 elements`) {
			t.Fatalf("%s: %v, want StatusLimit naming the key and length", name, err)
		}
	}
	v, err := f.ValueRange("past_bound", MaxWholeKVArray-1, 2)
	if got, ok := v.([]bool); err != nil || !ok || len(got) != 2 || got[0] || !got[1] {
		t.Fatalf("ValueRange past the bound = %#v, %v", v, err)
	}
}
