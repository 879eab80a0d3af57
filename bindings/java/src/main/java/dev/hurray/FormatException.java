package dev.hurray;

/** Bad input: a descriptor, buffer table, stream or file rule was broken, or a limit exceeded. The message names the rule and the byte offset. */
public class FormatException extends HurrayException {
    private static final long serialVersionUID = 1L;

    /**
     * @param status the C status code
     * @param message the C ABI's message
     */
    public FormatException(int status, String message) {
        super(status, message);
    }
}
