package dev.hurray;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The native methods of the binding: one per entry point of the JNI glue crate
 * {@code bindings/java/native} (libhurray_java), each a thin layer over hurray-ffi's
 * safe Rust face.
 *
 * <p>Handles are native addresses carried as {@code long}. Callers in this package
 * pass only live handles, from one thread at a time, and never use a handle again
 * after passing it to a method that moves it in ({@code *Destroy},
 * {@code itemFromTensor}, {@code itemCompositeNew}, {@code itemCompositePush}: these
 * consume it on error too). When the library refuses, a method throws the exception
 * its error category maps to (in one place, the glue's {@code errors.rs}; see
 * docs/java.md "Errors"): the methods declared {@code throws IOException} (file open
 * and write, stream decoding) throw the checked {@link MissingFileException},
 * {@link IsDirectoryException}, {@link HurrayIOException} and
 * {@link TruncatedException}; elsewhere an I/O-family error arrives wrapped in
 * {@link java.io.UncheckedIOException}. Bad input is a {@link FormatException}, other
 * refusals a {@link HurrayException}; an unusable Java argument is an
 * {@link IllegalArgumentException}; a panic in the native code becomes a
 * {@link HurrayException} with {@link Status#INTERNAL_PANIC}.
 */
final class Native {
    private Native() {}

    static {
        NativeLoader.load();
    }

    // Library.
    static native int abiVersion();

    static native int headerAbiVersion();

    static native long liveObjects();

    static native String statusName(int status);

    static native String deviceName(int deviceTag);

    static native void debugPanic();

    static native long directAddress(ByteBuffer buffer);

    // Descriptors: typed Descriptor objects both ways (made in descriptor_access.rs,
    // read field by field in builder.rs).
    static native Descriptor descriptorDecode(byte[] bytes);

    static native Descriptor descriptorDense(int typeTag, long[] shape);

    static native Descriptor descriptorBuild(int typeTag, int layoutTag, long[] shape,
            long[] strides, long byteOffset, boolean hasNnz, long nnz, int cooSorted,
            Descriptor.BufferEntry[] buffers, Descriptor.Quantization quant,
            Descriptor.Statistics stats, Descriptor.CompositeHead composite, int memberRole,
            Descriptor.Shard shard, Descriptor.TileLevel[] tiling, long[] mortonBits,
            long[] hilbert, long[] csfModeOrder, Descriptor.BlockPaged blockPaged);

    // Tensors.
    static native long tensorNew(byte[] descriptor, ByteBuffer[] buffers, Runnable onRelease,
            boolean strict);

    static native void tensorDestroy(long tensor);

    // Element values (values.rs).
    static native float[] halfToFloats(ByteBuffer src, int count, boolean bfloat16);

    static native void floatsToHalf(float[] src, ByteBuffer dst, boolean bfloat16);

    static native byte[] unpack(int typeTag, ByteBuffer packed, long count);

    static native byte[] pack(int typeTag, byte[] elements);

    static native Descriptor tensorDescriptor(long tensor);

    static native int tensorBufferCount(long tensor);

    static native byte[] tensorDescriptorBytes(long tensor);

    static native ByteBuffer tensorBuffer(long tensor, int index);

    static native long tensorBufferAddress(long tensor, int index);

    // Stream decoder.
    static native long decoderNew(long maxDescriptorBytes, long maxBufferBytes);

    static native ByteBuffer decoderDemand(long decoder);

    static native void decoderAdvance(long decoder, long n);

    static native long decoderNextTensor(long decoder) throws IOException;

    static native void decoderFinish(long decoder) throws IOException;

    static native long decoderPosition(long decoder);

    static native void decoderDestroy(long decoder);

    // Stream encoder.
    static native long encoderNew();

    static native long encoderBegin(long encoder, long tensor);

    static native ByteBuffer encoderChunk(long encoder, long index);

    static native long encoderChunkAddress(long encoder, long index);

    static native void encoderEnd(long encoder);

    static native void encoderDestroy(long encoder);

    // File reader.
    static native long fileOpen(String path) throws IOException;

    static native TensorFile.Info fileInfo(long reader);

    static native boolean fileVerifyDataCrc32c(long reader);

    static native String[] fileNames(long reader);

    static native long fileTensor(long reader, String name);

    static native String[] fileKvKeys(long reader);

    static native Object fileKv(long reader, String key);

    static native long fileKvLength(long reader, String key);

    static native Object fileKvRange(long reader, String key, long offset, int count);

    static native void fileDestroy(long reader);

    // Items.
    static native long itemFromTensor(long tensor);

    static native long itemCompositeNew(long head);

    static native void itemCompositePush(long item, long member);

    static native boolean itemIsComposite(long item);

    static native long itemTensor(long item);

    static native long itemMemberCount(long item);

    static native long itemMember(long item, long index);

    static native void itemDestroy(long item);

    static native long decoderNext(long decoder) throws IOException;

    static native long encoderBeginItem(long encoder, long item);

    static native long fileItem(long reader, String name);

    static native void writerWriteItem(long writer, String name, long item) throws IOException;

    // File writer.
    static native long writerCreate(String path, int alignment, boolean durable, boolean sorted,
            boolean dataCrc32c) throws IOException;

    static native void writerWriteTensor(long writer, String name, long tensor) throws IOException;

    static native void writerAddKv(long writer, String key, Object value);

    static native void writerFinish(long writer) throws IOException;

    static native void writerDestroy(long writer);

    // Network client (net.rs)
    static native long netClientNew(int connectMs, int ioMs, int callMs, int maxMessageSize,
            long maxItemBytes);

    static native void netConnect(long client, String host, int port) throws IOException;

    static native long netGet(long client, String key, byte[] layouts, int alignment,
            boolean transcode, boolean parallel) throws IOException;

    static native void netPutTensor(long client, String key, long tensor) throws IOException;

    static native void netPutItem(long client, String key, long item) throws IOException;

    static native void netCancel(long client);

    static native long[] netServerInfo(long client);

    static native void netClientDestroy(long client);
}
