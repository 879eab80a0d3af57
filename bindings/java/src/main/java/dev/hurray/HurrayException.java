package dev.hurray;

/**
 * A failed call of the C ABI: carries the C status ({@link #status()}, one of
 * {@link Status}) and the library's message, which names the rule broken and the
 * byte offset ({@code "HURRAY_ERR_FORMAT: ... at byte 112"}).
 *
 * <p>Subclasses group the statuses a program branches on:
 * {@link FormatException} (bad input: descriptor, buffer table, stream or file rules,
 * limits), {@link TruncatedException} (input ended early, a kind of bad input) and
 * {@link NotFoundException} (no such tensor, key or file). The exception is unchecked:
 * I/O errors of the Java streams a reader or writer wraps stay
 * {@link java.io.IOException}s.
 */
public class HurrayException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The C status code (negative). */
    private final int status;

    /**
     * @param status the C status code (negative)
     * @param message the C ABI's message, {@code "<STATUS_NAME>: <detail>"}
     */
    public HurrayException(int status, String message) {
        super(message == null || message.isEmpty() ? "status " + status : message);
        this.status = status;
    }

    /** @return the C status code, one of the {@link Status} constants */
    public int status() {
        return status;
    }

    /** @return the C name of {@link #status()}, e.g. {@code "HURRAY_ERR_TRUNCATED"} */
    public String statusName() {
        return Status.name(status);
    }

    /** Called by the native code: the subclass that fits {@code status}. */
    static HurrayException fromNative(int status, String message) {
        switch (status) {
            case Status.TRUNCATED:
                return new TruncatedException(status, message);
            case Status.DESCRIPTOR:
            case Status.BUFFER_MISMATCH:
            case Status.INVALID_SYNC_MODE:
            case Status.SYNC_MODE_MISMATCH:
            case Status.FORMAT:
            case Status.LIMIT:
                return new FormatException(status, message);
            case Status.NOT_FOUND:
            case Status.FILE_NOT_FOUND:
                return new NotFoundException(status, message);
            default:
                return new HurrayException(status, message);
        }
    }
}
