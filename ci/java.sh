#!/usr/bin/env bash
# Make sure a JDK >= 17 (javac included) and Maven are present for the Java binding
# stages of `cargo xtask test` (bindings/java: the JNI glue crate, `mvn package` with
# the JUnit suite, the jar loaded in a fresh JVM). Called by .ci/run. Tries apt-get
# when java, javac or mvn is missing or too old; a failure is only a warning (the
# stages then skip themselves with a note). Maven downloads its pinned plugins and
# JUnit from Maven Central on first use.
set -euo pipefail

java_ok() {
    command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 || return 1
    local v
    v="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)"
    [ -n "$v" ] && [ "$v" -ge 17 ]
}

mvn_ok() {
    command -v mvn >/dev/null 2>&1 && mvn -v >/dev/null 2>&1
}

if ! java_ok || ! mvn_ok; then
    echo "ci/java.sh: JDK >= 17 or Maven not found; trying apt-get (openjdk-17-jdk-headless, maven)"
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
        pkgs=""
        java_ok || pkgs="openjdk-17-jdk-headless"
        mvn_ok || pkgs="$pkgs maven"
        # shellcheck disable=SC2086 # word splitting of the package list is intended
        { $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $pkgs >/dev/null; } ||
            echo "ci/java.sh: warning: could not install$pkgs" >&2
    fi
    java_ok || echo "ci/java.sh: warning: no JDK >= 17; the Java stages will skip" >&2
    mvn_ok || echo "ci/java.sh: warning: no Maven; the Java stages will skip" >&2
fi

echo "ci/java.sh: $(java -version 2>&1 | head -n1 || echo 'java: not installed'); $(mvn -B -v 2>/dev/null | head -n1 || echo 'mvn: not installed')"
