package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Misuse gives exceptions, never a crash. */
class MisuseTest extends LeakChecked {
    @TempDir
    Path tmp;

    @Test
    void tensorUseAfterClose() {
        Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2), 2);
        t.close();
        t.close(); // idempotent
        assertTrue(t.isClosed());
        assertThrows(IllegalStateException.class, () -> t.buffer(0));
        assertThrows(IllegalStateException.class, () -> t.writableBuffer(0));
        assertThrows(IllegalStateException.class, t::floats);
        assertThrows(IllegalStateException.class, () -> t.bufferAddress(0));
        assertEquals(2, t.shape()[0], "the descriptor is a Java value and stays usable");
        assertThrows(IllegalStateException.class,
                () -> new StreamWriter(new ByteArrayOutputStream()).write(t));
    }

    @Test
    void readersAndWritersAfterClose() throws Exception {
        StreamWriter w = new StreamWriter(new ByteArrayOutputStream());
        w.close();
        w.close();
        try (Tensor t = Tensor.dense(ElementType.INT8, TestSupport.bytes((byte) 1), 1)) {
            assertThrows(IllegalStateException.class, () -> w.write(t));
        }
        StreamReader r = new StreamReader(new ByteArrayInputStream(new byte[0]));
        r.close();
        assertThrows(IllegalStateException.class, r::next);

        Path p = tmp.resolve("x.hrry");
        TensorFileWriter fw = TensorFileWriter.create(p, 0, false);
        try (Tensor t = Tensor.dense(ElementType.INT8, TestSupport.bytes((byte) 1), 1)) {
            fw.write("t", t);
            HurrayException dup = assertThrows(HurrayException.class, () -> fw.write("t", t));
            assertTrue(dup.getMessage().contains("t"), dup.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> fw.putMetadata("k", new Object()));
        fw.finish();
        HurrayException again = assertThrows(HurrayException.class, fw::finish);
        assertEquals(Status.STATE, again.status());
        fw.close();
        assertThrows(IllegalStateException.class, fw::finish);

        TensorFile f = TensorFile.open(p);
        f.close();
        f.close();
        assertThrows(IllegalStateException.class, f::names);
        assertThrows(IllegalStateException.class, () -> f.tensor("t"));
    }

    @Test
    void abandonedWriterLeavesNoFile() throws Exception {
        Path p = tmp.resolve("abandoned.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(p, 0, false);
                Tensor t = Tensor.dense(ElementType.INT8, TestSupport.bytes((byte) 1), 1)) {
            w.write("t", t);
        }
        assertTrue(Files.notExists(p));
        try (var files = Files.list(tmp)) {
            assertEquals(0, files.count(), "no temporary file left behind");
        }
    }

    @Test
    void badProducerBuffersAreRefusedAndNotReleased() throws Exception {
        long before = TestSupport.live();
        AtomicInteger released = new AtomicInteger();
        Descriptor d = Descriptor.dense(ElementType.FLOAT32, 4);
        assertThrows(IllegalArgumentException.class,
                () -> Tensor.wrap(d, Copy.NEVER, null, ByteBuffer.allocate(16)),
                "heap buffers are not direct");
        ByteBuffer big = Tensor.allocate(64);
        HurrayException misaligned = assertThrows(HurrayException.class,
                () -> Tensor.wrap(d, Copy.NEVER, released::incrementAndGet,
                        big.position(1).slice().limit(16)));
        assertTrue(misaligned.getMessage().contains("not aligned to the declared 64 bytes"),
                misaligned.getMessage());
        assertTrue(misaligned.getMessage().contains("aligned allocator"),
                misaligned.getMessage());
        // A buffer that does not match the table is the caller's argument, not bad input.
        HurrayException size = assertThrows(HurrayException.class,
                () -> Tensor.wrap(d, released::incrementAndGet, Tensor.allocate(12)));
        assertEquals(Status.BUFFER_MISMATCH, size.status());
        assertEquals("invalid_argument", size.category());
        assertTrue(!(size instanceof FormatException), size.toString());
        assertTrue(size.getMessage().startsWith("HURRAY_ERR_BUFFER_MISMATCH"), size.getMessage());
        HurrayException count = assertThrows(HurrayException.class,
                () -> Tensor.wrap(d, released::incrementAndGet, Tensor.allocate(16),
                        Tensor.allocate(16)));
        assertEquals(Status.BUFFER_MISMATCH, count.status());
        TestSupport.awaitLive(before);
        // A failed wrap throws and never runs the release callback: nothing was handed out.
        System.gc();
        Thread.sleep(50);
        assertEquals(0, released.get());
    }

    @Test
    void badBufferIndexIsIndexOutOfBoundsEverywhere() {
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2), 2)) {
            for (int i : new int[] {-1, 1, 5, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
                assertThrows(IndexOutOfBoundsException.class, () -> t.bufferAddress(i), "" + i);
                assertThrows(IndexOutOfBoundsException.class, () -> t.buffer(i), "" + i);
                assertThrows(IndexOutOfBoundsException.class, () -> t.writableBuffer(i), "" + i);
            }
        }
    }

    @Test
    void typedViewOfTheWrongTypeIsRefused() {
        try (Tensor t = Tensor.dense(ElementType.INT8, TestSupport.bytes((byte) 1, (byte) 2), 2)) {
            assertThrows(IllegalStateException.class, t::floats);
            assertThrows(IllegalStateException.class, t::longs);
            assertEquals(2, t.bytes().get(1));
        }
    }

    @Test
    void aPanicInTheNativeCodeBecomesAnException() {
        HurrayException e = assertThrows(HurrayException.class, Native::debugPanic);
        assertEquals(Status.INTERNAL_PANIC, e.status());
        assertEquals("HURRAY_ERR_INTERNAL_PANIC", e.statusName());
        assertTrue(e.getMessage().contains("debugPanic"), e.getMessage());
        // The library still works.
        assertEquals(10, Native.abiVersion());
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(3), 1)) {
            assertEquals(3f, t.floats().get(0));
        }
    }
}
