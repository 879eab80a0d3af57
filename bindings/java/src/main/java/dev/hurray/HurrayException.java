package dev.hurray;

/**
 * An unchecked library failure: carries the C status ({@link #status()}, one of
 * {@link Status}) and the library's message, which names the rule broken and the
 * byte offset ({@code "HURRAY_ERR_FORMAT: ... at byte 112"}).
 *
 * <p>Subclasses group the statuses a program branches on: {@link FormatException}
 * (bad input: a descriptor, buffer table, stream or file rule, or a limit) and
 * {@link NotFoundException} (no such tensor or KV key). Failures of the file system
 * and of cut input are checked {@link java.io.IOException}s instead
 * ({@link MissingFileException}, {@link IsDirectoryException},
 * {@link HurrayIOException}, {@link TruncatedException}); all of them implement
 * {@link HurrayError}. docs/java.md ("Errors") says which is thrown when, and why.
 */
public class HurrayException extends RuntimeException implements HurrayError {
    private static final long serialVersionUID = 1L;

    /** The C status code (negative). */
    private final int status;

    /** The OS error number, or 0. */
    private final int osError;

    /** The B.16 network code, or 0; set by the native code (errors.rs). */
    private int netCode;

    /**
     * @param status the C status code (negative)
     * @param message the library's message, {@code "<STATUS_NAME>: <detail>"}
     */
    public HurrayException(int status, String message) {
        this(status, 0, message);
    }

    /**
     * Made by the native code (errors.rs), for every unchecked library failure.
     *
     * @param status the C status code
     * @param osError the OS error number, or 0
     * @param message the library's message
     */
    HurrayException(int status, int osError, String message) {
        super(message == null || message.isEmpty() ? "status " + status : message);
        this.status = status;
        this.osError = osError;
    }

    @Override
    public int status() {
        return status;
    }

    @Override
    public int osError() {
        return osError;
    }

    @Override
    public int netCode() {
        return netCode;
    }
}
