package dev.hurray;

/**
 * Bad input (categories {@code format} and {@code limit}): a descriptor, buffer
 * table, buffer content, stream or file rule was broken, or a configured limit for
 * untrusted input was exceeded. The message names the rule and the byte offset (and
 * the file, for a file being opened). Unchecked, like the other
 * {@link HurrayException}s: the same failures come from in-memory values
 * ({@link Descriptor#decode}, tensors built in memory) as from files.
 *
 * <p>Input that merely ends early is a {@link TruncatedException} when it is read
 * from a file or stream; an in-memory value cut short (a descriptor's bytes) is a
 * {@code FormatException} with {@link Status#TRUNCATED}.
 */
public class FormatException extends HurrayException {
    private static final long serialVersionUID = 1L;

    /**
     * @param status the C status code
     * @param message the library's message
     */
    public FormatException(int status, String message) {
        super(status, message);
    }

    /** Made by the native code (errors.rs). */
    FormatException(int status, int osError, String message) {
        super(status, osError, message);
    }
}
