package dev.hurray;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * A small benchmark (a plain main, not a JUnit test): the cost of getting a
 * zero-copy view of a memory-mapped tensor does not depend on the tensor's size.
 * For each size it writes a file with one uint8 tensor, opens it, and times
 * {@code file.tensor(name)} + {@code buffer(0)} + one byte read + {@code close()}.
 *
 * <pre>
 * cd bindings/java &amp;&amp; mvn -B -q test-compile
 * java -cp target/classes:target/test-classes dev.hurray.ViewBench [MiB...]
 * </pre>
 */
final class ViewBench {
    private ViewBench() {}

    public static void main(String[] args) throws Exception {
        long[] mibs = args.length == 0 ? new long[] {1, 1024} : new long[args.length];
        for (int i = 0; i < args.length; i++) {
            mibs[i] = Long.parseLong(args[i]);
        }
        Path dir = Files.createTempDirectory("hurray-viewbench");
        System.out.println("size        write         open      view (tensor+buffer+read+close), median of 7 x 2000");
        try {
            for (long mib : mibs) {
                run(dir, mib);
            }
        } finally {
            try (var s = Files.list(dir)) {
                for (Path p : s.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    private static void run(Path dir, long mib) throws Exception {
        long bytes = mib << 20;
        Path file = dir.resolve(mib + ".hrry");
        long t0 = System.nanoTime();
        ByteBuffer data = Tensor.allocate(bytes);
        for (int i = 0; i < data.capacity(); i += 4096) {
            data.put(i, (byte) i);
        }
        try (TensorFileWriter w = TensorFileWriter.create(file, 0, false);
                Tensor t = Tensor.dense(ElementType.UINT8, data, bytes)) {
            w.write("x", t);
            w.finish();
        }
        data = null;
        double writeMs = (System.nanoTime() - t0) / 1e6;
        long t1 = System.nanoTime();
        try (TensorFile f = TensorFile.open(file)) {
            double openUs = (System.nanoTime() - t1) / 1e3;
            int iters = 2000;
            double[] runs = new double[7];
            long sink = 0;
            for (int r = 0; r < runs.length; r++) {
                long s = System.nanoTime();
                for (int i = 0; i < iters; i++) {
                    try (Tensor t = f.tensor("x")) {
                        sink += t.buffer(0).get(4096);
                    }
                }
                runs[r] = (System.nanoTime() - s) / (double) iters;
            }
            java.util.Arrays.sort(runs);
            System.out.printf(Locale.ROOT, "%6d MiB   %8.1f ms   %6.1f us  %8.0f ns/view%s%n", mib, writeMs,
                    openUs, runs[runs.length / 2], sink == 42 ? " " : "");
        }
        Files.delete(file);
    }
}
