package dev.hurray;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A small benchmark (a plain main, not a JUnit test) for issue 15 item 7: one
 * {@link TensorFile} shared by 1 and by 8 threads, and one file per thread, each
 * making the same total number of calls ({@code file.tensor(name)} +
 * {@code floats().get(0)} + {@code close()}, over 16 tensors). Prints each time
 * (best of 5) and the ratio of 1 thread to 8 threads sharing one file (above 1:
 * sharing scales).
 *
 * <pre>
 * cd bindings/java &amp;&amp; mvn -B -q test-compile
 * java -cp target/classes:target/test-classes dev.hurray.ThreadBench [calls]
 * </pre>
 */
final class ThreadBench {
    private ThreadBench() {}

    static final int TENSORS = 16;

    /** Writes {@code file} with {@link #TENSORS} float32 tensors "t0".. of 256 values. */
    static void write(Path file) throws Exception {
        try (TensorFileWriter w = TensorFileWriter.create(file)) {
            for (int k = 0; k < TENSORS; k++) {
                ByteBuffer b = Tensor.allocate(4 * 256);
                b.putFloat(0, k);
                try (Tensor t = Tensor.dense(ElementType.FLOAT32, b, 16, 16)) {
                    w.write("t" + k, t);
                }
            }
            w.finish();
        }
    }

    /** {@code calls} reads spread over {@code threads} threads, over {@code files}. */
    static long run(TensorFile[] files, int threads, int calls) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Callable<Double>> jobs = new ArrayList<>();
            for (int th = 0; th < threads; th++) {
                TensorFile f = files[th % files.length];
                int n = calls / threads;
                int seed = th;
                jobs.add(() -> {
                    double sum = 0;
                    for (int i = 0; i < n; i++) {
                        try (Tensor t = f.tensor("t" + ((i + seed) % TENSORS))) {
                            sum += t.floats().get(0);
                        }
                    }
                    return sum;
                });
            }
            long s = System.nanoTime();
            double sink = 0;
            for (Future<Double> r : pool.invokeAll(jobs)) {
                sink += r.get();
            }
            long ns = System.nanoTime() - s;
            if (sink < 0) {
                System.out.println(sink);
            }
            return ns;
        } finally {
            pool.shutdown();
        }
    }

    static double best(TensorFile[] files, int threads, int calls) throws Exception {
        long best = Long.MAX_VALUE;
        for (int r = 0; r < 5; r++) {
            best = Math.min(best, run(files, threads, calls));
        }
        return best / 1e6;
    }

    public static void main(String[] args) throws Exception {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 160_000;
        Path dir = Files.createTempDirectory("hurray-threadbench");
        Path file = dir.resolve("t.hrry");
        try {
            write(file);
            TensorFile shared = TensorFile.open(file);
            TensorFile[] own = new TensorFile[8];
            for (int i = 0; i < own.length; i++) {
                own[i] = TensorFile.open(file);
            }
            run(new TensorFile[] {shared}, 8, calls); // warm-up
            double one = best(new TensorFile[] {shared}, 1, calls);
            double eight = best(new TensorFile[] {shared}, 8, calls);
            double perThread = best(own, 8, calls);
            System.out.printf(Locale.ROOT, "%d calls, %d CPUs: 1 thread %.0f ms, 8 threads sharing one "
                    + "TensorFile %.0f ms, 8 threads with a file each %.0f ms; "
                    + "1-thread/8-thread ratio %.2f%n", calls,
                    Runtime.getRuntime().availableProcessors(), one, eight, perThread, one / eight);
            shared.close();
            for (TensorFile f : own) {
                f.close();
            }
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }
}
