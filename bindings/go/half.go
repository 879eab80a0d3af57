package hurray

import "math"

// Conversions between float32 and the 16-bit float types, whose values the
// Float16Bits and BFloat16Bits accessors give, and NewDense takes (with AsDType),
// as their bits in a uint16. Narrowing rounds to nearest, ties to even; NaN stays
// NaN (quiet) and infinities stay infinite.

// Float16ToFloat32 converts the IEEE binary16 value with bits h to float32
// (exactly: every float16 value is a float32 value).
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0: // normal: rebias 15 -> 127
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	default: // zero or subnormal: mant * 2^-24, exact in float32
		f := float32(mant) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	}
}

// Float32ToFloat16 returns the bits of the IEEE binary16 value nearest f (ties
// to even); beyond the float16 range it gives an infinity.
func Float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | uint16(mant>>13) // quiet NaN, payload's top bits kept
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // subnormal or zero in float16: q = m * 2^(e-14), rounded
		if e < -10 {
			return sign // below half the smallest subnormal
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		q := m >> shift
		rem, half := m&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || (rem == half && q&1 == 1) {
			q++
		}
		return sign | uint16(q)
	}
	q := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && q&1 == 1) {
		q++ // a carry into the exponent is right, up to infinity
	}
	return sign | uint16(q)
}

// BFloat16ToFloat32 converts the bfloat16 value with bits h to float32 (exactly).
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Float32ToBFloat16 returns the bits of the bfloat16 value nearest f (ties to
// even).
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it a (quiet) NaN
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// Float16sToFloat32s converts float16 bits (as [Tensor.Float16Bits] gives them) to
// new float32 values.
func Float16sToFloat32s(bits []uint16) []float32 {
	out := make([]float32, len(bits))
	for i, h := range bits {
		out[i] = Float16ToFloat32(h)
	}
	return out
}

// Float32sToFloat16s converts float32 values to float16 bits in new 64-byte
// aligned memory, ready for NewDense(bits, shape, AsDType(Float16)).
func Float32sToFloat16s(f []float32) []uint16 {
	out := Make[uint16](len(f))
	for i, x := range f {
		out[i] = Float32ToFloat16(x)
	}
	return out
}

// BFloat16sToFloat32s converts bfloat16 bits (as [Tensor.BFloat16Bits] gives
// them) to new float32 values.
func BFloat16sToFloat32s(bits []uint16) []float32 {
	out := make([]float32, len(bits))
	for i, h := range bits {
		out[i] = BFloat16ToFloat32(h)
	}
	return out
}

// Float32sToBFloat16s converts float32 values to bfloat16 bits in new 64-byte
// aligned memory, ready for NewDense(bits, shape, AsDType(BFloat16)).
func Float32sToBFloat16s(f []float32) []uint16 {
	out := Make[uint16](len(f))
	for i, x := range f {
		out[i] = Float32ToBFloat16(x)
	}
	return out
}
