// The Java consumer of the hostile corpus (tests/matrix/rust/src/hostile.rs):
//
//   java -cp hurray.jar:. Matrix hostile DIR
//
// For every line "CASE RULE ..." of DIR/manifest.tsv it opens DIR/CASE.hrry with
// TensorFile.open and takes every item by name (TensorFile.item) with a ByteBuffer
// view of every buffer of it and its members (Tensor.buffer, every byte read), then
// reads DIR/CASE.hrrys to its end with StreamReader.nextItem, viewing every item the
// same way. A container passes when a FormatException with status HURRAY_ERR_FORMAT
// was thrown whose message names RULE:
//
//   result  hostile  file|stream  CASE  pass|fail  DETAIL

import dev.hurray.FormatException;
import dev.hurray.Item;
import dev.hurray.Status;
import dev.hurray.StreamReader;
import dev.hurray.Tensor;
import dev.hurray.TensorFile;
import java.io.BufferedInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

final class Hostile {
    private Hostile() {}

    /** A read of one container; throws what the binding threw. */
    @FunctionalInterface
    interface Read {
        void run() throws Exception;
    }

    /** Folded over every viewed byte so each view is really read. */
    static byte sink;

    /** Views every buffer of the item's tensor and of its members. */
    static void view(Item it) {
        try (Tensor t = it.tensor()) {
            for (int b = 0; b < t.bufferCount(); b++) {
                ByteBuffer v = t.buffer(b);
                for (int k = 0; k < v.remaining(); k++) {
                    sink ^= v.get(v.position() + k);
                }
            }
        }
        for (int m = 0; m < it.memberCount(); m++) {
            try (Item member = it.member(m)) {
                view(member);
            }
        }
    }

    static void readFile(Path path) throws Exception {
        try (TensorFile f = TensorFile.open(path)) {
            for (String name : f.names()) {
                try (Item it = f.item(name)) {
                    view(it);
                }
            }
        }
    }

    static void readStream(Path path) throws Exception {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(path));
                StreamReader r = new StreamReader(in)) {
            for (Item it = r.nextItem(); it != null; it = r.nextItem()) {
                try (Item held = it) {
                    view(held);
                }
            }
        }
    }

    /** {"pass", message} when {@code read} threw a HURRAY_ERR_FORMAT FormatException naming {@code rule}. */
    static String[] judge(String rule, Read read) {
        try {
            read.run();
        } catch (FormatException e) {
            String msg = String.valueOf(e.getMessage());
            if (e.status() == Status.FORMAT && msg.contains(rule)) {
                return new String[] {"pass", msg};
            }
            return new String[] {"fail", "expected HURRAY_ERR_FORMAT naming " + rule + ", got " + e.statusName() + ": " + msg};
        } catch (Exception | Error e) {
            return new String[] {"fail", "expected a FormatException naming " + rule + ", got " + e};
        }
        return new String[] {"fail", "read without error; expected " + rule};
    }

    static void run(Path dir) throws Exception {
        for (String line : Files.readAllLines(dir.resolve("manifest.tsv"))) {
            String[] f = line.split("\t");
            if (f.length < 2 || f[0].isEmpty()) {
                continue;
            }
            String name = f[0];
            String rule = f[1];
            Path file = dir.resolve(name + ".hrry");
            Path stream = dir.resolve(name + ".hrrys");
            String[] a = judge(rule, () -> readFile(file));
            System.out.println("result\thostile\tfile\t" + name + "\t" + a[0] + "\t" + Matrix.clean(a[1]));
            String[] b = judge(rule, () -> readStream(stream));
            System.out.println("result\thostile\tstream\t" + name + "\t" + b[0] + "\t" + Matrix.clean(b[1]));
        }
    }
}
