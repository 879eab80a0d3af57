package dev.hurray;

import java.nio.file.NoSuchFileException;

/**
 * The file (or, for a writer, its directory) does not exist
 * ({@link Status#FILE_NOT_FOUND}, category {@code not_found}): a
 * {@link NoSuchFileException}, as {@link java.nio.file.Files} reports it, that is
 * also a {@link HurrayError}. {@link #getFile()} is the path; the message reads
 * {@code "<path>: HURRAY_ERR_FILE_NOT_FOUND: ..."}.
 */
public class MissingFileException extends NoSuchFileException implements HurrayError {
    private static final long serialVersionUID = 1L;

    /** The C status code. */
    private final int status;

    /** The OS error number, or 0. */
    private final int osError;

    /**
     * Made by the native code (errors.rs).
     *
     * @param status the C status code
     * @param osError the OS error number, or 0
     * @param file the path
     * @param reason the library's message without the path
     */
    MissingFileException(int status, int osError, String file, String reason) {
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
}
