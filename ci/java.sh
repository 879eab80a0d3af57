#!/usr/bin/env bash
# Make sure a JDK >= 17 (javac included) and Maven are present for the Java binding
# stages of `cargo xtask test` (bindings/java: the JNI glue crate, `mvn package` with
# the JUnit suite, the jar loaded in a fresh JVM). Called by .ci/run. Tries apt-get
# when java, javac or mvn is missing or too old; what is still missing then fails
# under CI and is a warning otherwise (ci/lib.sh). Maven downloads its pinned
# plugins and JUnit from Maven Central on first use.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

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
    echo "ci/java.sh: JDK >= 17 or Maven not found"
    pkgs=()
    java_ok || pkgs+=(openjdk-17-jdk-headless)
    mvn_ok || pkgs+=(maven)
    ci_apt_install "${pkgs[@]}" || true
    java_ok || ci_missing "no JDK >= 17 (java and javac); the Java stages cannot run"
    mvn_ok || ci_missing "no Maven (mvn); the Java stages cannot run"
fi

echo "ci/java.sh: $(java -version 2>&1 | head -n1 || echo 'java: not installed'); $(mvn -B -v 2>/dev/null | head -n1 || echo 'mvn: not installed')"
