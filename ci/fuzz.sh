#!/usr/bin/env bash
# Make sure the fuzz stage of `cargo xtask test` can run (fuzz/, docs/fuzzing.md):
# cargo-fuzz (pinned, built from crates.io with its lock file) and a C++ compiler
# (libFuzzer is C++, built by the libfuzzer-sys crate). No nightly toolchain: the
# stage runs cargo-fuzz on the stable toolchain with RUSTC_BOOTSTRAP=1, which allows
# the -Zsanitizer=address flag; the AddressSanitizer runtime ships with stable's
# standard library on Linux x86_64. Called by .ci/run. A failure is only a warning
# here; under CI the stage then fails, naming what is missing.
set -euo pipefail

cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
export PATH="$cargo_bin:$PATH"
cargo_fuzz_version="0.13.2"

if ! command -v "${CXX:-c++}" >/dev/null 2>&1; then
    echo "ci/fuzz.sh: installing g++ with apt-get"
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
        { $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq g++ >/dev/null; } ||
            echo "ci/fuzz.sh: warning: could not install g++; the fuzz stage cannot build libFuzzer" >&2
    else
        echo "ci/fuzz.sh: warning: no apt-get and no C++ compiler; the fuzz stage cannot build libFuzzer" >&2
    fi
fi

if ! cargo fuzz --version 2>/dev/null | grep -q "$cargo_fuzz_version"; then
    echo "ci/fuzz.sh: installing cargo-fuzz $cargo_fuzz_version"
    cargo install --locked --quiet cargo-fuzz --version "$cargo_fuzz_version" ||
        echo "ci/fuzz.sh: warning: could not install cargo-fuzz; the fuzz stage cannot run" >&2
fi

echo "ci/fuzz.sh: $(cargo fuzz --version 2>/dev/null || echo 'cargo-fuzz: not installed'); $("${CXX:-c++}" --version 2>/dev/null | head -n1 || echo 'c++: not installed')"
if compgen -G "$(rustc --print target-libdir)/*_rt.asan*" >/dev/null; then
    echo "ci/fuzz.sh: AddressSanitizer runtime: present"
else
    echo "ci/fuzz.sh: warning: this toolchain has no AddressSanitizer runtime; the fuzz stage cannot run" >&2
fi
