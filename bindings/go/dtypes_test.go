package hurray

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"runtime"
	"testing"
)

// TestHalfConversions: float16 and bfloat16 bits against values worked by hand,
// round to nearest even, and every float16 bit pattern back through float32.
func TestHalfConversions(t *testing.T) {
	for _, c := range []struct {
		f    float32
		bits uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff}, {0.1, 0x2e66},
		{float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{0x1p-24, 0x0001}, {0x1p-14, 0x0400}, {0x3ffp-24, 0x03ff}, // smallest subnormal, smallest normal, largest subnormal
		{65520, 0x7c00},         // halfway past the largest finite value: rounds up to infinity
		{1 + 0x1p-11, 0x3c00},   // a tie: rounds to the even 1.0
		{1 + 3*0x1p-11, 0x3c02}, // a tie: rounds to the even 1+2^-9
		{0x1p-25, 0x0000},       // half the smallest subnormal: ties to even zero
		{0x1.8p-25, 0x0001},     // above half: rounds up
		{float32(math.Copysign(0, -1)), 0x8000},
	} {
		if got := Float32ToFloat16(c.f); got != c.bits {
			t.Errorf("Float32ToFloat16(%g) = %#04x, want %#04x", c.f, got, c.bits)
		}
	}
	for _, c := range []struct {
		bits uint16
		f    float32
	}{{0x3c00, 1}, {0x0001, 0x1p-24}, {0x8400, -0x1p-14}, {0x7bff, 65504}, {0x3555, 0.33325195}} {
		if got := Float16ToFloat32(c.bits); got != c.f {
			t.Errorf("Float16ToFloat32(%#04x) = %g, want %g", c.bits, got, c.f)
		}
	}
	for h := 0; h < 1<<16; h++ {
		f := Float16ToFloat32(uint16(h))
		if f != f { // NaN: stays NaN
			if g := Float32ToFloat16(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, g)
			}
			continue
		}
		if g := Float32ToFloat16(f); g != uint16(h) {
			t.Fatalf("float16 %#04x -> %g -> %#04x", h, f, g)
		}
	}
	for _, c := range []struct {
		f    float32
		bits uint16
	}{
		{1, 0x3f80}, {-2, 0xc000}, {math.Pi, 0x4049}, {3.0e38, 0x7f62},
		{math.Float32frombits(0x3f808000), 0x3f80}, // a tie: rounds to even
		{math.Float32frombits(0x3f818000), 0x3f82}, // a tie: rounds to even (up)
		{math.Float32frombits(0x3f808001), 0x3f81}, // above the tie
	} {
		if got := Float32ToBFloat16(c.f); got != c.bits {
			t.Errorf("Float32ToBFloat16(%g) = %#04x, want %#04x", c.f, got, c.bits)
		}
		if back := BFloat16ToFloat32(c.bits); Float32ToBFloat16(back) != c.bits {
			t.Errorf("bfloat16 %#04x does not round-trip", c.bits)
		}
	}
	if g := Float32ToBFloat16(float32(math.NaN())); g&0x7f80 != 0x7f80 || g&0x7f == 0 {
		t.Errorf("bfloat16 of NaN = %#04x, not a NaN", g)
	}
}

// TestEveryDTypeHasATypedPath: float16 and bfloat16 (as bits, with AsDType) and
// bool (from a []bool, packed) are made by NewDense, written to a file, and read
// back through their typed accessors, equal.
func TestEveryDTypeHasATypedPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dtypes.hrry")
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	values := []float32{0, 1, -2.5, 0.1, 65504, 1e-7}
	f16 := Float32sToFloat16s(values)
	bf16 := Float32sToBFloat16s(values)
	bools := []bool{true, false, true, true, false, false, false, true, true, false, true}
	mk := func(name string, x *Tensor, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer x.Close()
		if err := w.WriteTensor(name, x); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	x, err := NewDense(f16, []uint64{2, 3}, AsDType(Float16))
	mk("f16", x, err)
	x, err = NewDense(bf16, nil, AsDType(BFloat16))
	mk("bf16", x, err)
	x, err = NewDense(bools, nil)
	mk("bool", x, err)
	x, err = NewDense([]bool{}, nil)
	mk("bool0", x, err)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	get := func(name string) *Tensor {
		t.Helper()
		x, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		return x
	}
	h := get("f16")
	if h.DType() != Float16 || !equalSlices(h.Shape(), []uint64{2, 3}) {
		t.Errorf("f16: %s", h)
	}
	bits, err := h.Float16Bits()
	if err != nil || !equalSlices(bits, f16) {
		t.Errorf("Float16Bits = %#04x, %v; want %#04x", bits, err, f16)
	}
	want := []float32{0, 1, -2.5, 0.099975586, 65504, 1.1920929e-07}
	if got := Float16sToFloat32s(bits); !equalSlices(got, want) {
		t.Errorf("float16 values %v, want %v", got, want)
	}
	if err := h.WithFloat16Bits(func(b []uint16) error {
		if !equalSlices(b, f16) {
			t.Errorf("WithFloat16Bits = %#04x", b)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if _, err := h.BFloat16Bits(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("BFloat16Bits of float16 = %v, want ErrInvalidArgument", err)
	}
	if _, err := h.Uint16s(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Uint16s of float16 = %v, want ErrInvalidArgument", err)
	}

	b := get("bf16")
	bbits, err := b.BFloat16Bits()
	if err != nil || b.DType() != BFloat16 || !equalSlices(bbits, bf16) {
		t.Errorf("BFloat16Bits = %#04x, %v", bbits, err)
	}
	wantBF := []float32{0, 1, -2.5, 0.10009765625, 65536, 1.0011718e-07}
	if got := BFloat16sToFloat32s(bbits); !equalSlices(got, wantBF) {
		t.Errorf("bfloat16 values %v, want %v", got, wantBF)
	}

	bt := get("bool")
	if bt.DType() != Bool {
		t.Errorf("bool: %s", bt)
	}
	// LSB first: elements 0..7 -> 0b10001101, 8..10 -> 0b101.
	if raw := bt.Bytes(0); len(raw) < 2 || raw[0] != 0x8d || raw[1] != 0x05 {
		t.Errorf("packed bools % x, want 8d 05", raw)
	}
	got, err := bt.Bools()
	if err != nil || !equalSlices(got, bools) {
		t.Errorf("Bools = %v, %v; want %v", got, err, bools)
	}
	if got, err := get("bool0").Bools(); err != nil || len(got) != 0 {
		t.Errorf("empty Bools = %v, %v", got, err)
	}
	if _, err := h.Bools(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Bools of float16 = %v, want ErrInvalidArgument", err)
	}
}

// TestNewDenseDTypeChecks: AsDType must match the Go type's width, the shape must
// hold the data, and NewTensor refuses AsDType.
func TestNewDenseDTypeChecks(t *testing.T) {
	if _, err := NewDense(Make[float32](4), nil, AsDType(Float16)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("AsDType(Float16) over []float32 = %v, want ErrInvalidArgument", err)
	}
	if _, err := NewDense([]bool{true}, nil, AsDType(Uint8)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("AsDType over []bool = %v, want ErrInvalidArgument", err)
	}
	if _, err := NewDense([]bool{true, false}, []uint64{3}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("shape [3] over 2 bools = %v, want ErrInvalidArgument", err)
	}
	x, err := NewDense(Make[uint8](8), nil, AsDType(Float8E4M3))
	if err != nil || x.DType() != Float8E4M3 {
		t.Errorf("AsDType(Float8E4M3) over []uint8 = %v, %v", x, err)
	}
	x.Close()
	d := Descriptor{DType: Float32, Layout: RowMajor, Shape: []uint64{1}}
	if _, err := NewTensor(d, [][]byte{AsBytes(Make[float32](1))}, AsDType(Float16)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewTensor with AsDType = %v, want ErrInvalidArgument", err)
	}
	// A bool tensor through a stream too.
	var stream bytes.Buffer
	sw := NewWriter(&stream)
	y, _ := NewDense([]bool{false, true, true}, nil)
	if err := sw.WriteTensor(y); err != nil {
		t.Fatal(err)
	}
	y.Close()
	sw.Close()
	r := NewReader(&stream)
	defer r.Close()
	z, err := r.NextTensor()
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if got, err := z.Bools(); err != nil || !equalSlices(got, []bool{false, true, true}) {
		t.Errorf("streamed Bools = %v, %v", got, err)
	}
	requireNoLeaksAfter(t, z, r)
}

// TestNewDenseRefusedContentReleasesOnce: memory whose contents the library refuses
// (a float8_e8m0 NaN code, 0xFF) is an error from NewDense, not a panic from
// releasing the Go owner twice (the library now takes nothing on error), and the
// same memory wraps fine once fixed.
func TestNewDenseRefusedContentReleasesOnce(t *testing.T) {
	before := LiveObjects()
	for i := 0; i < 8; i++ {
		b := Make[uint8](64)
		for j := range b {
			b[j] = 0x7f
		}
		b[0] = 0xff
		x, err := NewDense(b, nil, AsDType(Float8E8M0))
		if err == nil {
			x.Close()
			t.Fatal("NewDense accepted the e8m0 code 0xFF")
		}
		if !errors.Is(err, ErrFormat) {
			t.Errorf("NewDense of 0xFF e8m0 = %v, want ErrFormat", err)
		}
		b[0] = 0x7f
		x, err = NewDense(b, nil, AsDType(Float8E8M0))
		if err != nil {
			t.Fatal(err)
		}
		x.Close()
	}
	runtime.GC()
	if live := LiveObjects(); live != before {
		t.Errorf("LiveObjects = %d after, %d before", live, before)
	}
}
