package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Per-tensor data CRC-32C: recorded on request, verified, a flipped byte named. */
class DataCrcTest extends LeakChecked {
    @TempDir
    Path tmp;

    /** The bytes of tensor "second": a run no header, index or KV byte contains. */
    private static final byte[] SECOND = {
        (byte) 0xC3, 0x5A, (byte) 0xA5, 0x3C, 0x69, (byte) 0x96, 0x0F, (byte) 0xF0,
    };

    private Path write(String file, boolean crc) throws Exception {
        Path path = tmp.resolve(file);
        try (TensorFileWriter w = TensorFileWriter.builder(path).durable(false)
                        .dataCrc32c(crc).create();
                Tensor first = Tensor.dense(ElementType.FLOAT32,
                        TestSupport.floats(1, 2, 3, 4), 4);
                Tensor second = Tensor.dense(ElementType.UINT8,
                        TestSupport.bytes(SECOND), SECOND.length)) {
            w.write("first", first);
            w.write("second", second);
            w.finish();
        }
        return path;
    }

    /** The one offset where {@code SECOND} starts in {@code file}. */
    private static int offsetOfSecond(byte[] file) {
        int found = -1;
        for (int i = 0; i + SECOND.length <= file.length; i++) {
            int j = 0;
            while (j < SECOND.length && file[i + j] == SECOND[j]) {
                j++;
            }
            if (j == SECOND.length) {
                assertEquals(-1, found, "the pattern occurs once");
                found = i;
            }
        }
        assertTrue(found >= 0, "the pattern is in the file");
        return found;
    }

    @Test
    void intactFileVerifies() throws Exception {
        Path path = write("crc.hrry", true);
        try (TensorFile f = TensorFile.open(path)) {
            assertTrue(f.verifyDataCrc32c());
            assertTrue(f.metadataKeys().contains("hurray.data_crc32c"), f.metadataKeys().toString());
            BigInteger[] crcs = (BigInteger[]) f.metadata("hurray.data_crc32c");
            assertEquals(2, crcs.length, "one CRC per tensor");
            assertTrue(crcs[1].signum() > 0 && crcs[1].bitLength() <= 32, crcs[1].toString());
        }
    }

    @Test
    void flippedDataByteIsNamed() throws Exception {
        Path path = write("crc.hrry", true);
        byte[] bytes = Files.readAllBytes(path);
        int at = offsetOfSecond(bytes);
        assertEquals(0, at % 4096, "tensor data starts on the 4096-byte alignment");
        bytes[at + 5] ^= 0x01;
        Files.write(path, bytes);

        // The index CRC does not cover data: the file still opens and reads the
        // flipped value.
        try (TensorFile f = TensorFile.open(path); Tensor t = f.tensor("second")) {
            assertEquals((byte) 0x97, t.buffer(0).get(5));
            FormatException e = assertThrows(FormatException.class, f::verifyDataCrc32c);
            assertEquals("format", e.category());
            String m = e.getMessage();
            assertTrue(m.contains("DataCrcMismatch"), m);
            assertTrue(m.contains("\"second\""), m);
            assertFalse(m.contains("\"first\""), m);
            assertTrue(m.contains("at byte " + at), m);
        }
    }

    @Test
    void fileWithoutCrcsCannotBeChecked() throws Exception {
        Path plain = write("plain.hrry", false);
        try (TensorFile f = TensorFile.open(plain)) {
            assertFalse(f.verifyDataCrc32c());
            assertFalse(f.metadataKeys().contains("hurray.data_crc32c"));
        }
        // Off by default, and the switch changes nothing else: the same tensors
        // written by the two-argument create are byte-identical.
        Path viaCreate = tmp.resolve("create.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(viaCreate, 0, false);
                Tensor first = Tensor.dense(ElementType.FLOAT32,
                        TestSupport.floats(1, 2, 3, 4), 4);
                Tensor second = Tensor.dense(ElementType.UINT8,
                        TestSupport.bytes(SECOND), SECOND.length)) {
            w.write("first", first);
            w.write("second", second);
            w.finish();
        }
        assertEquals(-1, Files.mismatch(plain, viaCreate));
        assertNotEquals(-1, Files.mismatch(plain, write("crc.hrry", true)));
    }
}
