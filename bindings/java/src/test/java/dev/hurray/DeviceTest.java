package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Issue 15 item 3: no CPU view of a buffer tagged for another device. */
class DeviceTest extends LeakChecked {
    static Descriptor cudaFloats(int n) {
        return Descriptor.builder(ElementType.FLOAT32, Layout.ROW_MAJOR, n)
                .addBuffer(new Descriptor.BufferEntry(4L * n, 64,
                        Descriptor.BufferEntry.DEVICE_CUDA, 0, 0))
                .build();
    }

    @Test
    void cudaTaggedBufferHasNoCpuView() {
        // Host memory standing in for a device pointer: the library carries it and
        // never reads it.
        ByteBuffer mem = Tensor.allocate(16);
        try (Tensor t = Tensor.wrap(cudaFloats(4), mem)) {
            assertEquals(Descriptor.BufferEntry.DEVICE_CUDA, t.descriptor().buffer(0).deviceTag());
            HurrayException floats = assertThrows(HurrayException.class, t::floats);
            assertEquals(Status.NOT_APPLICABLE, floats.status());
            assertTrue(floats.getMessage().contains("CPU"), floats.getMessage());
            assertTrue(floats.getMessage().contains("device cuda"), floats.getMessage());
            HurrayException raw = assertThrows(HurrayException.class, () -> t.buffer(0));
            assertEquals(Status.NOT_APPLICABLE, raw.status());
            assertTrue(raw.getMessage().contains("cuda"), raw.getMessage());
            assertThrows(HurrayException.class, () -> t.writableBuffer(0));
            assertThrows(HurrayException.class, t::toFloatArray);
            assertEquals(Native.directAddress(mem), t.bufferAddress(0),
                    "the address is still given, for the device's API");
        }
    }

    @Test
    void unalignedDeviceMemoryIsNeverCopied() {
        ByteBuffer odd = Tensor.allocate(64).position(1).slice().limit(16);
        HurrayException e = assertThrows(HurrayException.class,
                () -> Tensor.wrap(cudaFloats(4), odd));
        assertEquals(Status.INVALID_ARGUMENT, e.status());
        assertTrue(e.getMessage().contains("cuda"), e.getMessage());
    }

    @Test
    void heapAndReadOnlyBuffersTaggedForADeviceAreNeverCopied() {
        ByteBuffer heap = ByteBuffer.wrap(new byte[16]);
        ByteBuffer readOnly = Tensor.allocate(16).asReadOnlyBuffer();
        for (Copy copy : Copy.values()) {
            for (ByteBuffer b : new ByteBuffer[] {heap, readOnly}) {
                HurrayException e = assertThrows(HurrayException.class,
                        () -> Tensor.wrap(cudaFloats(4), copy, null, b));
                assertEquals(Status.INVALID_ARGUMENT, e.status(), copy + " " + b);
                assertTrue(e.getMessage().contains("device cuda"), e.getMessage());
                assertTrue(e.getMessage().contains(b.isDirect() ? "read-only" : "heap"),
                        e.getMessage());
                assertTrue(e.getMessage().contains("never copied"), e.getMessage());
            }
        }
        // The same buffers on a CPU entry are still copied under IF_NEEDED.
        try (Tensor t = Tensor.wrap(Descriptor.dense(ElementType.FLOAT32, 4), heap)) {
            assertEquals(0f, t.floats().get(3));
        }
    }
}
