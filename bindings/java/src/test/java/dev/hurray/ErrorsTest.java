package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Issue 15 item 5: errors in JDK conventions, and closed objects that say so. */
class ErrorsTest extends LeakChecked {
    @TempDir
    Path tmp;

    Path file() throws Exception {
        Path p = tmp.resolve("f.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(p);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2, 3), 3)) {
            w.write("x", t);
            w.putMetadata("k", 1L);
            w.finish();
        }
        return p;
    }

    @Test
    void fileErrorsAreTheJdksTypes() throws Exception {
        Path missing = tmp.resolve("missing.hrry");
        NoSuchFileException nf = assertThrows(NoSuchFileException.class, () -> TensorFile.open(missing));
        assertEquals(missing.toString(), nf.getFile());
        assertTrue(nf instanceof HurrayError);

        FileSystemException dir = assertThrows(FileSystemException.class, () -> TensorFile.open(tmp));
        assertTrue(dir instanceof IsDirectoryException, dir.toString());
        assertEquals(tmp.toString(), dir.getFile());
        assertTrue(dir.getMessage().toLowerCase().contains("directory"), dir.getMessage());

        byte[] whole = Files.readAllBytes(file());
        Path cut = tmp.resolve("cut.hrry");
        Files.write(cut, Arrays.copyOf(whole, whole.length - 10));
        EOFException eof = assertThrows(EOFException.class, () -> TensorFile.open(cut));
        assertTrue(eof instanceof TruncatedException, eof.toString());
        assertEquals(Status.TRUNCATED, ((HurrayError) eof).status());
        assertTrue(eof.getMessage().contains(cut.toString()), eof.getMessage());
    }

    /** Every accessor of a closed tensor throws, but its descriptor facts answer. */
    @Test
    void closedTensorThrowsFromEveryAccessorButItsFacts() throws Exception {
        Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2, 3, 4), 2, 2);
        t.close();
        t.close(); // idempotent
        assertArrayEquals(new long[] {2, 2}, t.shape());
        assertEquals(2, t.rank());
        assertEquals(1, t.bufferCount());
        assertEquals(ElementType.FLOAT32, t.elementType());
        assertEquals(Layout.ROW_MAJOR, t.layout());
        assertEquals(4, t.descriptor().elementCount());
        assertTrue(t.isClosed());
        assertTrue(t.toString().contains("closed"), t.toString());
        List<Executable> accessors = List.of(() -> t.buffer(0), () -> t.writableBuffer(0),
                () -> t.bufferAddress(0), t::floats, t::doubles, t::ints, t::longs, t::shorts,
                t::bytes, t::float16s, t::bfloat16s, t::toFloatArray, t::unpacked, t::booleans);
        for (Executable a : accessors) {
            IllegalStateException e = assertThrows(IllegalStateException.class, a);
            assertTrue(e.getMessage().contains("closed") || e.getMessage().contains("needs"),
                    e.getMessage());
        }
        IllegalStateException e = assertThrows(IllegalStateException.class, t::floats);
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        try (StreamWriter w = new StreamWriter(new ByteArrayOutputStream())) {
            assertThrows(IllegalStateException.class, () -> w.write(t));
        }
    }

    @Test
    void closedFileThrowsFromEveryAccessor() throws Exception {
        TensorFile f = TensorFile.open(file());
        f.close();
        List<Executable> accessors = List.of(f::info, f::names, () -> f.tensor("x"),
                () -> f.item("x"), () -> f.descriptor("x"), f::metadataKeys, () -> f.metadata("k"),
                f::metadata, () -> f.metadataLength("k"), () -> f.metadataRange("k", 0, 1),
                f::verifyDataCrc32c);
        for (Executable a : accessors) {
            IllegalStateException e = assertThrows(IllegalStateException.class, a);
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
        }
        f.close(); // idempotent
    }

    @Test
    void closedStreamsAndItemsThrow() throws Exception {
        StreamReader r = new StreamReader(new java.io.ByteArrayInputStream(new byte[0]));
        r.close();
        assertThrows(IllegalStateException.class, r::next);
        assertThrows(IllegalStateException.class, r::nextItem);
        assertThrows(IllegalStateException.class, r::position);
        StreamWriter w = new StreamWriter(new ByteArrayOutputStream());
        w.close();
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1), 1)) {
            assertThrows(IllegalStateException.class, () -> w.write(t));
            Item i = Item.of(t);
            i.close();
            assertThrows(IllegalStateException.class, i::tensor);
            assertThrows(IllegalStateException.class, i::memberCount);
            assertThrows(IllegalStateException.class, i::isComposite);
        }
    }
}
