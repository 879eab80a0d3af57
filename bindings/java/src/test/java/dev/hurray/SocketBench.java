package dev.hurray;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.util.Locale;

/**
 * A socket benchmark (a plain main, not a JUnit test) for issue 15 item 6: on
 * 127.0.0.1, one sender writes the same stream bytes (64 float32 tensors of 4 MiB by
 * default) for every receiver, and the receivers are timed from connect to the end:
 * a raw {@code byte[]} read of a {@code Socket}'s {@code InputStream} (the
 * baseline), {@link StreamReader} over the {@code SocketChannel} itself, and
 * {@link StreamReader} over a {@code Socket}'s {@code InputStream}. Best of 5 each,
 * in the same run; prints MiB/s and each reader's ratio to the raw read.
 *
 * <pre>
 * cd bindings/java &amp;&amp; mvn -B -q test-compile
 * java -cp target/classes:target/test-classes dev.hurray.SocketBench [tensors] [MiB each]
 * </pre>
 */
final class SocketBench {
    private SocketBench() {}

    /** A channel that appends to a direct buffer (to encode the stream once). */
    static WritableByteChannel into(ByteBuffer dst) {
        return new WritableByteChannel() {
            @Override
            public int write(ByteBuffer src) {
                int n = src.remaining();
                dst.put(src);
                return n;
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public void close() {}
        };
    }

    /** The stream encoding of {@code count} float32 tensors of {@code bytes} bytes each. */
    static ByteBuffer encode(int count, int bytes) throws Exception {
        ByteBuffer all = ByteBuffer.allocateDirect((int) Math.min(Integer.MAX_VALUE - 8,
                (long) count * (bytes + 4096) + 4096));
        ByteBuffer data = Tensor.allocate(bytes);
        try (StreamWriter w = new StreamWriter(into(all))) {
            for (int k = 0; k < count; k++) {
                data.putFloat(0, k);
                try (Tensor t = Tensor.dense(ElementType.FLOAT32, data, bytes / 4)) {
                    w.write(t);
                }
            }
        }
        return all.flip();
    }

    interface Receiver {
        long receive(InetSocketAddress at) throws Exception;
    }

    static double best(ServerSocketChannel server, ByteBuffer bytes, Receiver r) throws Exception {
        InetSocketAddress at = (InetSocketAddress) server.getLocalAddress();
        double best = Double.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            Thread sender = new Thread(() -> {
                try (SocketChannel c = server.accept()) {
                    ByteBuffer b = bytes.duplicate();
                    while (b.hasRemaining()) {
                        c.write(b);
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            sender.start();
            long s = System.nanoTime();
            long got = r.receive(at);
            double sec = (System.nanoTime() - s) / 1e9;
            sender.join();
            if (got != bytes.remaining()) {
                throw new IllegalStateException("received " + got + " of " + bytes.remaining());
            }
            best = Math.min(best, sec);
        }
        return bytes.remaining() / best / (1 << 20);
    }

    static long readAll(StreamReader r) throws Exception {
        for (Tensor t : r) {
            t.close();
        }
        return r.position();
    }

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        int mib = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        ByteBuffer bytes = encode(count, mib << 20);
        InetAddress lo = InetAddress.getByName("127.0.0.1");
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(lo, 0));
            Receiver raw = at -> {
                try (Socket s = new Socket(at.getAddress(), at.getPort())) {
                    InputStream in = s.getInputStream();
                    byte[] buf = new byte[1 << 20];
                    long got = 0;
                    for (int n; (n = in.read(buf)) >= 0; ) {
                        got += n;
                    }
                    return got;
                }
            };
            Receiver channel = at -> {
                try (SocketChannel c = SocketChannel.open(at); StreamReader r = new StreamReader(c)) {
                    return readAll(r);
                }
            };
            Receiver stream = at -> {
                try (Socket s = new Socket(at.getAddress(), at.getPort());
                        StreamReader r = new StreamReader(s.getInputStream())) {
                    return readAll(r);
                }
            };
            best(server, bytes, channel); // warm-up
            best(server, bytes, raw);
            double rawMibs = best(server, bytes, raw);
            double chanMibs = best(server, bytes, channel);
            double streamMibs = best(server, bytes, stream);
            System.out.printf(Locale.ROOT, "%d tensors of %d MiB over 127.0.0.1 (best of 5): raw byte[] "
                    + "read %.0f MiB/s; StreamReader(SocketChannel) %.0f MiB/s, ratio %.2f; "
                    + "StreamReader(InputStream) %.0f MiB/s, ratio %.2f%n", count, mib, rawMibs,
                    chanMibs, chanMibs / rawMibs, streamMibs, streamMibs / rawMibs);
        }
    }
}
