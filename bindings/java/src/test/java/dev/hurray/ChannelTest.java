package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 15 item 6: streams over channels, a SocketChannel without a wrapper. */
class ChannelTest extends LeakChecked {
    @TempDir
    Path tmp;

    @Test
    void socketChannelWriterToSocketChannelReader() throws Exception {
        int n = 300_000; // over a socket buffer: the reader loops on short reads
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Future<Long> sent = pool.submit(() -> {
                try (SocketChannel c = server.accept(); StreamWriter w = new StreamWriter(c)) {
                    long total = 0;
                    for (int k = 0; k < 3; k++) {
                        ByteBuffer b = Tensor.allocate(4L * n);
                        b.putFloat(0, k).putFloat(4L * n > 8 ? 4 * (n - 1) : 4, -k);
                        try (Tensor t = Tensor.dense(ElementType.FLOAT32, b, n)) {
                            total += w.write(t);
                        }
                    }
                    return total;
                }
            });
            try (SocketChannel c = SocketChannel.open(server.getLocalAddress());
                    StreamReader r = new StreamReader(c)) {
                for (int k = 0; k < 3; k++) {
                    try (Tensor t = r.next()) {
                        assertArrayEquals(new long[] {n}, t.shape());
                        assertEquals(k, t.floats().get(0));
                        assertEquals(-k, t.floats().get(n - 1));
                    }
                }
                assertNull(r.next(), "clean end of stream");
                assertEquals(sent.get(30, TimeUnit.SECONDS), r.position(), "every byte read");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void fileChannelRoundTrip() throws Exception {
        Path p = tmp.resolve("s.hrs");
        try (FileChannel out = FileChannel.open(p, StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.WRITE);
                StreamWriter w = new StreamWriter(out);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2, 3), 3)) {
            w.write(t);
        }
        try (FileChannel in = FileChannel.open(p); StreamReader r = new StreamReader(in);
                Tensor t = r.next()) {
            assertEquals(3f, t.floats().get(2));
            assertNull(r.next());
        }
    }
}
