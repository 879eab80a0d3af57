package dev.hurray;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads libhurray_java once: from the path in the system property
 * {@value #PATH_PROPERTY} when set, else from the jar resource
 * {@code /dev/hurray/native/<os>-<arch>/<library>}, copied to a temporary file that
 * is deleted (with its directory) right after loading, or at JVM exit where the OS
 * refuses to delete a loaded library.
 * Then checks that the library speaks the C ABI version this binding was written for.
 */
final class NativeLoader {
    /** System property naming the native library file to load instead of the jar's. */
    static final String PATH_PROPERTY = "hurray.native.path";

    /** The C ABI version this Java code was written against ({@code HURRAY_C_ABI_VERSION}). */
    static final int ABI_VERSION = 10;

    private static boolean loaded;

    private NativeLoader() {}

    static synchronized void load() {
        if (loaded) {
            return;
        }
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null && !override.isEmpty()) {
            System.load(Path.of(override).toAbsolutePath().toString());
        } else {
            Path lib = extract();
            System.load(lib.toString());
            removeExtracted(lib);
        }
        int lib = Native.abiVersion();
        int glue = Native.headerAbiVersion();
        if (lib != ABI_VERSION || glue != ABI_VERSION) {
            throw new UnsatisfiedLinkError("hurray: the native library speaks C ABI " + lib
                    + " (glue built for " + glue + "), this binding needs " + ABI_VERSION);
        }
        loaded = true;
    }

    /**
     * Deletes the extracted library and its directory now, where the OS allows
     * unlinking a loaded library (Linux, macOS: the mapping stays valid); elsewhere
     * (Windows refuses) the deleteOnExit registrations of {@link #extract()} remain.
     */
    private static void removeExtracted(Path lib) {
        try {
            Files.deleteIfExists(lib);
            Files.deleteIfExists(lib.getParent());
        } catch (IOException | SecurityException e) {
            // left to deleteOnExit
        }
    }

    /** {@code linux-x86_64}, {@code linux-aarch64}, {@code macos-aarch64}, ... */
    static String platform() {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        if (arch.equals("amd64")) {
            arch = "x86_64";
        } else if (arch.equals("arm64")) {
            arch = "aarch64";
        }
        if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "macos";
        } else if (os.startsWith("windows")) {
            os = "windows";
        } else if (os.startsWith("linux")) {
            os = "linux";
        }
        return os + "-" + arch;
    }

    private static Path extract() {
        String file = System.mapLibraryName("hurray_java");
        String resource = "/dev/hurray/native/" + platform() + "/" + file;
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("hurray: no native library for " + platform()
                        + " in the jar (" + resource + "); set -D" + PATH_PROPERTY
                        + "=/path/to/" + file);
            }
            Path dir = Files.createTempDirectory("hurray-java");
            // deleteOnExit deletes in reverse order of registration: the directory
            // first registered is deleted last, once the library file is gone.
            dir.toFile().deleteOnExit();
            Path lib = dir.resolve(file);
            lib.toFile().deleteOnExit();
            Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
            return lib;
        } catch (IOException e) {
            throw new UncheckedIOException("hurray: could not extract " + resource, e);
        }
    }
}
