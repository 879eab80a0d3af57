package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tensors written and read back through streams and files keep every value. */
class RoundTripTest extends LeakChecked {
    @TempDir
    Path tmp;

    private static float[] floatsOf(Tensor t) {
        var fb = t.floats();
        float[] out = new float[fb.remaining()];
        fb.get(out);
        return out;
    }

    private static byte[] bytesOf(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /** A sparse COO float32 [4,4] tensor: values [1.5, -0.5, 2.0] at (0,1), (2,0), (3,3). */
    static Tensor coo() {
        Descriptor d = Descriptor.builder(ElementType.FLOAT32, Layout.COO, 4, 4).nnz(3)
                .addBuffer(12, 64).addBuffer(48, 64).build();
        ByteBuffer values = TestSupport.floats(1.5f, -0.5f, 2.0f);
        ByteBuffer idx = Tensor.allocate(48);
        idx.order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().put(new long[] {0, 1, 2, 0, 3, 3});
        return Tensor.wrap(d, values, idx);
    }

    /** An int8 [4] tensor with a per-tensor affine quantization section. */
    static Tensor quantized() {
        Descriptor d = Descriptor.builder(ElementType.INT8, Layout.ROW_MAJOR, 4)
                .addBuffer(4, 64).perTensorAffine(0.5f, 3).build();
        return Tensor.wrap(d, TestSupport.bytes((byte) -1, (byte) 0, (byte) 7, (byte) 127));
    }

    @Test
    void streamRoundTripOfSeveralKinds() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (StreamWriter w = new StreamWriter(out);
                Tensor dense = Tensor.dense(ElementType.FLOAT32,
                        TestSupport.floats(1, 2, 3, 4, 5, 6), 2, 3);
                Tensor empty = Tensor.dense(ElementType.FLOAT32, Tensor.allocate(0), 0, 4);
                Tensor q = quantized();
                Tensor sparse = coo()) {
            long n = w.write(dense);
            assertTrue(n > 24, "a dense tensor's stream bytes: " + n);
            w.write(empty);
            w.write(q);
            w.write(sparse);
        }
        byte[] bytes = out.toByteArray();
        List<Tensor> got = new ArrayList<>();
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(bytes))) {
            for (Tensor t : r) {
                got.add(t);
            }
            assertEquals(bytes.length, r.position());
            assertNull(r.next(), "end of stream stays the end");
        }
        assertEquals(4, got.size());
        Tensor dense = got.get(0);
        assertArrayEquals(new long[] {2, 3}, dense.shape());
        assertEquals(ElementType.FLOAT32, dense.elementType());
        assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, floatsOf(dense));

        Tensor empty = got.get(1);
        assertArrayEquals(new long[] {0, 4}, empty.shape());
        assertEquals(0, empty.buffer(0).remaining());
        assertEquals(0, empty.floats().remaining());

        Tensor q = got.get(2);
        Descriptor.Quantization qs = q.descriptor().quantization().orElseThrow();
        assertEquals(Descriptor.Quantization.PER_TENSOR_AFFINE, qs.scheme());
        assertEquals(0.5f, qs.scale());
        assertEquals(3, qs.zeroPoint());
        assertArrayEquals(new byte[] {-1, 0, 7, 127}, bytesOf(q.bytes()));

        Tensor s = got.get(3);
        assertEquals(Layout.COO, s.layout());
        assertEquals(3, s.descriptor().nnz().getAsLong());
        assertEquals(2, s.bufferCount());
        var v = s.buffer(0).asFloatBuffer();
        assertEquals(1.5f, v.get(0));
        assertEquals(-0.5f, v.get(1));
        assertEquals(2.0f, v.get(2));
        var idx = s.buffer(1).asLongBuffer();
        long[] ix = new long[6];
        idx.get(ix);
        assertArrayEquals(new long[] {0, 1, 2, 0, 3, 3}, ix);

        got.forEach(Tensor::close);
    }

    @Test
    void streamReadsFromAFileInputStreamInSmallReads() throws Exception {
        // Reads arrive in pieces: a stream that hands out one byte at a time.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        float[] data = new float[1000];
        for (int i = 0; i < data.length; i++) {
            data[i] = i * 0.25f;
        }
        try (StreamWriter w = new StreamWriter(out);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(data), 10, 100)) {
            w.write(t);
            w.write(t);
        }
        var trickle = new ByteArrayInputStream(out.toByteArray()) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, 7));
            }
        };
        try (StreamReader r = new StreamReader(trickle)) {
            for (int k = 0; k < 2; k++) {
                try (Tensor t = r.next()) {
                    assertArrayEquals(data, floatsOf(t));
                }
            }
            assertNull(r.next());
        }
    }

    @Test
    void fileRoundTripWithMetadata() throws Exception {
        Path path = tmp.resolve("rt.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(path, 0, false);
                Tensor dense = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, -2, 3.5f, 4),
                        2, 2);
                Tensor empty = Tensor.dense(ElementType.INT8, Tensor.allocate(0), 0);
                Tensor q = quantized();
                Tensor sparse = coo()) {
            w.write("dense", dense);
            w.write("empty", empty);
            w.write("quant", q);
            w.write("sparse", sparse);
            w.putMetadata("s", "héllo");
            w.putMetadata("i", -42L);
            w.putMetadata("n", 7);
            w.putMetadata("u", new BigInteger("18446744073709551615"));
            w.putMetadata("f", 2.5);
            w.putMetadata("b", true);
            w.putMetadata("bytes", new byte[] {1, 2, 3});
            w.putMetadata("ai", new long[] {1, -2, 3});
            w.putMetadata("af", new double[] {0.5, 1.5});
            w.putMetadata("ab", new boolean[] {true, false, true});
            w.putMetadata("as", new String[] {"a", "bc"});
            w.putMetadata("au", new BigInteger[] {BigInteger.ONE, new BigInteger("18446744073709551614")});
            w.putMetadata("abytes", new byte[][] {{}, {9, 8}});
            assertFalse(Files.exists(path), "nothing at the destination before finish");
            w.finish();
        }
        assertTrue(Files.exists(path));
        Tensor keep;
        try (TensorFile f = TensorFile.open(path)) {
            assertEquals(List.of("dense", "empty", "quant", "sparse"), f.names());
            assertEquals(4, f.info().tensorCount());
            assertTrue(f.info().crcVerified());
            try (Tensor t = f.tensor("dense")) {
                assertArrayEquals(new float[] {1, -2, 3.5f, 4}, floatsOf(t));
            }
            try (Tensor t = f.tensor("empty")) {
                assertArrayEquals(new long[] {0}, t.shape());
                assertEquals(0, t.buffer(0).remaining());
            }
            try (Tensor t = f.tensor("quant")) {
                assertEquals(0.5f, t.descriptor().quantization().orElseThrow().scale());
                assertArrayEquals(new byte[] {-1, 0, 7, 127}, bytesOf(t.bytes()));
            }
            assertEquals(Layout.COO, f.descriptor("sparse").layout());
            Map<String, Object> kv = f.metadata();
            assertEquals("héllo", kv.get("s"));
            assertEquals(-42L, kv.get("i"));
            assertEquals(7L, kv.get("n"));
            assertEquals(new BigInteger("18446744073709551615"), kv.get("u"));
            assertEquals(2.5, kv.get("f"));
            assertEquals(true, kv.get("b"));
            assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) kv.get("bytes"));
            assertArrayEquals(new long[] {1, -2, 3}, (long[]) kv.get("ai"));
            assertArrayEquals(new double[] {0.5, 1.5}, (double[]) kv.get("af"));
            assertArrayEquals(new boolean[] {true, false, true}, (boolean[]) kv.get("ab"));
            assertArrayEquals(new String[] {"a", "bc"}, (String[]) kv.get("as"));
            assertArrayEquals(new BigInteger[] {BigInteger.ONE, new BigInteger("18446744073709551614")},
                    (BigInteger[]) kv.get("au"));
            byte[][] ab = (byte[][]) kv.get("abytes");
            assertEquals(2, ab.length);
            assertArrayEquals(new byte[0], ab[0]);
            assertArrayEquals(new byte[] {9, 8}, ab[1]);
            // Lengths and windows of arrays.
            assertEquals(3, f.metadataLength("ai"));
            assertEquals("héllo".getBytes(java.nio.charset.StandardCharsets.UTF_8).length,
                    f.metadataLength("s"));
            assertEquals(1, f.metadataLength("i"));
            assertArrayEquals(new long[] {-2, 3}, (long[]) f.metadataRange("ai", 1, 2));
            assertArrayEquals(new long[] {1, -2, 3}, (long[]) f.metadataRange("ai", 0, 3));
            assertArrayEquals(new double[] {1.5}, (double[]) f.metadataRange("af", 1, 1));
            assertArrayEquals(new boolean[] {false, true}, (boolean[]) f.metadataRange("ab", 1, 2));
            assertArrayEquals(new String[] {"bc"}, (String[]) f.metadataRange("as", 1, 1));
            assertArrayEquals(new String[0], (String[]) f.metadataRange("as", 2, 0));
            assertArrayEquals(new BigInteger[] {new BigInteger("18446744073709551614")},
                    (BigInteger[]) f.metadataRange("au", 1, 1));
            byte[][] w = (byte[][]) f.metadataRange("abytes", 1, 1);
            assertArrayEquals(new byte[] {9, 8}, w[0]);
            HurrayException past = assertThrows(HurrayException.class, () -> f.metadataRange("ai", 2, 2));
            assertEquals(Status.OUT_OF_RANGE, past.status());
            HurrayException scalar = assertThrows(HurrayException.class, () -> f.metadataRange("i", 0, 1));
            assertEquals(Status.NOT_APPLICABLE, scalar.status());
            assertThrows(NotFoundException.class, () -> f.metadataLength("missing"));
            keep = f.tensor("sparse");
        }
        // The reader is closed; its tensor still reads the mapping.
        assertEquals(2.0f, keep.buffer(0).asFloatBuffer().get(2));
        keep.close();
    }

    @Test
    void fileTensorsAreCopyOnWriteViews() throws Exception {
        Path path = tmp.resolve("cow.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(path, 0, false);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2), 2)) {
            w.write("x", t);
            w.finish();
        }
        byte[] onDisk = Files.readAllBytes(path);
        try (TensorFile f = TensorFile.open(path); Tensor t = f.tensor("x");
                Tensor again = f.tensor("x")) {
            assertTrue(t.buffer(0).isReadOnly(), "buffer(i) stays a read-only view");
            assertThrows(ReadOnlyBufferException.class, () -> t.buffer(0).putFloat(0, 9f));
            ByteBuffer w = t.writableBuffer(0);
            assertFalse(w.isReadOnly());
            w.putFloat(0, 9f);
            assertEquals(9f, t.floats().get(0), "the write is visible through the tensor");
            assertEquals(9f, again.floats().get(0), "and through the reader's other handles");
            assertEquals(t.bufferAddress(0), again.bufferAddress(0));
            // Never in the file: its bytes, and a second mapping of it, are unchanged.
            assertArrayEquals(onDisk, Files.readAllBytes(path));
            try (TensorFile g = TensorFile.open(path); Tensor fresh = g.tensor("x")) {
                assertEquals(1f, fresh.floats().get(0));
            }
        }
        assertArrayEquals(onDisk, Files.readAllBytes(path), "nothing written back at close");
    }

    @Test
    void descriptorDenseAndDecode() {
        Descriptor d = Descriptor.dense(ElementType.INT32, 3, 5);
        assertEquals(ElementType.INT32, d.elementType());
        assertEquals(Layout.ROW_MAJOR, d.layout());
        assertArrayEquals(new long[] {3, 5}, d.shape());
        assertEquals(15, d.elementCount());
        assertEquals(60, d.buffer(0).byteSize());
        assertEquals(64, d.buffer(0).alignment());
        assertEquals(d, Descriptor.decode(d.toBytes()));
        Descriptor s = Descriptor.builder(ElementType.FLOAT64, Layout.STRIDED, 2, 3)
                .strides(1, 2).addBuffer(48, 64).build();
        assertArrayEquals(new long[] {1, 2}, s.strides().orElseThrow());
        Descriptor.Statistics st = new Descriptor.Statistics(1 | 4, 3, 0, -1.5, 2.0, 2.0, 0, 0, 0,
                0, false, false);
        Descriptor c = Descriptor.builder(ElementType.FLOAT32, Layout.COO, 4, 4).nnz(3)
                .cooSorted(true).addBuffer(12, 64, 2).addBuffer(48, 64, 2).statistics(st).build();
        Descriptor back = Descriptor.decode(c.toBytes());
        assertEquals(st, back.statistics().orElseThrow());
        assertEquals(true, back.cooSorted().orElseThrow());
        assertEquals(2, back.buffer(0).memoryClass());
        assertEquals(3, back.nnz().getAsLong());
        Descriptor.Quantization pc = new Descriptor.Quantization(
                Descriptor.Quantization.PER_CHANNEL_AFFINE, 0, 0, 0, 0, 1,
                Descriptor.Quantization.NO_BUFFER, 3, 0);
        Descriptor q = Descriptor.builder(ElementType.INT8, Layout.ROW_MAJOR, 2, 4)
                .addBuffer(8, 64).addBuffer(8, 64).quantization(pc).build();
        Descriptor.Quantization got = q.quantization().orElseThrow();
        assertEquals(Descriptor.Quantization.PER_CHANNEL_AFFINE, got.scheme());
        assertEquals(1, got.scaleBufferIndex());
        assertEquals(Descriptor.Quantization.NO_BUFFER, got.zeroPointBufferIndex());
        assertEquals(3, got.scaleTypeTag());
        assertEquals(1, got.flags() & 1, "no zero-point buffer: symmetric");

        Descriptor.TileLevel level = new Descriptor.TileLevel(1, 3, new long[] {2, 2},
                new long[] {0, 0}, new long[] {1, 2});
        Descriptor tiled = Descriptor.builder(ElementType.FLOAT32, Layout.TILED, 4, 4)
                .tileLevel(level).addBuffer(64, 64).build();
        assertEquals(List.of(level), Descriptor.decode(tiled.toBytes()).tiling());
        Descriptor morton = Descriptor.builder(ElementType.UINT8, Layout.MORTON, 4, 4)
                .mortonBits(2, 2).addBuffer(16, 64).build();
        assertArrayEquals(new long[] {2, 2}, morton.mortonBits().orElseThrow());
        assertTrue(morton.tiling().isEmpty());
        // tests/cases block_paged_u32: layer 3 keys, 2 sequences, pages of 4 tokens.
        Descriptor.BlockPaged bp = new Descriptor.BlockPaged(5, 4, 0, 2, 3, 0, 0);
        Descriptor paged = Descriptor.builder(ElementType.FLOAT16, Layout.BLOCK_PAGED, 9, 2, 8)
                .blockPaged(bp).addBuffer(640, 64).addBuffer(12, 64).addBuffer(12, 64).build();
        assertEquals(bp, paged.blockPaged().orElseThrow());
    }
}
