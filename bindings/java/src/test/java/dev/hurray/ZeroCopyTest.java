package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Views are the library's memory, and tensors over caller memory use that memory. */
class ZeroCopyTest extends LeakChecked {
    @TempDir
    Path tmp;

    @Test
    void wrappedTensorUsesTheCallersMemory() {
        ByteBuffer mine = TestSupport.floats(1, 2, 3, 4);
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, mine, 4)) {
            long addr = Native.directAddress(mine);
            assertEquals(addr, t.bufferAddress(0), "C buffer pointer is the caller's memory");
            assertEquals(addr, Native.directAddress(t.buffer(0)), "the view is that memory");
            // A write through the caller's buffer shows in the tensor: same bytes.
            mine.putFloat(4, 42f);
            assertEquals(42f, t.floats().get(1));
            // And a write through the tensor's writable view shows in the caller's buffer.
            t.writableBuffer(0).putFloat(8, -7f);
            assertEquals(-7f, mine.getFloat(8));
        }
    }

    @Test
    void streamWriterPointsAtTheCallersBuffer() {
        ByteBuffer mine = TestSupport.floats(1, 2, 3, 4);
        long enc = Native.encoderNew();
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, mine, 2, 2)) {
            long chunks = Native.encoderBegin(enc, t.handle());
            assertTrue(chunks >= 2, "descriptor chunk then buffer chunk(s): " + chunks);
            boolean found = false;
            for (long i = 0; i < chunks; i++) {
                found |= Native.encoderChunkAddress(enc, i) == Native.directAddress(mine);
            }
            assertTrue(found, "one chunk is the caller's buffer itself, not a copy");
            Native.encoderEnd(enc);
        } finally {
            Native.encoderDestroy(enc);
        }
    }

    @Test
    void streamTensorViewIsTheDecodedAllocation() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (StreamWriter w = new StreamWriter(out);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(5, 6, 7), 3)) {
            w.write(t);
        }
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(out.toByteArray()));
                Tensor t = r.next()) {
            long c = t.bufferAddress(0);
            assertNotEquals(0, c);
            assertEquals(0, c % 64, "payload lands in a 64-byte-aligned allocation");
            ByteBuffer v = t.buffer(0);
            assertEquals(c, Native.directAddress(v));
            assertEquals(5f, t.floats().get(0));
        }
    }

    @Test
    void fileTensorViewIsTheMapping() throws Exception {
        Path path = tmp.resolve("map.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(path, 0, false);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2, 3), 3)) {
            w.write("a", t);
            w.write("b", t);
            w.finish();
        }
        long size;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            size = ch.size();
        }
        try (TensorFile f = TensorFile.open(path); Tensor a = f.tensor("a"); Tensor b = f.tensor("b");
                Tensor a2 = f.tensor("a")) {
            long pa = a.bufferAddress(0);
            long pb = b.bufferAddress(0);
            assertEquals(pa, Native.directAddress(a.buffer(0)), "the view is the C pointer");
            assertEquals(pa, a2.bufferAddress(0), "both handles view the same mapped bytes");
            long delta = pb - pa;
            assertTrue(delta > 0 && delta < size, "both live in one mapping of the file");
            assertEquals(0, delta % 4096, "data buffers sit at the file's alignment");
        }
    }
}
