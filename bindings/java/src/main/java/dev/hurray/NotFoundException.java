package dev.hurray;

/** No tensor or KV entry by that name (HURRAY_ERR_NOT_FOUND), or no such file (HURRAY_ERR_FILE_NOT_FOUND). */
public class NotFoundException extends HurrayException {
    private static final long serialVersionUID = 1L;

    /**
     * @param status the C status code
     * @param message the C ABI's message
     */
    public NotFoundException(int status, String message) {
        super(status, message);
    }
}
