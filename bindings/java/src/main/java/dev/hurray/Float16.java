package dev.hurray;

/**
 * IEEE 754 binary16 ({@link ElementType#FLOAT16}) values held in a {@code short}
 * (their bit pattern, as {@link Tensor#float16s()} gives them), converted to and
 * from {@code float} in plain Java (JDK 17 has no {@code Float.float16ToFloat}).
 * The conversions agree bit for bit with the library's (the Rust {@code half}
 * crate, which {@link Tensor#toFloatArray()} and {@link Tensor#fromFloats} use for
 * whole tensors).
 */
public final class Float16 {
    private Float16() {}

    /**
     * Widens exactly: every binary16 value is a {@code float}; a NaN stays a NaN
     * (made quiet, payload kept).
     *
     * @param bits the binary16 bit pattern
     * @return the value
     */
    public static float toFloat(short bits) {
        int h = bits & 0xffff;
        int sign = (h & 0x8000) << 16;
        int exp = (h >>> 10) & 0x1f;
        int man = h & 0x3ff;
        if (exp == 0x1f) {
            return Float.intBitsToFloat(sign | 0x7f800000 | (man == 0 ? 0 : 0x400000) | (man << 13));
        }
        if (exp == 0) {
            float v = man * 0x1p-24f; // zero or subnormal: exact
            return sign == 0 ? v : -v;
        }
        return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (man << 13));
    }

    /**
     * Narrows to the nearest binary16 (ties to even): beyond the largest finite value
     * (65504) rounds to infinity, below the smallest subnormal to (signed) zero; a NaN
     * stays a NaN (quiet, high payload bits kept).
     *
     * @param value the value
     * @return the binary16 bit pattern
     */
    public static short fromFloat(float value) {
        int x = Float.floatToRawIntBits(value);
        int sign = (x >>> 16) & 0x8000;
        int exp = x & 0x7f800000;
        int man = x & 0x7fffff;
        if (exp == 0x7f800000) {
            return (short) (sign | 0x7c00 | (man == 0 ? 0 : 0x200) | (man >>> 13));
        }
        int halfExp = (exp >>> 23) - 127 + 15;
        if (halfExp >= 0x1f) {
            return (short) (sign | 0x7c00);
        }
        if (halfExp <= 0) {
            if (14 - halfExp > 24) {
                return (short) sign;
            }
            int m = man | 0x800000;
            int halfMan = m >>> (14 - halfExp);
            int round = 1 << (13 - halfExp);
            if ((m & round) != 0 && (m & (3 * round - 1)) != 0) {
                halfMan++;
            }
            return (short) (sign | halfMan);
        }
        int h = sign | (halfExp << 10) | (man >>> 13);
        int round = 0x1000;
        if ((man & round) != 0 && (man & (3 * round - 1)) != 0) {
            h++; // a carry into the exponent is right (up to infinity)
        }
        return (short) h;
    }
}
