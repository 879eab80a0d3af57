package hurray

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeDataCRCFile writes tensors "bias" (8 float32 from 100) and "weight" (16
// float32 from 5000) at path, recording data CRCs when crc is set.
func writeDataCRCFile(t *testing.T, path string, crc bool) {
	t.Helper()
	w, err := CreateFile(path, &WriteOptions{NoSync: true, DataCRC32C: crc})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		name string
		n    int
		base float32
	}{{"bias", 8, 100}, {"weight", 16, 5000}} {
		tn, err := NewDense(fill(x.n, x.base), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteTensor(x.name, tn); err != nil {
			t.Fatal(err)
		}
		tn.Close()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// flipWeightByte flips one bit of the element 5001.0 of "weight" in the file.
func flipWeightByte(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want [8]byte
	binary.LittleEndian.PutUint32(want[:4], math.Float32bits(5000))
	binary.LittleEndian.PutUint32(want[4:], math.Float32bits(5001))
	at := bytes.Index(raw, want[:])
	if at < 0 {
		t.Fatal("the data of weight is not in the file")
	}
	raw[at+5] ^= 0x01
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func verifyDataCRC(t *testing.T, path string) (bool, error) {
	t.Helper()
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.VerifyDataCRC32C()
}

func TestDataCRC32CNamesTheTensorWhoseByteFlipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crc.hrry")
	writeDataCRCFile(t, path, true)
	if ok, err := verifyDataCRC(t, path); !ok || err != nil {
		t.Fatalf("intact file: verified=%v err=%v, want true, nil", ok, err)
	}
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := f.Keys()
	if len(keys) != 1 || keys[0] != "hurray.data_crc32c" {
		t.Errorf("KV keys %q, want the one reserved entry", keys)
	}
	if v, err := f.Value("hurray.data_crc32c"); err != nil || len(v.([]uint64)) != 2 {
		t.Errorf("the entry holds %v (%v), want 2 uint64", v, err)
	}
	f.Close()
	if _, err := f.VerifyDataCRC32C(); !errors.Is(err, ErrClosed) {
		t.Errorf("closed File: %v, want ErrClosed", err)
	}

	flipWeightByte(t, path)
	ok, err := verifyDataCRC(t, path)
	var e *Error
	if ok || !errors.Is(err, ErrFormat) || !errors.As(err, &e) {
		t.Fatalf("flipped byte: verified=%v err=%v, want ErrFormat", ok, err)
	}
	if !strings.Contains(e.Message, "DataCrcMismatch") || !strings.Contains(e.Message, `tensor "weight"`) {
		t.Errorf("message %q does not name the rule and the tensor", e.Message)
	}
	requireNoLeaks(t)
}

func TestDataCRC32CAbsentIsNotVerified(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.hrry")
	writeDataCRCFile(t, plain, false)
	if ok, err := verifyDataCRC(t, plain); ok || err != nil {
		t.Fatalf("no entry: verified=%v err=%v, want false, nil", ok, err)
	}
	// Off by default: the zero options and nil write the same bytes.
	viaNil := filepath.Join(dir, "nil.hrry")
	w, err := CreateFile(viaNil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		name string
		n    int
		base float32
	}{{"bias", 8, 100}, {"weight", 16, 5000}} {
		tn, _ := NewDense(fill(x.n, x.base), nil)
		if err := w.WriteTensor(x.name, tn); err != nil {
			t.Fatal(err)
		}
		tn.Close()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(viaNil)
	if !bytes.Equal(a, b) {
		t.Error("DataCRC32C false changed the file's bytes")
	}
	flipWeightByte(t, plain)
	if ok, err := verifyDataCRC(t, plain); ok || err != nil {
		t.Errorf("unchecked data: verified=%v err=%v, want false, nil", ok, err)
	}
	requireNoLeaks(t)
}
