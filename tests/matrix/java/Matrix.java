// The Java producer and consumer of the cross-language matrix (tests/matrix/README.md).
//
//   java -cp hurray.jar:. Matrix produce CASES OUT_DIR   write CASE.hrry / CASE.hrrys
//   java -cp hurray.jar:. Matrix consume CASES DIR...    check every producer directory
//   java -cp hurray.jar:. Matrix views FILE              open, view and checksum every tensor
//   java -cp hurray.jar:. Matrix hostile DIR             every hostile file and stream must be refused (Hostile.java)
//   java -cp hurray.jar:. Matrix metadata FILE [ranged]  open, read every KV value and name
//   java -cp hurray.jar:. Matrix net-get ADDR CASES OUT  GET every case's items ("CASE:NAME"), write OUT/CASE.hrry
//   java -cp hurray.jar:. Matrix net-put ADDR CASES DIR  PUT every item of DIR/CASE.hrry as "CASE:NAME"
//   java -cp hurray.jar:. Matrix net-views ADDR FILE     the demo's network step: GET every tensor, the views table
//
// Uses the public dev.hurray API only: Descriptor.builder for the expected descriptor,
// Tensor.wrap over the program's own direct buffers, Item.of / Item.composite,
// TensorFileWriter / TensorFile, StreamWriter / StreamReader (items). A case this
// program could not express would be written as CASE.hrry.na / CASE.hrrys.na and
// reported n/a by the consumer; today every case is expressed.
// Case syntax: tests/cases/README.md.

import dev.hurray.Descriptor;
import dev.hurray.ElementType;
import dev.hurray.HurrayException;
import dev.hurray.Item;
import dev.hurray.Layout;
import dev.hurray.NetClient;
import dev.hurray.NotFoundException;
import dev.hurray.StreamReader;
import dev.hurray.StreamWriter;
import dev.hurray.Tensor;
import dev.hurray.TensorFile;
import dev.hurray.TensorFileWriter;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.RecordComponent;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.zip.CRC32;

public final class Matrix {
    /** One tensor of a case: its expected descriptor (or why it cannot be built) and bytes. */
    static final class Spec {
        String name;
        String dtype;
        long[] shape;
        String[] layout;
        long offset;
        final List<long[]> buffers = new ArrayList<>(); // size, align, memory
        final List<byte[]> bytes = new ArrayList<>();
        Descriptor.Quantization quant;
        Descriptor.Statistics stats;
        Descriptor.Shard shard;
        final List<Descriptor.TileLevel> tiles = new ArrayList<>();
        int role = -1;
        Descriptor.CompositeHead composite; // null for a tensor
        final List<Spec> members = new ArrayList<>();
        int pending; // members still expected while parsing
        String unsupported;
        Descriptor desc;
        String buildError;

        Descriptor descriptor() {
            if (desc == null && buildError == null) {
                try {
                    desc = build();
                } catch (RuntimeException e) {
                    buildError = e.toString();
                }
            }
            if (desc == null) {
                throw new IllegalStateException("cannot build the expected descriptor: " + buildError);
            }
            return desc;
        }

        String why() {
            if (unsupported != null) {
                return unsupported;
            }
            for (Spec m : members) {
                String w = m.why();
                if (w != null) {
                    return w;
                }
            }
            return null;
        }

        void names(List<String> out) {
            out.add(name);
            for (Spec m : members) {
                m.names(out);
            }
        }

        private Descriptor build() {
            if (composite != null) {
                Descriptor.Builder b = Descriptor.builder(dtype(dtype), Layout.COMPOSITE_HEAD, shape)
                        .compositeHead(composite);
                if (shard != null) {
                    b.shard(shard);
                }
                if (role >= 0) {
                    b.memberRole(role);
                }
                return b.build();
            }
            Layout l = switch (layout[0]) {
                case "row_major" -> Layout.ROW_MAJOR;
                case "col_major" -> Layout.COLUMN_MAJOR;
                case "strided" -> Layout.STRIDED;
                case "coo" -> Layout.COO;
                case "csr" -> Layout.CSR;
                case "csc" -> Layout.CSC;
                case "csf" -> Layout.CSF;
                case "tiled" -> Layout.TILED;
                case "morton" -> Layout.MORTON;
                case "hilbert" -> Layout.HILBERT;
                case "block_paged" -> Layout.BLOCK_PAGED;
                default -> throw new IllegalArgumentException("layout " + layout[0]);
            };
            Descriptor.Builder b = Descriptor.builder(dtype(dtype), l, shape).byteOffset(offset);
            switch (layout[0]) {
                case "strided" -> b.strides(longs(layout[1]));
                case "coo" -> b.nnz(Long.parseUnsignedLong(layout[1])).cooSorted(layout[2].equals("sorted"));
                case "csr", "csc" -> b.nnz(Long.parseUnsignedLong(layout[1]));
                case "csf" -> b.nnz(Long.parseUnsignedLong(layout[1])).csfModeOrder(ulongs(layout[2]));
                case "tiled" -> tiles.forEach(b::tileLevel);
                case "morton" -> b.mortonBits(ulongs(layout[1]));
                case "hilbert" -> b.hilbert(Integer.parseInt(layout[1]), Integer.parseInt(layout[2]));
                case "block_paged" -> b.blockPaged(new Descriptor.BlockPaged(Long.parseUnsignedLong(layout[2]),
                        Integer.parseInt(layout[1]), 0, Integer.parseInt(layout[3]),
                        layout[5].equals("none") ? -1 : Integer.parseInt(layout[5]),
                        Map.of("key", 0, "value", 1, "fused", 2).get(layout[4]),
                        layout[6].equals("u64") ? 1 : 0));
                default -> { }
            }
            for (long[] e : buffers) {
                b.addBuffer(e[0], (int) e[1], (int) e[2]);
            }
            if (quant != null) {
                b.quantization(quant);
            }
            if (stats != null) {
                b.statistics(stats);
            }
            if (shard != null) {
                b.shard(shard);
            }
            if (role >= 0) {
                b.memberRole(role);
            }
            return b.build();
        }
    }

    /** One case: its tensors in order and its KV entries. */
    static final class Case {
        String name;
        final List<Spec> items = new ArrayList<>();
        final Map<String, Object> kv = new LinkedHashMap<>();
        String unsupported;

        String why() {
            if (unsupported != null) {
                return unsupported;
            }
            for (Spec s : items) {
                String w = s.why();
                if (w != null) {
                    return w;
                }
            }
            return null;
        }
    }

    // ---------------------------------------------------------------- case list

    static ElementType dtype(String s) {
        return ElementType.valueOf(s.toUpperCase(Locale.ROOT));
    }

    static long[] longs(String s) {
        return Arrays.stream(s.split(",")).mapToLong(Long::parseLong).toArray();
    }

    static long[] ulongs(String s) {
        return Arrays.stream(s.split(",")).mapToLong(Long::parseUnsignedLong).toArray();
    }

    static String unescape(String tok) {
        if (tok.equals("~")) {
            return "";
        }
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int i = 0; i < tok.length(); i++) {
            char c = tok.charAt(i);
            if (c == '%' && i + 2 < tok.length() + 1 && i + 3 <= tok.length()) {
                try {
                    b.write(Integer.parseInt(tok.substring(i + 1, i + 3), 16));
                    i += 2;
                    continue;
                } catch (NumberFormatException e) {
                    // a literal '%'
                }
            }
            b.write(c);
        }
        return b.toString(StandardCharsets.UTF_8);
    }

    static byte[] hex(String tok) {
        return tok.equals("~") ? new byte[0] : HexFormat.of().parseHex(tok);
    }

    static double f64(String tok) {
        if (tok.startsWith("bits:")) {
            return Double.longBitsToDouble(Long.parseUnsignedLong(tok.substring(5), 16));
        }
        return switch (tok) {
            case "inf" -> Double.POSITIVE_INFINITY;
            case "-inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(tok);
        };
    }

    /** SplitMix64 bytes (tests/cases/README.md). */
    static byte[] splitmix(long seed, int n) {
        ByteBuffer out = ByteBuffer.allocate(n + 8).order(ByteOrder.LITTLE_ENDIAN);
        long s = seed;
        while (out.position() < n) {
            s += 0x9E3779B97F4A7C15L;
            long z = s;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            out.putLong(z ^ (z >>> 31));
        }
        return Arrays.copyOf(out.array(), n);
    }

    static byte[] fill(long size, String[] t, int from) {
        int n = Math.toIntExact(size);
        String kind = t[from];
        byte[] out;
        switch (kind) {
            case "zero" -> out = new byte[n];
            case "rand" -> {
                out = splitmix(Long.parseUnsignedLong(t[from + 1]), n);
                if (t.length > from + 2) {
                    int bits = Integer.parseInt(t[from + 2].substring("bits=".length()));
                    for (long i = bits; i < (long) n * 8; i++) {
                        out[(int) (i / 8)] &= (byte) ~(1 << (i % 8));
                    }
                }
            }
            case "randrange" -> {
                long lo = Long.parseLong(t[from + 2]);
                long hi = Long.parseLong(t[from + 3]);
                out = splitmix(Long.parseUnsignedLong(t[from + 1]), n);
                for (int i = 0; i < n; i++) {
                    out[i] = (byte) (lo + Byte.toUnsignedInt(out[i]) % (hi - lo + 1));
                }
            }
            case "hex" -> out = hex(String.join("", Arrays.copyOfRange(t, from + 1, t.length)));
            default -> {
                ByteBuffer b = ByteBuffer.allocate(8 * (t.length - from)).order(ByteOrder.LITTLE_ENDIAN);
                for (int i = from + 1; i < t.length; i++) {
                    String v = t[i];
                    switch (kind) {
                        case "u8", "i8" -> b.put((byte) Long.parseLong(v));
                        case "u16", "i16" -> b.putShort((short) Long.parseLong(v));
                        case "u32", "i32" -> b.putInt((int) Long.parseLong(v));
                        case "u64" -> b.putLong(Long.parseUnsignedLong(v));
                        case "i64" -> b.putLong(Long.parseLong(v));
                        case "f32" -> b.putFloat((float) f64(v));
                        case "f64" -> b.putDouble(f64(v));
                        default -> throw new IllegalArgumentException("unknown fill " + kind);
                    }
                }
                out = Arrays.copyOf(b.array(), b.position());
            }
        }
        if (out.length != n) {
            throw new IllegalArgumentException("fill gives " + out.length + " bytes, the buffer has " + n);
        }
        return out;
    }

    static Descriptor.Statistics stats(String[] t) {
        int mask = 0;
        long nnz = 0;
        double sparsity = 0, min = 0, max = 0, absmax = 0, mean = 0, stddev = 0;
        int nmN = 0, nmM = 0;
        boolean nan = false, inf = false;
        for (int i = 1; i < t.length; i++) {
            String[] kv = t[i].split("=", 2);
            String v = kv[1];
            switch (kv[0]) {
                case "nnz" -> { nnz = Long.parseUnsignedLong(v); mask |= 1; }
                case "sparsity" -> { sparsity = f64(v); mask |= 2; }
                case "min" -> { min = f64(v); mask |= 4; }
                case "max" -> max = f64(v);
                case "absmax" -> absmax = f64(v);
                case "mean" -> { mean = f64(v); mask |= 8; }
                case "stddev" -> stddev = f64(v);
                case "nm" -> {
                    String[] nm = v.split(":");
                    nmN = Integer.parseInt(nm[0]);
                    nmM = Integer.parseInt(nm[1]);
                    mask |= 16;
                }
                case "nan" -> { nan = v.equals("1"); mask |= 32; }
                case "inf" -> inf = v.equals("1");
                default -> throw new IllegalArgumentException("unknown stat " + kv[0]);
            }
        }
        return new Descriptor.Statistics(mask, nnz, sparsity, min, max, absmax, mean, stddev, nmN, nmM,
                nan, inf);
    }

    static Descriptor.Quantization quant(String[] t) {
        int none = Descriptor.Quantization.NO_BUFFER;
        java.util.function.IntUnaryOperator zp = i -> t[i].equals("none") ? none : Integer.parseInt(t[i]);
        java.util.function.IntUnaryOperator u = i -> Integer.parseInt(t[i]);
        return switch (t[1]) {
            case "per_tensor" -> Descriptor.Quantization.perTensorAffine((float) f64(t[2]),
                    Integer.parseInt(t[3]));
            case "per_channel" -> new Descriptor.Quantization(2, 0, 0, u.applyAsInt(2), 0,
                    u.applyAsInt(3), zp.applyAsInt(4), 3, 0);
            case "per_block" -> new Descriptor.Quantization(3, 0, 0, u.applyAsInt(2), u.applyAsInt(3),
                    u.applyAsInt(4), zp.applyAsInt(5),
                    Map.of("f16", 1, "bf16", 2, "f32", 3).get(t[6]), 0);
            case "nf4" -> new Descriptor.Quantization(4, 0, 0, u.applyAsInt(2), u.applyAsInt(3),
                    u.applyAsInt(4), none, 0, 0);
            case "mxfp" -> new Descriptor.Quantization(5, 0, 0, u.applyAsInt(2), u.applyAsInt(3),
                    u.applyAsInt(4), none, 0, 0);
            default -> throw new IllegalArgumentException("unknown scheme " + t[1]);
        };
    }

    static Object kvValue(String[] t) {
        String type = t[2];
        String[] v = Arrays.copyOfRange(t, 3, t.length);
        if (!type.startsWith("array:")) {
            return one(type, v[0]);
        }
        String elem = type.substring("array:".length());
        switch (elem) {
            case "string": {
                String[] a = new String[v.length];
                for (int i = 0; i < v.length; i++) {
                    a[i] = unescape(v[i]);
                }
                return a;
            }
            case "int64":
                return Arrays.stream(v).mapToLong(Long::parseLong).toArray();
            case "uint64": {
                BigInteger[] a = new BigInteger[v.length];
                for (int i = 0; i < v.length; i++) {
                    a[i] = new BigInteger(v[i]);
                }
                return a;
            }
            case "float64":
                return Arrays.stream(v).mapToDouble(Matrix::f64).toArray();
            case "bool": {
                boolean[] a = new boolean[v.length];
                for (int i = 0; i < v.length; i++) {
                    a[i] = v[i].equals("true");
                }
                return a;
            }
            case "bytes": {
                byte[][] a = new byte[v.length][];
                for (int i = 0; i < v.length; i++) {
                    a[i] = hex(v[i]);
                }
                return a;
            }
            default:
                throw new IllegalArgumentException("unknown kv type " + type);
        }
    }

    static Object one(String kind, String s) {
        return switch (kind) {
            case "string" -> unescape(s);
            case "int64" -> Long.parseLong(s);
            case "uint64" -> new BigInteger(s);
            case "float64" -> f64(s);
            case "bool" -> s.equals("true");
            case "bytes" -> hex(s);
            default -> throw new IllegalArgumentException("unknown kv type " + kind);
        };
    }

    static final List<String> LAYOUTS = List.of("row_major", "col_major", "strided", "coo", "csr", "csc",
            "csf", "tiled", "morton", "hilbert", "block_paged");

    /** A tile order token: {@code row_major}, {@code col_major}, {@code strided:S0,...}, {@code tiled}. */
    static int order(String tok) {
        if (tok.startsWith("strided:")) {
            return 3;
        }
        return switch (tok) {
            case "row_major" -> 1;
            case "col_major" -> 2;
            case "tiled" -> 4;
            default -> throw new IllegalArgumentException("bad tile order " + tok);
        };
    }

    static long[] orderStrides(String tok, int rank) {
        return tok.startsWith("strided:") ? longs(tok.substring(8)) : new long[rank];
    }

    static List<Case> parseCases(Path path) throws Exception {
        List<Case> cases = new ArrayList<>();
        Spec cur = null;
        List<Spec> stack = new ArrayList<>();
        int line = 0;
        for (String text : Files.readAllLines(path)) {
            line++;
            String[] t = text.trim().split("[ \t]+");
            if (t[0].isEmpty() || t[0].startsWith("#")) {
                continue;
            }
            try {
                Case c = cases.isEmpty() ? null : cases.get(cases.size() - 1);
                switch (t[0]) {
                    case "case" -> {
                        Case n = new Case();
                        n.name = t[1];
                        cases.add(n);
                        cur = null;
                        stack.clear();
                    }
                    case "note" -> { }
                    case "kv" -> c.kv.put(unescape(t[1]), kvValue(t));
                    case "tensor", "composite" -> {
                        Spec s = new Spec();
                        s.name = unescape(t[1]);
                        s.dtype = t[2];
                        s.shape = t[3].equals("scalar") ? new long[0] : ulongs(t[3]);
                        if (t[0].equals("tensor")) {
                            s.layout = Arrays.copyOfRange(t, 4, t.length);
                            if (!LAYOUTS.contains(s.layout[0])) {
                                s.unsupported = "the " + s.layout[0] + " layout is not known to this program";
                            }
                        } else {
                            s.layout = new String[] {"composite"};
                            s.pending = Integer.parseInt(t[6]);
                            s.composite = new Descriptor.CompositeHead(s.pending,
                                    Map.of("partition", 1, "overlay", 2, "group", 3).get(t[4]),
                                    Map.of("none", 0, "replace", 1, "add", 2).get(t[5]));
                        }
                        if (!stack.isEmpty()) {
                            Spec top = stack.get(stack.size() - 1);
                            top.members.add(s);
                            top.pending--;
                        } else {
                            c.items.add(s);
                        }
                        while (!stack.isEmpty() && stack.get(stack.size() - 1).pending == 0) {
                            stack.remove(stack.size() - 1);
                        }
                        if (s.composite != null && s.pending > 0) {
                            stack.add(s);
                        }
                        cur = s;
                    }
                    case "tile" -> cur.tiles.add(new Descriptor.TileLevel(order(t[2]), order(t[3]), ulongs(t[1]),
                            orderStrides(t[2], cur.shape.length), orderStrides(t[3], cur.shape.length)));
                    case "offset" -> cur.offset = Long.parseUnsignedLong(t[1]);
                    case "buffer" -> {
                        long size = Long.parseUnsignedLong(t[1]);
                        long align = size > 0 ? 64 : 1;
                        long memory = 0;
                        int k = 2;
                        for (; k < t.length; k++) {
                            if (t[k].startsWith("align=")) {
                                align = Long.parseLong(t[k].substring(6));
                            } else if (t[k].startsWith("memory=")) {
                                memory = Map.of("standard", 0L, "host_pinned", 1L, "unified", 2L)
                                        .get(t[k].substring(7));
                            } else {
                                break;
                            }
                        }
                        cur.buffers.add(new long[] {size, align, memory});
                        cur.bytes.add(fill(size, t, k));
                    }
                    case "quant" -> cur.quant = quant(t);
                    case "stats" -> cur.stats = stats(t);
                    case "shard" -> cur.shard = new Descriptor.Shard(ulongs(t[1]), ulongs(t[2]));
                    case "role" -> cur.role = t[1].equals("base") ? Descriptor.ROLE_BASE : Descriptor.ROLE_CORRECTION;
                    default -> throw new IllegalArgumentException("unknown directive " + t[0]);
                }
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(path + " line " + line + ": " + e, e);
            }
        }
        return cases;
    }

    // ---------------------------------------------------------------- producer

    /** A direct buffer holding {@code b}, its first byte aligned to {@code align} (at least 64). */
    static ByteBuffer aligned(byte[] b, long align) {
        if (b.length == 0) {
            return ByteBuffer.allocateDirect(0);
        }
        int a = (int) Math.max(align, 64);
        ByteBuffer raw = ByteBuffer.allocateDirect(b.length + 2 * a);
        ByteBuffer s = raw.alignedSlice(a);
        s.limit(b.length);
        s = s.slice();
        s.put(b).flip();
        return s;
    }

    static Tensor make(Spec s) {
        ByteBuffer[] bufs = new ByteBuffer[s.bytes.size()];
        for (int i = 0; i < bufs.length; i++) {
            bufs[i] = aligned(s.bytes.get(i), s.buffers.get(i)[1]);
        }
        return Tensor.wrap(s.descriptor(), bufs);
    }

    static Item makeItem(Spec s) {
        try (Tensor t = make(s)) {
            if (s.composite == null) {
                return Item.of(t);
            }
            Item[] members = new Item[s.members.size()];
            try {
                for (int i = 0; i < members.length; i++) {
                    members[i] = makeItem(s.members.get(i));
                }
            } catch (RuntimeException e) {
                for (Item m : members) {
                    if (m != null) {
                        m.close();
                    }
                }
                throw e;
            }
            return Item.composite(t, members);
        }
    }

    static void produce(Case c, Path dir) throws Exception {
        String why = c.why();
        if (why != null) {
            Files.writeString(dir.resolve(c.name + ".hrry.na"), why + "\n");
            Files.writeString(dir.resolve(c.name + ".hrrys.na"), why + "\n");
            return;
        }
        List<Item> tensors = new ArrayList<>();
        try {
            for (Spec s : c.items) {
                tensors.add(makeItem(s));
            }
            try (TensorFileWriter w = TensorFileWriter.create(dir.resolve(c.name + ".hrry"), 0, false)) {
                for (int i = 0; i < tensors.size(); i++) {
                    w.write(c.items.get(i).name, tensors.get(i));
                }
                for (Map.Entry<String, Object> e : c.kv.entrySet()) {
                    w.putMetadata(e.getKey(), e.getValue());
                }
                w.finish();
            }
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(dir.resolve(c.name + ".hrrys")));
                    StreamWriter w = new StreamWriter(out)) {
                for (Item t : tensors) {
                    w.write(t);
                }
            }
        } finally {
            tensors.forEach(Item::close);
        }
    }

    // ---------------------------------------------------------------- consumer

    /** The first differing component of two records, or of two values ("" when equal). */
    static String diff(String what, Object want, Object got) {
        if (Objects.deepEquals(want, got)) {
            return "";
        }
        if (want != null && got != null && want.getClass().isRecord() && want.getClass() == got.getClass()) {
            for (RecordComponent rc : want.getClass().getRecordComponents()) {
                try {
                    Object w = rc.getAccessor().invoke(want);
                    Object g = rc.getAccessor().invoke(got);
                    String d = diff(what + " " + rc.getName(), w, g);
                    if (!d.isEmpty()) {
                        return d;
                    }
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return what + ": expected " + show(want) + ", got " + show(got);
    }

    static String show(Object o) {
        if (o instanceof long[] a) {
            return Arrays.toString(a);
        }
        if (o instanceof double[] a) {
            return Arrays.toString(a);
        }
        if (o instanceof boolean[] a) {
            return Arrays.toString(a);
        }
        if (o instanceof byte[] a) {
            return HexFormat.of().formatHex(a);
        }
        if (o instanceof Object[] a) {
            return Arrays.deepToString(a);
        }
        if (o instanceof java.util.Optional<?> opt) {
            return opt.map(Matrix::show).orElse("absent");
        }
        return String.valueOf(o);
    }

    /** Compares a tensor with its spec: every descriptor field, then every byte. */
    static String check(Spec s, Tensor t) {
        Descriptor want = s.descriptor();
        Descriptor got = t.descriptor();
        String[] d = {
            diff("dtype", want.typeTag(), got.typeTag()),
            diff("shape", want.shape(), got.shape()),
            diff("layout", want.layoutTag(), got.layoutTag()),
            diff("byte_offset", want.byteOffset(), got.byteOffset()),
            diff("buffer count", want.bufferCount(), got.bufferCount()),
            diff("buffer table", want.buffers(), got.buffers()),
            diff("strides", show(want.strides()), show(got.strides())),
            diff("nnz", want.nnz(), got.nnz()),
            diff("coo is_sorted", want.cooSorted(), got.cooSorted()),
            diff("quantization", want.quantization().orElse(null), got.quantization().orElse(null)),
            diff("statistics", want.statistics().orElse(null), got.statistics().orElse(null)),
            diff("tiling", want.tiling(), got.tiling()),
            diff("morton bits", show(want.mortonBits()), show(got.mortonBits())),
            diff("hilbert", show(want.hilbert()), show(got.hilbert())),
            diff("csf mode order", show(want.csfModeOrder()), show(got.csfModeOrder())),
            diff("block-paged", want.blockPaged().orElse(null), got.blockPaged().orElse(null)),
            diff("shard", want.shard().orElse(null), got.shard().orElse(null)),
            diff("composite head", want.compositeHead().orElse(null), got.compositeHead().orElse(null)),
            diff("member role", want.memberRole(), got.memberRole()),
            diff("flags", want.flags(), got.flags()),
        };
        for (String x : d) {
            if (!x.isEmpty()) {
                return "tensor \"" + s.name + "\": " + x;
            }
        }
        for (int i = 0; i < s.bytes.size(); i++) {
            byte[] w = s.bytes.get(i);
            ByteBuffer g = t.buffer(i);
            if (g.remaining() != w.length) {
                return "tensor \"" + s.name + "\": buffer " + i + ": expected " + w.length + " bytes, got "
                        + g.remaining();
            }
            int first = -1;
            int differ = 0;
            for (int k = 0; k < w.length; k++) {
                if (g.get(k) != w[k]) {
                    differ++;
                    if (first < 0) {
                        first = k;
                    }
                }
            }
            if (first >= 0) {
                return String.format("tensor \"%s\": buffer %d byte %d: expected 0x%02x, got 0x%02x (%d of %d bytes differ)",
                        s.name, i, first, w[first], g.get(first), differ, w.length);
            }
        }
        byte[] wb = want.toBytes();
        byte[] gb = got.toBytes();
        if (!Arrays.equals(wb, gb)) {
            int k = Arrays.mismatch(wb, gb);
            return "tensor \"" + s.name + "\": descriptor byte " + k + " differs (a field the Java binding does not decode)";
        }
        return null;
    }

    /** Compares an item with its spec: kind, head or tensor, members (recursively). */
    static String checkItem(Spec s, Item it) {
        if (it.isComposite() != (s.composite != null)) {
            return "item \"" + s.name + "\": expected " + (s.composite != null ? "a composite" : "a tensor")
                    + ", got " + (it.isComposite() ? "a composite" : "a tensor");
        }
        try (Tensor t = it.tensor()) {
            String bad = check(s, t);
            if (bad != null) {
                return bad;
            }
        }
        if (it.memberCount() != s.members.size()) {
            return "composite \"" + s.name + "\": expected " + s.members.size() + " members, got " + it.memberCount();
        }
        for (int i = 0; i < s.members.size(); i++) {
            try (Item m = it.member(i)) {
                String bad = checkItem(s.members.get(i), m);
                if (bad != null) {
                    return bad;
                }
            }
        }
        return null;
    }

    static String consumeFile(Case c, Path file) {
        try (TensorFile f = TensorFile.open(file)) {
            List<String> want = new ArrayList<>();
            c.items.forEach(x -> x.names(want));
            String d = diff("names", want, f.names());
            if (!d.isEmpty()) {
                return d;
            }
            for (Spec s : c.items) {
                try (Item it = f.item(s.name)) {
                    String bad = checkItem(s, it);
                    if (bad != null) {
                        return bad;
                    }
                }
            }
            d = diff("kv keys", new ArrayList<>(c.kv.keySet()), f.metadataKeys());
            if (!d.isEmpty()) {
                return d;
            }
            for (Map.Entry<String, Object> e : c.kv.entrySet()) {
                Object got = f.metadata(e.getKey());
                Object w = e.getValue();
                if (got == null || w.getClass() != got.getClass()) {
                    return "kv \"" + e.getKey() + "\": expected a " + w.getClass().getSimpleName() + ", got "
                            + (got == null ? "null" : got.getClass().getSimpleName());
                }
                d = diff("kv \"" + e.getKey() + "\"", w, got);
                if (!d.isEmpty()) {
                    return d;
                }
            }
            return null;
        } catch (Exception e) {
            return e.toString();
        }
    }

    static String consumeStream(Case c, Path file) {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file));
                StreamReader r = new StreamReader(in)) {
            for (int i = 0; i < c.items.size(); i++) {
                try (Item t = r.nextItem()) {
                    if (t == null) {
                        return "item " + i + ": the stream ended after " + i + " of " + c.items.size() + " items";
                    }
                    String bad = checkItem(c.items.get(i), t);
                    if (bad != null) {
                        return "item " + i + ", " + bad;
                    }
                }
            }
            try (Item extra = r.nextItem()) {
                if (extra != null) {
                    return "an item after the last expected one (" + c.items.size() + ")";
                }
            }
            return null;
        } catch (Exception e) {
            return e.toString();
        }
    }

    static String clean(String s) {
        return s.replace('\t', ' ').replace('\n', ' ');
    }

    static void consume(List<Case> cases, List<Path> dirs) throws Exception {
        for (Path dir : dirs) {
            String producer = dir.getFileName().toString();
            for (Case c : cases) {
                for (String container : new String[] {"file", "stream"}) {
                    String ext = container.equals("file") ? ".hrry" : ".hrrys";
                    Path out = dir.resolve(c.name + ext);
                    Path na = dir.resolve(c.name + ext + ".na");
                    String status;
                    String detail = "";
                    if (Files.exists(na)) {
                        status = "na";
                        detail = Files.readString(na).trim();
                    } else if (c.why() != null) {
                        status = "na";
                        detail = c.why();
                    } else if (!Files.exists(out)) {
                        status = "fail";
                        detail = "missing " + out.getFileName();
                    } else {
                        String bad = container.equals("file") ? consumeFile(c, out) : consumeStream(c, out);
                        status = bad == null ? "pass" : "fail";
                        detail = bad == null ? "" : bad;
                    }
                    System.out.println("result\t" + producer + "\t" + container + "\t" + c.name + "\t" + status
                            + "\t" + clean(detail));
                }
            }
        }
    }

    // ---------------------------------------------------------------- views

    /** How many more times {@code views} opens and views the file after the first pass. */
    static final int WARM_RUNS = 200;

    /** One open + view pass: names, tensors and a view of every buffer, in index order. */
    record ViewSet(TensorFile file, List<String> names, List<Tensor> tensors,
            List<List<ByteBuffer>> views) {
        static ViewSet open(Path path) throws IOException {
            TensorFile f = TensorFile.open(path);
            List<String> names = f.names();
            List<Tensor> tensors = new ArrayList<>();
            List<List<ByteBuffer>> views = new ArrayList<>();
            for (String n : names) {
                Tensor t = f.tensor(n);
                tensors.add(t);
                List<ByteBuffer> v = new ArrayList<>();
                for (int b = 0; b < t.bufferCount(); b++) {
                    v.add(t.buffer(b));
                }
                views.add(v);
            }
            return new ViewSet(f, names, tensors, views);
        }

        void close() {
            tensors.forEach(Tensor::close);
            file.close();
        }
    }

    /**
     * Opens the file (memory-mapped), takes a direct {@code ByteBuffer} view of every
     * tensor's buffers, prints {@code view NAME CRC32} and {@code time SECONDS} (open +
     * views only, this first pass in a fresh JVM); then {@link #WARM_RUNS} more passes
     * in this JVM and {@code warm SECONDS}: the fastest (closing is outside the
     * timing, as in the first).
     */
    static void views(Path path) throws IOException {
        // Load (extract) the native library first: the timing covers open + views only.
        dev.hurray.Hurray.abiVersion();
        long t0 = System.nanoTime();
        ViewSet first = ViewSet.open(path);
        double secs = (System.nanoTime() - t0) / 1e9;
        for (int i = 0; i < first.names().size(); i++) {
            CRC32 crc = new CRC32();
            for (ByteBuffer v : first.views().get(i)) {
                crc.update(v.duplicate());
            }
            System.out.printf("view\t%s\t%08x%n", first.names().get(i), crc.getValue());
        }
        System.out.printf(Locale.ROOT, "time\t%.6f%n", secs);
        int count = first.views().size();
        first.close();
        double warm = Double.MAX_VALUE;
        for (int w = 0; w < WARM_RUNS; w++) {
            t0 = System.nanoTime();
            ViewSet v = ViewSet.open(path);
            warm = Math.min(warm, (System.nanoTime() - t0) / 1e9);
            if (v.views().size() != count) {
                throw new IllegalStateException("a warm pass listed " + v.views().size()
                        + " tensors, the first " + count);
            }
            v.close();
        }
        System.out.printf(Locale.ROOT, "warm\t%.6f%n", warm);
    }

    // ---------------------------------------------------------------- metadata

    /** UTF-8 length of {@code s}, without encoding it (no garbage per string). */
    static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    /** Elements and string/byte payload bytes of one KV value (or window). */
    static long[] measure(Object v) {
        long elements = 0, bytes = 0;
        if (v instanceof String s) {
            return new long[] {1, utf8Length(s)};
        } else if (v instanceof byte[] b) {
            return new long[] {1, b.length};
        } else if (v instanceof String[] a) {
            for (String s : a) {
                elements++;
                bytes += utf8Length(s);
            }
        } else if (v instanceof byte[][] a) {
            for (byte[] b : a) {
                elements++;
                bytes += b.length;
            }
        } else if (v != null && v.getClass().isArray()) {
            elements = java.lang.reflect.Array.getLength(v);
        } else {
            elements = 1;
        }
        return new long[] {elements, bytes};
    }

    /**
     * Opens FILE, reads every tensor name and every KV value in full (with
     * {@code metadata()}, or, ranged, key by key in windows of 65536 elements), and
     * prints what it read, like every language's metadata command.
     */
    static void metadata(Path path, boolean ranged) throws IOException {
        long elements = 0, bytes = 0, nameBytes = 0;
        List<String> keys;
        Map<String, Object> held = null;
        List<String> names;
        try (TensorFile f = TensorFile.open(path)) {
            names = f.names();
            for (String n : names) {
                nameBytes += utf8Length(n);
            }
            keys = f.metadataKeys();
            if (ranged) {
                for (String k : keys) {
                    try {
                        f.metadataRange(k, 0, 0);
                    } catch (dev.hurray.HurrayException e) {
                        long[] m = measure(f.metadata(k));
                        elements += m[0];
                        bytes += m[1];
                        continue;
                    }
                    long n = f.metadataLength(k);
                    for (long at = 0; at < n; at += 1 << 16) {
                        long[] m = measure(f.metadataRange(k, at, (int) Math.min(1 << 16, n - at)));
                        elements += m[0];
                        bytes += m[1];
                    }
                }
            } else {
                try {
                    held = f.metadata();
                    for (Object v : held.values()) {
                        long[] m = measure(v);
                        elements += m[0];
                        bytes += m[1];
                    }
                } catch (dev.hurray.HurrayException e) {
                    // The whole-value bound refused an array: memory stays bounded.
                    if (e.status() != dev.hurray.Status.LIMIT) {
                        throw e;
                    }
                    System.out.printf("kv_refused\t%s%n", e.getMessage());
                }
            }
        }
        System.out.printf("kv_entries\t%d%nkv_elements\t%d%nkv_value_bytes\t%d%n", keys.size(), elements, bytes);
        System.out.printf("tensors\t%d%nname_bytes\t%d%n", names.size(), nameBytes);
        java.lang.ref.Reference.reachabilityFence(held);
    }

    /**
     * The {@code names} command: every element-type and layout tag (0..255) as {@link
     * ElementType#nameOf} and {@link Layout#nameOf} render it, one
     * {@code type|layout<TAB>0x2a<TAB>NAME} line each (cargo xtask matrix compares
     * these lines across languages).
     */
    static void tagNames() {
        StringBuilder b = new StringBuilder();
        for (int t = 0; t < 256; t++) {
            b.append(String.format("type\t0x%02x\t%s\n", t, ElementType.nameOf(t)));
        }
        for (int t = 0; t < 256; t++) {
            b.append(String.format("layout\t0x%02x\t%s\n", t, Layout.nameOf(t)));
        }
        System.out.print(b);
        System.out.flush();
    }

    // ---------------------------------------------------------------- network column

    /** The server's key of a case's top-level item. */
    static String netKey(Case c, String name) {
        return c.name + ":" + name;
    }

    /** "host:port" as the client's two arguments. */
    static NetClient dial(String addr) throws IOException {
        int colon = addr.lastIndexOf(':');
        return NetClient.connect(addr.substring(0, colon), Integer.parseInt(addr.substring(colon + 1)));
    }

    /**
     * net-get: dir/CASE.hrry holding every item fetched under "CASE:NAME", in the
     * case's order, then the case's KV metadata (which the protocol does not carry),
     * with the producer's writer options, so the bytes can equal the producer's. A
     * case Java cannot express, or one the server does not have, gets .na.
     */
    static void netGet(String addr, List<Case> cases, Path dir) throws Exception {
        Files.createDirectories(dir);
        int failed = 0;
        try (NetClient client = dial(addr)) {
            for (Case c : cases) {
                try {
                    netGetCase(client, c, dir);
                } catch (Exception | Error e) {
                    System.err.println("java net-get: case " + c.name + ": " + e);
                    failed++;
                }
            }
        }
        if (failed > 0) {
            System.exit(1);
        }
    }

    static void netGetCase(NetClient client, Case c, Path dir) throws Exception {
        String why = c.why();
        if (why != null) {
            Files.writeString(dir.resolve(c.name + ".hrry.na"), why + "\n");
            return;
        }
        List<Item> items = new ArrayList<>();
        try {
            for (Spec s : c.items) {
                try {
                    items.add(client.getItem(netKey(c, s.name)));
                } catch (NotFoundException e) {
                    Files.writeString(dir.resolve(c.name + ".hrry.na"),
                            "the server has no \"" + netKey(c, s.name) + "\": " + e.getMessage() + "\n");
                    return;
                }
            }
            try (TensorFileWriter w = TensorFileWriter.create(dir.resolve(c.name + ".hrry"), 0, false)) {
                for (int i = 0; i < items.size(); i++) {
                    w.write(c.items.get(i).name, items.get(i));
                }
                for (Map.Entry<String, Object> e : c.kv.entrySet()) {
                    w.putMetadata(e.getKey(), e.getValue());
                }
                w.finish();
            }
        } finally {
            items.forEach(Item::close);
        }
    }

    /** B.16 DEVICE_UNAVAILABLE: the server refuses non-host memory. */
    static final int DEVICE_UNAVAILABLE = 0x05;

    /**
     * net-put: every top-level item of dir/CASE.hrry under "CASE:NAME" (composites as
     * composites). A case without a file is skipped; one the server refuses as
     * DEVICE_UNAVAILABLE is reported n/a on stdout.
     */
    static void netPut(String addr, List<Case> cases, Path dir) throws Exception {
        int failed = 0;
        try (NetClient client = dial(addr)) {
            for (Case c : cases) {
                Path file = dir.resolve(c.name + ".hrry");
                if (!Files.exists(file)) {
                    continue;
                }
                try (TensorFile f = TensorFile.open(file)) {
                    for (Spec s : c.items) {
                        try (Item it = f.item(s.name)) {
                            client.put(netKey(c, s.name), it);
                        }
                    }
                } catch (HurrayException e) {
                    if (e.netCode() == DEVICE_UNAVAILABLE) {
                        System.out.println("java net-put: case " + c.name + ": n/a: " + e.getMessage());
                        continue;
                    }
                    System.err.println("java net-put: case " + c.name + ": " + e);
                    failed++;
                } catch (Exception | Error e) {
                    System.err.println("java net-put: case " + c.name + ": " + e);
                    failed++;
                }
            }
        }
        if (failed > 0) {
            System.exit(1);
        }
    }

    /**
     * net-views: the demo's network step. Reads the file only for its tensor names
     * (index order), GETs each over one connection and prints {@code view NAME CRC32}
     * (as {@code views}: CRC-32 of the buffers' bytes, in order) and
     * {@code time SECONDS} (connect plus every GET).
     */
    static void netViews(String addr, Path path) throws IOException {
        List<String> names;
        try (TensorFile f = TensorFile.open(path)) {
            names = f.names();
        }
        List<Tensor> got = new ArrayList<>();
        try {
            long t0 = System.nanoTime();
            try (NetClient client = dial(addr)) {
                for (String n : names) {
                    got.add(client.get(n));
                }
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            for (int i = 0; i < names.size(); i++) {
                CRC32 crc = new CRC32();
                Tensor t = got.get(i);
                for (int b = 0; b < t.bufferCount(); b++) {
                    crc.update(t.buffer(b));
                }
                System.out.printf("view\t%s\t%08x%n", names.get(i), crc.getValue());
            }
            System.out.printf(Locale.ROOT, "time\t%.6f%n", secs);
        } finally {
            got.forEach(Tensor::close);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("produce")) {
            List<Case> cases = parseCases(Path.of(args[1]));
            Path dir = Path.of(args[2]);
            Files.createDirectories(dir);
            int failed = 0;
            for (Case c : cases) {
                try {
                    produce(c, dir);
                } catch (Exception | Error e) {
                    System.err.println("java producer: case " + c.name + ": " + e);
                    failed++;
                }
            }
            System.exit(failed > 0 ? 1 : 0);
        } else if (args.length >= 2 && args[0].equals("consume")) {
            List<Case> cases = parseCases(Path.of(args[1]));
            List<Path> dirs = new ArrayList<>();
            for (int i = 2; i < args.length; i++) {
                dirs.add(Path.of(args[i]));
            }
            consume(cases, dirs);
        } else if (args.length == 2 && args[0].equals("views")) {
            views(Path.of(args[1]));
        } else if (args.length == 2 && args[0].equals("hostile")) {
            Hostile.run(Path.of(args[1]));
        } else if ((args.length == 2 || args.length == 3 && args[2].equals("ranged"))
                && args[0].equals("metadata")) {
            metadata(Path.of(args[1]), args.length == 3);
        } else if (args.length == 4 && args[0].equals("net-get")) {
            netGet(args[1], parseCases(Path.of(args[2])), Path.of(args[3]));
        } else if (args.length == 4 && args[0].equals("net-put")) {
            netPut(args[1], parseCases(Path.of(args[2])), Path.of(args[3]));
        } else if (args.length == 3 && args[0].equals("net-views")) {
            netViews(args[1], Path.of(args[2]));
        } else if (args.length == 1 && args[0].equals("names")) {
            tagNames();
        } else {
            System.err.println("usage: Matrix produce CASES OUT_DIR | consume CASES DIR... | views FILE | hostile DIR | metadata FILE [ranged] | net-get ADDR CASES OUT_DIR | net-put ADDR CASES DIR | net-views ADDR FILE");
            System.exit(2);
        }
    }
}
