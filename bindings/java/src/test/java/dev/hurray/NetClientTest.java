package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The network client against {@code hurray serve} (found at {@code $HURRAY_CLI} or
 * the newer of the workspace's target/release and target/debug builds; the tests
 * are skipped without one).
 */
class NetClientTest extends LeakChecked {
    @TempDir
    Path dir;

    private final List<Process> servers = new ArrayList<>();
    private final List<AutoCloseable> proxies = new ArrayList<>();

    @AfterEach
    void stopServers() throws Exception {
        for (AutoCloseable p : proxies) {
            p.close();
        }
        for (Process p : servers) {
            p.destroy(); // SIGTERM
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static Path cli() {
        String env = System.getenv("HURRAY_CLI");
        if (env != null && !env.isEmpty()) {
            return Path.of(env);
        }
        Path best = null;
        long bestTime = 0;
        for (String p : new String[] {"../../target/release/hurray", "../../target/debug/hurray"}) {
            Path path = Path.of(p);
            try {
                long t = Files.getLastModifiedTime(path).toMillis();
                if (best == null || t > bestTime) {
                    best = path;
                    bestTime = t;
                }
            } catch (IOException absent) {
                // not built
            }
        }
        Assumptions.assumeTrue(best != null, "no hurray program: set HURRAY_CLI");
        return best.toAbsolutePath();
    }

    /** Writes "w" (n float32 values 0, 1, ...) and serves it; returns the port. */
    private int serve(int n) throws Exception {
        Path file = dir.resolve("served-" + n + ".hrry");
        ByteBuffer data = Tensor.allocate(4L * n).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            data.putFloat(4 * i, i);
        }
        try (TensorFileWriter w = TensorFileWriter.create(file, 0, false);
                Tensor t = Tensor.dense(ElementType.FLOAT32, data, n)) {
            w.write("w", t);
            w.finish();
        }
        Process p = new ProcessBuilder(cli().toString(), "serve", file.toString(), "--listen",
                "127.0.0.1:0").redirectError(ProcessBuilder.Redirect.INHERIT).start();
        servers.add(p);
        BufferedReader r = new BufferedReader(
                new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        assertTrue(line != null && line.contains(" on 127.0.0.1:"), "hurray serve said " + line);
        return Integer.parseInt(line.substring(line.lastIndexOf(':') + 1).trim());
    }

    private static void checkRamp(Tensor t, int n) {
        FloatBuffer f = t.floats();
        assertEquals(n, f.remaining());
        for (int i = 0; i < n; i += Math.max(1, n / 1000)) {
            assertEquals((float) i, f.get(i), "value " + i);
        }
        assertEquals((float) (n - 1), f.get(n - 1));
    }

    @Test
    void getPutRoundTrip() throws Exception {
        int port = serve(1000);
        try (NetClient c = NetClient.connect("127.0.0.1", port)) {
            NetClient.ServerInfo info = c.serverInfo();
            assertTrue(info.protocolVersion() > 0 && info.maxMessageSize() >= 4096, info.toString());
            try (Tensor t = c.get("w")) {
                checkRamp(t, 1000);
                assertEquals(ElementType.FLOAT32, t.descriptor().elementType());
            }
            try (Tensor put = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(7, -8, 9), 3)) {
                c.put("p", put);
            }
            try (Item it = c.getItem("p", new NetClient.GetOptions().parallel(true).alignment(128));
                    Tensor back = it.tensor()) {
                assertFalse(it.isComposite());
                FloatBuffer f = back.floats();
                assertEquals(-8f, f.get(1));
                assertEquals(9f, f.get(2));
            }
            try (Tensor a = c.getAsync("w").get(30, TimeUnit.SECONDS)) {
                checkRamp(a, 1000);
            }
        }
    }

    @Test
    void unknownKeyIsNotFoundWithNetCode2() throws Exception {
        int port = serve(10);
        try (NetClient c = NetClient.connect("127.0.0.1", port)) {
            NotFoundException e = assertThrows(NotFoundException.class, () -> c.get("nope"));
            assertEquals(2, e.netCode());
            assertEquals(Status.NOT_FOUND, e.status());
            try (Tensor t = c.get("w")) { // the connection stays usable
                checkRamp(t, 10);
            }
        }
        NetClient closed = NetClient.connect("127.0.0.1", port);
        closed.close();
        closed.close();
        assertThrows(IllegalStateException.class, () -> closed.get("w"));
    }

    @Test
    void refusedConnectionIsAnIOException() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        HurrayIOException e = assertThrows(HurrayIOException.class,
                () -> NetClient.connect("127.0.0.1", port));
        assertEquals(Status.IO, e.status());
    }

    /** A proxy that stops forwarding the server's bytes after {@code limit}. */
    private int stallProxy(int serverPort, long limit, CountDownLatch stalled) throws IOException {
        ServerSocket ss = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        List<Socket> socks = new ArrayList<>();
        proxies.add(() -> {
            ss.close();
            synchronized (socks) {
                for (Socket s : socks) {
                    s.close();
                }
            }
        });
        Thread accept = new Thread(() -> {
            try {
                while (true) {
                    Socket in = ss.accept();
                    Socket out = new Socket(InetAddress.getLoopbackAddress(), serverPort);
                    synchronized (socks) {
                        socks.add(in);
                        socks.add(out);
                    }
                    pump(in.getInputStream(), out.getOutputStream(), Long.MAX_VALUE, null);
                    pump(out.getInputStream(), in.getOutputStream(), limit, stalled);
                }
            } catch (IOException closed) {
                // the test ended
            }
        });
        accept.setDaemon(true);
        accept.start();
        return ss.getLocalPort();
    }

    private static void pump(InputStream from, OutputStream to, long limit, CountDownLatch done) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 << 10];
            long left = limit;
            try {
                while (left > 0) {
                    int n = from.read(buf, 0, (int) Math.min(buf.length, left));
                    if (n < 0) {
                        break;
                    }
                    to.write(buf, 0, n);
                    left -= n;
                }
            } catch (IOException closed) {
                // the test ended
            }
            if (done != null) {
                done.countDown();
            }
        });
        t.setDaemon(true);
        t.start();
    }

    @Test
    void futureCancelMidTransferReleasesEverything() throws Exception {
        int n = 16 << 20; // 64 MiB
        int port = serve(n);
        CountDownLatch stalled = new CountDownLatch(1);
        int proxy = stallProxy(port, 4 << 20, stalled);
        try (NetClient c = NetClient.connect("127.0.0.1", proxy)) {
            CompletableFuture<Tensor> f = c.getAsync("w");
            assertTrue(stalled.await(30, TimeUnit.SECONDS), "the transfer never started");
            Thread.sleep(50);
            long start = System.nanoTime();
            assertTrue(f.cancel(true));
            assertThrows(CancellationException.class, f::join);
            // The native call returns promptly: the next call sees the cancelled client.
            HurrayException dead = assertThrows(HurrayException.class, () -> c.get("w"));
            assertEquals(Status.CANCELLED, dead.status());
            assertTrue(System.nanoTime() - start < 10_000_000_000L, "cancel was slow");
        }
        TestSupport.awaitLive(0);
        // The server still serves another client.
        try (NetClient c2 = NetClient.connect("127.0.0.1", port); Tensor t = c2.get("w")) {
            checkRamp(t, n);
        }
    }

    @Test
    void closeFromAnotherThreadCancelsABlockingGet() throws Exception {
        int port = serve(4 << 20);
        CountDownLatch stalled = new CountDownLatch(1);
        int proxy = stallProxy(port, 1 << 20, stalled);
        NetClient c = NetClient.connect("127.0.0.1", proxy);
        Thread closer = new Thread(() -> {
            try {
                stalled.await();
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            c.close();
        });
        closer.start();
        HurrayException e = assertThrows(HurrayException.class, () -> c.get("w"));
        assertEquals(Status.CANCELLED, e.status());
        closer.join();
    }

    @Test
    void callTimeoutIsAnIOExceptionWithTimeout() throws Exception {
        int port = serve(4 << 20);
        int proxy = stallProxy(port, 1 << 20, new CountDownLatch(1));
        try (NetClient c = NetClient.connect("127.0.0.1", proxy,
                new NetClient.Options().callTimeout(java.time.Duration.ofMillis(300)))) {
            HurrayIOException e = assertThrows(HurrayIOException.class, () -> c.get("w"));
            assertEquals(Status.TIMEOUT, e.status());
        }
    }
}
