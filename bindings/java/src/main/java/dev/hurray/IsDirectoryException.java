package dev.hurray;

/**
 * A directory was given where a file was expected ({@code EISDIR}): a
 * {@link java.nio.file.FileSystemException} whose message reads
 * {@code "<path>: HURRAY_ERR_IO: Is a directory ..."}.
 */
public class IsDirectoryException extends HurrayIOException {
    private static final long serialVersionUID = 1L;

    /** Made by the native code (errors.rs). */
    IsDirectoryException(int status, int osError, String file, String reason) {
        super(status, osError, file, reason);
    }
}
