package dev.hurray;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.util.Objects;

/**
 * Writes tensors in the Hurray streaming format to an {@link OutputStream}. The
 * encoder yields the descriptor bytes and then points at the tensor's own buffers,
 * which are written straight from native memory (no intermediate copy of the
 * tensor; the {@code OutputStream} API may copy through its own array).
 *
 * <p>{@link #close()} frees the native encoder and flushes, but does not close the
 * underlying stream. Use it from one thread at a time; its methods are synchronized,
 * so concurrent use is serialised, never a crash.
 */
public final class StreamWriter implements AutoCloseable {
    private final WritableByteChannel out;
    private final OutputStream stream;
    private final NativeRef ref;
    private final Cleaner.Cleanable cleanable;
    private boolean closed;

    /**
     * @param out where the stream bytes go (not closed by {@link #close()})
     */
    public StreamWriter(OutputStream out) {
        this.stream = Objects.requireNonNull(out, "out");
        this.out = Channels.newChannel(out);
        this.ref = new NativeRef(Native.encoderNew(), Native::encoderDestroy);
        NativeRef r = ref;
        this.cleanable = NativeRef.CLEANER.register(this, r::release);
    }

    private long enc() {
        if (closed) {
            throw new IllegalStateException("hurray: stream writer is closed");
        }
        return ref.ptr();
    }

    /**
     * Writes one tensor: its descriptor, then its buffers, each padded as the format
     * requires. The tensor stays the caller's.
     *
     * @param tensor an open tensor
     * @return bytes written for this tensor
     * @throws IOException from the output stream
     * @throws IllegalStateException when this writer or the tensor is closed
     * @throws HurrayException when the tensor cannot be streamed (a limit, a composite)
     */
    public synchronized long write(Tensor tensor) throws IOException {
        long enc = enc();
        long written = 0;
        synchronized (tensor) {
            long n = Native.encoderBegin(enc, tensor.handle());
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
        }
        return written;
    }

    /**
     * Writes one item: a plain tensor, or a composite's head and then its members,
     * pre-order. The item stays the caller's.
     *
     * @param item an open item
     * @return bytes written for this item
     * @throws IOException from the output stream
     * @throws IllegalStateException when this writer or the item is closed
     * @throws HurrayException when the item cannot be streamed
     */
    public synchronized long write(Item item) throws IOException {
        long enc = enc();
        long written = 0;
        synchronized (item) {
            long n = Native.encoderBeginItem(enc, item.handle());
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
        }
        return written;
    }

    /** Flushes and frees the native encoder; idempotent. The output stream stays open. */
    @Override
    public synchronized void close() throws IOException {
        if (!closed) {
            closed = true;
            cleanable.clean();
            stream.flush();
        }
    }
}
