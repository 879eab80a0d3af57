package dev.hurray;

/**
 * Element types of the format ({@code HURRAY_TYPE_*}): the wire tag and the size of
 * one element in bits (sub-byte types are packed).
 */
public enum ElementType {
    /** IEEE binary16. */ FLOAT16(1, 16),
    /** bfloat16. */ BFLOAT16(2, 16),
    /** IEEE binary32. */ FLOAT32(3, 32),
    /** IEEE binary64. */ FLOAT64(4, 64),
    /** Signed 8-bit integer. */ INT8(16, 8),
    /** Unsigned 8-bit integer. */ UINT8(17, 8),
    /** Signed 16-bit integer. */ INT16(18, 16),
    /** Unsigned 16-bit integer. */ UINT16(19, 16),
    /** Signed 32-bit integer. */ INT32(20, 32),
    /** Unsigned 32-bit integer. */ UINT32(21, 32),
    /** Signed 64-bit integer. */ INT64(22, 64),
    /** Unsigned 64-bit integer. */ UINT64(23, 64),
    /** Boolean, 1 bit, packed 8 per byte. */ BOOL(32, 1),
    /** float8 e4m3. */ FLOAT8_E4M3(64, 8),
    /** float8 e5m2. */ FLOAT8_E5M2(65, 8),
    /** float8 e8m0. */ FLOAT8_E8M0(66, 8),
    /** float4 e2m1, packed 2 per byte. */ FLOAT4_E2M1(67, 4),
    /** float6 e2m3, four codes per 3 bytes. */ FLOAT6_E2M3(68, 6),
    /** float6 e3m2, four codes per 3 bytes. */ FLOAT6_E3M2(69, 6),
    /** IEEE binary128. */ FLOAT128(70, 128),
    /** Signed 4-bit integer, packed 2 per byte. */ INT4(72, 4),
    /** Unsigned 4-bit integer, packed 2 per byte. */ UINT4(73, 4),
    /** Signed 2-bit integer, packed 4 per byte. */ INT2(74, 2),
    /** Unsigned 2-bit integer, packed 4 per byte. */ UINT2(75, 2),
    /** Two float32. */ COMPLEX64(80, 64),
    /** Two float64. */ COMPLEX128(81, 128),
    /** An implementation-private type (tags 240..254); its size is in the extension-type section. */
    PRIVATE(-1, 0);

    private final int tag;
    private final int bits;

    ElementType(int tag, int bits) {
        this.tag = tag;
        this.bits = bits;
    }

    /** @return the wire tag ({@code HURRAY_TYPE_*}); -1 for {@link #PRIVATE} */
    public int tag() {
        return tag;
    }

    /** @return bits per element (0 for {@link #PRIVATE}) */
    public int bits() {
        return bits;
    }

    /**
     * @param tag a wire type tag
     * @return its element type ({@link #PRIVATE} for 240..254)
     * @throws IllegalArgumentException for an unassigned tag
     */
    public static ElementType fromTag(int tag) {
        for (ElementType t : values()) {
            if (t.tag == tag) {
                return t;
            }
        }
        if (tag >= 240 && tag <= 254) {
            return PRIVATE;
        }
        throw new IllegalArgumentException("unassigned element type tag " + tag);
    }
}
