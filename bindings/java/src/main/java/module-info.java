/**
 * Hurray for Java: read and write Hurray tensors (streams and HRRYFILE files)
 * without copying, over the one C ABI through JNI. The jar carries the native library
 * and loads it on first use.
 *
 * <p>On the module path the module is {@code dev.hurray}. Loading a native library is
 * a restricted operation from JDK 24 on (JEP 472): run with
 * {@code --enable-native-access=dev.hurray} (module path) or
 * {@code --enable-native-access=ALL-UNNAMED} (class path) to silence the warning and
 * to keep working once the JDK denies it by default.
 */
module dev.hurray {
    exports dev.hurray;
}
