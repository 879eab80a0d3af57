package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loader that unpacks the native library from the jar (classes) folder. */
class LoaderTest {
    @TempDir
    Path tmp;

    @Test
    void loadingFromTheJarLeavesNoTemporaryFiles() throws Exception {
        Path tmpdir = Files.createDirectory(tmp.resolve("jvm-tmp"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classes = Path.of(Hurray.class.getProtectionDomain().getCodeSource()
                .getLocation().toURI()).toString();
        for (int run = 0; run < 2; run++) {
            Process p = new ProcessBuilder(java, "-Djava.io.tmpdir=" + tmpdir, "-cp", classes,
                    "dev.hurray.Hurray").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the JVM exits");
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("(from the jar)"), out);
            try (Stream<Path> left = Files.list(tmpdir)) {
                assertEquals(List.of(), left.toList(), "temporary files left by JVM " + run);
            }
        }
    }
}
