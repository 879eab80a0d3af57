package dev.hurray;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * Reads tensors in the Hurray streaming format from an {@link InputStream}. Bytes
 * are read straight into the slice the decoder demands: during a buffer that is the
 * tensor's final, 64-byte-aligned allocation, so payload bytes are placed once.
 * Each reader keeps the allocations of the tensors it read, once they are closed
 * (or collected), in its own pool (at most 1 GiB of idle memory, freed with the
 * reader and its last tensor) and reads later tensors of a fitting size into them,
 * so a steady flow of tensors lands in memory that is already mapped instead of
 * fresh, zero-filled pages.
 *
 * <p>{@link #next()} returns the next tensor ({@link #nextItem()} the next item, which
 * may be a composite), or {@code null} at a clean end of the stream; a stream that
 * ends inside a tensor throws the checked {@link TruncatedException} (an
 * {@link java.io.EOFException}), bad bytes the unchecked {@link FormatException},
 * both naming the rule and byte offset. Tensors
 * own their memory and outlive the reader. The reader is also {@link Iterable} (the
 * iterator wraps {@link IOException} in {@link UncheckedIOException}).
 *
 * <p>{@link #close()} frees the decoder but does not close the input stream. Use it
 * from one thread at a time; its methods are synchronized, so concurrent use is
 * serialised, never a crash.
 */
public final class StreamReader implements AutoCloseable, Iterable<Tensor> {
    private final ReadableByteChannel in;
    private final NativeRef ref;
    private final Cleaner.Cleanable cleanable;
    private boolean closed;
    private boolean eof;
    /** A read is in progress (the input stream may call back on this thread). */
    private boolean busy;
    /** The first decode error (truncation, bad bytes); re-thrown by every later read. */
    private Exception failure;

    /**
     * A reader with the default limits (descriptors up to 16 MiB, buffers up to 64 GiB).
     *
     * @param in the stream bytes (not closed by {@link #close()})
     */
    public StreamReader(InputStream in) {
        this(in, 0, 0);
    }

    /**
     * A reader with limits for untrusted input.
     *
     * @param in the stream bytes
     * @param maxDescriptorBytes largest descriptor accepted, in bytes (0: default)
     * @param maxBufferBytes largest buffer accepted, in bytes (0: default)
     * @throws IllegalArgumentException for a negative limit
     */
    public StreamReader(InputStream in, long maxDescriptorBytes, long maxBufferBytes) {
        this(channel(Objects.requireNonNull(in, "in")), maxDescriptorBytes, maxBufferBytes);
    }

    /**
     * An input stream as a channel: a {@code FileInputStream}'s own channel, else one
     * {@code in.read} per call through an array of up to 1 MiB
     * ({@link Channels#newChannel(InputStream)} reads 8 KiB at a time and asks
     * {@code available()} between reads, which halves a socket's throughput).
     */
    private static ReadableByteChannel channel(InputStream in) {
        if (in.getClass() == java.io.FileInputStream.class) {
            return ((java.io.FileInputStream) in).getChannel();
        }
        return new ReadableByteChannel() {
            private byte[] buf = new byte[8192];

            @Override
            public int read(ByteBuffer dst) throws IOException {
                int want = dst.remaining();
                if (want == 0) {
                    return 0;
                }
                if (want > buf.length && buf.length < (1 << 20)) {
                    buf = new byte[Math.min(1 << 20, Integer.highestOneBit(want - 1) << 1)];
                }
                int n = in.read(buf, 0, Math.min(want, buf.length));
                if (n > 0) {
                    dst.put(buf, 0, n);
                }
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

    /**
     * A reader over a channel, with the default limits. A {@code SocketChannel},
     * {@code FileChannel} or {@code Pipe.SourceChannel} (blocking) reads the payload
     * straight into the tensor's final allocation: no {@code byte[]} in between, no
     * {@link Channels#newChannel(InputStream)} wrapper.
     *
     * @param in the stream bytes (not closed by {@link #close()}), in blocking mode
     *     (a non-blocking channel is polled until bytes come)
     */
    public StreamReader(ReadableByteChannel in) {
        this(in, 0, 0);
    }

    /**
     * A reader over a channel, with limits for untrusted input.
     *
     * @param in the stream bytes (not closed by {@link #close()})
     * @param maxDescriptorBytes largest descriptor accepted, in bytes (0: default)
     * @param maxBufferBytes largest buffer accepted, in bytes (0: default)
     * @throws IllegalArgumentException for a negative limit
     */
    public StreamReader(ReadableByteChannel in, long maxDescriptorBytes, long maxBufferBytes) {
        Objects.requireNonNull(in, "in");
        if (maxDescriptorBytes < 0 || maxBufferBytes < 0) {
            throw new IllegalArgumentException("hurray: negative stream limit (descriptor "
                    + maxDescriptorBytes + ", buffer " + maxBufferBytes + "); 0 means default");
        }
        this.in = in;
        this.ref = new NativeRef(Native.decoderNew(maxDescriptorBytes, maxBufferBytes),
                Native::decoderDestroy);
        NativeRef r = ref;
        this.cleanable = NativeRef.register(this, r::release);
    }

    /** Marks a read in progress and returns the decoder; the caller runs {@link #done}. */
    private long begin() throws IOException {
        if (closed) {
            throw new IllegalStateException("hurray: stream reader is closed");
        }
        if (busy) {
            throw new IllegalStateException(
                    "hurray: stream reader used from its own input stream during a read");
        }
        if (failure instanceof TruncatedException t) {
            throw t;
        }
        if (failure != null) {
            throw (RuntimeException) failure;
        }
        busy = true;
        return ref.ptr();
    }

    /** Ends a read; frees the decoder when {@link #close()} was called during it. */
    private void done() {
        busy = false;
        if (closed) {
            cleanable.clean();
        }
    }

    /**
     * Reads the next tensor.
     *
     * @return the tensor (the caller closes it), or null at a clean end of the stream
     * @throws IOException from the input stream
     * @throws TruncatedException (an {@code IOException}) when the stream ends inside
     *     a tensor (and again on every later call)
     * @throws FormatException for bad bytes (and again on every later call)
     * @throws HurrayException ({@link Status#NOT_APPLICABLE}) when the next item is a
     *     composite: read it with {@link #nextItem()}
     * @throws IllegalStateException when closed, or when called from this reader's own
     *     input stream during a read
     */
    public synchronized Tensor next() throws IOException {
        long dec = begin();
        try {
            long t = read(dec, false);
            return t == 0 ? null : new Tensor(t);
        } finally {
            done();
        }
    }

    /**
     * Reads the next item: a plain tensor or a composite (head and members).
     *
     * @return the item (the caller closes it), or null at a clean end of the stream
     * @throws IOException from the input stream
     * @throws TruncatedException (an {@code IOException}) when the stream ends inside
     *     an item (and again on every later call)
     * @throws FormatException for bad bytes (and again on every later call)
     * @throws IllegalStateException when closed, or when called from this reader's own
     *     input stream during a read
     */
    public synchronized Item nextItem() throws IOException {
        long dec = begin();
        try {
            long it = read(dec, true);
            return it == 0 ? null : new Item(it);
        } finally {
            done();
        }
    }

    /**
     * Feeds the decoder until it yields a tensor (or item), or the input ends. Runs
     * while {@link #busy}: a {@code close()} from the input stream is deferred, so the
     * slice {@code in.read} fills stays valid.
     *
     * @return the owned handle, or 0 at a clean end
     */
    private long read(long dec, boolean item) throws IOException {
        try {
            while (true) {
                long h = item ? Native.decoderNext(dec) : Native.decoderNextTensor(dec);
                if (h != 0) {
                    return h;
                }
                if (eof) {
                    return 0;
                }
                ByteBuffer dst = Native.decoderDemand(dec);
                int got = dst == null ? -1 : in.read(dst);
                if (got < 0) {
                    eof = true;
                    Native.decoderFinish(dec); // throws TruncatedException mid-tensor
                    continue;
                }
                Native.decoderAdvance(dec, got);
            }
        } catch (HurrayException | TruncatedException e) {
            // Truncation and bad bytes end the stream: every later read throws them
            // too. A composite refused by next() is not an error of the stream.
            if (((HurrayError) e).status() != Status.NOT_APPLICABLE) {
                failure = e;
            }
            throw e;
        }
    }

    /** @return bytes of the stream consumed so far */
    public synchronized long position() {
        if (closed) {
            throw new IllegalStateException("hurray: stream reader is closed");
        }
        return Native.decoderPosition(ref.ptr());
    }

    /**
     * Iterates over the remaining tensors; each one is the caller's to close.
     *
     * @return an iterator whose {@code next()} may throw {@link UncheckedIOException}
     *     or a {@link HurrayException}
     */
    @Override
    public Iterator<Tensor> iterator() {
        return new Iterator<>() {
            private Tensor ahead;

            @Override
            public boolean hasNext() {
                if (ahead == null) {
                    try {
                        ahead = StreamReader.this.next();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                return ahead != null;
            }

            @Override
            public Tensor next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Tensor t = ahead;
                ahead = null;
                return t;
            }
        };
    }

    /**
     * Frees the decoder; idempotent. Tensors already read stay valid. Called from the
     * input stream during a read, it takes effect when that read returns.
     */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            if (!busy) {
                cleanable.clean();
            }
        }
    }
}
