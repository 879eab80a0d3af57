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
 *
 * <p>{@link #next()} returns the next tensor ({@link #nextItem()} the next item, which
 * may be a composite), or {@code null} at a clean end of the stream; a stream that ends inside a tensor throws {@link TruncatedException}, bad
 * bytes throw {@link FormatException}, both naming the rule and byte offset. Tensors
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
     */
    public StreamReader(InputStream in, long maxDescriptorBytes, long maxBufferBytes) {
        this.in = Channels.newChannel(Objects.requireNonNull(in, "in"));
        this.ref = new NativeRef(Native.decoderNew(maxDescriptorBytes, maxBufferBytes),
                Native::decoderDestroy);
        NativeRef r = ref;
        this.cleanable = NativeRef.CLEANER.register(this, r::release);
    }

    private long dec() {
        if (closed) {
            throw new IllegalStateException("hurray: stream reader is closed");
        }
        return ref.ptr();
    }

    /**
     * Reads the next tensor.
     *
     * @return the tensor (the caller closes it), or null at a clean end of the stream
     * @throws IOException from the input stream
     * @throws TruncatedException when the stream ends inside a tensor
     * @throws FormatException for bad bytes (reported once; the reader then fails)
     * @throws HurrayException ({@link Status#NOT_APPLICABLE}) when the next item is a
     *     composite: read it with {@link #nextItem()}
     * @throws IllegalStateException when closed
     */
    public synchronized Tensor next() throws IOException {
        long dec = dec();
        while (true) {
            long t = Native.decoderNextTensor(dec);
            if (t != 0) {
                return new Tensor(t);
            }
            if (eof) {
                return null;
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
    }

    /**
     * Reads the next item: a plain tensor or a composite (head and members).
     *
     * @return the item (the caller closes it), or null at a clean end of the stream
     * @throws IOException from the input stream
     * @throws TruncatedException when the stream ends inside an item
     * @throws FormatException for bad bytes
     */
    public synchronized Item nextItem() throws IOException {
        long dec = dec();
        while (true) {
            long it = Native.decoderNext(dec);
            if (it != 0) {
                return new Item(it);
            }
            if (eof) {
                return null;
            }
            ByteBuffer dst = Native.decoderDemand(dec);
            int got = dst == null ? -1 : in.read(dst);
            if (got < 0) {
                eof = true;
                Native.decoderFinish(dec);
                continue;
            }
            Native.decoderAdvance(dec, got);
        }
    }

    /** @return bytes of the stream consumed so far */
    public synchronized long position() {
        return Native.decoderPosition(dec());
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

    /** Frees the decoder; idempotent. Tensors already read stay valid. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            cleanable.clean();
        }
    }
}
