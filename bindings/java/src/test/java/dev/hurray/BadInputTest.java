package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Untrusted input: clean exceptions naming the rule and offset, never a crash. */
class BadInputTest extends LeakChecked {
    @TempDir
    Path tmp;

    private static byte[] twoTensorStream() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (StreamWriter w = new StreamWriter(out);
                Tensor a = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2, 3), 3);
                Tensor b = Tensor.dense(ElementType.INT8, TestSupport.bytes((byte) 4), 1)) {
            w.write(a);
            w.write(b);
        }
        return out.toByteArray();
    }

    private static int readAll(byte[] bytes) throws Exception {
        int n = 0;
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(bytes))) {
            Tensor t;
            while ((t = r.next()) != null) {
                t.close();
                n++;
            }
        }
        return n;
    }

    @Test
    void everyCutOfAStreamIsCleanOrTruncated() throws Exception {
        byte[] all = twoTensorStream();
        int first;
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(all))) {
            r.next().close();
            first = (int) r.position();
        }
        int truncated = 0;
        for (int cut = 0; cut <= all.length; cut++) {
            byte[] part = Arrays.copyOf(all, cut);
            if (cut == 0 || cut == first || cut == all.length) {
                assertEquals(cut == 0 ? 0 : cut == first ? 1 : 2, readAll(part), "cut " + cut);
                continue;
            }
            TruncatedException e = assertThrows(TruncatedException.class, () -> readAll(part),
                    "cut at " + cut);
            assertEquals(Status.TRUNCATED, e.status());
            assertTrue(e.getMessage().startsWith("HURRAY_ERR_TRUNCATED"), e.getMessage());
            assertTrue(e.getMessage().contains("at byte " + cut),
                    "the message says where: " + e.getMessage());
            truncated++;
        }
        assertEquals(all.length - 2, truncated);
    }

    @Test
    void truncationAfterGoodTensorsYieldsThemFirst() throws Exception {
        byte[] all = twoTensorStream();
        byte[] part = Arrays.copyOf(all, all.length - 1);
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(part))) {
            try (Tensor t = r.next()) {
                assertEquals(3, t.floats().remaining());
            }
            assertThrows(TruncatedException.class, r::next);
        }
    }

    @Test
    void truncationIsStickyNotACleanEnd() throws Exception {
        byte[] all = twoTensorStream();
        byte[] part = Arrays.copyOf(all, all.length - 1);
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(part))) {
            r.next().close();
            TruncatedException first = assertThrows(TruncatedException.class, r::next);
            for (int i = 0; i < 3; i++) {
                TruncatedException again = assertThrows(TruncatedException.class, r::next,
                        "a truncated stream never turns into a clean end (call " + i + ")");
                assertEquals(first.getMessage(), again.getMessage());
                assertThrows(TruncatedException.class, r::nextItem);
            }
            // The iterator cannot throw checked exceptions: the JDK's wrapper, over the same one.
            java.io.UncheckedIOException wrapped = assertThrows(java.io.UncheckedIOException.class,
                    () -> r.iterator().hasNext());
            assertTrue(wrapped.getCause() instanceof TruncatedException, wrapped.toString());
            assertEquals(first.getMessage(), wrapped.getCause().getMessage());
        }
    }

    @Test
    void negativeLimitsAreRefused() {
        ByteArrayInputStream in = new ByteArrayInputStream(new byte[0]);
        assertThrows(IllegalArgumentException.class, () -> new StreamReader(in, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> new StreamReader(in, 0, -1));
    }

    @Test
    void corruptedStreamNamesTheRule() throws Exception {
        byte[] all = twoTensorStream();
        all[0] ^= 0x55; // the magic of the first frame
        FormatException e = assertThrows(FormatException.class, () -> readAll(all));
        assertTrue(e.getMessage().contains("Magic at byte 0"), e.getMessage());
        assertTrue(e.getMessage().contains("descriptor.md"), "names the spec rule: " + e.getMessage());
    }

    @Test
    void flippedBytesOfAStreamNeverCrash() throws Exception {
        byte[] all = twoTensorStream();
        int errors = 0;
        for (int i = 0; i < all.length; i++) {
            for (int bit : new int[] {0x01, 0x80}) {
                byte[] bad = all.clone();
                bad[i] ^= bit;
                try {
                    readAll(bad);
                } catch (HurrayException | TruncatedException e) {
                    errors++;
                    assertTrue(((HurrayError) e).status() < 0);
                }
            }
        }
        assertTrue(errors > 0);
    }

    @Test
    void limitsRefuseOversizedBuffers() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (StreamWriter w = new StreamWriter(out);
                Tensor t = Tensor.dense(ElementType.FLOAT32, Tensor.allocate(4096), 1024)) {
            w.write(t);
        }
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(out.toByteArray()), 0, 1024)) {
            FormatException e = assertThrows(FormatException.class, r::next);
            assertEquals(Status.LIMIT, e.status());
        }
    }

    @Test
    void garbageDescriptorNamesRuleAndOffset() {
        FormatException e = assertThrows(FormatException.class,
                () -> Descriptor.decode(new byte[] {'H', 'R', 'R', 'Y', 1, 0, 0, 0}));
        assertEquals(Status.DESCRIPTOR, e.status());
        assertTrue(e.getMessage().startsWith("HURRAY_ERR_DESCRIPTOR"), e.getMessage());
        assertTrue(e.getMessage().contains("at byte 8"), e.getMessage());
        HurrayException empty = assertThrows(HurrayException.class, () -> Descriptor.decode(new byte[0]));
        assertEquals(Status.NULL_POINTER, empty.status());
    }

    private Path goodFile() throws Exception {
        Path p = tmp.resolve("good.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(p, 0, false);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2), 2)) {
            w.write("t", t);
            w.putMetadata("k", "v");
            w.finish();
        }
        return p;
    }

    @Test
    void tensorOrKeyMissingIsNotFound() throws Exception {
        try (TensorFile f = openGood()) {
            assertEquals(Status.NOT_FOUND, assertThrows(NotFoundException.class,
                    () -> f.tensor("absent")).status());
            assertEquals(Status.NOT_FOUND, assertThrows(NotFoundException.class,
                    () -> f.metadata("absent")).status());
        }
    }

    /** The five bad inputs of issue 12: each the JDK's conventional type, naming the path. */
    @Test
    void fiveBadInputsGiveConventionalExceptionsNamingThePath() throws Exception {
        Path missing = tmp.resolve("nope.hrry");
        MissingFileException nf = assertThrows(MissingFileException.class,
                () -> TensorFile.open(missing));
        assertTrue(nf instanceof java.nio.file.NoSuchFileException);
        assertEquals(missing.toString(), nf.getFile());
        assertTrue(nf.getMessage().startsWith(missing + ": HURRAY_ERR_FILE_NOT_FOUND: "),
                nf.getMessage());
        assertEquals(Status.FILE_NOT_FOUND, nf.status());
        assertEquals("not_found", nf.category());
        assertEquals(2, nf.osError()); // ENOENT

        Path dir = Files.createDirectory(tmp.resolve("adir.hrry"));
        IsDirectoryException d = assertThrows(IsDirectoryException.class,
                () -> TensorFile.open(dir));
        assertTrue(d instanceof java.nio.file.FileSystemException);
        assertEquals(dir.toString(), d.getFile());
        assertTrue(d.getMessage().startsWith(dir + ": HURRAY_ERR_IO: "), d.getMessage());
        assertTrue(d.getMessage().toLowerCase(java.util.Locale.ROOT).contains("directory"),
                d.getMessage());
        assertEquals(21, d.osError()); // EISDIR
        assertEquals("io", d.category());

        Path empty = Files.write(tmp.resolve("empty.hrry"), new byte[0]);
        TruncatedException e0 = assertThrows(TruncatedException.class,
                () -> TensorFile.open(empty));
        assertTrue(e0 instanceof java.io.EOFException);
        assertEquals(Status.TRUNCATED, e0.status());
        assertEquals("truncated", e0.category());
        assertTrue(e0.getMessage().contains(empty.toString()), e0.getMessage());
        assertTrue(e0.getMessage().contains("Truncated at byte 0"), e0.getMessage());

        byte[] good = Files.readAllBytes(goodFile());
        Path cut = Files.write(tmp.resolve("cut.hrry"), Arrays.copyOf(good, good.length - 3));
        TruncatedException ec = assertThrows(TruncatedException.class,
                () -> TensorFile.open(cut));
        assertTrue(ec.getMessage().contains(cut.toString()), ec.getMessage());
        assertTrue(ec.getMessage().contains("Truncated at byte " + (good.length - 3)),
                ec.getMessage());

        byte[] noise = new byte[4096];
        new java.util.Random(12).nextBytes(noise);
        Path random = Files.write(tmp.resolve("random.hrry"), noise);
        FormatException ef = assertThrows(FormatException.class, () -> TensorFile.open(random));
        assertTrue(ef instanceof HurrayError);
        assertEquals("format", ef.category());
        assertTrue(ef.getMessage().contains(random.toString()), ef.getMessage());
        assertTrue(ef.getMessage().contains("at byte"), ef.getMessage());

        // The writer: a destination whose directory does not exist.
        Path nowhere = tmp.resolve("no/such/dir/out.hrry");
        MissingFileException wf = assertThrows(MissingFileException.class,
                () -> TensorFileWriter.create(nowhere));
        assertTrue(wf.getMessage().contains(nowhere.toString()), wf.getMessage());
    }

    private TensorFile openGood() throws Exception {
        return TensorFile.open(goodFile());
    }

    @Test
    void truncatedAndCorruptedFilesAreRefused() throws Exception {
        byte[] good = Files.readAllBytes(goodFile());
        Path bad = tmp.resolve("bad.hrry");

        Files.write(bad, Arrays.copyOf(good, good.length - 3));
        TruncatedException cut = assertThrows(TruncatedException.class,
                () -> TensorFile.open(bad));
        assertTrue(cut.getMessage().contains("at byte"), cut.getMessage());

        byte[] flipped = good.clone();
        flipped[flipped.length - 30] ^= 0x40; // inside index/trailer
        Files.write(bad, flipped);
        FormatException e = assertThrows(FormatException.class, () -> TensorFile.open(bad));
        assertTrue(e.getMessage().contains("at byte"), e.getMessage());
    }

    @Test
    void flippedBytesOfAFileNeverCrash() throws Exception {
        byte[] good = Files.readAllBytes(goodFile());
        Path bad = tmp.resolve("flip.hrry");
        int refused = 0;
        int opened = 0;
        // Every byte outside the 4096-aligned payload padding, and a sample of the rest.
        for (int i = 0; i < good.length; i++) {
            if (good[i] == 0 && i % 97 != 0) {
                continue;
            }
            byte[] b = good.clone();
            b[i] ^= (byte) 0xA5;
            Files.write(bad, b);
            try (TensorFile f = TensorFile.open(bad)) {
                for (String n : f.names()) {
                    try (Tensor t = f.tensor(n)) {
                        t.buffer(0).get(0);
                    }
                }
                opened++;
            } catch (HurrayException | IOException ex) {
                assertTrue(ex instanceof HurrayError, ex.toString());
                assertTrue(((HurrayError) ex).status() < 0);
                refused++;
            }
        }
        assertTrue(refused > 0, "refused " + refused + ", opened " + opened);
        try (TensorFile f = TensorFile.open(goodFile()); Tensor t = f.tensor("t")) {
            assertArrayEquals(new float[] {1, 2}, new float[] {t.floats().get(0), t.floats().get(1)});
        }
    }
}
