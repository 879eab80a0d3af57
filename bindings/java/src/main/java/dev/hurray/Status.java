package dev.hurray;

/**
 * The status codes of the C ABI ({@code HurrayStatus}), carried by
 * {@link HurrayException#status()}. Values are stable once published.
 */
public final class Status {
    private Status() {}

    /** Success. */
    public static final int OK = 0;
    /** A required pointer was NULL (or a required length 0). */
    public static final int NULL_POINTER = -1;
    /** An argument is out of range, or a handle of the wrong kind. */
    public static final int INVALID_ARGUMENT = -2;
    /** An ABI version differs from 10. */
    public static final int ABI_VERSION = -3;
    /** An index past the end. */
    public static final int OUT_OF_RANGE = -4;
    /** A caller array is short. */
    public static final int BUFFER_TOO_SMALL = -5;
    /** The accessor does not apply (layout, absent section, KV type, composite). */
    public static final int NOT_APPLICABLE = -6;
    /** A handle destroyed twice (debug builds of the library). */
    public static final int DOUBLE_DESTROY = -7;
    /** A call the object's state does not allow (finished writer, ...). */
    public static final int STATE = -8;
    /** No tensor or KV entry by that name. */
    public static final int NOT_FOUND = -9;
    /** A descriptor did not decode or validate. */
    public static final int DESCRIPTOR = -20;
    /** Buffers do not match the buffer table (count, size, placement). */
    public static final int BUFFER_MISMATCH = -21;
    /** A reserved sync mode. */
    public static final int INVALID_SYNC_MODE = -22;
    /** The sync payload does not match the sync mode. */
    public static final int SYNC_MODE_MISMATCH = -23;
    /** A stream or file rule was broken (the message names it and the offset). */
    public static final int FORMAT = -24;
    /** Input ended early (truncated stream or file). */
    public static final int TRUNCATED = -25;
    /** A configured limit for untrusted input was exceeded. */
    public static final int LIMIT = -26;
    /** The operating system reported an error. */
    public static final int IO = -40;
    /** A file or directory does not exist. */
    public static final int FILE_NOT_FOUND = -41;
    /** The library panicked; the process continues. */
    public static final int INTERNAL_PANIC = -100;

    /**
     * The C name of a status ({@code "HURRAY_ERR_TRUNCATED"}), or
     * {@code "HURRAY_UNKNOWN_STATUS"}.
     *
     * @param status a status code
     * @return its name, never null
     */
    public static String name(int status) {
        return Native.statusName(status);
    }
}
