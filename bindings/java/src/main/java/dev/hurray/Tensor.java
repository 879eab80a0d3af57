package dev.hurray;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.Objects;

/**
 * A tensor: one {@code HurrayTensor} handle of the C ABI, owning a descriptor and
 * its buffers. It comes from a {@link StreamReader}, a {@link TensorFile}, or wraps
 * the caller's own memory ({@link #wrap}, {@link #dense}; zero-copy when aligned, see
 * {@link Copy}).
 *
 * <h2>Lifetime</h2>
 * Close it (try-with-resources); a {@link java.lang.ref.Cleaner} releases a tensor
 * nobody closed once it is unreachable, as a safety net. Views ({@link #buffer},
 * {@link #floats}, ...) are direct {@link ByteBuffer}s over the tensor's memory, not
 * copies; each view (and every duplicate, slice or typed view of it) keeps the memory
 * alive: the native tensor is destroyed when the tensor is closed (or collected)
 * <em>and</em> no view is reachable any more. So a view never dangles, and
 * {@code close()} frees the memory at once when no view was taken. Using the tensor
 * itself after {@code close()} throws {@link IllegalStateException}.
 *
 * <p>Views are little-endian; {@code slice()} and {@code duplicate()} of a view are
 * big-endian again, as in standard Java: re-apply {@code order(LITTLE_ENDIAN)}. A
 * tensor is used by one thread at a time (its methods are synchronized); release of
 * the native memory may happen on any thread.
 */
public final class Tensor implements AutoCloseable {
    private final NativeRef ref;
    private final Cleaner.Cleanable cleanable;
    /** Built from the native descriptor on first use (most readers only view bytes). */
    private Descriptor descriptor;
    /** The descriptor's bytes, kept at close when it was never built. */
    private byte[] closedDescriptorBytes;
    private final ByteBuffer[] roots;
    private boolean closed;

    /**
     * Takes ownership of an owned {@code HurrayTensor *}. Every tensor's memory is
     * writable: a stream tensor owns its allocation, a producer's tensor is the
     * producer's memory, and a file tensor views a private copy-on-write mapping
     * (hurray-io maps files {@code MAP_PRIVATE}, {@code PROT_READ | PROT_WRITE}).
     */
    Tensor(long ptr) {
        this(ptr, null);
    }

    /**
     * A tensor borrowed from {@code parent} (an item's tensor): it holds the parent
     * until it and its views are gone, and destroys nothing itself.
     */
    Tensor(long ptr, NativeRef parent) {
        if (parent != null) {
            parent.retain();
        }
        int buffers;
        try {
            buffers = Native.tensorBufferCount(ptr);
        } catch (RuntimeException | Error e) {
            if (parent != null) {
                parent.release();
            } else {
                Native.tensorDestroy(ptr);
            }
            throw e;
        }
        this.roots = new ByteBuffer[buffers];
        this.ref = parent == null ? new NativeRef(ptr, Native::tensorDestroy)
                : new NativeRef(ptr, p -> parent.release());
        NativeRef r = this.ref; // the cleaning action must not capture `this`
        this.cleanable = NativeRef.register(this, r::release);
    }

    /**
     * Wraps the caller's buffers in a tensor, zero-copy when it can
     * ({@link Copy#IF_NEEDED}): the descriptor's buffer {@code i} is {@code buffers[i]},
     * from its position to its limit. A direct, writable buffer that starts at an
     * address aligned as its buffer-table entry says (64 bytes for
     * {@link Descriptor#dense}; see {@link #allocate(long)}) becomes the tensor's memory
     * without copying, and is held (a JNI global reference) until the last native
     * handle that needs it lets go, which may be after {@link #close()} (a stream
     * writer holds it while it writes) and may be on another thread. Any other buffer
     * (misaligned, such as most {@code ByteBuffer.allocateDirect} or ONNX Runtime
     * buffers; on the Java heap; read-only) is copied once into aligned memory.
     *
     * @param descriptor the descriptor; buffer count and sizes must match
     * @param buffers one buffer per buffer-table entry
     * @return the tensor
     * @throws HurrayException when the buffers do not match the buffer table
     *     ({@link Status#BUFFER_MISMATCH})
     */
    public static Tensor wrap(Descriptor descriptor, ByteBuffer... buffers) {
        return wrap(descriptor, Copy.IF_NEEDED, null, buffers);
    }

    /**
     * Like {@link #wrap(Descriptor, ByteBuffer...)}, and runs {@code onRelease} exactly
     * once when the native library no longer needs the buffers (possibly on another
     * thread, such as the Cleaner's; at once when every buffer was copied). Not run if
     * this method throws.
     *
     * @param descriptor the descriptor
     * @param onRelease run once after the last native use of the buffers; may be null
     * @param buffers one buffer per buffer-table entry
     * @return the tensor
     */
    public static Tensor wrap(Descriptor descriptor, Runnable onRelease, ByteBuffer... buffers) {
        return wrap(descriptor, Copy.IF_NEEDED, onRelease, buffers);
    }

    /**
     * Like {@link #wrap(Descriptor, Runnable, ByteBuffer...)}, choosing whether a
     * buffer that cannot be wrapped as it is may be copied. With {@link Copy#NEVER}
     * the tensor is always the caller's memory, or this method throws.
     *
     * @param descriptor the descriptor
     * @param copy {@link Copy#IF_NEEDED} (copy what cannot be wrapped) or
     *     {@link Copy#NEVER} (refuse it)
     * @param onRelease run once after the last native use of the buffers; may be null
     * @param buffers one buffer per buffer-table entry
     * @return the tensor
     * @throws IllegalArgumentException with {@link Copy#NEVER}, for a heap or
     *     read-only buffer (the message says how to copy it)
     * @throws HurrayException with {@link Copy#NEVER}, for a direct buffer not aligned
     *     as its buffer-table entry requires ({@link Status#INVALID_ARGUMENT}, naming
     *     the buffer and the alignment); with either policy, for a heap or read-only
     *     buffer whose entry is tagged for a device other than the CPU, or a misaligned
     *     one on such a device (device memory is never copied), and with
     *     {@link Copy#IF_NEEDED} for a misaligned buffer whose entry declares more
     *     alignment than a copy promises (all {@link Status#INVALID_ARGUMENT}); for
     *     buffers that do not match the buffer table ({@link Status#BUFFER_MISMATCH})
     */
    public static Tensor wrap(Descriptor descriptor, Copy copy, Runnable onRelease,
            ByteBuffer... buffers) {
        Objects.requireNonNull(descriptor, "descriptor");
        Objects.requireNonNull(copy, "copy");
        ByteBuffer[] views = new ByteBuffer[buffers.length];
        for (int i = 0; i < buffers.length; i++) {
            ByteBuffer b = Objects.requireNonNull(buffers[i], "buffer " + i);
            if (!b.isDirect() && !b.hasRemaining()) {
                views[i] = allocate(0); // nothing to copy
            } else if (!b.isDirect() || b.isReadOnly()) {
                // JNI cannot reach heap memory, and cannot tell a read-only direct
                // buffer (the tensor's views would be writable): such a buffer is
                // copied here, into aligned memory, or refused.
                String what = b.isDirect() ? "read-only" : "a heap ByteBuffer (not direct)";
                int device = i < descriptor.bufferCount()
                        ? descriptor.buffer(i).deviceTag() : Descriptor.BufferEntry.DEVICE_CPU;
                if (device != Descriptor.BufferEntry.DEVICE_CPU) {
                    // A copy would be host memory tagged for the device: never made
                    // (as the library never copies device memory it cannot align).
                    throw new HurrayException(Status.INVALID_ARGUMENT,
                            Status.name(Status.INVALID_ARGUMENT) + ": buffer " + i + " is "
                            + what + " and its buffer-table entry is tagged for device "
                            + Native.deviceName(device) + "; device memory is never "
                            + "copied: pass a direct, writable ByteBuffer over that "
                            + "device's memory");
                }
                if (copy == Copy.NEVER) {
                    throw new IllegalArgumentException("hurray: buffer " + i + " is " + what
                            + ", which cannot become a tensor without a copy; pass "
                            + "Copy.IF_NEEDED, or copy it yourself: "
                            + "Tensor.allocate(b.remaining()).put(b.duplicate()).flip()");
                }
                ByteBuffer c = allocate(b.remaining());
                c.put(b.duplicate()).flip();
                views[i] = c;
            } else {
                views[i] = b.slice();
            }
        }
        return new Tensor(Native.tensorNew(descriptor.bytesUnsafe(), views, onRelease,
                copy == Copy.NEVER));
    }

    /**
     * A row-major tensor over one buffer holding exactly the contiguous bytes of
     * {@code shape} (see {@link Descriptor#dense}): zero-copy when {@code data} is a
     * direct, writable, 64-byte-aligned buffer ({@link #allocate(long)}), otherwise
     * one copy (see {@link #wrap(Descriptor, ByteBuffer...)}).
     *
     * @param type element type
     * @param data the bytes, from position to limit
     * @param shape dimensions, in elements
     * @return the tensor
     * @throws HurrayException when {@code data} is not the tensor's size in bytes
     */
    public static Tensor dense(ElementType type, ByteBuffer data, long... shape) {
        return wrap(Descriptor.dense(type, shape), data);
    }

    /**
     * As {@link #dense(ElementType, ByteBuffer, long...)}, choosing whether
     * {@code data} may be copied: {@code Tensor.dense(FLOAT32, onnxBuffer, Copy.NEVER,
     * 2, 3)} is the caller's memory or an error.
     *
     * @param type element type
     * @param data the bytes, from position to limit
     * @param copy {@link Copy#IF_NEEDED} or {@link Copy#NEVER}
     * @param shape dimensions, in elements
     * @return the tensor
     * @throws IllegalArgumentException with {@link Copy#NEVER}, for a heap or
     *     read-only buffer
     * @throws HurrayException with {@link Copy#NEVER}, for a buffer not 64-byte
     *     aligned ({@link Status#INVALID_ARGUMENT}); when {@code data} is not the
     *     tensor's size in bytes
     */
    public static Tensor dense(ElementType type, ByteBuffer data, Copy copy, long... shape) {
        return wrap(Descriptor.dense(type, shape), copy, null, data);
    }

    /**
     * A direct, zeroed, little-endian buffer of {@code byteSize} bytes whose first byte
     * is 64-byte aligned, as the format wants.
     *
     * @param byteSize size in bytes, at most {@code Integer.MAX_VALUE - 128}
     * @return the buffer (position 0, limit and capacity {@code byteSize})
     */
    public static ByteBuffer allocate(long byteSize) {
        if (byteSize < 0 || byteSize > Integer.MAX_VALUE - 128) {
            throw new IllegalArgumentException("byteSize " + byteSize);
        }
        ByteBuffer raw = ByteBuffer.allocateDirect((int) byteSize + 128);
        ByteBuffer aligned = raw.alignedSlice(64);
        aligned.limit((int) byteSize);
        return aligned.slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The live handle; {@link IllegalStateException} once closed. */
    synchronized long handle() {
        if (closed) {
            throw new IllegalStateException("hurray: tensor is closed");
        }
        return ref.ptr();
    }

    /**
     * @return the descriptor (a Java value, built on first call; stays usable after
     *     close)
     */
    public synchronized Descriptor descriptor() {
        if (descriptor == null) {
            descriptor = closed
                    ? Descriptor.decode(closedDescriptorBytes)
                    : Descriptor.ofTensor(ref.ptr());
            closedDescriptorBytes = null;
        }
        return descriptor;
    }

    /** @return the element type */
    public ElementType elementType() {
        return descriptor().elementType();
    }

    /** @return the layout */
    public Layout layout() {
        return descriptor().layout();
    }

    /** @return a copy of the shape, in elements */
    public long[] shape() {
        return descriptor().shape();
    }

    /** @return the number of dimensions */
    public int rank() {
        return descriptor().rank();
    }

    /** @return the number of buffers */
    public int bufferCount() {
        return roots.length;
    }

    /** @return true once {@link #close()} ran */
    public synchronized boolean isClosed() {
        return closed;
    }

    private synchronized ByteBuffer root(int index) {
        long ptr = handle();
        Objects.checkIndex(index, roots.length);
        if (roots[index] == null) {
            // Throws UnsupportedOperationException for a buffer over 2^31-1 bytes.
            ByteBuffer b = Native.tensorBuffer(ptr, index);
            if (b == null) {
                b = ByteBuffer.allocateDirect(0);
            } else {
                ref.retain();
                NativeRef r = ref;
                NativeRef.register(b, r::release);
            }
            roots[index] = b;
        }
        return roots[index];
    }

    /**
     * A read-only, little-endian view of buffer {@code index} (all of its bytes), not a
     * copy. The view keeps the memory alive (see the class comment).
     *
     * <p>{@code slice()} and {@code duplicate()} of the view are big-endian (standard
     * Java); re-apply {@code order(ByteOrder.LITTLE_ENDIAN)} to them.
     *
     * @param index buffer index, {@code 0 <= index < bufferCount()}
     * @return the view, position 0, limit = the buffer's size in bytes
     * @throws IllegalStateException when the tensor is closed
     * @throws IndexOutOfBoundsException for a bad index
     */
    public ByteBuffer buffer(int index) {
        return root(index).asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * A writable, little-endian view of buffer {@code index}, not a copy. Writes change
     * the tensor's memory: for a tensor over the caller's memory, the caller's buffer;
     * for a tensor read from a stream, its own allocation; for a tensor read from a
     * file, the reader's private copy-on-write mapping of the file: the write is seen
     * by every tensor from the same {@link TensorFile} (they share its mapping) and
     * never reaches the file on disk.
     *
     * <p>{@code slice()} and {@code duplicate()} of the view are big-endian (standard
     * Java); re-apply {@code order(ByteOrder.LITTLE_ENDIAN)} to them.
     *
     * @param index buffer index
     * @return the view, position 0, limit = the buffer's size in bytes
     * @throws IllegalStateException when the tensor is closed
     * @throws IndexOutOfBoundsException for a bad index
     */
    public ByteBuffer writableBuffer(int index) {
        return root(index).duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * The address of buffer {@code index} in native memory (for zero-copy checks and
     * native interop); valid while the tensor or a view of it lives.
     *
     * @param index buffer index, {@code 0 <= index < bufferCount()}
     * @return the address, 0 for an empty buffer
     * @throws IllegalStateException when the tensor is closed
     * @throws IndexOutOfBoundsException for a bad index
     */
    public long bufferAddress(int index) {
        synchronized (this) {
            long ptr = handle();
            Objects.checkIndex(index, roots.length);
            return Native.tensorBufferAddress(ptr, index);
        }
    }

    /**
     * Refuses a CPU view of a tensor whose elements (buffer 0) are tagged for another
     * device (the rule of every binding: Go's typed views, Python's arrays).
     */
    private void requireCpu(String method) {
        Descriptor d = descriptor();
        if (d.bufferCount() > 0 && d.buffer(0).deviceTag() != 0) {
            throw new HurrayException(Status.NOT_APPLICABLE, Native.statusName(Status.NOT_APPLICABLE)
                    + ": " + method + " is a CPU view, and buffer 0 is tagged for device "
                    + Native.deviceName(d.buffer(0).deviceTag()) + " (not CPU memory); use "
                    + "bufferAddress(0) to hand it to that device's API");
        }
    }

    /** Checks the type and a row- or column-major layout of a typed accessor. */
    private void requireContiguous(ElementType want, String method) {
        if (elementType() != want) {
            throw new IllegalStateException("hurray: " + method + " needs " + want + ", tensor is "
                    + elementType());
        }
        if (layout() != Layout.ROW_MAJOR && layout() != Layout.COLUMN_MAJOR) {
            throw new IllegalStateException("hurray: " + method + " needs a row- or column-major "
                    + "tensor, tensor is " + layout());
        }
        requireCpu(method);
    }

    /** The element bytes of a contiguous (row- or column-major) tensor, read-only. */
    private ByteBuffer elements(ElementType want, String method) {
        requireContiguous(want, method);
        ByteBuffer b = buffer(0);
        long count = descriptor().elementCount();
        long start = descriptor().byteOffset();
        long end = start + count * (want.bits() / 8);
        if (count < 0 || end > b.capacity()) {
            throw new IllegalStateException("hurray: elements do not fit buffer 0");
        }
        b.position((int) start).limit((int) end);
        return b.slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * The elements of a row- or column-major {@link ElementType#FLOAT32} tensor, in
     * storage order, read-only, not a copy.
     *
     * @return a view of {@code elementCount} floats
     * @throws IllegalStateException when closed, or for another type or layout
     */
    public FloatBuffer floats() {
        return elements(ElementType.FLOAT32, "floats()").asFloatBuffer();
    }

    /**
     * As {@link #floats()}, for {@link ElementType#FLOAT64}.
     *
     * @return a view of the doubles
     */
    public DoubleBuffer doubles() {
        return elements(ElementType.FLOAT64, "doubles()").asDoubleBuffer();
    }

    /**
     * As {@link #floats()}, for {@link ElementType#INT32}.
     *
     * @return a view of the ints
     */
    public IntBuffer ints() {
        return elements(ElementType.INT32, "ints()").asIntBuffer();
    }

    /**
     * As {@link #floats()}, for {@link ElementType#INT64}.
     *
     * @return a view of the longs
     */
    public LongBuffer longs() {
        return elements(ElementType.INT64, "longs()").asLongBuffer();
    }

    /**
     * As {@link #floats()}, for {@link ElementType#INT16}.
     *
     * @return a view of the shorts
     */
    public ShortBuffer shorts() {
        return elements(ElementType.INT16, "shorts()").asShortBuffer();
    }

    /**
     * As {@link #floats()}, for {@link ElementType#INT8} and {@link ElementType#UINT8}
     * (bytes; read uint8 with {@link Byte#toUnsignedInt(byte)}).
     *
     * @return a view of the bytes
     */
    public ByteBuffer bytes() {
        ElementType t = elementType();
        return elements(t == ElementType.UINT8 ? t : ElementType.INT8, "bytes()");
    }

    /**
     * As {@link #floats()}, for {@link ElementType#FLOAT16}: the raw binary16 bit
     * patterns, read-only, not a copy. Convert one with {@link Float16#toFloat(short)},
     * all of them with {@link #toFloatArray()}.
     *
     * @return a view of the float16 values' bits
     * @throws IllegalStateException when closed, or for another type or layout
     * @throws HurrayException ({@link Status#NOT_APPLICABLE}) when the elements are
     *     tagged for a device other than the CPU
     */
    public ShortBuffer float16s() {
        return elements(ElementType.FLOAT16, "float16s()").asShortBuffer();
    }

    /**
     * As {@link #floats()}, for {@link ElementType#BFLOAT16}: the raw bit patterns,
     * read-only, not a copy. Convert one with {@link BFloat16#toFloat(short)}, all of
     * them with {@link #toFloatArray()}.
     *
     * @return a view of the bfloat16 values' bits
     * @throws IllegalStateException when closed, or for another type or layout
     * @throws HurrayException ({@link Status#NOT_APPLICABLE}) when the elements are
     *     tagged for a device other than the CPU
     */
    public ShortBuffer bfloat16s() {
        return elements(ElementType.BFLOAT16, "bfloat16s()").asShortBuffer();
    }

    /**
     * The elements of a row- or column-major {@link ElementType#FLOAT16},
     * {@link ElementType#BFLOAT16} or {@link ElementType#FLOAT32} tensor as a new
     * {@code float[]} (a copy, in storage order; 16-bit values widened exactly by the
     * library).
     *
     * @return the values
     * @throws IllegalStateException when closed, or for another type or layout
     * @throws UnsupportedOperationException for more than 2^31-1 elements
     * @throws HurrayException ({@link Status#NOT_APPLICABLE}) when the elements are
     *     tagged for a device other than the CPU
     */
    public float[] toFloatArray() {
        ElementType t = elementType();
        if (t == ElementType.FLOAT32) {
            FloatBuffer f = floats();
            float[] out = new float[f.remaining()];
            f.get(out);
            return out;
        }
        ElementType want = t == ElementType.BFLOAT16 ? t : ElementType.FLOAT16;
        ByteBuffer b = elements(want, "toFloatArray()");
        return Native.halfToFloats(b, b.remaining() / 2, want == ElementType.BFLOAT16);
    }

    /**
     * A row-major tensor of {@link ElementType#FLOAT16}, {@link ElementType#BFLOAT16}
     * or {@link ElementType#FLOAT32} holding {@code values}, narrowed by the library
     * (nearest, ties to even; see {@link Float16#fromFloat(float)}) into new aligned
     * memory.
     *
     * @param type {@code FLOAT16}, {@code BFLOAT16} or {@code FLOAT32}
     * @param values the values in row-major order, as many as {@code shape} holds
     * @param shape dimensions, in elements
     * @return the tensor (it owns its memory)
     * @throws IllegalArgumentException for another type, or a count that does not
     *     match the shape
     */
    public static Tensor fromFloats(ElementType type, float[] values, long... shape) {
        Objects.requireNonNull(values, "values");
        Descriptor d = Descriptor.dense(type, shape);
        if (d.elementCount() != values.length) {
            throw new IllegalArgumentException("hurray: " + values.length + " values for a shape of "
                    + d.elementCount() + " elements");
        }
        ByteBuffer data;
        if (type == ElementType.FLOAT32) {
            data = allocate(4L * values.length);
            data.asFloatBuffer().put(values);
        } else if (type == ElementType.FLOAT16 || type == ElementType.BFLOAT16) {
            data = allocate(2L * values.length);
            Native.floatsToHalf(values, data, type == ElementType.BFLOAT16);
        } else {
            throw new IllegalArgumentException("hurray: fromFloats makes float16, bfloat16 or "
                    + "float32 tensors, not " + type);
        }
        return wrap(d, data);
    }

    /**
     * The elements of a row- or column-major sub-byte tensor ({@link ElementType#BOOL},
     * int4/uint4, int2/uint2, fp4, fp6: {@code bits() < 8}) unpacked to one byte each,
     * a copy: bool 0 or 1, int4/int2 sign-extended, other codes as stored
     * (element-types.md §5).
     *
     * @return one byte per element, in storage order
     * @throws IllegalStateException when closed, or for another type or layout
     * @throws UnsupportedOperationException for more than 2^31-1 elements
     * @throws HurrayException ({@link Status#NOT_APPLICABLE}) when the elements are
     *     tagged for a device other than the CPU
     */
    public byte[] unpacked() {
        ElementType t = elementType();
        if (t.bits() <= 0 || t.bits() >= 8) {
            throw new IllegalStateException("hurray: unpacked() needs a sub-byte type, tensor is "
                    + t);
        }
        requireContiguous(t, "unpacked()");
        ByteBuffer b = buffer(0);
        long start = descriptor().byteOffset();
        if (start > b.capacity()) {
            throw new IllegalStateException("hurray: elements do not fit buffer 0");
        }
        b.position((int) start);
        return Native.unpack(t.tag(), b.slice(), descriptor().elementCount());
    }

    /**
     * The elements of a row- or column-major {@link ElementType#BOOL} tensor, unpacked
     * (the format stores 8 per byte), a copy.
     *
     * @return the values, in storage order
     * @throws IllegalStateException when closed, or for another type or layout
     * @throws HurrayException ({@link Status#NOT_APPLICABLE}) when the elements are
     *     tagged for a device other than the CPU
     */
    public boolean[] booleans() {
        if (elementType() != ElementType.BOOL) {
            throw new IllegalStateException("hurray: booleans() needs BOOL, tensor is "
                    + elementType());
        }
        byte[] u = unpacked();
        boolean[] out = new boolean[u.length];
        for (int i = 0; i < u.length; i++) {
            out[i] = u[i] != 0;
        }
        return out;
    }

    /**
     * A row-major {@link ElementType#BOOL} tensor holding {@code values}, packed 8 per
     * byte by the library into new aligned memory.
     *
     * @param values the values in row-major order, as many as {@code shape} holds
     * @param shape dimensions, in elements
     * @return the tensor (it owns its memory)
     * @throws IllegalArgumentException for a count that does not match the shape
     */
    public static Tensor fromBooleans(boolean[] values, long... shape) {
        Objects.requireNonNull(values, "values");
        Descriptor d = Descriptor.dense(ElementType.BOOL, shape);
        if (d.elementCount() != values.length) {
            throw new IllegalArgumentException("hurray: " + values.length + " values for a shape of "
                    + d.elementCount() + " elements");
        }
        byte[] bytes = new byte[values.length];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (values[i] ? 1 : 0);
        }
        return wrap(d, ByteBuffer.wrap(Native.pack(ElementType.BOOL.tag(), bytes)));
    }

    /**
     * Releases this tensor's hold on its native handle; idempotent. The native memory
     * goes once no view of it is reachable either.
     */
    @Override
    public synchronized void close() {
        if (!closed) {
            if (descriptor == null) {
                // The descriptor stays readable after close: keep its bytes (a small
                // copy) rather than building it now.
                closedDescriptorBytes = Native.tensorDescriptorBytes(ref.ptr());
            }
            closed = true;
            // Views taken so far hold the memory through their own roots; a closed
            // tensor that is still reachable must not.
            java.util.Arrays.fill(roots, null);
            cleanable.clean();
        }
    }

    /**
     * A new owned {@code HurrayTensor *} over this tensor's memory (no copy): its
     * buffers are held through global references to views of this tensor, so the
     * memory lives until both are gone.
     */
    synchronized long share() {
        handle();
        ByteBuffer[] bufs = new ByteBuffer[roots.length];
        for (int i = 0; i < bufs.length; i++) {
            bufs[i] = root(i).duplicate();
        }
        return Native.tensorNew(descriptor().bytesUnsafe(), bufs, null, true);
    }

    /**
     * Adds a hold on the native handle for the duration of a native use that may run
     * user code (a stream writer's output stream): a {@link #close()} from that code
     * then only drops the tensor's own hold, and the memory stays until
     * {@link NativeRef#release()} of the returned ref.
     */
    synchronized NativeRef pin() {
        handle();
        ref.retain();
        return ref;
    }

    /** Keeps this tensor reachable until the caller's native use of it is over. */
    void keepAlive() {
        Reference.reachabilityFence(this);
    }

    @Override
    public String toString() {
        return "Tensor[" + descriptor() + (isClosed() ? ", closed]" : "]");
    }
}
