package dev.hurray;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.util.Objects;

/**
 * Writes tensors in the Hurray streaming format to an {@link OutputStream} or a
 * {@link WritableByteChannel}. The
 * encoder yields the descriptor bytes and then points at the tensor's own buffers,
 * which are written straight from native memory (no intermediate copy of the
 * tensor; the {@code OutputStream} API may copy through its own array).
 *
 * <p>{@link #close()} frees the native encoder and flushes, but does not close the
 * underlying stream. Use it from one thread at a time; its methods are synchronized,
 * so concurrent use is serialised, never a crash.
 *
 * <p>Re-entrant use from the output stream (code the writer calls back during
 * {@link #write}): {@code write} from there throws {@link IllegalStateException};
 * {@code close()} from there is deferred: the writer is closed at once for new calls,
 * the current item is written to its end, then the encoder is freed and the stream
 * flushed. Closing the tensor or item being written from there is safe too: the
 * writer holds it until the call returns.
 */
public final class StreamWriter implements AutoCloseable {
    private final WritableByteChannel out;
    private final OutputStream stream;
    private final NativeRef ref;
    private final Cleaner.Cleanable cleanable;
    private boolean closed;
    /** A write is in progress (the output stream may call back on this thread). */
    private boolean busy;

    /**
     * @param out where the stream bytes go (not closed by {@link #close()})
     */
    public StreamWriter(OutputStream out) {
        this(channel(Objects.requireNonNull(out, "out")), out);
    }

    /**
     * An output stream as a channel: a {@code FileOutputStream}'s own channel, else one
     * {@code out.write} per call through an array of up to 1 MiB
     * ({@link Channels#newChannel(OutputStream)} writes 8 KiB at a time).
     */
    private static WritableByteChannel channel(OutputStream out) {
        if (out.getClass() == java.io.FileOutputStream.class) {
            return ((java.io.FileOutputStream) out).getChannel();
        }
        return new WritableByteChannel() {
            private byte[] buf = new byte[8192];

            @Override
            public int write(ByteBuffer src) throws IOException {
                int n = src.remaining();
                if (n > buf.length && buf.length < (1 << 20)) {
                    buf = new byte[Math.min(1 << 20, Integer.highestOneBit(n - 1) << 1)];
                }
                n = Math.min(n, buf.length);
                src.get(buf, 0, n);
                out.write(buf, 0, n);
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
     * A writer over a channel: the tensor's buffers go from native memory to the
     * channel ({@code SocketChannel}, {@code FileChannel}, ...) with no
     * {@code byte[]} in between. {@link #close()} does not close the channel.
     *
     * @param out where the stream bytes go (blocking; not closed by {@link #close()})
     */
    public StreamWriter(WritableByteChannel out) {
        this(Objects.requireNonNull(out, "out"), null);
    }

    private StreamWriter(WritableByteChannel out, OutputStream stream) {
        this.stream = stream;
        this.out = out;
        this.ref = new NativeRef(Native.encoderNew(), Native::encoderDestroy);
        NativeRef r = ref;
        this.cleanable = NativeRef.register(this, r::release);
    }

    /** Marks a call in progress and returns the encoder; the caller runs {@link #done}. */
    private long begin() {
        if (closed) {
            throw new IllegalStateException("hurray: stream writer is closed");
        }
        if (busy) {
            throw new IllegalStateException(
                    "hurray: stream writer used from its own output stream during a write");
        }
        busy = true;
        return ref.ptr();
    }

    /** Ends a call; runs a {@link #close()} that was requested during it. */
    private void done() throws IOException {
        busy = false;
        if (closed) {
            cleanable.clean();
            flush();
        }
    }

    /**
     * Writes one tensor: its descriptor, then its buffers, each padded as the format
     * requires. The tensor stays the caller's.
     *
     * @param tensor an open tensor
     * @return bytes written for this tensor
     * @throws IOException from the output stream
     * @throws IllegalStateException when this writer or the tensor is closed, or when
     *     called from this writer's own output stream during a write
     * @throws HurrayException when the tensor cannot be streamed (a limit, a composite)
     */
    public synchronized long write(Tensor tensor) throws IOException {
        Objects.requireNonNull(tensor, "tensor");
        long enc = begin();
        long written;
        try {
            // Held until the chunks are written: closing the tensor from the output
            // stream cannot free the memory the chunks point into.
            NativeRef pinned = tensor.pin();
            try {
                written = drain(enc, Native.encoderBegin(enc, pinned.ptr()));
            } finally {
                pinned.release();
            }
        } catch (Throwable t) {
            doneAfter(t);
            throw t;
        }
        done();
        return written;
    }

    /**
     * Writes one item: a plain tensor, or a composite's head and then its members,
     * pre-order. The item stays the caller's.
     *
     * @param item an open item
     * @return bytes written for this item
     * @throws IOException from the output stream
     * @throws IllegalStateException when this writer or the item is closed, or when
     *     called from this writer's own output stream during a write
     * @throws HurrayException when the item cannot be streamed
     */
    public synchronized long write(Item item) throws IOException {
        Objects.requireNonNull(item, "item");
        long enc = begin();
        long written;
        try {
            NativeRef pinned = item.pin();
            try {
                written = drain(enc, Native.encoderBeginItem(enc, pinned.ptr()));
            } finally {
                pinned.release();
            }
        } catch (Throwable t) {
            doneAfter(t);
            throw t;
        }
        done();
        return written;
    }

    /** Runs {@link #done} after a failed call; its own error is added to {@code t}. */
    private void doneAfter(Throwable t) {
        try {
            done();
        } catch (IOException | RuntimeException e) {
            t.addSuppressed(e);
        }
    }

    /**
     * Writes the {@code n} chunks of the item begun on {@code enc}, then ends it. Runs
     * with the encoder and the item held: a re-entrant {@code close()} of either from
     * the output stream cannot free the memory a chunk views.
     */
    private long drain(long enc, long n) throws IOException {
        long written = 0;
        try {
            for (long i = 0; i < n; i++) {
                ByteBuffer chunk = Native.encoderChunk(enc, i);
                if (chunk == null) {
                    continue;
                }
                ByteBuffer ro = chunk.asReadOnlyBuffer();
                while (ro.hasRemaining()) {
                    written += out.write(ro);
                }
            }
        } finally {
            Native.encoderEnd(enc);
        }
        return written;
    }

    /** Flushes the output stream (a channel has nothing to flush). */
    private void flush() throws IOException {
        if (stream != null) {
            stream.flush();
        }
    }

    /**
     * Flushes and frees the native encoder; idempotent. The output stream stays open.
     * Called from the output stream during a {@link #write}, it takes effect when that
     * write returns.
     */
    @Override
    public synchronized void close() throws IOException {
        if (!closed) {
            closed = true;
            if (!busy) {
                cleanable.clean();
                flush();
            }
        }
    }
}
