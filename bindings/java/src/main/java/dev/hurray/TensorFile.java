package dev.hurray;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * An HRRYFILE opened for reading: memory-mapped (private, copy-on-write) and
 * validated at open (header, trailer, index and its CRC, KV, every descriptor), so
 * lookups cannot fail on file content afterwards.
 *
 * <p>Tensors are zero-copy views into the mapping and <em>outlive the reader</em>:
 * each holds the mapping, which goes away with the last of them. The mapping is
 * private and writable (copy-on-write): {@link Tensor#writableBuffer} views may be
 * written; a write costs a copy of the touched pages, is seen by every tensor from
 * this {@code TensorFile} (they share its mapping), and never reaches the file on disk.
 * The file must not be truncated or rewritten in place while its tensors live.
 *
 * <p>A {@code TensorFile} is safe to share between threads, and reads run
 * concurrently: no lock is taken (each call holds the native reader through an
 * atomic count, so {@link #close()} from another thread waits for no one and frees
 * the reader after the last running call). Calls after {@code close()} throw
 * {@link IllegalStateException}.
 *
 * <p>KV metadata values are Java objects by type: {@code String}, {@code Long}
 * (int64), {@link java.math.BigInteger} (uint64), {@code Double}, {@code Boolean},
 * {@code byte[]}, and arrays {@code long[]}, {@code BigInteger[]}, {@code double[]},
 * {@code boolean[]}, {@code String[]}, {@code byte[][]}.
 */
public final class TensorFile implements AutoCloseable {
    /**
     * File-level facts; offsets and sizes in bytes.
     *
     * @param versionMajor container major version
     * @param versionMinor container minor version
     * @param crcVerified true when the index CRC-32C was present and matched
     * @param flags {@code file_flags}
     * @param dataBufferAlignment every data buffer starts at a multiple of it
     * @param indexCrc32c the stored index CRC (0 when absent)
     * @param tensorCountHint the header's hint (-1: unknown)
     * @param fileLength file size
     * @param tensorCount tensors in the index
     * @param kvCount KV entries
     */
    public record Info(int versionMajor, int versionMinor, boolean crcVerified, int flags,
            int dataBufferAlignment, int indexCrc32c, long tensorCountHint, long fileLength,
            long tensorCount, long kvCount) {}

    /** Stripes of {@link #holds}: twice the CPUs, a power of two in 2..64. */
    private static final int STRIPES = Math.min(64,
            Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors()) * 4 - 1));
    /** Longs between two stripes' counters: 128 bytes, so no two share a cache line. */
    private static final int PAD = 16;

    private final NativeRef ref;
    private final Cleaner.Cleanable cleanable;
    /** Set once by {@link #close()}; read without a lock by every accessor. */
    private volatile boolean closed;
    /**
     * Calls in flight, striped by thread ({@link #reader()}, {@link #done()}): each
     * call touches only its thread's counter, so threads sharing this reader do not
     * bounce one cache line (a single shared count did, twice a call).
     */
    private final AtomicLongArray holds = new AtomicLongArray(STRIPES * PAD);

    private TensorFile(long ptr) {
        this.ref = new NativeRef(ptr, Native::fileDestroy);
        NativeRef r = ref;
        this.cleanable = NativeRef.register(this, r::release);
    }

    /**
     * Opens, maps and validates a file.
     *
     * <p>Failures of the file system and a cut file are checked {@link IOException}s
     * that name the path; a file that breaks a rule of the format is the unchecked
     * {@link FormatException}. Every one of them is a {@link HurrayError}.
     *
     * @param path the file
     * @return the reader (close it)
     * @throws MissingFileException (a {@link java.nio.file.NoSuchFileException}) when
     *     the file does not exist
     * @throws IsDirectoryException (a {@link java.nio.file.FileSystemException}) when
     *     the path is a directory
     * @throws TruncatedException (an {@link java.io.EOFException}) when the file is
     *     cut short, empty included ("Truncated at byte N")
     * @throws HurrayIOException (a {@link java.nio.file.FileSystemException}) for
     *     other system errors, with the OS error number
     * @throws IOException the family of the four above
     * @throws FormatException when it breaks a rule of the format (message names the
     *     path, the rule and byte offset)
     * @throws java.nio.file.ProviderMismatchException when the path belongs to a file
     *     system other than the default one (a zip file system, for one): the library
     *     opens and maps local files only
     */
    public static TensorFile open(Path path) throws IOException {
        return new TensorFile(Native.fileOpen(localPath(path)));
    }

    /**
     * The string the native library opens for a path: the path's own text when it
     * belongs to the default (local) file system.
     *
     * @param path a path; null is refused with a NullPointerException
     * @return its text, an OS path
     * @throws java.nio.file.ProviderMismatchException when the path belongs to
     *     another file system; the message names that file system's provider (its
     *     URI scheme), since the text of such a path means nothing to the OS
     */
    static String localPath(Path path) {
        java.util.Objects.requireNonNull(path, "path");
        java.nio.file.FileSystem fs = path.getFileSystem();
        if (fs != java.nio.file.FileSystems.getDefault()) {
            throw new java.nio.file.ProviderMismatchException("hurray: path " + path
                    + " belongs to the \"" + fs.provider().getScheme()
                    + "\" file system provider; only paths of the default file system"
                    + " can be opened (copy the file out first)");
        }
        return path.toString();
    }

    /**
     * Holds the native reader for one call (release it with {@link #done()} on the
     * same thread). Reads take no lock: the native reader is immutable after open and
     * safe to share between threads, so any number of them run at once; a hold only
     * keeps a concurrent {@link #close()} from destroying the reader under a running
     * call (the last call to end after {@code close()} destroys it).
     *
     * <p>Why it is safe: {@code closed} and the counters are volatile (sequentially
     * consistent). A call counts itself, then reads {@code closed}; {@code close()}
     * sets {@code closed}, then sums the counters and destroys only at 0. So either
     * the sum sees this call's count (and the call's {@code done()} destroys later),
     * or the count came after {@code closed} was set and the call sees it and backs
     * out without touching the reader.
     */
    private long reader() {
        if (closed) {
            throw new IllegalStateException("hurray: tensor file is closed");
        }
        int at = stripe();
        holds.incrementAndGet(at);
        if (closed) {
            leave(at);
            throw new IllegalStateException("hurray: tensor file is closed");
        }
        return ref.ptr();
    }

    /** Ends a call begun with {@link #reader()} (on the same thread). */
    private void done() {
        leave(stripe());
    }

    /** This thread's counter in {@link #holds}. */
    private static int stripe() {
        return (int) (Thread.currentThread().getId() & (STRIPES - 1)) * PAD;
    }

    private void leave(int at) {
        holds.decrementAndGet(at);
        if (closed) {
            destroyIfIdle();
        }
    }

    /** After {@code closed} is set: destroys the reader once no call holds it. */
    private void destroyIfIdle() {
        for (int i = 0; i < STRIPES; i++) {
            if (holds.get(i * PAD) != 0) {
                return; // that call's done() comes back here
            }
        }
        cleanable.clean(); // runs the release once, however many threads get here
    }

    /** @return the file facts */
    public Info info() {
        long r = reader();
        try {
            return Native.fileInfo(r);
        } finally {
            done();
        }
    }

    /**
     * Checks every tensor's data against the CRC-32C the writer recorded (see
     * {@link TensorFileWriter.Builder#dataCrc32c}). The file's trailer CRC covers only
     * its index, so this is the way to notice a flipped data byte. Reads every data
     * byte once (opening never does); nothing is kept.
     *
     * <p>The values live in the reserved KV entry {@code hurray.data_crc32c} (one
     * uint64 per tensor in file order), which {@link #metadataKeys()} lists and
     * readers that do not know it ignore.
     *
     * @return true when every tensor's data matched its recorded CRC-32C; false when
     *     the file records no data CRC (its data cannot be checked)
     * @throws FormatException (rule {@code DataCrcMismatch}) when a tensor's data
     *     differs (the message names the tensor, both CRC values and the byte offset
     *     of its data) or the entry is malformed (not one uint64 per tensor)
     */
    public boolean verifyDataCrc32c() {
        long r = reader();
        try {
            return Native.fileVerifyDataCrc32c(r);
        } finally {
            done();
        }
    }

    /** @return the tensor names, in index order */
    public List<String> names() {
        long r = reader();
        try {
            return List.of(Native.fileNames(r));
        } finally {
            done();
        }
    }

    /**
     * The named tensor, a view of the (copy-on-write) mapping (no copy). It stays
     * valid after this reader is closed.
     *
     * @param name tensor name
     * @return the tensor (the caller closes it)
     * @throws NotFoundException when there is no such tensor
     * @throws HurrayException for a name the reader cannot give as one tensor; read
     *     composites with {@link #item(String)}
     */
    public Tensor tensor(String name) {
        long r = reader();
        try {
            return new Tensor(Native.fileTensor(r, Objects.requireNonNull(name, "name")));
        } finally {
            done();
        }
    }

    /**
     * The named item: a plain tensor, or a composite assembled with its members.
     * Views of the (copy-on-write) mapping; it stays valid after this reader is closed.
     *
     * @param name the item's (top-level or member) name
     * @return the item (the caller closes it)
     * @throws NotFoundException when there is no such tensor
     */
    public Item item(String name) {
        long r = reader();
        try {
            return new Item(Native.fileItem(r, Objects.requireNonNull(name, "name")));
        } finally {
            done();
        }
    }

    /**
     * The named tensor's descriptor.
     *
     * @param name tensor name
     * @return its descriptor
     * @throws NotFoundException when there is no such tensor
     */
    public Descriptor descriptor(String name) {
        try (Tensor t = tensor(name)) {
            return t.descriptor();
        }
    }

    /** @return the KV keys, in file order */
    public List<String> metadataKeys() {
        long r = reader();
        try {
            return List.of(Native.fileKvKeys(r));
        } finally {
            done();
        }
    }

    /**
     * One KV value (see the class comment for the Java types).
     *
     * @param key the key
     * @return its value, a fresh copy
     * @throws NotFoundException when there is no such key
     * @throws HurrayException ({@link Status#LIMIT}) when the value is an array of
     *     more than 1,048,576 elements (the library's bound on what a whole-value read
     *     materialises from an untrusted file, the same in every binding): read it
     *     with {@link #metadataRange}
     */
    public Object metadata(String key) {
        long r = reader();
        try {
            return Native.fileKv(r, Objects.requireNonNull(key, "key"));
        } finally {
            done();
        }
    }

    /**
     * The length of one KV value: the number of elements of an array, of bytes of
     * a string (UTF-8) or byte value, 1 for other scalars.
     *
     * @param key the key
     * @return its length
     * @throws NotFoundException when there is no such key
     */
    public long metadataLength(String key) {
        long r = reader();
        try {
            return Native.fileKvLength(r, Objects.requireNonNull(key, "key"));
        } finally {
            done();
        }
    }

    /**
     * Elements {@code [offset, offset + count)} of a KV array, typed as
     * {@link #metadata(String)} types a whole array ({@code String[]},
     * {@code boolean[]}, ...). This reads a huge array a window at a time: a whole
     * {@code String[]} costs a reference per element, and a {@code String} of its
     * own (some 40 bytes) per non-empty element, several times the 4-byte length
     * prefix plus the bytes the file holds for a short string; a window costs only
     * its elements.
     *
     * @param key the key
     * @param offset first element
     * @param count number of elements
     * @return a fresh copy of the elements
     * @throws NotFoundException when there is no such key
     * @throws HurrayException ({@link Status#NOT_APPLICABLE}) when the value is not
     *     an array, ({@link Status#OUT_OF_RANGE}) when the window passes its end
     */
    public Object metadataRange(String key, long offset, int count) {
        long r = reader();
        try {
            return Native.fileKvRange(r, Objects.requireNonNull(key, "key"), offset, count);
        } finally {
            done();
        }
    }

    /** @return every KV entry, in file order (values are copies) */
    public Map<String, Object> metadata() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String k : metadataKeys()) {
            m.put(k, metadata(k));
        }
        return m;
    }

    /** Closes the reader; idempotent. Tensors it returned stay valid. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            destroyIfIdle();
        }
    }
}
