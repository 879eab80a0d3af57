package dev.hurray;

/**
 * No tensor or KV entry by that name ({@link Status#NOT_FOUND}). A missing
 * <em>file</em> is a {@link MissingFileException} (a checked
 * {@link java.nio.file.NoSuchFileException}) instead.
 */
public class NotFoundException extends HurrayException {
    private static final long serialVersionUID = 1L;

    /**
     * @param status the C status code
     * @param message the library's message
     */
    public NotFoundException(int status, String message) {
        super(status, message);
    }

    /** Made by the native code (errors.rs). */
    NotFoundException(int status, int osError, String message) {
        super(status, osError, message);
    }
}
