package dev.hurray;

/** Input ended early: a stream or file stopped inside a tensor or a composite (HURRAY_ERR_TRUNCATED). */
public class TruncatedException extends FormatException {
    private static final long serialVersionUID = 1L;

    /**
     * @param status the C status code
     * @param message the C ABI's message
     */
    public TruncatedException(int status, String message) {
        super(status, message);
    }
}
