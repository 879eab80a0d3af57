package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Helpers of the suite: leak accounting, conformance paths, a tiny JSON reader. */
final class TestSupport {
    private TestSupport() {}

    static long live() {
        return Native.liveObjects();
    }

    /**
     * Waits (collecting garbage, so Cleaners run) until the library's live-object
     * count is {@code expected}; fails with the count it saw after 20 s.
     */
    static void awaitLive(long expected) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        long now = live();
        while (now != expected && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
            now = live();
        }
        assertEquals(expected, now, "hurray_debug_live_objects");
    }

    /** ../shared/conformance, if present. */
    static Optional<Path> conformance() {
        String p = System.getProperty("hurray.conformance.dir", "../../../shared/conformance");
        Path dir = Path.of(p);
        return Files.isDirectory(dir) ? Optional.of(dir) : Optional.empty();
    }

    static ByteBuffer floats(float... v) {
        ByteBuffer b = Tensor.allocate(4L * v.length);
        b.order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().put(v);
        return b;
    }

    static ByteBuffer bytes(byte... v) {
        ByteBuffer b = Tensor.allocate(v.length);
        b.put(v).flip();
        return b;
    }

    // --- a minimal JSON reader (objects, arrays, strings, numbers, literals) ---

    static Object json(String s) {
        int[] at = {0};
        Object v = value(s, at);
        return v;
    }

    private static void ws(String s, int[] at) {
        while (at[0] < s.length() && Character.isWhitespace(s.charAt(at[0]))) {
            at[0]++;
        }
    }

    private static Object value(String s, int[] at) {
        ws(s, at);
        char c = s.charAt(at[0]);
        if (c == '{') {
            Map<String, Object> m = new LinkedHashMap<>();
            at[0]++;
            ws(s, at);
            if (s.charAt(at[0]) == '}') {
                at[0]++;
                return m;
            }
            while (true) {
                ws(s, at);
                String k = (String) value(s, at);
                ws(s, at);
                at[0]++; // ':'
                m.put(k, value(s, at));
                ws(s, at);
                if (s.charAt(at[0]++) == '}') {
                    return m;
                }
            }
        }
        if (c == '[') {
            List<Object> l = new ArrayList<>();
            at[0]++;
            ws(s, at);
            if (s.charAt(at[0]) == ']') {
                at[0]++;
                return l;
            }
            while (true) {
                l.add(value(s, at));
                ws(s, at);
                if (s.charAt(at[0]++) == ']') {
                    return l;
                }
            }
        }
        if (c == '"') {
            StringBuilder b = new StringBuilder();
            at[0]++;
            while (s.charAt(at[0]) != '"') {
                char ch = s.charAt(at[0]++);
                if (ch == '\\') {
                    char e = s.charAt(at[0]++);
                    if (e == 'u') {
                        b.append((char) Integer.parseInt(s.substring(at[0], at[0] + 4), 16));
                        at[0] += 4;
                    } else {
                        b.append(e == 'n' ? '\n' : e == 't' ? '\t' : e);
                    }
                } else {
                    b.append(ch);
                }
            }
            at[0]++;
            return b.toString();
        }
        int start = at[0];
        while (at[0] < s.length() && ",}] \n\r\t".indexOf(s.charAt(at[0])) < 0) {
            at[0]++;
        }
        String word = s.substring(start, at[0]);
        switch (word) {
            case "true":
                return Boolean.TRUE;
            case "false":
                return Boolean.FALSE;
            case "null":
                return null;
            default:
                return word.contains(".") || word.contains("e") ? (Object) Double.valueOf(word)
                        : (Object) Long.valueOf(word);
        }
    }
}
