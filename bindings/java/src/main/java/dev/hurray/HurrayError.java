package dev.hurray;

/**
 * Implemented by every exception the library throws, checked or not, so one
 * {@code catch} clause or {@code instanceof} test reaches the status whatever the
 * exception's JDK family: {@link HurrayException} and its subclasses (unchecked),
 * {@link MissingFileException} (a {@link java.nio.file.NoSuchFileException}),
 * {@link HurrayIOException} and {@link IsDirectoryException} (
 * {@link java.nio.file.FileSystemException}s) and {@link TruncatedException} (an
 * {@link java.io.EOFException}).
 *
 * <p>Which type a failure becomes is decided in one place, from the status's error
 * category (docs/java.md, "Errors").
 */
public interface HurrayError {
    /** @return the C status code (negative), one of the {@link Status} constants */
    int status();

    /**
     * @return the operating system's error number ({@code errno}, e.g. 2 for
     *     {@code ENOENT}, 21 for {@code EISDIR} on Linux) when the OS reported the
     *     error, else 0
     */
    int osError();

    /**
     * @return the network protocol's {@code ERROR} code (streams-and-transport.md
     *     B.16) when a server's refusal caused the error, e.g. 2 for
     *     {@code UNKNOWN_TENSOR} ({@link NetClient}), else 0
     */
    default int netCode() {
        return 0;
    }

    /** @return the C name of {@link #status()}, e.g. {@code "HURRAY_ERR_TRUNCATED"} */
    default String statusName() {
        return Status.name(status());
    }

    /**
     * @return the error category of {@link #status()} ({@code "not_found"},
     *     {@code "io"}, {@code "truncated"}, {@code "format"}, ...; see
     *     {@link Status#category(int)})
     */
    default String category() {
        return Status.category(status());
    }
}
