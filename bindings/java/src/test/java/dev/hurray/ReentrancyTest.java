package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Code a reader or writer calls back (the user's {@code InputStream} or
 * {@code OutputStream}) may close the reader, the writer, or what is being written,
 * on the same thread: Java monitors are re-entrant, so {@code synchronized} does not
 * stop it. The close is deferred (or the nested call refused); memory in use stays.
 */
class ReentrancyTest extends LeakChecked {
    @TempDir
    Path tmp;

    interface Hook {
        void run() throws Exception;
    }

    /** An OutputStream that runs its hook once, on write call number {@code at}. */
    static final class HookedOut extends OutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        Hook hook;
        int at = 1;
        int calls;

        @Override
        public void write(int b) {
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (++calls == at && hook != null) {
                Hook h = hook;
                hook = null;
                try {
                    h.run();
                } catch (Throwable e) {
                    thrown.set(e);
                }
            }
            bytes.write(b, off, len);
        }
    }

    /** An InputStream over bytes that runs its hook once, on the first read. */
    static final class HookedIn extends InputStream {
        final ByteArrayInputStream in;
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        Hook hook;

        HookedIn(byte[] b) {
            in = new ByteArrayInputStream(b);
        }

        @Override
        public int read() {
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (hook != null) {
                Hook h = hook;
                hook = null;
                try {
                    h.run();
                } catch (Throwable e) {
                    thrown.set(e);
                }
            }
            return in.read(b, off, len);
        }
    }

    /** 16384 floats 0, 1, 2, ...: 64 KiB, several OutputStream writes. */
    private static float[] ramp() {
        float[] v = new float[16384];
        for (int i = 0; i < v.length; i++) {
            v[i] = i;
        }
        return v;
    }

    private static float[] readOne(byte[] stream) throws IOException {
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(stream));
                Tensor t = r.next()) {
            assertNotNull(t);
            float[] v = new float[t.floats().remaining()];
            t.floats().get(v);
            assertNull(r.next());
            return v;
        }
    }

    @Test
    void writerClosedFromItsOutputStreamFinishesTheItemFirst() throws Exception {
        HookedOut out = new HookedOut();
        StreamWriter w = new StreamWriter(out);
        out.hook = w::close;
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(ramp()), 16384)) {
            long n = w.write(t);
            assertNull(out.thrown.get());
            assertEquals(out.bytes.size(), n);
            assertThrows(IllegalStateException.class, () -> w.write(t), "closed for new calls");
        }
        w.close();
        assertArrayEquals(ramp(), readOne(out.bytes.toByteArray()));
    }

    @Test
    void writerUsedFromItsOutputStreamIsRefused() throws Exception {
        HookedOut out = new HookedOut();
        try (StreamWriter w = new StreamWriter(out);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(ramp()), 16384);
                Item it = Item.of(t)) {
            out.hook = () -> w.write(t);
            w.write(t);
            assertInstanceOf(IllegalStateException.class, out.thrown.get());
            out.hook = () -> w.write(it);
            out.calls = 0;
            w.write(it);
            assertInstanceOf(IllegalStateException.class, out.thrown.get());
        }
        byte[] both = out.bytes.toByteArray();
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(both))) {
            for (int i = 0; i < 2; i++) {
                try (Tensor t = r.next()) {
                    assertEquals(16383f, t.floats().get(16383));
                }
            }
            assertNull(r.next());
        }
    }

    @Test
    void fileTensorAndReaderClosedFromTheOutputStreamStayMapped() throws Exception {
        Path path = tmp.resolve("big.hrry");
        try (TensorFileWriter fw = TensorFileWriter.create(path, 0, false);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(ramp()), 16384)) {
            fw.write("x", t);
            fw.finish();
        }
        HookedOut out = new HookedOut();
        TensorFile f = TensorFile.open(path);
        Tensor ft = f.tensor("x");
        out.at = 2; // in the middle of the buffer: the rest is copied after the close
        StreamWriter w = new StreamWriter(out);
        out.hook = () -> {
            // Everything that holds the mapping: the writer (its encoder holds the
            // chunk's buffer), the tensor and the reader.
            w.close();
            ft.close();
            f.close();
            for (int i = 0; i < 3; i++) {
                System.gc();
                Thread.sleep(10);
            }
        };
        w.write(ft);
        assertNull(out.thrown.get());
        assertArrayEquals(ramp(), readOne(out.bytes.toByteArray()));
    }

    @Test
    void producerMemoryClosedFromTheOutputStreamIsReleasedAfterTheWrite() throws Exception {
        AtomicInteger released = new AtomicInteger();
        AtomicInteger releasedDuringWrite = new AtomicInteger(-1);
        Tensor t = Tensor.wrap(Descriptor.dense(ElementType.FLOAT32, 16384),
                released::incrementAndGet, TestSupport.floats(ramp()));
        Item it = Item.of(t);
        HookedOut out = new HookedOut();
        out.at = 2;
        StreamWriter w = new StreamWriter(out);
        out.hook = () -> {
            w.close();
            it.close();
            t.close();
            for (int i = 0; i < 3; i++) {
                System.gc();
                Thread.sleep(10);
            }
            releasedDuringWrite.set(released.get());
        };
        w.write(it);
        assertNull(out.thrown.get());
        assertEquals(0, releasedDuringWrite.get(), "memory held while its chunks are written");
        // Item.of shares through views of the tensor: the release follows their collection.
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (released.get() == 0 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
        assertEquals(1, released.get(), "released once, after the write let go");
        assertArrayEquals(ramp(), readOne(out.bytes.toByteArray()));
    }

    private static byte[] twoTensors() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (StreamWriter w = new StreamWriter(out);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(ramp()), 16384)) {
            w.write(t);
            w.write(t);
        }
        return out.toByteArray();
    }

    @Test
    void readerClosedFromItsInputStreamFinishesTheReadFirst() throws Exception {
        HookedIn in = new HookedIn(twoTensors());
        StreamReader r = new StreamReader(in);
        in.hook = r::close;
        try (Tensor t = r.next()) {
            assertNull(in.thrown.get());
            assertEquals(16383f, t.floats().get(16383));
        }
        assertThrows(IllegalStateException.class, r::next, "closed for new calls");
        r.close();
    }

    @Test
    void readerUsedFromItsInputStreamIsRefused() throws Exception {
        HookedIn in = new HookedIn(twoTensors());
        try (StreamReader r = new StreamReader(in)) {
            in.hook = r::next;
            try (Tensor t = r.next()) {
                assertEquals(16383f, t.floats().get(16383));
            }
            assertInstanceOf(IllegalStateException.class, in.thrown.get());
            in.thrown.set(null);
            in.hook = r::nextItem;
            try (Item it = r.nextItem(); Tensor t = it.tensor()) {
                assertEquals(16383f, t.floats().get(16383));
            }
            assertInstanceOf(IllegalStateException.class, in.thrown.get());
            assertNull(r.next());
        }
    }
}
