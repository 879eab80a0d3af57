package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Release exactly once: after closing everything, and after GC for what was not
 * closed, the library's live-object count is back where it started and every
 * producer's release ran once, on whatever thread let go last.
 */
class LifetimeTest extends LeakChecked {
    /** Counts releases and remembers the threads they ran on. */
    static final class Releases implements Runnable {
        final AtomicInteger count = new AtomicInteger();
        final ConcurrentLinkedQueue<String> threads = new ConcurrentLinkedQueue<>();

        @Override
        public void run() {
            count.incrementAndGet();
            threads.add(Thread.currentThread().getName());
        }
    }

    private static Tensor wrapped(Releases r, float... v) {
        return Tensor.wrap(Descriptor.dense(ElementType.FLOAT32, v.length), r, TestSupport.floats(v));
    }

    private static void awaitCount(AtomicInteger c, int want) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (c.get() < want && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
        assertEquals(want, c.get());
    }

    @Test
    void closeReleasesAtOnceAndExactlyOnce() throws Exception {
        long before = TestSupport.live();
        Releases r = new Releases();
        Tensor t = wrapped(r, 1, 2, 3);
        assertTrue(TestSupport.live() > before, "the tensor counts as live");
        assertEquals(0, r.count.get());
        t.close();
        assertEquals(1, r.count.get(), "no view was taken: close releases at once");
        assertEquals(before, TestSupport.live());
        t.close();
        Thread.sleep(50);
        System.gc();
        assertEquals(1, r.count.get(), "a second close and GC release nothing more");
        assertEquals(Thread.currentThread().getName(), r.threads.peek());
    }

    @Test
    void aViewKeepsTheMemoryAliveAfterClose() throws Exception {
        long before = TestSupport.live();
        Releases r = new Releases();
        FloatBuffer view;
        try (Tensor t = wrapped(r, 4, 5, 6)) {
            view = t.floats();
        }
        System.gc();
        Thread.sleep(50);
        assertEquals(0, r.count.get(), "the view still holds the tensor");
        assertEquals(6f, view.get(2), "and still reads its memory");
        view = null;
        awaitCount(r.count, 1);
        TestSupport.awaitLive(before);
    }

    @Test
    void streamTensorViewOutlivesCloseAndReaderThenIsFreed() throws Exception {
        long before = TestSupport.live();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Releases r = new Releases();
        try (StreamWriter w = new StreamWriter(out); Tensor t = wrapped(r, 9, 8, 7)) {
            w.write(t);
        }
        assertEquals(1, r.count.get(), "the writer let go after write()");
        ByteBuffer view;
        try (StreamReader rd = new StreamReader(new ByteArrayInputStream(out.toByteArray()));
                Tensor t = rd.next()) {
            view = t.buffer(0);
        }
        assertEquals(7f, view.getFloat(8));
        assertTrue(TestSupport.live() > before);
        view = null;
        TestSupport.awaitLive(before);
    }

    @Test
    void encoderHoldsTheCallersBuffersUntilEnd() throws Exception {
        long before = TestSupport.live();
        Releases r = new Releases();
        long enc = Native.encoderNew();
        try {
            Tensor t = wrapped(r, 1, 2);
            Native.encoderBegin(enc, t.handle());
            t.close();
            assertEquals(0, r.count.get(), "the encoder still points at the buffer");
            Native.encoderEnd(enc);
            assertEquals(1, r.count.get());
        } finally {
            Native.encoderDestroy(enc);
        }
        TestSupport.awaitLive(before);
    }

    @Test
    void releaseRunsOnTheThreadThatClosesLast() throws Exception {
        long before = TestSupport.live();
        Releases r = new Releases();
        Tensor t = wrapped(r, 1);
        Thread other = new Thread(t::close, "hurray-closer");
        other.start();
        other.join();
        assertEquals(1, r.count.get());
        assertEquals("hurray-closer", r.threads.peek());
        TestSupport.awaitLive(before);
    }

    @Test
    void cleanerReleasesWhatNobodyClosed() throws Exception {
        long before = TestSupport.live();
        Releases r = new Releases();
        for (int i = 0; i < 10; i++) {
            wrapped(r, i, i + 1).floats(); // neither the tensor nor the view is kept
        }
        awaitCount(r.count, 10);
        TestSupport.awaitLive(before);
        for (String name : r.threads) {
            assertNotEquals(Thread.currentThread().getName(), name,
                    "released by the Cleaner's thread");
        }
    }

    @Test
    void manyThreadsProduceConsumeAndReleaseEachOnce() throws Exception {
        long before = TestSupport.live();
        Releases r = new Releases();
        int threads = 4;
        int each = 50;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int k = 0; k < threads; k++) {
            final int seed = k;
            done.add(pool.submit(() -> {
                for (int i = 0; i < each; i++) {
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    try (StreamWriter w = new StreamWriter(out); Tensor t = wrapped(r, seed, i)) {
                        w.write(t);
                    }
                    try (StreamReader rd = new StreamReader(new ByteArrayInputStream(out.toByteArray()));
                            Tensor t = rd.next()) {
                        assertEquals((float) seed, t.floats().get(0));
                        assertEquals((float) i, t.floats().get(1));
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        awaitCount(r.count, threads * each);
        TestSupport.awaitLive(before);
    }
}
