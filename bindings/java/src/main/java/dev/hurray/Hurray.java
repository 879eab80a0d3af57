package dev.hurray;

/**
 * Library-wide facts of the binding. Its {@code main} prints them, which makes a
 * one-line check that a jar's native library loads on this machine:
 * {@code java -cp hurray.jar dev.hurray.Hurray}.
 */
public final class Hurray {
    private Hurray() {}

    /**
     * The C ABI version the loaded native library speaks (checked at load to equal
     * the version this binding was written for, 10).
     *
     * @return {@code HURRAY_C_ABI_VERSION} of the native library
     */
    public static int abiVersion() {
        return Native.abiVersion();
    }

    /**
     * Prints the ABI version and the platform folder of the native library.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        String override = System.getProperty(NativeLoader.PATH_PROPERTY);
        System.out.println("hurray-java: C ABI " + abiVersion() + ", native library for "
                + NativeLoader.platform() + (override == null || override.isEmpty()
                        ? " (from the jar)" : " (from " + override + ")"));
    }
}
