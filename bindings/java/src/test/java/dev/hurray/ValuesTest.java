package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ShortBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 15 item 2: float16, bfloat16 and bool have typed access. */
class ValuesTest extends LeakChecked {
    @TempDir
    Path tmp;

    /** Every 16-bit pattern, as a FLOAT16 or BFLOAT16 tensor. */
    static Tensor allPatterns(ElementType type) {
        ByteBuffer b = Tensor.allocate(2 * 65536);
        for (int i = 0; i < 65536; i++) {
            b.putShort(2 * i, (short) i);
        }
        return Tensor.dense(type, b, 65536);
    }

    /** float bit patterns across the whole range, and the edge cases of rounding. */
    static float[] samples() {
        float[] edge = {0f, -0f, 1f, -1f, 65504f, 65519.99f, 65520f, 1e-8f, 5.96e-8f, 2.98e-8f,
            2.9802326e-8f, 1f + 0x1p-11f, 1f + 0x1p-11f + 0x1p-20f, 1f + 3 * 0x1p-11f, 0x1p-14f,
            0x1p-24f, 0x1p-25f, 0x1.8p-25f, Float.MAX_VALUE, Float.MIN_VALUE,
            Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN,
            Float.intBitsToFloat(0x7f800001), Float.intBitsToFloat(0xffc12345), 3.14159f,
            1f + 0x1p-8f, 1f + 0x1p-9f, 1f + 3 * 0x1p-9f};
        int n = 200_000;
        float[] out = new float[edge.length + n];
        System.arraycopy(edge, 0, out, 0, edge.length);
        long step = (1L << 32) / n + 7;
        for (int i = 0; i < n; i++) {
            out[edge.length + i] = Float.intBitsToFloat((int) (i * step));
        }
        return out;
    }

    @Test
    void float16WidensLikeTheLibraryForEveryPattern() {
        try (Tensor t = allPatterns(ElementType.FLOAT16)) {
            ShortBuffer view = t.float16s();
            assertEquals(65536, view.remaining());
            assertEquals((short) 0x3c00, view.get(0x3c00), "a view of the bits, not a copy");
            float[] lib = t.toFloatArray();
            for (int i = 0; i < 65536; i++) {
                assertEquals(Float.floatToRawIntBits(lib[i]),
                        Float.floatToRawIntBits(Float16.toFloat((short) i)), "pattern " + i);
            }
            assertEquals(1f, lib[0x3c00]);
            assertEquals(65504f, lib[0x7bff]);
            assertEquals(0x1p-24f, lib[1]);
            assertEquals(Float.NEGATIVE_INFINITY, lib[0xfc00]);
            assertTrue(Float.isNaN(lib[0x7e00]));
        }
    }

    @Test
    void bfloat16WidensLikeTheLibraryForEveryPattern() {
        try (Tensor t = allPatterns(ElementType.BFLOAT16)) {
            float[] lib = t.toFloatArray();
            assertEquals((short) 0x3f80, t.bfloat16s().get(0x3f80));
            for (int i = 0; i < 65536; i++) {
                assertEquals(Float.floatToRawIntBits(lib[i]),
                        Float.floatToRawIntBits(BFloat16.toFloat((short) i)), "pattern " + i);
            }
            assertEquals(1f, lib[0x3f80]);
        }
    }

    @Test
    void narrowingAgreesWithTheLibrary() {
        float[] v = samples();
        try (Tensor h = Tensor.fromFloats(ElementType.FLOAT16, v, v.length);
                Tensor b = Tensor.fromFloats(ElementType.BFLOAT16, v, v.length)) {
            ShortBuffer hv = h.float16s();
            ShortBuffer bv = b.bfloat16s();
            for (int i = 0; i < v.length; i++) {
                assertEquals(hv.get(i), Float16.fromFloat(v[i]), "float16 of " + v[i] + " #" + i);
                assertEquals(bv.get(i), BFloat16.fromFloat(v[i]), "bfloat16 of " + v[i] + " #" + i);
            }
        }
        assertEquals((short) 0x3c00, Float16.fromFloat(1f + 0x1p-11f), "a tie goes to even");
        assertEquals((short) 0x3c02, Float16.fromFloat(1f + 3 * 0x1p-11f), "a tie goes to even");
        assertEquals((short) 0x7c00, Float16.fromFloat(65520f), "overflow to infinity");
        assertEquals((short) 0x7bff, Float16.fromFloat(65519.99f));
        assertEquals((short) 0x3f80, BFloat16.fromFloat(1f + 0x1p-8f), "a tie goes to even");
        assertEquals(1.5f, Float16.toFloat(Float16.fromFloat(1.5f)));
    }

    @Test
    void float16RoundTripsThroughAFileAndAStream() throws Exception {
        float[] v = {0.5f, -2f, 1024f, 0.1f, 65504f, -0f};
        Path p = tmp.resolve("h.hrry");
        try (Tensor t = Tensor.fromFloats(ElementType.FLOAT16, v, 2, 3);
                TensorFileWriter w = TensorFileWriter.create(p)) {
            w.write("h", t);
            w.finish();
        }
        try (TensorFile f = TensorFile.open(p); Tensor t = f.tensor("h")) {
            float[] back = t.toFloatArray();
            for (int i = 0; i < v.length; i++) {
                assertEquals(Float16.toFloat(Float16.fromFloat(v[i])), back[i], "element " + i);
            }
            assertEquals(0.0999755859375f, back[3], "0.1 as the nearest float16");
        }
        assertThrows(IllegalStateException.class, () -> {
            try (Tensor t = Tensor.fromFloats(ElementType.FLOAT32, v, 6)) {
                t.float16s();
            }
        });
        assertThrows(IllegalArgumentException.class,
                () -> Tensor.fromFloats(ElementType.INT8, v, 6));
    }

    @Test
    void boolIsAnUnpackedCopy() throws Exception {
        boolean[] v = new boolean[13];
        for (int i = 0; i < v.length; i++) {
            v[i] = i % 3 == 0 || i == 12;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (Tensor t = Tensor.fromBooleans(v, v.length); StreamWriter w = new StreamWriter(out)) {
            assertEquals(2, t.buffer(0).capacity(), "packed 8 per byte");
            // Bits LSB first: elements 0, 3, 6 -> 0b01001001; 9, 12 -> bits 1 and 4.
            assertEquals((byte) 0x49, t.buffer(0).get(0));
            assertEquals((byte) 0x12, t.buffer(0).get(1));
            w.write(t);
        }
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(out.toByteArray()));
                Tensor t = r.next()) {
            assertArrayEquals(v, t.booleans());
            byte[] u = t.unpacked();
            assertEquals(13, u.length);
            assertEquals(1, u[12]);
            assertEquals(0, u[11]);
        }
    }

    @Test
    void int4IsUnpackedSignExtended() {
        // int4 codes LSB first: 0x7, 0x8 (-8), 0xF (-1), 0x1.
        ByteBuffer b = Tensor.allocate(2);
        b.put(0, (byte) 0x87).put(1, (byte) 0x1f);
        try (Tensor t = Tensor.dense(ElementType.INT4, b, 4)) {
            assertArrayEquals(new byte[] {7, -8, -1, 1}, t.unpacked());
            assertThrows(IllegalStateException.class, t::booleans);
        }
    }
}
