package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 15 item 7: one TensorFile shared by many threads reads concurrently. */
class ConcurrencyTest extends LeakChecked {
    @TempDir
    Path tmp;

    @Test
    void readsTakeNoLockThatSerialisesThem() throws Exception {
        Path p = tmp.resolve("t.hrry");
        ThreadBench.write(p);
        try (TensorFile f = TensorFile.open(p)) {
            ExecutorService other = Executors.newSingleThreadExecutor();
            try {
                // While this thread holds the file's monitor (what `synchronized`
                // methods took), another thread still reads: reads do not queue.
                synchronized (f) {
                    Future<Float> r = other.submit(() -> {
                        try (Tensor t = f.tensor("t5")) {
                            return t.floats().get(0) + f.names().size() + f.info().tensorCount();
                        }
                    });
                    assertEquals(5f + 16 + 16, r.get(10, TimeUnit.SECONDS));
                }
            } finally {
                other.shutdownNow();
            }
        }
    }

    @Test
    void eightThreadsReadTheRightValuesAndCloseIsSafeUnderLoad() throws Exception {
        Path p = tmp.resolve("t.hrry");
        ThreadBench.write(p);
        TensorFile f = TensorFile.open(p);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch started = new CountDownLatch(8);
        AtomicInteger refused = new AtomicInteger();
        List<Future<Integer>> done = new ArrayList<>();
        for (int th = 0; th < 8; th++) {
            int seed = th;
            done.add(pool.submit(() -> {
                started.countDown();
                int ok = 0;
                for (int i = 0; i < 20_000; i++) {
                    int k = (i + seed) % ThreadBench.TENSORS;
                    try (Tensor t = f.tensor("t" + k)) {
                        assertEquals(k, t.floats().get(0));
                        ok++;
                    } catch (IllegalStateException closed) {
                        assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
                        refused.incrementAndGet();
                        break;
                    }
                }
                return ok;
            }));
        }
        started.await();
        Thread.sleep(20);
        f.close(); // while the threads read: running calls finish, later ones throw
        int total = 0;
        for (Future<Integer> r : done) {
            total += r.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertTrue(total > 0, "reads ran before close");
        assertThrows(IllegalStateException.class, () -> f.tensor("t0"));
        assertThrows(IllegalStateException.class, f::names);
    }
}
