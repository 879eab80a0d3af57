package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15 item 1: memory the caller already holds (an ONNX-Runtime-shaped direct
 * buffer at an odd address, a heap buffer, a read-only buffer) becomes a tensor:
 * zero-copy when aligned, one copy otherwise, and {@link Copy#NEVER} refuses.
 */
class ForeignMemoryTest extends LeakChecked {
    @TempDir
    Path tmp;

    /** A direct buffer of {@code n} floats (0.5, 1.5, ...) starting one byte past an
     * aligned address, as ONNX Runtime's {@code getByteBuffer()} may hand out. */
    static ByteBuffer oddDirect(int n) {
        ByteBuffer raw = ByteBuffer.allocateDirect(4 * n + 128).alignedSlice(64);
        ByteBuffer odd = raw.position(1).slice().limit(4 * n).slice().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            odd.putFloat(4 * i, i + 0.5f);
        }
        return odd;
    }

    @Test
    void oddAddressIsCopiedWrittenAndReadBackEqual() throws Exception {
        ByteBuffer onnx = oddDirect(24);
        assertEquals(1, Native.directAddress(onnx) % 64, "the memory is at an odd address");
        AtomicInteger released = new AtomicInteger();
        Path p = tmp.resolve("onnx.hry");
        try (Tensor t = Tensor.wrap(Descriptor.dense(ElementType.FLOAT32, 2, 3, 4),
                released::incrementAndGet, onnx)) {
            assertEquals(0, t.bufferAddress(0) % 64, "the tensor's memory is aligned");
            assertNotEquals(Native.directAddress(onnx), t.bufferAddress(0), "one copy");
            assertEquals(1, released.get(), "the copied buffer is handed back at once");
            assertEquals(23.5f, t.floats().get(23));
            try (TensorFileWriter w = TensorFileWriter.create(p)) {
                w.write("logits", t);
                w.finish();
            }
        }
        try (TensorFile f = TensorFile.open(p); Tensor back = f.tensor("logits")) {
            assertArrayEquals(new long[] {2, 3, 4}, back.shape());
            float[] got = new float[24];
            back.floats().get(got);
            for (int i = 0; i < 24; i++) {
                assertEquals(i + 0.5f, got[i], "element " + i);
            }
        }
    }

    @Test
    void strictRefusesTheSameMemory() {
        ByteBuffer onnx = oddDirect(24);
        AtomicInteger released = new AtomicInteger();
        HurrayException e = assertThrows(HurrayException.class,
                () -> Tensor.wrap(Descriptor.dense(ElementType.FLOAT32, 24), Copy.NEVER,
                        released::incrementAndGet, onnx));
        assertEquals(Status.INVALID_ARGUMENT, e.status());
        assertTrue(e.getMessage().contains("buffer 0"), e.getMessage());
        assertTrue(e.getMessage().contains("64"), e.getMessage());
        assertTrue(e.getMessage().contains("strict"), e.getMessage());
        assertTrue(e.getMessage().contains("Tensor.allocate"), e.getMessage());
        assertEquals(0, released.get(), "not run when wrap throws");
        HurrayException dense = assertThrows(HurrayException.class,
                () -> Tensor.dense(ElementType.FLOAT32, onnx, Copy.NEVER, 24));
        assertEquals(Status.INVALID_ARGUMENT, dense.status());
    }

    @Test
    void alignedMemoryIsWrappedWithoutACopyEvenWhenStrict() {
        ByteBuffer mine = TestSupport.floats(1, 2, 3, 4);
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, mine, Copy.NEVER, 4)) {
            assertEquals(Native.directAddress(mine), t.bufferAddress(0));
            mine.putFloat(0, 9f);
            assertEquals(9f, t.floats().get(0), "the tensor is the caller's memory");
        }
    }

    @Test
    void allocateDirectAlignedOrNotJustWorks() {
        // The 97-of-100 case of the issue: plain allocateDirect buffers of 4 MiB.
        int n = 1 << 20;
        for (int k = 0; k < 8; k++) {
            ByteBuffer b = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.LITTLE_ENDIAN);
            b.putFloat(4 * (n - 1), k);
            try (Tensor t = Tensor.dense(ElementType.FLOAT32, b, n)) {
                assertEquals(k, t.floats().get(n - 1));
                assertEquals(0, t.bufferAddress(0) % 64);
            }
        }
    }

    @Test
    void heapBuffersAreCopiedOrRefusedWithHowToCopy() {
        ByteBuffer heap = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
        heap.putFloat(0, 1f).putFloat(4, 2f).putFloat(8, 3f);
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, heap, 3)) {
            assertEquals(3f, t.floats().get(2));
            heap.putFloat(8, 7f);
            assertEquals(3f, t.floats().get(2), "a copy: later writes do not reach it");
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Tensor.dense(ElementType.FLOAT32, heap, Copy.NEVER, 3));
        assertTrue(e.getMessage().contains("heap"), e.getMessage());
        assertTrue(e.getMessage().contains("Copy.IF_NEEDED"), e.getMessage());
        assertTrue(e.getMessage().contains("Tensor.allocate"), e.getMessage());
        try (Tensor empty = Tensor.dense(ElementType.FLOAT32, ByteBuffer.allocate(0), Copy.NEVER,
                0)) {
            assertEquals(0, empty.buffer(0).capacity(), "an empty heap buffer needs no copy");
        }
        ByteBuffer ro = TestSupport.floats(4, 5).asReadOnlyBuffer();
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, ro, 2)) {
            assertEquals(5f, t.floats().get(1), "a read-only buffer is copied");
        }
        IllegalArgumentException r = assertThrows(IllegalArgumentException.class,
                () -> Tensor.dense(ElementType.FLOAT32, ro, Copy.NEVER, 2));
        assertTrue(r.getMessage().contains("read-only"), r.getMessage());
    }
}
