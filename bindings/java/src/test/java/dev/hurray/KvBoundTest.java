package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole-value KV reads are bounded: an array of more than 1,048,576 elements (the
 * library's HURRAY_KV_WHOLE_ARRAY_MAX, the same in every binding) is refused by
 * {@code metadata(key)}, and read a window at a time with {@code metadataRange}.
 */
class KvBoundTest {
    static final int MAX = 1 << 20;

    @Test
    void wholeReadsRefuseArraysPastTheBoundAndWindowsReachThem(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("kvbound.hrry");
        boolean[] big = new boolean[MAX + 1];
        big[MAX] = true;
        try (TensorFileWriter w = TensorFileWriter.builder(file).durable(false).create()) {
            w.putMetadata("at_bound", java.util.Arrays.copyOf(big, MAX));
            w.putMetadata("past_bound", big);
            w.finish();
        }
        try (TensorFile f = TensorFile.open(file)) {
            assertEquals(MAX, ((boolean[]) f.metadata("at_bound")).length);
            HurrayException e = assertThrows(HurrayException.class, () -> f.metadata("past_bound"));
            assertEquals(Status.LIMIT, e.status());
            assertTrue(e.getMessage().contains("\"past_bound\" is an array of 1048577 elements, more than the 1048576"),
                    e.getMessage());
            assertEquals(MAX + 1, f.metadataLength("past_bound"));
            assertArrayEquals(new boolean[] {false, true}, (boolean[]) f.metadataRange("past_bound", MAX - 1, 2));
        }
    }
}
