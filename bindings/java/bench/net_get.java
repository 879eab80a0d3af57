// A plain program (Java's source-file mode), issue 18's throughput check; `cargo
// xtask bench` runs it beside the other languages:
//
//   java -cp bindings/java/target/classes:target/java-native bindings/java/bench/net_get.java ADDR KEY [REPEATS]
//
// It connects to the server at ADDR (host:port), gets KEY REPEATS times (default 3)
// on that connection with dev.hurray.NetClient, as the other languages' scripts do,
// and prints one line "net_get java BYTES SECONDS": the data bytes received (every
// buffer of every tensor of the item) and the wall time of the fastest get (connect
// excluded).

import dev.hurray.Item;
import dev.hurray.NetClient;
import dev.hurray.Tensor;
import java.util.Locale;

final class NetGet {
    private NetGet() {}

    static long dataBytes(Item it) {
        long n = 0;
        try (Tensor t = it.tensor()) {
            for (int i = 0; i < t.descriptor().buffers().size(); i++) {
                n += t.descriptor().buffers().get(i).byteSize();
            }
        }
        for (Item m : it.members()) {
            n += dataBytes(m);
            m.close();
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 && args.length != 3) {
            System.err.println("usage: net_get ADDR KEY [REPEATS]");
            System.exit(2);
        }
        int repeats = args.length == 3 ? Integer.parseInt(args[2]) : 3;
        int colon = args[0].lastIndexOf(':');
        try (NetClient c = NetClient.connect(args[0].substring(0, colon),
                Integer.parseInt(args[0].substring(colon + 1)))) {
            double best = Double.MAX_VALUE;
            long bytes = 0;
            for (int r = 0; r < repeats; r++) {
                long start = System.nanoTime();
                try (Item it = c.getItem(args[1])) {
                    best = Math.min(best, (System.nanoTime() - start) / 1e9);
                    bytes = dataBytes(it);
                }
            }
            System.out.println(String.format(Locale.ROOT, "net_get java %d %.6f", bytes, best));
        }
    }
}
