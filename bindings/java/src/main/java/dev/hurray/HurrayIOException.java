package dev.hurray;

import java.nio.file.FileSystemException;

/**
 * The operating system refused a file operation of the library ({@link Status#IO},
 * category {@code io}): permission denied, no space left, a read or write error.
 * {@link #getFile()} is the path (null when the library had none),
 * {@link #getReason()} the library's message (status name, then the OS's words),
 * {@link #osError()} the {@code errno}. A directory given as a file is the subclass
 * {@link IsDirectoryException}.
 */
public class HurrayIOException extends FileSystemException implements HurrayError {
    private static final long serialVersionUID = 1L;

    /** The C status code. */
    private final int status;

    /** The OS error number, or 0. */
    private final int osError;

    /** The B.16 network code, or 0; set by the native code (errors.rs). */
    private int netCode;

    /**
     * Made by the native code (errors.rs).
     *
     * @param status the C status code
     * @param osError the OS error number, or 0
     * @param file the path, or null
     * @param reason the library's message without the path
     */
    HurrayIOException(int status, int osError, String file, String reason) {
        super(file, null, reason);
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
