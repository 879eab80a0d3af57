package dev.hurray;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Writes an HRRYFILE. Bytes go to a temporary file beside the destination;
 * {@link #finish()} writes index and trailer and renames it into place. Closing an
 * unfinished writer (or any failure) removes the temporary file, so a failed or
 * abandoned write leaves nothing at the destination.
 *
 * <p><b>Call {@link #finish()} before {@link #close()}: {@code close()} without
 * {@code finish()} discards everything written</b> (no file appears at the
 * destination; an existing file there is left as it was). This is the atomic-write
 * design: the file appears whole, on {@code finish()}, or not at all.
 *
 * <pre>{@code
 * try (TensorFileWriter w = TensorFileWriter.create(path)) {
 *     w.write("weights", tensor);
 *     w.putMetadata("producer", "my-app");
 *     w.finish();
 * }
 * }</pre>
 */
public final class TensorFileWriter implements AutoCloseable {
    private final NativeRef ref;
    private final Cleaner.Cleanable cleanable;
    private boolean closed;

    private TensorFileWriter(long ptr) {
        this.ref = new NativeRef(ptr, Native::writerDestroy);
        NativeRef r = ref;
        this.cleanable = NativeRef.register(this, r::release);
    }

    /**
     * A writer with the default options (4096-byte data alignment, index CRC, durable:
     * the file and its directory are fsynced on finish).
     *
     * @param path destination
     * @return the writer (close it)
     * @throws MissingFileException when the destination's directory does not exist
     * @throws IOException ({@link HurrayIOException}) when the temporary file cannot
     *     be created
     * @throws java.nio.file.ProviderMismatchException when the path belongs to a
     *     file system other than the default one (see {@link TensorFile#open})
     */
    public static TensorFileWriter create(Path path) throws IOException {
        return create(path, 0, true);
    }

    /**
     * A writer with options.
     *
     * @param path destination
     * @param dataBufferAlignment bytes, a power of two in 4096..2 MiB (0: 4096)
     * @param durable fsync the file and its directory on finish
     * @return the writer
     * @throws MissingFileException when the destination's directory does not exist
     * @throws IOException ({@link HurrayIOException}) when the temporary file cannot
     *     be created
     * @throws FormatException for an illegal alignment
     * @throws java.nio.file.ProviderMismatchException when the path belongs to a
     *     file system other than the default one (see {@link TensorFile#open})
     */
    public static TensorFileWriter create(Path path, int dataBufferAlignment, boolean durable)
            throws IOException {
        return builder(path).dataBufferAlignment(dataBufferAlignment).durable(durable).create();
    }

    /**
     * A builder for a writer with options; every option starts at its default.
     *
     * <pre>{@code
     * try (TensorFileWriter w = TensorFileWriter.builder(path).dataCrc32c(true).create()) {
     *     ...
     * }
     * }</pre>
     *
     * @param path destination
     * @return a new builder
     */
    public static Builder builder(Path path) {
        return new Builder(Objects.requireNonNull(path, "path"));
    }

    /** Collects the options of a writer; {@link #create()} opens it. */
    public static final class Builder {
        private final Path path;
        private int dataBufferAlignment;
        private boolean durable = true;
        private boolean dataCrc32c;

        private Builder(Path path) {
            this.path = path;
        }

        /**
         * @param dataBufferAlignment bytes, a power of two in 4096..2 MiB (0: 4096,
         *     the default)
         * @return this builder
         */
        public Builder dataBufferAlignment(int dataBufferAlignment) {
            this.dataBufferAlignment = dataBufferAlignment;
            return this;
        }

        /**
         * @param durable fsync the file and its directory on finish (default true;
         *     false for scratch files)
         * @return this builder
         */
        public Builder durable(boolean durable) {
            this.durable = durable;
            return this;
        }

        /**
         * Records a CRC-32C of every tensor's data in the reserved KV entry
         * {@code hurray.data_crc32c} (one uint64 per tensor in file order) when
         * finishing, so {@link TensorFile#verifyDataCrc32c()} and {@code hurray
         * validate} can check the data. Off by default: the file then stays
         * byte-identical to one written without this option. With it on, a
         * {@link TensorFileWriter#putMetadata} of that key makes
         * {@link TensorFileWriter#finish()} fail (a duplicate key).
         *
         * @param dataCrc32c record per-tensor data CRCs (default false)
         * @return this builder
         */
        public Builder dataCrc32c(boolean dataCrc32c) {
            this.dataCrc32c = dataCrc32c;
            return this;
        }

        /**
         * Creates the writer.
         *
         * @return the writer (close it)
         * @throws MissingFileException when the destination's directory does not exist
         * @throws IOException ({@link HurrayIOException}) when the temporary file
         *     cannot be created
         * @throws FormatException for an illegal alignment
         * @throws java.nio.file.ProviderMismatchException when the path belongs to a
         *     file system other than the default one (see {@link TensorFile#open})
         */
        public TensorFileWriter create() throws IOException {
            return new TensorFileWriter(Native.writerCreate(TensorFile.localPath(path),
                    dataBufferAlignment, durable, false, dataCrc32c));
        }
    }

    private synchronized long writer() {
        if (closed) {
            throw new IllegalStateException("hurray: tensor file writer is closed");
        }
        return ref.ptr();
    }

    /**
     * Writes one tensor; its buffers are read during the call and the tensor stays
     * the caller's.
     *
     * @param name unique tensor name
     * @param tensor an open tensor
     * @throws IOException ({@link HurrayIOException}) when writing fails
     * @throws HurrayException for a duplicate name or a finished writer
     *     ({@link Status#STATE})
     */
    public synchronized void write(String name, Tensor tensor) throws IOException {
        long w = writer();
        synchronized (tensor) {
            Native.writerWriteTensor(w, Objects.requireNonNull(name, "name"), tensor.handle());
        }
    }

    /**
     * Writes one item: a plain tensor, or a composite whose head gets {@code name}
     * and whose members get {@code name/0}, {@code name/1}, ... (nested:
     * {@code name/1/0}). The item stays the caller's.
     *
     * @param name unique name
     * @param item an open item
     * @throws IOException ({@link HurrayIOException}) when writing fails
     * @throws HurrayException for a duplicate name or a finished writer
     */
    public synchronized void write(String name, Item item) throws IOException {
        long w = writer();
        synchronized (item) {
            Native.writerWriteItem(w, Objects.requireNonNull(name, "name"), item.handle());
        }
    }

    /**
     * Adds a KV metadata entry. The Java type picks the KV type: {@code String},
     * {@code Long}/{@code Integer} (int64), {@link java.math.BigInteger} (uint64),
     * {@code Double}/{@code Float} (float64), {@code Boolean}, {@code byte[]},
     * {@code long[]} (int64 array), {@code BigInteger[]} (uint64 array),
     * {@code double[]}, {@code boolean[]}, {@code String[]}, {@code byte[][]}. Values
     * are copied.
     *
     * @param key unique key
     * @param value the value
     * @throws IllegalArgumentException for another Java type
     * @throws HurrayException for a duplicate key or a finished writer
     */
    public synchronized void putMetadata(String key, Object value) {
        Native.writerAddKv(writer(), Objects.requireNonNull(key, "key"),
                Objects.requireNonNull(value, "value"));
    }

    /**
     * Writes the index and trailer and renames the file into place.
     *
     * @throws IOException ({@link HurrayIOException}) when writing, syncing or the
     *     rename fails
     * @throws HurrayException ({@link Status#STATE}) when already finished
     */
    public synchronized void finish() throws IOException {
        Native.writerFinish(writer());
    }

    /**
     * Frees the writer; idempotent. <b>Without a successful {@link #finish()} first,
     * the file is discarded</b>: the temporary file is removed and nothing appears at
     * the destination.
     */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            cleanable.clean();
        }
    }
}
