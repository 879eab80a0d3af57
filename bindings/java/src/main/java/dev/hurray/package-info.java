/**
 * Hurray tensors in Java.
 *
 * <ul>
 *   <li>{@link dev.hurray.Tensor}: one tensor (a descriptor and its buffers), made over
 *       the caller's memory ({@link dev.hurray.Tensor#wrap}, zero-copy when aligned,
 *       see {@link dev.hurray.Copy}) or read from a stream or file; its views are
 *       direct {@link java.nio.ByteBuffer}s over native memory.</li>
 *   <li>{@link dev.hurray.StreamReader} / {@link dev.hurray.StreamWriter}: the streaming
 *       format over an {@link java.io.InputStream} / {@link java.io.OutputStream} or a
 *       channel (a {@code SocketChannel} reads straight into the tensor's memory).</li>
 *   <li>{@link dev.hurray.TensorFile} / {@link dev.hurray.TensorFileWriter}: HRRYFILE,
 *       memory-mapped; one {@code TensorFile} may be shared by many threads.</li>
 *   <li>{@link dev.hurray.Descriptor}, {@link dev.hurray.ElementType},
 *       {@link dev.hurray.Layout}, {@link dev.hurray.Item} (composites).</li>
 *   <li>Errors: every library error implements {@link dev.hurray.HurrayError};
 *       file-system ones are the JDK's {@link java.io.IOException} types
 *       ({@link java.nio.file.NoSuchFileException}, {@link java.io.EOFException},
 *       ...).</li>
 * </ul>
 *
 * <p>Every object owning native memory is {@link java.lang.AutoCloseable}: close it
 * (try-with-resources); a {@link java.lang.ref.Cleaner} frees what nobody closed.
 */
package dev.hurray;
