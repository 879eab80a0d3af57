package dev.hurray;

import java.io.EOFException;

/**
 * A file or stream ended early: inside the header, a descriptor, a buffer, the index
 * or a composite ({@link Status#TRUNCATED}, category {@code truncated}). A checked
 * {@link EOFException}, as the JDK reports input that ends before the data it
 * announced; the message starts with the status name, names the byte offset
 * ({@code "Truncated at byte 57"}) and, for a file, the path.
 */
public class TruncatedException extends EOFException implements HurrayError {
    private static final long serialVersionUID = 1L;

    /** The C status code. */
    private final int status;

    /**
     * Made by the native code (errors.rs).
     *
     * @param status the C status code
     * @param osError the OS error number (always 0 for truncation)
     * @param message the library's message
     */
    TruncatedException(int status, int osError, String message) {
        super(message);
        this.status = status;
    }

    @Override
    public int status() {
        return status;
    }

    @Override
    public int osError() {
        return 0;
    }
}
