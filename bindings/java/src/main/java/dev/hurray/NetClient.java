package dev.hurray;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A client of a Hurray server ({@code hurray serve}; docs/network.md): one
 * connection, through the library's blocking network client.
 *
 * <pre>{@code
 * try (NetClient c = NetClient.connect("127.0.0.1", 7070)) {
 *     try (Tensor t = c.get("layer0.weight")) { ... }
 *     c.put("grad0", gradient);
 *     CompletableFuture<Tensor> f = c.getAsync("layer1.weight");
 * } catch (NotFoundException e) {      // UNKNOWN_TENSOR: e.netCode() == 2
 * }
 * }</pre>
 *
 * <p>Threads: any thread may call any method; calls on one client run one at a
 * time (use a client per thread for parallel transfers). {@link #cancel()} and
 * {@link #close()} may come from any thread while a call is in flight: that call
 * throws a {@link HurrayException} with {@link Status#CANCELLED} promptly, with
 * everything it held released.
 *
 * <p>Cancellation is final: after {@link #cancel()} (or {@code cancel(true)} on a
 * future of {@link #getAsync}) every later call throws {@link Status#CANCELLED};
 * close this client and connect a new one. The time limits of {@link Options}
 * throw a {@link HurrayIOException} ({@link Status#TIMEOUT}) and close the
 * connection: connect again.
 *
 * <p>Errors go through the binding's one mapping (docs/java.md "Errors"), and carry
 * {@link HurrayError#netCode()}: an unknown key is a {@link NotFoundException}
 * (netCode 2; the connection stays usable), limits and a full store are
 * {@link FormatException}s, refused versions, layouts or devices a
 * {@link HurrayException} ({@link Status#NOT_APPLICABLE}), I/O failures and
 * timeouts checked {@link HurrayIOException}s.
 */
public final class NetClient implements AutoCloseable {
    private static final AtomicInteger THREADS = new AtomicInteger();
    /** Threads that run {@link #getAsync} calls (daemons, made on demand). */
    private static final ExecutorService ASYNC = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "hurray-net-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    /** Options of {@link #connect(String, int, Options)}; times of 0 mean no limit. */
    public static final class Options {
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration ioTimeout = Duration.ofSeconds(60);
        private Duration callTimeout = Duration.ZERO;
        private int maxMessageSize = 16 << 20;
        private long maxItemBytes = 4L << 30;

        /** The defaults: 10 s connect, 60 s stall, no call limit, 16 MiB, 4 GiB. */
        public Options() {}

        /**
         * @param d bound on connecting and the handshake (default 10 s)
         * @return this
         */
        public Options connectTimeout(Duration d) {
            connectTimeout = Objects.requireNonNull(d);
            return this;
        }

        /**
         * @param d longest a single read or write may stall (default 60 s)
         * @return this
         */
        public Options ioTimeout(Duration d) {
            ioTimeout = Objects.requireNonNull(d);
            return this;
        }

        /**
         * @param d longest a whole get or put may take (default 0: no limit)
         * @return this
         */
        public Options callTimeout(Duration d) {
            callTimeout = Objects.requireNonNull(d);
            return this;
        }

        /**
         * @param bytes largest message payload accepted (default 16 MiB, at least 4096)
         * @return this
         */
        public Options maxMessageSize(int bytes) {
            maxMessageSize = bytes;
            return this;
        }

        /**
         * @param bytes most data bytes one received item may carry (default 4 GiB);
         *     a larger answer throws {@link FormatException} ({@link Status#LIMIT})
         * @return this
         */
        public Options maxItemBytes(long bytes) {
            maxItemBytes = bytes;
            return this;
        }

        private static int millis(Duration d) {
            if (d.isNegative()) {
                throw new IllegalArgumentException("hurray: negative timeout " + d);
            }
            long ms = d.toMillis() + (d.toNanosPart() % 1_000_000 != 0 ? 1 : 0);
            return (int) Math.min(ms, Integer.MAX_VALUE);
        }
    }

    /** Options of one {@link #getItem(String, GetOptions)}. */
    public static final class GetOptions {
        private byte[] layouts;
        private int alignment;
        private boolean transcode;
        private boolean parallel;

        /** The defaults: as stored, alignment 64, no transcoding, no shards. */
        public GetOptions() {}

        /**
         * @param accepted the layouts accepted, most preferred first (B.9); none:
         *     whatever is stored
         * @return this
         */
        public GetOptions layouts(Layout... accepted) {
            layouts = new byte[accepted.length];
            for (int i = 0; i < accepted.length; i++) {
                layouts[i] = (byte) accepted[i].tag();
            }
            return this;
        }

        /**
         * @param bytes alignment of the data buffers, a power of two (default 64)
         * @return this
         */
        public GetOptions alignment(int bytes) {
            alignment = bytes;
            return this;
        }

        /**
         * @param allow let the server convert to one of {@link #layouts}
         * @return this
         */
        public GetOptions transcode(boolean allow) {
            transcode = allow;
            return this;
        }

        /**
         * @param allow let the server answer in parallel shards (B.13), reassembled here
         * @return this
         */
        public GetOptions parallel(boolean allow) {
            parallel = allow;
            return this;
        }
    }

    /**
     * What the server said in its {@code SERVER_HELLO} (B.7).
     *
     * @param protocolVersion the protocol version in use
     * @param maxMessageSize largest payload the server accepts, bytes
     * @param capabilityFlags the server's capability bits (bit 0 {@code PARALLEL_STREAMS})
     */
    public record ServerInfo(int protocolVersion, int maxMessageSize, long capabilityFlags) {
        /** @return whether the server may answer in parallel shards (B.13) */
        public boolean parallelStreams() {
            return (capabilityFlags & 1) != 0;
        }
    }

    private final NativeRef ref;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean closed;

    private NetClient(long ptr) {
        this.ref = new NativeRef(ptr, Native::netClientDestroy);
        NativeRef r = ref;
        this.cleanable = NativeRef.register(this, r::release);
    }

    /**
     * Connects with the default {@link Options}.
     *
     * @param host a name or an address
     * @param port the server's port
     * @return the connected client; close it
     * @throws IOException ({@link HurrayIOException}) when the connection is refused,
     *     the name does not resolve or the connect timeout runs out
     */
    public static NetClient connect(String host, int port) throws IOException {
        return connect(host, port, new Options());
    }

    /**
     * Connects to {@code host:port} and does the handshake.
     *
     * @param host a name or an address
     * @param port the server's port
     * @param options time limits and sizes
     * @return the connected client; close it
     * @throws IOException ({@link HurrayIOException}) when the connection is refused,
     *     the name does not resolve or the connect timeout runs out
     */
    public static NetClient connect(String host, int port, Options options) throws IOException {
        Objects.requireNonNull(host, "host");
        long p = Native.netClientNew(Options.millis(options.connectTimeout),
                Options.millis(options.ioTimeout), Options.millis(options.callTimeout),
                options.maxMessageSize, options.maxItemBytes);
        NetClient c = new NetClient(p);
        try {
            Native.netConnect(p, host, port);
        } catch (IOException | RuntimeException | Error e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** Holds the native client for one call; release with {@link NativeRef#release}. */
    private long enter() {
        if (closed) {
            throw new IllegalStateException("hurray: NetClient is closed");
        }
        try {
            ref.retain();
        } catch (IllegalStateException e) {
            throw new IllegalStateException("hurray: NetClient is closed", e);
        }
        return ref.ptr();
    }

    /**
     * Gets a plain tensor.
     *
     * @param key the tensor's key (its name on the server)
     * @return the tensor (owned by the caller: close it)
     * @throws NotFoundException for an unknown key (netCode 2)
     * @throws HurrayException {@link Status#STATE} when the key names a composite
     *     (use {@link #getItem}), {@link Status#CANCELLED} after a cancel
     * @throws IOException ({@link HurrayIOException}) on a broken connection or a timeout
     */
    public Tensor get(String key) throws IOException {
        try (Item it = getItem(key)) {
            if (it.isComposite()) {
                throw new HurrayException(Status.STATE, "HURRAY_ERR_STATE: \"" + key
                        + "\" is a composite; use NetClient.getItem");
            }
            return it.tensor();
        }
    }

    /**
     * Gets an item with the default {@link GetOptions}.
     *
     * @param key the item's key
     * @return the item (a tensor or a whole composite; owned by the caller)
     * @throws IOException as for {@link #get}
     */
    public Item getItem(String key) throws IOException {
        return getItem(key, new GetOptions());
    }

    /**
     * Gets the item under {@code key}: a tensor or a whole composite.
     *
     * @param key the item's key
     * @param options layouts, alignment, transcoding, parallel shards
     * @return the item (owned by the caller: close it)
     * @throws NotFoundException for an unknown key (netCode 2)
     * @throws IOException ({@link HurrayIOException}) on a broken connection or a timeout
     */
    public Item getItem(String key, GetOptions options) throws IOException {
        Objects.requireNonNull(key, "key");
        long p = enter();
        try {
            return new Item(Native.netGet(p, key, options.layouts, options.alignment,
                    options.transcode, options.parallel));
        } finally {
            ref.release();
        }
    }

    /**
     * Gets a plain tensor on a background thread.
     * {@link CompletableFuture#cancel(boolean) cancel} on the future cancels this
     * client (the transfer in flight stops and releases everything; the client is
     * then dead, see the class comment).
     *
     * @param key the tensor's key
     * @return the future tensor (owned by whoever takes it: close it); it fails with
     *     the exceptions of {@link #get}
     */
    public CompletableFuture<Tensor> getAsync(String key) {
        Objects.requireNonNull(key, "key");
        NetClient self = this;
        CompletableFuture<Tensor> f = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                boolean done = super.cancel(mayInterruptIfRunning);
                if (done) {
                    self.cancel();
                }
                return done;
            }
        };
        ASYNC.execute(() -> {
            if (f.isDone()) {
                return;
            }
            try {
                Tensor t = get(key);
                if (!f.complete(t)) {
                    t.close();
                }
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    /**
     * Puts a tensor under {@code key} and waits for the server's acknowledgement;
     * the data is sent from the tensor's own memory, which stays the caller's.
     *
     * @param key the key
     * @param tensor an open tensor
     * @throws FormatException ({@link Status#LIMIT}) when the server's store is full
     * @throws IOException ({@link HurrayIOException}) on a broken connection or a timeout
     */
    public void put(String key, Tensor tensor) throws IOException {
        Objects.requireNonNull(key, "key");
        long p = enter();
        try {
            synchronized (tensor) {
                Native.netPutTensor(p, key, tensor.handle());
            }
        } finally {
            ref.release();
        }
    }

    /**
     * Puts an item (a tensor or a complete composite) under {@code key}.
     *
     * @param key the key
     * @param item an open item, the caller's
     * @throws IOException as for {@link #put(String, Tensor)}
     */
    public void put(String key, Item item) throws IOException {
        Objects.requireNonNull(key, "key");
        long p = enter();
        try {
            synchronized (item) {
                Native.netPutItem(p, key, item.handle());
            }
        } finally {
            ref.release();
        }
    }

    /**
     * @return what the server negotiated
     * @throws HurrayException {@link Status#STATE} when the connection was closed by
     *     a timeout or an I/O failure, {@link Status#CANCELLED} after a cancel
     */
    public ServerInfo serverInfo() {
        long p = enter();
        try {
            long[] v = Native.netServerInfo(p);
            return new ServerInfo((int) v[0], (int) v[1], v[2]);
        } finally {
            ref.release();
        }
    }

    /**
     * Cancels this client from any thread: the call in flight throws
     * {@link Status#CANCELLED} promptly, and so does every later call. Does nothing
     * on a closed client.
     */
    public void cancel() {
        try {
            ref.retain();
        } catch (IllegalStateException gone) {
            return;
        }
        try {
            Native.netCancel(ref.ptr());
        } finally {
            ref.release();
        }
    }

    /**
     * Cancels a call in flight, and frees the client once it has returned. Closing
     * twice does nothing.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        cancel();
        cleanable.clean();
    }
}
