package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.ProviderMismatchException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Issue 15 follow-up: foreign paths and lone surrogates are refused, never reinterpreted. */
class StrictInputTest extends LeakChecked {
    @TempDir
    Path tmp;

    @Test
    void aPathOfAnotherFileSystemIsRefused() throws Exception {
        Path local = tmp.resolve("t.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(local);
                Tensor t = Tensor.dense(ElementType.INT8, TestSupport.bytes((byte) 7), 1)) {
            w.write("t", t);
            w.finish();
        }
        Path zip = tmp.resolve("z.zip");
        URI uri = URI.create("jar:" + zip.toUri());
        try (FileSystem zfs = FileSystems.newFileSystem(uri, Map.of("create", "true"))) {
            Path inside = zfs.getPath(local.toString()); // same text as a real local file
            Files.createDirectories(inside.getParent());
            Files.copy(local, inside);
            assertTrue(Files.exists(inside));
            ProviderMismatchException open =
                    assertThrows(ProviderMismatchException.class, () -> TensorFile.open(inside));
            assertTrue(open.getMessage().contains("\"jar\""), open.getMessage());
            Path out = zfs.getPath(tmp.resolve("out.hrry").toString());
            ProviderMismatchException create = assertThrows(
                    ProviderMismatchException.class, () -> TensorFileWriter.create(out));
            assertTrue(create.getMessage().contains("\"jar\""), create.getMessage());
            assertThrows(ProviderMismatchException.class,
                    () -> TensorFileWriter.builder(out).dataCrc32c(true).create());
        }
        assertFalse(Files.exists(tmp.resolve("out.hrry")), "nothing written at the local twin");
        try (TensorFile f = TensorFile.open(local)) { // the default file system still works
            assertEquals(List.of("t"), f.names());
        }
    }

    private static void assertLoneSurrogate(int index, Executable call) {
        HurrayException e = assertThrows(HurrayException.class, call);
        assertEquals(Status.INVALID_ARGUMENT, e.status());
        assertTrue(e.getMessage().contains("lone surrogate"), e.getMessage());
        assertTrue(e.getMessage().contains("UTF-16 index " + index), e.getMessage());
    }

    @Test
    void loneSurrogatesInNamesKeysAndValuesAreRefused() throws Exception {
        Path p = tmp.resolve("s.hrry");
        String high = "w\uD800";   // lone high surrogate at index 1
        String low = "w\uDC00x";   // lone low surrogate at index 1
        String pair = "w\uD83D\uDE00"; // a valid pair: accepted
        try (TensorFileWriter w = TensorFileWriter.create(p);
                Tensor t = Tensor.dense(ElementType.INT8, TestSupport.bytes((byte) 1), 1)) {
            assertLoneSurrogate(1, () -> w.write(high, t));
            assertLoneSurrogate(1, () -> w.write(low, t));
            w.write(pair, t);
            assertLoneSurrogate(2, () -> w.putMetadata("ab\uDFFF", "v"));
            assertLoneSurrogate(0, () -> w.putMetadata("k", "\uD800"));
            assertLoneSurrogate(3, () -> w.putMetadata("arr", new String[] {"ok", "\uD83D\uDE00x\uD83D"}));
            w.putMetadata("k", "v\uD83D\uDE00");
            w.finish();
        }
        try (TensorFile f = TensorFile.open(p)) {
            assertEquals(List.of(pair), f.names(), "refused names left nothing behind");
            assertEquals(List.of("k"), f.metadataKeys());
            assertEquals("v\uD83D\uDE00", f.metadata("k"));
            assertLoneSurrogate(1, () -> f.tensor(high));
            assertLoneSurrogate(1, () -> f.descriptor(low));
            assertLoneSurrogate(1, () -> f.metadata("k\uDC00"));
        }
    }
}
