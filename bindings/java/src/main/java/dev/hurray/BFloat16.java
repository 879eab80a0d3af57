package dev.hurray;

/**
 * bfloat16 ({@link ElementType#BFLOAT16}: the upper 16 bits of a binary32) values
 * held in a {@code short} (their bit pattern, as {@link Tensor#bfloat16s()} gives
 * them), converted to and from {@code float} in plain Java. The conversions agree bit
 * for bit with the library's (the Rust {@code half} crate, which
 * {@link Tensor#toFloatArray()} and {@link Tensor#fromFloats} use for whole tensors).
 */
public final class BFloat16 {
    private BFloat16() {}

    /**
     * Widens exactly; a NaN stays a NaN (made quiet, payload kept).
     *
     * @param bits the bfloat16 bit pattern
     * @return the value
     */
    public static float toFloat(short bits) {
        int b = bits & 0xffff;
        if ((b & 0x7fff) > 0x7f80) {
            b |= 0x40;
        }
        return Float.intBitsToFloat(b << 16);
    }

    /**
     * Narrows to the nearest bfloat16 (ties to even; overflow to infinity); a NaN
     * stays a NaN (quiet, high payload bits kept).
     *
     * @param value the value
     * @return the bfloat16 bit pattern
     */
    public static short fromFloat(float value) {
        int x = Float.floatToRawIntBits(value);
        if ((x & 0x7fffffff) > 0x7f800000) {
            return (short) ((x >>> 16) | 0x40);
        }
        int round = 0x8000;
        int h = x >>> 16;
        if ((x & round) != 0 && (x & (3 * round - 1)) != 0) {
            h++;
        }
        return (short) h;
    }
}
