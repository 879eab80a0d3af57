package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The shared golden vectors (../shared/conformance) decode to what manifest.json says. */
class ConformanceTest extends LeakChecked {
    @SuppressWarnings("unchecked")
    private static Map<String, Object> manifest(Path dir) throws Exception {
        return (Map<String, Object>) TestSupport.json(Files.readString(dir.resolve("manifest.json")));
    }

    private static Path dir() {
        var dir = TestSupport.conformance();
        assumeTrue(dir.isPresent(), "../shared/conformance not found: conformance tests skipped");
        return dir.get();
    }

    private static long[] longs(Object list) {
        return ((List<?>) list).stream().mapToLong(x -> ((Number) x).longValue()).toArray();
    }

    @Test
    @SuppressWarnings("unchecked")
    void basicFileMatchesManifest() throws Exception {
        Path dir = dir();
        List<Map<String, Object>> files = (List<Map<String, Object>>) manifest(dir).get("files");
        int checked = 0;
        for (Map<String, Object> f : files) {
            try (TensorFile file = TensorFile.open(dir.resolve((String) f.get("file")))) {
                List<Map<String, Object>> tensors = (List<Map<String, Object>>) f.get("tensors");
                assertEquals(tensors.size(), file.names().size());
                for (Map<String, Object> want : tensors) {
                    String name = (String) want.get("name");
                    assertTrue(file.names().contains(name), name);
                    try (Tensor t = file.tensor(name)) {
                        assertEquals(((Number) want.get("element_type_tag")).intValue(),
                                t.descriptor().typeTag(), name);
                        assertEquals(((String) want.get("element_type")).toUpperCase(),
                                t.elementType().name());
                        assertArrayEquals(longs(want.get("shape")), t.shape(), name);
                        ByteBuffer b = t.buffer(0);
                        assertEquals(((Number) want.get("data_bytes")).longValue(), b.remaining());
                    }
                }
                List<Map<String, Object>> kv = (List<Map<String, Object>>) f.get("kv");
                assertEquals(kv.size(), file.metadataKeys().size());
                for (Map<String, Object> want : kv) {
                    Object got = file.metadata((String) want.get("key"));
                    if ("string".equals(want.get("kind"))) {
                        assertEquals(want.get("value_string"), got);
                    } else {
                        assertEquals(((Number) want.get("value_int")).longValue(), got);
                    }
                }
                checked++;
            }
        }
        assertTrue(checked >= 1);
    }

    @Test
    void basicFileValues() throws Exception {
        Path dir = dir();
        try (TensorFile file = TensorFile.open(dir.resolve("files/basic.hrry"))) {
            assertTrue(file.info().crcVerified() || file.info().indexCrc32c() == 0);
            assertEquals(2, file.info().tensorCount());
            try (Tensor w = file.tensor("weights")) {
                assertEquals(4, w.floats().remaining());
                assertEquals(Layout.ROW_MAJOR, w.layout());
            }
            try (Tensor b = file.tensor("bias")) {
                assertEquals(3, b.bytes().remaining());
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void descriptorVectorsDecode() throws Exception {
        Path dir = dir();
        List<Map<String, Object>> ds = (List<Map<String, Object>>) manifest(dir).get("descriptors");
        assertTrue(ds.size() > 0);
        for (Map<String, Object> d : ds) {
            String file = (String) d.get("file");
            Map<String, Object> e = (Map<String, Object>) d.get("expect");
            Descriptor got = Descriptor.decode(Files.readAllBytes(dir.resolve(file)));
            assertEquals(((Number) e.get("element_type_tag")).intValue(), got.typeTag(), file);
            assertEquals(((Number) e.get("layout_tag")).intValue(), got.layoutTag(), file);
            assertEquals(((Number) e.get("version_major")).intValue(), got.versionMajor(), file);
            assertEquals(((Number) e.get("byte_offset")).longValue(), got.byteOffset(), file);
            assertArrayEquals(longs(e.get("shape")), got.shape(), file);
            assertArrayEquals(longs(e.get("buffer_byte_sizes")),
                    got.buffers().stream().mapToLong(Descriptor.BufferEntry::byteSize).toArray(),
                    file);
            assertEquals(e.get("has_quantization"), got.quantization().isPresent(), file);
            assertEquals(got, Descriptor.decode(got.toBytes()), file);
        }
    }
}
