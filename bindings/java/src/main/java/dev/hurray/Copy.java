package dev.hurray;

/**
 * Whether {@link Tensor#wrap(Descriptor, Copy, Runnable, java.nio.ByteBuffer...)} and
 * {@link Tensor#dense(ElementType, java.nio.ByteBuffer, Copy, long...)} may copy the
 * caller's memory (ARCHITECTURE decision 5: a tensor never declares more alignment
 * than its memory has).
 *
 * <p>A direct buffer that starts at an address aligned as its buffer-table entry
 * declares (64 bytes for {@link Descriptor#dense}) is always wrapped without copying:
 * the tensor is that memory. {@link Tensor#allocate(long)} gives such buffers;
 * {@code ByteBuffer.allocateDirect} and buffers from other libraries (ONNX Runtime's
 * {@code OnnxTensor.getByteBuffer()}, for instance) usually are not aligned.
 */
public enum Copy {
    /**
     * Zero-copy when the memory is aligned as declared; otherwise one copy into
     * aligned native memory (the tensor is then that copy: later writes to the
     * caller's buffer do not reach it). Heap and read-only buffers are copied too.
     * The default.
     *
     * <p>It still refuses, with a {@link HurrayException}
     * ({@link Status#INVALID_ARGUMENT}), what a copy cannot make right: a misaligned
     * buffer whose entry declares more alignment than a copy promises (64 bytes, or
     * the page size for a buffer of 1 MiB or more), and any buffer that would need a
     * copy (misaligned, heap or read-only) when its entry is tagged for a device
     * other than the CPU: device memory is never copied.
     */
    IF_NEEDED,
    /**
     * Zero-copy or an error, never a silent copy: a misaligned direct buffer is
     * refused with a {@link HurrayException} ({@link Status#INVALID_ARGUMENT}), a heap
     * or read-only buffer with an {@link IllegalArgumentException} saying how to copy.
     */
    NEVER
}
