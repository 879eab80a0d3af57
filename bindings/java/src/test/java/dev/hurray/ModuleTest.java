package dev.hurray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Issue 15 item 8: a real module, usable on the module path. */
class ModuleTest {
    static Path classes() throws Exception {
        return Path.of(Hurray.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    @Test
    void theModuleIsDevHurrayAndExportsItsPackage() throws Exception {
        ModuleDescriptor d = ModuleFinder.of(classes()).find("dev.hurray").orElseThrow()
                .descriptor();
        assertEquals("dev.hurray", d.name());
        assertTrue(d.exports().stream().anyMatch(e -> e.source().equals("dev.hurray")
                && !e.isQualified()), d.toString());
        assertEquals(Set.of("dev.hurray"), d.packages(), "the native folder is no package");
    }

    @Test
    void onTheModulePathTheNativeLibraryLoadsFromTheModule() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "--module-path", classes().toString(), "-m",
                "dev.hurray/dev.hurray.Hurray").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the JVM exits");
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("C ABI 10") && out.contains("(from the jar)"), out);
    }
}
