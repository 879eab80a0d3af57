package dev.hurray;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Items: plain tensors and composites through streams and files. */
class CompositeTest extends LeakChecked {
    @TempDir
    Path tmp;

    /** A float32 [4] partition head over two float32 [2] halves (shards at 0 and 2). */
    private static Item partition(float a, float b, float c, float d) {
        Tensor head = Tensor.wrap(Descriptor.builder(ElementType.FLOAT32, Layout.COMPOSITE_HEAD, 4)
                .compositeHead(new Descriptor.CompositeHead(2, Descriptor.CompositeHead.PARTITION, 0))
                .build());
        Tensor lo = Tensor.wrap(Descriptor.builder(ElementType.FLOAT32, Layout.ROW_MAJOR, 2)
                .addBuffer(8, 64).shard(new Descriptor.Shard(new long[] {4}, new long[] {0})).build(),
                TestSupport.floats(a, b));
        Tensor hi = Tensor.wrap(Descriptor.builder(ElementType.FLOAT32, Layout.ROW_MAJOR, 2)
                .addBuffer(8, 64).shard(new Descriptor.Shard(new long[] {4}, new long[] {2})).build(),
                TestSupport.floats(c, d));
        try (head; lo; hi) {
            return Item.composite(head, Item.of(lo), Item.of(hi));
        }
    }

    private static void checkPartition(Item p, float... want) {
        assertTrue(p.isComposite());
        assertEquals(2, p.memberCount());
        try (Tensor h = p.tensor()) {
            assertEquals(Layout.COMPOSITE_HEAD, h.layout());
            Descriptor.CompositeHead ch = h.descriptor().compositeHead().orElseThrow();
            assertEquals(2, ch.memberCount());
            assertEquals(Descriptor.CompositeHead.PARTITION, ch.rule());
            assertEquals(0, h.bufferCount());
        }
        List<Item> ms = p.members();
        for (int i = 0; i < 2; i++) {
            try (Item m = ms.get(i); Tensor t = m.tensor()) {
                assertFalse(m.isComposite());
                assertArrayEquals(new long[] {4}, t.descriptor().shard().orElseThrow().parentShape());
                assertArrayEquals(new long[] {2L * i}, t.descriptor().shard().orElseThrow().offset());
                assertEquals(want[2 * i], t.floats().get(0));
                assertEquals(want[2 * i + 1], t.floats().get(1));
            }
        }
    }

    @Test
    void streamRoundTripOfPlainAndCompositeItems() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (StreamWriter w = new StreamWriter(out);
                Tensor plain = Tensor.dense(ElementType.INT8, TestSupport.bytes((byte) 7), 1);
                Item p = partition(1, 2, 3, 4)) {
            w.write(plain);
            w.write(p);
            try (Item again = Item.of(plain)) {
                w.write(again);
            }
        }
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(out.toByteArray()))) {
            try (Item first = r.nextItem(); Tensor t = first.tensor()) {
                assertFalse(first.isComposite());
                assertEquals(0, first.memberCount());
                assertTrue(first.members().isEmpty());
                assertEquals(7, t.bytes().get(0));
            }
            try (Item p = r.nextItem()) {
                checkPartition(p, 1, 2, 3, 4);
            }
            try (Tensor t = r.next()) {
                assertEquals(7, t.bytes().get(0));
            }
            assertNull(r.nextItem());
        }
    }

    @Test
    void readingACompositeAsATensorIsRefusedCleanly() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (StreamWriter w = new StreamWriter(out); Item p = partition(1, 2, 3, 4)) {
            w.write(p);
        }
        try (StreamReader r = new StreamReader(new ByteArrayInputStream(out.toByteArray()))) {
            HurrayException e = assertThrows(HurrayException.class, r::next);
            assertEquals(Status.NOT_APPLICABLE, e.status());
            try (Item p = r.nextItem()) {
                checkPartition(p, 1, 2, 3, 4);
            }
        }
    }

    @Test
    void fileRoundTripNamesMembersAndTheItemOutlivesTheReader() throws Exception {
        Path path = tmp.resolve("items.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(path, 0, false); Item p = partition(5, 6, 7, 8)) {
            w.write("p", p);
            w.finish();
        }
        Item kept;
        try (TensorFile f = TensorFile.open(path)) {
            assertEquals(List.of("p", "p/0", "p/1"), f.names());
            try (Tensor member = f.tensor("p/1")) {
                assertEquals(7f, member.floats().get(0));
            }
            kept = f.item("p");
        }
        try (kept) {
            checkPartition(kept, 5, 6, 7, 8);
        }
    }

    /** A float32 [2] file tensor named "x" holding {1, 2}, and its path. */
    private Path fileWithX() throws IOException {
        Path path = tmp.resolve("x.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(path, 0, false);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2), 2)) {
            w.write("x", t);
            w.finish();
        }
        return path;
    }

    private static Tensor groupHead(int members) {
        return Tensor.wrap(Descriptor.builder(ElementType.FLOAT32, Layout.COMPOSITE_HEAD, 2)
                .compositeHead(new Descriptor.CompositeHead(members,
                        Descriptor.CompositeHead.GROUP, 0))
                .build());
    }

    @Test
    void membersOfEveryOriginAreWritableWhateverTheHead() throws Exception {
        Path path = fileWithX();
        // In-memory head, file member (the member's memory is the file mapping).
        try (TensorFile f = TensorFile.open(path); Tensor ft = f.tensor("x");
                Tensor head = groupHead(1);
                Item g = Item.composite(head, Item.of(ft));
                Item m = g.member(0); Tensor mt = m.tensor()) {
            mt.writableBuffer(0).putFloat(4, 20f);
            assertEquals(20f, ft.floats().get(1), "the member shares the file tensor's memory");
        }
        // File-backed head, in-memory member: the member is the caller's memory.
        Path groupFile = tmp.resolve("group.hrry");
        try (TensorFileWriter w = TensorFileWriter.create(groupFile, 0, false);
                Tensor h = groupHead(1);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(5, 6), 2);
                Item g = Item.composite(h, Item.of(t))) {
            w.write("g", g);
            w.finish();
        }
        ByteBuffer mine = TestSupport.floats(3, 4);
        try (TensorFile f = TensorFile.open(groupFile); Item fileGroup = f.item("g");
                Tensor head = fileGroup.tensor();
                Tensor t = Tensor.dense(ElementType.FLOAT32, mine, 2);
                Item g = Item.composite(head, Item.of(t));
                Item m = g.member(0); Tensor mt = m.tensor()) {
            mt.writableBuffer(0).putFloat(0, 30f);
            assertEquals(30f, mine.getFloat(0), "written straight into the caller's buffer");
        }
        assertArrayEquals(new float[] {1, 2}, floatsOnDisk(path), "the file never changes");
    }

    private static float[] floatsOnDisk(Path path) throws IOException {
        try (TensorFile f = TensorFile.open(path); Tensor t = f.tensor("x")) {
            float[] v = new float[t.floats().remaining()];
            t.floats().get(v);
            return v;
        }
    }

    @Test
    void rejectedMembersAreClosedAsDocumented() throws Exception {
        try (Tensor head = groupHead(2);
                Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2), 2)) {
            // The same member twice.
            Item twice = Item.of(t);
            assertThrows(IllegalArgumentException.class, () -> Item.composite(head, twice, twice));
            assertTrue(twice.isClosedForTest());

            // A closed member: the other (good) member is closed all the same.
            Item good = Item.of(t);
            Item closed = Item.of(t);
            closed.close();
            assertThrows(IllegalArgumentException.class, () -> Item.composite(head, good, closed));
            assertTrue(good.isClosedForTest(), "a rejected composite closes every member");

            // A borrowed member (and the owned one beside it).
            try (Tensor h1 = groupHead(1)) {
                Item parent = Item.composite(h1, Item.of(t));
                Item borrowed = parent.member(0);
                Item other = Item.of(t);
                assertThrows(IllegalArgumentException.class,
                        () -> Item.composite(head, other, borrowed));
                assertTrue(other.isClosedForTest());
                assertTrue(borrowed.isClosedForTest());
                assertEquals(1, parent.memberCount(), "closing a borrowed member leaves its parent");
                parent.close();
            }
            // A null member: the others are closed.
            Item beforeNull = Item.of(t);
            assertThrows(NullPointerException.class, () -> Item.composite(head, beforeNull, null));
            assertTrue(beforeNull.isClosedForTest());
            // A null head.
            Item noHead = Item.of(t);
            assertThrows(NullPointerException.class, () -> Item.composite(null, noHead));
            assertTrue(noHead.isClosedForTest());
        }
    }

    @Test
    void membersAreMovedAndBorrowedObjectsKeepTheItemAlive() throws Exception {
        Item member;
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(1, 2), 2)) {
            member = Item.of(t);
            assertEquals(1f, t.floats().get(0), "Item.of shares: the tensor stays usable");
        }
        Tensor borrowed = member.tensor();
        Tensor head = Tensor.wrap(Descriptor.builder(ElementType.FLOAT32, Layout.COMPOSITE_HEAD, 2)
                .compositeHead(new Descriptor.CompositeHead(1, Descriptor.CompositeHead.GROUP, 0))
                .build());
        // A member with a borrowed tensor still open cannot move: nothing moves, all closed.
        Item m2 = member;
        assertThrows(IllegalArgumentException.class, () -> Item.composite(head, m2));
        assertTrue(member.isClosedForTest());
        assertEquals(2f, borrowed.floats().get(1), "the borrowed tensor still reads its memory");
        borrowed.close();
        try (Tensor t = Tensor.dense(ElementType.FLOAT32, TestSupport.floats(3, 4), 2)) {
            Item fresh = Item.of(t);
            try (Item g = Item.composite(head, fresh)) {
                assertTrue(fresh.isClosedForTest(), "the member moved into the composite");
                assertThrows(IllegalStateException.class, fresh::memberCount);
                try (Item m = g.member(0); Tensor mt = m.tensor()) {
                    assertEquals(4f, mt.floats().get(1));
                }
                assertThrows(HurrayException.class, () -> g.member(5));
            }
        }
        head.close();
    }
}
