package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 15 item 4: NUL bytes in names and keys (valid in the format) are readable. */
class NulNameTest extends LeakChecked {
    @TempDir
    Path tmp;

    @Test
    void nulInTensorNamesKvKeysAndValues() throws Exception {
        Path p = tmp.resolve("nul.hrry");
        String name = "layer\0weight\uD83D\uDE00"; // NUL and a character beyond the BMP
        String key = "k\0ey";
        String value = "v\0al\u00e9";
        try (TensorFileWriter w = TensorFileWriter.create(p);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2), 2)) {
            w.write(name, t);
            w.putMetadata(key, value);
            w.putMetadata("arr", new String[] {"a\0", "\0"});
            w.finish();
        }
        try (TensorFile f = TensorFile.open(p)) {
            assertEquals(List.of(name), f.names());
            try (Tensor t = f.tensor(name)) {
                assertEquals(2f, t.floats().get(1));
            }
            assertEquals(List.of(key, "arr"), f.metadataKeys());
            assertEquals(value, f.metadata(key));
            assertEquals(List.of("a\0", "\0"), List.of((String[]) f.metadata("arr")));
            assertEquals(List.of("\0"), List.of((String[]) f.metadataRange("arr", 1, 1)));
            assertEquals(6, f.metadataLength(key), "UTF-8 bytes: v, NUL, a, l and the two of \u00e9");
            assertEquals(2, f.descriptor(name).shape()[0]);
            Map<String, Object> all = f.metadata();
            assertEquals(value, all.get(key));
            NotFoundException e = assertThrows(NotFoundException.class, () -> f.tensor("layer"));
            assertEquals(Status.NOT_FOUND, e.status());
            assertThrows(NotFoundException.class, () -> f.metadata("k"));
        }
    }
}
